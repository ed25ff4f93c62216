// Interleaved rounds, the median and spread of each figure, and the fastest of repetitions.
#include "planner/timed_rounds.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "src/base/error.hpp"

namespace strata::planner {

Clock steady_seconds() {
    return [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    };
}

double time_fastest(double budget, const std::function<void()>& run, const Clock& clock) {
    run();  // warm-up: caches, pages, the thread team
    double fastest = 0.0;
    int count = 0;
    const double start = clock();
    while (count < 1 || (clock() - start < budget && count < 200)) {
        const double before = clock();
        run();
        const double t = clock() - before;
        fastest = count == 0 ? t : std::min(fastest, t);
        ++count;
    }
    return fastest;
}

Repeated summarize(std::vector<double> values) {
    Repeated r;
    r.rounds = values;
    if (values.empty()) {
        return r;
    }
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    r.median = n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
    const double range = values.back() - values.front();
    if (r.median != 0.0) {
        r.spread = range / std::abs(r.median);
    } else {
        r.spread = range > 0.0 ? 1.0 : 0.0;
    }
    return r;
}

void FigureRounds::add(std::vector<std::string> names, Measure measure) {
    probes_.push_back({std::move(names), std::move(measure)});
}

std::map<std::string, Repeated> FigureRounds::run(
    int rounds, const std::function<void(int)>& after_round) const {
    STRATA_CHECK(rounds >= 1, "calibrate: rounds must be at least 1, got ", rounds);
    std::map<std::string, std::vector<double>> values;
    for (int round = 1; round <= rounds; ++round) {
        for (const Probe& p : probes_) {
            const std::vector<double> got = p.measure();
            STRATA_CHECK(got.size() == p.names.size(), "calibrate: a probe gave ", got.size(),
                         " values for ", p.names.size(), " figures");
            for (std::size_t i = 0; i < got.size(); ++i) {
                values[p.names[i]].push_back(got[i]);
            }
        }
        if (after_round) {
            after_round(round);
        }
    }
    std::map<std::string, Repeated> out;
    for (auto& [name, v] : values) {
        out[name] = summarize(std::move(v));
    }
    return out;
}

}  // namespace strata::planner
