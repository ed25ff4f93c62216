// The argument checks of every Backend operation (operand_checks.hpp).
#include "src/device/operand_checks.hpp"

#include "src/base/error.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {

void check_same_shape(const char* op, const char* name_a, index_t rows_a, index_t cols_a,
                      const char* name_b, index_t rows_b, index_t cols_b) {
    STRATA_CHECK(rows_a == rows_b && cols_a == cols_b, op, ": ", name_a, " is ", rows_a, " x ",
                 cols_a, " but ", name_b, " is ", rows_b, " x ", cols_b);
}

void check_spmm(const CsrMatrix& a, RowRange rows, ConstMatrixView x, MatrixView y) {
    STRATA_CHECK(rows.first >= 0 && rows.count >= 0 && rows.first <= a.rows() - rows.count,
                 "spmm: rows [", rows.first, ", ", rows.end(), ") are not inside A's ", a.rows(),
                 " rows");
    STRATA_CHECK(x.rows == a.cols(), "spmm: A is ", a.rows(), " x ", a.cols(), " but x has ",
                 x.rows, " rows");
    check_same_shape("spmm", "y", y.rows, y.cols, "A[rows] x", rows.count, x.cols);
    STRATA_CHECK(!overlaps(x.data, x.size(), y.data, y.size()), "spmm: y overlaps x");
}

GemmShape check_gemm(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb,
                     MatrixView c) {
    GemmShape s;
    s.trans_a = ta == Transpose::yes;
    s.trans_b = tb == Transpose::yes;
    s.m = s.trans_a ? a.cols : a.rows;
    s.k = s.trans_a ? a.rows : a.cols;
    const index_t kb = s.trans_b ? b.cols : b.rows;
    s.n = s.trans_b ? b.rows : b.cols;
    STRATA_CHECK(s.k == kb, "gemm: op(a) is ", s.m, " x ", s.k, " but op(b) is ", kb, " x ", s.n);
    check_same_shape("gemm", "c", c.rows, c.cols, "op(a) op(b)", s.m, s.n);
    STRATA_CHECK(!overlaps(a.data, a.size(), c.data, c.size()) &&
                     !overlaps(b.data, b.size(), c.data, c.size()),
                 "gemm: c overlaps an input");
    return s;
}

void check_gather_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) {
    check_same_shape("gather_rows", "out", out.rows, out.cols, "rows.size() x x.cols",
                     static_cast<index_t>(rows.size()), x.cols);
}

void check_scatter_add_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) {
    check_same_shape("scatter_add_rows", "x", x.rows, x.cols, "rows.size() x out.cols",
                     static_cast<index_t>(rows.size()), out.cols);
}

void check_axpby(ConstMatrixView x, MatrixView y) {
    check_same_shape("axpby", "x", x.rows, x.cols, "y", y.rows, y.cols);
}

void check_column_sums(ConstMatrixView x, std::span<const float> out) {
    STRATA_CHECK(out.size() == static_cast<std::size_t>(x.cols), "column_sums: out has ",
                 out.size(), " entries but x has ", x.cols, " columns");
}

namespace {

/// `needs_ids`: the call computes a mask (forward, or backward without relu).
void check_dropout_key(const char* op, const DropoutKey& key, std::span<const global_id> row_ids,
                       index_t rows, bool needs_ids) {
    STRATA_CHECK(key.rate >= 0.0f && key.rate < 1.0f, op, ": dropout rate ", key.rate,
                 " not in [0, 1)");
    STRATA_CHECK(key.rate == 0.0f || !needs_ids || row_ids.size() == static_cast<std::size_t>(rows),
                 op, ": ", row_ids.size(), " row ids for ", rows, " rows");
}

}  // namespace

void check_bias_activation(ConstMatrixView x, std::span<const float> bias, ActivationSpec act,
                           const DropoutKey& key, std::span<const global_id> row_ids,
                           MatrixView y) {
    check_activation("bias_activation", act);
    check_same_shape("bias_activation", "x", x.rows, x.cols, "y", y.rows, y.cols);
    STRATA_CHECK(bias.empty() || bias.size() == static_cast<std::size_t>(x.cols),
                 "bias_activation: bias has ", bias.size(), " entries but x has ", x.cols,
                 " columns");
    check_dropout_key("bias_activation", key, row_ids, x.rows, true);
}

void check_activation(const char* op, ActivationSpec act) {
    STRATA_CHECK(act.kind != Activation::leaky_relu || act.negative_slope >= 0.0f, op,
                 ": leaky_relu negative slope ", act.negative_slope, " must be >= 0");
}

void check_bias_activation_backward(ConstMatrixView saved, std::span<const float> bias,
                                    ConstMatrixView dy, ActivationSpec act, const DropoutKey& key,
                                    std::span<const global_id> row_ids, MatrixView dx) {
    check_activation("bias_activation_backward", act);
    if (act.kind != Activation::none) {
        check_same_shape("bias_activation_backward", act.kind == Activation::gelu ? "x" : "y",
                         saved.rows, saved.cols, "dy", dy.rows, dy.cols);
    }
    STRATA_CHECK(act.kind != Activation::gelu || bias.empty() ||
                     bias.size() == static_cast<std::size_t>(dy.cols),
                 "bias_activation_backward: bias has ", bias.size(), " entries but dy has ",
                 dy.cols, " columns");
    check_same_shape("bias_activation_backward", "dy", dy.rows, dy.cols, "dx", dx.rows, dx.cols);
    check_dropout_key("bias_activation_backward", key, row_ids, dy.rows,
                      act.kind != Activation::relu);
}

