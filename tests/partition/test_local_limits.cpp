// check_local_limits: a part's 32-bit local counts at the 2^31 boundary, from sizes alone (no
// graph of that size is built), and the suggested number of parts.
#include <cstdint>

#include <catch2/catch.hpp>

#include "partition/local_limits.hpp"
#include "src/base/error.hpp"

using Catch::Matchers::Contains;

namespace strata {

TEST_CASE("local counts up to 2^31 - 1 pass, one more fails naming the limit and the fix",
          "[partition]") {
    const std::int64_t limit = (std::int64_t{1} << 31) - 1;
    CHECK(local_index_limit() == limit);
    CHECK_NOTHROW(check_local_limits({}, 0, 1));
    CHECK_NOTHROW(check_local_limits({.owned = limit}, 0, 1));
    CHECK_NOTHROW(check_local_limits({.owned = 1000, .halo = limit - 1000}, 0, 2));
    CHECK_NOTHROW(check_local_limits({.owned = 1000, .entries = limit - 1000}, 0, 2));
    CHECK_NOTHROW(check_local_limits({.rows_sent = limit}, 0, 2));

    CHECK_THROWS_WITH(check_local_limits({.owned = limit + 1}, 0, 1),
                      Contains("part 0 of 1: 2147483648 owned rows exceed the 32-bit local index "
                               "limit (2147483647); use more ranks: --parts 2"));
    CHECK_THROWS_WITH(check_local_limits({.owned = 1000, .halo = limit - 999}, 1, 2),
                      Contains("part 1 of 2: 2147483648 owned + halo rows (local columns) exceed"));
    // 3e9 entries + 1e6 rows on part 1 of 2: ceil(2 * 3.001e9 / (2^31 - 1)) = 3 parts.
    CHECK_THROWS_WITH(
        check_local_limits({.owned = 1000000, .entries = 3000000000}, 1, 2),
        Contains("part 1 of 2: 3001000000 adjacency entries + owned rows exceed the 32-bit "
                 "local index limit (2147483647); use more ranks: --parts 3 (mpirun -np 3"));
    CHECK_THROWS_WITH(check_local_limits({.rows_sent = limit + 1}, 3, 4),
                      Contains("part 3 of 4: 2147483648 rows sent to peers exceed"));
}

TEST_CASE("parts_for scales the part count by the overflow, at least one more part",
          "[partition]") {
    const std::int64_t limit = local_index_limit();
    CHECK(parts_for(limit + 1, 1) == 2);
    CHECK(parts_for(limit + 1, 8) == 9);
    CHECK(parts_for(4 * limit, 2) == 8);
    CHECK(parts_for(4 * limit + 1, 2) == 9);
    // 2^40 entries on one of 64 parts: 64 * 2^40 / (2^31 - 1) rounds up to 32769.
    CHECK(parts_for(std::int64_t{1} << 40, 64) == 32769);
}

}  // namespace strata
