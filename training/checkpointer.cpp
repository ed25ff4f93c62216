// Checkpointer: snapshot on rank 0.
#include "training/checkpointer.hpp"

namespace strata {

Checkpointer::Checkpointer(CheckpointDir dir, int every, bool root, Checkpoint base,
                           ModelParameters& parameters, Optimizer& optimizer,
                           const BestTracker& best)
    : dir_(std::move(dir)),
      every_(every),
      root_(root),
      state_(std::move(base)),
      parameters_(parameters),
      optimizer_(optimizer),
      best_(best) {}

void Checkpointer::end_epoch(const EpochStats& stats, FitState& state) {
    const bool due =
        (every_ > 0 && stats.epoch % every_ == 0) || state.last_epoch() || state.stopping();
    if (!root_ || !due) {
        return;
    }
    state_.epoch = state.epoch;
    state_.early_stopped = state.early_stopped;
    state_.params = parameters_.download();
    state_.optimizer_state = optimizer_.state();
    state_.selection = best_.selection();
    state_.best_params = best_.download();
    state_.best = state.best;
    state_.history = state.history;
    dir_.save(state_);
}

void restore(const Checkpoint& checkpoint, ModelParameters& parameters, Optimizer& optimizer,
             BestTracker& best, FitState& state) {
    parameters.upload(checkpoint.params);
    optimizer.set_state(checkpoint.optimizer_state);
    best.upload(checkpoint.best_params);
    state.epoch = checkpoint.epoch;
    state.best = checkpoint.best;
    state.history = checkpoint.history;
    state.early_stopped = checkpoint.early_stopped;
}

}  // namespace strata
