// broadcast_string: two broadcasts, the length and then the characters.
#include "src/comm/broadcast_string.hpp"

#include <array>
#include <cstdint>
#include <span>

namespace strata {

void broadcast_string(Communicator& comm, std::string& text, int root) {
    std::array<std::int64_t, 1> length{static_cast<std::int64_t>(text.size())};
    comm.broadcast(std::as_writable_bytes(std::span<std::int64_t>(length)), root);
    text.resize(static_cast<std::size_t>(length[0]));
    comm.broadcast(std::as_writable_bytes(std::span<char>(text)), root);
}

}  // namespace strata
