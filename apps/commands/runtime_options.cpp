// The runtime flags.
#include "apps/commands/runtime_options.hpp"

namespace strata::app {

FlagTable add_runtime_flags(CLI::App& cmd, RuntimeOptions& options) {
    return {
        {"device", cmd.add_option("--device", options.device,
                                  "cpu, or cuda: one GPU per rank, picked by its local rank on the "
                                  "node")},
        {"comm", cmd.add_option("--comm", options.comm,
                                "mpi, nccl, or auto: nccl if --device cuda and no two ranks share "
                                "a GPU, else mpi (staged through pinned host memory with cuda)")},
        {"threads",
         cmd.add_option("--threads", options.threads,
                        "OpenMP/OpenBLAS threads per rank with --device cpu (0: what the rank may "
                        "use: its CPU affinity mask if narrower than the node, else "
                        "OMP_NUM_THREADS, else SLURM_CPUS_PER_TASK, else the node's CPUs / its "
                        "ranks)")},
    };
}

}  // namespace strata::app
