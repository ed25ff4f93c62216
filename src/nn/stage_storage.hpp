// StageStorage: where each tensor of one pipeline stage lives and how many floats each region
// takes — the layout PipelineExecutor allocates and the planner (planner/pipeline_model.hpp)
// prices, from one function so the two cannot disagree:
//   kept        whole-graph rows x cols: aggregation inputs/outputs, cut tensors, layer inputs
//   kept grads  whole-graph rows x cols: aggregation outputs' gradients
//   scratch     chunk rows x Σ cols of every other value and gradient (recomputed in backward)
//   snapshot    whole-graph rows x cols of the aggregation inputs (T3's historical embeddings)
//   workspace   the largest op workspace at chunk rows (whole-graph rows for an aggregation)
// Every whole-graph region is 64-byte aligned (16 floats).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/nn/executor.hpp"
#include "src/nn/graph_operator.hpp"
#include "src/nn/model_graph.hpp"
#include "src/nn/op.hpp"
#include "src/nn/stage_layout.hpp"

namespace strata {

enum class Place { none, input, kept, scratch };

/// Where a tensor's value (or gradient) lives on a stage.
struct Location {
    Place place = Place::none;
    int input = -1;          ///< Place::input: index into the data's inputs
    std::size_t offset = 0;  ///< Place::kept / scratch: floats into that buffer
    index_t cols = 0;
};

struct StageStorage {
    std::vector<Location> value;               ///< per tensor
    std::vector<Location> grad;                ///< per tensor
    std::vector<int> nodes;                    ///< this stage's nodes, in order
    std::vector<int> recompute;                ///< row-local nodes whose outputs are chunk scratch
    std::vector<std::vector<GradMode>> modes;  ///< per stage node, per input
    std::vector<TensorId> snapshot;            ///< kept aggregation inputs (historical rows)
    std::vector<TensorId> kept_grads;          ///< aggregation outputs' gradients
    std::size_t kept_floats = 0;
    std::size_t kept_grad_floats = 0;
    std::size_t scratch_per_row = 0;  ///< floats of chunk scratch per chunk row
    std::size_t snapshot_floats = 0;
};

/// Floats rounded up to a 64-byte aligned region.
[[nodiscard]] std::uint64_t aligned_floats(std::uint64_t floats);

/// The storage of stage `stage` of `layout` over `rows` whole-graph rows.
[[nodiscard]] StageStorage plan_stage_storage(const ModelGraph& graph, const StageLayout& layout,
                                              int stage, index_t rows);

/// The largest forward or backward workspace of the stage's ops: row-local ops at `chunk_rows`,
/// aggregations at the operator's rows.
[[nodiscard]] std::size_t stage_workspace_floats(const ModelGraph& graph,
                                                 const StageStorage& storage, index_t chunk_rows,
                                                 const GraphOperator& aggregation);

/// The sizes a stage's memory plan lists (floats, except mirror_bytes).
struct StageMemory {
    int stage = 0;
    std::size_t kept_floats = 0;
    std::size_t kept_grad_floats = 0;
    std::size_t scratch_floats = 0;  ///< chunk scratch + workspace
    std::size_t snapshot_floats = 0;
    std::int64_t mirror_bytes = 0;  ///< the hybrid's mirror buffers and row lists
    std::size_t parameters = 0;
    std::size_t evaluation_floats = 0;  ///< rank 0's exact evaluation arena (0: another rank)
    bool evaluates = false;             ///< rank 0: lists the evaluation line
};

/// The executor's memory plan of one pipeline rank (PipelineExecutor::memory_plan).
[[nodiscard]] std::vector<MemoryLine> stage_memory_lines(const StageMemory& memory);

}  // namespace strata
