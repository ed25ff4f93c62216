// ModelParameters: layout, initialisation (zeros, ones, Glorot), binding.
#include "src/nn/model_parameters.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "src/base/error.hpp"

namespace strata {

std::size_t ModelParameters::count(const ModelGraph& graph) {
    std::size_t total = 0;
    for (int n = 0; n < graph.num_nodes(); ++n) {
        for (const auto& spec : graph.node(n).op->parameter_specs(graph.input_cols(n))) {
            total += static_cast<std::size_t>(spec.rows) * static_cast<std::size_t>(spec.cols);
        }
    }
    return total;
}

ModelParameters::ModelParameters(Backend& backend, ModelGraph& graph, std::uint64_t seed)
    : backend_(backend) {
    std::vector<std::vector<ParameterSpec>> specs;
    std::size_t total = 0;
    for (int n = 0; n < graph.num_nodes(); ++n) {
        specs.push_back(graph.node(n).op->parameter_specs(graph.input_cols(n)));
        const std::size_t offset = total;
        for (const auto& spec : specs.back()) {
            total += static_cast<std::size_t>(spec.rows) * static_cast<std::size_t>(spec.cols);
        }
        node_ranges_.emplace_back(offset, total - offset);
    }
    values_ = Buffer<float>(backend, total);
    grads_ = Buffer<float>(backend, total);

    // One seeded stream per parameter tensor, in node order (the same order, and so the same
    // values, as the layer chain this graph replaced).
    std::vector<float> host(total, 0.0f);
    std::size_t offset = 0;
    std::size_t tensor_index = 0;
    for (int n = 0; n < graph.num_nodes(); ++n) {
        std::vector<Parameter> bound;
        for (const auto& spec : specs[static_cast<std::size_t>(n)]) {
            const std::size_t count =
                static_cast<std::size_t>(spec.rows) * static_cast<std::size_t>(spec.cols);
            if (spec.init == Init::glorot_uniform) {
                std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + tensor_index);
                const double limit = std::sqrt(6.0 / static_cast<double>(spec.rows + spec.cols));
                std::uniform_real_distribution<double> uniform(-limit, limit);
                for (std::size_t k = 0; k < count; ++k) {
                    host[offset + k] = static_cast<float>(uniform(rng));
                }
            } else if (spec.init == Init::ones) {
                std::fill_n(host.begin() + static_cast<std::ptrdiff_t>(offset), count, 1.0f);
            }
            bound.push_back({graph.node(n).name + "." + spec.name,
                             {values_.data() + offset, spec.rows, spec.cols},
                             {grads_.data() + offset, spec.rows, spec.cols},
                             spec.weight_decay,
                             spec.trainable});
            offset += count;
            ++tensor_index;
        }
        graph.node(n).op->bind_parameters(bound);
        parameters_.insert(parameters_.end(), bound.begin(), bound.end());
    }
    upload(host);
    zero_grads();
}

std::span<float> ModelParameters::node_grads(int n) {
    const auto [offset, count] = node_ranges_.at(static_cast<std::size_t>(n));
    return grads_.span().subspan(offset, count);
}

void ModelParameters::zero_grads() {
    if (grads_.size() > 0) {
        backend_.fill({grads_.data(), 1, static_cast<index_t>(grads_.size())}, 0.0f);
    }
}

void ModelParameters::upload(std::span<const float> host) {
    STRATA_CHECK(host.size() == values_.size(), "ModelParameters::upload: ", host.size(),
                 " values for ", values_.size(), " parameters");
    if (!host.empty()) {
        backend_.upload(values_.data(), host.data(), host.size() * sizeof(float));
    }
}

std::string ModelParameters::summary() const {
    std::string out;
    for (const Parameter& p : parameters_) {
        if (!out.empty()) {
            out += ", ";
        }
        out += p.name + " " + std::to_string(p.value.rows) + "x" + std::to_string(p.value.cols);
    }
    return out;
}

}  // namespace strata
