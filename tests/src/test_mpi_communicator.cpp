// Multi-rank tests of MpiCommunicator (and of StagedCommunicator over it, for the cases that run
// on both): exchanges whose every value names (sender, receiver, row, col), wait_any order,
// reversed patterns, exact byte counts, reductions and error paths.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/comm/mpi_check.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/comm/staged_communicator.hpp"
#include "src/device/backend.hpp"
#include "tests/support/all_ranks.hpp"

namespace strata {
namespace {

constexpr index_t num_cols = 3;

/// Exact in float for sender, receiver < 8, row < 64, col < 8, tag < 4.
float encode(int sender, int receiver, int row, int col, int tag = 0) {
    return static_cast<float>((((tag * 8 + sender) * 8 + receiver) * 64 + row) * 8 + col);
}

/// Rows rank `from` sends to rank `to` in the all-to-all test: distinct per pair, some zero.
index_t all_to_all_rows(int from, int to) {
    return static_cast<index_t>((from + 2 * to) % 4);
}

/// Ring: rank r sends r + 1 rows to r + 1 and receives from r - 1 (one peer when size = 2).
ExchangePattern ring_pattern(int rank, int size) {
    ExchangePattern pattern;
    if (size == 1) {
        return pattern;
    }
    const int next = (rank + 1) % size;
    const int prev = (rank + size - 1) % size;
    std::vector<int> peers{next, prev};
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    for (const int peer : peers) {
        pattern.peers.push_back(peer);
        const index_t send = peer == next ? static_cast<index_t>(rank + 1) : 0;
        const index_t recv = peer == prev ? static_cast<index_t>(prev + 1) : 0;
        pattern.send_offsets.push_back(pattern.send_offsets.back() + send);
        pattern.recv_offsets.push_back(pattern.recv_offsets.back() + recv);
    }
    return pattern;
}

/// All-to-all: every other rank is a peer, even with zero rows both ways.
ExchangePattern all_to_all_pattern(int rank, int size) {
    ExchangePattern pattern;
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) {
            continue;
        }
        pattern.peers.push_back(peer);
        pattern.send_offsets.push_back(pattern.send_offsets.back() + all_to_all_rows(rank, peer));
        pattern.recv_offsets.push_back(pattern.recv_offsets.back() + all_to_all_rows(peer, rank));
    }
    return pattern;
}

/// Send rows for peers[i] hold encode(rank, peers[i], row, col, tag).
std::vector<float> make_send(const ExchangePattern& pattern, int rank, int tag = 0) {
    std::vector<float> send(static_cast<std::size_t>(pattern.num_send_rows() * num_cols));
    for (std::size_t i = 0; i < pattern.peers.size(); ++i) {
        for (index_t r = pattern.send_offsets[i]; r < pattern.send_offsets[i + 1]; ++r) {
            for (index_t c = 0; c < num_cols; ++c) {
                send[static_cast<std::size_t>(r * num_cols + c)] =
                    encode(rank, pattern.peers[i], r - pattern.send_offsets[i], c, tag);
            }
        }
    }
    return send;
}

/// True when the rows from peers[i] are encode(peers[i], rank, row, col, tag) * sign.
bool rows_from_peer_ok(const ExchangePattern& pattern, std::size_t i,
                       const std::vector<float>& recv, int rank, int tag = 0, float sign = 1.0f) {
    bool ok = true;
    for (index_t r = pattern.recv_offsets[i]; r < pattern.recv_offsets[i + 1]; ++r) {
        for (index_t c = 0; c < num_cols; ++c) {
            const float expected =
                sign * encode(pattern.peers[i], rank, r - pattern.recv_offsets[i], c, tag);
            const float got = recv[static_cast<std::size_t>(r * num_cols + c)];
            if (got != expected) {
                UNSCOPED_INFO("rank " << rank << ": peer " << pattern.peers[i] << " row "
                                      << r - pattern.recv_offsets[i] << " col " << c << ": got "
                                      << got << ", expected " << expected);
                ok = false;
            }
        }
    }
    return ok;
}

ConstMatrixView const_view(const std::vector<float>& v, index_t rows) {
    return {v.data(), rows, num_cols};
}
MatrixView view(std::vector<float>& v, index_t rows) {
    return {v.data(), rows, num_cols};
}

