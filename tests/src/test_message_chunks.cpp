// 64-bit sizes at the 2^31 boundary by arithmetic alone (nothing of that size is allocated):
// message_chunks (large MPI messages in int-sized pieces) and HostMatrix's 64-bit rows.
#include <climits>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/comm/message_chunks.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "src/tensor/host_matrix.hpp"

using Catch::Matchers::Contains;

namespace strata {

TEST_CASE("message_chunks splits at INT_MAX elements around the 2^31 boundary", "[comm]") {
    constexpr std::size_t int_max = INT_MAX;
    CHECK(message_chunks(0).empty());
    CHECK(message_chunks(1) == std::vector<MessageChunk>{{0, 1}});
    CHECK(message_chunks(int_max - 1) == std::vector<MessageChunk>{{0, INT_MAX - 1}});
    CHECK(message_chunks(int_max) == std::vector<MessageChunk>{{0, INT_MAX}});
    CHECK(message_chunks(std::size_t{1} << 31) ==
          std::vector<MessageChunk>{{0, INT_MAX}, {int_max, 1}});
    CHECK(message_chunks(2 * int_max) ==
          std::vector<MessageChunk>{{0, INT_MAX}, {int_max, INT_MAX}});
    CHECK(message_chunks(2 * int_max + 1) ==
          std::vector<MessageChunk>{{0, INT_MAX}, {int_max, INT_MAX}, {2 * int_max, 1}});
    // 2^33 + 5 elements (32 GiB of floats): 4 full chunks and a remainder of 4 + 5 = 9.
    const std::size_t big = (std::size_t{1} << 33) + 5;
    const std::vector<MessageChunk> chunks = message_chunks(big);
    REQUIRE(chunks.size() == 5);
    std::size_t next = 0;
    for (const MessageChunk& chunk : chunks) {
        CHECK(chunk.offset == next);
        CHECK(chunk.count > 0);
        next += static_cast<std::size_t>(chunk.count);
    }
    CHECK(next == big);
    CHECK(chunks.back().count == 9);
}

TEST_CASE("message_chunks with a small limit and its argument checks", "[comm]") {
    CHECK(message_chunks(10, 4) == std::vector<MessageChunk>{{0, 4}, {4, 4}, {8, 2}});
    CHECK(message_chunks(8, 4) == std::vector<MessageChunk>{{0, 4}, {4, 4}});
    CHECK(message_chunks(3, 1) == std::vector<MessageChunk>{{0, 1}, {1, 1}, {2, 1}});
    CHECK_THROWS_WITH(message_chunks(10, 0), Contains("message_chunks: at most 0 elements"));
    CHECK_THROWS_WITH(
        message_chunks(10, std::size_t{1} << 31),
        Contains("at most 2147483648 elements per message is not in [1, 2147483647]"));
}

TEST_CASE("max_message_elements keeps a message within its bytes and an int count", "[comm]") {
    CHECK(max_message_elements(std::size_t{1} << 30, 4) == std::size_t{1} << 28);
    CHECK(max_message_elements(std::size_t{1} << 30, 8) == std::size_t{1} << 27);
    CHECK(max_message_elements(std::size_t{1} << 40, 1) == static_cast<std::size_t>(INT_MAX));
    CHECK(max_message_elements(2, 8) == 1);  // at least one element
    CHECK(max_message_elements(10, 4) == 2);
}

}  // namespace strata

namespace strata {

TEST_CASE("a HostMatrix holds more than 2^31 - 1 rows; a backend upload refuses them", "[comm]") {
    // Zero columns: the shapes are real, nothing is allocated.
    const std::int64_t rows = (std::int64_t{1} << 31) + 5;
    const HostMatrix wide(rows, 0);
    CHECK(wide.rows == rows);
    CHECK(wide.values.empty());
    CpuBackend backend(1);
    CHECK_THROWS_WITH(DenseMatrix::upload(backend, wide),
                      Contains("DenseMatrix::upload: 2147483653 rows exceed the 32-bit local "
                               "index limit (2147483647)"));
    const HostMatrix at_limit(std::int64_t{INT_MAX}, 0);
    CHECK(DenseMatrix::upload(backend, at_limit).rows() == INT_MAX);
}

}  // namespace strata
