// Backend calls with one bad operand each, and the one-line message every backend must give:
// the argument checks run in Backend's entry points (src/device/backend.cpp), before any backend
// sees the call. Used on the CPU and on a backend that records what reaches it
// (tests/src/test_operand_checks.cpp), and on CUDA (tests/gpu/test_cuda_operand_checks.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/device/backend.hpp"
#include "src/device/buffer.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "src/tensor/host_csr.hpp"

namespace strata::test {

struct BadCall {
    const char* operation;
    const char* message;                 ///< Error::message() of the call
    std::function<void(Backend&)> call;  ///< makes its operands on the backend, then calls
};

/// The message of the strata::Error `call` throws on `backend` ("" if none).
inline std::string message_of(const BadCall& call, Backend& backend) {
    try {
        call.call(backend);
    } catch (const Error& e) {
        return e.message();
    }
    return "";
}

/// 3 x 4 with 5 entries.
inline HostCsr bad_call_csr() {
    HostCsr a;
    a.rows = 3;
    a.cols = 4;
    a.row_ptr = {0, 2, 3, 5};
    a.col_idx = {0, 3, 1, 0, 2};
    a.values = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
    return a;
}

/// One bad call each for a spread of operations (sparse, dense, gather, elementwise, fused,
/// normalisation, loss, attention, optimizer).
inline std::vector<BadCall> bad_operand_calls() {
    return {
        {"spmm", "spmm: A is 3 x 4 but x has 5 rows",
         [](Backend& b) {
             const CsrMatrix a = CsrMatrix::upload(b, bad_call_csr());
             const DenseMatrix x(b, 5, 2);
             DenseMatrix y(b, 3, 2);
             b.spmm(a, x.view(), y.view(), 0.0f);
         }},
        {"gemm", "gemm: op(a) is 2 x 3 but op(b) is 4 x 2",
         [](Backend& b) {
             const DenseMatrix a(b, 2, 3);
             const DenseMatrix x(b, 4, 2);
             DenseMatrix c(b, 2, 2);
             b.gemm(a.view(), Transpose::no, x.view(), Transpose::no, c.view(), 1.0f, 0.0f);
         }},
        {"gather_rows", "gather_rows: out is 3 x 3 but rows.size() x x.cols is 2 x 3",
         [](Backend& b) {
             const DenseMatrix x(b, 4, 3);
             const Buffer<index_t> rows(b, std::vector<index_t>{0, 1});
             DenseMatrix out(b, 3, 3);
             b.gather_rows(x.view(), rows.span(), out.view());
         }},
        {"axpby", "axpby: x is 2 x 3 but y is 3 x 2",
         [](Backend& b) {
             const DenseMatrix x(b, 2, 3);
             DenseMatrix y(b, 3, 2);
             b.axpby(1.0f, x.view(), 0.0f, y.view());
         }},
        {"bias_activation", "bias_activation: dropout rate 1 not in [0, 1)",
         [](Backend& b) {
             DenseMatrix x(b, 2, 3);
             const Buffer<global_id> ids(b, std::vector<global_id>{7, 8});
             b.bias_activation(x.view(), {}, Activation::relu, DropoutKey{.rate = 1.0f}, ids.span(),
                               x.view());
         }},
        {"layer_norm", "layer_norm: eps 0 must be > 0",
         [](Backend& b) {
             const DenseMatrix x(b, 2, 3);
             const Buffer<float> gamma(b, 3);
             const Buffer<float> beta(b, 3);
             DenseMatrix y(b, 2, 3);
             b.layer_norm(x.view(), gamma.span(), beta.span(), 0.0f, y.view());
         }},
        {"softmax_cross_entropy", "softmax_cross_entropy: 2 labels and 3 mask entries for 3 rows",
         [](Backend& b) {
             const DenseMatrix logits(b, 3, 2);
             const Buffer<index_t> labels(b, std::vector<index_t>{0, 1});
             const Buffer<std::uint8_t> mask(b, std::vector<std::uint8_t>{1, 1, 1});
             (void)b.softmax_cross_entropy(logits.view(), labels.span(), mask.span(), 1.0f, {});
         }},
        {"edge_softmax", "edge_softmax: e has 4 rows but A has 5 entries",
         [](Backend& b) {
             const CsrMatrix a = CsrMatrix::upload(b, bad_call_csr());
             const DenseMatrix e(b, 4, 2);
             DenseMatrix alpha(b, 4, 2);
             b.edge_softmax(a, e.view(), alpha.view());
         }},
        {"adam", "adam: sizes differ: params 4, grads 3, m 4, v 4",
         [](Backend& b) {
             Buffer<float> p(b, 4);
             const Buffer<float> g(b, 3);
             Buffer<float> m(b, 4);
             Buffer<float> v(b, 4);
             b.adam(p.span(), g.span(), m.span(), v.span(), AdamStep{});
         }},
    };
}

}  // namespace strata::test
