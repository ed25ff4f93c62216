// Runtime: what a rank computes and communicates with — the backend (CPU with its threads, or
// one GPU per rank) and the communicator (MPI, MPI staged through pinned host memory, NCCL) —
// chosen from a run's device, comm and threads options.
#pragma once

#include <memory>
#include <string>

#include <mpi.h>

#include "src/comm/communicator.hpp"
#include "src/device/backend.hpp"

namespace strata {

struct RuntimeOptions {
    std::string device = "cpu";  ///< cpu | cuda
    std::string comm = "auto";   ///< auto | mpi | nccl
    int threads = 0;             ///< CPU backend threads per rank (0: choose_threads())
    /// The ranks of the run: MPI_COMM_WORLD, or a sub-communicator of it (the communicator is
    /// a duplicate of it; every collective of the run is over it).
    MPI_Comm parent = MPI_COMM_WORLD;
};

/// The communicator is declared last, so it is destroyed before the backend whose memory and
/// streams it uses.
struct Runtime {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Communicator> comm;
    std::string device;  ///< backend->describe() of this rank
    std::string comm_name;
    int threads = 0;  ///< CPU backend threads of this rank (0 on CUDA)
    /// CPU: "threads: N per rank (rank 0: <the rule that chose N>)"; empty on CUDA.
    std::string threads_note;
};

/// Collective over options.parent (MPI_COMM_WORLD by default). cpu: the CPU backend with `threads`
/// threads, or when 0 choose_threads() (src/device/default_threads.hpp) over this rank's inputs,
/// and MPI. cuda: the visible GPU numbered (local rank mod visible GPUs) and, for comm auto, NCCL
/// when this build has it and no two ranks of a node use the same physical GPU, else MPI staged
/// through pinned host memory (all ranks agree). Throws strata::OptionError naming the option: no
/// CUDA support or no GPU for device = cuda, comm = nccl without NCCL, with the CPU, or with ranks
/// sharing a GPU.
[[nodiscard]] Runtime open_runtime(const RuntimeOptions& options);

}  // namespace strata
