// Graceful stop on SIGTERM/SIGINT: an async-signal-safe handler only records the signal; the
// training loop polls it at epoch boundaries (what Slurm sends on preemption or time limit).
// A watchdog ends the process if the stop is not acknowledged in time (a peer rank died and
// this one is blocked in communication), so a dead rank never leaves the others hanging.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace strata {

/// While alive, SIGTERM and SIGINT set a process-wide flag instead of killing the process; the
/// previous handlers are restored by the destructor. The flag (and a semaphore the handler
/// posts) is the one piece of global state: a signal handler can reach nothing else. At most
/// one instance may exist at a time (the constructor throws strata::Error otherwise).
class StopSignals {
public:
    /// `grace`: how long after a stop signal acknowledge() must be called; otherwise the
    /// watchdog prints one line to stderr and ends the process at once (_Exit(128 + signal)).
    explicit StopSignals(std::chrono::milliseconds grace = std::chrono::seconds(60));
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    ~StopSignals();

    /// The first stop signal received since construction (SIGTERM or SIGINT), or 0.
    [[nodiscard]] int received() const;
    /// Changes the grace period (e.g. to a few epoch times once they are known); applies to a
    /// signal received from now on.
    void set_grace(std::chrono::milliseconds grace);
    /// Every rank has seen the stop (the stop decision was agreed): the deadline is lifted.
    void acknowledge();

private:
    void watch();

    std::mutex mutex_;
    std::condition_variable changed_;
    std::chrono::milliseconds grace_;
    bool acknowledged_ = false;
    bool closing_ = false;
    std::thread watchdog_;
};

/// "SIGTERM", "SIGINT", "SIGKILL", "SIGUSR1"; "a signal" for any other number.
[[nodiscard]] const char* signal_name(int signal);

}  // namespace strata
