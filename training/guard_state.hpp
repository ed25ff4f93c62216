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
    /// The run's select_by (the best tracker's, which a rollback rewinds).
    Selection criterion = Selection::val_acc;
    std::int64_t triggers = 0;     ///< rollbacks so far
    std::int64_t above = 0;        ///< evaluations in a row with the staleness gap above the bound
    std::int64_t above_since = 0;  ///< the epoch of the first of them
    /// The validation rule's state before issue 31 (streak, its start, best figure, least exact
    /// training loss): no longer judged nor changed, kept so that checkpoints of either side
    /// load (docs/checkpoints.md).
    std::int64_t below = 0;
    std::int64_t below_since = 0;
    std::optional<double> best_figure{};
    std::optional<double> min_train_loss{};
    std::int64_t good_epoch = 0;      ///< whose weights a rollback restores (0: initial)
    std::vector<float> parameters{};  ///< those weights
    std::vector<float> optimizer{};   ///< the optimizer's state with them
    /// The best tracker as of good_epoch (FitState::best and BestTracker's weights), which a
    /// rollback puts back so that the served best epoch is never one it discarded. Taken at the
    /// review after good_epoch (the tracker has seen good_epoch by then): until then
    /// `tracker_pending`, and the two fields below are empty.
    bool tracker_pending = true;
    std::optional<EpochStats> tracker_best{};
    std::vector<float> tracker_parameters{};
};

}  // namespace strata
