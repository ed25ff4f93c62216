// BestTracker: keeps the weights of the best evaluated epoch (by --select-by) in backend memory,
// so checkpoints and `strata predict` serve the model whose accuracy was reported.
#pragma once

#include <span>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/nn/model_parameters.hpp"
#include "training/fit.hpp"

namespace strata {

class BestTracker final : public FitHook {
public:
    /// Allocates one copy of the parameters.
    BestTracker(Backend& backend, ModelParameters& parameters, Selection selection);

    /// On a better evaluated epoch: state.best = stats and the weights are copied. An epoch
    /// after which an accuracy guard rolled back (stats.guard set) is never best: its weights
    /// were discarded (the guard put the tracker back as of the epoch it restored).
    void end_epoch(const EpochStats& stats, FitState& state) override;

    [[nodiscard]] Selection selection() const { return selection_; }
    /// Host copy of the best weights (the current weights before any evaluation).
    [[nodiscard]] std::vector<float> download() const;
    /// Restores best weights saved in a checkpoint (or by an accuracy guard).
    void upload(std::span<const float> host);
    /// Bytes allocated (planned: one parameter copy).
    [[nodiscard]] static std::int64_t planned_bytes(std::size_t num_parameters) {
        return static_cast<std::int64_t>(num_parameters * sizeof(float));
    }

private:
    Backend& backend_;
    ModelParameters& parameters_;
    Selection selection_;
    Buffer<float> best_;
};

}  // namespace strata
