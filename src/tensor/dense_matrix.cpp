// DenseMatrix allocation and host transfers.
#include "src/tensor/dense_matrix.hpp"

#include <limits>

#include "src/base/error.hpp"

namespace strata {

DenseMatrix::DenseMatrix(Backend& backend, index_t rows, index_t cols)
    : rows_(rows),
      cols_(cols),
      values_(backend, static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols)) {
    STRATA_CHECK(rows >= 0 && cols >= 0, "DenseMatrix: negative shape ", rows, " x ", cols);
}

DenseMatrix DenseMatrix::upload(Backend& backend, const HostMatrix& host) {
    STRATA_CHECK(host.values.size() ==
                     static_cast<std::size_t>(host.rows) * static_cast<std::size_t>(host.cols),
                 "DenseMatrix::upload: ", host.values.size(), " values for ", host.rows, " x ",
                 host.cols);
    STRATA_CHECK(host.rows <= std::numeric_limits<index_t>::max(),
                 "DenseMatrix::upload: ", host.rows, " rows exceed the 32-bit local index limit (",
                 std::numeric_limits<index_t>::max(), ")");
    DenseMatrix m(backend, static_cast<index_t>(host.rows), host.cols);
    if (!host.values.empty()) {
        backend.upload(m.data(), host.values.data(), host.values.size() * sizeof(float));
    }
    return m;
}

HostMatrix DenseMatrix::download() const {
    HostMatrix host;
    host.rows = rows_;
    host.cols = cols_;
    host.values = values_.download();
    return host;
}

}  // namespace strata
