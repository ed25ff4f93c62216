// MpiCommunicator and its in-flight objects (MpiExchange, MpiReduction): MPI point-to-point
// halo exchanges and reductions on host memory, every call checked.
#include "src/comm/mpi_communicator.hpp"

#include <algorithm>
#include <climits>
#include <deque>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/comm/exchange_check.hpp"
#include "src/comm/message_chunks.hpp"
#include "src/comm/mpi_check.hpp"
#include "src/comm/mpi_wait.hpp"
#include "src/comm/node_rank.hpp"

namespace strata {
namespace {

/// One tag for all exchanges: ordering comes from MPI's non-overtaking rule (see the header).
constexpr int exchange_tag = 1701;
/// gather()'s messages, apart from any exchange in flight.
constexpr int gather_tag = 1702;
/// all_to_all()'s messages, likewise.
constexpr int all_to_all_tag = 1703;

/// Registers an in-flight object with its communicator's list for its lifetime.
class Registration {
public:
    Registration(std::vector<detail::MpiInFlight*>& list, detail::MpiInFlight* item)
        : list_(list), item_(item) {
        list_.push_back(item_);
    }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration() { std::erase(list_, item_); }

private:
    std::vector<detail::MpiInFlight*>& list_;
    detail::MpiInFlight* item_;
};

/// MPI_Testsome on `requests`: the slots completed (their requests become MPI_REQUEST_NULL),
/// statuses[i] the status of slots[i].
std::vector<int> test_some(std::vector<MPI_Request>& requests, std::vector<MPI_Status>& statuses,
                           const char* what) {
    std::vector<int> slots(requests.size());
    statuses.resize(requests.size());
    int completed = 0;
    detail::mpi_check(MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &completed,
                                   slots.data(), statuses.data()),
                      what, __FILE__, __LINE__);
    slots.resize(completed == MPI_UNDEFINED ? 0 : static_cast<std::size_t>(completed));
    return slots;
}

/// Requests of one exchange. Receives are completed one by one (wait_any) so that the caller
/// can consume a peer's rows while the others are still in flight; progress() may complete
/// some earlier (they are then handed out first).
class MpiExchange final : public Exchange, public detail::MpiInFlight {
public:
    MpiExchange(MPI_Comm comm, CommStats& stats, const MpiWaiter& waiter, int rank,
                const ExchangePattern& pattern, std::vector<detail::MpiInFlight*>& in_flight)
        : comm_(comm),
          stats_(stats),
          waiter_(waiter),
          rank_(rank),
          peers_(pattern.peers),
          registration_(in_flight, this) {}
    MpiExchange(const MpiExchange&) = delete;
    MpiExchange& operator=(const MpiExchange&) = delete;

    ~MpiExchange() override {
        // A dangling request is a bug, so wait even during unwinding; errors are ignored here.
        // When an exception is unwinding through us, a peer may never send (it may be blocked
        // elsewhere until main() aborts): cancel the receives so that waiting cannot hang.
        // Cancelling a receive that already matched is harmless: it just completes.
        if (std::uncaught_exceptions() > uncaught_at_start_) {
            for (MPI_Request& request : recv_requests_) {
                if (request != MPI_REQUEST_NULL) {
                    MPI_Cancel(&request);
                }
            }
        }
        const ScopedTimer timer(stats_.wait_seconds);
        (void)waiter_.wait_all(recv_requests_, recv_rank_, "a halo exchange (receive)");
        (void)waiter_.wait_all(send_requests_, send_rank_, "a halo exchange (send)");
        if (row_type_ != MPI_DATATYPE_NULL) {
            MPI_Type_free(&row_type_);
        }
    }

    /// Rows of `width` elements of `element` (`element_bytes` each, named `unit` in messages):
    /// float rows or packed byte rows.
    struct RowFormat {
        index_t width = 0;
        MPI_Datatype element = MPI_FLOAT;
        std::size_t element_bytes = sizeof(float);
        const char* unit = "floats";
    };

