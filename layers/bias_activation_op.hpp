// BiasActivationOp: the fused elementwise tail of a layer, y = dropout(act(x + b)), in place
// except with GELU. Backward reads y for relu (y > 0 says kept and positive), elu and
// leaky_relu (the mask regenerated, the derivative from the pre-dropout value y·(1-rate)); x for
// gelu (not invertible from y); nothing otherwise. No mask is stored: it is a counter-based hash
// of (seed, epoch, layer, vertex id, column).
#pragma once

#include <cstdint>
#include <optional>

#include "src/nn/op.hpp"

namespace strata {

struct BiasActivationOptions {
    bool bias = false;
    Activation activation = Activation::none;
    float negative_slope = 0.2f;   ///< leaky_relu only (>= 0)
    float dropout = 0.0f;          ///< rate; 0 = none
    std::uint64_t seed = 0;        ///< dropout stream
    std::uint64_t dropout_id = 0;  ///< the `layer` of the dropout key
};

class BiasActivationOp final : public Op {
public:
    BiasActivationOp(index_t cols, const BiasActivationOptions& options);

    [[nodiscard]] OpKind kind() const override { return OpKind::pointwise; }
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int num_inputs() const override { return 1; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override;
    [[nodiscard]] std::vector<ParameterSpec> parameter_specs(
        std::span<const index_t> input_cols) const override;
    void bind_parameters(std::span<const Parameter> parameters) override;
    /// relu, elu, leaky_relu read y in backward; gelu reads x; none reads nothing.
    [[nodiscard]] Saves saves() const override;
    /// Not with gelu (its backward reads x).
    [[nodiscard]] bool in_place() const override { return options_.activation != Activation::gelu; }
    /// A dropout with neither bias nor activation.
    [[nodiscard]] bool identity_in_evaluation() const override {
        return !options_.bias && options_.activation == Activation::none;
    }
    /// A pre-activation gradient buffer when the bias gradient cannot be summed from dx.
    [[nodiscard]] std::size_t backward_workspace(const WorkspaceQuery& query) const override;
    void forward(const OpContext& context, const ForwardArgs& args) override;
    void backward(const OpContext& context, const BackwardArgs& args) override;

    [[nodiscard]] const BiasActivationOptions& options() const { return options_; }

private:
    [[nodiscard]] DropoutKey key(const OpContext& context) const;
    [[nodiscard]] ActivationSpec spec() const {
        return {options_.activation, options_.negative_slope};
    }

    index_t cols_;
    BiasActivationOptions options_;
    std::optional<Parameter> bias_;
};

}  // namespace strata
