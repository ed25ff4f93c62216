// Trace: one process-wide recorder; a relaxed flag keeps spans free while tracing is off, a mutex
// lets any thread record while it is on.
#include "src/base/trace.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <utility>

namespace strata::trace {
namespace {

using Clock = std::chrono::steady_clock;

struct Recorder {
    std::atomic<bool> on{false};
    Clock::time_point origin = Clock::now();  ///< written by start() only, while off
    std::mutex mutex;                         ///< guards events
    std::vector<Event> events;
};

Recorder& recorder() {
    static Recorder r;
    return r;
}

}  // namespace

void start() {
    Recorder& r = recorder();
    {
        const std::lock_guard lock(r.mutex);
        r.events.clear();
    }
    r.origin = Clock::now();
    r.on.store(true, std::memory_order_relaxed);
}

void stop() {
    recorder().on.store(false, std::memory_order_relaxed);
}

bool on() {
    return recorder().on.load(std::memory_order_relaxed);
}

double now() {
    return std::chrono::duration<double>(Clock::now() - recorder().origin).count();
}

void record(std::string_view name, const char* category, double begin_s, double end_s,
            std::int64_t value) {
    if (on()) {
        Recorder& r = recorder();
        const std::lock_guard lock(r.mutex);
        r.events.push_back(Event{std::string(name), category, begin_s, end_s, value});
    }
}

std::vector<Event> take() {
    Recorder& r = recorder();
    const std::lock_guard lock(r.mutex);
    return std::exchange(r.events, {});
}

Span::Span(std::string_view name, const char* category, std::int64_t value)
    : category_(category), value_(value) {
    if (on()) {
        name_ = name;
        begin_s_ = now();
    }
}

Span::~Span() {
    if (begin_s_ >= 0.0) {
        record(name_, category_, begin_s_, now(), value_);
    }
}

}  // namespace strata::trace