/// Runs one exchange with wait_any, checking each peer's rows the moment it is returned and that
/// every peer index comes back exactly once, zero-receive peers first. Returns the recv buffer.
bool exchange_and_check(Communicator& comm, const ExchangePattern& pattern,
                        std::vector<float>& recv) {
    const int rank = comm.rank();
    const std::vector<float> send = make_send(pattern, rank);
    recv.assign(static_cast<std::size_t>(pattern.num_recv_rows() * num_cols), -1.0f);
    std::vector<int> returned;
    bool ok = true;

    auto exchange = comm.start_exchange(pattern, const_view(send, pattern.num_send_rows()),
                                        view(recv, pattern.num_recv_rows()));
    while (const std::optional<int> peer = exchange->wait_any()) {
        returned.push_back(*peer);
        ok = rows_from_peer_ok(pattern, static_cast<std::size_t>(*peer), recv, rank) && ok;
    }
    ok = !exchange->wait_any().has_value() && ok;  // stays exhausted
    exchange->wait_all();

    std::size_t num_zero = 0;
    for (std::size_t i = 0; i < pattern.peers.size(); ++i) {
        num_zero += pattern.recv_offsets[i + 1] == pattern.recv_offsets[i] ? 1 : 0;
    }
    for (std::size_t k = 0; k < returned.size(); ++k) {
        const auto i = static_cast<std::size_t>(returned[k]);
        const bool zero = pattern.recv_offsets[i + 1] == pattern.recv_offsets[i];
        if (zero != (k < num_zero)) {
            UNSCOPED_INFO("rank " << rank << ": peer index " << i << " returned at position " << k
                                  << " but " << num_zero << " zero-row peers come first");
            ok = false;
        }
    }
    std::vector<int> sorted = returned;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> expected(pattern.peers.size());
    std::iota(expected.begin(), expected.end(), 0);
    if (sorted != expected) {
        UNSCOPED_INFO("rank " << rank << ": wait_any returned " << returned.size()
                              << " peer indices for " << pattern.peers.size() << " peers");
        ok = false;
    }
    return ok;
}

/// Sends back (negated) what arrived, along the reversed pattern; the original sender checks.
bool send_back_and_check(Communicator& comm, const ExchangePattern& pattern,
                         const std::vector<float>& received) {
    const ExchangePattern back = pattern.reversed();
    std::vector<float> send(received.size());
    std::transform(received.begin(), received.end(), send.begin(), [](float x) { return -x; });
    std::vector<float> recv(static_cast<std::size_t>(back.num_recv_rows() * num_cols), 0.0f);

    auto exchange = comm.start_exchange(back, const_view(send, back.num_send_rows()),
                                        view(recv, back.num_recv_rows()));
    exchange->wait_all();

    // What comes back from peer q is what this rank sent to q: encode(rank, q, ...), negated.
    bool ok = true;
    for (std::size_t i = 0; i < pattern.peers.size(); ++i) {
        for (index_t r = back.recv_offsets[i]; r < back.recv_offsets[i + 1]; ++r) {
            for (index_t c = 0; c < num_cols; ++c) {
                const float expected =
                    -encode(comm.rank(), pattern.peers[i], r - back.recv_offsets[i], c);
                ok = ok && recv[static_cast<std::size_t>(r * num_cols + c)] == expected;
            }
        }
    }
    return ok;
}

/// The communicators these tests run on: MPI itself, and MPI staged through a backend's
/// buffers (StagedCommunicator on the CPU backend, where staging is a copy).
struct PlainMpi {
    MpiCommunicator comm;
};
struct StagedOnCpu {
    std::unique_ptr<Backend> cpu = make_cpu_backend(1);
    StagedCommunicator comm{*cpu, std::make_unique<MpiCommunicator>()};
};
/// Every wait through MpiWaiter's polling path (a limit far above any test's wait).
struct BoundedMpi {
    BoundedMpi() { comm.set_wait_limit(600.0); }
    MpiCommunicator comm;
};

template <class F>
bool throws_error_containing(F&& f, const std::string& part) {
    try {
        f();
    } catch (const Error& e) {
        const bool found = std::string(e.what()).find(part) != std::string::npos;
        if (!found) {
            UNSCOPED_INFO("message '" << e.what() << "' lacks '" << part << "'");
        }
        return found;
    }
    UNSCOPED_INFO("no strata::Error thrown, expected one containing '" << part << "'");
    return false;
}

}  // namespace

