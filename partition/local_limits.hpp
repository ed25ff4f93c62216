// check_local_limits: a part's local counts must fit the 32-bit local index (index_t); global
// counts are 64-bit everywhere. The error names the count, the limit and the fix (more parts).
#pragma once

#include <cstdint>

namespace strata {

/// The counts of one part held in 32-bit local indices (HostCsr, ExchangePattern, part files).
struct LocalSizes {
    std::int64_t owned = 0;      ///< owned vertices (local rows)
    std::int64_t halo = 0;       ///< received rows (local columns are owned + halo)
    std::int64_t entries = 0;    ///< adjacency entries of the owned rows (inner + halo blocks)
    std::int64_t rows_sent = 0;  ///< rows packed for all peers
};

/// The largest local count: 2^31 - 1.
[[nodiscard]] std::int64_t local_index_limit();

/// The number of parts that brings `count` (of a part of `num_parts`) under the limit if the
/// parts stay as balanced: max(num_parts + 1, ceil(num_parts · count / limit)).
[[nodiscard]] std::int64_t parts_for(std::int64_t count, int num_parts);

/// Throws strata::Error when a count (owned rows, owned + halo columns, entries + owned rows,
/// which normalization's diagonal may add, rows sent) exceeds local_index_limit(), one line:
/// "part 1 of 2: 3000000000 adjacency entries + owned rows exceed the 32-bit local index limit
/// (2147483647); use more ranks: --parts 3 (mpirun -np 3 for an in-memory partition)".
void check_local_limits(const LocalSizes& sizes, int part, int num_parts);

}  // namespace strata
