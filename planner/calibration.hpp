// calibrate: measures the machine model on this machine. One process: per thread count (1 and
// all cores) the streaming bandwidth (axpby), GEMM at the widths models use, SpMM by width in
// and out of cache and the fixed cost of a step, then one training run of a GCN on a generated
// graph per thread count fits time_scale (measured / predicted epoch). Under mpirun (>= 2
// ranks) only the network: the halo exchange between ranks 0 and 1 (latency, bandwidth; the
// SpMM slowdown while it runs is not measured yet: 1) — kernels are not timed there, since the
// waiting ranks would spin in MPI on the cores being measured.
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

/// Collective over `comm`. One rank: the kernels (network figures are defaults); several: the
/// network figures only (by_threads empty), for merge_network.
[[nodiscard]] MachineModel calibrate(Communicator& comm, const CalibrationOptions& options);

/// `kernels` with the network figures of `network` (shared_memory, mpi_measured).
[[nodiscard]] MachineModel merge_network(MachineModel kernels, const MachineModel& network);

/// The 1-minute load average (/proc/loadavg's first figure); negative where unreadable.
[[nodiscard]] double load_average();

/// Empty when a machine with `cores` online CPUs and 1-minute load average `load` is idle
/// enough to calibrate; else one line saying the machine is busy. Busy: load > 0.5 + cores /
/// 10 — other work on the cores being timed makes every figure slower than the machine is
/// (half a core's worth of load is noise; more grows with the machine). Never busy when
/// `load` < 0 (unknown).
[[nodiscard]] std::string busy_warning(double load, int cores);

}  // namespace strata::planner
