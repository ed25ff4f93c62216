// GuardState: the accuracy guard's state (training/accuracy_guard.hpp), typed — what a
// checkpoint keeps (training/checkpoint.hpp, /pipeline/guard) so that a resumed run's guard acts
// exactly as the uninterrupted run's would. Identical on every rank.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "training/epoch_stats.hpp"

namespace strata {

struct GuardState {
    /// The figure the guard judges by, the run's select_by (best_figure is one of these).
    Selection criterion = Selection::val_acc;
    std::int64_t triggers = 0;     ///< rollbacks so far
    std::int64_t below = 0;        ///< evaluations in a row worse than the best by the drop
    std::int64_t below_since = 0;  ///< the epoch of the first of them
    std::int64_t above = 0;        ///< evaluations in a row with the staleness gap above the bound
    std::int64_t above_since = 0;  ///< the epoch of the first of them
    std::optional<double> best_figure{};     ///< the best figure of a passing evaluation
    std::optional<double> min_train_loss{};  ///< the least exact training loss
    std::int64_t good_epoch = 0;             ///< whose weights a rollback restores (0: initial)
    std::vector<float> parameters{};         ///< those weights
    std::vector<float> optimizer{};          ///< the optimizer's state with them
    /// The best tracker as of good_epoch (FitState::best and BestTracker's weights), which a
    /// rollback puts back so that the served best epoch is never one it discarded. Taken at the
    /// review after good_epoch (the tracker has seen good_epoch by then): until then
    /// `tracker_pending`, and the two fields below are empty.
    bool tracker_pending = true;
    std::optional<EpochStats> tracker_best{};
    std::vector<float> tracker_parameters{};
};

}  // namespace strata
