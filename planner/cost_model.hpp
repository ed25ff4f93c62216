// The cost model of one epoch of graph parallelism (the full-graph executor): every step of the
// rank's ExecutionPlan (training schedule, then the evaluation's) costed on the machine model —
//   linear        2 n k m flops at the GEMM rate of min(k, m) (backward: dW, and dX when read)
//   aggregation   (inner + halo entries) x width at the SpMM rate of that width (in or out of
//                 cache), and one exchange: peers x latency + max(sent, received) bytes /
//                 bandwidth (rows x the halo precision's record bytes), exposed beyond the
//                 inner SpMM it overlaps
//   pointwise     rows x cols x 4 bytes x (inputs + 1) at the streaming bandwidth (backward x2)
//   loss          rows x classes x 12 bytes at the streaming bandwidth (and the evaluation's
//                 metrics pass over the logits, likewise)
//   every step    a fixed step cost (fork/join)
// plus Adam (28 bytes per parameter) and the gradient all-reduce (2 (K-1)/K x 4 P bytes, 2 log2 K
// latencies). The epoch is the slowest rank's; halo bytes are exact (the executor's arithmetic).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/machine_model.hpp"
#include "planner/partition_stats.hpp"
#include "src/comm/halo_packing.hpp"
#include "src/nn/execution_plan.hpp"
#include "src/nn/model_graph.hpp"

