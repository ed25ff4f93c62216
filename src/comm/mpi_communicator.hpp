// MpiCommunicator: the Communicator on host memory over MPI (Irecv/Isend/Waitany halo exchanges,
// Iallreduce for overlapped gradient sums). The only Communicator that <mpi.h> users see.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <mpi.h>

#include "src/comm/communicator.hpp"
#include "src/comm/mpi_wait.hpp"

namespace strata {

namespace detail {
/// An exchange or reduction of an MpiCommunicator in flight, tested by progress().
class MpiInFlight {
public:
    virtual ~MpiInFlight() = default;
    /// MPI_Testsome/MPI_Test on its pending requests; never blocks.
    virtual void test() = 0;
    /// Requests not yet completed.
    [[nodiscard]] virtual int pending() const = 0;
};
}  // namespace detail

/// Communicator over a private duplicate of an MPI communicator, on host memory.
///
/// Errors: every MPI call is checked (the duplicate uses MPI_ERRORS_RETURN) and a failure
/// throws strata::Error with MPI's message; bad patterns and shapes throw strata::Error too.
///
/// Exchange ordering contract: all exchanges use one fixed tag, so messages are matched by
/// MPI's non-overtaking rule (same sender, communicator and tag: in posting order). Several
/// exchanges may be in flight at once provided that every two ranks start the exchanges they
/// share in the same order (true when all ranks run the same sequence of layers). A received
/// message whose size differs from the pattern throws instead of being silently accepted.
///
/// Lifetime: the MPI session outlives the communicator, and the communicator outlives every
/// Exchange and Reduction it started (they update its stats). Not thread-safe; call it from
/// the thread that initialised MPI (MPI_THREAD_FUNNELED).
///
/// Waits: every wait for other ranks (exchanges, reductions, the blocking collectives, which
/// are started non-blocking and waited for) goes through one MpiWaiter, so set_wait_limit()
/// bounds all of them.
///
/// Destroying an Exchange or Reduction waits for its requests (never throws). An Exchange
/// destroyed while an exception unwinds first cancels its pending receives, so the throwing
/// rank reaches main()'s end_job even if a peer never sends; its sends are still waited for.
class MpiCommunicator final : public Communicator {
public:
    /// Duplicates `parent` (MPI_Comm_dup, collective over `parent`) and sets MPI_ERRORS_RETURN
    /// on the duplicate; learns every rank's node (node_ids). Throws strata::Error when MPI is
    /// not initialised or a call fails.
    explicit MpiCommunicator(MPI_Comm parent = MPI_COMM_WORLD);
    MpiCommunicator(const MpiCommunicator&) = delete;
    MpiCommunicator& operator=(const MpiCommunicator&) = delete;
    MpiCommunicator(MpiCommunicator&&) = delete;
    MpiCommunicator& operator=(MpiCommunicator&&) = delete;
    /// MPI_Comm_free (skipped after MPI_Finalize); never throws.
    ~MpiCommunicator() override;

    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int size() const override { return size_; }
    /// The private duplicate, e.g. to broadcast an NCCL id. Do not free it; p2p traffic on it
    /// must follow the exchange ordering contract above.
    [[nodiscard]] MPI_Comm comm() const { return comm_; }

    /// Posts one MPI_Isend per peer with send rows, then one MPI_Irecv per peer with receive
    /// rows (into recv rows [recv_offsets[i], recv_offsets[i+1])): sends first, so that over
    /// Open MPI's TCP no direction waits for the other's whole message (docs/cluster.md, "Open
    /// MPI over TCP"); returns at once.
    /// wait_any() first returns the peers that have no receive rows, then the others as their
    /// rows arrive. Requires: peers strictly ascending, in [0, size), not this rank; offsets of
    /// size peers+1, starting at 0, non-decreasing; send.rows == num_send_rows(),
    /// recv.rows == num_recv_rows(), send.cols == recv.cols. Throws strata::Error otherwise.
    /// Stats: exchange_bytes_sent and bytes_sent += 4 * send.rows * cols; exchange_bytes_received
    /// and bytes_received += 4 * recv.rows * cols (counted when started).
    [[nodiscard]] std::unique_ptr<Exchange> start_exchange(const ExchangePattern& pattern,
                                                           ConstMatrixView send,
                                                           MatrixView recv) override;
    /// As start_exchange, with rows of send.row_bytes bytes (MPI_BYTE rows; packed halo rows).
    /// Stats: the bytes of send and recv (counted when started).
    [[nodiscard]] std::unique_ptr<Exchange> start_packed_exchange(const ExchangePattern& pattern,
                                                                  ConstPackedRows send,
                                                                  PackedRows recv) override;
    /// MPI_Iallreduce(MPI_IN_PLACE, SUM); `data` must stay alive and untouched until wait()
    /// (or the Reduction's destruction, which waits). Stats as for the blocking all-reduces.
    [[nodiscard]] std::unique_ptr<Reduction> start_allreduce_sum(std::span<float> data) override;

