// GridAggregation: the G x F grid's GraphOperator (docs/layouts.md). Its rows are this rank's
// row chunk of part g (layout R, layers/layout_switch.hpp); an aggregation switches its input to
// layout C in the feature group, runs the part's overlapped aggregation (the 1D operator of part
// g over the graph group, unchanged) at the column slice's width, and switches the result back.
// Every entry of the C result is the 1D-at-G entry: same nonzeros, same order. With B column
// blocks (column_blocks) it does so B times, one block of every slice's columns at a time: the
// same entries, layout-C buffers of 1/B the size, B times the messages (an aggregation narrower
// than B columns per slice runs in fewer blocks: blocks_at).
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
    /// (part_rows = part's rows); `blocks`: column blocks per slice (>= 1). Both must outlive
    /// it. Throws strata::Error if they disagree.
    GridAggregation(OverlappedAggregation& part, LayoutSwitch& layout, int blocks = 1);

    /// The row chunk's rows.
    [[nodiscard]] index_t num_rows() const override { return layout_.chunk().count; }
    /// Input and output in layout C, the part's exchange at the slice width (workspace_floats
    /// below). The switches' staging lives in whichever C buffer is idle.
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override;
    /// Accumulating, dh's switch to C needs staging of its own.
    [[nodiscard]] std::size_t backward_workspace_floats(index_t width,
                                                        bool accumulate) const override;
    /// Rank (g, f)'s workspace for a part of `part_rows` rows, slice `slice` of `slices` in
    /// `blocks` column blocks (blocks_at), whose 1D exchange at the widest block's width needs
    /// `exchange_floats` (strata plan's too): two C buffers of n_g x c_0 floats (c_0 the
    /// widest block of the slice), each at least the staging r (w_0 - c_0) (a row chunk's other
    /// slices' columns in that block), then the exchange; accumulating backward adds one more
    /// staging.
    [[nodiscard]] static std::size_t workspace_floats(index_t part_rows, index_t width, int slices,
                                                      int slice, int blocks,
                                                      std::size_t exchange_floats, bool accumulate);
    [[nodiscard]] int blocks() const { return blocks_; }
    /// The column blocks an aggregation at `width` runs in: the asked `blocks`, at most one per
    /// column of the narrowest slice (floor(width / slices)), at least one.
    [[nodiscard]] static int blocks_at(index_t width, int slices, int blocks);

    /// z = Â h over the chunk's rows (all of them; a partial range is refused): h to C, the
    /// part's forward at the slice width, the result back to R.
    void forward(ConstMatrixView h, MatrixView z, RowRange rows, std::span<float> workspace,
                 ExchangeCall call) override;
    /// dh = Âᵀ dz + beta dh over the chunk's rows: dz (and, when beta != 0, dh) to C, the part's
    /// backward there (the same sums as 1D at G ranks), the result back to R.
    void backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                  std::span<float> workspace, ExchangeCall call) override;

    /// The halo payload of the graph group.
    [[nodiscard]] HaloBytes bytes_sent() const override { return part_.bytes_sent(); }
    /// The feature group's all-to-all payload.
    [[nodiscard]] HaloBytes switch_bytes() const override { return layout_.bytes_sent(); }
    [[nodiscard]] const LayoutSwitch& layout() const { return layout_; }

private:
    /// The workspace's parts for column block `block`: in and out (layout C), each with room
    /// for a staging; the part's exchange; accumulating, a staging of its own.
    struct Scratch {
        MatrixView in;
        MatrixView out;
        std::span<float> in_room;
        std::span<float> out_room;
        std::span<float> exchange;
        std::span<float> own_staging;
    };
    [[nodiscard]] Scratch scratch(std::span<float> workspace, index_t width, RowRange rows,
                                  bool accumulate, SliceBlock block) const;

    OverlappedAggregation& part_;
    LayoutSwitch& layout_;
    int blocks_;
};

}  // namespace strata
