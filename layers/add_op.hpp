// AddOp: y = a·x0 + b·x1 (a residual connection; a = b = 1 by default). In place over x0;
// backward passes a·dy and b·dy.
#pragma once

#include "src/nn/op.hpp"

namespace strata {

class AddOp final : public Op {
public:
    explicit AddOp(float a = 1.0f, float b = 1.0f) : a_(a), b_(b) {}

    [[nodiscard]] OpKind kind() const override { return OpKind::pointwise; }
    /// "add", or "add 0.5·x0 + 1·x1" with coefficients.
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int num_inputs() const override { return 2; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override;
    [[nodiscard]] Saves saves() const override { return {}; }
    [[nodiscard]] bool in_place() const override { return true; }
    /// y[rows] = a x0[rows] + b x1[rows].
    void forward(const OpContext& context, const ForwardArgs& args) override;
    /// dx0[rows] (=|+=) a dy[rows];  dx1[rows] (=|+=) b dy[rows].
    void backward(const OpContext& context, const BackwardArgs& args) override;

private:
    float a_;
    float b_;
};

}  // namespace strata