    /// Blocking in-place reductions over all ranks. Stats: the buffer's bytes are added once to
    /// collective_bytes, bytes_sent and bytes_received (so bytes_sent = exchange_bytes_sent +
    /// collective_bytes); the time spent inside the call is added to wait_seconds.
    void allreduce_sum(std::span<float> data) override;
    void allreduce_sum(std::span<double> data) override;
    void allreduce_sum(std::span<std::int64_t> data) override;
    void allreduce_max(std::span<double> data) override;
    void allreduce_max(std::span<std::int64_t> data) override;
    /// Copies `data` of rank `root` to every rank (same size everywhere). Stats as for the
    /// all-reduces, on every rank (root included).
    void broadcast(std::span<std::byte> data, int root) override;
    /// MPI_Gather of the sizes, then point-to-point messages of at most max_message_bytes()
    /// each (no int overflow for gathers beyond 2 GiB). Stats: each rank counts its own
    /// contribution, as for the all-reduces.
    [[nodiscard]] std::vector<std::byte> gather(std::span<const std::byte> data, int root) override;
    /// The block sizes by MPI_Ialltoall (int64), then one round of MPI_Isend/MPI_Irecv of at
    /// most max_message_bytes() each (message_chunks; this rank's own block is copied), on a tag
    /// of its own so that it never matches an exchange. Stats: send.size() as a collective.
    [[nodiscard]] ReceivedBlocks all_to_all(std::span<const std::byte> send,
                                            std::span<const std::size_t> send_offsets) override;
    /// Adds wait time only.
    void barrier() override;
    /// MPI_Comm_split of the duplicate, then an MpiCommunicator over the result (which it
    /// duplicates; the split communicator is freed at once). The new one has this one's wait
    /// limit, max_message_bytes and node of each rank (set_node_map's included).
    [[nodiscard]] std::unique_ptr<Communicator> split(int color, int key) override;

    /// MPI_Iallreduce(MAX) of one int64, waited for under the name `what`.
    [[nodiscard]] std::int64_t agree_max(std::int64_t value, const char* what) override;

    /// From now on, a rank that waits more than `seconds` for one operation ends the job with one
    /// line naming the peer and the operation (MpiWaiter, end_job; a cut or crawling network
    /// link). 0 (the default): wait forever.
    void set_wait_limit(double seconds) override;
    [[nodiscard]] double wait_limit() const override { return waiter_.limit(); }

    /// Largest single MPI message of gather(), all_to_all(), broadcast() and the all-reduces:
    /// 1 GiB; a larger buffer goes as several messages of at most this many bytes and INT_MAX
    /// elements (message_chunks); smaller values are for tests. Exchanges count rows of a row
    /// datatype instead (always an int count).
    [[nodiscard]] std::size_t max_message_bytes() const { return max_message_bytes_; }
    void set_max_message_bytes(std::size_t bytes);

    /// True: Open MPI's TCP transport and rendezvous transfers move only inside MPI calls.
    [[nodiscard]] bool needs_progress() const override { return true; }
    /// MPI_Testsome on the requests of every exchange and reduction this communicator started
    /// that is still alive (receives it completes are size-checked here, as in wait_any()).
    /// Throws strata::Error on an MPI error or a message of the wrong size.
    void progress() override;
    /// Requests of live exchanges and reductions not yet completed (for tests).
    [[nodiscard]] int pending_requests() const;

    /// The node of `rank` (node_ids at construction, or set_node_map's).
    [[nodiscard]] int node_of(int rank) const override;
    [[nodiscard]] int num_nodes() const override { return num_nodes_; }
    /// Pretends that rank r is on node nodes[r] (any ids; renumbered as node_ids numbers them):
    /// a topology for tests on one machine. Every rank must pass the same map; splits made
    /// afterwards inherit it. Throws strata::Error unless nodes.size() == size().
    void set_node_map(const std::vector<int>& nodes);

    [[nodiscard]] const CommStats& stats() const override { return stats_; }
    void reset_stats() override { stats_ = CommStats{}; }

private:
    void allreduce(void* data, std::size_t count, std::size_t element_bytes, MPI_Datatype type,
                   MPI_Op op, const char* what);

    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0;
    int size_ = 1;
    CommStats stats_;
    MpiWaiter waiter_{0, 1};
    std::size_t max_message_bytes_ = std::size_t{1} << 30;
    std::vector<detail::MpiInFlight*> in_flight_;  ///< live exchanges and reductions
    std::vector<int> nodes_;                       ///< node of each rank
    int num_nodes_ = 1;
};

}  // namespace strata
