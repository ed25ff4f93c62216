// make_communicator: the Communicator a backend trains with (`strata train --comm`).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include <mpi.h>

#include "src/comm/communicator.hpp"

namespace strata {

class Backend;

enum class CommKind {
    mpi,   ///< MPI on host memory; through staging buffers for a device backend
    nccl,  ///< NCCL on device memory (CUDA backend, one GPU per rank)
};

/// "mpi" / "nccl".
[[nodiscard]] std::string_view to_string(CommKind kind);

/// Whether this build has the NCCL communicator.
[[nodiscard]] bool built_with_nccl();

/// Collective over `parent`. mpi: an MpiCommunicator for the CPU backend, a StagedCommunicator
/// over one for any other. nccl: the NcclCommunicator; throws strata::Error for the CPU backend
/// or when built without NCCL.
[[nodiscard]] std::unique_ptr<Communicator> make_communicator(Backend& backend, CommKind kind,
                                                              MPI_Comm parent = MPI_COMM_WORLD);

/// The communicator whose Fortran handle is `handle` (MPI_Comm_c2f's value; mpi4py's
/// `comm.py2f()`): how a front end in another language names the ranks of a run. Throws
/// strata::Error when MPI is not running, for MPI_COMM_NULL (`what` names the argument) and for an
/// intercommunicator.
[[nodiscard]] MPI_Comm communicator_from_fortran(std::int64_t handle, std::string_view what);

}  // namespace strata
