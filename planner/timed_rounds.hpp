// Repeated, interleaved timing for `strata calibrate`: round 1 measures every probe once, round 2
// again, ... (>= 3 rounds), so a slow spell of the machine (another process, a frequency change)
// lands on one round of many figures rather than on every round of one. A figure is the median
// of its rounds; its spread (max - min) / median. Within a round a probe times its kernel as the
// fastest of repetitions (time_fastest). The clock is injectable: tests feed known times.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace strata::planner {

/// Seconds from an arbitrary origin, monotonic.
using Clock = std::function<double()>;

/// std::chrono::steady_clock in seconds.
[[nodiscard]] Clock steady_seconds();

/// Fastest seconds of `run` by `clock` over repetitions filling about `budget` seconds (at
/// least 1, at most 200), after one untimed warm-up: noise only ever adds time. A kernel longer
/// than the budget is timed once per round (the median over rounds then discards a slow one).
[[nodiscard]] double time_fastest(double budget, const std::function<void()>& run,
                                  const Clock& clock);

/// A figure over rounds: the median of the rounds' values and the spread (max - min) / median
/// (0 with one value; with a median of 0, 0 when every value is 0, else 1).
struct Repeated {
    double median = 0.0;
    double spread = 0.0;
    std::vector<double> rounds;
};
[[nodiscard]] Repeated summarize(std::vector<double> values);

/// Probes measured in interleaved rounds. A probe yields one value per name it was added with
/// (one round's figures: a rate, a cost, or several derived from the same timings).
class FigureRounds {
public:
    using Measure = std::function<std::vector<double>()>;
    void add(std::vector<std::string> names, Measure measure);
    /// `rounds` rounds (each probe once per round, in the order added), then each figure by
    /// name. `after_round(r)` (optional) runs after round r (1-based), e.g. for progress.
    [[nodiscard]] std::map<std::string, Repeated> run(
        int rounds, const std::function<void(int)>& after_round = {}) const;

private:
    struct Probe {
        std::vector<std::string> names;
        Measure measure;
    };
    std::vector<Probe> probes_;
};

}  // namespace strata::planner