void check_axpby_scalar(std::span<const float> s, ConstMatrixView x, MatrixView y) {
    STRATA_CHECK(s.size() == 1, "axpby_scalar: the scale has ", s.size(), " entries, expected 1");
    check_same_shape("axpby_scalar", "x", x.rows, x.cols, "y", y.rows, y.cols);
}

void check_dot(ConstMatrixView a, ConstMatrixView b, std::span<const float> out) {
    check_same_shape("dot", "a", a.rows, a.cols, "b", b.rows, b.cols);
    STRATA_CHECK(out.size() == 1, "dot: out has ", out.size(), " entries, expected 1");
}

namespace {

void check_columns(const char* op, const char* name, std::span<const float> v, index_t cols) {
    STRATA_CHECK(v.size() == static_cast<std::size_t>(cols), op, ": ", name, " has ", v.size(),
                 " entries but x has ", cols, " columns");
}

void check_eps(const char* op, float eps) {
    STRATA_CHECK(eps > 0.0f, op, ": eps ", eps, " must be > 0");
}

}  // namespace

void check_layer_norm(ConstMatrixView x, std::span<const float> gamma, std::span<const float> beta,
                      float eps, MatrixView y) {
    check_same_shape("layer_norm", "x", x.rows, x.cols, "y", y.rows, y.cols);
    check_columns("layer_norm", "gamma", gamma, x.cols);
    check_columns("layer_norm", "beta", beta, x.cols);
    check_eps("layer_norm", eps);
    STRATA_CHECK(!overlaps(x.data, x.size(), y.data, y.size()), "layer_norm: y overlaps x");
}

void check_layer_norm_backward(ConstMatrixView x, ConstMatrixView dy, std::span<const float> gamma,
                               float eps, MatrixView dx, std::span<const float> dgamma,
                               std::span<const float> dbeta) {
    check_same_shape("layer_norm_backward", "x", x.rows, x.cols, "dy", dy.rows, dy.cols);
    if (dx.data != nullptr) {
        check_same_shape("layer_norm_backward", "dx", dx.rows, dx.cols, "dy", dy.rows, dy.cols);
    }
    check_columns("layer_norm_backward", "gamma", gamma, x.cols);
    if (!dgamma.empty()) {
        check_columns("layer_norm_backward", "dgamma", dgamma, x.cols);
    }
    if (!dbeta.empty()) {
        check_columns("layer_norm_backward", "dbeta", dbeta, x.cols);
    }
    check_eps("layer_norm_backward", eps);
}

void check_centered_column_sums(ConstMatrixView x, std::span<const float> mean,
                                std::span<const float> var, ConstMatrixView w,
                                std::span<const float> out) {
    check_columns("centered_column_sums", "mean", mean, x.cols);
    if (!var.empty()) {
        check_columns("centered_column_sums", "var", var, x.cols);
    }
    if (w.data != nullptr) {
        check_same_shape("centered_column_sums", "x", x.rows, x.cols, "w", w.rows, w.cols);
    }
    check_columns("centered_column_sums", "out", out, x.cols);
}

void check_batch_norm(ConstMatrixView x, std::span<const float> mean, std::span<const float> var,
                      float eps, std::span<const float> gamma, std::span<const float> beta,
                      MatrixView y) {
    check_same_shape("batch_norm", "x", x.rows, x.cols, "y", y.rows, y.cols);
    check_columns("batch_norm", "mean", mean, x.cols);
    check_columns("batch_norm", "var", var, x.cols);
    check_columns("batch_norm", "gamma", gamma, x.cols);
    check_columns("batch_norm", "beta", beta, x.cols);
    check_eps("batch_norm", eps);
}

void check_batch_norm_backward(ConstMatrixView x, ConstMatrixView dy, std::span<const float> mean,
                               std::span<const float> var, float eps, std::span<const float> gamma,
                               std::span<const float> sum_dy, std::span<const float> sum_dy_xhat,
                               MatrixView dx) {
    check_same_shape("batch_norm_backward", "x", x.rows, x.cols, "dy", dy.rows, dy.cols);
    check_same_shape("batch_norm_backward", "dx", dx.rows, dx.cols, "dy", dy.rows, dy.cols);
    check_columns("batch_norm_backward", "mean", mean, x.cols);
    check_columns("batch_norm_backward", "var", var, x.cols);
    check_columns("batch_norm_backward", "gamma", gamma, x.cols);
    check_columns("batch_norm_backward", "sum_dy", sum_dy, x.cols);
    check_columns("batch_norm_backward", "sum_dy_xhat", sum_dy_xhat, x.cols);
    check_eps("batch_norm_backward", eps);
}

void check_softmax_cross_entropy(ConstMatrixView logits, std::span<const index_t> labels,
                                 std::span<const std::uint8_t> mask, MatrixView dlogits) {
    const auto rows = static_cast<std::size_t>(logits.rows);
    STRATA_CHECK(labels.size() == rows && mask.size() == rows,
                 "softmax_cross_entropy: ", labels.size(), " labels and ", mask.size(),
                 " mask entries for ", rows, " rows");
    if (dlogits.data != nullptr) {
        check_same_shape("softmax_cross_entropy", "logits", logits.rows, logits.cols, "dlogits",
                         dlogits.rows, dlogits.cols);
    }
}

void check_adam(std::span<const float> params, std::span<const float> grads,
                std::span<const float> m, std::span<const float> v, const AdamStep& step) {
    STRATA_CHECK(
        grads.size() == params.size() && m.size() == params.size() && v.size() == params.size(),
        "adam: sizes differ: params ", params.size(), ", grads ", grads.size(), ", m ", m.size(),
        ", v ", v.size());
    STRATA_CHECK(step.step >= 1, "adam: step ", step.step, " must be >= 1");
}

}  // namespace strata
