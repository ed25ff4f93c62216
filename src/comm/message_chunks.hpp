// message_chunks: a count of elements split into MPI messages whose counts fit an int. Open MPI
// 4.1 (Debian 12) has no large-count calls (MPI_*_c, MPI 4.0), so every message beyond INT_MAX
// elements is sent as several.
#pragma once

#include <climits>
#include <cstddef>
#include <vector>

namespace strata {

/// Elements [offset, offset + count) of a buffer.
struct MessageChunk {
    std::size_t offset = 0;
    int count = 0;

    bool operator==(const MessageChunk&) const = default;
};

/// The pieces of `count` elements, in order, each of at most `max_count` elements (all but the
/// last exactly max_count); none for count 0. Throws strata::Error unless 1 <= max_count <=
/// INT_MAX. Pure arithmetic: O(count / max_count) chunks, nothing else allocated.
[[nodiscard]] std::vector<MessageChunk> message_chunks(std::size_t count,
                                                       std::size_t max_count = INT_MAX);

/// The largest message, in elements of `element_bytes`, that stays within `max_bytes` and an
/// int count: min(max_bytes / element_bytes, INT_MAX), at least 1.
[[nodiscard]] std::size_t max_message_elements(std::size_t max_bytes, std::size_t element_bytes);

}  // namespace strata