    /// Sends first, then receives. Over TCP, Open MPI sends a large message as a request, the
    /// peer's reply, then the rest in one fragment, on the one connection both directions of a
    /// pair share, and a reply queues behind whatever bulk the replying rank is writing. A
    /// rank that posted its receive first would answer an early peer's request before its own
    /// request had left; the peer would then start its bulk before reading that request, and
    /// its answer would wait behind its whole message: one direction idle for a message's time
    /// (half the rate each way: bench/mpi_pair, docs/cluster.md "Open MPI over TCP"). With the
    /// send first, a rank's request always precedes its reply, so the peer answers it before
    /// it starts its bulk. The cost: a peer's small (eager) message that arrives between the
    /// two loops is copied once from the unexpected-message queue.
    /// Each message counts rows of a contiguous type of `width` elements: row counts are
    /// index_t, so a message of any byte size has an int count (Open MPI 4.1 has no large-count
    /// calls).
    void post(const ExchangePattern& pattern, const void* send, void* recv, RowFormat format) {
        const std::size_t num_peers = peers_.size();
        if (format.width > 0) {
            STRATA_MPI_CHECK(MPI_Type_contiguous(format.width, format.element, &row_type_));
            STRATA_MPI_CHECK(MPI_Type_commit(&row_type_));
        }
        element_ = format.element;
        unit_ = format.unit;
        const MPI_Datatype type = format.width > 0 ? row_type_ : element_;
        width_ = format.width;
        const std::size_t row_bytes = static_cast<std::size_t>(width_) * format.element_bytes;
        const auto at = [row_bytes](auto* base, index_t row) {
            return base + static_cast<std::size_t>(row) * row_bytes;
        };
        const auto* send_bytes = static_cast<const std::byte*>(send);
        auto* recv_bytes = static_cast<std::byte*>(recv);
        // Reserved up front: push_back after a request is posted must not throw.
        recv_requests_.reserve(num_peers);
        recv_peer_.reserve(num_peers);
        recv_count_.reserve(num_peers);
        recv_rank_.reserve(num_peers);
        send_requests_.reserve(num_peers);
        send_rank_.reserve(num_peers);
        for (std::size_t i = 0; i < num_peers; ++i) {
            const index_t rows = pattern.send_offsets[i + 1] - pattern.send_offsets[i];
            if (rows == 0) {
                continue;
            }
            const std::byte* rows_data = at(send_bytes, pattern.send_offsets[i]);
            MPI_Request request = MPI_REQUEST_NULL;
            STRATA_MPI_CHECK(MPI_Isend(rows_data, width_ > 0 ? rows : 0, type, peers_[i],
                                       exchange_tag, comm_, &request));
            send_requests_.push_back(request);
            send_rank_.push_back(peers_[i]);
        }
        for (std::size_t i = 0; i < num_peers; ++i) {
            const index_t rows = pattern.recv_offsets[i + 1] - pattern.recv_offsets[i];
            if (rows == 0) {
                ready_.push_back(static_cast<int>(i));
                continue;
            }
            std::byte* rows_data = at(recv_bytes, pattern.recv_offsets[i]);
            const int count = width_ > 0 ? rows : 0;
            MPI_Request request = MPI_REQUEST_NULL;
            STRATA_MPI_CHECK(
                MPI_Irecv(rows_data, count, type, peers_[i], exchange_tag, comm_, &request));
            recv_requests_.push_back(request);
            recv_peer_.push_back(static_cast<int>(i));
            recv_count_.push_back(count);
            recv_rank_.push_back(peers_[i]);
            ++pending_receives_;
        }
    }

    void test() override {
        if (pending_receives_ > 0) {
            const std::vector<int> slots =
                test_some(recv_requests_, statuses_, "MPI_Testsome(receives)");
            for (std::size_t i = 0; i < slots.size(); ++i) {
                --pending_receives_;
                ready_.push_back(
                    accept(static_cast<std::size_t>(slots[i]), MPI_SUCCESS, statuses_[i]));
            }
        }
        if (!send_requests_.empty()) {
            (void)test_some(send_requests_, statuses_, "MPI_Testsome(sends)");
        }
    }

