// AccuracyGuard: the layer pipeline's answer to GNNPipe's silent accuracy loss. It judges what
// staleness changes, not the validation curve's ordinary swings: at every exact evaluation it
// asks the executor for the training loss of the same weights computed the way the next
// pipelined step computes it — historical rows of the chunks not yet processed, no dropout, no
// update (StalenessControl::stale_loss) — and compares it with the evaluation's exact training
// loss (no dropout): the staleness gap
//     gap = stale_loss / exact_loss - 1
// is 0 when staleness changes nothing and grows with what the stale rows change. When the gap is
// above `bound` at `patience` evaluations in a row spanning at least `window` epochs (so the
// first epochs, whose weights move fast, do not trigger it alone), the guard restores the last
// good weights and optimizer state — and the best-weights tracker's state as of that epoch, so
// that the best epoch reported and served is never one the rollback discarded — and continues
// with less staleness: half the chunks in flight, half the snapshot period; after
// `max_triggers` triggers it runs exact (one chunk per way). A non-finite training loss (stale
// or exact) triggers it at once (so the guard, not fit, handles NaN/Inf). The gap is recorded
// in the epoch's metrics (EpochStats::stale_train_loss, staleness_gap) and every action is
// printed with it and recorded (EpochStats::guard). Good weights are those of an evaluation
// whose gap is within the bound. Once the executor is exact (min_chunks() chunks) there is no
// staleness left to turn down: the guard stands aside (no measurement) and a non-finite loss
// ends the run as without it ("training diverged").
//
// Why not the validation figure (the rule before issue 31: select-by figure below its best by
// 0.02 at two evaluations spanning 10 epochs; exact training loss above 1.5 x its minimum): exact
// training trips it too — on a citation graph an exact GCNII-32's validation accuracy fell from
// 0.656 to 0.221 and stayed below its best - 0.02 for 16 evaluations — so it rolled back runs
// that staleness did not hurt. Measurements: docs/pipeline.md, "The accuracy guard".
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
    /// The run's select_by: the best tracker's selection, which a rollback rewinds.
    Selection select_by = Selection::val_acc;
    double bound = 0.5;    ///< the staleness gap tolerated (stale loss 1.5 x the exact one)
    int patience = 2;      ///< evaluations in a row with the gap above the bound ...
    int window = 10;       ///< ... spanning at least this many epochs
    int max_triggers = 3;  ///< then exact execution
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
    /// the weights or optimizer state do not fit this model. A state written before issue 31
    /// (no gap streak) starts the streak afresh.
    [[nodiscard]] const GuardState& state() const { return state_; }
    void set_state(const GuardState& state);

private:
    /// Measures the gap of an evaluated epoch into `stats`; returns why to roll back, or "".
    [[nodiscard]] std::string trigger_reason(EpochStats& stats);
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
