// Early stopping hooks, both on evaluated epochs only: Kipf & Welling's window criterion
// (--early-stop N) and patience (--patience N).
#pragma once

#include "training/fit.hpp"

namespace strata {

/// Stops when an evaluated epoch's validation loss exceeds the mean of the previous `window`
/// evaluations (Kipf & Welling 2017, window 10).
class WindowEarlyStop final : public FitHook {
public:
    explicit WindowEarlyStop(int window) : window_(window) {}
    void end_epoch(const EpochStats& stats, FitState& state) override;

private:
    int window_;
};

/// Stops when the best epoch (state.best, set by a BestTracker running earlier) is `patience`
/// evaluations old.
class PatienceStop final : public FitHook {
public:
    explicit PatienceStop(int patience) : patience_(patience) {}
    void end_epoch(const EpochStats& stats, FitState& state) override;

private:
    int patience_;
};

}  // namespace strata