    [[nodiscard]] int pending() const override {
        return static_cast<int>(std::count_if(recv_requests_.begin(), recv_requests_.end(),
                                              [](MPI_Request r) { return r != MPI_REQUEST_NULL; }) +
                                std::count_if(send_requests_.begin(), send_requests_.end(),
                                              [](MPI_Request r) { return r != MPI_REQUEST_NULL; }));
    }

    std::optional<int> wait_any() override {
        if (!ready_.empty()) {
            const int peer = ready_.front();
            ready_.pop_front();
            return peer;
        }
        return complete_one_receive();
    }

    void wait_all() override {
        while (const std::optional<int> peer = complete_one_receive()) {
            ready_.push_back(*peer);
        }
        int code = MPI_SUCCESS;
        {
            const ScopedTimer timer(stats_.wait_seconds);
            code = waiter_.wait_all(send_requests_, send_rank_, "a halo exchange (send)");
        }
        if (code != MPI_SUCCESS) {
            const std::string what =
                detail::concat("MPI_Waitall(sends of an exchange on rank ", rank_, ")");
            detail::mpi_check(code, what.c_str(), __FILE__, __LINE__);
        }
    }

private:
    /// Blocks until one more receive completes; returns its peer index, or nullopt when none
    /// is pending. Checks that the message had exactly the expected size.
    std::optional<int> complete_one_receive() {
        if (pending_receives_ == 0) {
            return std::nullopt;
        }
        int index = MPI_UNDEFINED;
        MPI_Status status{};
        int code = MPI_SUCCESS;
        {
            const ScopedTimer timer(stats_.wait_seconds);
            code = waiter_.wait_any(recv_requests_, recv_rank_, "a halo exchange (receive)", &index,
                                    &status);
        }
        if (index == MPI_UNDEFINED) {
            // Only after an earlier failed wait freed its request without telling us which.
            pending_receives_ = 0;
            return std::nullopt;
        }
        --pending_receives_;
        return accept(static_cast<std::size_t>(index), code, status);
    }

    /// Receive `slot` completed with `code`: checks it and its size; returns its peer index.
    int accept(std::size_t slot, int code, const MPI_Status& status) {
        const int peer = peers_[static_cast<std::size_t>(recv_peer_[slot])];
        if (code != MPI_SUCCESS) {
            const std::string what = detail::concat(
                "MPI_Waitany(receive from rank ", peer, " of an exchange on rank ", rank_,
                ", expecting ", recv_count_[slot], " rows of ", width_, " ", unit_, ")");
            detail::mpi_check(code, what.c_str(), __FILE__, __LINE__);
        }
        int received = 0;
        STRATA_MPI_CHECK(MPI_Get_count(&status, width_ > 0 ? row_type_ : element_, &received));
        STRATA_CHECK(received == recv_count_[slot], "exchange on rank ", rank_, ": received ",
                     received, " rows of ", width_, " ", unit_, " from rank ", peer, ", expected ",
                     recv_count_[slot],
                     " (the two ranks' patterns disagree, or they started exchanges in a ",
                     "different order)");
        return recv_peer_[slot];
    }

    MPI_Comm comm_;
    CommStats& stats_;
    const MpiWaiter& waiter_;
    int rank_;
    std::vector<int> peers_;
    std::vector<MPI_Request> recv_requests_;
    std::vector<int> recv_peer_;   ///< peer index of each receive request
    std::vector<int> recv_count_;  ///< expected rows of each receive request (0 when width 0)
    std::vector<int> recv_rank_;   ///< peer rank of each receive request
    std::vector<MPI_Request> send_requests_;
    std::vector<int> send_rank_;  ///< peer rank of each send request
    int pending_receives_ = 0;
    int uncaught_at_start_ = std::uncaught_exceptions();
    std::deque<int> ready_;  ///< peer indices whose rows are in place, not yet returned
    MPI_Datatype row_type_ = MPI_DATATYPE_NULL;  ///< `width_` contiguous elements
    MPI_Datatype element_ = MPI_FLOAT;           ///< MPI_FLOAT, or MPI_BYTE for packed rows
    const char* unit_ = "floats";
    index_t width_ = 0;
    std::vector<MPI_Status> statuses_;  ///< test()'s scratch
    Registration registration_;         ///< last: unregistered before the requests die
};

class MpiReduction final : public Reduction, public detail::MpiInFlight {
public:
    MpiReduction(CommStats& stats, const MpiWaiter& waiter,
                 std::vector<detail::MpiInFlight*>& in_flight)
        : stats_(stats), waiter_(waiter), registration_(in_flight, this) {}
    MpiReduction(const MpiReduction&) = delete;
    MpiReduction& operator=(const MpiReduction&) = delete;

