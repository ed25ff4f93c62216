// ModelBuilder: the few calls every model of the zoo is assembled from, over a ModelGraph.
// Each dropout site gets its own mask stream (dropout id), numbered in build order.
#pragma once

#include <cstdint>
#include <string>

#include "layers/bias_activation_op.hpp"
#include "src/nn/model_graph.hpp"

namespace strata {

class ModelBuilder {
public:
    explicit ModelBuilder(std::uint64_t seed) : seed_(seed) {}

    ModelGraph& graph() { return graph_; }
    TensorId input(index_t cols) { return graph_.add_input("features", cols); }
    /// y = dropout(x) (no node when rate is 0).
    TensorId dropout(const std::string& name, TensorId x, float rate);
    /// y = x W (no bias).
    TensorId linear(const std::string& name, TensorId x, index_t out, float weight_decay);
    /// y = Â x with the model's normalization.
    TensorId aggregate(const std::string& name, TensorId x);
    /// y = dropout(act(x + b)), in place; `options.seed` and the dropout id are filled in.
    TensorId act(const std::string& name, TensorId x, BiasActivationOptions options);
    /// y = a x0 + b x1.
    TensorId add(const std::string& name, TensorId x0, TensorId x1, float a = 1.0f, float b = 1.0f);
    [[nodiscard]] index_t cols(TensorId t) const { return graph_.tensor(t).cols; }

private:
    ModelGraph graph_;
    std::uint64_t seed_ = 0;
    std::uint64_t next_dropout_ = 0;
};

}  // namespace strata
