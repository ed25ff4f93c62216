// calibrate: measures the machine model on this machine — per thread count (1 and all cores):
// the streaming bandwidth (axpby), GEMM at the widths models use, SpMM by width in and out of
// cache and the fixed cost of a step; with >= 2 ranks the halo exchange between ranks 0 and 1
// (latency, bandwidth; the SpMM slowdown while it runs is not measured yet: 1); then one training
// run of a GCN on a generated graph per thread count fits time_scale (measured / predicted epoch).
#pragma once

#include <functional>
#include <string>

#include "planner/machine_model.hpp"
#include "src/comm/communicator.hpp"

namespace strata::planner {

struct CalibrationOptions {
    double seconds_per_figure = 0.3;  ///< repetitions of each kernel until this much time
    bool fit = true;                  ///< fit time_scale with a real training run
    std::function<void(const std::string&)> log;
};

/// Collective over `comm`; every rank returns the same model (rank 0's kernel figures).
[[nodiscard]] MachineModel calibrate(Communicator& comm, const CalibrationOptions& options);

}  // namespace strata::planner
