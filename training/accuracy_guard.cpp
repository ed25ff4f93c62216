// AccuracyGuard: triggers, rollback (weights, optimizer, best tracker), less staleness.
#include "training/accuracy_guard.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "src/base/error.hpp"

namespace strata {
namespace {

const char* figure_name(Selection selection) {
    switch (selection) {
        case Selection::val_acc:
            return "validation accuracy";
        case Selection::val_loss:
            return "validation loss";
        case Selection::val_auc:
            return "validation ROC-AUC";
    }
    return "?";
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
                 "accuracy guard: it judges by ", to_string(options.select_by),
                 " but the best tracker selects by ",
                 best == nullptr ? "" : to_string(best->selection()));
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

std::string AccuracyGuard::trigger_reason(const EpochStats& stats) {
    std::array<char, 200> text{};
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
    if (state_.min_train_loss &&
        stats.eval_train_loss > options_.loss_factor * *state_.min_train_loss) {
        std::snprintf(text.data(), text.size(),
                      "exact training loss %.4f above %.2f x its minimum %.4f",
                      stats.eval_train_loss, options_.loss_factor, *state_.min_train_loss);
        return text.data();
    }
    const Selection criterion = state_.criterion;
    const double figure = selection_figure(criterion, stats);
    const bool higher = higher_is_better(criterion);
    const bool worse = state_.best_figure && !std::isnan(figure) &&
                       (higher ? figure < *state_.best_figure - options_.drop
                               : figure > *state_.best_figure + options_.drop);
    if (!worse) {
        state_.below = 0;
        return "";
    }
    if (state_.below++ == 0) {
        state_.below_since = stats.epoch;
    }
    if (state_.below >= options_.patience && stats.epoch - state_.below_since >= options_.window) {
        std::snprintf(text.data(), text.size(),
                      "%s %.4f %s the best %.4f %s %.2f at %lld evaluations in a row",
                      figure_name(criterion), figure, higher ? "below" : "above",
                      *state_.best_figure, higher ? "-" : "+", options_.drop,
                      static_cast<long long>(state_.below));
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
        if (stats.evaluated) {
            const double figure = selection_figure(state_.criterion, stats);
            if (!std::isnan(figure)) {
                const bool higher = higher_is_better(state_.criterion);
                state_.best_figure = !state_.best_figure ? figure
                                     : higher            ? std::max(*state_.best_figure, figure)
                                                         : std::min(*state_.best_figure, figure);
            }
            state_.min_train_loss = state_.min_train_loss
                                        ? std::min(*state_.min_train_loss, stats.eval_train_loss)
                                        : stats.eval_train_loss;
            if (state_.below == 0) {
                remember(stats.epoch);
            }
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
    state_.below = 0;
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
    STRATA_CHECK(given.triggers >= 0 && given.below >= 0, "accuracy guard state: ", given.triggers,
                 " rollbacks, ", given.below, " evaluations below the best");
    state_ = given;
    if (state_.criterion != options_.select_by) {  // judged another figure: start it afresh
        state_.criterion = options_.select_by;
        state_.best_figure.reset();
        state_.below = 0;
        state_.below_since = 0;
    }
}

}  // namespace strata
