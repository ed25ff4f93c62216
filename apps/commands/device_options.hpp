// --device / --comm / --threads of `strata train` and `strata predict`, and the backend plus
// communicator they select on each rank (one GPU per rank from the launcher's local rank).
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "src/comm/communicator.hpp"
#include "src/device/backend.hpp"

namespace strata::app {

struct DeviceOptions {
    std::string device = "cpu";  ///< cpu | cuda
    std::string comm = "auto";   ///< auto | mpi | nccl
    int threads = 0;             ///< CPU backend threads per rank (0: choose_threads())
};

/// Registers --device, --comm and --threads on `cmd`.
void add_device_options(CLI::App& cmd, DeviceOptions& options);

/// What a rank computes and communicates with. The communicator is declared last, so it is
/// destroyed before the backend whose memory and streams it uses.
struct Runtime {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Communicator> comm;
    std::string device;  ///< backend->describe() of this rank
    std::string comm_name;
    int threads = 0;  ///< CPU backend threads of this rank (0 on CUDA)
    /// CPU: "threads: N per rank (rank 0: <the rule that chose N>)"; empty on CUDA.
    std::string threads_note;
};

/// Collective over MPI_COMM_WORLD. cpu: the CPU backend with --threads threads, or when 0
/// choose_threads() (src/device/default_threads.hpp) over this rank's inputs, and MPI. cuda: the
/// visible GPU numbered (local rank mod visible GPUs) and, for --comm auto, NCCL when this build
/// has it and no two ranks of a node use the same physical GPU, else MPI staged through pinned host
/// memory (all ranks agree). Throws strata::Error naming the option: no CUDA support or no GPU for
/// --device cuda, --comm nccl without NCCL, with the CPU, or with ranks sharing a GPU.
[[nodiscard]] Runtime open_runtime(const DeviceOptions& options);

}  // namespace strata::app
