// AccuracyGuard: the layer pipeline's answer to GNNPipe's silent accuracy loss. Every exact
// evaluation (full graph, no staleness) is compared with the run's own best; when staleness
// hurts, the guard restores the last good weights and optimizer state and continues with less
// staleness — half the chunks in flight, half the snapshot period — and after `max_triggers`
// triggers runs exact (one chunk). Triggers:
//   - a non-finite training loss (so the guard, not fit, handles NaN/Inf);
//   - validation accuracy below the best minus `accuracy_drop` at `patience` evaluations in a
//     row spanning at least `window` epochs (so the noise of early epochs evaluated every epoch
//     does not trigger it; at GNNPipe's cadence of one evaluation per 50 epochs it is simply two
//     evaluations in a row);
//   - the exact training loss (evaluation, no dropout) above `loss_factor` x its minimum.
// Every action is printed and recorded in the epoch's metrics (EpochStats::guard). Once the
// executor is exact (min_chunks() chunks) there is no staleness left to turn down: the guard
// stands aside and a non-finite loss ends the run as without it ("training diverged").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/nn/model_parameters.hpp"
#include "src/nn/optimizer.hpp"
#include "src/nn/pipeline_executor.hpp"
#include "training/fit.hpp"

namespace strata {

struct GuardOptions {
    double accuracy_drop = 0.02;  ///< validation accuracy points (as a fraction) below the best
    int patience = 2;             ///< evaluations in a row below it ...
    int window = 10;              ///< ... spanning at least this many epochs
    double loss_factor = 1.5;     ///< exact training loss above this x its minimum
    int max_triggers = 3;         ///< then exact execution
};

class AccuracyGuard final : public EpochGuard {
public:
    /// Takes the current weights and optimizer state as the first good ones. `say` prints a
    /// line (rank 0's report). Everything must outlive the guard.
    AccuracyGuard(StalenessControl& executor, ModelParameters& parameters, Optimizer& optimizer,
                  const GuardOptions& options, std::function<void(const std::string&)> say);

    void review(EpochStats& stats, FitState& state) override;

    [[nodiscard]] int triggers() const { return triggers_; }

    /// The guard's state for a checkpoint (counters and figures exactly, as doubles; the last
    /// good weights and optimizer state), and its inverse.
    struct State {
        std::vector<double> figures;  ///< triggers, below, best val acc, min train loss, ...
        std::vector<float> parameters;
        std::vector<float> optimizer;
    };
    [[nodiscard]] State state() const;
    void set_state(const State& state);

private:
    [[nodiscard]] std::string trigger_reason(const EpochStats& stats);
    void remember(std::int64_t epoch);

    StalenessControl& executor_;
    ModelParameters& parameters_;
    Optimizer& optimizer_;
    GuardOptions options_;
    std::function<void(const std::string&)> say_;
    std::vector<float> good_parameters_;
    std::vector<float> good_optimizer_;
    std::int64_t good_epoch_ = 0;
    double best_val_acc_ = -1.0;
    double min_train_loss_ = 0.0;
    bool have_loss_ = false;
    int below_ = 0;
    std::int64_t below_since_ = 0;  ///< epoch of the first evaluation of the current streak
    int triggers_ = 0;
};

}  // namespace strata
