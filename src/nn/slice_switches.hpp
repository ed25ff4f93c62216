// slice_switches: the traffic of S x F's layout switches (docs/pipeline.md "Feature slices
// inside each stage"), as a formula, shared by the executor's tests and strata plan's pipeline
// model. A switch of a chunk of n rows at width w over F slices moves every entry but the F
// diagonal blocks (rank f keeps row block f's column slice f), in both directions alike:
//   switch_floats(n, w, F) = n·w − Σ_f |b_f(n)|·|k_f(w)|
// with b_f = grid_rows(n, F, f) and k_f = grid_block(w, F, f) (src/tensor/grid_blocks.hpp),
// summed over the feature group's F ranks. Per epoch, a stage's aggregation of
// width w switches every initial chunk twice forward (its input into the mirror, the result
// back) and, when it has a backward, twice more (dz in, dh out) plus once when the backward
// accumulates into dh (dh to layout C first):
//   stage_switch_floats = Σ_aggregations Σ_chunks (2 + [backward]·(2 + [accumulates]))
//                                                 · switch_floats(n_c, w, F)
//                         + Σ_refilled Σ_chunks switch_floats(n_c, w_t, F)
// the last term the chunk copies backward reads (StageStorage::refill), refilled from the
// mirror once per chunk (counted as recomputation: recompute_a2a_bytes).
// Restoring a history (checkpoint, the guard's measurement) adds one switch per mirrored buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "src/nn/model_graph.hpp"
#include "src/nn/stage_storage.hpp"

namespace strata {

/// Floats one switch of `rows` x `width` moves, summed over the `slices` ranks.
[[nodiscard]] std::int64_t switch_floats(index_t rows, index_t width, int slices);

/// One kind of switch a stage makes per initial chunk and epoch: `count` switches of `width`
/// columns, in the chunk's forward or backward pass; `refill`: a chunk copy refilled from the
/// mirror (its bytes counted as recomputation).
struct SliceSwitches {
    index_t width = 0;
    int count = 0;
    bool backward = false;
    bool refill = false;
};

/// The switches stage `storage` makes per initial chunk and epoch, in schedule order then the
/// refills (what stage_switch_floats sums; strata plan prices their time from it).
[[nodiscard]] std::vector<SliceSwitches> stage_switches(const ModelGraph& graph,
                                                        const StageStorage& storage);

/// Floats one epoch's switches of stage `storage` move over its feature group, the initial
/// pipeline chunks having `chunk_rows` whole-graph rows each.
/// `refills`: only the refills' (recompute_a2a_bytes), or all but them (a2a_bytes); unset: all.
[[nodiscard]] std::int64_t stage_switch_floats(const ModelGraph& graph, const StageStorage& storage,
                                               std::span<const index_t> chunk_rows, int slices,
                                               std::optional<bool> refills = std::nullopt);

}  // namespace strata
