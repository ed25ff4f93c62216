// Small helpers for the tests of src/: literal matrices, random inputs (random_matrix from
// tests/support/matrices.hpp, random_csr here) and bitwise comparison.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <vector>

#include "src/tensor/host_csr.hpp"
#include "src/tensor/host_matrix.hpp"
#include "tests/support/matrices.hpp"

namespace strata::test {

/// rows x cols from row-major literal values.
inline HostMatrix matrix(index_t rows, index_t cols, std::initializer_list<float> values) {
    HostMatrix m(rows, cols);
    m.values.assign(values);
    return m;
}

/// rows x cols CSR with each entry present with probability `density` (sorted column ids,
/// values in [-1, 1)); every `empty_every`-th row is left empty.
inline HostCsr random_csr(index_t rows, index_t cols, double density, std::uint32_t seed,
                          index_t empty_every = 7) {
    std::mt19937 gen(seed);
    std::bernoulli_distribution present(density);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    HostCsr a;
    a.rows = rows;
    a.cols = cols;
    for (index_t r = 0; r < rows; ++r) {
        if (empty_every <= 0 || r % empty_every != 0) {
            for (index_t c = 0; c < cols; ++c) {
                if (present(gen)) {
                    a.col_idx.push_back(c);
                    a.values.push_back(value(gen));
                }
            }
        }
        a.row_ptr.push_back(a.nnz());
    }
    return a;
}

/// Same size and the same bits (a result that must not depend on the thread count).
inline bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace strata::test
