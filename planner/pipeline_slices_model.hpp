// The layer pipeline's feature slices (S x F, docs/pipeline.md "Feature slices inside each
// stage") in strata plan's terms, from the executor's own functions: rank (s, f) holds row block
// f of every pipeline chunk (SlicedStageAggregation::share_rows) and mirrors every aggregated
// buffer over all |V| rows at column slice f (slice_mirror_floats); its aggregations run the
// whole graph's operator at the slice's width, and each makes the layout switches
// stage_switches lists (bytes: stage_switch_floats; time: the grid's switch_seconds per chunk,
// not overlapped). Without the run's chunks (METIS's, made by strata train) the chunks are |V|
// in C even blocks: the a2a bytes are then exact when F divides every aggregation's width (a
// switch of n rows moves n w (F - 1) / F floats, whatever n), within a row per chunk otherwise.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "planner/cost_model.hpp"
#include "src/nn/graph_operator.hpp"
#include "src/nn/stage_layout.hpp"
#include "src/nn/stage_storage.hpp"

namespace strata::planner {

/// The pipeline's C chunks over `vertices` rows when the run's are not known: even blocks (the
/// first |V| mod C one longer).
[[nodiscard]] std::vector<index_t> even_chunk_rows(global_id vertices, int chunks);

/// SlicedStageAggregation's sizes without a communicator or graph: slice `slice` of `slices`
/// over chunks of `chunk_rows` rows (num_rows: its share; workspace_floats: the executor's, over
/// the whole graph's operator with no peers).
class SlicedShapeOperator final : public GraphOperator {
public:
    SlicedShapeOperator(std::vector<index_t> chunk_rows, int slices, int slice);
    [[nodiscard]] index_t num_rows() const override { return rows_; }
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override;
    void forward(ConstMatrixView, MatrixView, RowRange, std::span<float>, ExchangeCall) override;
    void backward(ConstMatrixView, MatrixView, RowRange, float, std::span<float>,
                  ExchangeCall) override;
    [[nodiscard]] HaloBytes bytes_sent() const override { return {}; }
    /// The rows of the rank's largest chunk share (the chunk arena's rows).
    [[nodiscard]] index_t largest_share() const { return largest_; }

private:
    std::vector<index_t> chunk_rows_;
    int slices_;
    int slice_;
    index_t rows_ = 0;
    index_t largest_ = 0;
};

/// Seconds of a stage's layout switches on slice `slice`, per chunk on average (forward pass,
/// backward pass: refills included), over the feature group's network.
struct StageSwitchSeconds {
    double forward = 0.0;
    double backward = 0.0;
};
[[nodiscard]] StageSwitchSeconds stage_switch_seconds(const ModelGraph& graph,
                                                      const StageStorage& storage,
                                                      std::span<const index_t> chunk_rows,
                                                      int slices, int slice, const Network& network,
                                                      double copy_gbs);

/// The switches' payload per epoch over every stage and rank (the metrics' a2a_bytes and
/// recompute_a2a_bytes: 4 x stage_switch_floats).
struct SliceBytes {
    std::int64_t a2a = 0;
    std::int64_t recompute_a2a = 0;
};
[[nodiscard]] SliceBytes pipeline_a2a_bytes(const ModelGraph& graph, const StageLayout& layout,
                                            std::span<const index_t> chunk_rows, int slices,
                                            Recompute recompute);

}  // namespace strata::planner
