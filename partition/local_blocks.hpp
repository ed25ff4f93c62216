// split_local_rows: a rank's rows with local column ids (owned columns first, then the received
// rows peer after peer) split into the inner block and one compressed-row halo block per peer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "src/tensor/host_csr.hpp"
#include "src/tensor/host_dcsr.hpp"

namespace strata {

/// The blocks of LocalGraph (partition/local_graph.hpp) and the row classification.
struct LocalBlocks {
    HostCsr inner;                         ///< num_owned x num_owned
    std::vector<HostDcsr> halo{};          ///< per peer: num_owned x recv_count, listed rows only
    std::vector<index_t> boundary_rows{};  ///< rows with >= 1 halo entry, ascending
    std::vector<index_t> interior_rows{};  ///< the others, ascending
};

/// Row i has entries [row_ptr[i], row_ptr[i + 1]) of col_idx: column c < num_owned is owned row c,
/// column num_owned + j is received row j, which belongs to the peer p with recv_offsets[p] <=
/// j < recv_offsets[p + 1]. Its values are values[value_start[i] + (k - row_ptr[i])]
/// (value_start empty: row_ptr). Entries keep their order within each block, so sorted rows
/// give sorted blocks. Columns must be in range (checked by the caller). Memory and time
/// O(num_owned + nnz + peers): no peer x rows array.
[[nodiscard]] LocalBlocks split_local_rows(index_t num_owned,
                                           const std::vector<index_t>& recv_offsets,
                                           std::span<const std::int64_t> row_ptr,
                                           const index_t* col_idx, const float* values,
                                           std::span<const std::int64_t> value_start);

}  // namespace strata
