// DenseMatrix: a row-major float32 matrix owned in a backend's memory.
#pragma once

#include "src/device/buffer.hpp"
#include "src/tensor/host_matrix.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// rows x cols, row-major (vertices are rows, so halos are whole rows).
class DenseMatrix {
public:
    DenseMatrix() = default;
    /// Allocates; contents are unspecified until written.
    DenseMatrix(Backend& backend, index_t rows, index_t cols);
    [[nodiscard]] static DenseMatrix upload(Backend& backend, const HostMatrix& host);
    [[nodiscard]] HostMatrix download() const;

    MatrixView view() { return {values_.data(), rows_, cols_}; }
    [[nodiscard]] ConstMatrixView view() const { return {values_.data(), rows_, cols_}; }
    [[nodiscard]] index_t rows() const { return rows_; }
    [[nodiscard]] index_t cols() const { return cols_; }
    float* data() { return values_.data(); }
    [[nodiscard]] const float* data() const { return values_.data(); }

private:
    index_t rows_ = 0;
    index_t cols_ = 0;
    Buffer<float> values_;
};

}  // namespace strata
