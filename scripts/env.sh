# Sourced by the scripts: Open MPI as root in containers/CI, oversubscription on small machines.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI 4 creates its session directory <tmp>/ompi.<host>.<uid> on first use; two launches
# starting at once (ctest -j) can race on that mkdir ("File exists", orte_init fails).
# Creating it up front removes the race.
mkdir -p -m 700 "${TMPDIR:-/tmp}/ompi.$(hostname).$(id -u)" 2>/dev/null || true
