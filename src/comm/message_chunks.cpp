// message_chunks: fixed-size pieces, the last one shorter.
#include "src/comm/message_chunks.hpp"

#include <algorithm>

#include "src/base/error.hpp"

namespace strata {

std::vector<MessageChunk> message_chunks(std::size_t count, std::size_t max_count) {
    STRATA_CHECK(max_count >= 1 && max_count <= static_cast<std::size_t>(INT_MAX),
                 "message_chunks: at most ", max_count, " elements per message is not in [1, ",
                 INT_MAX, "]");
    std::vector<MessageChunk> chunks;
    chunks.reserve(count / max_count + (count % max_count != 0 ? 1 : 0));
    for (std::size_t offset = 0; offset < count; offset += max_count) {
        chunks.push_back({offset, static_cast<int>(std::min(max_count, count - offset))});
    }
    return chunks;
}

std::size_t max_message_elements(std::size_t max_bytes, std::size_t element_bytes) {
    const std::size_t elements = element_bytes == 0 ? max_bytes : max_bytes / element_bytes;
    return std::clamp<std::size_t>(elements, 1, static_cast<std::size_t>(INT_MAX));
}

}  // namespace strata
