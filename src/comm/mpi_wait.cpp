// MpiWaiter: plain MPI waits, or a poll of MPI_Test* against a deadline that ends the job
// (end_job).
#include "src/comm/mpi_wait.hpp"

#include <array>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/base/trace.hpp"
#include "src/comm/end_job.hpp"

namespace strata {

void MpiWaiter::set_limit(double seconds) {
    STRATA_CHECK(seconds >= 0.0, "communication wait limit ", seconds,
                 " s is negative (0: wait forever)");
    limit_ = seconds;
}

int MpiWaiter::wait(MPI_Request& request, int peer, const char* what) const {
    const trace::Span span(what, "wait");
    if (limit_ <= 0.0) {
        return MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    const Stopwatch watch;
    while (true) {
        int done = 0;
        const int code = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS || done != 0) {
            return code;
        }
        if (watch.seconds() > limit_) {
            expire({&request, 1}, {&peer, 1}, what);
        }
    }
}

int MpiWaiter::wait_any(std::span<MPI_Request> requests, std::span<const int> peers,
                        const char* what, int* index, MPI_Status* status) const {
    const trace::Span span(what, "wait");
    const int count = static_cast<int>(requests.size());
    if (limit_ <= 0.0) {
        return MPI_Waitany(count, requests.data(), index, status);
    }
    const Stopwatch watch;
    while (true) {
        int done = 0;
        const int code = MPI_Testany(count, requests.data(), index, &done, status);
        if (code != MPI_SUCCESS || done != 0) {  // done with MPI_UNDEFINED: nothing was pending
            return code;
        }
        if (watch.seconds() > limit_) {
            expire(requests, peers, what);
        }
    }
}

int MpiWaiter::wait_all(std::span<MPI_Request> requests, std::span<const int> peers,
                        const char* what) const {
    const trace::Span span(what, "wait");
    const int count = static_cast<int>(requests.size());
    if (limit_ <= 0.0) {
        return MPI_Waitall(count, requests.data(), MPI_STATUSES_IGNORE);
    }
    // Testsome, not Testall: completed requests become MPI_REQUEST_NULL as they finish, so that
    // the message names only the peers still pending.
    std::vector<int> indices(requests.size());
    const Stopwatch watch;
    while (true) {
        int completed = 0;
        const int code =
            MPI_Testsome(count, requests.data(), &completed, indices.data(), MPI_STATUSES_IGNORE);
        if (code != MPI_SUCCESS || completed == MPI_UNDEFINED) {
            return code;
        }
        if (watch.seconds() > limit_) {
            expire(requests, peers, what);
        }
    }
}

void MpiWaiter::expire(std::span<const MPI_Request> requests, std::span<const int> peers,
                       const char* what) const {
    std::string from;
    int pending = 0;
    bool collective = false;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (requests[i] == MPI_REQUEST_NULL) {
            continue;
        }
        const bool single_other = peers[i] == collective_peer && size_ == 2;
        if (peers[i] == collective_peer && !single_other) {
            collective = true;
            continue;
        }
        const std::string rank = std::to_string(single_other ? 1 - rank_ : peers[i]);
        if (from.find(" " + rank + ",") == std::string::npos) {  // each peer once
            from += " " + rank + ",";
            ++pending;
        }
    }
    if (!from.empty()) {
        from.pop_back();  // the last comma
    }
    const std::string who = collective || pending == 0 ? std::string("the other ranks")
                            : pending == 1             ? "rank" + from
                                                       : "ranks" + from;
    std::array<char, 32> seconds{};
    std::snprintf(seconds.data(), seconds.size(), "%g", limit_);
    end_job("strata: rank " + std::to_string(rank_) + ": no progress from " + who + " for " +
            seconds.data() + " s in " + what + " (network failure?): aborting");
}

}  // namespace strata
