// GridAggregation: switch to C, aggregate the part's slice, switch back; grid_blocker.
#include "layers/grid_aggregation.hpp"

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

std::size_t GridAggregation::workspace_floats(index_t width) const {
    const index_t slice = layout_.columns(width).count;
    return 2 * static_cast<std::size_t>(layout_.part_rows()) * static_cast<std::size_t>(slice) +
           layout_.staging_floats(width) + part_.workspace_floats(slice);
}

GridAggregation::Scratch GridAggregation::scratch(std::span<float> workspace, index_t width,
                                                  RowRange rows) const {
    STRATA_CHECK(rows.first == 0 && rows.count == num_rows(), "grid aggregation: rows [",
                 rows.first, ", ", rows.end(), ") of ", num_rows(),
                 ": the feature grid aggregates whole row chunks only");
    // The same answer on every rank (a slice's own width would differ: one rank alone would
    // throw while its feature group waits for it).
    STRATA_CHECK(width >= layout_.slices(), "grid aggregation: width ", width,
                 " has fewer columns than the ", layout_.slices(), " feature slices");
    const index_t slice = layout_.columns(width).count;
    STRATA_CHECK(workspace.size() >= workspace_floats(width), "grid aggregation: workspace of ",
                 workspace.size(), " floats, needs ", workspace_floats(width));
    const index_t n = layout_.part_rows();
    const std::size_t c = static_cast<std::size_t>(n) * static_cast<std::size_t>(slice);
    const std::size_t staging = layout_.staging_floats(width);
    return {.in = {workspace.data(), n, slice},
            .out = {workspace.data() + c, n, slice},
            .staging = workspace.subspan(2 * c, staging),
            .exchange = workspace.subspan(2 * c + staging)};
}

void GridAggregation::forward(ConstMatrixView h, MatrixView z, RowRange rows,
                              std::span<float> workspace, ExchangePurpose purpose) {
    const Scratch s = scratch(workspace, h.cols, rows);
    layout_.to_columns(h, s.in, s.staging, purpose);
    part_.forward(s.in, s.out, {0, layout_.part_rows()}, s.exchange, purpose);
    layout_.to_rows(s.out, z, s.staging, purpose);
}

void GridAggregation::backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                               std::span<float> workspace) {
    const Scratch s = scratch(workspace, dz.cols, rows);
    layout_.to_columns(dz, s.in, s.staging, ExchangePurpose::backward);
    if (beta != 0.0f) {  // accumulate in C, as 1D at G ranks does: the same sums
        layout_.to_columns(dh, s.out, s.staging, ExchangePurpose::backward);
    }
    part_.backward(s.in, s.out, {0, layout_.part_rows()}, beta, s.exchange);
    layout_.to_rows(s.out, dh, s.staging, ExchangePurpose::backward);
}

}  // namespace strata
