// Early stopping: both read FitState::history (this epoch's evaluation is its last entry).
#include "training/early_stopping.hpp"

#include <cstddef>

namespace strata {

void WindowEarlyStop::end_epoch(const EpochStats& stats, FitState& state) {
    const auto n = static_cast<std::size_t>(window_);
    if (!stats.evaluated || window_ <= 0 || state.history.size() < n + 1) {
        return;
    }
    double mean = 0.0;
    for (std::size_t i = state.history.size() - 1 - n; i + 1 < state.history.size(); ++i) {
        mean += state.history[i].val_loss;
    }
    mean /= static_cast<double>(n);
    if (stats.val_loss > mean) {
        state.early_stopped = true;
        state.stop_reason = "early stop at epoch " + std::to_string(stats.epoch);
    }
}

void PatienceStop::end_epoch(const EpochStats& stats, FitState& state) {
    if (!stats.evaluated || patience_ <= 0 || !state.best) {
        return;
    }
    int since = 0;
    for (const EvalRecord& r : state.history) {
        since += r.epoch > state.best->epoch ? 1 : 0;
    }
    if (since >= patience_) {
        state.early_stopped = true;
        state.stop_reason = "early stop at epoch " + std::to_string(stats.epoch) + ": no better " +
                            "validation result for " + std::to_string(patience_) +
                            " evaluations (best epoch " + std::to_string(state.best->epoch) + ")";
    }
}

}  // namespace strata
