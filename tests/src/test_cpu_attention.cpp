// Tests of the CPU graph-attention edge operations (Backend::edge_*): hand-checked scores and
// softmax, and plain double-precision loops for the softmax backward, the edge dropout (the
// documented counter_rng key), the attention SpMM in its three head modes (with edge ids of a
// transposed structure) and the edge dots; results independent of the thread count; errors.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/counter_rng.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

using Catch::Matchers::Contains;

/// A: 2 x 3, row 0 = {0, 2}, row 1 = {1}.
HostCsr hand_structure() {
    HostCsr a;
    a.rows = 2;
    a.cols = 3;
    a.row_ptr = {0, 2, 3};
    a.col_idx = {0, 2, 1};
    a.values = {9.0f, 9.0f, 9.0f};  // never read
    return a;
}

/// Random structure with every row non-empty (a self-loop-like diagonal entry).
HostCsr structure(index_t rows, index_t cols, std::uint32_t seed) {
    HostCsr a = test::random_csr(rows, cols, 0.15, seed);
    HostCsr b;
    b.rows = rows;
    b.cols = cols;
    for (index_t i = 0; i < rows; ++i) {
        bool diagonal = false;
        for (index_t k = a.row_ptr[static_cast<std::size_t>(i)];
             k < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            const index_t c = a.col_idx[static_cast<std::size_t>(k)];
            if (!diagonal && c >= i % cols) {
                if (c != i % cols) {
                    b.col_idx.push_back(i % cols);
                }
                diagonal = true;
            }
            b.col_idx.push_back(c);
        }
        if (!diagonal) {
            b.col_idx.push_back(i % cols);
        }
        b.row_ptr.push_back(static_cast<index_t>(b.col_idx.size()));
    }
    b.values.assign(b.col_idx.size(), 1.0f);
    return b;
}

/// Global ids i * step + first for i < count (dropout keys far from the positions).
std::vector<global_id> spread_ids(index_t count, global_id step, global_id first) {
    std::vector<global_id> ids(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<global_id>(i) * step + first;
    }
    return ids;
}

/// Row of entry k.
std::vector<index_t> entry_rows(const HostCsr& a) {
    std::vector<index_t> rows;
    for (index_t i = 0; i < a.rows; ++i) {
        for (index_t k = a.row_ptr[static_cast<std::size_t>(i)];
             k < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            rows.push_back(i);
        }
    }
    return rows;
}

double worst_difference(const std::vector<float>& got, const std::vector<double>& expected) {
    double worst = got.size() == expected.size() ? 0.0 : INFINITY;
    for (std::size_t i = 0; i < got.size() && i < expected.size(); ++i) {
        worst = std::max(worst, std::abs(got[i] - expected[i]) / (std::abs(expected[i]) + 1e-2));
    }
    return worst;
}

}  // namespace

TEST_CASE("edge scores and softmax by hand", "[cpu][attention]") {
    auto backend = make_cpu_backend(1);
    const CsrMatrix a = CsrMatrix::upload(*backend, hand_structure());
    const DenseMatrix s_dst = DenseMatrix::upload(*backend, test::matrix(2, 2, {1, -1, 0, 2}));
    const DenseMatrix s_src =
        DenseMatrix::upload(*backend, test::matrix(3, 2, {0.5f, 0, -3, 1, -2, 0.5f}));
    DenseMatrix e(*backend, 3, 2);
    backend->edge_scores(a, s_dst.view(), s_src.view(), 0.2f, e.view());
    const std::vector<float> scores = e.download().values;
    const std::vector<double> expected{1.5, -0.2, -0.2, -0.1, -0.6, 3.0};
    CHECK(worst_difference(scores, expected) < 1e-6);

    backend->edge_softmax(a, e.view(), e.view());  // in place
    const double p0 = 1.0 / (1.0 + std::exp(-0.2 - 1.5));
    const double p1 = 1.0 / (1.0 + std::exp(-0.1 + 0.2));
    CHECK(worst_difference(e.download().values, {p0, p1, 1.0 - p0, 1.0 - p1, 1.0, 1.0}) < 1e-6);
}