    ~MpiReduction() override {
        const ScopedTimer timer(stats_.wait_seconds);
        for (MPI_Request& request : requests_) {
            if (request != MPI_REQUEST_NULL) {
                (void)waiter_.wait(request, collective_peer, what);
            }
        }
    }

    /// One MPI_Iallreduce per message chunk (message_chunks), all in flight together.
    void start(std::span<float> data, MPI_Comm comm, std::size_t max_elements) {
        const std::vector<MessageChunk> chunks = message_chunks(data.size(), max_elements);
        requests_.reserve(chunks.size());
        for (const MessageChunk& chunk : chunks) {
            requests_.push_back(MPI_REQUEST_NULL);
            STRATA_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data.data() + chunk.offset, chunk.count,
                                            MPI_FLOAT, MPI_SUM, comm, &requests_.back()));
        }
    }

    void test() override {
        for (MPI_Request& request : requests_) {
            if (request != MPI_REQUEST_NULL) {
                int done = 0;
                detail::mpi_check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what, __FILE__,
                                  __LINE__);
            }
        }
    }

    [[nodiscard]] int pending() const override {
        return static_cast<int>(std::count_if(requests_.begin(), requests_.end(),
                                              [](MPI_Request r) { return r != MPI_REQUEST_NULL; }));
    }

    void wait() override {
        const ScopedTimer timer(stats_.wait_seconds);
        for (MPI_Request& request : requests_) {
            STRATA_MPI_CHECK(waiter_.wait(request, collective_peer, what));
        }
    }

private:
    static constexpr const char* what = "an overlapped all-reduce (start_allreduce_sum)";
    CommStats& stats_;
    const MpiWaiter& waiter_;
    std::vector<MPI_Request> requests_;
    Registration registration_;
};

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm parent) {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    STRATA_CHECK(initialized != 0 && finalized == 0,
                 "MpiCommunicator: MPI is not initialised or already finalised (construct it "
                 "after the MpiSession and destroy it before)");
    STRATA_CHECK(parent != MPI_COMM_NULL, "MpiCommunicator: parent communicator is MPI_COMM_NULL");
    STRATA_MPI_CHECK(MPI_Comm_dup(parent, &comm_));
    try {
        STRATA_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
        STRATA_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
        STRATA_MPI_CHECK(MPI_Comm_size(comm_, &size_));
        waiter_ = MpiWaiter(rank_, size_);
        set_node_map(node_ids(comm_));
    } catch (...) {
        MPI_Comm_free(&comm_);
        throw;
    }
}

MpiCommunicator::~MpiCommunicator() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && finalized == 0) {
        MPI_Comm_free(&comm_);
    }
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
    STRATA_CHECK(color >= 0, "MpiCommunicator: split color ", color, " (must be at least 0)");
    MPI_Comm raw = MPI_COMM_NULL;
    STRATA_MPI_CHECK(MPI_Comm_split(comm_, color, key, &raw));
    // The split communicator lives only until the new MpiCommunicator has its duplicate.
    struct Freed {
        MPI_Comm& comm;
        ~Freed() {
            if (comm != MPI_COMM_NULL) {
                MPI_Comm_free(&comm);
            }
        }
    } freed{raw};
    auto part = std::make_unique<MpiCommunicator>(raw);
    part->set_wait_limit(wait_limit());
    part->set_max_message_bytes(max_message_bytes_);
    // This communicator's node map (a test's pretended one too), for the part's ranks.
    const int mine = nodes_[static_cast<std::size_t>(rank_)];
    std::vector<int> nodes(static_cast<std::size_t>(part->size()));
    STRATA_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, nodes.data(), 1, MPI_INT, part->comm()));
    part->set_node_map(nodes);
    return part;
}

