// all_to_all: every block arrives at its destination, in source order, with uneven and empty
// blocks, and through pieces when the gather's message limit is small (large-count path).
#include <cstddef>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "src/comm/all_to_all.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "tests/support/all_ranks.hpp"

namespace strata {
namespace {

/// The block rank `from` sends to rank `to`: (from + 2 to) % 5 bytes, 0 for from == to + 1,
/// byte k = from * 31 + to * 7 + k.
std::vector<std::byte> block(int from, int to) {
    const int n = from == to + 1 ? 0 : (from + 2 * to) % 5 + 1;
    std::vector<std::byte> b;
    for (int k = 0; k < n; ++k) {
        b.push_back(static_cast<std::byte>(from * 31 + to * 7 + k));
    }
    return b;
}

TEST_CASE("all_to_all delivers every block to its rank in source order", "[mpi]") {
    for (const std::size_t limit : {std::size_t{1} << 30, std::size_t{2}}) {
        MpiCommunicator comm;
        comm.set_max_message_bytes(limit);
        int calls = 0;
        const ReceivedBlocks got = all_to_all(comm, [&](int to) {
            ++calls;
            return block(comm.rank(), to);
        });
        bool ok =
            calls == comm.size() && got.offsets.size() == static_cast<std::size_t>(comm.size()) + 1;
        for (int from = 0; ok && from < comm.size(); ++from) {
            const auto span = got.from(from);
            const std::vector<std::byte> expected = block(from, comm.rank());
            ok = std::vector<std::byte>(span.begin(), span.end()) == expected;
        }
        INFO("message limit " << limit);
        CHECK(test::all_ranks(ok));
    }
}

}  // namespace
}  // namespace strata
