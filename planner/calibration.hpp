// calibrate: measures the machine model on this machine. One process: per thread count (1 and
// all cores) the streaming bandwidth (axpby), GEMM at the widths models use, SpMM by width in
// and out of cache and the fixed cost of a step (planner/kernel_probes.hpp), and training runs
// of a GCN on generated graphs that fit spmm_scale, step_s and time_scale (measured / predicted)
// — all in interleaved rounds (planner/timed_rounds.hpp): each figure the median over rounds,
// its spread recorded. Under mpirun (>= 2 ranks) only the network (latency, bandwidth; the SpMM
// slowdown while it runs is not measured yet: 1): the halo exchange between two ranks of one
// node (shared_memory) and, when the ranks span nodes, between every rank of one node and every
// rank of another at once (inter_node: the node's link as a halo exchange's flows share it) and,
// with two ranks or more a node, between the ranks of the two nodes paired one to one
// (inter_node_paired: the same link carrying one flow a rank) —
// kernels are not timed there, since the waiting ranks would spin in MPI on the cores
// measured.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "planner/machine_model.hpp"
#include "planner/timed_rounds.hpp"
#include "src/comm/communicator.hpp"

namespace strata::planner {

struct CalibrationOptions {
    double seconds_per_figure = 0.3;  ///< each kernel's repetitions, all rounds together
    int rounds = 3;                   ///< interleaved rounds (at least 3)
    bool fit = true;                  ///< fit the scales and the step with real training runs
    std::function<void(const std::string&)> log;   ///< progress, a line each
    std::function<void(const std::string&)> warn;  ///< spread_warning's lines
    Clock clock = steady_seconds();
};

/// A figure whose spread over rounds is above this is flagged (spread_warning).
inline constexpr double spread_threshold = 0.10;

/// Collective over `comm`. One rank: the kernels (network figures are defaults); several: the
/// network figures only (by_threads empty), for merge_network.
[[nodiscard]] MachineModel calibrate(Communicator& comm, const CalibrationOptions& options);

/// The ranks calibrate times the network between, from each rank's node (`nodes[r]`,
/// Communicator::node_of).
struct NetworkPairs {
    /// The two lowest ranks of the first node (in rank order) that has two; empty when none has.
    std::vector<std::pair<int, int>> inside;
    /// With two nodes or more: every rank of rank 0's node with every rank of the next node
    /// (that of the lowest rank on another), a pair's message 1 / `split` of one pair's inside.
    /// They exchange at once, as a graph-parallel halo exchange's flows between two nodes do: over
    /// TCP one flow may reach less of the link than several do (docs/planner.md,
    /// "Calibration").
    std::vector<std::pair<int, int>> across;
    /// With two nodes of two ranks or more: the i-th rank of rank 0's node with the i-th of
    /// the next node's, at once (one partner each, a pair's message one pair's inside, as a
    /// grid's graph group exchanges across two nodes); empty when `across` has one partner a
    /// rank already (split 1: the same pattern).
    std::vector<std::pair<int, int>> paired;
    int split = 0;  ///< the larger node's rank count: the most partners a rank has across
    std::pair<int, int> across_nodes{};  ///< the two nodes of `across`
};
[[nodiscard]] NetworkPairs network_pairs(const std::vector<int>& nodes);

/// `kernels` with the network figures `network` measured: shared_memory when mpi_measured,
/// inter_node and inter_node_paired when inter_node_measured, each with its network_spread
/// entries.
[[nodiscard]] MachineModel merge_network(MachineModel kernels, const MachineModel& network);

/// `m` with the inter-node figures given by hand (`link_gbit` Gbit/s, `latency_us`; each only
/// when > 0), replacing measured ones: a figure so given is no longer measured and has no spread.
[[nodiscard]] MachineModel with_link_by_hand(MachineModel m, double link_gbit, double latency_us);

/// The 1-minute load average (/proc/loadavg's first figure); negative where unreadable.
[[nodiscard]] double load_average();

/// Empty when a machine with `cores` online CPUs and 1-minute load average `load` is idle
/// enough to calibrate; else one line saying the machine is busy. Busy: load > 0.5 + cores /
/// 10 — other work on the cores being timed makes every figure slower than the machine is
/// (half a core's worth of load is noise; more grows with the machine). Never busy when
/// `load` < 0 (unknown).
[[nodiscard]] std::string busy_warning(double load, int cores);

/// Empty when `many` (several threads in one process) computes in cache at least
/// core_scaling_floor x its thread count as fast as `one` (one thread) — in-cache SpMM and GEMM at
/// their widest measured width, work that scales with the cores — else one line naming the
/// figure that scaled least and by how much: the cores were shared while timing (another job,
/// SMT siblings, a VM's busy host), so every figure of `many` is too slow. (On this project's
/// 2-core VM one calibration measured in-cache SpMM at 2 threads 15.1 G/s and the next 29.3.)
[[nodiscard]] std::string cores_warning(const ThreadRates& one, const ThreadRates& many);

/// Below this share of linear scaling cores_warning speaks (2 threads: under 1.3x one's rate).
inline constexpr double core_scaling_floor = 0.65;

/// Empty when every figure of `spreads` (name -> spread) is at most spread_threshold and the
/// 1-minute load average `load`, read while calibrate's own threads ran, is at most `cores`;
/// else one line naming the figure of the largest spread, its spread, how many are above the
/// threshold, and the load. `what` says where ("threads 2", "network").
[[nodiscard]] std::string spread_warning(const std::string& what,
                                         const std::map<std::string, double>& spreads, double load,
                                         int cores);

}  // namespace strata::planner
