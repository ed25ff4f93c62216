// HostDcsr: a sparse matrix that stores only its nonempty rows (doubly compressed sparse rows):
// a list of row ids and a CSR of those rows. Memory and row walks are O(listed rows + nnz), not
// O(height): the form of a rank's halo blocks (few boundary rows per peer).
#pragma once

#include <cstdint>
#include <vector>

#include "src/base/types.hpp"
#include "src/tensor/host_csr.hpp"

namespace strata {

/// rows x cols: row r of `block` is row row_ids[r] of the matrix; every other row is empty.
/// row_ids ascending and distinct, each in [0, rows); block: row_ids.size() x cols. Producers in
/// this project list exactly the rows with >= 1 stored entry (compress_rows), but a listed row
/// may be empty.
struct HostDcsr {
    index_t rows = 0;
    std::vector<index_t> row_ids{};
    HostCsr block;

    [[nodiscard]] index_t cols() const { return block.cols; }
    [[nodiscard]] index_t nnz() const { return block.nnz(); }
    [[nodiscard]] index_t listed_rows() const { return static_cast<index_t>(row_ids.size()); }
};

/// The rows of `a` with at least one stored entry, in order (entries unchanged). O(rows + nnz).
[[nodiscard]] HostDcsr compress_rows(const HostCsr& a);

/// The full-height CSR (a.rows x a.cols) with the same entries. O(rows + nnz).
[[nodiscard]] HostCsr expand_rows(const HostDcsr& a);

/// Aᵀ as a CSR of cols x rows whose column ids are the matrix's row ids: equal to
/// transpose(expand_rows(a)), built in O(cols + nnz) (rows of the result sorted by column id).
[[nodiscard]] HostCsr transpose(const HostDcsr& a);

/// Backend bytes of a DCSR upload: the listed rows' CSR plus the row id list.
[[nodiscard]] std::int64_t dcsr_bytes(index_t listed_rows, std::int64_t nnz);

/// Checks validate(block) plus row ids ascending, distinct and in [0, rows); throws
/// strata::Error naming `what` and the first bad entry.
void validate(const HostDcsr& a, const char* what);

}  // namespace strata
