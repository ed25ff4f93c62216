// SparseInput: a model input held as CSR in backend memory (bag-of-words features, about 1 %
// non-zero), lent to the op that reads it (layers/sparse_linear_op.hpp). Views only: the owner
// (layers/sparse_features.hpp) outlives the executor.
#pragma once

#include <span>

#include "src/base/types.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {

struct SparseInput {
    const CsrMatrix* x = nullptr;   ///< rows x cols, the input itself
    const CsrMatrix* xt = nullptr;  ///< cols x rows: xᵀ (the weight gradient's left operand)
    /// x's and xt's structure with values the op reading this input rewrites (its dropout of
    /// the stored entries): ops run one at a time, so it owns them for the length of one call.
    CsrMatrix* x_dropped = nullptr;
    CsrMatrix* xt_dropped = nullptr;
    /// Entry k of xt is entry xt_entries[k] of x (xt_dropped's values gathered from x_dropped's).
    std::span<const index_t> xt_entries;
    std::span<const global_id> col_ids;  ///< 0 .. cols-1: the dropout key of each column
};

}  // namespace strata
