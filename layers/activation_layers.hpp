// Parameter-free layers: ReLU and dropout (mask keyed by global vertex id, not by rank).
#pragma once

#include "layers/graph_blocks.hpp"
#include "src/nn/layer.hpp"

namespace strata {

/// y = max(x, 0).
class ReluLayer final : public Layer {
public:
    explicit ReluLayer(Backend& backend) : backend_(backend) {}
    [[nodiscard]] index_t output_cols(index_t input_cols) const override { return input_cols; }
    [[nodiscard]] std::string name() const override { return "relu"; }

private:
    void do_forward(const DenseMatrix& x, DenseMatrix& y, const LayerContext& context) override;
    void do_backward(const DenseMatrix& dy, DenseMatrix* dx) override;

    Backend& backend_;
    const DenseMatrix* y_ = nullptr;
};

/// Training: y = x ⊙ mask / (1 - rate), the mask a function of (seed, epoch, layer id, the
/// row's original vertex id, column). Evaluation: y = x.
class DropoutLayer final : public Layer {
public:
    DropoutLayer(const GraphBlocks& blocks, float rate, std::uint64_t seed, std::uint64_t layer_id);
    [[nodiscard]] index_t output_cols(index_t input_cols) const override { return input_cols; }
    [[nodiscard]] std::string name() const override { return "dropout"; }

private:
    void do_forward(const DenseMatrix& x, DenseMatrix& y, const LayerContext& context) override;
    void do_backward(const DenseMatrix& dy, DenseMatrix* dx) override;

    const GraphBlocks& blocks_;
    DropoutKey key_;
    bool active_ = false;
};

}  // namespace strata
