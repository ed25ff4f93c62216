// all_to_all: P gathers, one per destination rank.
#include "src/comm/all_to_all.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

#include "src/base/error.hpp"

namespace strata {

ReceivedBlocks all_to_all(Communicator& comm,
                          const std::function<std::vector<std::byte>(int)>& block_for) {
    const int size = comm.size();
    ReceivedBlocks received;
    for (int d = 0; d < size; ++d) {
        std::vector<std::byte> block = block_for(d);
        const auto bytes = static_cast<std::int64_t>(block.size());
        const std::vector<std::byte> sizes =
            comm.gather(std::as_bytes(std::span<const std::int64_t>(&bytes, 1)), d);
        std::vector<std::byte> all = comm.gather(block, d);
        if (d != comm.rank()) {
            continue;
        }
        STRATA_CHECK(sizes.size() == static_cast<std::size_t>(size) * sizeof(std::int64_t),
                     "all_to_all: rank ", d, " gathered ", sizes.size(), " size bytes from ", size,
                     " ranks");
        received.offsets.assign(1, 0);
        for (int s = 0; s < size; ++s) {
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
