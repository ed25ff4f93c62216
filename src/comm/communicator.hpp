// Communicator: halo exchanges and reductions between ranks (MPI on host data; MPI staged
// through host buffers, or NCCL, on device data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "src/base/types.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// Who exchanges how many rows with whom, for one direction of a halo exchange.
/// Rows for peers[i] are send rows [send_offsets[i], send_offsets[i+1]) of the send matrix;
/// rows from peers[i] land in recv rows [recv_offsets[i], recv_offsets[i+1]).
struct ExchangePattern {
    std::vector<int> peers;                ///< ascending rank order
    std::vector<index_t> send_offsets{0};  ///< size peers+1, prefix sums of rows
    std::vector<index_t> recv_offsets{0};  ///< size peers+1

    [[nodiscard]] index_t num_send_rows() const { return send_offsets.back(); }
    [[nodiscard]] index_t num_recv_rows() const { return recv_offsets.back(); }
    /// The pattern with send and receive swapped (the backward exchange).
    [[nodiscard]] ExchangePattern reversed() const { return {peers, recv_offsets, send_offsets}; }
};

class Communicator;

/// Send rows of `pattern` that go to ranks on another node than `comm`'s rank (node_of).
[[nodiscard]] index_t rows_to_other_nodes(const Communicator& comm, const ExchangePattern& pattern);

/// rows x row_bytes bytes, contiguous, in host memory: packed halo rows (src/comm/halo_packing).
struct PackedRows {
    std::byte* data = nullptr;
    index_t rows = 0;
    std::size_t row_bytes = 0;

    [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(rows) * row_bytes; }
    [[nodiscard]] std::span<std::byte> bytes() const { return {data, size()}; }
    /// Rows [first, first + count) as a view of their own.
    [[nodiscard]] PackedRows row_range(index_t first, index_t count) const {
        return {data + static_cast<std::size_t>(first) * row_bytes, count, row_bytes};
    }
};

struct ConstPackedRows {
    const std::byte* data = nullptr;
    index_t rows = 0;
    std::size_t row_bytes = 0;

    ConstPackedRows() = default;
    ConstPackedRows(const std::byte* d, index_t r, std::size_t b)
        : data(d), rows(r), row_bytes(b) {}
    ConstPackedRows(PackedRows v) : data(v.data), rows(v.rows), row_bytes(v.row_bytes) {}  // NOLINT

    [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(rows) * row_bytes; }
    [[nodiscard]] std::span<const std::byte> bytes() const { return {data, size()}; }
};

/// Traffic counters of a communicator, in bytes of payload.
struct CommStats {
    std::int64_t bytes_sent = 0;               ///< all payload sent (exchanges + collectives)
    std::int64_t bytes_received = 0;           ///< all payload received (exchanges + collectives)
    std::int64_t exchange_bytes_sent = 0;      ///< halo-exchange payload only
    std::int64_t exchange_bytes_received = 0;  ///< halo-exchange payload only
    std::int64_t collective_bytes =
        0;                      ///< payload of all-reduces/broadcasts/gathers (buffer bytes)
    double wait_seconds = 0.0;  ///< time blocked waiting for messages or reductions

    /// An exchange of these payload sizes (counted when it starts).
    void count_exchange(std::size_t sent, std::size_t received) {
        exchange_bytes_sent += static_cast<std::int64_t>(sent);
        exchange_bytes_received += static_cast<std::int64_t>(received);
        bytes_sent += static_cast<std::int64_t>(sent);
        bytes_received += static_cast<std::int64_t>(received);
    }
    /// A collective over a buffer of `bytes` (counted once as sent and once as received).
    void count_collective(std::size_t bytes) {
        collective_bytes += static_cast<std::int64_t>(bytes);
        bytes_sent += static_cast<std::int64_t>(bytes);
        bytes_received += static_cast<std::int64_t>(bytes);
    }
};

/// One exchange in flight. The destructor waits for outstanding requests.
class Exchange {
public:
    virtual ~Exchange() = default;
    /// Index into `pattern.peers` of a peer whose rows have arrived (any order);
    /// std::nullopt once every peer has been returned.
    virtual std::optional<int> wait_any() = 0;
    /// Waits for every message (sends included).
    virtual void wait_all() = 0;
};

/// What one rank received in an all_to_all: the block from rank s is
/// bytes[offsets[s], offsets[s + 1]).
struct ReceivedBlocks {
    std::vector<std::byte> bytes;
    std::vector<std::size_t> offsets;  ///< size() + 1

    [[nodiscard]] std::span<const std::byte> from(int rank) const {
        const auto r = static_cast<std::size_t>(rank);
        return std::span<const std::byte>(bytes).subspan(offsets[r], offsets[r + 1] - offsets[r]);
    }
};

/// A reduction in flight (e.g. the weight-gradient all-reduce overlapping backward).
class Reduction {
public:
    virtual ~Reduction() = default;
    virtual void wait() = 0;
};

class Communicator {
public:
    virtual ~Communicator() = default;
    [[nodiscard]] virtual int rank() const = 0;
    [[nodiscard]] virtual int size() const = 0;

