// PipelineSlices: what the layer pipeline needs from feature slices inside a stage (S x F,
// docs/pipeline.md "Feature slices inside each stage"). Rank (s, f) of a stage's F ranks holds
// share f of every pipeline chunk (row block f of the chunk, all columns: the grid's layout R)
// and numbers its rows locally, chunk after chunk; its whole-graph buffers hold those rows only
// (1/F of them). An aggregation reads every row of its input at column slice f (layout C): the
// operator keeps, for every whole-graph buffer an aggregation reads (its "mirror"), a copy over
// all |V| rows at slice f, refreshed chunk by chunk as chunks are processed, through the grid's
// layout switch (layers/layout_switch.hpp). The executor tells it when a whole buffer changes
// otherwise (T2's zeroing and doubling, T3's snapshot, a history restored). The implementation
// is layers/pipeline_slices.hpp (the layout switch lives in the layers library).
#pragma once

#include <functional>

#include "src/nn/graph_operator.hpp"

namespace strata {

class PipelineSlices : public GraphOperator {
public:
    /// F, and this rank's f.
    [[nodiscard]] virtual int slices() const = 0;
    [[nodiscard]] virtual int slice() const = 0;
    /// Rows of the whole graph.
    [[nodiscard]] virtual index_t global_rows() const = 0;
    /// This rank's share of pipeline chunk `chunk` (an initial chunk), in whole-graph rows.
    [[nodiscard]] virtual RowRange share(int chunk) const = 0;
    /// The initial chunks' offsets in local rows (C + 1): chunk c = [o[c], o[c+1]).
    [[nodiscard]] virtual const std::vector<index_t>& local_offsets() const = 0;

    /// Gives the whole-graph buffer `whole` (local rows x w, or a chunk copy's region: rows of
    /// the chunk in flight only; identified by its address) a mirror (all rows x slice f),
    /// zeroed, and a snapshot of it when `snapshot`. Once per buffer, before any call reads it.
    /// forward and backward read h and dz as every local row or the call's rows only.
    virtual void attach(ConstMatrixView whole, bool snapshot) = 0;
    /// A chunk copy's region moved (the chunk arena grew): its mirror follows. Local.
    virtual void rebind(const float* old, const float* now) = 0;
    /// Rewrites whole's mirror (or its snapshot) from `rows` (local rows x w), chunk by chunk:
    /// collective over the feature group.
    virtual void resync(ConstMatrixView whole, ConstMatrixView rows, bool snapshot) = 0;
    /// The inverse: whole's mirror (or its snapshot) into `rows` (every local row x w).
    /// Collective over the feature group.
    virtual void gather(ConstMatrixView whole, MatrixView rows, bool snapshot) = 0;
    /// The mirror's rows of local rows `range` (whole chunks) into `rows` (range.count x w): a
    /// chunk copy refilled for backward (switches counted as recomputation). Collective.
    virtual void refill(ConstMatrixView whole, MatrixView rows, RowRange range) = 0;
    /// whole's mirror rows of the local range `rows` (whole chunks) scaled by `factor`, or every
    /// mirror row set to `value` (fill). Local.
    virtual void scale(ConstMatrixView whole, RowRange rows, float factor) = 0;
    virtual void fill(ConstMatrixView whole, float value) = 0;
    /// T3: every mirror with a snapshot copied into it (`take`) or back from it. Local.
    virtual void snapshot(bool take) = 0;
    /// Floats of the mirrors and their snapshots (memory plan).
    [[nodiscard]] virtual std::size_t mirror_floats() const = 0;

    /// S x W x F (the hybrid's ways, each with feature slices): called by every aggregation
    /// after the call's chunks were switched into the mirror of `whole` (forward: h's,
    /// backward: dz's) and before the operator reads it, with that mirror (all rows x slice f):
    /// the ways' mirror exchange runs there, on the slice's columns. Empty: none.
    using MirrorHook = std::function<void(ConstMatrixView whole, MatrixView mirror, bool forward)>;
    virtual void set_mirror_hook(MirrorHook hook) = 0;
};

}  // namespace strata
