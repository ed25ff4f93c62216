// make_communicator: MPI, staged MPI or NCCL by backend and request (STRATA_HAVE_NCCL: this
// file is compiled with it when the NCCL communicator is part of the build).
#include "src/comm/make_communicator.hpp"

#include <limits>

#include "src/base/error.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/comm/staged_communicator.hpp"
#include "src/device/backend.hpp"
#ifdef STRATA_HAVE_NCCL
#include "src/comm/nccl_communicator.hpp"
#endif

namespace strata {

std::string_view to_string(CommKind kind) {
    return kind == CommKind::nccl ? "nccl" : "mpi";
}

bool built_with_nccl() {
#ifdef STRATA_HAVE_NCCL
    return true;
#else
    return false;
#endif
}

std::unique_ptr<Communicator> make_communicator(Backend& backend, CommKind kind, MPI_Comm parent) {
    if (kind == CommKind::mpi) {
        auto mpi = std::make_unique<MpiCommunicator>(parent);
        if (backend.kind() == DeviceKind::cpu) {
            return mpi;
        }
        return std::make_unique<StagedCommunicator>(backend, std::move(mpi));
    }
    STRATA_CHECK_OPTION(backend.kind() != DeviceKind::cpu, "comm", "'nccl'",
                        "needs the CUDA backend (device = cuda)");
#ifdef STRATA_HAVE_NCCL
    return std::make_unique<NcclCommunicator>(backend, parent);
#else
    STRATA_FAIL(
        "this strata was built without NCCL (configure with -DSTRATA_CUDA=ON and "
        "STRATA_NCCL=ON); use --comm mpi");
#endif
}

MPI_Comm communicator_from_fortran(std::int64_t handle, std::string_view what) {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    STRATA_CHECK(initialized != 0 && finalized == 0, what,
                 ": MPI is not initialised or already finalised");
    STRATA_CHECK(handle >= std::numeric_limits<MPI_Fint>::min() &&
                     handle <= std::numeric_limits<MPI_Fint>::max(),
                 what, ": ", handle, " is not an MPI communicator handle");
    const MPI_Comm comm = MPI_Comm_f2c(static_cast<MPI_Fint>(handle));
    STRATA_CHECK(comm != MPI_COMM_NULL, what,
                 " is MPI_COMM_NULL (this rank is not in the communicator)");
    int inter = 0;
    STRATA_CHECK(MPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter == 0, what,
                 " is an intercommunicator; give an intracommunicator");
    return comm;
}

}  // namespace strata