TEST_CASE("edge softmax backward, dropout, spmm and dots equal plain loops", "[cpu][attention]") {
    auto backend = make_cpu_backend(2);
    const index_t m = 23;
    const index_t n = 31;
    const index_t heads = 3;
    const index_t f = 4;
    const HostCsr host = structure(m, n, 4);
    const HostCsr host_t = transpose(host);
    const std::vector<index_t> rows_of = entry_rows(host);
    const auto nnz = static_cast<std::size_t>(host.nnz());
    // edge ids of the transpose: the entry of A with the same (row, column).
    std::vector<index_t> ids;
    for (index_t j = 0; j < host_t.rows; ++j) {
        for (index_t q = host_t.row_ptr[static_cast<std::size_t>(j)];
             q < host_t.row_ptr[static_cast<std::size_t>(j) + 1]; ++q) {
            const index_t i = host_t.col_idx[static_cast<std::size_t>(q)];
            for (index_t k = host.row_ptr[static_cast<std::size_t>(i)];
                 k < host.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
                if (host.col_idx[static_cast<std::size_t>(k)] == j) {
                    ids.push_back(k);
                }
            }
        }
    }
    REQUIRE(ids.size() == nnz);
    const CsrMatrix a = CsrMatrix::upload(*backend, host);
    const CsrMatrix at = CsrMatrix::upload(*backend, host_t);
    const Buffer<index_t> edge_ids(*backend, std::span<const index_t>(ids));
    const HostMatrix alpha_h = test::random_matrix(static_cast<index_t>(nnz), heads, 1, 0.0f, 1.0f);
    const HostMatrix dalpha_h = test::random_matrix(static_cast<index_t>(nnz), heads, 2);
    const HostMatrix e_h = test::random_matrix(static_cast<index_t>(nnz), heads, 3);
    const HostMatrix x_h = test::random_matrix(n, heads * f, 4);
    const HostMatrix xf_h = test::random_matrix(n, f, 5);
    const HostMatrix dy_h = test::random_matrix(m, heads * f, 6);
    const DenseMatrix alpha = DenseMatrix::upload(*backend, alpha_h);
    const DenseMatrix e = DenseMatrix::upload(*backend, e_h);
    const DenseMatrix x = DenseMatrix::upload(*backend, x_h);
    const DenseMatrix xf = DenseMatrix::upload(*backend, xf_h);
    const DenseMatrix dy = DenseMatrix::upload(*backend, dy_h);
    auto at_edge = [&](const HostMatrix& v, std::size_t k, index_t h) {
        return static_cast<double>(v.values[k * static_cast<std::size_t>(heads) + h]);
    };

    SECTION("softmax backward through the LeakyReLU") {
        DenseMatrix dz = DenseMatrix::upload(*backend, dalpha_h);  // in place over dalpha
        backend->edge_softmax_backward(a, alpha.view(), dz.view(), e.view(), 0.2f, dz.view());
        std::vector<double> expected(nnz * heads);
        for (std::size_t k = 0; k < nnz; ++k) {
            const index_t i = rows_of[k];
            for (index_t h = 0; h < heads; ++h) {
                double dot = 0.0;
                for (auto q = static_cast<std::size_t>(host.row_ptr[static_cast<std::size_t>(i)]);
                     q < static_cast<std::size_t>(host.row_ptr[static_cast<std::size_t>(i) + 1]);
                     ++q) {
                    dot += at_edge(alpha_h, q, h) * at_edge(dalpha_h, q, h);
                }
                const double g = at_edge(alpha_h, k, h) * (at_edge(dalpha_h, k, h) - dot);
                expected[k * heads + static_cast<std::size_t>(h)] =
                    at_edge(e_h, k, h) > 0.0 ? g : 0.2 * g;
            }
        }
        CHECK(worst_difference(dz.download().values, expected) < 1e-5);
    }
    SECTION("dropout keyed by the edge's global ids and the head") {
        const std::vector<global_id> row_ids = spread_ids(m, 101, 7);
        const std::vector<global_id> col_ids = spread_ids(n, 37, global_id{1} << 35);
        const Buffer<global_id> rows(*backend, std::span<const global_id>(row_ids));
        const Buffer<global_id> cols(*backend, std::span<const global_id>(col_ids));
        DenseMatrix v = DenseMatrix::upload(*backend, alpha_h);
        const DropoutKey key{.seed = 3, .epoch = 4, .layer = 5, .rate = 0.4f};
        backend->edge_dropout(a, key, rows.span(), cols.span(), v.view());
        const std::uint64_t stream = dropout_stream(3, 4, 5);
        std::vector<double> expected(nnz * heads);
        int dropped = 0;
        for (std::size_t k = 0; k < nnz; ++k) {
            for (index_t h = 0; h < heads; ++h) {
                const global_id col =
                    col_ids[static_cast<std::size_t>(host.col_idx[k])] * heads + h;
                const bool keep = counter_u32(stream, row_ids[static_cast<std::size_t>(rows_of[k])],
                                              col) >= dropout_threshold(0.4f);
                dropped += keep ? 0 : 1;
                expected[k * heads + static_cast<std::size_t>(h)] =
                    keep ? at_edge(alpha_h, k, h) / (1.0 - 0.4f) : 0.0;
            }
        }
        CHECK(worst_difference(v.download().values, expected) < 1e-6);
        CHECK(dropped > 0);
    }
    SECTION("attention spmm in the three head modes, and through the transpose") {
        DenseMatrix y(*backend, m, heads * f);
        DenseMatrix y_mean(*backend, m, f);
        DenseMatrix y_spread(*backend, m, heads * f);
        const HostMatrix yt0 = test::random_matrix(n, heads * f, 7);
        DenseMatrix yt = DenseMatrix::upload(*backend, yt0);
        backend->edge_spmm(a, {}, alpha.view(), x.view(), y.view(), 0.0f);
        backend->edge_spmm(a, {}, alpha.view(), x.view(), y_mean.view(), 0.0f);
        backend->edge_spmm(a, {}, alpha.view(), xf.view(), y_spread.view(), 0.0f);
        backend->edge_spmm(at, edge_ids.span(), alpha.view(), dy.view(), yt.view(), 0.5f);
        std::vector<double> ey(static_cast<std::size_t>(m * heads * f), 0.0);
        std::vector<double> emean(static_cast<std::size_t>(m * f), 0.0);
        std::vector<double> espread(static_cast<std::size_t>(m * heads * f), 0.0);
        std::vector<double> et(yt0.values.begin(), yt0.values.end());
        for (double& v : et) {
            v *= 0.5;
        }
        for (std::size_t k = 0; k < nnz; ++k) {
            const auto i = static_cast<std::size_t>(rows_of[k]);
            const index_t j = host.col_idx[k];
            for (index_t h = 0; h < heads; ++h) {
                const double w = at_edge(alpha_h, k, h);
                for (index_t q = 0; q < f; ++q) {
                    const auto c = static_cast<std::size_t>(h * f + q);
                    ey[i * static_cast<std::size_t>(heads * f) + c] += w * x_h.at(j, h * f + q);
                    emean[i * static_cast<std::size_t>(f) + static_cast<std::size_t>(q)] +=
                        w * x_h.at(j, h * f + q) / heads;
                    espread[i * static_cast<std::size_t>(heads * f) + c] +=
                        w * xf_h.at(j, q) / heads;
                    et[static_cast<std::size_t>(j) * static_cast<std::size_t>(heads * f) + c] +=
                        w * dy_h.at(static_cast<index_t>(i), h * f + q);
                }
            }
        }
        CHECK(worst_difference(y.download().values, ey) < 1e-5);
        CHECK(worst_difference(y_mean.download().values, emean) < 1e-5);
        CHECK(worst_difference(y_spread.download().values, espread) < 1e-5);
        CHECK(worst_difference(yt.download().values, et) < 1e-5);
    }
    SECTION("edge dots per head and against a heads-mean gradient") {
        DenseMatrix d(*backend, static_cast<index_t>(nnz), heads);
        DenseMatrix d_mean(*backend, static_cast<index_t>(nnz), heads);
        const HostMatrix dyf_h = test::random_matrix(m, f, 8);
        const DenseMatrix dyf = DenseMatrix::upload(*backend, dyf_h);
        backend->edge_dots(a, dy.view(), x.view(), d.view());
        backend->edge_dots(a, dyf.view(), x.view(), d_mean.view());
        std::vector<double> ed(nnz * heads, 0.0);
        std::vector<double> emean(nnz * heads, 0.0);
        for (std::size_t k = 0; k < nnz; ++k) {
            for (index_t h = 0; h < heads; ++h) {
                for (index_t q = 0; q < f; ++q) {
                    const double z = x_h.at(host.col_idx[k], h * f + q);
                    ed[k * heads + static_cast<std::size_t>(h)] +=
                        dy_h.at(rows_of[k], h * f + q) * z;
                    emean[k * heads + static_cast<std::size_t>(h)] +=
                        dyf_h.at(rows_of[k], q) * z / heads;
                }
            }
        }
        CHECK(worst_difference(d.download().values, ed) < 1e-5);
        CHECK(worst_difference(d_mean.download().values, emean) < 1e-5);
    }
}