int MpiCommunicator::node_of(int rank) const {
    STRATA_CHECK(rank >= 0 && rank < size_, "node_of: rank ", rank,
                 " is not a rank of a communicator of size ", size_);
    return nodes_[static_cast<std::size_t>(rank)];
}

void MpiCommunicator::set_node_map(const std::vector<int>& nodes) {
    STRATA_CHECK(nodes.size() == static_cast<std::size_t>(size_), "set_node_map: ", nodes.size(),
                 " nodes for a communicator of size ", size_);
    nodes_ = canonical_node_ids(nodes);
    num_nodes_ = nodes_.empty() ? 1 : *std::max_element(nodes_.begin(), nodes_.end()) + 1;
}

std::unique_ptr<Exchange> MpiCommunicator::start_exchange(const ExchangePattern& pattern,
                                                          ConstMatrixView send, MatrixView recv) {
    check_exchange(pattern, send, recv, rank_, size_);
    auto exchange =
        std::make_unique<MpiExchange>(comm_, stats_, waiter_, rank_, pattern, in_flight_);
    exchange->post(pattern, send.data, recv.data, {.width = send.cols});  // on failure, the
    // destructor waits for what was posted
    stats_.count_exchange(send.size() * sizeof(float), recv.size() * sizeof(float));
    return exchange;
}

std::unique_ptr<Exchange> MpiCommunicator::start_packed_exchange(const ExchangePattern& pattern,
                                                                 ConstPackedRows send,
                                                                 PackedRows recv) {
    check_packed_exchange(pattern, send, recv, rank_, size_);
    STRATA_CHECK(send.row_bytes <= static_cast<std::size_t>(INT_MAX), "packed exchange: rows of ",
                 send.row_bytes, " bytes exceed an int count");
    auto exchange =
        std::make_unique<MpiExchange>(comm_, stats_, waiter_, rank_, pattern, in_flight_);
    exchange->post(pattern, send.data, recv.data,
                   {.width = static_cast<index_t>(send.row_bytes),
                    .element = MPI_BYTE,
                    .element_bytes = 1,
                    .unit = "bytes"});
    stats_.count_exchange(send.size(), recv.size());
    return exchange;
}

std::unique_ptr<Reduction> MpiCommunicator::start_allreduce_sum(std::span<float> data) {
    auto reduction = std::make_unique<MpiReduction>(stats_, waiter_, in_flight_);
    reduction->start(data, comm_, max_message_elements(max_message_bytes_, sizeof(float)));
    stats_.count_collective(data.size_bytes());
    return reduction;
}

void MpiCommunicator::progress() {
    for (detail::MpiInFlight* item : in_flight_) {
        item->test();
    }
}

int MpiCommunicator::pending_requests() const {
    int pending = 0;
    for (const detail::MpiInFlight* item : in_flight_) {
        pending += item->pending();
    }
    return pending;
}

void MpiCommunicator::allreduce(void* data, std::size_t count, std::size_t element_bytes,
                                MPI_Datatype type, MPI_Op op, const char* what) {
    {
        const ScopedTimer timer(stats_.wait_seconds);
        auto* bytes = static_cast<std::byte*>(data);
        for (const MessageChunk& chunk :
             message_chunks(count, max_message_elements(max_message_bytes_, element_bytes))) {
            MPI_Request request = MPI_REQUEST_NULL;
            STRATA_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, bytes + chunk.offset * element_bytes,
                                            chunk.count, type, op, comm_, &request));
            STRATA_MPI_CHECK(waiter_.wait(request, collective_peer, what));
        }
    }
    stats_.count_collective(count * element_bytes);
}

void MpiCommunicator::allreduce_sum(std::span<float> data) {
    allreduce(data.data(), data.size(), sizeof(float), MPI_FLOAT, MPI_SUM, "allreduce_sum(float)");
}

