// Communicator's defaults: all_to_all as P rounds of gather(), one per destination rank;
// agree_max as allreduce_max; no packed exchanges; split refused. rows_to_other_nodes.
#include "src/comm/communicator.hpp"

#include <array>
#include <cstring>
#include <utility>

#include "src/base/error.hpp"
#include "src/comm/exchange_check.hpp"

namespace strata {

index_t rows_to_other_nodes(const Communicator& comm, const ExchangePattern& pattern) {
    index_t rows = 0;
    for (std::size_t i = 0; i < pattern.peers.size(); ++i) {
        if (comm.other_node(pattern.peers[i])) {
            rows += pattern.send_offsets[i + 1] - pattern.send_offsets[i];
        }
    }
    return rows;
}

std::unique_ptr<Exchange> Communicator::start_packed_exchange(const ExchangePattern& pattern,
                                                              ConstPackedRows send,
                                                              PackedRows recv) {
    (void)pattern;
    (void)recv;
    STRATA_FAIL("exchange: this communicator sends fp32 rows only, not packed rows of ",
                send.row_bytes, " bytes (a compressed halo_precision needs the MPI communicator ",
                "on host memory, device = cpu)");
}

std::int64_t Communicator::agree_max(std::int64_t value, const char* /*what*/) {
    std::array<std::int64_t, 1> data{value};
    allreduce_max(data);
    return data[0];
}

std::unique_ptr<Communicator> Communicator::split(int color, int key) {
    STRATA_FAIL("communicator: split(", color, ", ", key,
                ") is not available on this communicator (MPI on host memory only)");
}

ReceivedBlocks Communicator::all_to_all(std::span<const std::byte> send,
                                        std::span<const std::size_t> send_offsets) {
    const int p = size();
    check_all_to_all(send.size(), send_offsets, p);
    ReceivedBlocks received;
    for (int d = 0; d < p; ++d) {
        const auto at = static_cast<std::size_t>(d);
        const std::span<const std::byte> block =
            send.subspan(send_offsets[at], send_offsets[at + 1] - send_offsets[at]);
        const auto bytes = static_cast<std::int64_t>(block.size());
        const std::vector<std::byte> sizes =
            gather(std::as_bytes(std::span<const std::int64_t>(&bytes, 1)), d);
        std::vector<std::byte> all = gather(block, d);
        if (d != rank()) {
            continue;
        }
        STRATA_CHECK(sizes.size() == static_cast<std::size_t>(p) * sizeof(std::int64_t),
                     "all_to_all: rank ", d, " gathered ", sizes.size(), " size bytes from ", p,
                     " ranks");
        received.offsets.assign(1, 0);
        for (int s = 0; s < p; ++s) {
            std::int64_t from_s = 0;
            std::memcpy(&from_s, sizes.data() + static_cast<std::size_t>(s) * sizeof(from_s),
                        sizeof(from_s));
            received.offsets.push_back(received.offsets.back() + static_cast<std::size_t>(from_s));
        }
        STRATA_CHECK(received.offsets.back() == all.size(), "all_to_all: rank ", d, " received ",
                     all.size(), " bytes, the senders announced ", received.offsets.back());
        received.bytes = std::move(all);
    }
    return received;
}

}  // namespace strata
