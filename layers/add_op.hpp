// AddOp: y = x0 + x1 (a residual connection). In place over x0; backward passes dy to both.
#pragma once

#include "src/nn/op.hpp"

namespace strata {

class AddOp final : public Op {
public:
    [[nodiscard]] OpKind kind() const override { return OpKind::pointwise; }
    [[nodiscard]] std::string describe() const override { return "add"; }
    [[nodiscard]] int num_inputs() const override { return 2; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override;
    [[nodiscard]] Saves saves() const override { return {}; }
    [[nodiscard]] bool in_place() const override { return true; }
    /// y[rows] = x0[rows] + x1[rows].
    void forward(const OpContext& context, const ForwardArgs& args) override;
    /// dx_i[rows] (=|+=) dy[rows].
    void backward(const OpContext& context, const BackwardArgs& args) override;
};

}  // namespace strata