    /// Starts sending send rows to / receiving recv rows from every peer of `pattern`;
    /// returns at once. `send`, `recv` must stay alive until the exchange is finished.
    /// Ordering (here and in start_allreduce_sum): `send` (`data`) is read only after all work
    /// already queued on the backend that owns it, and work queued after wait_any() returns a
    /// peer (after wait()) sees that peer's rows (the sums): host communicators on a CPU
    /// backend run in program order; staged and NCCL communicators synchronize or use events.
    [[nodiscard]] virtual std::unique_ptr<Exchange> start_exchange(const ExchangePattern& pattern,
                                                                   ConstMatrixView send,
                                                                   MatrixView recv) = 0;
    /// As start_exchange, for rows of send.row_bytes bytes each (packed halo rows, host
    /// memory); send.row_bytes == recv.row_bytes. The default throws strata::Error: only the
    /// MPI communicator on host memory carries packed rows (halo_precision other than fp32).
    [[nodiscard]] virtual std::unique_ptr<Exchange> start_packed_exchange(
        const ExchangePattern& pattern, ConstPackedRows send, PackedRows recv);
    /// In-place sum over ranks, started now, finished by wait().
    [[nodiscard]] virtual std::unique_ptr<Reduction> start_allreduce_sum(std::span<float> data) = 0;
    /// Blocking in-place sums over ranks (host data).
    virtual void allreduce_sum(std::span<float> data) = 0;
    virtual void allreduce_sum(std::span<double> data) = 0;
    virtual void allreduce_sum(std::span<std::int64_t> data) = 0;
    virtual void allreduce_max(std::span<double> data) = 0;
    virtual void allreduce_max(std::span<std::int64_t> data) = 0;
    virtual void broadcast(std::span<std::byte> data, int root) = 0;
    /// Rank `root` returns every rank's `data` concatenated in rank order (sizes may differ,
    /// also 0); the other ranks return an empty vector. Host memory.
    [[nodiscard]] virtual std::vector<std::byte> gather(std::span<const std::byte> data,
                                                        int root) = 0;
    /// Collective, host memory: send[send_offsets[d], send_offsets[d + 1]) goes to rank d (this
    /// rank included); returns the blocks sent to this rank, in source-rank order. send_offsets:
    /// size() + 1 non-decreasing byte offsets from 0 to send.size(); blocks may be empty or of
    /// any size (64-bit counts, messages split by message_chunks). Throws strata::Error on bad
    /// offsets (check_all_to_all). Stats: as the calls it makes count them (MpiCommunicator:
    /// send.size() as a collective).
    /// The default runs size() rounds of gather(), one per destination d (the block sizes, then
    /// the blocks, to root d), so that every communicator has it; MpiCommunicator overrides it
    /// with one round of point-to-point messages. Meant for loading and setup (the rows of a
    /// graph, the reverse edges of a slice), not for per-epoch traffic.
    [[nodiscard]] virtual ReceivedBlocks all_to_all(std::span<const std::byte> send,
                                                    std::span<const std::size_t> send_offsets);
    virtual void barrier() = 0;

    /// Collective over this communicator (MPI_Comm_split): the ranks that pass the same `color`
    /// (>= 0) form a new communicator, ranked by `key` (ties by their rank here); it gets this
    /// one's wait limit. The grid's graph and feature groups (docs/layouts.md). The default
    /// throws strata::Error: a communicator that cannot be split (staged, NCCL).
    [[nodiscard]] virtual std::unique_ptr<Communicator> split(int color, int key);

    /// Max over ranks of one value (host), a small agreement between ranks (run_alone's
    /// heartbeat); `what` names it in the wait limit's message. Stats as for allreduce_max.
    /// The default calls allreduce_max.
    [[nodiscard]] virtual std::int64_t agree_max(std::int64_t value, const char* what);

    /// Bounds every later wait for other ranks: a rank that waits more than `seconds` for one
    /// operation ends the job with one line naming the peer and the operation (end_job), so that
    /// a failed network link cannot hang the job. 0: wait forever (the default). Communicators
    /// that cannot bound their waits (NCCL's run on the GPU) ignore it. Work that one rank does
    /// while the others wait for it goes through run_alone, so that the limit bounds a silent
    /// rank, not the length of that work.
    virtual void set_wait_limit(double seconds) { (void)seconds; }
    /// The limit set_wait_limit set and this communicator enforces (0: none).
    [[nodiscard]] virtual double wait_limit() const { return 0.0; }

    /// Whether progress() does anything: true where nonblocking transfers advance only inside
    /// calls into the library (MPI over TCP, rendezvous protocols), so that a caller overlapping
    /// them with computation should call progress() now and then.
    [[nodiscard]] virtual bool needs_progress() const { return false; }
    /// Lets every exchange and reduction in flight advance (MPI: MPI_Testsome on their
    /// requests), then returns at once; never blocks. Receives it completes are handed out by
    /// the exchange's later wait_any() as usual. No-op by default.
    virtual void progress() {}

    /// The node (host: one shared-memory domain) of rank `rank` of this communicator, in
    /// [0, num_nodes()), nodes numbered in the order of their lowest rank. The grid places its
    /// feature groups inside nodes by it, and the byte counters split by it (docs/layouts.md,
    /// "Topology"). The default: every rank on node 0 (communicators that cannot tell: NCCL,
    /// tests' fakes). MpiCommunicator asks MPI (MPI_COMM_TYPE_SHARED); its splits inherit it.
    [[nodiscard]] virtual int node_of(int rank) const {
        (void)rank;
        return 0;
    }
    /// How many nodes this communicator's ranks are on (1 by default).
    [[nodiscard]] virtual int num_nodes() const { return 1; }
    /// Whether rank `peer` is on another node than this rank.
    [[nodiscard]] bool other_node(int peer) const { return node_of(peer) != node_of(rank()); }

    [[nodiscard]] virtual const CommStats& stats() const = 0;
    virtual void reset_stats() = 0;
};

}  // namespace strata
