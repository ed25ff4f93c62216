// release(v) empties a vector and frees its buffer (src/base/release.hpp says why `v = {}` is
// not enough).
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/release.hpp"

TEST_CASE("release empties a vector and frees its buffer", "[base]") {
    std::vector<std::int64_t> freed(1000, 7);
    strata::release(freed);
    CHECK(freed.empty());
    CHECK(freed.capacity() == 0);
    freed.push_back(3);  // still a usable vector
    CHECK(freed == std::vector<std::int64_t>{3});

    std::vector<std::vector<int>> nested(3, std::vector<int>(10));
    strata::release(nested);
    CHECK(nested.empty());
    CHECK(nested.capacity() == 0);
}
