// CUDA graph-attention edge operations against the CPU backend: scores, segment softmax and
// its backward, edge dropout (same mask: the zeros agree exactly), attention SpMM in its three
// head modes (with and without edge ids of a transposed structure) and edge dots, on a random
// structure with empty rows and a long row. Sums run in the same order on both; only exp may
// differ in the last bit, hence a relative tolerance for scores, weights and dots, and for the
// attention SpMMs, whose signed sums amplify a last-bit difference of a weight where they cancel,
// a bound scaled by the sum of their terms' magnitudes (as the SpMM tests do; on an H200 the
// plain relative difference reached 3.1e-5 where an output was near 0, 2026-12-04).
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/buffer.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/gpu/gpu_test_util.hpp"

namespace strata {
namespace {

constexpr index_t heads = 3;
constexpr index_t per_head = 5;

/// Every output of one chain of edge operations, downloaded.
struct Outputs {
    std::vector<std::vector<float>> values;
};

Outputs run_chain(Backend& backend, const HostCsr& host, const HostCsr& host_t,
                  const std::vector<index_t>& edge_ids, float rate) {
    const CsrMatrix a = CsrMatrix::upload(backend, host);
    const CsrMatrix at = CsrMatrix::upload(backend, host_t);
    const Buffer<index_t> ids(backend, std::span<const index_t>(edge_ids));
    const index_t m = host.rows;
    const index_t n = host.cols;
    const index_t nnz = host.nnz();
    const index_t hf = heads * per_head;
    std::vector<global_id> row_ids(static_cast<std::size_t>(m));
    std::vector<global_id> col_ids(static_cast<std::size_t>(n));
    std::iota(row_ids.begin(), row_ids.end(), global_id{1} << 40);
    for (std::size_t j = 0; j < col_ids.size(); ++j) {
        col_ids[j] = static_cast<global_id>(j) * 7919 + 3;
    }
    const Buffer<global_id> rows(backend, std::span<const global_id>(row_ids));
    const Buffer<global_id> cols(backend, std::span<const global_id>(col_ids));
    const DenseMatrix s_dst = DenseMatrix::upload(backend, test::random_matrix(m, heads, 1));
    const DenseMatrix s_src = DenseMatrix::upload(backend, test::random_matrix(n, heads, 2));
    const DenseMatrix x = DenseMatrix::upload(backend, test::random_matrix(n, hf, 3));
    const DenseMatrix x_mean = DenseMatrix::upload(backend, test::random_matrix(n, per_head, 4));
    const DenseMatrix dy = DenseMatrix::upload(backend, test::random_matrix(m, hf, 5));
    const DenseMatrix dy_mean = DenseMatrix::upload(backend, test::random_matrix(m, per_head, 6));
    DenseMatrix e(backend, nnz, heads);
    DenseMatrix alpha(backend, nnz, heads);
    DenseMatrix d(backend, nnz, heads);
    DenseMatrix d_mean(backend, nnz, heads);
    DenseMatrix y(backend, m, hf);
    DenseMatrix y_mean(backend, m, per_head);
    DenseMatrix y_spread(backend, m, hf);
    DenseMatrix yt(backend, n, hf);
    DenseMatrix yt_beta = DenseMatrix::upload(backend, test::random_matrix(n, hf, 7));

    backend.edge_scores(a, s_dst.view(), s_src.view(), 0.2f, e.view());
    backend.edge_softmax(a, e.view(), alpha.view());
    backend.edge_dropout(a, DropoutKey{.seed = 5, .epoch = 2, .layer = 1, .rate = rate},
                         rows.span(), cols.span(), alpha.view());
    backend.edge_spmm(a, {}, alpha.view(), x.view(), y.view(), 0.0f);
    backend.edge_spmm(a, {}, alpha.view(), x.view(), y_mean.view(), 0.0f);
    backend.edge_spmm(a, {}, alpha.view(), x_mean.view(), y_spread.view(), 0.0f);
    backend.edge_spmm(at, ids.span(), alpha.view(), dy.view(), yt.view(), 0.0f);
    backend.edge_spmm(at, ids.span(), alpha.view(), dy.view(), yt_beta.view(), 0.5f);
    backend.edge_dots(a, dy.view(), x.view(), d.view());
    backend.edge_dots(a, dy_mean.view(), x.view(), d_mean.view());
    backend.edge_softmax_backward(a, alpha.view(), d.view(), e.view(), 0.2f, d.view());
    Outputs out;
    for (const DenseMatrix* r : {&e, &alpha, &y, &y_mean, &y_spread, &yt, &yt_beta, &d, &d_mean}) {
        out.values.push_back(r->download().values);
    }
    return out;
}

/// Σ |terms| of each attention-SpMM output of run_chain (its outputs 2-6: y, y_mean, y_spread,
/// yt, yt_beta): the same edge_spmm calls on the CPU over |alpha| (the CPU's weights) and the
/// absolute values of run_chain's inputs, |beta| |y0| included. The scale of their rounding.
std::vector<std::vector<float>> spmm_scales(Backend& cpu, const HostCsr& host,
                                            const HostCsr& host_t,
                                            const std::vector<index_t>& edge_ids,
                                            const std::vector<float>& alpha_values) {
    const CsrMatrix a = CsrMatrix::upload(cpu, host);
    const CsrMatrix at = CsrMatrix::upload(cpu, host_t);
    const Buffer<index_t> ids(cpu, std::span<const index_t>(edge_ids));
    const index_t m = host.rows;
    const index_t n = host.cols;
    const index_t hf = heads * per_head;
    HostMatrix alpha_host(host.nnz(), heads);
    alpha_host.values = alpha_values;
    const DenseMatrix alpha = DenseMatrix::upload(cpu, test::abs_of(alpha_host));
    const DenseMatrix x = DenseMatrix::upload(cpu, test::abs_of(test::random_matrix(n, hf, 3)));
    const DenseMatrix x_mean =
        DenseMatrix::upload(cpu, test::abs_of(test::random_matrix(n, per_head, 4)));
    const DenseMatrix dy = DenseMatrix::upload(cpu, test::abs_of(test::random_matrix(m, hf, 5)));
    DenseMatrix y(cpu, m, hf);
    DenseMatrix y_mean(cpu, m, per_head);
    DenseMatrix y_spread(cpu, m, hf);
    DenseMatrix yt(cpu, n, hf);
    DenseMatrix yt_beta = DenseMatrix::upload(cpu, test::abs_of(test::random_matrix(n, hf, 7)));
    cpu.edge_spmm(a, {}, alpha.view(), x.view(), y.view(), 0.0f);
    cpu.edge_spmm(a, {}, alpha.view(), x.view(), y_mean.view(), 0.0f);
    cpu.edge_spmm(a, {}, alpha.view(), x_mean.view(), y_spread.view(), 0.0f);
    cpu.edge_spmm(at, ids.span(), alpha.view(), dy.view(), yt.view(), 0.0f);
    cpu.edge_spmm(at, ids.span(), alpha.view(), dy.view(), yt_beta.view(), 0.5f);
    std::vector<std::vector<float>> scales;
    for (const DenseMatrix* r : {&y, &y_mean, &y_spread, &yt, &yt_beta}) {
        scales.push_back(r->download().values);
    }
    return scales;
}

/// Aᵀ and the index in A of each of its entries.
HostCsr transpose_with_ids(const HostCsr& a, std::vector<index_t>& ids) {
    HostCsr t = transpose(a);
    std::vector<index_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
    ids.assign(static_cast<std::size_t>(a.nnz()), 0);
    for (index_t i = 0; i < a.rows; ++i) {
        for (index_t k = a.row_ptr[static_cast<std::size_t>(i)];
             k < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            ids[static_cast<std::size_t>(next[static_cast<std::size_t>(a.col_idx[k])]++)] = k;
        }
    }
    return t;
}

}  // namespace

TEST_CASE("CUDA graph-attention edge operations match the CPU", "[gpu]") {
    test::Backends b;
    const HostCsr a = test::random_csr(120, 90, 0.08, 11, 7, 90);
    std::vector<index_t> ids;
    const HostCsr at = transpose_with_ids(a, ids);
    for (const float rate : {0.0f, 0.5f}) {
        const Outputs cpu = run_chain(*b.cpu, a, at, ids, rate);
        const Outputs gpu = run_chain(*b.gpu, a, at, ids, rate);
        const auto scales = spmm_scales(*b.cpu, a, at, ids, cpu.values[1]);
        for (std::size_t r = 0; r < cpu.values.size(); ++r) {
            INFO("dropout " << rate << ", output " << r);
            if (r >= 2 && r <= 6) {  // the attention SpMMs
                CHECK(test::max_scaled_difference(gpu.values[r], cpu.values[r], scales[r - 2]) <
                      1e-5);
            } else {
                CHECK(test::max_relative_difference(gpu.values[r], cpu.values[r]) < 1e-5);
            }
        }
        bool same_zeros = true;  // alpha after dropout: the same mask
        for (std::size_t k = 0; k < cpu.values[1].size(); ++k) {
            same_zeros = same_zeros && ((cpu.values[1][k] == 0.0f) == (gpu.values[1][k] == 0.0f));
        }
        CHECK(same_zeros);
    }
}

}  // namespace strata
