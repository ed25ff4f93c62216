// STREAM-style triad, a[i] = b[i] + s·c[i] on doubles: the memory-bandwidth baseline that
// benches print their figures against, measured in the same process (24 bytes per element).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include <omp.h>

#include "src/base/error.hpp"
#include "src/base/timer.hpp"

#include <sys/mman.h>

namespace strata::bench {

/// Bandwidths in GB/s (10^9 bytes per second) over `reps` timed repetitions.
struct TriadResult {
    std::size_t elements = 0;
    int reps = 0;
    int threads = 0;
    double best_gbs = 0.0;
    double median_gbs = 0.0;
    double median_seconds = 0.0;
};

namespace detail {

struct FreeDeleter {
    void operator()(double* p) const { std::free(p); }
};

/// n doubles, 2 MiB aligned and marked for transparent huge pages, as the CPU backend does.
inline std::unique_ptr<double[], FreeDeleter> huge_doubles(std::size_t n) {
    constexpr std::size_t huge_page = std::size_t{2} << 20;
    const std::size_t bytes = (n * sizeof(double) + huge_page - 1) / huge_page * huge_page;
    auto* p = static_cast<double*>(std::aligned_alloc(huge_page, bytes));
    STRATA_CHECK(p != nullptr, "triad: cannot allocate ", bytes, " bytes");
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    return std::unique_ptr<double[], FreeDeleter>(p);
}

}  // namespace detail

/// Runs the triad on `n` doubles per array with `threads` OpenMP threads (<= 0: the default),
/// one untimed warm-up and `reps` timed repetitions. Pages are first touched by the thread
/// that later streams them (static schedule in both loops).
inline TriadResult run_triad(std::size_t n = 80'000'000, int reps = 10, int threads = 0) {
    STRATA_CHECK(n > 0 && reps > 0, "triad: need elements and repetitions, got ", n, " and ", reps);
    const int team = threads > 0 ? threads : omp_get_max_threads();
    auto a = detail::huge_doubles(n);
    auto b = detail::huge_doubles(n);
    auto c = detail::huge_doubles(n);
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for num_threads(team) schedule(static)
    for (std::int64_t i = 0; i < count; ++i) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    const double s = 3.0;
    std::vector<double> seconds;
    for (int rep = 0; rep <= reps; ++rep) {
        Stopwatch watch;
        double* __restrict pa = a.get();
        const double* __restrict pb = b.get();
        const double* __restrict pc = c.get();
#pragma omp parallel for simd num_threads(team) schedule(static)
        for (std::int64_t i = 0; i < count; ++i) {
            pa[i] = pb[i] + s * pc[i];
        }
        if (rep > 0) {  // rep 0 warms up
            seconds.push_back(watch.seconds());
        }
    }
    STRATA_CHECK(a[n / 2] == 7.0, "triad: wrong result ", a[n / 2]);
    std::sort(seconds.begin(), seconds.end());
    const double bytes = 24.0 * static_cast<double>(n);
    TriadResult result;
    result.elements = n;
    result.reps = reps;
    result.threads = team;
    result.median_seconds = seconds[seconds.size() / 2];
    result.best_gbs = bytes / seconds.front() / 1e9;
    result.median_gbs = bytes / result.median_seconds / 1e9;
    return result;
}

}  // namespace strata::bench