TEST_CASE("edge dropout over long rows at 1 and 8 heads is the plain loop's, bit for bit",
          "[cpu][attention]") {
    // Rows of about 50 entries (the vectorized loops' bodies and tails), negative values kept
    // negative and dropped ones +0: the sparse features' input dropout (1 head) and GAT's (8).
    auto backend = make_cpu_backend(2);
    const index_t m = 37;
    const index_t n = 64;
    const HostCsr host = structure(m, n, 11);
    const HostCsr dense_rows = test::random_csr(m, n, 0.8, 12);
    for (const HostCsr& h : {host, dense_rows}) {
        for (const index_t heads : {index_t{1}, index_t{8}}) {
            const auto nnz = static_cast<std::size_t>(h.nnz());
            const HostMatrix v0 = test::random_matrix(static_cast<index_t>(nnz), heads, 13);
            const std::vector<global_id> row_ids = spread_ids(m, 13, 5);
            const std::vector<global_id> col_ids = spread_ids(n, 7, global_id{1} << 33);
            const CsrMatrix a = CsrMatrix::upload(*backend, h);
            const Buffer<global_id> rows(*backend, std::span<const global_id>(row_ids));
            const Buffer<global_id> cols(*backend, std::span<const global_id>(col_ids));
            DenseMatrix v = DenseMatrix::upload(*backend, v0);
            const DropoutKey key{.seed = 9, .epoch = 2, .layer = 1, .rate = 0.5f};
            backend->edge_dropout(a, key, rows.span(), cols.span(), v.view());
            const std::uint64_t stream = dropout_stream(9, 2, 1);
            const float scale = 1.0f / (1.0f - 0.5f);
            std::vector<float> expected(v0.values.size());
            for (index_t i = 0; i < m; ++i) {
                for (index_t k = h.row_ptr[static_cast<std::size_t>(i)];
                     k < h.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
                    for (index_t head = 0; head < heads; ++head) {
                        const global_id col = col_ids[static_cast<std::size_t>(
                                                  h.col_idx[static_cast<std::size_t>(k)])] *
                                                  heads +
                                              head;
                        const bool keep = counter_u32(stream, row_ids[static_cast<std::size_t>(i)],
                                                      col) >= dropout_threshold(0.5f);
                        const auto at = static_cast<std::size_t>(k * heads + head);
                        expected[at] = keep ? v0.values[at] * scale : 0.0f;
                    }
                }
            }
            INFO("heads " << heads << ", " << nnz << " entries");
            CHECK(test::bitwise_equal(v.download().values, expected));
        }
    }
}

