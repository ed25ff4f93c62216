// all_to_all: every rank sends one block of bytes to every rank (itself included), on host
// memory, through any Communicator's gather(), so that no new collective is needed in the
// interface and every message stays large-count safe (gather splits by message_chunks).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "src/comm/communicator.hpp"

namespace strata {

/// What one rank received: block s (from rank s) is bytes[offsets[s], offsets[s + 1]).
struct ReceivedBlocks {
    std::vector<std::byte> bytes;
    std::vector<std::size_t> offsets;  ///< comm.size() + 1

    [[nodiscard]] std::span<const std::byte> from(int rank) const {
        const auto r = static_cast<std::size_t>(rank);
        return std::span<const std::byte>(bytes).subspan(offsets[r], offsets[r + 1] - offsets[r]);
    }
};

/// Collective: rank r's block_for(d) goes to rank d; returns the blocks sent to this rank, in
/// source-rank order. Rounds d = 0 .. P-1, each one gather() to root d (its sizes, then its
/// data), so only one outgoing block exists at a time (block_for(d) is called in round d) and
/// the destination holds exactly what it receives. P rounds, one receiving rank each: for the
/// few-rank loads it serves (partition/distribute_parts.hpp), not for per-epoch traffic.
[[nodiscard]] ReceivedBlocks all_to_all(
    Communicator& comm, const std::function<std::vector<std::byte>(int)>& block_for);

}  // namespace strata
