// Model: a sequence of layers with ONE flat parameter buffer and ONE flat gradient buffer,
// activations allocated once (plan once, execute many).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/nn/layer.hpp"

namespace strata {

class Model {
public:
    explicit Model(Backend& backend) : backend_(backend) {}

    void add(std::unique_ptr<Layer> layer);
    /// Allocates activations for `rows` x `input_cols` inputs, the parameter and gradient
    /// buffers, and initializes the parameters from `seed` (same seed ⇒ same values on every
    /// rank, so replicas start identical without a broadcast).
    void allocate(index_t rows, index_t input_cols, std::uint64_t seed);

    /// The output of the last layer (rows x output_cols). `x` must outlive backward().
    const DenseMatrix& forward(const DenseMatrix& x, const LayerContext& context);
    /// Backpropagates `dlogits`. After layer i's parameter gradients are complete,
    /// `on_layer_grads(i)` is called (so their all-reduce can overlap layer i-1's backward).
    void backward(const DenseMatrix& dlogits,
                  const std::function<void(std::size_t)>& on_layer_grads);
    void zero_grads();

    [[nodiscard]] std::size_t num_layers() const { return layers_.size(); }
    [[nodiscard]] const Layer& layer(std::size_t i) const { return *layers_[i]; }
    /// Output of layer i from the last forward() (rows x that layer's output columns), i.e.
    /// the input of layer i+1 (node embeddings for `strata predict --embeddings`).
    [[nodiscard]] const DenseMatrix& layer_output(std::size_t i) const { return outputs_.at(i); }
    [[nodiscard]] index_t output_cols() const;
    /// Flat buffers (backend memory).
    std::span<float> params() { return params_.span(); }
    std::span<float> grads() { return grads_.span(); }
    /// Parameter and gradient range of layer i within the flat buffers.
    [[nodiscard]] std::span<float> layer_grads(std::size_t i);
    [[nodiscard]] std::span<const Parameter> parameters() const { return parameters_; }
    /// Host copies of all parameters (for checkpoints and tests) and the inverse.
    [[nodiscard]] std::vector<float> download_params() const { return params_.download(); }
    void upload_params(std::span<const float> host);

private:
    Backend& backend_;
    std::vector<std::unique_ptr<Layer>> layers_;
    std::vector<DenseMatrix> outputs_;  ///< outputs_[i] = output of layer i
    std::vector<DenseMatrix>
        d_inputs_;  ///< d_inputs_[i] = gradient w.r.t. input of layer i (i ≥ 1)
    Buffer<float> params_;
    Buffer<float> grads_;
    std::vector<Parameter> parameters_;
    std::vector<std::pair<std::size_t, std::size_t>> layer_ranges_;  ///< [offset, count) per layer
};

}  // namespace strata
