// MachineModel: what `strata calibrate` measured on one machine (machine.json, format
// "strata-machine", version 2; version 1 is still read) — memory bandwidth, GEMM and SpMM rates
// by shape and thread count, the cost of one schedule step, MPI point-to-point and all-reduce,
// and each figure's spread over calibrate's rounds (version 2) — read by `strata plan`.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace strata::planner {

/// 1e9: the figures' GB/s and GFLOP/s to bytes and flops per second.
inline constexpr double giga = 1e9;

/// A rate measured at one shape: `x` is the shape parameter (GEMM: the narrower of the inner
/// and output widths; SpMM: the feature width), `rate` the figure (GFLOP/s; SpMM: 10^9 stored
/// entries x columns per second).
struct RatePoint {
    double x = 0.0;
    double rate = 0.0;
};

/// The kernels' rates with `threads` OpenMP threads in one process.
/// m x k x n above which OpenBLAS runs a GEMM on its threads (its SMP_THRESHOLD_MIN 65536 x
/// GEMM_MULTITHREAD_THRESHOLD 4); smaller ones run on the calling thread alone.
inline constexpr double blas_threading_flops = 65536.0 * 4.0;

struct ThreadRates {
    int threads = 1;
    double memory_gbs = 0.0;  ///< streaming (axpby: 3 x 4 bytes per element) GB/s
    /// Streaming over arrays that fit in the last-level cache; absent in older files: 0
    /// (memory_gbs is used).
    double cache_gbs = 0.0;
    double step_s = 0.0;  ///< fixed cost of one schedule step (fork/join, dispatch)
    /// Seconds per stored entry of edge_dropout (the sparse first layer's input dropout: one
    /// hash per entry); absent in older files: 0.
    double dropout_entry_s = 0.0;
    std::vector<RatePoint> gemm;  ///< GFLOP/s by min(inner, output) width
    /// GFLOP/s of the weight gradient Xᵀ dY (a long reduction into a small output) by
    /// min(inner, output) width; absent in older files: the gemm rates.
    std::vector<RatePoint> gemm_tn{};
    /// Seconds per logit of softmax cross-entropy with its gradient (the loss; the
    /// evaluation's metrics pass costs as much); absent in older files: 0 (priced as
    /// streaming 12 bytes per logit instead).
    double softmax_entry_s = 0.0;
    /// Extra seconds of each threaded GEMM (above blas_threading_flops) run between OpenMP
    /// kernels: the BLAS's thread pool and OpenMP's hand the cores over (both spin-wait a while
    /// after their work). 0 with one thread; absent in older files: 0.
    double blas_switch_s = 0.0;
    std::vector<RatePoint> spmm_in_cache;      ///< x rows fit in the last-level cache
    std::vector<RatePoint> spmm_out_of_cache;  ///< x far larger than the cache
    /// Measured / predicted aggregation phase of calibrate's own training run at this thread
    /// count (the SpMM rates are timed on random graphs; a real graph's locality and degrees
    /// are not; 1 when not fitted, absent in older files). Multiplies every SpMM's time.
    double spmm_scale = 1.0;
    /// Measured / predicted epoch of the same run, spmm_scale applied (what the kernel figures
    /// miss; 1 when not fitted). Multiplies the busy time.
    double time_scale = 1.0;
    /// Each figure's spread over calibrate's rounds, (max - min) / median, by figure name
    /// (for_each_figure's names); a figure not listed (a version 1 file): 0.
    std::map<std::string, double> spread{};
};

/// Every figure of `rates` the cost model reads: its name (the machine.json key; a rate point's
/// "key@x", e.g. "spmm_in_cache_g@64"), the value, and whether it is a rate (larger is faster)
/// rather than a cost (seconds, or a scale of the time). `threads` is not a figure.
void for_each_figure(
    ThreadRates& rates,
    const std::function<void(const std::string& name, double& value, bool rate)>& f);

