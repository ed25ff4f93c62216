// Optimizer interface and Adam (Kingma & Ba 2015) over the model's parameter tensors.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/nn/parameter.hpp"

namespace strata {

class Optimizer {
public:
    virtual ~Optimizer() = default;
    /// Updates every parameter from its gradient (both in backend memory).
    virtual void step(std::span<const Parameter> parameters) = 0;
    /// Optimizer state as host floats (for checkpoints) and back.
    [[nodiscard]] virtual std::vector<float> state() const = 0;
    virtual void set_state(std::span<const float> state) = 0;
    /// Per coordinate, the factor by which the next step() would scale a gradient `grads`
    /// (host floats, one per parameter value) into the update, the learning rate aside: how the
    /// optimizer sees an error in that gradient (the accuracy guard's staleness gap). Plain
    /// gradient descent, the default: 1 everywhere. Changes nothing.
    [[nodiscard]] virtual std::vector<float> step_scale(std::span<const float> grads) const {
        return std::vector<float>(grads.size(), 1.0f);
    }
};

struct AdamOptions {
    float lr = 0.01f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    /// false: L2 regularization added to the gradient (g += wd·p), the Kipf & Welling recipe
    /// with each parameter's own coefficient (ParameterSpec::weight_decay);
    /// true: decoupled weight decay (AdamW).
    bool decoupled = false;
};

/// Adam with per-parameter weight decay; moments live in one flat buffer pair.
class Adam final : public Optimizer {
public:
    Adam(Backend& backend, std::size_t num_params, const AdamOptions& options);
    void step(std::span<const Parameter> parameters) override;
    [[nodiscard]] std::vector<float> state() const override;
    void set_state(std::span<const float> state) override;
    /// 1 / (sqrt(v̂) + eps), v̂ = (beta2 v + (1 - beta2) g²) / (1 - beta2^(t+1)): the second
    /// moment the next step would divide by (weight decay, which the step adds to g, aside).
    [[nodiscard]] std::vector<float> step_scale(std::span<const float> grads) const override;
    [[nodiscard]] std::int64_t steps() const { return steps_; }
    /// Bytes the constructor allocates for `num_params` parameters (the two moments).
    [[nodiscard]] static std::int64_t planned_bytes(std::size_t num_params) {
        return static_cast<std::int64_t>(2 * num_params * sizeof(float));
    }

private:
    Backend& backend_;
    AdamOptions options_;
    Buffer<float> m_;
    Buffer<float> v_;
    std::int64_t steps_ = 0;
};

}  // namespace strata
