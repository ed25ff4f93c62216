// BestTracker: a device-to-device copy on improvement.
#include "training/best_tracker.hpp"

#include "src/base/error.hpp"

namespace strata {

BestTracker::BestTracker(Backend& backend, ModelParameters& parameters, Selection selection)
    : backend_(backend),
      parameters_(parameters),
      selection_(selection),
      best_(backend, parameters.size()) {
    if (best_.size() > 0) {
        backend_.copy(best_.data(), parameters_.values().data(), best_.size() * sizeof(float));
    }
}

void BestTracker::end_epoch(const EpochStats& stats, FitState& state) {
    if (!stats.evaluated || !stats.guard.empty() ||
        (state.best && !better(selection_, stats, *state.best))) {
        return;
    }
    state.best = stats;
    if (best_.size() > 0) {
        backend_.copy(best_.data(), parameters_.values().data(), best_.size() * sizeof(float));
    }
}

std::vector<float> BestTracker::download() const {
    return best_.download();
}

void BestTracker::upload(std::span<const float> host) {
    STRATA_CHECK(host.size() == best_.size(), "best weights: ", host.size(), " values for ",
                 best_.size(), " parameters");
    if (!host.empty()) {
        backend_.upload(best_.data(), host.data(), host.size() * sizeof(float));
    }
}

}  // namespace strata
