// Communicator::all_to_all: MpiCommunicator's point-to-point override, the default (P rounds of
// gather(), called directly and through GatherAllToAll) and ForwardingCommunicator's forward give
// the same blocks, equal to what was sent: uneven, empty and all-empty blocks, and many pieces
// when the message limit is small (the large-count path). Bad offsets throw on every rank.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "src/comm/forwarding_communicator.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/gather_all_to_all.hpp"

namespace strata {
namespace {

/// The block rank `from` sends to rank `to`: empty for from == to + 1, else (from + 2 to) % 5 + 1
/// bytes, and 300 more from rank 0 to the last rank; byte k = from * 31 + to * 7 + k.
std::vector<std::byte> block(int from, int to, int size) {
    int n = from == to + 1 ? 0 : (from + 2 * to) % 5 + 1;
    n += from == 0 && to == size - 1 ? 300 : 0;
    std::vector<std::byte> b;
    for (int k = 0; k < n; ++k) {
        b.push_back(static_cast<std::byte>(from * 31 + to * 7 + k));
    }
    return b;
}

struct Send {
    std::vector<std::byte> bytes;
    std::vector<std::size_t> offsets{0};
};

Send blocks_of(int rank, int size, bool empty) {
    Send send;
    for (int to = 0; to < size; ++to) {
        if (!empty) {
            const std::vector<std::byte> b = block(rank, to, size);
            send.bytes.insert(send.bytes.end(), b.begin(), b.end());
        }
        send.offsets.push_back(send.bytes.size());
    }
    return send;
}

/// Whether `got` holds block(s, rank) from every rank s (nothing when `empty`).
bool delivered(const ReceivedBlocks& got, int rank, int size, bool empty) {
    if (got.offsets.size() != static_cast<std::size_t>(size) + 1 ||
        got.offsets.back() != got.bytes.size()) {
        return false;
    }
    for (int from = 0; from < size; ++from) {
        const auto span = got.from(from);
        const std::vector<std::byte> expected =
            empty ? std::vector<std::byte>{} : block(from, rank, size);
        if (std::vector<std::byte>(span.begin(), span.end()) != expected) {
            return false;
        }
    }
    return true;
}

TEST_CASE("all_to_all: point-to-point, gather rounds and forwarding deliver the same blocks",
          "[mpi]") {
    for (const std::size_t limit : {std::size_t{1} << 30, std::size_t{3}, std::size_t{1}}) {
        for (const bool empty : {false, true}) {
            MpiCommunicator comm;
            comm.set_max_message_bytes(limit);
            const int rank = comm.rank();
            const int size = comm.size();
            const Send send = blocks_of(rank, size, empty);
            const ReceivedBlocks p2p = comm.all_to_all(send.bytes, send.offsets);
            const ReceivedBlocks gathers = comm.Communicator::all_to_all(send.bytes, send.offsets);
            test::GatherAllToAll gather_comm(comm);
            const ReceivedBlocks decorated = gather_comm.all_to_all(send.bytes, send.offsets);
            ForwardingCommunicator forwarding(comm);
            const ReceivedBlocks forwarded = forwarding.all_to_all(send.bytes, send.offsets);
            INFO("message limit " << limit << (empty ? ", all blocks empty" : ""));
            CHECK(test::all_ranks(delivered(p2p, rank, size, empty)));
            CHECK(test::all_ranks(gathers.bytes == p2p.bytes && gathers.offsets == p2p.offsets));
            CHECK(
                test::all_ranks(decorated.bytes == p2p.bytes && decorated.offsets == p2p.offsets));
            CHECK(
                test::all_ranks(forwarded.bytes == p2p.bytes && forwarded.offsets == p2p.offsets));
        }
    }
}

TEST_CASE("all_to_all: bad send offsets throw on every rank, in both implementations", "[mpi]") {
    MpiCommunicator comm;
    const std::vector<std::byte> bytes(4);
    const auto p = static_cast<std::size_t>(comm.size());
    std::vector<std::size_t> decreasing(p + 1, 4);  // 0, 5, 4, ... (1 rank: 0, 5)
    decreasing[0] = 0;
    decreasing[1] = 5;
    const std::vector<std::vector<std::size_t>> bad{
        std::vector<std::size_t>(p, 0),      // size() entries, not size() + 1
        std::vector<std::size_t>(p + 1, 0),  // not up to send.size()
        decreasing};
    for (const std::vector<std::size_t>& offsets : bad) {
        CHECK_THROWS_WITH(comm.all_to_all(bytes, offsets),
                          Catch::Contains("all_to_all: send offsets must be"));
        CHECK_THROWS_WITH(comm.Communicator::all_to_all(bytes, offsets),
                          Catch::Contains("all_to_all: send offsets must be"));
    }
    comm.barrier();  // no rank was left waiting
}

}  // namespace
}  // namespace strata
