// LayerNormOp: per row y = (x - μ)/sqrt(σ² + eps)·γ + β (biased variance), γ "weight" (ones)
// and β "bias" (zeros), no weight decay. Row-local, so it runs over any row chunk; backward
// keeps x and recomputes the row statistics (nothing is stored in the op).
#pragma once

#include "src/nn/op.hpp"

namespace strata {

class LayerNormOp final : public Op {
public:
    explicit LayerNormOp(index_t cols, float eps = 1e-5f);

    [[nodiscard]] OpKind kind() const override { return OpKind::pointwise; }
    /// "layer_norm 16".
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int num_inputs() const override { return 1; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override;
    /// weight 1 x cols (ones), bias 1 x cols (zeros), both without decay.
    [[nodiscard]] std::vector<ParameterSpec> parameter_specs(
        std::span<const index_t> input_cols) const override;
    void bind_parameters(std::span<const Parameter> parameters) override;
    /// Backward reads x.
    [[nodiscard]] Saves saves() const override { return {{0}, false}; }
    /// y[rows] = layer_norm(x[rows]).
    void forward(const OpContext& context, const ForwardArgs& args) override;
    /// dx[rows] (=|+=) ..., dγ += Σ dy x̂, dβ += Σ dy over rows.
    void backward(const OpContext& context, const BackwardArgs& args) override;

private:
    index_t cols_;
    float eps_;
    Parameter weight_;
    Parameter bias_;
};

}  // namespace strata
