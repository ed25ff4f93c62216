// Tests of the CPU normalisation and scalar kernels against plain double-precision loops:
// layer_norm and its backward, centered_column_sums, batch_norm and its backward, dot and
// axpby_scalar; thread-count independence of the reductions; the argument checks.
#include <cmath>
#include <cstddef>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
    double worst = a.size() == b.size() ? 0.0 : INFINITY;
    for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) {
        worst = std::max(worst, std::abs(static_cast<double>(a[k]) - b[k]));
    }
    return worst;
}

/// Reference layer norm of x (rows x cols) in double: y, and x̂ and r per row.
struct LayerNormRef {
    std::vector<double> y;
    std::vector<double> xhat;
    std::vector<double> r;
};

LayerNormRef layer_norm_ref(const HostMatrix& x, const std::vector<float>& gamma,
                            const std::vector<float>& beta, double eps) {
    LayerNormRef out;
    const auto cols = static_cast<std::size_t>(x.cols);
    for (index_t i = 0; i < x.rows; ++i) {
        double mean = 0.0;
        for (std::size_t j = 0; j < cols; ++j) {
            mean += x.values[static_cast<std::size_t>(i) * cols + j];
        }
        mean /= static_cast<double>(cols);
        double var = 0.0;
        for (std::size_t j = 0; j < cols; ++j) {
            const double d = x.values[static_cast<std::size_t>(i) * cols + j] - mean;
            var += d * d;
        }
        var /= static_cast<double>(cols);
        const double r = 1.0 / std::sqrt(var + eps);
        out.r.push_back(r);
        for (std::size_t j = 0; j < cols; ++j) {
            const double xhat = (x.values[static_cast<std::size_t>(i) * cols + j] - mean) * r;
            out.xhat.push_back(xhat);
            out.y.push_back(xhat * gamma[j] + beta[j]);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("layer_norm and its backward match a plain loop", "[device]") {
    CpuBackend backend(2);
    const index_t rows = 300;  // more than one row chunk of the parameter sums
    const index_t cols = 9;
    const HostMatrix x = test::random_matrix(rows, cols, 1, -2.0f, 3.0f);
    const HostMatrix dy = test::random_matrix(rows, cols, 2);
    const std::vector<float> gamma = test::random_matrix(1, cols, 3, 0.5f, 1.5f).values;
    const std::vector<float> beta = test::random_matrix(1, cols, 4).values;
    const LayerNormRef ref = layer_norm_ref(x, gamma, beta, 1e-5);
    const DenseMatrix dx_dev = DenseMatrix::upload(backend, x);
    const DenseMatrix ddy = DenseMatrix::upload(backend, dy);
    DenseMatrix y(backend, rows, cols);

    backend.layer_norm(dx_dev.view(), gamma, beta, 1e-5f, y.view());
    CHECK(max_abs_diff(y.download().values, ref.y) < 1e-5);

    DenseMatrix dx(backend, rows, cols);
    std::vector<float> dgamma(cols, 0.5f);  // += onto 0.5
    std::vector<float> dbeta(cols, -1.0f);  // += onto -1
    backend.layer_norm_backward(dx_dev.view(), ddy.view(), gamma, 1e-5f, dx.view(), 0.0f, dgamma,
                                dbeta);
    std::vector<double> want_dx;
    std::vector<double> want_dgamma(cols, 0.5);
    std::vector<double> want_dbeta(cols, -1.0);
    const auto c = static_cast<std::size_t>(cols);
    for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i) {
        double a = 0.0;
        double b = 0.0;
        for (std::size_t j = 0; j < c; ++j) {
            const double g = dy.values[i * c + j] * static_cast<double>(gamma[j]);
            a += g;
            b += g * ref.xhat[i * c + j];
            want_dgamma[j] += dy.values[i * c + j] * ref.xhat[i * c + j];
            want_dbeta[j] += dy.values[i * c + j];
        }
        for (std::size_t j = 0; j < c; ++j) {
            const double g = dy.values[i * c + j] * static_cast<double>(gamma[j]);
            want_dx.push_back(ref.r[i] * (g - a / static_cast<double>(c) -
                                          ref.xhat[i * c + j] * b / static_cast<double>(c)));
        }
    }
    CHECK(max_abs_diff(dx.download().values, want_dx) < 1e-5);
    CHECK(max_abs_diff(dgamma, want_dgamma) < 1e-4);
    CHECK(max_abs_diff(dbeta, want_dbeta) < 1e-4);

    // beta 1 accumulates; a null dx skips it; results do not depend on the thread count.
    CpuBackend one(1);
    DenseMatrix acc = DenseMatrix::upload(backend, dy);
    std::vector<float> g1(cols, 0.0f);
    std::vector<float> g2(cols, 0.0f);
    one.layer_norm_backward(dx_dev.view(), ddy.view(), gamma, 1e-5f, acc.view(), 1.0f, g1, {});
    backend.layer_norm_backward(dx_dev.view(), ddy.view(), gamma, 1e-5f, {}, 0.0f, g2, {});
    CHECK(test::bitwise_equal(g1, g2));
    const std::vector<float> got = acc.download().values;
    for (std::size_t k = 0; k < got.size(); ++k) {
        CHECK(got[k] == Approx(dy.values[k] + want_dx[k]).margin(1e-5));
    }
}

TEST_CASE("batch norm kernels match a plain loop", "[device]") {
    CpuBackend backend(2);
    const index_t rows = 700;
    const index_t cols = 5;
    const auto c = static_cast<std::size_t>(cols);
    // A large mean against a small spread: the centred sums must not cancel.
    const HostMatrix x = test::random_matrix(rows, cols, 5, 999.0f, 1001.0f);
    const HostMatrix dy = test::random_matrix(rows, cols, 6);
    const std::vector<float> gamma = test::random_matrix(1, cols, 7, 0.5f, 1.5f).values;
    const std::vector<float> beta = test::random_matrix(1, cols, 8).values;
    std::vector<double> mean(c, 0.0);
    for (std::size_t k = 0; k < x.values.size(); ++k) {
        mean[k % c] += x.values[k] / static_cast<double>(rows);
    }
    std::vector<double> sq(c, 0.0);
    for (std::size_t k = 0; k < x.values.size(); ++k) {
        sq[k % c] += (x.values[k] - mean[k % c]) * (x.values[k] - mean[k % c]);
    }
    const DenseMatrix dev_x = DenseMatrix::upload(backend, x);
    const DenseMatrix ddy = DenseMatrix::upload(backend, dy);
    std::vector<float> mean_f(c);
    std::vector<float> var_f(c);
    for (std::size_t j = 0; j < c; ++j) {
        mean_f[j] = static_cast<float>(mean[j]);
        var_f[j] = static_cast<float>(sq[j] / rows);
    }

    std::vector<float> got_sq(c, 0.0f);
    backend.centered_column_sums(dev_x.view(), mean_f, {}, 0.0f, {}, got_sq, 0.0f);
    for (std::size_t j = 0; j < c; ++j) {
        CHECK(got_sq[j] == Approx(sq[j]).epsilon(1e-3));
    }

    const float eps = 1e-5f;
    std::vector<double> xhat(x.values.size());
    std::vector<double> sum_dy(c, 0.0);
    std::vector<double> sum_dy_xhat(c, 0.0);
    std::vector<double> want_y(x.values.size());
    for (std::size_t k = 0; k < x.values.size(); ++k) {
        const std::size_t j = k % c;
        xhat[k] = (x.values[k] - mean_f[j]) / std::sqrt(static_cast<double>(var_f[j]) + eps);
        want_y[k] = xhat[k] * gamma[j] + beta[j];
        sum_dy[j] += dy.values[k];
        sum_dy_xhat[j] += dy.values[k] * xhat[k];
    }
    DenseMatrix y(backend, rows, cols);
    backend.batch_norm(dev_x.view(), mean_f, var_f, eps, gamma, beta, y.view());
    CHECK(max_abs_diff(y.download().values, want_y) < 1e-4);

    std::vector<float> got_dxhat(c, 1.0f);  // beta 1: += onto 1
    backend.centered_column_sums(dev_x.view(), mean_f, var_f, eps, ddy.view(), got_dxhat, 1.0f);
    for (std::size_t j = 0; j < c; ++j) {
        CHECK(got_dxhat[j] == Approx(1.0 + sum_dy_xhat[j]).margin(1e-3));
    }

    std::vector<float> sdy(c);
    std::vector<float> sdx(c);
    for (std::size_t j = 0; j < c; ++j) {
        sdy[j] = static_cast<float>(sum_dy[j]);
        sdx[j] = static_cast<float>(sum_dy_xhat[j]);
    }
    DenseMatrix dx(backend, rows, cols);
    backend.batch_norm_backward(dev_x.view(), ddy.view(), mean_f, var_f, eps, gamma, sdy, sdx,
                                static_cast<double>(rows), dx.view(), 0.0f);
    std::vector<double> want_dx(x.values.size());
    for (std::size_t k = 0; k < x.values.size(); ++k) {
        const std::size_t j = k % c;
        const double r = 1.0 / std::sqrt(static_cast<double>(var_f[j]) + eps);
        want_dx[k] =
            gamma[j] * r * (dy.values[k] - sum_dy[j] / rows - xhat[k] * sum_dy_xhat[j] / rows);
    }
    CHECK(max_abs_diff(dx.download().values, want_dx) < 1e-4);

    CpuBackend one(1);
    std::vector<float> sq1(c);
    one.centered_column_sums(dev_x.view(), mean_f, var_f, eps, ddy.view(), sq1, 0.0f);
    std::vector<float> sq2(c);
    backend.centered_column_sums(dev_x.view(), mean_f, var_f, eps, ddy.view(), sq2, 0.0f);
    CHECK(test::bitwise_equal(sq1, sq2));
}

TEST_CASE("dot and axpby_scalar match a plain loop", "[device]") {
    CpuBackend backend(2);
    const HostMatrix a = test::random_matrix(300, 130, 9);  // > one chunk of the dot
    const HostMatrix b = test::random_matrix(300, 130, 10);
    const DenseMatrix da = DenseMatrix::upload(backend, a);
    const DenseMatrix db = DenseMatrix::upload(backend, b);
    double want = 0.5;
    for (std::size_t k = 0; k < a.values.size(); ++k) {
        want += static_cast<double>(a.values[k]) * b.values[k];
    }
    std::vector<float> out{0.25f};
    backend.dot(da.view(), db.view(), out, 2.0f);
    CHECK(out[0] == Approx(want).epsilon(1e-6));
    CpuBackend one(1);
    std::vector<float> o1{0.0f};
    std::vector<float> o2{0.0f};
    one.dot(da.view(), db.view(), o1, 0.0f);
    backend.dot(da.view(), db.view(), o2, 0.0f);
    CHECK(test::bitwise_equal(o1, o2));

    const std::vector<float> s{0.25f};
    DenseMatrix y = DenseMatrix::upload(backend, b);
    backend.axpby_scalar(1.0f, s, da.view(), -2.0f, y.view());
    const std::vector<float> got = y.download().values;
    for (std::size_t k = 0; k < got.size(); ++k) {
        CHECK(got[k] == Approx(1.25 * a.values[k] - 2.0 * b.values[k]).margin(1e-6));
    }
}

TEST_CASE("normalisation kernels reject bad shapes and eps", "[device]") {
    CpuBackend backend(1);
    DenseMatrix x(backend, 2, 3);
    DenseMatrix y(backend, 2, 3);
    const std::vector<float> three(3, 1.0f);
    const std::vector<float> two(2, 1.0f);
    REQUIRE_THROWS_WITH(backend.layer_norm(x.view(), two, three, 1e-5f, y.view()),
                        Catch::Contains("layer_norm: gamma has 2 entries but x has 3 columns"));
    REQUIRE_THROWS_WITH(backend.layer_norm(x.view(), three, three, 0.0f, y.view()),
                        Catch::Contains("layer_norm: eps 0 must be > 0"));
    REQUIRE_THROWS_WITH(backend.layer_norm(x.view(), three, three, 1e-5f, x.view()),
                        Catch::Contains("layer_norm: y overlaps x"));
    REQUIRE_THROWS_WITH(backend.batch_norm(x.view(), three, two, 1e-5f, three, three, y.view()),
                        Catch::Contains("batch_norm: var has 2 entries but x has 3 columns"));
    std::vector<float> out(2);
    REQUIRE_THROWS_WITH(backend.dot(x.view(), y.view(), out, 0.0f),
                        Catch::Contains("dot: out has 2 entries, expected 1"));
    REQUIRE_THROWS_WITH(backend.axpby_scalar(1.0f, two, x.view(), 0.0f, y.view()),
                        Catch::Contains("axpby_scalar: the scale has 2 entries, expected 1"));
}

}  // namespace strata
