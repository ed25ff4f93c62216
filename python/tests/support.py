"""Shared helpers of the Python tests: the strata program, mpirun, metrics records."""

import json
import os
import subprocess
import sys

import strata

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORA = os.path.join(ROOT, "data", "cora.h5")
PYTHON = sys.executable  # the venv's interpreter: never a bare python3 under mpirun
SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")

# Fields that differ between two runs of the same training: times and the process's memory.
VOLATILE = {"peak_rss_bytes", "baseline_rss_bytes", "config"}


def cli() -> str:
    """STRATA_CLI, else the program installed beside the module."""
    return os.environ.get("STRATA_CLI") or strata.cli_path()


def clean_env(**extra) -> dict:
    """The environment for a child mpirun or strata: without what an MPI process of this
    pytest (a singleton) set for itself, with root and oversubscription allowed."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_", "PMIX_", "OPAL_", "ORTE_")) or k.startswith("OMPI_MCA_rmaps")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    env.update(extra)
    return env


def run(args, timeout=300, ranks=1, check=True, env=None, **kw):
    """Runs a command (under `mpirun -np ranks` when ranks > 1)."""
    if ranks > 1:
        args = ["mpirun", "-np", str(ranks)] + list(args)
    p = subprocess.run(args, cwd=ROOT, env=env or clean_env(), timeout=timeout,
                       capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def stable(record: dict) -> dict:
    """A metrics record without its times and the process's memory."""
    return {k: v for k, v in record.items() if k not in VOLATILE and not k.endswith("_s")}


def same_config(a: dict, b: dict) -> None:
    skip = {"data", "metrics", "overwrite", "checkpoint_dir"}
    diff = {k: (a.get(k), b.get(k)) for k in set(a) | set(b)
            if k not in skip and a.get(k) != b.get(k)}
    assert diff == {}, diff
