// Layer shape checks around the virtual forward/backward.
#include "src/nn/layer.hpp"

#include "src/base/error.hpp"

namespace strata {

void Layer::forward(const DenseMatrix& x, DenseMatrix& y, const LayerContext& context) {
    STRATA_CHECK(y.rows() == x.rows() && y.cols() == output_cols(x.cols()), name(),
                 ": forward output is ", y.rows(), " x ", y.cols(), ", expected ", x.rows(), " x ",
                 output_cols(x.cols()));
    input_cols_ = x.cols();
    rows_ = x.rows();
    do_forward(x, y, context);
}

void Layer::backward(const DenseMatrix& dy, DenseMatrix* dx) {
    STRATA_CHECK(rows_ >= 0, name(), ": backward called before forward");
    STRATA_CHECK(dy.rows() == rows_ && dy.cols() == output_cols(input_cols_), name(),
                 ": backward dy is ", dy.rows(), " x ", dy.cols(), ", expected ", rows_, " x ",
                 output_cols(input_cols_));
    STRATA_CHECK(dx == nullptr || (dx->rows() == rows_ && dx->cols() == input_cols_), name(),
                 ": backward dx has the wrong shape");
    do_backward(dy, dx);
}

}  // namespace strata
