// S x F in the planner: the sliced stage's sizes, switch seconds and bytes over the executor's
// functions (pipeline_slices_model.hpp).
#include "planner/pipeline_slices_model.hpp"

#include <algorithm>

#include "layers/layout_switch.hpp"
#include "layers/pipeline_slices.hpp"
#include "planner/grid_model.hpp"
#include "planner/shape_operator.hpp"
#include "src/base/error.hpp"
#include "src/nn/slice_switches.hpp"

namespace strata::planner {

std::vector<index_t> even_chunk_rows(global_id vertices, int chunks) {
    STRATA_CHECK(chunks >= 1 && vertices >= chunks, "pipeline: ", chunks, " chunks of ", vertices,
                 " rows");
    std::vector<index_t> rows;
    for (int c = 0; c < chunks; ++c) {
        rows.push_back(grid_block(static_cast<index_t>(vertices), chunks, c).count);
    }
    return rows;
}

SlicedShapeOperator::SlicedShapeOperator(std::vector<index_t> chunk_rows, int slices, int slice)
    : chunk_rows_(std::move(chunk_rows)), slices_(slices), slice_(slice) {
    rows_ = SlicedStageAggregation::share_rows(chunk_rows_, slices_, slice_);
    for (const index_t n : chunk_rows_) {
        largest_ = std::max(largest_, grid_rows(n, slices_, slice_).count);
    }
}

std::size_t SlicedShapeOperator::workspace_floats(index_t width) const {
    index_t whole_rows = 0;
    for (const index_t n : chunk_rows_) {
        whole_rows += n;
    }
    const ShapeOperator whole(whole_rows, 0, 0);  // the whole graph: no peers
    return SlicedStageAggregation::workspace_floats(chunk_rows_, slices_, slice_, width, whole);
}

void SlicedShapeOperator::forward(ConstMatrixView, MatrixView, RowRange, std::span<float>,
                                  ExchangeCall) {
    STRATA_FAIL("SlicedShapeOperator: sizes only");
}

void SlicedShapeOperator::backward(ConstMatrixView, MatrixView, RowRange, float, std::span<float>,
                                   ExchangeCall) {
    STRATA_FAIL("SlicedShapeOperator: sizes only");
}

StageSwitchSeconds stage_switch_seconds(const ModelGraph& graph, const StageStorage& storage,
                                        std::span<const index_t> chunk_rows, int slices, int slice,
                                        const Network& network, double copy_gbs) {
    StageSwitchSeconds out;
    if (slices <= 1 || chunk_rows.empty()) {
        return out;
    }
    for (const SliceSwitches& s : stage_switches(graph, storage)) {
        double seconds = 0.0;
        for (const index_t rows : chunk_rows) {
            seconds += switch_seconds(rows, s.width, slices, slice, network, copy_gbs);
        }
        (s.backward ? out.backward : out.forward) +=
            s.count * seconds / static_cast<double>(chunk_rows.size());
    }
    return out;
}

SliceBytes pipeline_a2a_bytes(const ModelGraph& graph, const StageLayout& layout,
                              std::span<const index_t> chunk_rows, int slices,
                              Recompute recompute) {
    SliceBytes out;
    if (slices <= 1) {
        return out;
    }
    index_t rows = 0;
    for (const index_t n : chunk_rows) {
        rows += n;
    }
    for (int s = 0; s < static_cast<int>(layout.stages.size()); ++s) {
        const StageStorage storage = plan_stage_storage(graph, layout, s, rows, recompute, true);
        out.a2a += 4 * stage_switch_floats(graph, storage, chunk_rows, slices, false);
        out.recompute_a2a += 4 * stage_switch_floats(graph, storage, chunk_rows, slices, true);
    }
    return out;
}

}  // namespace strata::planner