namespace strata::planner {

/// Seconds of one epoch on one rank, by term (training step and evaluation together).
struct EpochTerms {
    double gemm_s = 0.0;
    double spmm_s = 0.0;
    double elementwise_s = 0.0;  ///< pointwise ops and the loss
    double steps_s = 0.0;        ///< fixed cost of every step
    double optimizer_s = 0.0;
    double exchange_s = 0.0;   ///< halo transfers (whole, hidden or not)
    double exposed_s = 0.0;    ///< of which not hidden behind the inner SpMM
    double allreduce_s = 0.0;  ///< gradient all-reduce (exposed)
};

struct EpochPrediction {
    double compute_s = 0.0;  ///< training step less its exposed waits
    double wait_s = 0.0;     ///< training step's exposed waits
    double eval_s = 0.0;     ///< evaluation
    double epoch_s = 0.0;    ///< compute_s + wait_s + eval_s (the slowest rank's)
    int slowest_rank = 0;
    EpochTerms terms;  ///< the slowest rank's, training step and evaluation
    /// The slowest rank's training step alone (graph parallelism; zero for the pipeline): what
    /// `strata train --profile` measures by phase.
    EpochTerms train_terms;
    /// Halo payload per evaluated epoch, summed over ranks: training forward and backward
    /// and the evaluation's forward (the metrics' halo_bytes); recomputation apart.
    std::int64_t halo_bytes = 0;
    std::int64_t recompute_halo_bytes = 0;
    std::int64_t allreduce_bytes = 0;  ///< gradient payload per rank
};

/// What an epoch runs on: the machine, the network between the ranks and each rank's threads.
struct RunShape {
    const MachineModel* machine = nullptr;
    Network network;
    int threads = 1;
    /// Ranks sharing this rank's node: memory-bound kernels (SpMM, pointwise, Adam) get at most
    /// their share of the node's bandwidth, rate(all cores) x threads / cores.
    int ranks_per_node = 1;
    /// What graph parallelism's halo rows cross the wire as (halo_precision): the exchanges'
    /// bytes and so their time (src/comm/halo_packing.hpp's record bytes per row).
    HaloPrecision halo_precision = HaloPrecision::fp32;
    /// Ranks on several nodes (network = the inter-node link): the share of a rank's halo rows
    /// whose peer is on another node, and how many ranks send through their node's one link at
    /// once. An exchange then takes the slower of its two paths: the crossing rows at
    /// link / link_ranks each, the others over machine->shared_memory (link_share_time).
    /// 1 and 1: every row over `network` at its full bandwidth (one node, or as before).
    double cross_share = 1.0;
    int link_ranks = 1;
};

/// Seconds for `bytes` of one rank's exchange split as `shape` says (cross_share, link_ranks):
/// max(bytes x cross_share x link_ranks / network, bytes x (1 - cross_share) / shared memory).
[[nodiscard]] double link_share_time(double bytes, const RunShape& shape);

/// One rank's execution plan, laid out as the full-graph executor lays it out (its exchange
/// scratch at `precision`).
[[nodiscard]] ExecutionPlan rank_plan(const ModelGraph& graph, const RankStats& rank,
                                      Recompute recompute,
                                      HaloPrecision precision = HaloPrecision::fp32);

/// Predicts one evaluated epoch of graph parallelism over stats.parts ranks (the ranks priced:
/// stats.ranks; the all-reduce: stats.parts).
[[nodiscard]] EpochPrediction predict_graph_epoch(const ModelGraph& graph, Recompute recompute,
                                                  const PartitionStats& stats,
                                                  const RunShape& shape);

/// The gradient all-reduce over `ranks`: 2 ceil(log2 K) latencies + 2 (K-1)/K x 4 P bytes.
[[nodiscard]] double allreduce_seconds(double params, int ranks, const Network& network);
/// The rank's streaming bandwidth (GB/s) at its threads: its own, at most its share of the
/// node's (rate(all cores) x threads / cores) when ranks share the node (ranks_per_node > 1).
[[nodiscard]] double streaming_gbs(const RunShape& shape);
/// Ranks x threads on the node over its cores, at least 1. Beyond the cores the ranks
/// time-share them: each computes a 1/f share of the time, so its compute takes f times as
/// long (bench/plan's K = 4 rows on 2 cores: measured 1.9-2.2x the unshared prediction).
[[nodiscard]] double time_share(const RunShape& shape);
/// Adam's step: 28 bytes per parameter at the rank's (shared) streaming bandwidth, one step.
[[nodiscard]] double optimizer_seconds(double params, const RunShape& shape);

/// Which steps of a schedule: forward ones, the others (backward, recompute, loss), or all.
enum class Phase { all, forward, backward };
/// Busy seconds (unscaled) of the training schedule's steps of nodes [first, end) in `phase` —
/// the loss too when `end` is the last node — on a rank of `rank`'s sizes: a pipeline stage
/// over every row it processes (all its chunks together).
/// Busy seconds (unscaled) of the forward steps of `nodes` alone (no loss) in the training
/// schedule: a pipeline stage's backward recomputing its row-local values.
[[nodiscard]] double price_recompute(const ModelGraph& graph, const Schedule& schedule,
                                     const RankStats& rank, const RunShape& shape,
                                     const std::vector<int>& nodes, EpochTerms& terms);
[[nodiscard]] double price_stage(const ModelGraph& graph, const Schedule& schedule,
                                 const RankStats& rank, const RunShape& shape, int first, int end,
                                 Phase phase, EpochTerms& terms);
/// Busy seconds (unscaled) of `plan`'s evaluation schedule and metrics pass (exposed waits are
/// left out: for a rank holding the whole graph there are none).
[[nodiscard]] double price_evaluation(const ModelGraph& graph, const ExecutionPlan& plan,
                                      const RankStats& rank, const RunShape& shape,
                                      EpochTerms& terms);

/// Halo payload one rank sends in a schedule (bytes): forward aggregations send send_rows
/// records of `width` values, backward ones (folded included) recv_rows; a record is 4 width
/// bytes at fp32 (packed_row_bytes); recomputations apart.
struct ScheduleBytes {
    std::int64_t sent = 0;
    std::int64_t recompute = 0;
};
[[nodiscard]] ScheduleBytes schedule_halo_bytes(const ModelGraph& graph, const Schedule& schedule,
                                                const RankStats& rank,
                                                HaloPrecision precision = HaloPrecision::fp32);

}  // namespace strata::planner
