// StopSignals: sigaction handlers that store the signal number in a lock-free atomic and post a
// semaphore (both async-signal-safe); a watchdog thread enforces the grace period.
#include "src/base/signals.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "src/base/error.hpp"

#include <semaphore.h>

namespace strata {
namespace {

// Written by the handler, read by the loop and the watchdog.
std::atomic<int> g_received{0};
std::atomic<bool> g_installed{false};
static_assert(std::atomic<int>::is_always_lock_free);
sem_t g_wakeup;  // posted by the handler (and by the destructor to stop the watchdog)

struct sigaction g_previous_term;
struct sigaction g_previous_int;

extern "C" void on_stop_signal(int signal) {
    int expected = 0;
    if (g_received.compare_exchange_strong(expected, signal)) {
        sem_post(&g_wakeup);
    }
}

void install(int signal, struct sigaction* previous) {
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // blocking calls (MPI, I/O) continue after the handler
    STRATA_CHECK(sigaction(signal, &action, previous) == 0, "sigaction(", signal_name(signal),
                 ") failed: ", std::strerror(errno));
}

}  // namespace

StopSignals::StopSignals(std::chrono::milliseconds grace) : grace_(grace) {
    STRATA_CHECK(!g_installed.exchange(true), "StopSignals: already installed");
    g_received.store(0);
    if (sem_init(&g_wakeup, 0, 0) != 0) {
        g_installed.store(false);
        STRATA_FAIL("StopSignals: sem_init failed: ", std::strerror(errno));
    }
    watchdog_ = std::thread([this] { watch(); });
    try {
        install(SIGTERM, &g_previous_term);
        install(SIGINT, &g_previous_int);
    } catch (...) {
        {
            const std::lock_guard lock(mutex_);
            closing_ = true;
        }
        sem_post(&g_wakeup);
        watchdog_.join();
        sem_destroy(&g_wakeup);
        g_installed.store(false);
        throw;
    }
}

StopSignals::~StopSignals() {
    sigaction(SIGTERM, &g_previous_term, nullptr);
    sigaction(SIGINT, &g_previous_int, nullptr);
    {
        const std::lock_guard lock(mutex_);
        closing_ = true;
    }
    changed_.notify_all();
    sem_post(&g_wakeup);
    watchdog_.join();
    sem_destroy(&g_wakeup);
    g_installed.store(false);
}

int StopSignals::received() const {
    return g_received.load();
}

void StopSignals::set_grace(std::chrono::milliseconds grace) {
    const std::lock_guard lock(mutex_);
    grace_ = grace;
}

void StopSignals::acknowledge() {
    {
        const std::lock_guard lock(mutex_);
        acknowledged_ = true;
    }
    changed_.notify_all();
}

void StopSignals::watch() {
    while (sem_wait(&g_wakeup) != 0 && errno == EINTR) {
    }
    std::unique_lock lock(mutex_);
    if (closing_) {
        return;
    }
    const int signal = g_received.load();
    const auto grace = grace_;
    if (changed_.wait_for(lock, grace, [this] { return acknowledged_ || closing_; })) {
        return;
    }
    std::fprintf(stderr,
                 "strata: %s was not honoured within %.1f s (is another rank gone?): exiting "
                 "now\n",
                 signal_name(signal), static_cast<double>(grace.count()) / 1e3);
    std::fflush(stderr);
    std::_Exit(128 + signal);
}

const char* signal_name(int signal) {
    switch (signal) {
        case SIGTERM:
            return "SIGTERM";
        case SIGINT:
            return "SIGINT";
        case SIGKILL:
            return "SIGKILL";
        case SIGUSR1:
            return "SIGUSR1";
        default:
            return "a signal";
    }
}

}  // namespace strata
