// AccuracyGuard: the staleness gap at each evaluation; rollback (weights, optimizer, best
// tracker), less staleness.
#include "training/accuracy_guard.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <span>

#include "src/base/error.hpp"

namespace strata {
namespace {

/// ||s ⊙ (a - b)|| / ||s ⊙ b|| in double (0 when a = b; infinite when b is 0 and a is not).
double scaled_difference(std::span<const float> a, std::span<const float> b,
                         std::span<const float> s) {
    STRATA_CHECK(a.size() == b.size() && s.size() == b.size(), "accuracy guard: gradients of ",
                 a.size(), " and ", b.size(), " values, ", s.size(), " scales");
    double difference = 0.0;
    double norm = 0.0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        const double scale = s[i];
        const double d = scale * (static_cast<double>(a[i]) - static_cast<double>(b[i]));
        const double x = scale * static_cast<double>(b[i]);
        difference += d * d;
        norm += x * x;
    }
    return difference == 0.0 ? 0.0 : std::sqrt(difference / norm);
}

}  // namespace

AccuracyGuard::AccuracyGuard(StalenessControl& executor, ModelParameters& parameters,
                             Optimizer& optimizer, BestTracker* best, const GuardOptions& options,
                             std::function<void(const std::string&)> say)
    : executor_(executor),
      parameters_(parameters),
      optimizer_(optimizer),
      best_(best),
      options_(options),
      say_(std::move(say)) {
    STRATA_CHECK(best == nullptr || best->selection() == options.select_by,
                 "accuracy guard: the run selects by ", to_string(options.select_by),
                 " but the best tracker selects by ",
                 best == nullptr ? "" : to_string(best->selection()));
    STRATA_CHECK(std::isfinite(options.bound) && options.bound > 0.0,
                 "accuracy guard: bound = ", options.bound, ", expected a positive number");
    state_.criterion = options.select_by;
    remember(0);
}

void AccuracyGuard::remember(std::int64_t epoch) {
    state_.parameters = parameters_.download();
    state_.optimizer = optimizer_.state();
    state_.good_epoch = epoch;
    state_.tracker_pending = true;
    state_.tracker_best.reset();
    state_.tracker_parameters.clear();
}

std::string AccuracyGuard::trigger_reason(EpochStats& stats) {
    std::array<char, 240> text{};
    if (!std::isfinite(stats.loss)) {
        std::snprintf(text.data(), text.size(), "training loss is %g", stats.loss);
        return text.data();
    }
    if (!stats.evaluated) {
        return "";
    }
    // The weights evaluated are those the next epoch trains from: measure as it will read.
    const StalenessLosses losses = executor_.staleness_losses(stats.epoch + 1);
    // As the optimizer will apply it: the scale of the step the fresh gradient would make.
    const double gap = scaled_difference(losses.stale_gradient, losses.fresh_gradient,
                                         optimizer_.step_scale(losses.fresh_gradient));
    stats.stale_train_loss = losses.stale;
    stats.fresh_train_loss = losses.fresh;
    stats.staleness_gap = gap;
    stats.raw_staleness_gap = losses.gradient_error;
    if (!std::isfinite(losses.stale) || !std::isfinite(losses.fresh) || !std::isfinite(gap) ||
        !std::isfinite(stats.eval_train_loss)) {
        std::snprintf(text.data(), text.size(),
                      "training loss is %g from stale rows, %g from fresh rows, %g exact "
                      "(evaluation); staleness gap %g",
                      losses.stale, losses.fresh, stats.eval_train_loss, gap);
        return text.data();
    }
    if (!(gap > options_.bound)) {
        state_.above = 0;
        return "";
    }
    if (state_.above++ == 0) {
        state_.above_since = stats.epoch;
    }
    if (state_.above >= options_.patience && stats.epoch - state_.above_since >= options_.window) {
        std::snprintf(text.data(), text.size(),
                      "staleness gap %.4f beyond the bound %.4f at %lld evaluations in a row "
                      "(training loss %.4f from stale rows, %.4f from fresh rows)",
                      gap, options_.bound, static_cast<long long>(state_.above), losses.stale,
                      losses.fresh);
        return text.data();
    }
    return "";
}

void AccuracyGuard::review(EpochStats& stats, FitState& state) {
    if (best_ != nullptr && state_.tracker_pending) {  // the tracker has seen the good epoch
        state_.tracker_best = state.best;
        state_.tracker_parameters = best_->download();
        state_.tracker_pending = false;
    }
    if (executor_.chunks() == executor_.min_chunks()) {  // exact: nothing to turn down
        STRATA_CHECK(std::isfinite(stats.loss), "training diverged: loss is ", stats.loss,
                     " at epoch ", stats.epoch, " (try a smaller --lr)");
        return;
    }
    const std::string reason = trigger_reason(stats);
    if (reason.empty()) {
        if (stats.evaluated && state_.above == 0) {
            remember(stats.epoch);
        }
        return;
    }
    ++state_.triggers;
    parameters_.upload(state_.parameters);
    optimizer_.set_state(state_.optimizer);
    if (best_ != nullptr) {  // the best as of the restored epoch; this epoch is never best
        state.best = state_.tracker_best;
        best_->upload(state_.tracker_parameters);
    }
    const int chunks = executor_.chunks();
    const int period = executor_.snapshot_period();
    const bool exact = state_.triggers >= options_.max_triggers;
    const int least = executor_.min_chunks();
    const int new_chunks = exact ? least : std::max(least, chunks / 2 / least * least);
    const int new_period = exact ? 0 : period / 2;
    executor_.set_staleness(new_chunks, new_period);
    executor_.reset_history();
    state_.above = 0;
    stats.guard = "rollback " + std::to_string(state_.triggers) + ": " + reason +
                  "; restored epoch " + std::to_string(state_.good_epoch) + " weights; chunks " +
                  std::to_string(chunks) + " -> " + std::to_string(executor_.chunks()) +
                  ", snapshot period " + std::to_string(period) + " -> " +
                  std::to_string(executor_.snapshot_period()) +
                  (executor_.chunks() == least ? " (exact from now on)" : "");
    say_("guard after epoch " + std::to_string(stats.epoch) + ": " + stats.guard);
}

void AccuracyGuard::set_state(const GuardState& given) {
    STRATA_CHECK(
        given.parameters.size() == state_.parameters.size() &&
            given.optimizer.size() == state_.optimizer.size() &&
            (given.tracker_pending || given.tracker_parameters.size() == state_.parameters.size()),
        "accuracy guard state: ", given.parameters.size(), " weights, ", given.optimizer.size(),
        " optimizer values, ", given.tracker_parameters.size(),
        " best weights do not fit this model (", state_.parameters.size(), " weights, ",
        state_.optimizer.size(), " optimizer values)");
    STRATA_CHECK(given.triggers >= 0 && given.above >= 0, "accuracy guard state: ", given.triggers,
                 " rollbacks, ", given.above, " evaluations above the bound");
    state_ = given;
    state_.criterion = options_.select_by;
}

}  // namespace strata
