// release(v) frees a vector's buffer, where `v = {}` keeps it (operator=(initializer_list)).
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/release.hpp"

TEST_CASE("release frees a vector's buffer; v = {} does not", "[base]") {
    std::vector<std::int64_t> kept(1000, 7);
    kept = {};
    CHECK(kept.empty());
    CHECK(kept.capacity() == 1000);  // why release() exists

    std::vector<std::int64_t> freed(1000, 7);
    strata::release(freed);
    CHECK(freed.empty());
    CHECK(freed.capacity() == 0);

    std::vector<std::vector<int>> nested(3, std::vector<int>(10));
    strata::release(nested);
    CHECK(nested.capacity() == 0);
}
