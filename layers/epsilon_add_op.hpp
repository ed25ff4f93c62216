// EpsilonAddOp: y = (1 + ε)·x0 + x1 with a learnable scalar ε (GIN: x0 the vertex's own
// features, x1 the neighbour sum). Parameter "eps" 1 x 1, initialised to 0, no weight decay.
// In place over x0 when the plan allows (backward keeps x0 for dε, so only when x0 is
// recomputed).
#pragma once

#include "src/nn/op.hpp"

namespace strata {

class EpsilonAddOp final : public Op {
public:
    [[nodiscard]] OpKind kind() const override { return OpKind::pointwise; }
    [[nodiscard]] std::string describe() const override { return "(1+eps)·x0 + x1"; }
    [[nodiscard]] int num_inputs() const override { return 2; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override;
    /// eps 1 x 1 (zeros), no decay.
    [[nodiscard]] std::vector<ParameterSpec> parameter_specs(
        std::span<const index_t> input_cols) const override;
    void bind_parameters(std::span<const Parameter> parameters) override;
    /// Backward reads x0 (dε = Σ dy ⊙ x0).
    [[nodiscard]] Saves saves() const override { return {{0}, false}; }
    [[nodiscard]] bool in_place() const override { return true; }
    /// y[rows] = (1 + ε) x0[rows] + x1[rows] (ε read on the device).
    void forward(const OpContext& context, const ForwardArgs& args) override;
    /// dε += Σ_rows dy ⊙ x0 (this rank's rows; the executor sums over ranks);
    /// dx0 (=|+=) (1 + ε) dy;  dx1 (=|+=) dy.
    void backward(const OpContext& context, const BackwardArgs& args) override;

private:
    Parameter eps_;
};

}  // namespace strata