TEST_CASE("edge operations do not depend on the thread count", "[cpu][attention]") {
    const HostCsr host = structure(200, 150, 9);
    const auto nnz = host.nnz();
    std::vector<std::vector<float>> results;
    for (const int threads : {1, 3}) {
        auto backend = make_cpu_backend(threads);
        const CsrMatrix a = CsrMatrix::upload(*backend, host);
        const DenseMatrix s_dst = DenseMatrix::upload(*backend, test::random_matrix(200, 2, 1));
        const DenseMatrix s_src = DenseMatrix::upload(*backend, test::random_matrix(150, 2, 2));
        const DenseMatrix x = DenseMatrix::upload(*backend, test::random_matrix(150, 6, 3));
        DenseMatrix e(*backend, nnz, 2);
        DenseMatrix y(*backend, 200, 6);
        backend->edge_scores(a, s_dst.view(), s_src.view(), 0.2f, e.view());
        backend->edge_softmax(a, e.view(), e.view());
        backend->edge_spmm(a, {}, e.view(), x.view(), y.view(), 0.0f);
        results.push_back(y.download().values);
    }
    CHECK(results[0] == results[1]);
}

TEST_CASE("edge operations reject bad shapes with one-line messages", "[cpu][attention]") {
    auto backend = make_cpu_backend(1);
    const CsrMatrix a = CsrMatrix::upload(*backend, hand_structure());
    DenseMatrix e(*backend, 3, 2);
    DenseMatrix wrong(*backend, 4, 2);
    DenseMatrix x(*backend, 3, 4);
    DenseMatrix y(*backend, 2, 3);
    CHECK_THROWS_WITH(backend->edge_softmax(a, wrong.view(), wrong.view()),
                      Contains("edge_softmax: e has 4 rows but A has 3 entries"));
    CHECK_THROWS_WITH(backend->edge_spmm(a, {}, e.view(), x.view(), y.view(), 0.0f),
                      Contains("edge_spmm: widths x 4 and y 3 fit no head mode of 2 heads"));
    CHECK_THROWS_WITH(backend->edge_dropout(a, DropoutKey{.rate = 0.5f}, {}, {}, e.view()),
                      Contains("edge_dropout: 0 row ids and 0 column ids for A of 2 x 3"));
}

}  // namespace strata
