// SignalStop: every rank stops at the same epoch boundary when any rank got SIGTERM/SIGINT
// (Slurm preemption, time limit, Ctrl-C); a watchdog ends a rank that cannot reach the boundary.
#pragma once

#include <chrono>

#include "src/base/signals.hpp"
#include "src/comm/communicator.hpp"
#include "training/fit.hpp"

namespace strata {

class SignalStop final : public FitHook {
public:
    /// Installs the handlers (StopSignals) for its lifetime.
    explicit SignalStop(Communicator& comm) : comm_(comm) {}

    /// One all-reduce per epoch: the largest signal any rank received; a stop during the last
    /// epoch changes nothing (the run is complete). Tightens the watchdog's grace to a few
    /// epoch times.
    void end_epoch(const EpochStats& stats, FitState& state) override;

private:
    Communicator& comm_;
    StopSignals signals_;
    std::chrono::steady_clock::time_point boundary_ = std::chrono::steady_clock::now();
    std::chrono::milliseconds longest_epoch_{0};
};

}  // namespace strata
