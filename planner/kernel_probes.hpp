// The kernel probes of `strata calibrate` at one thread count: the CPU backend's kernels timed at
// the shapes the executor runs (streaming in and out of cache, a step's fork and join, edge
// dropout, the BLAS hand-over, GEMM and Xᵀ dY at widths 8-256, softmax cross-entropy, SpMM in
// and out of cache at widths 8-256), each a probe of interleaved rounds (planner/timed_rounds.hpp)
// yielding the figures named as for_each_figure names them.
#pragma once

#include <map>
#include <string>

#include "planner/machine_model.hpp"
#include "planner/timed_rounds.hpp"
#include "src/device/cpu/cpu_backend.hpp"

namespace strata::planner {

/// Adds the kernel probes to `rounds`: each round times each kernel as the fastest of
/// repetitions filling `budget` seconds by `clock`. `backend` and `cache_bytes` (the last-level
/// cache) must outlive the rounds.
void add_kernel_probes(FigureRounds& rounds, CpuBackend& backend, double budget, double cache_bytes,
                       const Clock& clock);

/// The rates at `threads` from the rounds' figures: each the median over rounds, its spread
/// recorded; figures not measured (the fits: spmm_scale, time_scale) keep their defaults.
[[nodiscard]] ThreadRates rates_from(int threads, const std::map<std::string, Repeated>& figures);

}  // namespace strata::planner
