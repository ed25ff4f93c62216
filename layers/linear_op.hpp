// LinearOp: y = x W (no bias: a bias belongs to the BiasActivationOp that follows).
#pragma once

#include "src/nn/op.hpp"

namespace strata {

class LinearOp final : public Op {
public:
    /// W: in x out, Glorot-uniform, L2 coefficient `weight_decay`.
    LinearOp(index_t in, index_t out, float weight_decay);

    [[nodiscard]] OpKind kind() const override { return OpKind::linear; }
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int num_inputs() const override { return 1; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override;
    [[nodiscard]] std::vector<ParameterSpec> parameter_specs(
        std::span<const index_t> input_cols) const override;
    void bind_parameters(std::span<const Parameter> parameters) override;
    /// Backward reads x (dW = xᵀ dy).
    [[nodiscard]] Saves saves() const override { return {{0}, false}; }
    /// y[rows] = x[rows] W.
    void forward(const OpContext& context, const ForwardArgs& args) override;
    /// dW += x[rows]ᵀ dy[rows];  dx[rows] (=|+=) dy[rows] Wᵀ.
    void backward(const OpContext& context, const BackwardArgs& args) override;

    [[nodiscard]] index_t in() const { return in_; }
    [[nodiscard]] index_t out() const { return out_; }
    [[nodiscard]] float weight_decay() const { return weight_decay_; }

private:
    index_t in_;
    index_t out_;
    float weight_decay_;
    Parameter weight_;
};

}  // namespace strata
