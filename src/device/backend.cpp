// Backend: the checked entry points, one per operation of backend_operations.hpp (its argument
// check, then the backend's implementation), and the non-virtual conveniences.
#include "src/device/backend.hpp"

#include "src/device/operand_checks.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {

#define STRATA_BACKEND_OPERATION(result, name, parameters, arguments) \
    result Backend::name parameters {                                 \
        check_##name arguments;                                       \
        return name##_impl arguments;                                 \
    }
#include "src/device/backend_operations.hpp"
#undef STRATA_BACKEND_OPERATION

void Backend::spmm(const CsrMatrix& a, ConstMatrixView x, MatrixView y, float beta) {
    spmm(a, RowRange{0, a.rows()}, x, y, beta);
}

}  // namespace strata
