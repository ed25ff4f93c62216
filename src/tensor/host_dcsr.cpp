// HostDcsr helpers: compress, expand, transpose (counting sort by column), validation.
#include "src/tensor/host_dcsr.hpp"

#include <cstddef>

#include "src/base/error.hpp"

namespace strata {

HostDcsr compress_rows(const HostCsr& a) {
    HostDcsr out;
    out.rows = a.rows;
    out.block.cols = a.cols;
    out.block.col_idx = a.col_idx;
    out.block.values = a.values;
    for (index_t r = 0; r < a.rows; ++r) {
        const auto row = static_cast<std::size_t>(r);
        if (a.row_ptr[row + 1] > a.row_ptr[row]) {
            out.row_ids.push_back(r);
            out.block.row_ptr.push_back(a.row_ptr[row + 1]);
        }
    }
    out.block.rows = out.listed_rows();
    return out;
}

HostCsr expand_rows(const HostDcsr& a) {
    HostCsr out;
    out.rows = a.rows;
    out.cols = a.cols();
    out.col_idx = a.block.col_idx;
    out.values = a.block.values;
    out.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
    for (std::size_t r = 0; r < a.row_ids.size(); ++r) {
        const auto row = static_cast<std::size_t>(a.row_ids[r]);
        out.row_ptr[row + 1] = a.block.row_ptr[r + 1] - a.block.row_ptr[r];
    }
    for (std::size_t r = 0; r < static_cast<std::size_t>(a.rows); ++r) {
        out.row_ptr[r + 1] += out.row_ptr[r];
    }
    return out;
}

HostCsr transpose(const HostDcsr& a) {
    HostCsr t = transpose(a.block);  // columns are positions in row_ids, ascending per row
    t.cols = a.rows;
    for (index_t& c : t.col_idx) {
        c = a.row_ids[static_cast<std::size_t>(c)];
    }
    return t;
}

std::int64_t dcsr_bytes(index_t listed_rows, std::int64_t nnz) {
    return csr_bytes(listed_rows, nnz) +
           static_cast<std::int64_t>(sizeof(index_t)) * static_cast<std::int64_t>(listed_rows);
}

void validate(const HostDcsr& a, const char* what) {
    STRATA_CHECK(a.rows >= 0, what, ": negative height ", a.rows);
    STRATA_CHECK(a.block.rows == a.listed_rows(), what, ": block of ", a.block.rows, " rows for ",
                 a.row_ids.size(), " row ids");
    validate(a.block, what);
    for (std::size_t r = 0; r < a.row_ids.size(); ++r) {
        const index_t id = a.row_ids[r];
        STRATA_CHECK(id >= 0 && id < a.rows && (r == 0 || a.row_ids[r - 1] < id), what, ": row id ",
                     id, " at position ", r, " out of range [0, ", a.rows, ") or not ascending");
    }
}

}  // namespace strata
