// GridAggregation: switch to C, aggregate the part's slice, switch back; grid_blocker.
#include "layers/grid_aggregation.hpp"

#include <algorithm>

#include "src/base/error.hpp"

namespace strata {

std::string grid_blocker(const ModelGraph& model, int slices) {
    for (const Node& node : model.nodes()) {
        if (node.op->kind() == OpKind::attention) {
            return "attention needs whole rows of every neighbour (op " + node.name +
                   "); use feature_slices = 1";
        }
        const bool after_aggregate =
            node.op->kind() == OpKind::linear && !node.inputs.empty() &&
            model.tensor(node.inputs[0]).producer >= 0 &&
            model.node(model.tensor(node.inputs[0]).producer).op->kind() == OpKind::aggregate;
        const index_t width = model.tensor(node.output).cols;
        if ((node.op->kind() == OpKind::aggregate || after_aggregate) && width < slices) {
            return "op " + node.name + " may aggregate at width " + std::to_string(width) +
                   ", under one column per slice";
        }
    }
    return {};
}

GridAggregation::GridAggregation(OverlappedAggregation& part, LayoutSwitch& layout)
    : part_(part), layout_(layout) {
    STRATA_CHECK(part.num_rows() == layout.part_rows(), "grid aggregation: the part has ",
                 part.num_rows(), " rows, the layout switch ", layout.part_rows());
}

std::size_t GridAggregation::workspace_floats(index_t part_rows, index_t width, int slices,
                                             int slice, std::size_t exchange_floats,
                                             bool accumulate) {
    const std::size_t staging = LayoutSwitch::staging_floats(part_rows, width, slices, slice);
    const std::size_t c = static_cast<std::size_t>(part_rows) *
                          static_cast<std::size_t>(grid_block(width, slices, slice).count);
    return 2 * std::max(c, staging) + exchange_floats + (accumulate ? staging : 0);
}

std::size_t GridAggregation::workspace_floats(index_t width) const {
    return backward_workspace_floats(width, false);
}

std::size_t GridAggregation::backward_workspace_floats(index_t width, bool accumulate) const {
    return workspace_floats(layout_.part_rows(), width, layout_.slices(), layout_.slice(),
                            part_.workspace_floats(layout_.columns(width).count), accumulate);
}

GridAggregation::Scratch GridAggregation::scratch(std::span<float> workspace, index_t width,
                                                  RowRange rows, bool accumulate) const {
    STRATA_CHECK(rows.first == 0 && rows.count == num_rows(), "grid aggregation: rows [",
                 rows.first, ", ", rows.end(), ") of ", num_rows(),
                 ": the feature grid aggregates whole row chunks only");
    // The same answer on every rank (a slice's own width would differ: one rank alone would
    // throw while its feature group waits for it).
    STRATA_CHECK(width >= layout_.slices(), "grid aggregation: width ", width,
                 " has fewer columns than the ", layout_.slices(), " feature slices");
    const index_t slice = layout_.columns(width).count;
    const std::size_t needs = backward_workspace_floats(width, accumulate);
    STRATA_CHECK(workspace.size() >= needs, "grid aggregation: workspace of ", workspace.size(),
                 " floats, needs ", needs);
    const index_t n = layout_.part_rows();
    const std::size_t staging = layout_.staging_floats(width);
    const std::size_t room =
        std::max(static_cast<std::size_t>(n) * static_cast<std::size_t>(slice), staging);
    const std::size_t exchange = part_.workspace_floats(slice);
    return {.in = {workspace.data(), n, slice},
            .out = {workspace.data() + room, n, slice},
            .in_room = workspace.subspan(0, staging),
            .out_room = workspace.subspan(room, staging),
            .exchange = workspace.subspan(2 * room, exchange),
            .own_staging = workspace.subspan(2 * room + exchange, accumulate ? staging : 0)};
}

// Each switch stages R's side in the C buffer that is idle at the time: `out` before the
// aggregation writes it, `in` once the aggregation has read it.
void GridAggregation::forward(ConstMatrixView h, MatrixView z, RowRange rows,
                              std::span<float> workspace, ExchangePurpose purpose) {
    const Scratch s = scratch(workspace, h.cols, rows, false);
    layout_.to_columns(h, s.in, s.out_room, purpose);
    part_.forward(s.in, s.out, {0, layout_.part_rows()}, s.exchange, purpose);
    layout_.to_rows(s.out, z, s.in_room, purpose);
}

void GridAggregation::backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                               std::span<float> workspace) {
    const bool accumulate = beta != 0.0f;
    const Scratch s = scratch(workspace, dz.cols, rows, accumulate);
    if (accumulate) {  // accumulate in C, as 1D at G ranks does: the same sums
        layout_.to_columns(dh, s.out, s.in_room, ExchangePurpose::backward);
        layout_.to_columns(dz, s.in, s.own_staging, ExchangePurpose::backward);
    } else {
        layout_.to_columns(dz, s.in, s.out_room, ExchangePurpose::backward);
    }
    part_.backward(s.in, s.out, {0, layout_.part_rows()}, beta, s.exchange);
    layout_.to_rows(s.out, dh, s.in_room, ExchangePurpose::backward);
}

}  // namespace strata
