// The argument checks of every Backend operation (operand_checks.hpp): one check_name per
// operation, with the operation's parameters (those it does not check are left unnamed).
#include "src/device/operand_checks.hpp"

#include "src/base/error.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {

void check_same_shape(const char* op, const char* name_a, index_t rows_a, index_t cols_a,
                      const char* name_b, index_t rows_b, index_t cols_b) {
    STRATA_CHECK(rows_a == rows_b && cols_a == cols_b, op, ": ", name_a, " is ", rows_a, " x ",
                 cols_a, " but ", name_b, " is ", rows_b, " x ", cols_b);
}

void check_spmm(const CsrMatrix& a, RowRange rows, ConstMatrixView x, MatrixView y,
                float /*beta*/) {
    STRATA_CHECK(rows.first >= 0 && rows.count >= 0 && rows.first <= a.rows() - rows.count,
                 "spmm: rows [", rows.first, ", ", rows.end(), ") are not inside A's ", a.rows(),
                 " rows");
    STRATA_CHECK(x.rows == a.cols(), "spmm: A is ", a.rows(), " x ", a.cols(), " but x has ",
                 x.rows, " rows");
    check_same_shape("spmm", "y", y.rows, y.cols, "A[rows] x", rows.count, x.cols);
    STRATA_CHECK(!overlaps(x.data, x.size(), y.data, y.size()), "spmm: y overlaps x");
}

void check_spmm_scatter_add(const CsrMatrix& a, std::span<const index_t> rows, ConstMatrixView x,
                            MatrixView y) {
    STRATA_CHECK(rows.size() == static_cast<std::size_t>(a.rows()),
                 "spmm_scatter_add: ", rows.size(), " row ids for A's ", a.rows(), " rows");
    STRATA_CHECK(x.rows == a.cols(), "spmm_scatter_add: A is ", a.rows(), " x ", a.cols(),
                 " but x has ", x.rows, " rows");
    STRATA_CHECK(y.cols == x.cols && y.rows >= a.rows(), "spmm_scatter_add: y is ", y.rows, " x ",
                 y.cols, ", expected >= ", a.rows(), " rows of ", x.cols, " columns");
    STRATA_CHECK(!overlaps(x.data, x.size(), y.data, y.size()), "spmm_scatter_add: y overlaps x");
}

namespace {

/// x holds packed records (not fp32) of x.rows records.
void check_packed(const char* op, ConstPackedMatrix x) {
    STRATA_CHECK(x.precision != HaloPrecision::fp32, op,
                 ": fp32 rows are not packed (use the fp32 operation)");
    STRATA_CHECK(x.data != nullptr || x.rows == 0 || x.cols == 0, op, ": no records for ", x.rows,
                 " rows");
}

}  // namespace

void check_spmm_scatter_add_packed(const CsrMatrix& a, std::span<const index_t> rows,
                                   ConstPackedMatrix x, MatrixView y) {
    check_packed("spmm_scatter_add_packed", x);
    STRATA_CHECK(rows.size() == static_cast<std::size_t>(a.rows()),
                 "spmm_scatter_add_packed: ", rows.size(), " row ids for A's ", a.rows(), " rows");
    STRATA_CHECK(x.rows == a.cols(), "spmm_scatter_add_packed: A is ", a.rows(), " x ", a.cols(),
                 " but x has ", x.rows, " records");
    STRATA_CHECK(y.cols == x.cols && y.rows >= a.rows(), "spmm_scatter_add_packed: y is ", y.rows,
                 " x ", y.cols, ", expected >= ", a.rows(), " rows of ", x.cols, " columns");
}

GemmShape gemm_shape(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb) {
    GemmShape s;
    s.trans_a = ta == Transpose::yes;
    s.trans_b = tb == Transpose::yes;
    s.m = s.trans_a ? a.cols : a.rows;
    s.k = s.trans_a ? a.rows : a.cols;
    s.n = s.trans_b ? b.rows : b.cols;
    return s;
}

void check_gemm(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb, MatrixView c,
                float /*alpha*/, float /*beta*/) {
    const GemmShape s = gemm_shape(a, ta, b, tb);
    const index_t kb = s.trans_b ? b.cols : b.rows;
    STRATA_CHECK(s.k == kb, "gemm: op(a) is ", s.m, " x ", s.k, " but op(b) is ", kb, " x ", s.n);
    check_same_shape("gemm", "c", c.rows, c.cols, "op(a) op(b)", s.m, s.n);
    STRATA_CHECK(!overlaps(a.data, a.size(), c.data, c.size()) &&
                     !overlaps(b.data, b.size(), c.data, c.size()),
                 "gemm: c overlaps an input");
}

void check_gather_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) {
    check_same_shape("gather_rows", "out", out.rows, out.cols, "rows.size() x x.cols",
                     static_cast<index_t>(rows.size()), x.cols);
}

