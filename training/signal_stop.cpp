// SignalStop: the agreed stop.
#include "training/signal_stop.hpp"

#include <algorithm>
#include <array>

namespace strata {

void SignalStop::end_epoch(const EpochStats& stats, FitState& state) {
    (void)stats;
    std::array<std::int64_t, 1> stop{signals_.received()};
    comm_.allreduce_max(stop);
    if (stop[0] != 0) {
        signals_.acknowledge();  // every rank is alive and has seen the stop
    }
    const auto now = std::chrono::steady_clock::now();
    longest_epoch_ = std::max(
        longest_epoch_, std::chrono::duration_cast<std::chrono::milliseconds>(now - boundary_));
    boundary_ = now;
    // After SIGTERM/SIGINT every rank must reach the next epoch boundary within a few epoch
    // times; one that does not is blocked on a dead peer, and the watchdog ends it.
    signals_.set_grace(
        std::max<std::chrono::milliseconds>(std::chrono::seconds(5), 4 * longest_epoch_));
    if (stop[0] != 0 && !state.last_epoch() && !state.stopping()) {
        state.stop_signal = static_cast<int>(stop[0]);
        state.stop_reason = std::string("stopped by ") + signal_name(state.stop_signal) +
                            " after epoch " + std::to_string(state.epoch) + " of " +
                            std::to_string(state.epochs);
    }
}

}  // namespace strata
