// The two index types of the project: 32-bit local ids (CSR, cuSPARSE 32I) and 64-bit global ids.
#pragma once

#include <cstdint>

namespace strata {

/// Local row/column index of a rank's matrices (CSR row_ptr and col_idx too).
using index_t = std::int32_t;
/// Global vertex id: on disk and in partitioning.
using global_id = std::int64_t;

}  // namespace strata
