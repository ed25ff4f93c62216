// Plain-line progress and process statistics (peak RSS) for long steps and reports.
#pragma once

#include <cstdint>
#include <string>

namespace strata {

/// Peak resident set size of this process so far, in bytes (getrusage).
[[nodiscard]] std::int64_t peak_rss_bytes();
/// Resident set size now, in bytes (/proc/self/statm; 0 where unavailable).
[[nodiscard]] std::int64_t current_rss_bytes();
/// Lowers the peak (peak_rss_bytes) to the resident size now (/proc/self/clear_refs, Linux);
/// false where that is not possible (the peak then keeps its earlier value).
bool reset_peak_rss();

/// Whether stdout is a terminal: long steps then redraw one line with '\r', else print
/// plain lines (as under Slurm or when piped).
[[nodiscard]] bool stdout_is_terminal();

/// Progress of a long step on stdout: "<label>: 37% (370/1000)". A terminal gets one line
/// redrawn in place; anything else gets at most one plain line per 10% step.
class Progress {
public:
    Progress(std::string label, std::int64_t total, bool enabled = true);
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;
    ~Progress();
    void update(std::int64_t done);
    void finish();

private:
    std::string label_;
    std::int64_t total_;
    bool enabled_;
    bool terminal_;
    int last_decile_ = -1;
    bool finished_ = false;
};

}  // namespace strata
