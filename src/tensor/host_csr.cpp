// Host CSR helpers: transpose (counting sort by column) and validation.
#include "src/tensor/host_csr.hpp"

#include <algorithm>
#include <cstddef>

#include "src/base/error.hpp"

namespace strata {

HostCsr transpose_with_entries(const HostCsr& a, std::vector<index_t>& entries) {
    HostCsr t;
    t.rows = a.cols;
    t.cols = a.rows;
    t.row_ptr.assign(static_cast<std::size_t>(a.cols) + 1, 0);
    for (const index_t c : a.col_idx) {
        ++t.row_ptr[static_cast<std::size_t>(c) + 1];
    }
    for (std::size_t r = 0; r < static_cast<std::size_t>(a.cols); ++r) {
        t.row_ptr[r + 1] += t.row_ptr[r];
    }
    std::vector<index_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
    t.col_idx.resize(a.col_idx.size());
    t.values.resize(a.col_idx.size());
    entries.resize(a.col_idx.size());
    for (index_t i = 0; i < a.rows; ++i) {
        for (index_t k = a.row_ptr[static_cast<std::size_t>(i)];
             k < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            const auto at =
                static_cast<std::size_t>(next[static_cast<std::size_t>(a.col_idx[k])]++);
            t.col_idx[at] = i;
            t.values[at] = a.values[static_cast<std::size_t>(k)];
            entries[at] = k;
        }
    }
    return t;
}

HostCsr transpose(const HostCsr& a) {
    HostCsr t;
    t.rows = a.cols;
    t.cols = a.rows;
    t.row_ptr.assign(static_cast<std::size_t>(a.cols) + 1, 0);
    t.col_idx.resize(a.col_idx.size());
    t.values.resize(a.values.size());
    for (index_t c : a.col_idx) {
        ++t.row_ptr[static_cast<std::size_t>(c) + 1];
    }
    for (std::size_t i = 1; i < t.row_ptr.size(); ++i) {
        t.row_ptr[i] += t.row_ptr[i - 1];
    }
    std::vector<index_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
    for (index_t r = 0; r < a.rows; ++r) {  // rows visited in order => each output row sorted
        for (index_t k = a.row_ptr[static_cast<std::size_t>(r)];
             k < a.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
            const auto slot = static_cast<std::size_t>(
                next[static_cast<std::size_t>(a.col_idx[static_cast<std::size_t>(k)])]++);
            t.col_idx[slot] = r;
            t.values[slot] = a.values[static_cast<std::size_t>(k)];
        }
    }
    return t;
}

void validate(const HostCsr& a, const char* what) {
    STRATA_CHECK(a.rows >= 0 && a.cols >= 0, what, ": negative shape ", a.rows, " x ", a.cols);
    STRATA_CHECK(a.row_ptr.size() == static_cast<std::size_t>(a.rows) + 1, what, ": row_ptr has ",
                 a.row_ptr.size(), " entries, expected rows+1 = ", a.rows + 1);
    STRATA_CHECK(a.values.size() == a.col_idx.size(), what, ": ", a.values.size(), " values but ",
                 a.col_idx.size(), " column ids");
    STRATA_CHECK(a.row_ptr.front() == 0, what, ": row_ptr[0] = ", a.row_ptr.front(),
                 ", expected 0");
    STRATA_CHECK(static_cast<std::size_t>(a.row_ptr.back()) == a.col_idx.size(), what,
                 ": row_ptr[rows] = ", a.row_ptr.back(), ", expected nnz = ", a.col_idx.size());
    for (std::size_t r = 0; r + 1 < a.row_ptr.size(); ++r) {
        STRATA_CHECK(a.row_ptr[r] <= a.row_ptr[r + 1], what, ": row_ptr not monotone at row ", r,
                     " (", a.row_ptr[r], " > ", a.row_ptr[r + 1], ")");
    }
    for (std::size_t k = 0; k < a.col_idx.size(); ++k) {
        STRATA_CHECK(a.col_idx[k] >= 0 && a.col_idx[k] < a.cols, what, ": column id ", a.col_idx[k],
                     " at entry ", k, " out of range [0, ", a.cols, ")");
    }
}

bool is_symmetric(const HostCsr& a) {
    if (a.rows != a.cols) {
        return false;
    }
    for (index_t r = 0; r < a.rows; ++r) {
        for (index_t k = a.row_ptr[static_cast<std::size_t>(r)];
             k < a.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
            const index_t c = a.col_idx[static_cast<std::size_t>(k)];
            const auto begin = a.col_idx.begin() + a.row_ptr[static_cast<std::size_t>(c)];
            const auto end = a.col_idx.begin() + a.row_ptr[static_cast<std::size_t>(c) + 1];
            const auto it = std::lower_bound(begin, end, r);
            if (it == end || *it != r ||
                a.values[static_cast<std::size_t>(it - a.col_idx.begin())] !=
                    a.values[static_cast<std::size_t>(k)]) {
                return false;
            }
        }
    }
    return true;
}

std::int64_t csr_bytes(index_t rows, std::int64_t nnz) {
    return static_cast<std::int64_t>(sizeof(index_t)) * (static_cast<std::int64_t>(rows) + 1) +
           static_cast<std::int64_t>(sizeof(index_t) + sizeof(float)) * nnz;
}

}  // namespace strata
