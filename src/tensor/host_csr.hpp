// HostCsr: a plain CSR matrix in host memory with 32-bit local indices, and host-side helpers.
#pragma once

#include <cstdint>
#include <vector>

#include "src/base/types.hpp"

namespace strata {

/// rows x cols in CSR: the entries of row r are col_idx/values[row_ptr[r] : row_ptr[r+1]].
/// Column ids inside a row are sorted ascending by every producer in this project.
struct HostCsr {
    index_t rows = 0;
    index_t cols = 0;
    std::vector<index_t> row_ptr{0};
    std::vector<index_t> col_idx;
    std::vector<float> values;

    [[nodiscard]] index_t nnz() const { return static_cast<index_t>(col_idx.size()); }
};

/// Aᵀ, cols x rows, rows of the result sorted by column id. O(nnz + rows + cols).
[[nodiscard]] HostCsr transpose(const HostCsr& a);

/// Aᵀ as transpose(a) does, and for each of its entries the index of the same entry in A
/// (entries[k]: Aᵀ's entry k is A's entry entries[k]). O(nnz + rows + cols).
[[nodiscard]] HostCsr transpose_with_entries(const HostCsr& a, std::vector<index_t>& entries);

/// Whether A = Aᵀ exactly (square, same structure, mirrored values equal as floats). Columns
/// within each row must be sorted and in range (validate() first). O(nnz log(max row length)).
[[nodiscard]] bool is_symmetric(const HostCsr& a);

/// Bytes CsrMatrix::upload(a) allocates: row pointers, column ids and values.
[[nodiscard]] std::int64_t csr_bytes(index_t rows, std::int64_t nnz);

/// Checks the structural invariants (row_ptr monotone from 0 to nnz, ids in [0, cols),
/// sizes agree); throws strata::Error naming `what` and the first bad entry.
void validate(const HostCsr& a, const char* what);

}  // namespace strata
