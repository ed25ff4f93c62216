// StageStorage: where each tensor of one pipeline stage lives and how many floats each region
// takes — the memory plan of a stage (plan_stage_schedule, execution_plan.hpp) placed in the
// executor's regions. PipelineExecutor allocates it and the planner (planner/pipeline_model.hpp)
// prices it, from one function so the two cannot disagree:
//   kept        whole-graph rows x cols: what other chunks read or what crosses the stage's cuts
//               (aggregation inputs and outputs, cut tensors), and the values the recompute
//               mode keeps from a chunk's forward to its backward
//   kept grads  whole-graph rows x cols: aggregation outputs' gradients
//   scratch     the chunk arena: per chunk row, the schedule's other buffers, shared by lifetime
//               (what backward recomputes lives here), then the receive rows: the next step's
//               stage transfer, received ahead (stage_receives.hpp)
//   snapshot    whole-graph rows x cols of the aggregation inputs (T3's historical embeddings)
//   workspace   the largest op workspace at chunk rows (whole-graph rows for an aggregation)
//   chunk copy  feature slices (S x F) only: the aggregation inputs (but those sent to the next
//               stage) and the aggregation outputs' gradients, rows of the chunk in flight only,
//               per chunk row: their every row lives in the slices' mirror (layout C, all rows
//               at column slice f, pipeline_slices.hpp), so the R copy serves only the chunk's
//               row-local readers; backward refills it from the mirror where its steps read it
//   mirrors     feature slices (S x F) only: the buffers the slices mirror (slice_mirrors: every
//               whole-graph row at the rank's column slice, pipeline_slices.hpp), and the rank's
//               copy of its rows of the data (slice_share_bytes)
// Every whole-graph region is 64-byte aligned (16 floats).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "src/nn/execution_plan.hpp"
#include "src/nn/executor.hpp"
#include "src/nn/graph_operator.hpp"
#include "src/nn/model_graph.hpp"
#include "src/nn/op.hpp"
#include "src/nn/stage_layout.hpp"

namespace strata {

enum class Place { none, input, kept, kept_grad, scratch, chunk };

/// Where a slot of the stage's schedule lives.
struct Location {
    Place place = Place::none;
    int input = -1;          ///< Place::input: index into the data's inputs
    std::size_t offset = 0;  ///< kept / kept_grad: floats into that buffer; scratch, chunk: per row
    index_t cols = 0;
};

struct StageStorage {
    Schedule schedule;                 ///< the stage's steps; slot sizes per row
    std::vector<Location> slots;       ///< per slot of `schedule`
    std::vector<int> recompute;        ///< nodes backward recomputes, in schedule order
    std::vector<TensorId> snapshot;    ///< aggregation inputs (historical rows), stage order
    std::vector<TensorId> kept_grads;  ///< aggregation outputs' gradients, stage order
    std::size_t kept_floats = 0;
    std::size_t kept_grad_floats = 0;
    std::size_t scratch_per_row = 0;  ///< floats of chunk scratch per chunk row
    /// Of scratch_per_row, the receive rows' (the last ones): the largest of the incoming
    /// values' and the outgoing gradients' columns, summed over the tensors.
    std::size_t receive_per_row = 0;
    std::size_t snapshot_floats = 0;  ///< of the aggregation inputs kept whole (not chunk copies)
    std::size_t chunk_per_row = 0;    ///< floats of chunk copies per chunk row (S x F)
    /// S x F: the chunk copies of aggregation inputs that backward reads (forward, recompute or
    /// backward steps after the loss), refilled from the mirror before a chunk's backward.
    std::vector<TensorId> refill;

