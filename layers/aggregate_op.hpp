// AggregateOp: y = Â x through the executor's GraphOperator (for a GCN layer Â is
// D^-1/2 (A + I) D^-1/2). Reads every row of x; no parameters; backward keeps nothing.
#pragma once

#include "src/nn/op.hpp"

namespace strata {

class AggregateOp final : public Op {
public:
    [[nodiscard]] OpKind kind() const override { return OpKind::aggregate; }
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int num_inputs() const override { return 1; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override {
        return input_cols[0];
    }
    [[nodiscard]] Saves saves() const override { return {}; }
    /// The exchange buffers at the width of query.input_cols[0] (x, or dy when folded).
    [[nodiscard]] std::size_t forward_workspace(const WorkspaceQuery& query) const override;
    [[nodiscard]] std::size_t backward_workspace(const WorkspaceQuery& query) const override;
    /// y[rows] = (Â x)[rows].
    void forward(const OpContext& context, const ForwardArgs& args) override;
    /// dx[rows] (=|+=) (Âᵀ dy)[rows].
    void backward(const OpContext& context, const BackwardArgs& args) override;
};

}  // namespace strata
