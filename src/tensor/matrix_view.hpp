// Non-owning views of row-major float32 matrices in a backend's memory.
#pragma once

#include <cstddef>

#include "src/base/types.hpp"

namespace strata {

/// Rows [first, first + count) of a matrix: the part of a call that one chunk computes.
struct RowRange {
    index_t first = 0;
    index_t count = 0;

    [[nodiscard]] index_t end() const { return first + count; }
    friend bool operator==(const RowRange&, const RowRange&) = default;
};

/// rows x cols, row-major, contiguous (leading dimension = cols). Memory belongs to a backend.
struct MatrixView {
    float* data = nullptr;
    index_t rows = 0;
    index_t cols = 0;

    [[nodiscard]] std::size_t size() const {
        return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    }
    /// Rows [first, first + count) as a view of their own.
    [[nodiscard]] MatrixView row_range(index_t first, index_t count) const {
        return {data + static_cast<std::size_t>(first) * static_cast<std::size_t>(cols), count,
                cols};
    }
    [[nodiscard]] MatrixView rows_of(RowRange r) const { return row_range(r.first, r.count); }
};

struct ConstMatrixView {
    const float* data = nullptr;
    index_t rows = 0;
    index_t cols = 0;

    ConstMatrixView() = default;
    ConstMatrixView(const float* d, index_t r, index_t c) : data(d), rows(r), cols(c) {}
    ConstMatrixView(MatrixView v) : data(v.data), rows(v.rows), cols(v.cols) {}  // NOLINT

    [[nodiscard]] std::size_t size() const {
        return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    }
    [[nodiscard]] ConstMatrixView row_range(index_t first, index_t count) const {
        return {data + static_cast<std::size_t>(first) * static_cast<std::size_t>(cols), count,
                cols};
    }
    [[nodiscard]] ConstMatrixView rows_of(RowRange r) const { return row_range(r.first, r.count); }
};

enum class Transpose { no, yes };

}  // namespace strata