/// A network between ranks (shared memory, or a link given by hand for other nodes).
struct Network {
    double latency_s = 0.0;      ///< one small message, one way
    double bandwidth_gbs = 0.0;  ///< large messages, one direction, GB/s
};

struct MachineModel {
    /// 2: adds the spreads (`spread` in each by_threads entry, `network_spread`); 3: adds
    /// `inter_node_measured` (versions 1 and 2 are read with it false); 4: adds
    /// `inter_node_paired` (versions 1 to 3 are read with it equal to inter_node).
    static constexpr int format_version = 4;
    std::string host;                     ///< where it was measured
    int cores = 1;                        ///< online CPUs
    double cache_bytes = 0.0;             ///< last-level cache (sysconf), for in/out of cache
    std::vector<ThreadRates> by_threads;  ///< ascending threads
    Network shared_memory;                ///< ranks on one node (measured under mpirun)
    Network inter_node;                   ///< ranks on different nodes (by hand, or measured)
    /// The same link when each rank of a node exchanges with one rank of the other node only
    /// (a grid's graph group across two nodes): one flow per rank, which over TCP can fill more
    /// of the link than every pair at once does (docs/planner.md, "Calibration"). Measured with
    /// inter_node when a node has two ranks or more; else (and by hand) equal to inter_node.
    Network inter_node_paired;
    bool mpi_measured = false;         ///< shared_memory came from a run with >= 2 ranks
    bool inter_node_measured = false;  ///< inter_node came from a run across nodes
    /// SpMM slowdown while a transfer runs (>= 1): applied to the inner SpMM an exchange
    /// overlaps.
    double overlap_slowdown = 1.0;
    double baseline_rss_bytes = 0.0;  ///< a rank's resident memory before any data (MPI, BLAS)
    /// Spread of the measured network figures over rounds: "shared_memory.latency_s",
    /// "shared_memory.bandwidth_gbs", "inter_node.latency_s", "inter_node.bandwidth_gbs",
    /// "inter_node_paired.latency_s", "inter_node_paired.bandwidth_gbs" (absent: 0).
    std::map<std::string, double> network_spread{};

    /// The rates for `threads` (the nearest measured count; never empty after calibrate).
    [[nodiscard]] const ThreadRates& rates(int threads) const;

    /// The inter-node link as an exchange whose ranks each have `partners_across` partners on
    /// other nodes uses it: inter_node_paired for one partner, inter_node for more (and where
    /// inter_node_paired was never set: a model built by hand with its bandwidth 0).
    [[nodiscard]] const Network& link(int partners_across) const {
        return partners_across <= 1 && inter_node_paired.bandwidth_gbs > 0 ? inter_node_paired
                                                                           : inter_node;
    }
};

/// `m` with its paired link the same as inter_node, spreads included (a machine.json before
/// version 4; a calibration whose ranks have one partner across already).
void paired_as_inter_node(MachineModel& m);

/// Rate at `x`, linear in log x between the points, constant beyond the ends.
[[nodiscard]] double interpolate(const std::vector<RatePoint>& points, double x);

[[nodiscard]] std::string to_json(const MachineModel& model);
/// Parses machine.json; `what` (the file) starts every error message: another format or
/// version, a missing field.
[[nodiscard]] MachineModel machine_from_json(const std::string& text, const std::string& what);
[[nodiscard]] MachineModel read_machine(const std::string& path);
void write_machine(const MachineModel& model, const std::string& path);

/// Writes `text` to `path` through a temporary renamed into place (src/base/atomic_output.hpp).
void write_text_atomically(const std::string& path, const std::string& text);

/// `model` with every figure moved by its spread the slow way: costs x (1 + spread), rates /
/// (1 + spread) (the network's latency and bandwidth likewise). The plan's error band is the
/// epoch predicted with it over the epoch predicted with `model`, less 1.
[[nodiscard]] MachineModel slowed_by_spread(MachineModel model);

/// A model with documented guesses (no calibration): used when --machine is not given and
/// no calibration exists, and flagged as such in plan's output.
[[nodiscard]] MachineModel default_machine();

}  // namespace strata::planner
