// Adam: one backend kernel per trainable parameter tensor (each has its own weight-decay
// coefficient); non-trainable tensors keep their slots in the moments but are never updated.
#include <cmath>

#include "src/base/error.hpp"
#include "src/nn/optimizer.hpp"

namespace strata {

Adam::Adam(Backend& backend, std::size_t num_params, const AdamOptions& options)
    : backend_(backend), options_(options), m_(backend, num_params), v_(backend, num_params) {
    if (num_params > 0) {
        const auto n = static_cast<index_t>(num_params);
        backend_.fill({m_.data(), 1, n}, 0.0f);
        backend_.fill({v_.data(), 1, n}, 0.0f);
    }
}

void Adam::step(std::span<const Parameter> parameters) {
    ++steps_;
    std::size_t offset = 0;
    for (const auto& p : parameters) {
        const std::size_t n = p.value.size();
        STRATA_CHECK(offset + n <= m_.size(), "Adam: parameters exceed the optimizer state");
        if (!p.trainable) {  // state the op maintains itself (e.g. running statistics)
            offset += n;
            continue;
        }
        AdamStep step{.lr = options_.lr,
                      .beta1 = options_.beta1,
                      .beta2 = options_.beta2,
                      .eps = options_.eps,
                      .weight_decay = p.weight_decay,
                      .decoupled = options_.decoupled,
                      .step = steps_};
        backend_.adam({p.value.data, n}, {p.grad.data, n}, m_.span().subspan(offset, n),
                      v_.span().subspan(offset, n), step);
        offset += n;
    }
}

std::vector<float> Adam::step_scale(std::span<const float> grads) const {
    STRATA_CHECK(grads.size() == v_.size(), "Adam: ", grads.size(), " gradient values for ",
                 v_.size(), " parameters");
    const std::vector<float> v = v_.download();
    const double beta2 = options_.beta2;
    const double correction = 1.0 - std::pow(beta2, static_cast<double>(steps_ + 1));
    std::vector<float> scale(grads.size());
    for (std::size_t i = 0; i < grads.size(); ++i) {
        const double g = grads[i];
        const double moment = (beta2 * v[i] + (1.0 - beta2) * g * g) / correction;
        scale[i] = static_cast<float>(1.0 / (std::sqrt(moment) + options_.eps));
    }
    return scale;
}

std::vector<float> Adam::state() const {
    std::vector<float> out = m_.download();
    const std::vector<float> v = v_.download();
    out.insert(out.end(), v.begin(), v.end());
    out.push_back(static_cast<float>(steps_));  // exact for < 2^24 steps
    return out;
}

void Adam::set_state(std::span<const float> state) {
    STRATA_CHECK(state.size() == 2 * m_.size() + 1, "Adam: optimizer state has ", state.size(),
                 " values, expected ", 2 * m_.size() + 1);
    if (m_.size() > 0) {
        backend_.upload(m_.data(), state.data(), m_.size() * sizeof(float));
        backend_.upload(v_.data(), state.data() + m_.size(), v_.size() * sizeof(float));
    }
    steps_ = static_cast<std::int64_t>(state.back());
}

}  // namespace strata
