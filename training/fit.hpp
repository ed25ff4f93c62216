// fit: the training loop every executor and model share — train step, optimizer step,
// evaluation at its cadence, then small pluggable hooks (best-weights tracker, early stopping,
// signal stop, checkpointer, metrics writer, progress lines) in the order given.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "src/comm/communicator.hpp"
#include "src/nn/executor.hpp"
#include "src/nn/model_parameters.hpp"
#include "src/nn/optimizer.hpp"
#include "training/epoch_stats.hpp"

namespace strata {

/// One evaluated epoch's validation figures (early stopping reads them).
struct EvalRecord {
    std::int64_t epoch = 0;
    double val_loss = 0.0;
    double val_acc = 0.0;
};

/// What the loop and its hooks share; a checkpoint stores it and a resume restores it.
struct FitState {
    std::int64_t epoch = 0;           ///< last completed epoch (0 before the first)
    std::int64_t epochs = 0;          ///< the last epoch of the run
    std::optional<EpochStats> best;   ///< set by BestTracker
    std::vector<EvalRecord> history;  ///< every evaluated epoch, appended before the hooks run
    bool early_stopped = false;       ///< set by an early-stopping hook
    std::string stop_reason;          ///< non-empty: a hook asked to stop after this epoch
    int stop_signal = 0;              ///< the signal that stopped the run (SignalStop), else 0

    [[nodiscard]] bool stopping() const { return !stop_reason.empty(); }
    [[nodiscard]] bool last_epoch() const { return epoch >= epochs; }
};

class FitHook {
public:
    virtual ~FitHook() = default;
    /// Before epoch `epoch` starts.
    virtual void begin_epoch(std::int64_t epoch) { (void)epoch; }
    /// After epoch stats.epoch (state.epoch == stats.epoch); may set state.stop_reason.
    virtual void end_epoch(const EpochStats& stats, FitState& state) = 0;
};

/// Watches a run whose executor trades exactness for speed, and repairs it (the layer
/// pipeline's accuracy guard, training/accuracy_guard.hpp). Runs after each epoch's figures are
/// complete and before the hooks; it may restore parameters and change the executor, and it
/// records what it did in stats.guard. With a guard, a non-finite loss is the guard's to handle
/// (without one, fit throws "training diverged").
class EpochGuard {
public:
    virtual ~EpochGuard() = default;
    virtual void review(EpochStats& stats, FitState& state) = 0;
};

struct FitOptions {
    int eval_every = 1;  ///< evaluate every N epochs and at the last epoch
    /// Appended to the "training diverged" error (a NaN or infinite loss): where the run can
    /// be resumed from, e.g. "; the newest checkpoint is CK/ckpt-000010.h5 (epoch 10)".
    std::function<std::string()> divergence_hint{};
};

/// What the loop drives.
struct FitContext {
    Executor& executor;
    Optimizer& optimizer;
    ModelParameters& parameters;
    Backend& backend;
    Communicator& comm;
    EpochGuard* guard = nullptr;
};

/// Runs epochs state.epoch + 1 .. state.epochs; stops after an epoch whose hooks set a stop
/// reason. Throws strata::Error when the loss is not finite ("training diverged").
void fit(const FitContext& context, const FitOptions& options, std::span<FitHook* const> hooks,
         FitState& state);

/// Whether epoch `epoch` of a run ending at `epochs` is evaluated.
[[nodiscard]] bool evaluation_due(std::int64_t epoch, std::int64_t epochs, int eval_every);

}  // namespace strata
