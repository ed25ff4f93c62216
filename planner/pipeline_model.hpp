// The layer pipeline (`strata train --parallel pipeline`, src/nn/pipeline_executor.hpp) priced:
// S stages x W ways x C chunks on K = S x W ranks, or with F feature slices inside each stage
// (way) on K = S x W x F ranks (pipeline_slices_model.hpp). Per candidate
//   stages        plan_stages — the executor's own split (same cost model, same |V| and nnz)
//   compute       each stage's nodes priced by the graph-parallel cost model (price_stage) on
//                 the rows a way holds (|V| / W), forward and backward apart, divided into its
//                 C / W chunks (the fixed step cost paid per chunk); S x F: on the largest
//                 share of the rows (a slice's row block of every chunk) with the entries / F
//                 (the grid's pricing: the aggregation at width w / F), plus the stage's layout
//                 switches per chunk (the grid's switch time, over the feature group's network)
//   the wave      simulated in the executor's order (pipeline_wave_seconds): every chunk forward,
//                 staggered one chunk per stage, then backward in reverse; a blocking receive per
//                 cut tensor and chunk (each cut on its network: pipeline_networks), sends
//                 asynchronous; each link between stages carries one chunk at a time each way (a
//                 transfer longer than the receiver's compute queues)
//   stage bytes   2 x |V| x (Σ over cuts and crossing tensors of the record bytes of a row),
//                 summed over ranks — the metrics' stage_bytes, exactly (the executor sends every
//                 chunk's cut rows once forward and once backward); a record is the run's
//                 halo_precision's (RunShape::halo_precision): 4 cols (fp32), 2 cols (bf16) or
//                 cols + 4 (int8); S x F: each rank sends its row blocks, |V| rows in all
//   a2a bytes     S x F: 4 x stage_switch_floats over the stages (the metrics' a2a_bytes)
//   all-reduce    the gradient over all K ranks; Adam on every rank
//   evaluation    rank 0 alone on the whole graph (the model's evaluation schedule)
//   memory        stage_memory_lines over plan_stage_storage — the executor's own functions —
//                 and the inputs of the whole graph; the chunk scratch is sized for |V| / C rows
//                 x 1.03 (the METIS chunks' balance; the executor sizes it for the largest chunk);
//                 S x F: per rank (s, f) the sliced storage over its share, the slices' mirrors
//                 (slice_mirror_floats) and its copy of its rows of the data (slice_share_bytes)
//                 the accuracy guard's check step at one chunk per way: its larger chunk arena
//                 (guard_bytes) in the peak
//   mirrors       W > 1 ways: the mirror exchange of the real graph's chunks (WayStats, the lists
//                 strata train builds): per chunk step and stage, one latency per exchanged
//                 tensor and the average chunk's rows at their record bytes, blocking (added to
//                 the stage's step, not overlapped); its bytes the metrics' way_bytes, exactly;
//                 its buffers (send, receive, lists) and the largest chunk in the memory plan
// S x W x F: each rank's share of its way's chunks (1/W of its share of every chunk), the
// mirror rows at its slice's columns (bytes summed over the slices), its mirror buffers at
// the slice's width. Not modelled: staleness (the accuracy guard may halve the chunks: a
// note), the spread of mirror rows between chunks (the average chunk is priced).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "planner/cost_model.hpp"
#include "planner/memory_model.hpp"
#include "planner/partition_stats.hpp"
#include "planner/way_stats.hpp"
#include "src/nn/execution_plan.hpp"
#include "src/nn/model_graph.hpp"
#include "src/nn/stage_layout.hpp"
#include "src/tensor/host_csr.hpp"

