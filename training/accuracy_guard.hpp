// AccuracyGuard: the layer pipeline's answer to GNNPipe's silent accuracy loss. It judges what
// staleness changes in the update, not the validation curve's ordinary swings: at every exact
// evaluation it has the executor run the next training step on the current weights twice
// without an update (StalenessControl::staleness_losses) — as it will run, reading the
// historical rows of chunks not yet processed, and with one chunk per way, every row fresh, the
// same dropout masks — and compares the two parameter gradients as the optimizer will apply
// them, each coordinate scaled by the factor the next step multiplies it by
// (Optimizer::step_scale, s; Adam: 1 / (sqrt(v̂) + eps)):
//     gap = ||s ⊙ (g_stale - g_fresh)|| / ||s ⊙ g_fresh||
// 0 when staleness changes nothing; 1 when the error in the update is as large as the update.
// (Unscaled, the norms are those of the few tensors with the largest raw gradients, and the gap
// swings with them: on Cora, GCNII-32's unscaled gap ran from 0.01 to 0.77 between evaluations
// of one run, its scaled gap 0.39 to 0.54; docs/pipeline.md.) When the gap
// is above `bound` at `patience` evaluations in a row spanning at least `window` epochs (so the
// first epochs do not trigger it alone), the guard restores the last good weights and optimizer
// state — and the best-weights tracker's state as of that epoch, so that the best epoch reported
// and served is never one the rollback discarded — and continues with less staleness: half the
// chunks in flight, half the snapshot period; after `max_triggers` triggers it runs exact (one
// chunk per way). A non-finite loss (training, stale, fresh or exact) triggers it at once (so
// the guard, not fit, handles NaN/Inf). The gap, the unscaled one and both losses go in the
// epoch's metrics (EpochStats::staleness_gap, raw_staleness_gap, stale_train_loss,
// fresh_train_loss); every action is printed with
// them and recorded (EpochStats::guard). Good weights are those of an evaluation whose gap is
// within the bound. Once the executor is exact (min_chunks() chunks) the guard stands aside (no
// measurement) and a non-finite loss ends the run as without it ("training diverged").
// Cost: two training steps per evaluation (not counted in any epoch's time or bytes).
//
// Why not the validation figure (the rule before issue 31: the select-by figure 0.02 worse than
// its best at two evaluations spanning 10 epochs, or the exact training loss above 1.5 x its
// minimum): exact training trips it too — on a citation graph an exact GCNII-32's validation
// accuracy fell from 0.656 to 0.221 and stayed below its best - 0.02 for 16 evaluations — so it
// rolled back runs that staleness did not hurt. Why the gradient and not the loss: on Cora the
// training loss from stale rows equals the fresh one within 0.3 % (GCN-32) to 11 % (GCNII-32),
// so the forward alone says little. Measurements: docs/pipeline.md, "The accuracy guard".
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
    double bound = 1.0;    ///< the staleness gap tolerated (update error / update)
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
