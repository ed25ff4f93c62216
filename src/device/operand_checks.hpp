// Argument checks shared by every Backend implementation (shapes, sizes, aliasing): one
// function per operation, so each backend rejects a bad call with the same message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "src/base/types.hpp"
#include "src/device/backend.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// Whether the ranges [a, a + a_size) and [b, b + b_size) of floats share an element.
inline bool overlaps(const float* a, std::size_t a_size, const float* b, std::size_t b_size) {
    return a_size > 0 && b_size > 0 && a < b + b_size && b < a + a_size;
}

/// Throws "<op>: <name_a> is r x c but <name_b> is r' x c'" unless the shapes agree.
void check_same_shape(const char* op, const char* name_a, index_t rows_a, index_t cols_a,
                      const char* name_b, index_t rows_b, index_t cols_b);

/// y = A[rows] x + beta y: rows inside A, x has A.cols rows, y is rows.count x x.cols, y does not
/// overlap x.
void check_spmm(const CsrMatrix& a, RowRange rows, ConstMatrixView x, MatrixView y);
/// Backend::spmm_scatter_add: one row id per row of A, x: A.cols x f, y: ? x f (ids are in
/// backend memory and not read here).
void check_spmm_scatter_add(const CsrMatrix& a, std::span<const index_t> rows, ConstMatrixView x,
                            MatrixView y);

/// c = alpha op(a) op(b) + beta c: m x k times k x n into m x n, c overlapping neither input.
struct GemmShape {
    index_t m = 0;
    index_t n = 0;
    index_t k = 0;
    bool trans_a = false;
    bool trans_b = false;
};
[[nodiscard]] GemmShape check_gemm(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb,
                                   MatrixView c);

/// Shapes only: out is rows.size() x x.cols (the row ids are checked where they are readable).
void check_gather_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out);
/// Shapes only: x is rows.size() x out.cols. `op` names the caller (scatter_add_rows,
/// scatter_rows) in the message.
void check_scatter_rows(const char* op, ConstMatrixView x, std::span<const index_t> rows,
                        MatrixView out);
void check_axpby(ConstMatrixView x, MatrixView y);
void check_column_sums(ConstMatrixView x, std::span<const float> out);
/// Shapes, bias empty or one entry per column, one row id per row when dropping, 0 <= rate < 1.
void check_bias_activation(ConstMatrixView x, std::span<const float> bias, ActivationSpec act,
                           const DropoutKey& key, std::span<const global_id> row_ids, MatrixView y);
/// Shapes (saved only for an activation, bias only for gelu), a leaky_relu slope >= 0, one row
/// id per row when a mask is regenerated (dropout without relu), 0 <= rate < 1.
void check_bias_activation_backward(ConstMatrixView saved, std::span<const float> bias,
                                    ConstMatrixView dy, ActivationSpec act, const DropoutKey& key,
                                    std::span<const global_id> row_ids, MatrixView dx);
/// A finite leaky_relu slope >= 0 (backward reads the sign of v from y).
void check_activation(const char* op, ActivationSpec act);
void check_axpby_scalar(std::span<const float> s, ConstMatrixView x, MatrixView y);
void check_dot(ConstMatrixView a, ConstMatrixView b, std::span<const float> out);
/// x, y (and dx, dy) same shape, gamma/beta one entry per column, eps > 0, y not overlapping x.
void check_layer_norm(ConstMatrixView x, std::span<const float> gamma, std::span<const float> beta,
                      float eps, MatrixView y);
void check_layer_norm_backward(ConstMatrixView x, ConstMatrixView dy, std::span<const float> gamma,
                               float eps, MatrixView dx, std::span<const float> dgamma,
                               std::span<const float> dbeta);
void check_centered_column_sums(ConstMatrixView x, std::span<const float> mean,
                                std::span<const float> var, ConstMatrixView w,
                                std::span<const float> out);
void check_batch_norm(ConstMatrixView x, std::span<const float> mean, std::span<const float> var,
                      float eps, std::span<const float> gamma, std::span<const float> beta,
                      MatrixView y);
void check_batch_norm_backward(ConstMatrixView x, ConstMatrixView dy, std::span<const float> mean,
                               std::span<const float> var, float eps, std::span<const float> gamma,
                               std::span<const float> sum_dy, std::span<const float> sum_dy_xhat,
                               MatrixView dx);
/// Sizes only (labels are checked where they are readable).
void check_softmax_cross_entropy(ConstMatrixView logits, std::span<const index_t> labels,
                                 std::span<const std::uint8_t> mask, MatrixView dlogits);
/// Graph attention (Backend::edge_*): edge values nnz x H, H > 0, node matrices with A's rows
/// or columns, the widths of the head modes, outputs not overlapping inputs (unless allowed).
void check_edge_scores(const CsrMatrix& a, ConstMatrixView s_dst, ConstMatrixView s_src,
                       MatrixView e);
void check_edge_softmax(const CsrMatrix& a, ConstMatrixView e, MatrixView alpha);
void check_edge_softmax_backward(const CsrMatrix& a, ConstMatrixView alpha, ConstMatrixView dalpha,
                                 ConstMatrixView e, MatrixView dz);
void check_edge_dropout(const CsrMatrix& a, const DropoutKey& key,
                        std::span<const global_id> row_ids, std::span<const global_id> col_ids,
                        MatrixView values);
void check_edge_spmm(const CsrMatrix& a, std::span<const index_t> edge_ids, ConstMatrixView alpha,
                     ConstMatrixView x, MatrixView y);
void check_edge_dots(const CsrMatrix& a, ConstMatrixView x, ConstMatrixView z, MatrixView out);
void check_adam(std::span<const float> params, std::span<const float> grads,
                std::span<const float> m, std::span<const float> v, const AdamStep& step);

}  // namespace strata