    /// Where tensor t's value (as forward wrote it) or gradient lives.
    [[nodiscard]] const Location& value(TensorId t) const;
    [[nodiscard]] const Location& grad(TensorId t) const;
    /// Whether aggregation input t's value is a chunk copy (no whole rows, no R snapshot).
    [[nodiscard]] bool chunk_only(TensorId t) const { return value(t).place == Place::chunk; }
};

/// Floats rounded up to a 64-byte aligned region.
[[nodiscard]] std::uint64_t aligned_floats(std::uint64_t floats);

/// The storage of stage `stage` of `layout` over `rows` whole-graph rows, keeping for backward
/// what `recompute` says (a chunk's aggregations are never recomputed: see plan_stage_schedule).
/// `sliced` (S x F): the mirrored buffers as chunk copies (above).
[[nodiscard]] StageStorage plan_stage_storage(const ModelGraph& graph, const StageLayout& layout,
                                              int stage, index_t rows, Recompute recompute,
                                              bool sliced = false);

/// The largest forward or backward workspace of the stage's steps: row-local ops at
/// `chunk_rows`, aggregations at the operator's rows.
[[nodiscard]] std::size_t stage_workspace_floats(const ModelGraph& graph,
                                                 const StageStorage& storage, index_t chunk_rows,
                                                 const GraphOperator& aggregation);

/// The hybrid (W > 1 ways, way_mirrors.hpp): per step of `storage`'s schedule, the slots whose
/// rows the ways exchange before it — a forward step's (before the boundary) inputs but the raw
/// features (kept whole, or with feature slices a chunk copy: its mirror is whole), a
/// backward step's output gradient, of ops that are not row-local; empty for every other step.
/// The executor's exchanges (PipelineExecutor::forward_chunk, backward_chunk) and strata plan's
/// way bytes (planner::pipeline_way_bytes).
[[nodiscard]] std::vector<std::vector<int>> way_mirror_slots(const ModelGraph& graph,
                                                             const StageStorage& storage);
/// The hybrid's mirror exchange buffers' width: the widest slot way_mirror_slots exchanges
/// (an aggregation's input forward, its output gradient backward), with feature slices its
/// columns of slice `slice` of `slices` (the mirrors' width). The executor's buffers and
/// strata plan's price of them.
[[nodiscard]] index_t way_mirror_width(const ModelGraph& graph, const StageStorage& storage,
                                       int slices = 1, int slice = 0);

/// S x F: a slot the stage's feature slices mirror (PipelineSlices::attach: every whole-graph
/// row at the rank's column slice), and whether its mirror has a T3 snapshot.
struct SliceMirror {
    int slot = -1;
    bool snapshot = false;
};

/// The slots a stage's slices mirror, each buffer once, in the executor's attach order: the
/// aggregation inputs of storage.snapshot (with a snapshot when `snapshot`: the stage keeps
/// one, StageBuffers::has_snapshot), the aggregation outputs' gradients, then every other slot
/// an aggregation step reads (a raw input; a backward's dy).
[[nodiscard]] std::vector<SliceMirror> slice_mirrors(const ModelGraph& graph,
                                                     const StageStorage& storage, bool snapshot);

/// Floats of those mirrors and their snapshots on slice `slice` of `slices` over `rows`
/// whole-graph rows: rows x the slot's column slice (the grid's blocks: the first cols mod F
/// one wider) each — PipelineSlices::mirror_floats, for strata plan.
[[nodiscard]] std::size_t slice_mirror_floats(const ModelGraph& graph, const StageStorage& storage,
                                              bool snapshot, index_t rows, int slices, int slice);

/// S x F: bytes of a rank's copy of its `rows` rows of the data (the executor's share): per
/// row, every input's columns as floats, a label (index_t), three masks (a byte each) and the
/// row's global id.
[[nodiscard]] std::int64_t slice_share_bytes(index_t rows, std::span<const index_t> input_cols);

/// The sizes a stage's memory plan lists (floats, except mirror_bytes).
struct StageMemory {
    int stage = 0;
    std::size_t kept_floats = 0;
    std::size_t kept_grad_floats = 0;
    std::size_t scratch_floats = 0;  ///< chunk scratch + workspace
    std::size_t snapshot_floats = 0;
    std::int64_t mirror_bytes = 0;  ///< the hybrid's mirror buffers and row lists
    /// Feature slices (S x F): the aggregated buffers' mirrors, all rows at column slice f, and
    /// their snapshots (pipeline_slices.hpp); listed only when there are any.
    std::size_t slice_mirror_floats = 0;
    /// Feature slices: the rank's copy of its rows of the inputs, labels, masks and ids (bytes).
    std::int64_t share_bytes = 0;
    std::size_t parameters = 0;
    std::size_t evaluation_floats = 0;  ///< rank 0's exact evaluation arena (0: another rank)
    bool evaluates = false;             ///< rank 0: lists the evaluation line
};

/// The executor's memory plan of one pipeline rank (PipelineExecutor::memory_plan).
[[nodiscard]] std::vector<MemoryLine> stage_memory_lines(const StageMemory& memory);

}  // namespace strata
