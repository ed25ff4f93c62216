// BiasActivationOp: the fused elementwise tail of a layer, y = dropout(act(x + b)), in place.
// With relu, backward needs only y (y > 0 says kept and positive): no mask is stored, and the
// dropout mask is a counter-based hash of (seed, epoch, layer, vertex id, column) anyway.
#pragma once

#include <cstdint>
#include <optional>

#include "src/nn/op.hpp"

namespace strata {

struct BiasActivationOptions {
    bool bias = false;
    Activation activation = Activation::none;
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
    /// relu reads y in backward; otherwise nothing (a mask is regenerated).
    [[nodiscard]] Saves saves() const override;
    [[nodiscard]] bool in_place() const override { return true; }
    /// A dropout with neither bias nor activation.
    [[nodiscard]] bool identity_in_evaluation() const override {
        return !options_.bias && options_.activation == Activation::none;
    }
    /// A pre-activation gradient buffer when the bias gradient cannot be summed from dx.
    [[nodiscard]] std::size_t backward_workspace(const WorkspaceQuery& query) const override;
    void forward(const OpContext& context, const ForwardArgs& args) override;
    void backward(const OpContext& context, const BackwardArgs& args) override;

private:
    [[nodiscard]] DropoutKey key(const OpContext& context) const;

    index_t cols_;
    BiasActivationOptions options_;
    std::optional<Parameter> bias_;
};

}  // namespace strata