namespace {

/// scatter_add_rows and scatter_rows (`op`): x is rows.size() x out.cols.
void check_scatter(const char* op, ConstMatrixView x, std::span<const index_t> rows,
                   MatrixView out) {
    check_same_shape(op, "x", x.rows, x.cols, "rows.size() x out.cols",
                     static_cast<index_t>(rows.size()), out.cols);
}

}  // namespace

void check_scatter_add_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) {
    check_scatter("scatter_add_rows", x, rows, out);
}

void check_scatter_add_packed_rows(ConstPackedMatrix x, std::span<const index_t> rows,
                                   MatrixView out) {
    check_packed("scatter_add_packed_rows", x);
    check_same_shape("scatter_add_packed_rows", "x", x.rows, x.cols, "rows.size() x out.cols",
                     static_cast<index_t>(rows.size()), out.cols);
}

void check_scatter_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) {
    check_scatter("scatter_rows", x, rows, out);
}

void check_fill(MatrixView /*y*/, float /*value*/) {}  // any view

void check_axpby(float /*alpha*/, ConstMatrixView x, float /*beta*/, MatrixView y) {
    check_same_shape("axpby", "x", x.rows, x.cols, "y", y.rows, y.cols);
}

void check_column_sums(ConstMatrixView x, std::span<float> out, float /*beta*/) {
    STRATA_CHECK(out.size() == static_cast<std::size_t>(x.cols), "column_sums: out has ",
                 out.size(), " entries but x has ", x.cols, " columns");
}

