// GcnLayer (Kipf & Welling 2017): y = Â x W + b, aggregating at the narrower of in/out width.
#pragma once

#include <optional>

#include "layers/pipelined_aggregation.hpp"
#include "src/nn/layer.hpp"

namespace strata {

class GcnLayer final : public Layer {
public:
    /// `weight_decay`: L2 coefficient of W (Kipf: 5e-4 on the first layer only).
    GcnLayer(const GraphBlocks& blocks, Communicator& comm, index_t in_features,
             index_t out_features, float weight_decay = 0.0f, bool bias = true);

    [[nodiscard]] index_t output_cols(index_t input_cols) const override;
    [[nodiscard]] std::vector<ParameterSpec> parameter_specs(index_t input_cols) const override;
    void bind_parameters(std::span<const Parameter> parameters) override;
    [[nodiscard]] std::string name() const override { return "gcn"; }
    /// True when the layer transforms first and exchanges out_features columns.
    [[nodiscard]] bool transform_first() const { return out_ < in_; }

private:
    void do_forward(const DenseMatrix& x, DenseMatrix& y, const LayerContext& context) override;
    void do_backward(const DenseMatrix& dy, DenseMatrix* dx) override;

    Backend& backend_;
    index_t in_;
    index_t out_;
    float weight_decay_;
    bool bias_;
    PipelinedAggregation aggregation_;
    DenseMatrix mid_;    ///< transform first: t = x W; else z = Â x   (kept for backward)
    DenseMatrix d_mid_;  ///< gradient of mid_
    Parameter weight_;
    std::optional<Parameter> bias_param_;
    const DenseMatrix* x_ = nullptr;
};

}  // namespace strata
