// GridAggregation: per column block, switch to C, aggregate the part's slice, switch back;
// grid_blocker.
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

GridAggregation::GridAggregation(OverlappedAggregation& part, LayoutSwitch& layout, int blocks)
    : part_(part), layout_(layout), blocks_(blocks) {
    STRATA_CHECK(part.num_rows() == layout.part_rows(), "grid aggregation: the part has ",
                 part.num_rows(), " rows, the layout switch ", layout.part_rows());
    STRATA_CHECK(blocks >= 1, "grid aggregation: ", blocks, " column blocks");
}

int GridAggregation::blocks_at(index_t width, int slices, int blocks) {
    return static_cast<int>(std::clamp<index_t>(width / slices, 1, blocks));
}

std::size_t GridAggregation::workspace_floats(index_t part_rows, index_t width, int slices,
                                              int slice, int blocks, std::size_t exchange_floats,
                                              bool accumulate) {
    // Block 0 is every slice's widest (grid_block puts the remainder first).
    const SliceBlock widest{blocks_at(width, slices, blocks), 0};
    const std::size_t staging =
        LayoutSwitch::staging_floats(part_rows, width, slices, slice, widest);
    const std::size_t c =
        static_cast<std::size_t>(part_rows) *
        static_cast<std::size_t>(slice_columns(width, slices, slice, widest).count);
    return 2 * std::max(c, staging) + exchange_floats + (accumulate ? staging : 0);
}

std::size_t GridAggregation::workspace_floats(index_t width) const {
    return backward_workspace_floats(width, false);
}

std::size_t GridAggregation::backward_workspace_floats(index_t width, bool accumulate) const {
    const int blocks = blocks_at(width, layout_.slices(), blocks_);
    return workspace_floats(layout_.part_rows(), width, layout_.slices(), layout_.slice(), blocks,
                            part_.workspace_floats(layout_.columns(width, {blocks, 0}).count),
                            accumulate);
}

GridAggregation::Scratch GridAggregation::scratch(std::span<float> workspace, index_t width,
                                                  RowRange rows, bool accumulate,
                                                  SliceBlock block) const {
    STRATA_CHECK(rows.first == 0 && rows.count == num_rows(), "grid aggregation: rows [",
                 rows.first, ", ", rows.end(), ") of ", num_rows(),
                 ": the feature grid aggregates whole row chunks only");
    // The same answer on every rank (a slice's own width would differ: one rank alone would
    // throw while its feature group waits for it).
    STRATA_CHECK(width >= layout_.slices(), "grid aggregation: width ", width,
                 " has fewer columns than the ", layout_.slices(), " feature slices");
    const std::size_t needs = backward_workspace_floats(width, accumulate);
    STRATA_CHECK(workspace.size() >= needs, "grid aggregation: workspace of ", workspace.size(),
                 " floats, needs ", needs);
    const index_t n = layout_.part_rows();
    const SliceBlock widest{block.blocks, 0};
    const std::size_t room =
        std::max(static_cast<std::size_t>(n) *
                     static_cast<std::size_t>(layout_.columns(width, widest).count),
                 layout_.staging_floats(width, widest));
    const std::size_t exchange = part_.workspace_floats(layout_.columns(width, widest).count);
    const index_t cols = layout_.columns(width, block).count;
    const std::size_t staging = layout_.staging_floats(width, block);
    return {.in = {workspace.data(), n, cols},
            .out = {workspace.data() + room, n, cols},
            .in_room = workspace.subspan(0, staging),
            .out_room = workspace.subspan(room, staging),
            .exchange = workspace.subspan(2 * room, exchange),
            .own_staging = workspace.subspan(2 * room + exchange, accumulate ? staging : 0)};
}

// Each switch stages R's side in the C buffer that is idle at the time: `out` before the
// aggregation writes it, `in` once the aggregation has read it. Block by block: each writes
// its own columns of z (dh).
void GridAggregation::forward(ConstMatrixView h, MatrixView z, RowRange rows,
                              std::span<float> workspace, ExchangeCall call) {
    const int blocks = blocks_at(h.cols, layout_.slices(), blocks_);
    for (int b = 0; b < blocks; ++b) {
        const SliceBlock block{blocks, b};
        const Scratch s = scratch(workspace, h.cols, rows, false, block);
        layout_.to_columns(h, s.in, s.out_room, call.purpose, block);
        ExchangeCall slice = call;  // this slice's columns of the whole width
        slice.first_column = call.first_column + layout_.columns(h.cols, block).first;
        part_.forward(s.in, s.out, {0, layout_.part_rows()}, s.exchange, slice);
        layout_.to_rows(s.out, z, s.in_room, call.purpose, block);
    }
}

void GridAggregation::backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                               std::span<float> workspace, ExchangeCall call) {
    const bool accumulate = beta != 0.0f;
    const int blocks = blocks_at(dz.cols, layout_.slices(), blocks_);
    for (int b = 0; b < blocks; ++b) {
        const SliceBlock block{blocks, b};
        const Scratch s = scratch(workspace, dz.cols, rows, accumulate, block);
        if (accumulate) {  // accumulate in C, as 1D at G ranks does: the same sums
            layout_.to_columns(dh, s.out, s.in_room, ExchangePurpose::backward, block);
            layout_.to_columns(dz, s.in, s.own_staging, ExchangePurpose::backward, block);
        } else {
            layout_.to_columns(dz, s.in, s.out_room, ExchangePurpose::backward, block);
        }
        ExchangeCall slice = call;
        slice.first_column = call.first_column + layout_.columns(dz.cols, block).first;
        part_.backward(s.in, s.out, {0, layout_.part_rows()}, beta, s.exchange, slice);
        layout_.to_rows(s.out, dh, s.in_room, ExchangePurpose::backward, block);
    }
}

}  // namespace strata
