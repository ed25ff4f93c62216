// GridAggregation: the G x F grid's GraphOperator (docs/layouts.md). Its rows are this rank's
// row chunk of part g (layout R, layers/layout_switch.hpp); an aggregation switches its input to
// layout C in the feature group, runs the part's overlapped aggregation (the 1D operator of part
// g over the graph group, unchanged) at the column slice's width, and switches the result back.
// Every entry of the C result is the 1D-at-G entry: same nonzeros, same order.
#pragma once

#include <string>

#include "layers/layout_switch.hpp"
#include "layers/overlapped_aggregation.hpp"
#include "src/nn/graph_operator.hpp"
#include "src/nn/model_graph.hpp"

namespace strata {

/// Why the grid cannot run `model` on `slices` slices ("" if it can): its row chunks must be
/// row-local everywhere but in the aggregations, and every aggregation needs a column per slice
/// (at its input's width, or its linear's output width when the memory plan folds it).
[[nodiscard]] std::string grid_blocker(const ModelGraph& model, int slices);

class GridAggregation final : public GraphOperator {
public:
    /// `part`: part g's aggregation over the graph group; `layout`: the feature group's switch
    /// (part_rows = part's rows). Both must outlive it. Throws strata::Error if they disagree.
    GridAggregation(OverlappedAggregation& part, LayoutSwitch& layout);

    /// The row chunk's rows.
    [[nodiscard]] index_t num_rows() const override { return layout_.chunk().count; }
    /// Input and output in layout C, the part's exchange at the slice width (workspace_floats
    /// below). The switches' staging lives in whichever C buffer is idle.
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override;
    /// Accumulating, dh's switch to C needs staging of its own.
    [[nodiscard]] std::size_t backward_workspace_floats(index_t width,
                                                        bool accumulate) const override;
    /// Rank (g, f)'s workspace for a part of `part_rows` rows, slice `slice` of `slices`, whose
    /// 1D exchange at the slice width needs `exchange_floats` (strata plan's too): two C
    /// buffers of n_g x c floats, each at least the staging r (w - c) (a row chunk's other
    /// columns), then the exchange; accumulating backward adds one more staging.
    [[nodiscard]] static std::size_t workspace_floats(index_t part_rows, index_t width, int slices,
                                                      int slice, std::size_t exchange_floats,
                                                      bool accumulate);

    /// z = Â h over the chunk's rows (all of them; a partial range is refused): h to C, the
    /// part's forward at the slice width, the result back to R.
    void forward(ConstMatrixView h, MatrixView z, RowRange rows, std::span<float> workspace,
                 ExchangePurpose purpose) override;
    /// dh = Âᵀ dz + beta dh over the chunk's rows: dz (and, when beta != 0, dh) to C, the part's
    /// backward there (the same sums as 1D at G ranks), the result back to R.
    void backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                  std::span<float> workspace) override;

    /// The halo payload of the graph group.
    [[nodiscard]] HaloBytes bytes_sent() const override { return part_.bytes_sent(); }
    /// The feature group's all-to-all payload.
    [[nodiscard]] HaloBytes switch_bytes() const override { return layout_.bytes_sent(); }
    [[nodiscard]] const LayoutSwitch& layout() const { return layout_; }

private:
    /// The workspace's parts: in and out (layout C), each with room for a staging; the part's
    /// exchange; accumulating, a staging of its own.
    struct Scratch {
        MatrixView in;
        MatrixView out;
        std::span<float> in_room;
        std::span<float> out_room;
        std::span<float> exchange;
        std::span<float> own_staging;
    };
    [[nodiscard]] Scratch scratch(std::span<float> workspace, index_t width, RowRange rows,
                                  bool accumulate) const;

    OverlappedAggregation& part_;
    LayoutSwitch& layout_;
};

}  // namespace strata
