// ReLU and dropout layers: thin wrappers over backend ops.
#include "layers/activation_layers.hpp"

#include "src/base/error.hpp"

namespace strata {

void ReluLayer::do_forward(const DenseMatrix& x, DenseMatrix& y, const LayerContext& /*context*/) {
    backend_.relu(x.view(), y.view());
    y_ = &y;
}

void ReluLayer::do_backward(const DenseMatrix& dy, DenseMatrix* dx) {
    if (dx != nullptr) {
        backend_.relu_backward(y_->view(), dy.view(), dx->view());
    }
}

DropoutLayer::DropoutLayer(const GraphBlocks& blocks, float rate, std::uint64_t seed,
                           std::uint64_t layer_id)
    : blocks_(blocks), key_{.seed = seed, .epoch = 0, .layer = layer_id, .rate = rate} {
    STRATA_CHECK(rate >= 0.0f && rate < 1.0f, "dropout rate must be in [0, 1), got ", rate);
}

void DropoutLayer::do_forward(const DenseMatrix& x, DenseMatrix& y, const LayerContext& context) {
    active_ = context.training && key_.rate > 0.0f;
    Backend& backend = blocks_.backend();
    if (active_) {
        key_.epoch = context.epoch;
        backend.dropout(x.view(), y.view(), key_, blocks_.row_ids());
    } else {
        backend.copy(y.data(), x.data(), x.view().size() * sizeof(float));
    }
}

void DropoutLayer::do_backward(const DenseMatrix& dy, DenseMatrix* dx) {
    if (dx == nullptr) {
        return;
    }
    Backend& backend = blocks_.backend();
    if (active_) {
        backend.dropout(dy.view(), dx->view(), key_, blocks_.row_ids());
    } else {
        backend.copy(dx->data(), dy.data(), dy.view().size() * sizeof(float));
    }
}

}  // namespace strata
