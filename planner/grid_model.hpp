// The G x F grid (feature_slices = F, docs/layouts.md) priced from the statistics of its G graph
// parts. Rank (g, f) holds row chunk f of part g (r_f = grid_rows(n_g, F, f).count rows, on
// GEMM row tiles: src/tensor/grid_blocks.hpp) for every GEMM and pointwise op, and runs each
// aggregation on all n_g rows at the column slice's width c_f(w) = grid_block(w, F, f).count,
// over the graph group (part g's 1D exchange). Every rank (g, f) is priced: the slowest and the
// largest count.
//   time   each rank is priced as graph parallelism's rank of part g with its sizes / F (owned
//          r_f rows; operator entries, halo rows sent and received / F: the same products and
//          bytes as the slice's width on the whole part), over the graph group's network, plus
//          its layout switches: per aggregation 2 (a backward that accumulates its input
//          gradient: 3) all-to-alls in the feature group, each (F - 1) latencies + the larger of
//          sent and received bytes / bandwidth + the copies: R's staged side packed or
//          unpacked and the rank's own block between R and C ((r (w - c) + r c) x 4 bytes at
//          the node's process-to-process copy rate, shared_memory); nothing overlaps.
//          In B column blocks, B x the switches' latencies (the part's halo messages, also B x,
//          are not priced apart). The gradient all-reduce spans all G F ranks.
//   bytes  halo: Σ_g Σ_f rows x c_f(w) x record = 1D at G's halo bytes exactly (the slices'
//          widths add up to w); all-to-all: 4 (n_g w - Σ_f r_f c_f(w)) per switch of width w per
//          part, exactly (the metrics' a2a_bytes and recompute_a2a_bytes).
//   memory each rank's plan laid out by the executor's planner with the grid operator's
//          workspace (GridAggregation::workspace_floats: two n_g x c_f(w) / B layout-C blocks,
//          the switches staged inside them, part g's exchange at their width), beside part g's
//          inputs with its row chunk's features.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/cost_model.hpp"
#include "planner/memory_model.hpp"
#include "planner/partition_stats.hpp"

namespace strata::planner {

/// One aggregation call of a grid schedule: its width, how many layout switches it makes and
/// whether they are a recomputation's.
struct GridSwitches {
    index_t width = 0;
    int switches = 0;
    bool recompute = false;
};
/// The layout switches of `schedule` (as the full-graph executor runs it over GridAggregation).
[[nodiscard]] std::vector<GridSwitches> grid_switches(const ModelGraph& graph,
                                                      const Schedule& schedule);

/// Seconds of one layout switch of a part (or pipeline chunk) of `rows` rows at `width` on slice
/// `slice` of `slices` (not overlapped): (F - 1) latencies + the larger of the floats sent,
/// r (w - c), and received, (n - r) c, x 4 / bandwidth + the copies x 4 / `copy_gbs` (the
/// machine's shared_memory bandwidth: a copy out of cache, one memcpy per float, as MPI's
/// shared-memory path): R's staged side packed (to_rows: unpacked), r (w - c) floats, and the
/// rank's own block between R and C, r c (C's side travels in place); none overlaps. r, c the
/// slice's row chunk and column slice. bench/layout_switch measures the switch beside both.
[[nodiscard]] double switch_seconds(index_t rows, index_t width, int slices, int slice,
                                    const Network& network, double copy_gbs);

/// The network a feature group's all-to-all uses: shared memory when the group lies inside a
/// node (`inside`), else the link of `machine` as the group's ranks share it — F consecutive
/// ranks, m = min(per_node, F) on each node, each sending the share (F − m) / (F − 1) of its
/// bytes across, m of a node at once (as link_share_time prices a halo exchange), folded into
/// the bandwidth; the figure for F − m partners across (MachineModel::link). m = F (a group
/// across a node boundary though it would fit in one): the link, unshared.
[[nodiscard]] Network feature_group_network(const MachineModel& machine, bool inside, int f,
                                            int per_node);
/// The link of `machine` as a group that spans nodes shares it: `members` ranks `spacing` apart
/// in a block of members x spacing consecutive ranks (a feature group: spacing 1; a pipeline
/// stage's ways: spacing F), `per_node` consecutive ranks a node. m = min(per_node / spacing,
/// members) of the group on a node (at least 1), each rank sending the share (members − m) /
/// (members − 1) of its bytes across, the block's min(per_node, block) ranks of a node at once,
/// folded into the bandwidth; the figure for members − m partners across (MachineModel::link).
/// m = members: the link, unshared. feature_group_network's across-nodes case at spacing 1.
[[nodiscard]] Network group_link(const MachineModel& machine, int members, int spacing,
                                 int per_node);

struct GridPrediction {
    EpochPrediction time;        ///< the slowest rank's; halo bytes summed over every rank
    std::int64_t a2a_bytes = 0;  ///< per evaluated epoch, every rank (metrics)
    std::int64_t recompute_a2a_bytes = 0;  ///< of recomputations
};

/// Predicts one evaluated epoch of the grid of stats.parts x `slices` ranks. `shape.network` is
/// the graph group's network, `feature_network` the feature group's.
/// `blocks`: the aggregation's column blocks (column_blocks).
[[nodiscard]] GridPrediction predict_grid_epoch(const ModelGraph& graph, Recompute recompute,
                                                const PartitionStats& stats, int slices,
                                                const RunShape& shape,
                                                const Network& feature_network, int blocks = 1);

/// The memory of the grid's largest rank (dense features: the grid reads them dense).
[[nodiscard]] MemoryPrediction predict_grid_memory(const ModelGraph& graph, Recompute recompute,
                                                   const PartitionStats& stats, int slices,
                                                   const MachineModel& machine,
                                                   bool whole_graph_input, int blocks = 1);

}  // namespace strata::planner
