// Model: flat buffers, Glorot initialization, forward/backward over the layer sequence.
#include "src/nn/model.hpp"

#include <cmath>
#include <random>

#include "src/base/error.hpp"

namespace strata {

void Model::add(std::unique_ptr<Layer> layer) {
    STRATA_CHECK(params_.size() == 0 && outputs_.empty(), "Model::add after allocate");
    layers_.push_back(std::move(layer));
}

index_t Model::output_cols() const {
    STRATA_CHECK(!outputs_.empty(), "Model::output_cols before allocate");
    return outputs_.back().cols();
}

void Model::allocate(index_t rows, index_t input_cols, std::uint64_t seed) {
    STRATA_CHECK(!layers_.empty(), "Model::allocate: the model has no layers");
    // Shapes and parameter specs, layer by layer.
    std::vector<std::vector<ParameterSpec>> specs;
    std::size_t total = 0;
    index_t cols = input_cols;
    for (auto& layer : layers_) {
        specs.push_back(layer->parameter_specs(cols));
        const std::size_t offset = total;
        for (const auto& spec : specs.back()) {
            total += static_cast<std::size_t>(spec.rows) * static_cast<std::size_t>(spec.cols);
        }
        layer_ranges_.emplace_back(offset, total - offset);
        cols = layer->output_cols(cols);
        outputs_.emplace_back(backend_, rows, cols);
    }
    params_ = Buffer<float>(backend_, total);
    grads_ = Buffer<float>(backend_, total);
    cols = input_cols;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        if (i > 0) {
            d_inputs_.emplace_back(backend_, rows, cols);
        } else {
            d_inputs_.emplace_back();  // no gradient w.r.t. the input features
        }
        cols = layers_[i]->output_cols(cols);
    }

    // Initialize on the host with one seeded stream per parameter tensor, then upload.
    std::vector<float> host(total, 0.0f);
    std::size_t offset = 0;
    std::size_t tensor_index = 0;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        std::vector<Parameter> bound;
        for (const auto& spec : specs[i]) {
            const std::size_t count =
                static_cast<std::size_t>(spec.rows) * static_cast<std::size_t>(spec.cols);
            if (spec.init == Init::glorot_uniform) {
                std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + tensor_index);
                const double limit = std::sqrt(6.0 / static_cast<double>(spec.rows + spec.cols));
                std::uniform_real_distribution<double> uniform(-limit, limit);
                for (std::size_t k = 0; k < count; ++k) {
                    host[offset + k] = static_cast<float>(uniform(rng));
                }
            }
            bound.push_back({layers_[i]->name() + "." + spec.name,
                             {params_.data() + offset, spec.rows, spec.cols},
                             {grads_.data() + offset, spec.rows, spec.cols},
                             spec.weight_decay});
            offset += count;
            ++tensor_index;
        }
        layers_[i]->bind_parameters(bound);
        parameters_.insert(parameters_.end(), bound.begin(), bound.end());
    }
    upload_params(host);
    zero_grads();
}

void Model::upload_params(std::span<const float> host) {
    STRATA_CHECK(host.size() == params_.size(), "Model::upload_params: ", host.size(),
                 " values for ", params_.size(), " parameters");
    if (!host.empty()) {
        backend_.upload(params_.data(), host.data(), host.size() * sizeof(float));
    }
}

const DenseMatrix& Model::forward(const DenseMatrix& x, const LayerContext& context) {
    const DenseMatrix* input = &x;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        layers_[i]->forward(*input, outputs_[i], context);
        input = &outputs_[i];
    }
    return outputs_.back();
}

void Model::backward(const DenseMatrix& dlogits,
                     const std::function<void(std::size_t)>& on_layer_grads) {
    const DenseMatrix* dy = &dlogits;
    for (std::size_t i = layers_.size(); i-- > 0;) {
        DenseMatrix* dx = i > 0 ? &d_inputs_[i] : nullptr;
        layers_[i]->backward(*dy, dx);
        if (on_layer_grads && layer_ranges_[i].second > 0) {
            on_layer_grads(i);
        }
        dy = dx;
    }
}

void Model::zero_grads() {
    if (grads_.size() > 0) {
        backend_.fill({grads_.data(), 1, static_cast<index_t>(grads_.size())}, 0.0f);
    }
}

std::span<float> Model::layer_grads(std::size_t i) {
    return grads_.span().subspan(layer_ranges_[i].first, layer_ranges_[i].second);
}

}  // namespace strata
