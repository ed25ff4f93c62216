// check_local_limits: each local count against index_t's maximum.
#include "partition/local_limits.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "src/base/error.hpp"
#include "src/base/types.hpp"

namespace strata {

std::int64_t local_index_limit() {
    return std::numeric_limits<index_t>::max();
}

std::int64_t parts_for(std::int64_t count, int num_parts) {
    const long double needed =
        std::ceil(static_cast<long double>(num_parts) * static_cast<long double>(count) /
                  static_cast<long double>(local_index_limit()));
    return std::max<std::int64_t>(std::int64_t{num_parts} + 1, static_cast<std::int64_t>(needed));
}

void check_local_limits(const LocalSizes& sizes, int part, int num_parts) {
    const std::pair<std::int64_t, const char*> counts[] = {
        {sizes.owned, "owned rows"},
        {sizes.owned + sizes.halo, "owned + halo rows (local columns)"},
        {sizes.entries + sizes.owned, "adjacency entries + owned rows"},
        {sizes.rows_sent, "rows sent to peers"},
    };
    for (const auto& [count, what] : counts) {
        STRATA_CHECK(count <= local_index_limit(), "part ", part, " of ", num_parts, ": ", count,
                     " ", what, " exceed the 32-bit local index limit (", local_index_limit(),
                     "); use more ranks: --parts ", parts_for(count, num_parts), " (mpirun -np ",
                     parts_for(count, num_parts), " for an in-memory partition)");
    }
}

}  // namespace strata
