// ColumnScaleOp: a learnable per-column scale, y = x ⊙ s with s = 1 + t (t: 1 x cols, zero at
// start, so the op starts as the identity; weight decay on t pulls s towards 1).
// An op written outside the Strata tree: plain host loops, so it runs on the CPU backend only
// (the Backend has no elementwise product; an in-tree op would add one, README "Adding a layer").
#pragma once

#include "src/nn/op.hpp"

namespace example {

class ColumnScaleOp final : public strata::Op {
public:
    ColumnScaleOp(strata::index_t cols, float weight_decay);

    [[nodiscard]] strata::OpKind kind() const override { return strata::OpKind::pointwise; }
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int num_inputs() const override { return 1; }
    [[nodiscard]] strata::index_t output_cols(
        std::span<const strata::index_t> input_cols) const override;
    /// One parameter: "shift" t, 1 x cols, zeros.
    [[nodiscard]] std::vector<strata::ParameterSpec> parameter_specs(
        std::span<const strata::index_t> input_cols) const override;
    void bind_parameters(std::span<const strata::Parameter> parameters) override;
    /// Backward reads x (dt = Σ_rows x ⊙ dy). Not in place: y must not overwrite x.
    [[nodiscard]] strata::Saves saves() const override { return {{0}, false}; }
    /// y[rows] = x[rows] ⊙ (1 + t).
    void forward(const strata::OpContext& context, const strata::ForwardArgs& args) override;
    /// dt += Σ_{i in rows} x[i] ⊙ dy[i];  dx[rows] (=|+=) dy[rows] ⊙ (1 + t).
    void backward(const strata::OpContext& context, const strata::BackwardArgs& args) override;

private:
    strata::index_t cols_;
    float weight_decay_;
    strata::Parameter shift_;
};

}  // namespace example
