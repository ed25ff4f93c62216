// MpiWaiter: the one place where MpiCommunicator waits for other ranks. Without a limit it is
// MPI_Wait/Waitany/Waitall; with one it polls, and a rank that has waited that long for one
// operation ends the job with one line naming the peer and the operation (end_job):
// a cut or crawling network link ends the job instead of hanging it (docs/training.md). Each wait
// is a trace span named by the operation, category "wait" (src/base/trace.hpp).
#pragma once

#include <span>

#include <mpi.h>

namespace strata {

/// The peer of a request that belongs to a collective (no single rank to blame).
inline constexpr int collective_peer = -1;

class MpiWaiter {
public:
    /// `rank` of `size`: this rank in the communicator whose requests are waited for (for the
    /// message).
    MpiWaiter(int rank, int size) : rank_(rank), size_(size) {}

    /// 0: wait forever (the default); > 0: the most seconds one wait may take. Throws
    /// strata::Error for a negative value.
    void set_limit(double seconds);
    [[nodiscard]] double limit() const { return limit_; }

    /// The MPI_Wait* of the same name, returning its code. `peers[i]` is the rank requests[i]
    /// waits for (collective_peer for a collective); `what` names the operation. When a limit is
    /// set and it expires first, this ends the job (end_job: the job's one error line) with
    ///   strata: rank R: no progress from rank P for S s in WHAT (network failure?): aborting
    /// (P: the ranks of the requests still pending; for a collective the other rank of a
    /// 2-rank communicator, else "the other ranks"); it does not return then.
    int wait(MPI_Request& request, int peer, const char* what) const;
    int wait_any(std::span<MPI_Request> requests, std::span<const int> peers, const char* what,
                 int* index, MPI_Status* status) const;
    int wait_all(std::span<MPI_Request> requests, std::span<const int> peers,
                 const char* what) const;

private:
    [[noreturn]] void expire(std::span<const MPI_Request> requests, std::span<const int> peers,
                             const char* what) const;

    int rank_;
    int size_;
    double limit_ = 0.0;
};

}  // namespace strata
