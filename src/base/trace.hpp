// Trace: a timeline of what one process did (`strata train --trace FILE`), for people: spans with
// a name and a category, each [begin, end) in seconds since tracing started, kept in memory and
// written as Chrome trace events (chrome://tracing, https://ui.perfetto.dev; one process per rank,
// training/trace_file.hpp). Off by default: a span then costs one relaxed atomic load and
// allocates nothing. Any thread may record (one track per rank: the run's spans come from the
// thread that drives it); work inside a span (OpenMP kernels, MPI) is part of it. start() is
// called while nothing records.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::trace {

struct Event {
    std::string name;
    const char* category = "";  ///< a string literal: "gemm", "aggregation", "exchange", ...
    double begin_s = 0.0;       ///< since start()
    double end_s = 0.0;
    std::int64_t value = -1;  ///< shown with the span (a peer, a width); -1: none
};

/// Starts recording: forgets what was recorded; time 0 is now.
void start();
/// Stops recording; what was recorded stays for take().
void stop();
/// Whether spans are being recorded.
[[nodiscard]] bool on();
/// Seconds since start().
[[nodiscard]] double now();
/// Records [begin_s, end_s) if on.
void record(std::string_view name, const char* category, double begin_s, double end_s,
            std::int64_t value = -1);
/// The events recorded since start(), in the order they ended; forgets them.
[[nodiscard]] std::vector<Event> take();

/// A span from construction to destruction, recorded if tracing was on when it began.
class Span {
public:
    Span(std::string_view name, const char* category, std::int64_t value = -1);
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;
    ~Span();

private:
    std::string name_;
    const char* category_;
    std::int64_t value_;
    double begin_s_ = -1.0;  ///< < 0: not recording
};

}  // namespace strata::trace
