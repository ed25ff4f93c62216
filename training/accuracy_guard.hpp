// AccuracyGuard: the layer pipeline's answer to GNNPipe's silent accuracy loss. Every exact
// evaluation (full graph, no staleness) is compared with the run's own best, by the run's
// select-by criterion (validation accuracy, loss or ROC-AUC); when staleness hurts, the guard
// restores the last good weights and optimizer state — and the best-weights tracker's state as
// of that epoch, so that the best epoch reported and served is never one the rollback
// discarded — and continues with less staleness: half the chunks in flight, half the snapshot
// period; after `max_triggers` triggers it runs exact (one chunk per way). Triggers:
//   - a non-finite training loss (so the guard, not fit, handles NaN/Inf);
//   - the select-by figure worse than its best by more than `drop` at `patience` evaluations in
//     a row spanning at least `window` epochs (so the noise of early epochs evaluated every
//     epoch does not trigger it; at GNNPipe's cadence of one evaluation per 50 epochs it is
//     simply two evaluations in a row);
//   - the exact training loss (evaluation, no dropout) above `loss_factor` x its minimum.
// Every action is printed and recorded in the epoch's metrics (EpochStats::guard). Once the
// executor is exact (min_chunks() chunks) there is no staleness left to turn down: the guard
// stands aside and a non-finite loss ends the run as without it ("training diverged").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/nn/model_parameters.hpp"
#include "src/nn/optimizer.hpp"
#include "src/nn/pipeline_executor.hpp"
#include "training/best_tracker.hpp"
#include "training/fit.hpp"
#include "training/guard_state.hpp"

namespace strata {

struct GuardOptions {
    /// The figure judged: the run's select_by (the best tracker's selection when there is one).
    Selection select_by = Selection::val_acc;
    /// How much worse than its best the figure may get: accuracy or ROC-AUC points as a
    /// fraction (0.02: two points) below it, or validation loss above it.
    double drop = 0.02;
    int patience = 2;          ///< evaluations in a row that much worse ...
    int window = 10;           ///< ... spanning at least this many epochs
    double loss_factor = 1.5;  ///< exact training loss above this x its minimum
    int max_triggers = 3;      ///< then exact execution
};

class AccuracyGuard final : public EpochGuard {
public:
    /// Takes the current weights and optimizer state as the first good ones. `best`: the run's
    /// best-weights tracker (null: none), rewound on a rollback; its selection must be
    /// options.select_by. `say` prints a line (rank 0's report). Everything must outlive the
    /// guard. Throws strata::Error if the tracker selects by another figure.
    AccuracyGuard(StalenessControl& executor, ModelParameters& parameters, Optimizer& optimizer,
                  BestTracker* best, const GuardOptions& options,
                  std::function<void(const std::string&)> say);

    void review(EpochStats& stats, FitState& state) override;

    [[nodiscard]] int triggers() const { return static_cast<int>(state_.triggers); }

    /// The guard's state for a checkpoint, and its inverse. set_state throws strata::Error if
    /// the weights or optimizer state do not fit this model; a state judged by another figure
    /// (a format-4 checkpoint judged validation accuracy) keeps its weights and counters but
    /// starts the best figure and the streak afresh.
    [[nodiscard]] const GuardState& state() const { return state_; }
    void set_state(const GuardState& state);

private:
    [[nodiscard]] std::string trigger_reason(const EpochStats& stats);
    void remember(std::int64_t epoch);

    StalenessControl& executor_;
    ModelParameters& parameters_;
    Optimizer& optimizer_;
    BestTracker* best_;
    GuardOptions options_;
    std::function<void(const std::string&)> say_;
    GuardState state_;
};

}  // namespace strata
