// make_communicator: MPI, staged MPI or NCCL by backend and request (STRATA_HAVE_NCCL: this
// file is compiled with it when the NCCL communicator is part of the build).
#include "src/comm/make_communicator.hpp"

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

}  // namespace strata