namespace strata::planner {

struct PipelineLayout {
    int stages = 2;
    int ways = 1;
    int chunks = 8;
    /// What backward recomputes chunk by chunk (PipelineOptions::recompute).
    Recompute recompute = Recompute::none;
    /// F: feature slices inside each stage (S x F), or each way (S x W x F); 1: none.
    int feature_slices = 1;
};

/// The pipeline layouts planned for `ranks`: S = ranks, W = 1 (S >= 2 and at most the model's
/// layer boundaries + 1), C in {4 S W (the executor's default), 8 S W, 16 S W} up to |V|, each
/// with recompute `all` (the least memory: every stage holds whole-graph buffers); then W > 1
/// ways for every W dividing `ranks` with S = ranks / W within the same bounds (the same chunk
/// counts); then for every F > 1 S x F and S x W x F with S = ranks / (W F) >= 2 (the same
/// chunks and recompute), where the model gives every aggregation a column per slice
/// (grid_blocker) and the smallest of C even chunks keeps a row per slice (the executor's
/// refusals).
[[nodiscard]] std::vector<PipelineLayout> pipeline_layouts(const ModelGraph& graph, int ranks,
                                                           global_id vertices);

/// The executor's stage split for `stages` on the whole graph (|V| rows, nnz of A).
[[nodiscard]] StageLayout pipeline_stage_layout(const ModelGraph& graph, int stages,
                                                const PartitionStats& whole);

/// The hybrid's mirror exchange (W > 1 ways a stage) per epoch, summed over ranks (the metrics'
/// way_bytes): in every stage, before each non-row-local step of a chunk's forward each kept
/// input, and before each of its backward steps the output gradient, exchanged between the
/// ways — every chunk's rows that another way reads (way_mirrors over `structure`, the
/// operator's pattern in chunk order, and the run's `chunk_offsets`), once per epoch, at
/// `precision`'s record bytes for the tensor's width. As the executor exchanges
/// (PipelineExecutor::forward_chunk and backward_chunk); 0 with one way.
[[nodiscard]] std::int64_t pipeline_way_bytes(const ModelGraph& graph, const StageLayout& layout,
                                              const HostCsr& structure,
                                              std::span<const index_t> chunk_offsets, int ways,
                                              Recompute recompute,
                                              HaloPrecision precision = HaloPrecision::fp32);
/// The same from the lists' statistics (way_stats) of a graph of `rows` vertices; with F
/// `slices` inside each way (S x W x F), every slice sends its columns of the rows.
[[nodiscard]] std::int64_t pipeline_way_bytes(const ModelGraph& graph, const StageLayout& layout,
                                              index_t rows, const WayStats& ways,
                                              Recompute recompute,
                                              HaloPrecision precision = HaloPrecision::fp32,
                                              int slices = 1);

/// Bytes between stages per epoch, summed over ranks (the metrics' stage_bytes), with the
/// transfers at `precision`.
[[nodiscard]] std::int64_t pipeline_stage_bytes(const ModelGraph& graph, const StageLayout& layout,
                                                global_id vertices,
                                                HaloPrecision precision = HaloPrecision::fp32);

/// Seconds of one GPipe wave of `steps` chunks per way as the executor runs it: forward[s] and
/// backward[s] are stage s's seconds per chunk, transfer[s] the seconds of the receive before
/// stage s (s >= 1) forward, and of stage s's gradient receive from s + 1 backward. A link
/// between two stages carries one chunk at a time in each direction.
[[nodiscard]] double pipeline_wave_seconds(std::span<const double> forward,
                                           std::span<const double> backward,
                                           std::span<const double> transfer, int steps);

struct PipelinePrediction {
    EpochPrediction time;
    std::int64_t stage_bytes = 0;
    std::int64_t way_bytes = 0;  ///< W > 1: the mirror exchange's bytes per epoch (metrics)
    std::int64_t a2a_bytes = 0;  ///< S x F: the layout switches' bytes per epoch (metrics)
    std::int64_t recompute_a2a_bytes = 0;  ///< S x F: of chunk copies refilled for backward
    double bubble = 0.0;                   ///< idle fraction of the wave on the busiest stage
    std::string split;                     ///< StageLayout::describe
};

/// The networks a pipeline's transfers use besides the gradient all-reduce (RunShape::network).
struct PipelineNetworks {
    std::vector<Network> cuts;  ///< the stage transfers across cut s (into stage s + 1)
    Network mirrors;            ///< W > 1: the mirror exchanges among a stage's ways
    Network features;           ///< F > 1: the feature group's layout switches
};

/// Where `layout`'s transfers go on nodes of `per_node` consecutive ranks (0: one node), strata
/// train placing rank (s, w, f) at (s W + w) F + f. A cut: shared memory where every rank of
/// the stage before it has its partner (one rank, W F further) on its own node; else the paired
/// link (one partner a rank, MachineModel::link(1)) shared by the most ranks of one node that
/// send across it at once. The mirrors: shared memory when a stage's W F ranks lie in one node,
/// else group_link (W members F apart); the switches: feature_group_network.
[[nodiscard]] PipelineNetworks pipeline_networks(const MachineModel& machine,
                                                 const PipelineLayout& layout, int per_node);

/// `chunk_rows`: the run's chunks' rows when known (empty: |V| in C even blocks; S x F only);
/// `networks`: where the stage transfers, mirrors and switches go (null: all on shape.network,
/// which prices the all-reduce in any case); `way_stats`: the mirror lists of the layout's
/// chunks, required with W > 1 ways (strata::Error otherwise).
[[nodiscard]] PipelinePrediction predict_pipeline_epoch(
    const ModelGraph& graph, const PartitionStats& whole, const PipelineLayout& layout,
    const RunShape& shape, std::span<const index_t> chunk_rows = {},
    const PipelineNetworks* networks = nullptr, const WayStats* way_stats = nullptr);

/// The executor's memory plan of the largest rank, and its resident peak as for graph
/// parallelism (every rank holds the whole graph). `largest_chunk`: the rows of the largest
/// chunk when known (0: |V| / C x 1.03). S x F: `run_chunks`, the run's chunks' rows when known
/// (empty: |V| in C even blocks, the chunk arena sized for a block of |V| / C x 1.03 rows).
/// `guard` (the accuracy guard, on by default): its check step runs at one chunk per way and
/// grows the chunk arena to a way's rows; what that adds to the plan is `guard_bytes`, inside
/// `peak_bytes` (`planned_bytes` stays the run's printed plan). W > 1 ways: `way_stats`, the
/// mirror lists of the layout's chunks, is required (the mirror buffers, the largest chunk
/// and way; strata::Error otherwise).
[[nodiscard]] MemoryPrediction predict_pipeline_memory(
    const ModelGraph& graph, const PartitionStats& whole, const PipelineLayout& layout,
    const MachineModel& machine, bool whole_graph_input, index_t largest_chunk = 0,
    std::span<const index_t> run_chunks = {}, bool guard = true,
    const WayStats* way_stats = nullptr);

}  // namespace strata::planner
