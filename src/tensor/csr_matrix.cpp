// CsrMatrix upload/download: validates on the way in.
#include "src/tensor/csr_matrix.hpp"

namespace strata {

CsrMatrix CsrMatrix::upload(Backend& backend, const HostCsr& host) {
    validate(host, "CsrMatrix::upload");
    CsrMatrix m;
    m.rows_ = host.rows;
    m.cols_ = host.cols;
    m.row_ptr_ = Buffer<index_t>(backend, std::span<const index_t>(host.row_ptr));
    m.col_idx_ = Buffer<index_t>(backend, std::span<const index_t>(host.col_idx));
    m.values_ = Buffer<float>(backend, std::span<const float>(host.values));
    return m;
}

HostCsr CsrMatrix::download() const {
    HostCsr host;
    host.rows = rows_;
    host.cols = cols_;
    host.row_ptr = row_ptr_.download();
    host.col_idx = col_idx_.download();
    host.values = values_.download();
    return host;
}

}  // namespace strata
