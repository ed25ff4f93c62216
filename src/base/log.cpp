// Progress lines and peak RSS.
#include "src/base/log.hpp"

#include <cstdio>

#include <sys/resource.h>
#include <unistd.h>

namespace strata {

std::int64_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

bool reset_peak_rss() {
    std::FILE* refs = std::fopen("/proc/self/clear_refs", "w");
    if (refs == nullptr) {
        return false;
    }
    const bool written = std::fputs("5", refs) >= 0;
    return std::fclose(refs) == 0 && written;
}

std::int64_t current_rss_bytes() {
    // /proc/self/statm: size resident shared text lib data dt, in pages.
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    if (statm == nullptr) {
        return 0;
    }
    long long size = 0;
    long long resident = 0;
    const int read = std::fscanf(statm, "%lld %lld", &size, &resident);
    std::fclose(statm);
    return read == 2 ? resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

bool stdout_is_terminal() {
    return isatty(STDOUT_FILENO) == 1;
}

Progress::Progress(std::string label, std::int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total > 0 ? total : 1),
      enabled_(enabled),
      terminal_(stdout_is_terminal()) {}

Progress::~Progress() {
    if (!finished_) {
        finish();
    }
}

void Progress::update(std::int64_t done) {
    if (!enabled_) {
        return;
    }
    const int percent = static_cast<int>(100 * done / total_);
    const int decile = percent / 10;
    if (terminal_) {
        std::printf("\r%s: %3d%% (%lld/%lld)", label_.c_str(), percent,
                    static_cast<long long>(done), static_cast<long long>(total_));
        std::fflush(stdout);
    } else if (decile > last_decile_) {
        std::printf("%s: %d%% (%lld/%lld)\n", label_.c_str(), percent, static_cast<long long>(done),
                    static_cast<long long>(total_));
        std::fflush(stdout);
    }
    last_decile_ = decile;
}

void Progress::finish() {
    if (enabled_ && !finished_) {
        if (last_decile_ < 10) {
            update(total_);
        }
        if (terminal_) {
            std::printf("\n");
            std::fflush(stdout);
        }
    }
    finished_ = true;
}

}  // namespace strata
