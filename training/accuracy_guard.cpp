// AccuracyGuard: triggers, rollback, less staleness.
#include "training/accuracy_guard.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "src/base/error.hpp"
#include "src/base/integral_value.hpp"

namespace strata {

AccuracyGuard::AccuracyGuard(StalenessControl& executor, ModelParameters& parameters,
                             Optimizer& optimizer, const GuardOptions& options,
                             std::function<void(const std::string&)> say)
    : executor_(executor),
      parameters_(parameters),
      optimizer_(optimizer),
      options_(options),
      say_(std::move(say)) {
    remember(0);
}

void AccuracyGuard::remember(std::int64_t epoch) {
    good_parameters_ = parameters_.download();
    good_optimizer_ = optimizer_.state();
    good_epoch_ = epoch;
}

std::string AccuracyGuard::trigger_reason(const EpochStats& stats) {
    std::array<char, 160> text{};
    if (!std::isfinite(stats.loss)) {
        std::snprintf(text.data(), text.size(), "training loss is %g", stats.loss);
        return text.data();
    }
    if (!stats.evaluated) {
        return "";
    }
    if (!std::isfinite(stats.eval_train_loss)) {
        std::snprintf(text.data(), text.size(), "exact training loss is %g", stats.eval_train_loss);
        return text.data();
    }
    if (have_loss_ && stats.eval_train_loss > options_.loss_factor * min_train_loss_) {
        std::snprintf(text.data(), text.size(),
                      "exact training loss %.4f above %.2f x its minimum %.4f",
                      stats.eval_train_loss, options_.loss_factor, min_train_loss_);
        return text.data();
    }
    if (best_val_acc_ >= 0.0 && stats.val_acc < best_val_acc_ - options_.accuracy_drop) {
        if (below_++ == 0) {
            below_since_ = stats.epoch;
        }
        if (below_ >= options_.patience && stats.epoch - below_since_ >= options_.window) {
            std::snprintf(text.data(), text.size(),
                          "validation accuracy %.4f below the best %.4f - %.2f at %d evaluations "
                          "in a row",
                          stats.val_acc, best_val_acc_, options_.accuracy_drop, below_);
            return text.data();
        }
    } else {
        below_ = 0;
    }
    return "";
}

void AccuracyGuard::review(EpochStats& stats, FitState& state) {
    (void)state;
    if (executor_.chunks() == executor_.min_chunks()) {  // exact: nothing to turn down
        STRATA_CHECK(std::isfinite(stats.loss), "training diverged: loss is ", stats.loss,
                     " at epoch ", stats.epoch, " (try a smaller --lr)");
        return;
    }
    const std::string reason = trigger_reason(stats);
    if (reason.empty()) {
        if (stats.evaluated) {
            best_val_acc_ = std::max(best_val_acc_, stats.val_acc);
            min_train_loss_ = have_loss_ ? std::min(min_train_loss_, stats.eval_train_loss)
                                         : stats.eval_train_loss;
            have_loss_ = true;
            if (below_ == 0) {
                remember(stats.epoch);
            }
        }
        return;
    }
    ++triggers_;
    parameters_.upload(good_parameters_);
    optimizer_.set_state(good_optimizer_);
    const int chunks = executor_.chunks();
    const int period = executor_.snapshot_period();
    const bool exact = triggers_ >= options_.max_triggers;
    const int least = executor_.min_chunks();
    const int new_chunks = exact ? least : std::max(least, chunks / 2 / least * least);
    const int new_period = exact ? 0 : period / 2;
    executor_.set_staleness(new_chunks, new_period);
    executor_.reset_history();
    below_ = 0;
    stats.guard = "rollback " + std::to_string(triggers_) + ": " + reason + "; restored epoch " +
                  std::to_string(good_epoch_) + " weights; chunks " + std::to_string(chunks) +
                  " -> " + std::to_string(executor_.chunks()) + ", snapshot period " +
                  std::to_string(period) + " -> " + std::to_string(executor_.snapshot_period()) +
                  (executor_.chunks() == least ? " (exact from now on)" : "");
    say_("guard after epoch " + std::to_string(stats.epoch) + ": " + stats.guard);
}

AccuracyGuard::State AccuracyGuard::state() const {
    return {.figures = {static_cast<double>(triggers_), static_cast<double>(below_), best_val_acc_,
                        min_train_loss_, have_loss_ ? 1.0 : 0.0, static_cast<double>(good_epoch_),
                        static_cast<double>(below_since_)},
            .parameters = good_parameters_,
            .optimizer = good_optimizer_};
}

void AccuracyGuard::set_state(const State& state) {
    STRATA_CHECK(state.figures.size() == 7 && state.parameters.size() == good_parameters_.size() &&
                     state.optimizer.size() == good_optimizer_.size(),
                 "accuracy guard state: ", state.figures.size(), " figures, ",
                 state.parameters.size(), " weights, ", state.optimizer.size(),
                 " optimizer values do not fit this model");
    const auto whole = [&](std::size_t i, std::int64_t lo, std::int64_t hi) {
        const std::optional<std::int64_t> v = integral_value(state.figures[i], lo, hi);
        STRATA_CHECK(v.has_value(), "accuracy guard state: figure ", i, " = ", state.figures[i],
                     " is not a whole number in [", lo, ", ", hi, "]");
        return *v;
    };
    constexpr std::int64_t epochs = std::int64_t{1} << 53;
    triggers_ = static_cast<int>(whole(0, 0, std::numeric_limits<int>::max()));
    below_ = static_cast<int>(whole(1, 0, std::numeric_limits<int>::max()));
    best_val_acc_ = state.figures[2];
    min_train_loss_ = state.figures[3];
    have_loss_ = state.figures[4] != 0.0;
    good_epoch_ = whole(5, -epochs, epochs);
    below_since_ = whole(6, -epochs, epochs);
    good_parameters_ = state.parameters;
    good_optimizer_ = state.optimizer;
}

}  // namespace strata