void MpiCommunicator::allreduce_sum(std::span<double> data) {
    allreduce(data.data(), data.size(), sizeof(double), MPI_DOUBLE, MPI_SUM,
              "allreduce_sum(double)");
}

void MpiCommunicator::allreduce_sum(std::span<std::int64_t> data) {
    allreduce(data.data(), data.size(), sizeof(std::int64_t), MPI_INT64_T, MPI_SUM,
              "allreduce_sum(int64)");
}

void MpiCommunicator::allreduce_max(std::span<double> data) {
    allreduce(data.data(), data.size(), sizeof(double), MPI_DOUBLE, MPI_MAX,
              "allreduce_max(double)");
}

void MpiCommunicator::allreduce_max(std::span<std::int64_t> data) {
    allreduce(data.data(), data.size(), sizeof(std::int64_t), MPI_INT64_T, MPI_MAX,
              "allreduce_max(int64)");
}

void MpiCommunicator::broadcast(std::span<std::byte> data, int root) {
    STRATA_CHECK(root >= 0 && root < size_, "broadcast: root ", root,
                 " is not a rank of a communicator of size ", size_);
    {
        const ScopedTimer timer(stats_.wait_seconds);
        for (const MessageChunk& chunk :
             message_chunks(data.size(), max_message_elements(max_message_bytes_, 1))) {
            MPI_Request request = MPI_REQUEST_NULL;
            STRATA_MPI_CHECK(MPI_Ibcast(data.data() + chunk.offset, chunk.count, MPI_BYTE, root,
                                        comm_, &request));
            STRATA_MPI_CHECK(waiter_.wait(request, collective_peer, "broadcast"));
        }
    }
    stats_.count_collective(data.size());
}

std::vector<std::byte> MpiCommunicator::gather(std::span<const std::byte> data, int root) {
    STRATA_CHECK(root >= 0 && root < size_, "gather: root ", root,
                 " is not a rank of a communicator of size ", size_);
    const ScopedTimer timer(stats_.wait_seconds);
    const auto mine = static_cast<std::int64_t>(data.size());
    std::vector<std::int64_t> sizes(rank_ == root ? static_cast<std::size_t>(size_) : 0);
    MPI_Request request = MPI_REQUEST_NULL;
    STRATA_MPI_CHECK(
        MPI_Igather(&mine, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, root, comm_, &request));
    STRATA_MPI_CHECK(waiter_.wait(request, collective_peer, "gather (sizes)"));
    stats_.count_collective(data.size());
    // One message of at most max_message_bytes_ per piece, in order (non-overtaking).
    auto pieces = [this](std::size_t bytes, auto&& each) {
        for (const MessageChunk& chunk :
             message_chunks(bytes, max_message_elements(max_message_bytes_, 1))) {
            each(chunk.offset, chunk.count);
        }
    };
    if (rank_ != root) {
        pieces(data.size(), [&](std::size_t offset, int count) {
            MPI_Request send = MPI_REQUEST_NULL;
            STRATA_MPI_CHECK(
                MPI_Isend(data.data() + offset, count, MPI_BYTE, root, gather_tag, comm_, &send));
            STRATA_MPI_CHECK(waiter_.wait(send, root, "gather (send to the root)"));
        });
        return {};
    }
    std::size_t total = 0;
    for (const std::int64_t s : sizes) {
        total += static_cast<std::size_t>(s);
    }
    std::vector<std::byte> all(total);
    std::size_t first = 0;
    for (int r = 0; r < size_; ++r) {
        const auto bytes = static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]);
        if (r == root) {
            std::copy(data.begin(), data.end(), all.begin() + static_cast<std::ptrdiff_t>(first));
        } else {
            pieces(bytes, [&](std::size_t offset, int count) {
                MPI_Request recv = MPI_REQUEST_NULL;
                STRATA_MPI_CHECK(MPI_Irecv(all.data() + first + offset, count, MPI_BYTE, r,
                                           gather_tag, comm_, &recv));
                STRATA_MPI_CHECK(waiter_.wait(recv, r, "gather (receive at the root)"));
            });
        }
        first += bytes;
    }
    return all;
}

