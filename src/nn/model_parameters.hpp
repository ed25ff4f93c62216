// ModelParameters: ONE flat parameter buffer and ONE flat gradient buffer for every op of a
// ModelGraph (llm.c style), so the gradient sync is an all-reduce per node range and the
// optimizer a kernel per tensor; ops get views bound at construction.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/nn/model_graph.hpp"

namespace strata {

class ModelParameters {
public:
    /// Allocates both buffers, initialises the values from `seed` (one seeded stream per tensor,
    /// in node order: the same seed gives the same values on every rank, so replicas start
    /// identical without a broadcast), zeroes the gradients and binds every op's views.
    ModelParameters(Backend& backend, ModelGraph& graph, std::uint64_t seed);
    /// Floats of every parameter of `graph` (what the constructor allocates twice: values and
    /// gradients), without allocating.
    [[nodiscard]] static std::size_t count(const ModelGraph& graph);

    [[nodiscard]] std::span<const Parameter> all() const { return parameters_; }
    [[nodiscard]] std::size_t size() const { return values_.size(); }
    /// Flat buffers (backend memory).
    std::span<float> values() { return values_.span(); }
    std::span<float> grads() { return grads_.span(); }
    /// Gradient range of node n (empty when it has no parameters).
    [[nodiscard]] std::span<float> node_grads(int n);
    void zero_grads();
    /// Host copies (checkpoints, tests) and the inverse.
    [[nodiscard]] std::vector<float> download() const { return values_.download(); }
    [[nodiscard]] std::vector<float> download_grads() const { return grads_.download(); }
    void upload(std::span<const float> host);
    /// "gcn0.linear.weight 1433x16, gcn0.act.bias 1x16, ..." — names and shapes.
    [[nodiscard]] std::string summary() const;

private:
    Backend& backend_;
    Buffer<float> values_;
    Buffer<float> grads_;
    std::vector<Parameter> parameters_;
    std::vector<std::pair<std::size_t, std::size_t>> node_ranges_;  ///< [offset, count) per node
};

}  // namespace strata
