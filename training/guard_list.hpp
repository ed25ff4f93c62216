// GuardList: several epoch guards reviewing every epoch in the order added (the layer pipeline
// with compressed stage transfers: its accuracy guard, which handles a non-finite loss and may
// roll the weights back, then the precision guard, which measures the weights the next epoch
// trains from).
#pragma once

#include <vector>

#include "training/fit.hpp"

namespace strata {

class GuardList final : public EpochGuard {
public:
    /// Ignores a null guard; every guard must outlive the list.
    void add(EpochGuard* guard) {
        if (guard != nullptr) {
            guards_.push_back(guard);
        }
    }
    [[nodiscard]] bool empty() const { return guards_.empty(); }

    void review(EpochStats& stats, FitState& state) override {
        for (EpochGuard* guard : guards_) {
            guard->review(stats, state);
        }
    }

private:
    std::vector<EpochGuard*> guards_;
};

}  // namespace strata
