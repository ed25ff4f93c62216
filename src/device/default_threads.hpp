// default_threads: how many OpenMP/OpenBLAS threads a rank of the CPU backend uses when
// `--threads` is not given — what this rank may use, not the whole node.
#pragma once

#include <string>

namespace strata {

/// What the decision reads, gathered by thread_inputs() or given by a test.
struct ThreadInputs {
    int node_cores = 1;               ///< online CPUs of the node
    int affinity_cpus = 0;            ///< CPUs in this process's affinity mask (0: unknown)
    std::string omp_num_threads;      ///< OMP_NUM_THREADS ("" when unset)
    std::string slurm_cpus_per_task;  ///< SLURM_CPUS_PER_TASK ("" when unset)
    int ranks_on_node = 1;            ///< ranks of the job on this node
};

/// A thread count and the rule that chose it, for the start-up line.
struct ThreadChoice {
    int threads = 1;
    std::string rule;  ///< e.g. "the node's 2 cores / 4 ranks on the node"
};

/// The first rule that applies, in this order: the affinity mask when it holds fewer CPUs than
/// the node; OMP_NUM_THREADS (its first entry) when a positive number; SLURM_CPUS_PER_TASK when
/// a positive number; else the node's cores divided by the ranks on the node (rounded down).
/// Never less than 1. Malformed variables are skipped (the rule names them).
[[nodiscard]] ThreadChoice choose_threads(const ThreadInputs& inputs);

/// This process's inputs: sysconf(_SC_NPROCESSORS_ONLN), sched_getaffinity, the environment;
/// `ranks_on_node` from the caller (node_rank(), src/comm/node_rank.hpp).
[[nodiscard]] ThreadInputs thread_inputs(int ranks_on_node);

}  // namespace strata
