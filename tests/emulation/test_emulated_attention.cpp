// The graph-attention kernels (attention.cu) run by the emulation against the CPU kernels on
// tests/gpu's chain: scores, segment softmax, edge dropout, the three head modes of the edge
// SpMM (with edge ids of a transposed structure, beta 0 and 0.5), edge dots (both modes) and the
// softmax backward, on a structure with empty rows and a long row, dropout 0 and 0.5; to 1e-5
// relative as tests/gpu (a GPU's expf may differ in the last bit), the dropout zeros exactly.
#include <cstdint>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/emulation/emulation_test_util.hpp"

namespace strata {
namespace {

namespace kernels = cuda::kernels;
using test::DeviceVector;
using test::no_stream;

constexpr index_t heads = 3;
constexpr index_t per_head = 5;

/// The inputs of one chain.
struct Inputs {
    std::vector<global_id> row_ids;
    std::vector<global_id> col_ids;
    std::vector<float> s_dst, s_src, x, x_mean, dy, dy_mean, yt_beta;
};

Inputs inputs_for(const HostCsr& a) {
    const index_t m = a.rows;
    const index_t n = a.cols;
    const index_t hf = heads * per_head;
    Inputs in;
    in.row_ids.resize(static_cast<std::size_t>(m));
    in.col_ids.resize(static_cast<std::size_t>(n));
    std::iota(in.row_ids.begin(), in.row_ids.end(), global_id{1} << 40);
    for (std::size_t j = 0; j < in.col_ids.size(); ++j) {
        in.col_ids[j] = static_cast<global_id>(j) * 7919 + 3;
    }
    in.s_dst = test::random_matrix(m, heads, 1).values;
    in.s_src = test::random_matrix(n, heads, 2).values;
    in.x = test::random_matrix(n, hf, 3).values;
    in.x_mean = test::random_matrix(n, per_head, 4).values;
    in.dy = test::random_matrix(m, hf, 5).values;
    in.dy_mean = test::random_matrix(m, per_head, 6).values;
    in.yt_beta = test::random_matrix(n, hf, 7).values;
    return in;
}

/// Every output of the chain, in tests/gpu's order: e, alpha, y, y_mean, y_spread, yt, yt_beta,
/// d, d_mean.
using Outputs = std::vector<std::vector<float>>;

Outputs run_cpu(const HostCsr& a, const HostCsr& at, const std::vector<index_t>& ids,
                const Inputs& in, float rate) {
    const cpu::EdgeStructure sa{a.row_ptr.data(), a.col_idx.data(), a.rows, heads};
    const cpu::EdgeStructure st{at.row_ptr.data(), at.col_idx.data(), at.rows, heads};
    const auto nnz = static_cast<std::size_t>(a.nnz()) * heads;
    const auto m = static_cast<std::size_t>(a.rows);
    const auto n = static_cast<std::size_t>(a.cols);
    const index_t hf = heads * per_head;
    const int t = test::cpu_threads;
    std::vector<float> e(nnz), alpha(nnz), d(nnz), d_mean(nnz);
    std::vector<float> y(m * hf), y_mean(m * per_head), y_spread(m * hf), yt(n * hf);
    std::vector<float> yt_beta = in.yt_beta;
    cpu::edge_scores(sa, in.s_dst.data(), in.s_src.data(), 0.2f, e.data(), t);
    cpu::edge_softmax(sa, e.data(), alpha.data(), t);
    cpu::edge_dropout(sa, DropoutKey{.seed = 5, .epoch = 2, .layer = 1, .rate = rate},
                      in.row_ids.data(), in.col_ids.data(), alpha.data(), t);
    cpu::edge_spmm(sa, nullptr, alpha.data(), in.x.data(), hf, y.data(), hf, 0.0f, t);
    cpu::edge_spmm(sa, nullptr, alpha.data(), in.x.data(), hf, y_mean.data(), per_head, 0.0f, t);
    cpu::edge_spmm(sa, nullptr, alpha.data(), in.x_mean.data(), per_head, y_spread.data(), hf, 0.0f,
                   t);
    cpu::edge_spmm(st, ids.data(), alpha.data(), in.dy.data(), hf, yt.data(), hf, 0.0f, t);
    cpu::edge_spmm(st, ids.data(), alpha.data(), in.dy.data(), hf, yt_beta.data(), hf, 0.5f, t);
    cpu::edge_dots(sa, in.dy.data(), hf, in.x.data(), hf, d.data(), t);
    cpu::edge_dots(sa, in.dy_mean.data(), per_head, in.x.data(), hf, d_mean.data(), t);
    cpu::edge_softmax_backward(sa, alpha.data(), d.data(), e.data(), 0.2f, d.data(), t);
    return {e, alpha, y, y_mean, y_spread, yt, yt_beta, d, d_mean};
}

Outputs run_emulated(const HostCsr& a, const HostCsr& at, const std::vector<index_t>& ids,
                     const Inputs& in, float rate) {
    const DeviceVector<index_t> a_ptr("A row_ptr", a.row_ptr);
    const DeviceVector<index_t> a_idx("A col_idx", a.col_idx);
    const DeviceVector<index_t> t_ptr("At row_ptr", at.row_ptr);
    const DeviceVector<index_t> t_idx("At col_idx", at.col_idx);
    const DeviceVector<index_t> edge_ids("edge_ids", ids);
    const kernels::EdgeCsr sa{a_ptr.data(), a_idx.data(), a.rows, heads};
    const kernels::EdgeCsr st{t_ptr.data(), t_idx.data(), at.rows, heads};
    const DeviceVector<global_id> row_ids("row_ids", in.row_ids);
    const DeviceVector<global_id> col_ids("col_ids", in.col_ids);
    const DeviceVector<float> s_dst("s_dst", in.s_dst);
    const DeviceVector<float> s_src("s_src", in.s_src);
    const DeviceVector<float> x("x", in.x);
    const DeviceVector<float> x_mean("x_mean", in.x_mean);
    const DeviceVector<float> dy("dy", in.dy);
    const DeviceVector<float> dy_mean("dy_mean", in.dy_mean);
    const auto nnz = static_cast<std::size_t>(a.nnz()) * heads;
    const auto m = static_cast<std::size_t>(a.rows);
    const auto n = static_cast<std::size_t>(a.cols);
    const index_t hf = heads * per_head;
    const DeviceVector<float> e("e", nnz);
    const DeviceVector<float> alpha("alpha", nnz);
    const DeviceVector<float> d("d", nnz);
    const DeviceVector<float> d_mean("d_mean", nnz);
    const DeviceVector<float> y("y", m * hf);
    const DeviceVector<float> y_mean("y_mean", m * per_head);
    const DeviceVector<float> y_spread("y_spread", m * hf);
    const DeviceVector<float> yt("yt", n * hf);
    const DeviceVector<float> yt_beta("yt_beta", in.yt_beta);
    const kernels::DropoutMask mask =
        test::dropout_mask(DropoutKey{.seed = 5, .epoch = 2, .layer = 1, .rate = rate});
    const auto ok = [](cudaError_t status) { REQUIRE(status == cudaSuccess); };
    ok(kernels::edge_scores(sa, s_dst.data(), s_src.data(), 0.2f, e.data(), no_stream));
    ok(kernels::edge_softmax(sa, e.data(), alpha.data(), no_stream));
    ok(kernels::edge_dropout(sa, mask, row_ids.data(), col_ids.data(), alpha.data(), no_stream));
    ok(kernels::edge_spmm(sa, nullptr, alpha.data(), x.data(), hf, y.data(), hf, 0.0f, no_stream));
    ok(kernels::edge_spmm(sa, nullptr, alpha.data(), x.data(), hf, y_mean.data(), per_head, 0.0f,
                          no_stream));
    ok(kernels::edge_spmm(sa, nullptr, alpha.data(), x_mean.data(), per_head, y_spread.data(), hf,
                          0.0f, no_stream));
    ok(kernels::edge_spmm(st, edge_ids.data(), alpha.data(), dy.data(), hf, yt.data(), hf, 0.0f,
                          no_stream));
    ok(kernels::edge_spmm(st, edge_ids.data(), alpha.data(), dy.data(), hf, yt_beta.data(), hf,
                          0.5f, no_stream));
    ok(kernels::edge_dots(sa, dy.data(), hf, x.data(), hf, d.data(), no_stream));
    ok(kernels::edge_dots(sa, dy_mean.data(), per_head, x.data(), hf, d_mean.data(), no_stream));
    ok(kernels::edge_softmax_backward(sa, alpha.data(), d.data(), e.data(), 0.2f, d.data(),
                                      no_stream));
    Outputs out;
    for (const DeviceVector<float>* r :
         {&e, &alpha, &y, &y_mean, &y_spread, &yt, &yt_beta, &d, &d_mean}) {
        out.push_back(r->download());
    }
    return out;
}

}  // namespace

TEST_CASE("emulated graph-attention edge kernels equal the CPU", "[emulation]") {
    struct Case {
        const char* name;
        HostCsr a;
    };
    // tests/gpu's structure (empty rows, a row of 90 entries), one with more rows than a block,
    // and one with no rows.
    const std::vector<Case> cases = {{"120 x 90", test::random_csr(120, 90, 0.08, 11, 7, 90)},
                                     {"300 x 40", test::random_csr(300, 40, 0.05, 12, 299, 40)},
                                     {"0 rows", test::random_csr(0, 9, 0.5, 13)}};
    for (const Case& c : cases) {
        std::vector<index_t> ids;
        const HostCsr at = transpose_with_entries(c.a, ids);
        const Inputs in = inputs_for(c.a);
        for (const float rate : {0.0f, 0.5f}) {
            const Outputs want = run_cpu(c.a, at, ids, in, rate);
            const Outputs got = run_emulated(c.a, at, ids, in, rate);
            for (std::size_t r = 0; r < want.size(); ++r) {
                INFO(c.name << ", dropout " << rate << ", output " << r);
                CHECK(test::max_relative_difference(got[r], want[r]) < 1e-5);
            }
            bool same_zeros = true;  // alpha after dropout: the same mask
            for (std::size_t k = 0; k < want[1].size(); ++k) {
                same_zeros = same_zeros && ((want[1][k] == 0.0f) == (got[1][k] == 0.0f));
            }
            CHECK(same_zeros);
        }
    }
}

}  // namespace strata