namespace {

/// A finite leaky_relu slope >= 0 (backward reads the sign of v from y).
void check_activation(const char* op, ActivationSpec act) {
    STRATA_CHECK(act.kind != Activation::leaky_relu || act.negative_slope >= 0.0f, op,
                 ": leaky_relu negative slope ", act.negative_slope, " must be >= 0");
}

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

void check_bias_activation_backward(ConstMatrixView saved, std::span<const float> bias,
                                    ConstMatrixView dy, ActivationSpec act, const DropoutKey& key,
                                    std::span<const global_id> row_ids, MatrixView dx,
                                    float /*beta*/) {
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

void check_axpby_scalar(float /*shift*/, std::span<const float> s, ConstMatrixView x,
                        float /*beta*/, MatrixView y) {
    STRATA_CHECK(s.size() == 1, "axpby_scalar: the scale has ", s.size(), " entries, expected 1");
    check_same_shape("axpby_scalar", "x", x.rows, x.cols, "y", y.rows, y.cols);
}

void check_dot(ConstMatrixView a, ConstMatrixView b, std::span<float> out, float /*beta*/) {
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
                               float eps, MatrixView dx, float /*beta*/, std::span<float> dgamma,
                               std::span<float> dbeta) {
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
                                std::span<const float> var, float /*eps*/, ConstMatrixView w,
                                std::span<float> out, float /*beta*/) {
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
                               double /*count*/, MatrixView dx, float /*beta*/) {
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
                                 std::span<const std::uint8_t> mask, float /*grad_scale*/,
                                 MatrixView dlogits) {
    const auto rows = static_cast<std::size_t>(logits.rows);
    STRATA_CHECK(labels.size() == rows && mask.size() == rows,
                 "softmax_cross_entropy: ", labels.size(), " labels and ", mask.size(),
                 " mask entries for ", rows, " rows");
    if (dlogits.data != nullptr) {
        check_same_shape("softmax_cross_entropy", "logits", logits.rows, logits.cols, "dlogits",
                         dlogits.rows, dlogits.cols);
    }
}

namespace {

/// Edge values of A: nnz x H with H > 0.
void check_edge_values(const char* op, const char* name, const CsrMatrix& a, index_t rows,
                       index_t heads) {
    STRATA_CHECK(heads > 0, op, ": ", name, " has no head columns");
    STRATA_CHECK(rows == a.nnz(), op, ": ", name, " has ", rows, " rows but A has ", a.nnz(),
                 " entries");
}

}  // namespace

void check_edge_scores(const CsrMatrix& a, ConstMatrixView s_dst, ConstMatrixView s_src,
                       float /*negative_slope*/, MatrixView e) {
    check_edge_values("edge_scores", "e", a, e.rows, e.cols);
    check_same_shape("edge_scores", "s_dst", s_dst.rows, s_dst.cols, "A.rows x H", a.rows(),
                     e.cols);
    check_same_shape("edge_scores", "s_src", s_src.rows, s_src.cols, "A.cols x H", a.cols(),
                     e.cols);
}

void check_edge_softmax(const CsrMatrix& a, ConstMatrixView e, MatrixView alpha) {
    check_edge_values("edge_softmax", "e", a, e.rows, e.cols);
    check_same_shape("edge_softmax", "e", e.rows, e.cols, "alpha", alpha.rows, alpha.cols);
}

void check_edge_softmax_backward(const CsrMatrix& a, ConstMatrixView alpha, ConstMatrixView dalpha,
                                 ConstMatrixView e, float /*negative_slope*/, MatrixView dz) {
    check_edge_values("edge_softmax_backward", "alpha", a, alpha.rows, alpha.cols);
    check_same_shape("edge_softmax_backward", "alpha", alpha.rows, alpha.cols, "dalpha",
                     dalpha.rows, dalpha.cols);
    check_same_shape("edge_softmax_backward", "alpha", alpha.rows, alpha.cols, "e", e.rows, e.cols);
    check_same_shape("edge_softmax_backward", "alpha", alpha.rows, alpha.cols, "dz", dz.rows,
                     dz.cols);
    STRATA_CHECK(!overlaps(alpha.data, alpha.size(), dz.data, dz.size()) &&
                     !overlaps(e.data, e.size(), dz.data, dz.size()),
                 "edge_softmax_backward: dz overlaps alpha or e");
}

void check_edge_dropout(const CsrMatrix& a, const DropoutKey& key,
                        std::span<const global_id> row_ids, std::span<const global_id> col_ids,
                        MatrixView values) {
    check_edge_values("edge_dropout", "values", a, values.rows, values.cols);
    STRATA_CHECK(key.rate >= 0.0f && key.rate < 1.0f, "edge_dropout: dropout rate ", key.rate,
                 " not in [0, 1)");
    STRATA_CHECK(key.rate == 0.0f || (row_ids.size() == static_cast<std::size_t>(a.rows()) &&
                                      col_ids.size() == static_cast<std::size_t>(a.cols())),
                 "edge_dropout: ", row_ids.size(), " row ids and ", col_ids.size(),
                 " column ids for A of ", a.rows(), " x ", a.cols());
}

void check_edge_spmm(const CsrMatrix& a, std::span<const index_t> edge_ids, ConstMatrixView alpha,
                     ConstMatrixView x, MatrixView y, float /*beta*/) {
    const index_t heads = alpha.cols;
    STRATA_CHECK(heads > 0, "edge_spmm: alpha has no head columns");
    STRATA_CHECK(edge_ids.empty() ? alpha.rows == a.nnz()
                                  : edge_ids.size() == static_cast<std::size_t>(a.nnz()),
                 "edge_spmm: A has ", a.nnz(), " entries but alpha has ", alpha.rows,
                 " rows and there are ", edge_ids.size(), " edge ids");
    STRATA_CHECK(x.rows == a.cols() && y.rows == a.rows(), "edge_spmm: A is ", a.rows(), " x ",
                 a.cols(), " but x has ", x.rows, " rows and y ", y.rows);
    const bool per_head = x.cols == y.cols && x.cols % heads == 0;
    const bool mean = x.cols == heads * y.cols || y.cols == heads * x.cols;
    STRATA_CHECK(per_head || mean, "edge_spmm: widths x ", x.cols, " and y ", y.cols,
                 " fit no head mode of ", heads, " heads");
    STRATA_CHECK(!overlaps(x.data, x.size(), y.data, y.size()) &&
                     !overlaps(alpha.data, alpha.size(), y.data, y.size()),
                 "edge_spmm: y overlaps x or alpha");
}

void check_edge_dots(const CsrMatrix& a, ConstMatrixView x, ConstMatrixView z, MatrixView out) {
    check_edge_values("edge_dots", "out", a, out.rows, out.cols);
    const index_t heads = out.cols;
    STRATA_CHECK(x.rows == a.rows() && z.rows == a.cols(), "edge_dots: A is ", a.rows(), " x ",
                 a.cols(), " but x has ", x.rows, " rows and z ", z.rows);
    STRATA_CHECK(z.cols % heads == 0 && (x.cols == z.cols || x.cols * heads == z.cols),
                 "edge_dots: widths x ", x.cols, " and z ", z.cols, " fit no head mode of ", heads,
                 " heads");
    STRATA_CHECK(!overlaps(x.data, x.size(), out.data, out.size()) &&
                     !overlaps(z.data, z.size(), out.data, out.size()),
                 "edge_dots: out overlaps x or z");
}

void check_adam(std::span<float> params, std::span<const float> grads, std::span<float> m,
                std::span<float> v, const AdamStep& step) {
    STRATA_CHECK(
        grads.size() == params.size() && m.size() == params.size() && v.size() == params.size(),
        "adam: sizes differ: params ", params.size(), ", grads ", grads.size(), ", m ", m.size(),
        ", v ", v.size());
    STRATA_CHECK(step.step >= 1, "adam: step ", step.step, " must be >= 1");
}

}  // namespace strata
