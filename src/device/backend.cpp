// Backend: the non-virtual conveniences of the interface.
#include "src/device/backend.hpp"

#include "src/tensor/csr_matrix.hpp"

namespace strata {

void Backend::spmm(const CsrMatrix& a, ConstMatrixView x, MatrixView y, float beta) {
    spmm(a, RowRange{0, a.rows()}, x, y, beta);
}

}  // namespace strata
