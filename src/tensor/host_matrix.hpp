// HostMatrix: a plain row-major float32 matrix in host memory (I/O, partitioning, tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/base/types.hpp"

namespace strata {

/// rows x cols, row-major: element (r, c) is values[r * cols + c]. Rows are 64-bit: a whole
/// graph's features (GraphDataset) may have more than 2^31 - 1 rows; a matrix uploaded to a
/// backend (DenseMatrix, local rows) may not.
struct HostMatrix {
    std::int64_t rows = 0;
    index_t cols = 0;
    std::vector<float> values;

    HostMatrix() = default;
    HostMatrix(std::int64_t num_rows, index_t num_cols, float value = 0.0f)
        : rows(num_rows),
          cols(num_cols),
          values(static_cast<std::size_t>(num_rows) * static_cast<std::size_t>(num_cols), value) {}

    float& at(std::int64_t r, index_t c) {
        return values[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) +
                      static_cast<std::size_t>(c)];
    }
    float at(std::int64_t r, index_t c) const {
        return values[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) +
                      static_cast<std::size_t>(c)];
    }
    float* row(std::int64_t r) {
        return values.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(cols);
    }
    const float* row(std::int64_t r) const {
        return values.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(cols);
    }
};

}  // namespace strata
