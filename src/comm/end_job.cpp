// end_job: the failing ranks agree (bounded waits, point-to-point messages on MPI_COMM_WORLD)
// which one prints, and that one ends the job without Open MPI's MPI_Abort banner.
#include "src/comm/end_job.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <mpi.h>

#include "src/base/timer.hpp"

#if defined(OPEN_MPI) && OPEN_MPI
// What MPI_Abort calls once it has printed its banner (ompi/runtime/ompi_mpi_abort.c, exported by
// libmpi since Open MPI 2); weak, so that a libmpi without it leaves it null (MPI_Abort then).
extern "C" int ompi_mpi_abort(MPI_Comm comm, int errcode) __attribute__((weak));
#endif

namespace strata {
namespace {

bool mpi_running() {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    return initialized != 0 && finalized == 0;
}

void print_line(const std::string& line) {
    std::fflush(stdout);  // what this rank printed before comes first
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
}

[[noreturn]] void abort_quietly(int code) {
#if defined(OPEN_MPI) && OPEN_MPI
    if (ompi_mpi_abort != nullptr) {
        ompi_mpi_abort(MPI_COMM_WORLD, code);
    }
#endif
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // neither is declared [[noreturn]]
}

/// The failure messages of other ranks: receives every one that has arrived; returns the lowest
/// sender among them, or -1.
int lowest_failed_rank() {
    int lowest = -1;
    while (true) {
        int arrived = 0;
        MPI_Status status;
        if (MPI_Iprobe(MPI_ANY_SOURCE, end_job_tag, MPI_COMM_WORLD, &arrived, &status) !=
                MPI_SUCCESS ||
            arrived == 0) {
            return lowest;
        }
        int sender = 0;
        if (MPI_Recv(&sender, 1, MPI_INT, status.MPI_SOURCE, end_job_tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            return lowest;
        }
        lowest = lowest < 0 ? status.MPI_SOURCE : std::min(lowest, status.MPI_SOURCE);
    }
}

void pause_briefly() {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

}  // namespace

void end_job(const std::string& line, int code) {
    if (!mpi_running()) {
        print_line(line);
        std::_Exit(code);
    }
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // A peer that cannot be reached must not turn into Open MPI's error banner.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int reporter = lowest_failed_rank();  // a rank that failed before this one
    static int self = 0;                  // the failure messages' buffer: this never returns
    self = rank;
    std::vector<MPI_Request> sent;
    if (reporter < 0) {
        for (int peer = 0; peer < size; ++peer) {
            if (peer != rank) {
                MPI_Request request = MPI_REQUEST_NULL;
                if (MPI_Isend(&self, 1, MPI_INT, peer, end_job_tag, MPI_COMM_WORLD, &request) ==
                    MPI_SUCCESS) {
                    sent.push_back(request);
                }
            }
        }
        // Ranks that failed at the same time: the lowest reports.
        const Stopwatch tie;
        while (rank > 0 && tie.seconds() < tie_window_s) {
            const int other = lowest_failed_rank();
            if (other >= 0 && other < rank) {
                reporter = other;
                break;
            }
            pause_briefly();
        }
    }
    if (reporter >= 0) {
        // Rank `reporter` prints and ends the job; this rank waits for that, but not forever.
        const Stopwatch wait;
        while (wait.seconds() < defer_limit_s) {
            (void)lowest_failed_rank();  // progress (and our own messages out)
            pause_briefly();
        }
    }
    // Our failure messages out before the end (a rank still in its tie window reads them).
    const Stopwatch flush;
    int all_sent = 0;
    while (!sent.empty() && all_sent == 0 && flush.seconds() < 0.1) {
        if (MPI_Testall(static_cast<int>(sent.size()), sent.data(), &all_sent,
                        MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
            break;
        }
    }
    print_line(line);
    abort_quietly(code);
}

}  // namespace strata
