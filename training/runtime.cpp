// open_runtime: device and communicator choice per rank.
#include "training/runtime.hpp"

#include "src/base/error.hpp"
#include "src/comm/make_communicator.hpp"
#include "src/comm/node_rank.hpp"
#include "src/device/default_threads.hpp"

namespace strata {

Runtime open_runtime(const RuntimeOptions& options) {
    STRATA_CHECK_OPTION(options.threads >= 0, "threads", options.threads, "must be at least 0");
    STRATA_CHECK_OPTION(options.comm == "auto" || options.comm == "mpi" || options.comm == "nccl",
                        "comm", "'" + options.comm + "'", "expected auto, mpi or nccl");
    Runtime runtime;
    if (options.device == "cpu") {
        STRATA_CHECK_OPTION(options.comm != "nccl", "comm", "'nccl'", "needs device = cuda");
        int threads = options.threads;
        if (threads > 0) {
            runtime.threads_note = "threads: " + std::to_string(threads) +
                                   " per rank (threads = " + std::to_string(threads) + ")";
        } else {
            const ThreadChoice choice =
                choose_threads(thread_inputs(node_rank(options.parent).size));
            threads = choice.threads;
            runtime.threads_note =
                "threads: " + std::to_string(threads) + " per rank (rank 0: " + choice.rule + ")";
        }
        runtime.threads = threads;
        runtime.backend = make_cpu_backend(threads);
        runtime.comm = make_communicator(*runtime.backend, CommKind::mpi, options.parent);
        runtime.device = runtime.backend->describe();
        runtime.comm_name = "mpi";
        return runtime;
    }

    STRATA_CHECK_OPTION(options.device == "cuda", "device", "'" + options.device + "'",
                        "expected cpu or cuda");
    const NodeRank node = node_rank(options.parent);
    const int gpus = cuda_device_count();
    if (gpus == 0) {
        (void)make_cuda_backend(0);  // throws the reason: no CUDA support, no driver, no device
        STRATA_CHECK_OPTION(false, "device", "'cuda'", "no CUDA device is visible");
    }
    // Every rank must pick the same communicator: whether any two ranks of a node would share
    // a GPU is agreed on by all (physical ids, so that per-rank CUDA_VISIBLE_DEVICES, as from
    // `srun --gpus-per-task=1`, counts as separate GPUs).
    const int device = node.rank % gpus;
    const bool shared_gpu = any_key_shared_on_node(cuda_device_pci_id(device), options.parent);
    CommKind kind = CommKind::mpi;
    if (options.comm == "nccl") {
        STRATA_CHECK_OPTION(built_with_nccl(), "comm", "'nccl'",
                            "this strata was built without NCCL; use comm = mpi");
        STRATA_CHECK_OPTION(!shared_gpu, "comm", "'nccl'",
                            "needs one GPU per rank, but ranks share a GPU (", node.size,
                            " ranks and ", gpus, " visible GPU(s) on this node); use comm = mpi");
        kind = CommKind::nccl;
    } else if (options.comm == "auto" && built_with_nccl() && !shared_gpu) {
        kind = CommKind::nccl;
    }
    runtime.backend = make_cuda_backend(device);
    runtime.comm = make_communicator(*runtime.backend, kind, options.parent);
    runtime.device = runtime.backend->describe() + " (local rank " + std::to_string(node.rank) +
                     " from " + node.source + ")";
    runtime.comm_name = kind == CommKind::nccl ? "nccl" : "mpi, staged through pinned host memory";
    return runtime;
}

}  // namespace strata