ReceivedBlocks MpiCommunicator::all_to_all(std::span<const std::byte> send,
                                           std::span<const std::size_t> send_offsets) {
    check_all_to_all(send.size(), send_offsets, size_);
    const ScopedTimer timer(stats_.wait_seconds);
    const auto p = static_cast<std::size_t>(size_);
    const auto me = static_cast<std::size_t>(rank_);
    std::vector<std::int64_t> send_counts(p);
    for (std::size_t q = 0; q < p; ++q) {
        send_counts[q] = static_cast<std::int64_t>(send_offsets[q + 1] - send_offsets[q]);
    }
    std::vector<std::int64_t> recv_counts(p);
    MPI_Request request = MPI_REQUEST_NULL;
    STRATA_MPI_CHECK(MPI_Ialltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1,
                                   MPI_INT64_T, comm_, &request));
    STRATA_MPI_CHECK(waiter_.wait(request, collective_peer, "all_to_all (sizes)"));
    stats_.count_collective(send.size());
    ReceivedBlocks received;
    received.offsets.assign(p + 1, 0);
    for (std::size_t q = 0; q < p; ++q) {
        received.offsets[q + 1] = received.offsets[q] + static_cast<std::size_t>(recv_counts[q]);
    }
    received.bytes.resize(received.offsets.back());
    std::copy_n(send.begin() + static_cast<std::ptrdiff_t>(send_offsets[me]), send_counts[me],
                received.bytes.begin() + static_cast<std::ptrdiff_t>(received.offsets[me]));

    const std::size_t max_count = max_message_elements(max_message_bytes_, 1);
    std::vector<MPI_Request> requests;
    std::vector<int> peers;  // the rank each request waits for
    // start(q, piece, request) for every piece of every block from (to) another rank q.
    const auto post = [&](const std::vector<std::int64_t>& counts, auto&& start) {
        for (int q = 0; q < size_; ++q) {
            const auto at = static_cast<std::size_t>(q);
            for (const MessageChunk& c :
                 message_chunks(q == rank_ ? 0 : static_cast<std::size_t>(counts[at]), max_count)) {
                requests.push_back(MPI_REQUEST_NULL);
                peers.push_back(q);
                start(at, c, requests.back());
            }
        }
    };
    // Sends first, as every exchange (MpiExchange::post says why).
    post(send_counts, [&](std::size_t q, const MessageChunk& c, MPI_Request& piece) {
        STRATA_MPI_CHECK(MPI_Isend(send.data() + send_offsets[q] + c.offset, c.count, MPI_BYTE,
                                   static_cast<int>(q), all_to_all_tag, comm_, &piece));
    });
    post(recv_counts, [&](std::size_t q, const MessageChunk& c, MPI_Request& piece) {
        STRATA_MPI_CHECK(MPI_Irecv(received.bytes.data() + received.offsets[q] + c.offset, c.count,
                                   MPI_BYTE, static_cast<int>(q), all_to_all_tag, comm_, &piece));
    });
    STRATA_MPI_CHECK(waiter_.wait_all(requests, peers, "all_to_all"));
    return received;
}

std::int64_t MpiCommunicator::agree_max(std::int64_t value, const char* what) {
    allreduce(&value, 1, sizeof(value), MPI_INT64_T, MPI_MAX, what);
    return value;
}

void MpiCommunicator::set_wait_limit(double seconds) {
    waiter_.set_limit(seconds);
}

void MpiCommunicator::set_max_message_bytes(std::size_t bytes) {
    STRATA_CHECK(bytes > 0 && bytes <= static_cast<std::size_t>(INT_MAX),
                 "set_max_message_bytes: ", bytes, " is not in [1, INT_MAX]");
    max_message_bytes_ = bytes;
}

void MpiCommunicator::barrier() {
    const ScopedTimer timer(stats_.wait_seconds);
    MPI_Request request = MPI_REQUEST_NULL;
    STRATA_MPI_CHECK(MPI_Ibarrier(comm_, &request));
    STRATA_MPI_CHECK(waiter_.wait(request, collective_peer, "barrier"));
}

}  // namespace strata