TEST_CASE("a communicator duplicates its parent and reports rank and size", "[mpi]") {
    int world_rank = 0;
    int world_size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    MpiCommunicator comm;

    int compare = MPI_UNEQUAL;
    MPI_Comm_compare(comm.comm(), MPI_COMM_WORLD, &compare);
    const bool ok = comm.rank() == world_rank && comm.size() == world_size &&
                    compare == MPI_CONGRUENT && comm.stats().bytes_sent == 0;
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("a communicator built on a split communicator reduces within its group", "[mpi]") {
    int world_rank = 0;
    int world_size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
    bool ok = true;
    {
        MpiCommunicator comm(half);
        std::vector<std::int64_t> ranks{world_rank};

        comm.allreduce_sum(ranks);

        // Group of parity p holds world ranks p, p + 2, ... below world_size.
        std::int64_t expected = 0;
        int members = 0;
        for (int r = world_rank % 2; r < world_size; r += 2) {
            expected += r;
            ++members;
        }
        ok = ranks[0] == expected && comm.size() == members && comm.rank() == world_rank / 2;
    }
    MPI_Comm_free(&half);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("split groups ranks by color, orders them by key, and keeps the wait limit", "[mpi]") {
    MpiCommunicator world;
    world.set_wait_limit(12.5);
    // The grid's two splits of 2 x F ranks: feature groups of consecutive ranks (color r / F),
    // graph groups of equal r mod F, each ranked in reverse to check the key.
    const int f = world.size() >= 2 ? 2 : 1;
    const int r = world.rank();
    const auto feature = world.split(r / f, -(r % f));
    const auto graph = world.split(r % f, r / f);
    std::vector<std::int64_t> sum{r};
    feature->allreduce_sum(sum);
    std::int64_t expected = 0;
    for (int q = (r / f) * f; q < std::min((r / f + 1) * f, world.size()); ++q) {
        expected += q;
    }
    const int members = std::min((r / f + 1) * f, world.size()) - (r / f) * f;
    CHECK(sum[0] == expected);
    CHECK(feature->size() == members);
    CHECK(feature->rank() == members - 1 - r % f);
    CHECK(graph->rank() == r / f);
    CHECK(feature->wait_limit() == 12.5);
    CHECK(graph->wait_limit() == 12.5);
    CHECK_THROWS_WITH(world.split(-1, 0), Catch::Matchers::Contains("split color -1"));
}

TEST_CASE("every rank knows every rank's node; a split inherits a pretended node map", "[mpi]") {
    MpiCommunicator world;
    // One machine under mpirun: one node.
    bool ok = world.num_nodes() == 1;
    for (int r = 0; r < world.size(); ++r) {
        ok = ok && world.node_of(r) == 0 && !world.other_node(r);
    }
    CHECK(test::all_ranks(ok));
    // Pretend: nodes of 2 ranks, ids given in any numbering.
    std::vector<int> nodes;
    for (int r = 0; r < world.size(); ++r) {
        nodes.push_back(100 - r / 2);
    }
    world.set_node_map(nodes);
    CHECK(world.num_nodes() == (world.size() + 1) / 2);
    CHECK(world.node_of(world.rank()) == world.rank() / 2);
    // The odd ranks and the even ranks: rank i of either is world rank 2 i (+ 1), on node i.
    const auto parity = world.split(world.rank() % 2, world.rank());
    ok = parity->num_nodes() == parity->size();
    for (int i = 0; i < parity->size(); ++i) {
        ok = ok && parity->node_of(i) == i;
    }
    CHECK(test::all_ranks(ok));
    CHECK_THROWS_WITH(world.set_node_map({0, 0, 0, 0, 0}),
                      Catch::Matchers::StartsWith("set_node_map: 5 nodes for a communicator of "
                                                  "size " +
                                                  std::to_string(world.size())));
    CHECK_THROWS_WITH(world.node_of(world.size()),
                      Catch::Matchers::Contains("node_of: rank " + std::to_string(world.size()) +
                                                " is not a rank"));
}

TEMPLATE_TEST_CASE("a ring exchange delivers every value to the right rank, row and column",
                   "[mpi]", PlainMpi, StagedOnCpu, BoundedMpi) {
    TestType fixture;
    Communicator& comm = fixture.comm;
    const ExchangePattern pattern = ring_pattern(comm.rank(), comm.size());
    std::vector<float> recv;

    const bool forward_ok = exchange_and_check(comm, pattern, recv);
    const bool back_ok = send_back_and_check(comm, pattern, recv);

    CHECK(forward_ok);
    CHECK(back_ok);
    REQUIRE(test::all_ranks(forward_ok && back_ok));
}

TEMPLATE_TEST_CASE("an all-to-all exchange with uneven and empty peers returns each peer once",
                   "[mpi]", PlainMpi, StagedOnCpu, BoundedMpi) {
    TestType fixture;
    Communicator& comm = fixture.comm;
    const ExchangePattern pattern = all_to_all_pattern(comm.rank(), comm.size());
    std::vector<float> recv;

    const bool forward_ok = exchange_and_check(comm, pattern, recv);
    const bool back_ok = send_back_and_check(comm, pattern, recv);

    CHECK(forward_ok);
    CHECK(back_ok);
    REQUIRE(test::all_ranks(forward_ok && back_ok));
}

TEMPLATE_TEST_CASE("two exchanges in flight at once each receive their own messages", "[mpi]",
                   PlainMpi, StagedOnCpu, BoundedMpi) {
    TestType fixture;
    Communicator& comm = fixture.comm;
    const int rank = comm.rank();
    const ExchangePattern pattern = all_to_all_pattern(rank, comm.size());
    const std::vector<float> send_a = make_send(pattern, rank, /*tag=*/1);
    const std::vector<float> send_b = make_send(pattern, rank, /*tag=*/2);
    const auto recv_size = static_cast<std::size_t>(pattern.num_recv_rows() * num_cols);
    std::vector<float> recv_a(recv_size, -1.0f);
    std::vector<float> recv_b(recv_size, -1.0f);

    auto a = comm.start_exchange(pattern, const_view(send_a, pattern.num_send_rows()),
                                 view(recv_a, pattern.num_recv_rows()));
    auto b = comm.start_exchange(pattern, const_view(send_b, pattern.num_send_rows()),
                                 view(recv_b, pattern.num_recv_rows()));
    b->wait_all();  // the later exchange first
    a->wait_all();

    bool ok = true;
    for (std::size_t i = 0; i < pattern.peers.size(); ++i) {
        ok = rows_from_peer_ok(pattern, i, recv_a, rank, 1) && ok;
        ok = rows_from_peer_ok(pattern, i, recv_b, rank, 2) && ok;
    }
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEMPLATE_TEST_CASE("wait_any after wait_all still returns every peer once", "[mpi]", PlainMpi,
                   StagedOnCpu, BoundedMpi) {
    TestType fixture;
    Communicator& comm = fixture.comm;
    const ExchangePattern pattern = all_to_all_pattern(comm.rank(), comm.size());
    const std::vector<float> send = make_send(pattern, comm.rank());
    std::vector<float> recv(static_cast<std::size_t>(pattern.num_recv_rows() * num_cols));

    auto exchange = comm.start_exchange(pattern, const_view(send, pattern.num_send_rows()),
                                        view(recv, pattern.num_recv_rows()));
    exchange->wait_all();
    std::vector<int> returned;
    while (const std::optional<int> peer = exchange->wait_any()) {
        returned.push_back(*peer);
    }

    std::sort(returned.begin(), returned.end());
    std::vector<int> expected(pattern.peers.size());
    std::iota(expected.begin(), expected.end(), 0);
    const bool ok = returned == expected;
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEMPLATE_TEST_CASE("stats count exactly the payload bytes of exchanges and reductions", "[mpi]",
                   PlainMpi, StagedOnCpu, BoundedMpi) {
    TestType fixture;
    Communicator& comm = fixture.comm;
    const int rank = comm.rank();
    const int size = comm.size();
    const ExchangePattern pattern = all_to_all_pattern(rank, size);
    std::vector<float> recv;
    std::int64_t rows_out = 0;
    std::int64_t rows_in = 0;
    for (int peer = 0; peer < size; ++peer) {
        if (peer != rank) {
            rows_out += all_to_all_rows(rank, peer);
            rows_in += all_to_all_rows(peer, rank);
        }
    }
    const std::int64_t exchange_out = rows_out * num_cols * 4;
    const std::int64_t exchange_in = rows_in * num_cols * 4;
    bool ok = exchange_and_check(comm, pattern, recv);  // counts from construction
    comm.reset_stats();
    ok = ok && comm.stats().bytes_sent == 0 && comm.stats().wait_seconds == 0.0;

    ok = exchange_and_check(comm, pattern, recv) && ok;
    const CommStats after_exchange = comm.stats();
    std::vector<float> floats(5, 1.0f);
    std::vector<double> doubles(3, 1.0);
    std::vector<std::int64_t> ints(2, 1);
    comm.allreduce_sum(floats);
    comm.allreduce_max(doubles);
    comm.allreduce_sum(ints);
    comm.start_allreduce_sum(floats)->wait();
    std::vector<std::byte> bytes(7);
    comm.broadcast(bytes, 0);
    comm.barrier();
    const CommStats& s = comm.stats();

    const std::int64_t collective = 5 * 4 + 3 * 8 + 2 * 8 + 5 * 4 + 7;
    INFO("rank " << rank << " sent " << s.bytes_sent << " received " << s.bytes_received);
    CHECK(after_exchange.bytes_sent == exchange_out);
    CHECK(after_exchange.bytes_received == exchange_in);
    CHECK(after_exchange.exchange_bytes_sent == exchange_out);
    CHECK(after_exchange.exchange_bytes_received == exchange_in);
    CHECK(after_exchange.collective_bytes == 0);
    CHECK(s.exchange_bytes_sent == exchange_out);
    CHECK(s.collective_bytes == collective);
    CHECK(s.bytes_sent == exchange_out + collective);
    CHECK(s.bytes_received == exchange_in + collective);
    CHECK(s.wait_seconds > after_exchange.wait_seconds);
    ok = ok && after_exchange.bytes_sent == exchange_out &&
         after_exchange.bytes_received == exchange_in &&
         after_exchange.exchange_bytes_sent == exchange_out &&
         after_exchange.exchange_bytes_received == exchange_in &&
         after_exchange.collective_bytes == 0 && s.exchange_bytes_sent == exchange_out &&
         s.collective_bytes == collective && s.bytes_sent == exchange_out + collective &&
         s.bytes_received == exchange_in + collective &&
         s.wait_seconds > after_exchange.wait_seconds;
    comm.reset_stats();
    ok = ok && comm.stats().bytes_received == 0 && comm.stats().collective_bytes == 0;
    REQUIRE(test::all_ranks(ok));
}

TEMPLATE_TEST_CASE("blocking reductions, broadcast and barrier give hand-checked values", "[mpi]",
                   PlainMpi, StagedOnCpu, BoundedMpi) {
    TestType fixture;
    Communicator& comm = fixture.comm;
    const int rank = comm.rank();
    const int p = comm.size();
    std::vector<float> f{1.0f, static_cast<float>(rank)};
    std::vector<double> d{0.5 * rank, -1.0};
    std::vector<std::int64_t> big{(std::int64_t{1} << 40) + rank, -rank};
    std::vector<double> dmax{1.5 * rank, -1.5 * rank};
    std::vector<std::int64_t> imax{-rank, std::int64_t{1} << 50};
    std::vector<std::byte> bytes{std::byte{0}, std::byte(rank + 10)};
    std::vector<float> empty;

    comm.allreduce_sum(f);
    comm.allreduce_sum(d);
    comm.allreduce_sum(big);
    comm.allreduce_max(dmax);
    comm.allreduce_max(imax);
    comm.broadcast(bytes, p - 1);
    comm.allreduce_sum(empty);
    comm.barrier();

    const std::int64_t rank_sum = std::int64_t{p} * (p - 1) / 2;
    bool ok = f[0] == static_cast<float>(p) && f[1] == static_cast<float>(rank_sum);
    ok = ok && d[0] == 0.5 * static_cast<double>(rank_sum) && d[1] == -p;
    ok = ok && big[0] == p * (std::int64_t{1} << 40) + rank_sum && big[1] == -rank_sum;
    ok = ok && dmax[0] == 1.5 * (p - 1) && dmax[1] == 0.0;
    ok = ok && imax[0] == 0 && imax[1] == std::int64_t{1} << 50;
    ok = ok && bytes[1] == std::byte(p - 1 + 10);
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

/// Rank r contributes 3r bytes (rank 0 none) of value 10r + i.
std::vector<std::byte> gather_contribution(int rank) {
    std::vector<std::byte> mine(static_cast<std::size_t>(3 * rank));
    for (std::size_t i = 0; i < mine.size(); ++i) {
        mine[i] = static_cast<std::byte>(10 * rank + static_cast<int>(i));
    }
    return mine;
}

/// What the root of a gather of gather_contribution() must hold.
bool gathered_ok(const std::vector<std::byte>& all, int rank, int root, int size) {
    if (rank != root) {
        return all.empty();
    }
    std::vector<std::byte> expected;
    for (int r = 0; r < size; ++r) {
        const std::vector<std::byte> part = gather_contribution(r);
        expected.insert(expected.end(), part.begin(), part.end());
    }
    return all == expected;
}

TEMPLATE_TEST_CASE("gather concatenates every rank's bytes in rank order on the root only", "[mpi]",
                   PlainMpi, StagedOnCpu, BoundedMpi) {
    TestType fixture;
    Communicator& comm = fixture.comm;
    const int root = comm.size() - 1;
    const std::vector<std::byte> mine = gather_contribution(comm.rank());
    const bool ok = gathered_ok(comm.gather(mine, root), comm.rank(), root, comm.size()) &&
                    gathered_ok(comm.gather(mine, 0), comm.rank(), 0, comm.size());
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("gather splits contributions larger than the message limit", "[mpi]") {
    MpiCommunicator comm;
    comm.set_max_message_bytes(2);  // 3r bytes: pieces of 2, 2, ... and a remainder
    const std::vector<std::byte> mine = gather_contribution(comm.rank());
    bool ok = gathered_ok(comm.gather(mine, 0), comm.rank(), 0, comm.size());
    ok = ok &&
         throws_error_containing([&] { (void)comm.gather(mine, comm.size()); }, "is not a rank");
    ok = ok && throws_error_containing([&] { comm.set_max_message_bytes(0); }, "not in [1");
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("all-reduces, a started all-reduce and broadcast split at the message limit", "[mpi]") {
    MpiCommunicator comm;
    comm.set_max_message_bytes(12);  // 3 floats, 1 double or int64 (12 / 8), 12 bytes a message
    const int rank = comm.rank();
    const int p = comm.size();
    const std::int64_t rank_sum = std::int64_t{p} * (p - 1) / 2;
    std::vector<float> f(10);
    std::vector<float> started(7);
    std::vector<double> d(5);
    std::vector<std::int64_t> big(4);
    std::vector<std::byte> bytes(29);
    for (std::size_t i = 0; i < f.size(); ++i) {
        f[i] = static_cast<float>(i) + static_cast<float>(rank);
    }
    for (std::size_t i = 0; i < started.size(); ++i) {
        started[i] = static_cast<float>(i * 2) * static_cast<float>(rank);
    }
    for (std::size_t i = 0; i < d.size(); ++i) {
        d[i] = 0.5 * static_cast<double>(i) * rank;
    }
    for (std::size_t i = 0; i < big.size(); ++i) {
        big[i] = (std::int64_t{1} << 40) * static_cast<std::int64_t>(i) + rank;
    }
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = std::byte(static_cast<int>(i) + (rank == p - 1 ? 100 : 0));
    }
    auto reduction = comm.start_allreduce_sum(started);
    comm.allreduce_sum(f);
    comm.allreduce_sum(d);
    comm.allreduce_max(big);
    comm.broadcast(bytes, p - 1);
    reduction->wait();

    bool ok = true;
    for (std::size_t i = 0; i < f.size(); ++i) {
        ok = ok && f[i] == static_cast<float>(static_cast<std::int64_t>(i) * p + rank_sum);
    }
    for (std::size_t i = 0; i < started.size(); ++i) {
        ok = ok && started[i] == static_cast<float>(static_cast<std::int64_t>(i) * 2 * rank_sum);
    }
    for (std::size_t i = 0; i < d.size(); ++i) {
        ok = ok && d[i] == 0.5 * static_cast<double>(i) * static_cast<double>(rank_sum);
    }
    for (std::size_t i = 0; i < big.size(); ++i) {
        ok = ok && big[i] == (std::int64_t{1} << 40) * static_cast<std::int64_t>(i) + (p - 1);
    }
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        ok = ok && bytes[i] == std::byte(static_cast<int>(i) + 100);
    }
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEMPLATE_TEST_CASE("a started all-reduce overlaps local work and then holds the global sum",
                   "[mpi]", PlainMpi, StagedOnCpu, BoundedMpi) {
    TestType fixture;
    Communicator& comm = fixture.comm;
    const int rank = comm.rank();
    const int p = comm.size();
    constexpr std::size_t n = 10000;
    std::vector<float> grads(n);
    for (std::size_t i = 0; i < n; ++i) {
        grads[i] = static_cast<float>(i % 100) + static_cast<float>(rank);
    }

    auto reduction = comm.start_allreduce_sum(grads);
    double local = 0.0;  // "backward of the next layer" while the reduction runs
    for (int i = 1; i <= 100000; ++i) {
        local += 1.0 / static_cast<double>(i) / static_cast<double>(i);
    }
    reduction->wait();

    bool ok = local > 1.64 && local < 1.65;
    const float rank_sum = static_cast<float>(p * (p - 1) / 2);
    for (std::size_t i = 0; i < n; ++i) {
        ok = ok && grads[i] == static_cast<float>(p) * static_cast<float>(i % 100) + rank_sum;
    }
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("start_exchange rejects patterns and matrices of the wrong shape", "[mpi]") {
    MpiCommunicator comm;
    const int rank = comm.rank();
    const int size = comm.size();
    ExchangePattern pattern;  // one fictitious peer, 2 rows out, 3 rows in
    pattern.peers = {(rank + 1) % size};
    pattern.send_offsets = {0, 2};
    pattern.recv_offsets = {0, 3};
    std::vector<float> buffer(64, 0.0f);
    const auto start = [&](const ExchangePattern& pat, index_t send_rows, index_t send_cols,
                           index_t recv_rows, index_t recv_cols) {
        return [&comm, &buffer, pat, send_rows, send_cols, recv_rows, recv_cols] {
            auto exchange = comm.start_exchange(pat, {buffer.data(), send_rows, send_cols},
                                                {buffer.data(), recv_rows, recv_cols});
        };
    };
    ExchangePattern self = pattern;
    self.peers = {rank};
    ExchangePattern outside = pattern;
    outside.peers = {size + 3};
    ExchangePattern short_offsets = pattern;
    short_offsets.recv_offsets = {0};
    ExchangePattern descending;
    descending.peers = {1, 0};
    descending.send_offsets = {0, 0, 0};
    descending.recv_offsets = {0, 0, 0};

    bool ok = true;
    if (size > 1) {  // with one rank, (rank + 1) % size is this rank
        ok = throws_error_containing(start(pattern, 1, 2, 3, 2), "send matrix has 1 rows") && ok;
        ok = throws_error_containing(start(pattern, 2, 2, 4, 2), "recv matrix has 4 rows") && ok;
        ok = throws_error_containing(start(pattern, 2, 2, 3, 5), "has 5") && ok;
        ok = throws_error_containing(start(short_offsets, 2, 2, 0, 2), "recv_offsets has 1") && ok;
    }
    ok = throws_error_containing(start(self, 2, 2, 3, 2), "is this rank itself") && ok;
    ok = throws_error_containing(start(outside, 2, 2, 3, 2), "is not a rank") && ok;
    ok = throws_error_containing(start(descending, 0, 2, 0, 2), "peers") && ok;
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("an empty pattern finishes at once and broadcast rejects a bad root", "[mpi]") {
    MpiCommunicator comm;
    const ExchangePattern empty;

    auto exchange = comm.start_exchange(empty, {}, {});
    bool ok = !exchange->wait_any().has_value();
    exchange->wait_all();
    std::vector<std::byte> bytes(4);
    ok = throws_error_containing([&] { comm.broadcast(bytes, comm.size()); }, "root") && ok;
    ok = throws_error_containing([&] { comm.broadcast(bytes, -1); }, "root") && ok;

    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("the wait limit is 0 (forever) by default and refuses negative values", "[mpi]") {
    MpiCommunicator comm;
    CHECK(comm.wait_limit() == 0.0);
    comm.set_wait_limit(2.5);
    CHECK(comm.wait_limit() == 2.5);
    CHECK(throws_error_containing([&] { comm.set_wait_limit(-1.0); },
                                  "communication wait limit -1 s is negative (0: wait forever)"));
    CHECK(comm.wait_limit() == 2.5);
}

TEST_CASE("mpi_check turns an MPI error code into an Error with MPI's message", "[mpi]") {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(MPI_ERR_COMM, text, &length);
    const std::string mpi_text(text, static_cast<std::size_t>(length));

    const bool ok =
        throws_error_containing([] { STRATA_MPI_CHECK(MPI_ERR_COMM); },
                                "MPI call failed: MPI_ERR_COMM: " + mpi_text) &&
        throws_error_containing([] { STRATA_MPI_CHECK(MPI_ERR_COMM); }, "test_mpi_communicator") &&
        (STRATA_MPI_CHECK(MPI_SUCCESS), true);

    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("patterns that disagree between two ranks throw instead of hanging", "[mpi]") {
    MpiCommunicator comm;
    const int rank = comm.rank();
    // Rank 0 sends 2 rows to rank 1, which expects 3 (short message); rank 1 sends 2 rows to
    // rank 0, which expects 1 (truncation, an MPI error). Other ranks take no part.
    ExchangePattern pattern;
    if (rank == 0 && comm.size() > 1) {
        pattern.peers = {1};
        pattern.send_offsets = {0, 2};
        pattern.recv_offsets = {0, 1};
    } else if (rank == 1) {
        pattern.peers = {0};
        pattern.send_offsets = {0, 2};
        pattern.recv_offsets = {0, 3};
    }
    std::vector<float> send(static_cast<std::size_t>(pattern.num_send_rows() * num_cols), 1.0f);
    std::vector<float> recv(static_cast<std::size_t>(pattern.num_recv_rows() * num_cols), 0.0f);

    const auto run = [&] {
        auto exchange = comm.start_exchange(pattern, const_view(send, pattern.num_send_rows()),
                                            view(recv, pattern.num_recv_rows()));
        exchange->wait_all();
    };
    bool ok = true;
    if (rank == 0 && comm.size() > 1) {
        ok = throws_error_containing(run, "MPI_ERR_TRUNCATE");
    } else if (rank == 1) {
        ok = throws_error_containing(run, "received 2 rows of 3 floats from rank 0, expected 3");
    } else {
        run();
    }

    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("an exchange abandoned by an exception does not wait for a peer that never sends",
          "[mpi]") {
    MpiCommunicator comm;
    const int rank = comm.rank();
    // Rank 1 expects a row from rank 0, which never starts the exchange. Without cancelling the
    // receive while unwinding, rank 1 would hang here until the test's TIMEOUT.
    ExchangePattern pattern;
    if (rank == 1) {
        pattern.peers = {0};
        pattern.send_offsets = {0, 0};
        pattern.recv_offsets = {0, 1};
    }
    std::vector<float> recv(static_cast<std::size_t>(pattern.num_recv_rows() * num_cols), 0.0f);

    bool ok = true;
    if (rank == 1) {
        ok = throws_error_containing(
            [&] {
                auto exchange = comm.start_exchange(pattern, {nullptr, 0, num_cols},
                                                    view(recv, pattern.num_recv_rows()));
                STRATA_FAIL("layer failed while rows were in flight");
            },
            "layer failed");
    }

    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}
TEST_CASE("the staged communicator reuses its staging buffers across exchanges and reductions",
          "[mpi]") {
    StagedOnCpu fixture;
    StagedCommunicator& comm = fixture.comm;
    const ExchangePattern pattern = all_to_all_pattern(comm.rank(), comm.size());
    std::vector<float> recv;
    std::vector<float> grads(100, 1.0f);
    bool ok = true;
    for (int round = 0; round < 10; ++round) {
        ok = exchange_and_check(comm, pattern, recv) && ok;
        ok = send_back_and_check(comm, pattern, recv) && ok;
        comm.start_allreduce_sum(grads)->wait();
    }
    // At most two buffers of an exchange and one of a reduction are ever lent at once.
    INFO("rank " << comm.rank() << ": " << comm.staging_buffers() << " staging buffers");
    ok = ok && comm.staging_buffers() <= 3;
    ok = ok && grads[0] == std::pow(static_cast<float>(comm.size()), 10.0f);
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

}  // namespace strata

namespace strata {

TEST_CASE(
    "progress completes exchanges and reductions in flight, and wait_any still returns "
    "every peer once",
    "[mpi]") {
    MpiCommunicator comm;
    CHECK(comm.needs_progress());
    const int rank = comm.rank();
    const ExchangePattern pattern = all_to_all_pattern(rank, comm.size());
    const std::vector<float> send = make_send(pattern, rank);
    std::vector<float> recv(static_cast<std::size_t>(pattern.num_recv_rows() * num_cols), -1.0f);
    std::vector<float> grads(300000, static_cast<float>(rank + 1));  // 1.2 MB: rendezvous size

    auto exchange = comm.start_exchange(pattern, const_view(send, pattern.num_send_rows()),
                                        view(recv, pattern.num_recv_rows()));
    auto reduction = comm.start_allreduce_sum(grads);
    const int started = comm.pending_requests();
    const double deadline = MPI_Wtime() + 60.0;
    while (comm.pending_requests() > 0 && MPI_Wtime() < deadline) {
        comm.progress();  // every rank calls only progress(): nothing else moves the transfers
    }
    const bool drained = comm.pending_requests() == 0;
    const double wait_before = comm.stats().wait_seconds;
    std::vector<int> returned;
    bool ok = true;
    while (const std::optional<int> peer = exchange->wait_any()) {
        returned.push_back(*peer);
        ok = rows_from_peer_ok(pattern, static_cast<std::size_t>(*peer), recv, rank) && ok;
    }
    exchange->wait_all();
    reduction->wait();
    std::sort(returned.begin(), returned.end());
    std::vector<int> all(pattern.peers.size());
    std::iota(all.begin(), all.end(), 0);
    const float sum = static_cast<float>(comm.size() * (comm.size() + 1) / 2);
    ok = ok && returned == all &&
         std::all_of(grads.begin(), grads.end(), [sum](float g) { return g == sum; });
    CHECK(drained);
    CHECK(started >= (comm.size() > 1 ? 2 : 0));  // the all-reduce at least, and a message
    CHECK(ok);
    CHECK(comm.stats().wait_seconds - wait_before < 1.0);  // nothing left to wait for
    exchange.reset();
    reduction.reset();
    CHECK(comm.pending_requests() == 0);
    REQUIRE(test::all_ranks(drained && ok));
}

}  // namespace strata
