// Wall-clock helpers: a monotonic stopwatch and a scope that adds its duration to a counter.
#pragma once

#include <chrono>

namespace strata {

/// Seconds since construction (or the last restart), from a monotonic clock.
class Stopwatch {
public:
    Stopwatch() : start_(Clock::now()) {}
    void restart() { start_ = Clock::now(); }
    [[nodiscard]] double seconds() const {
        return std::chrono::duration<double>(Clock::now() - start_).count();
    }

private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point start_;
};

/// Adds the lifetime of the scope, in seconds, to `*total`.
class ScopedTimer {
public:
    explicit ScopedTimer(double& total) : total_(total) {}
    ScopedTimer(const ScopedTimer&) = delete;
    ScopedTimer& operator=(const ScopedTimer&) = delete;
    ~ScopedTimer() { total_ += watch_.seconds(); }

private:
    double& total_;
    Stopwatch watch_;
};

}  // namespace strata
