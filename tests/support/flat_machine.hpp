// flat_machine(): a hand-checkable machine model for the planner's tests — 1 GFLOP/s, 1 G
// entries x cols/s, 1 GB/s, no step cost, a free network.
#pragma once

#include "planner/machine_model.hpp"

namespace strata::test {

inline planner::MachineModel flat_machine() {
    planner::MachineModel m;
    m.cores = 1;
    m.cache_bytes = 1e9;
    m.by_threads.push_back({.threads = 1,
                            .memory_gbs = 1.0,
                            .step_s = 0.0,
                            .gemm = {{1, 1.0}},
                            .gemm_tn = {{1, 1.0}},
                            .spmm_in_cache = {{1, 1.0}},
                            .spmm_out_of_cache = {{1, 1.0}}});
    m.shared_memory = {0.0, 1e9};
    m.inter_node = m.shared_memory;
    m.inter_node_paired = m.shared_memory;
    return m;
}

}  // namespace strata::test
