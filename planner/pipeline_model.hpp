// The layer pipeline (`strata train --parallel pipeline`, src/nn/pipeline_executor.hpp) priced:
// S stages x W ways x C chunks on K = S x W ranks. Per candidate
//   stages        plan_stages — the executor's own split (same cost model, same |V| and nnz)
//   compute       each stage's nodes priced by the graph-parallel cost model (price_stage) on
//                 the rows a way holds (|V| / W), forward and backward apart, divided into its
//                 C / W chunks (the fixed step cost paid per chunk)
//   the wave      simulated in the executor's order (pipeline_wave_seconds): every chunk forward,
//                 staggered one chunk per stage, then backward in reverse; a blocking receive per
//                 cut tensor and chunk, sends asynchronous; transfers not overlapped
//   stage bytes   2 x |V| x (Σ over cuts and crossing tensors of the record bytes of a row),
//                 summed over ranks — the metrics' stage_bytes, exactly (the executor sends every
//                 chunk's cut rows once forward and once backward); a record is the run's
//                 halo_precision's (RunShape::halo_precision): 4 cols (fp32), 2 cols (bf16) or
//                 cols + 4 (int8)
//   all-reduce    the gradient over all K ranks; Adam on every rank
//   evaluation    rank 0 alone on the whole graph (the model's evaluation schedule)
//   memory        stage_memory_lines over plan_stage_storage — the executor's own functions —
//                 and the inputs of the whole graph; the chunk scratch is sized for |V| / C rows
//                 x 1.03 (the METIS chunks' balance; the executor sizes it for the largest chunk)
// Not modelled: the W-way mirror exchange (W > 1 is not planned), staleness (the accuracy guard
// may halve the chunks: a note).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "planner/cost_model.hpp"
#include "planner/memory_model.hpp"
#include "planner/partition_stats.hpp"
#include "src/nn/execution_plan.hpp"
#include "src/nn/model_graph.hpp"
#include "src/nn/stage_layout.hpp"

namespace strata::planner {

struct PipelineLayout {
    int stages = 2;
    int ways = 1;
    int chunks = 8;
    /// What backward recomputes chunk by chunk (PipelineOptions::recompute).
    Recompute recompute = Recompute::none;
};

/// The pipeline layouts planned for `ranks`: S = ranks, W = 1 (S >= 2 and at most the model's
/// layer boundaries + 1), C in {4 S W (the executor's default), 8 S W, 16 S W} up to |V|, each
/// with recompute `all` (the least memory: every stage holds whole-graph buffers).
[[nodiscard]] std::vector<PipelineLayout> pipeline_layouts(const ModelGraph& graph, int ranks,
                                                           global_id vertices);

/// The executor's stage split for `stages` on the whole graph (|V| rows, nnz of A).
[[nodiscard]] StageLayout pipeline_stage_layout(const ModelGraph& graph, int stages,
                                                const PartitionStats& whole);

/// Bytes between stages per epoch, summed over ranks (the metrics' stage_bytes), with the
/// transfers at `precision`.
[[nodiscard]] std::int64_t pipeline_stage_bytes(const ModelGraph& graph, const StageLayout& layout,
                                                global_id vertices,
                                                HaloPrecision precision = HaloPrecision::fp32);

/// Seconds of one GPipe wave of `steps` chunks per way as the executor runs it: forward[s] and
/// backward[s] are stage s's seconds per chunk, transfer[s] the seconds of the receive before
/// stage s (s >= 1) forward, and of stage s's gradient receive from s + 1 backward.
[[nodiscard]] double pipeline_wave_seconds(std::span<const double> forward,
                                           std::span<const double> backward,
                                           std::span<const double> transfer, int steps);

struct PipelinePrediction {
    EpochPrediction time;
    std::int64_t stage_bytes = 0;
    double bubble = 0.0;  ///< idle fraction of the wave on the busiest stage
    std::string split;    ///< StageLayout::describe
};

[[nodiscard]] PipelinePrediction predict_pipeline_epoch(const ModelGraph& graph,
                                                        const PartitionStats& whole,
                                                        const PipelineLayout& layout,
                                                        const RunShape& shape);

/// The executor's memory plan of the largest rank, and its resident peak as for graph
/// parallelism (every rank holds the whole graph). `largest_chunk`: the rows of the largest
/// chunk when known (0: |V| / C x 1.03).
[[nodiscard]] MemoryPrediction predict_pipeline_memory(
    const ModelGraph& graph, const PartitionStats& whole, const PipelineLayout& layout,
    const MachineModel& machine, bool whole_graph_input, index_t largest_chunk = 0);

}  // namespace strata::planner
