// Tests of the CPU GEMM (all transpose combinations, zero sizes) and of row gather, scatter-add
// and overwrite scatter.
#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

/// The stored (row-major) form of op(m): m itself, or its transpose.
HostMatrix stored(const HostMatrix& m, Transpose t) {
    if (t == Transpose::no) {
        return m;
    }
    HostMatrix s(m.cols, static_cast<index_t>(m.rows));
    for (index_t r = 0; r < m.rows; ++r) {
        for (index_t c = 0; c < m.cols; ++c) {
            s.at(c, r) = m.at(r, c);
        }
    }
    return s;
}

/// c = alpha op(a) op(b) + beta c0 on `backend`, where op_a/op_b are given untransposed.
std::vector<float> run_gemm(Backend& backend, const HostMatrix& op_a, Transpose ta,
                            const HostMatrix& op_b, Transpose tb, const HostMatrix& c0, float alpha,
                            float beta) {
    const DenseMatrix a = DenseMatrix::upload(backend, stored(op_a, ta));
    const DenseMatrix b = DenseMatrix::upload(backend, stored(op_b, tb));
    DenseMatrix c = DenseMatrix::upload(backend, c0);
    backend.gemm(a.view(), ta, b.view(), tb, c.view(), alpha, beta);
    return c.download().values;
}

/// alpha a b + beta c0 by the textbook triple loop, in double.
std::vector<float> naive_gemm(const HostMatrix& a, const HostMatrix& b, const HostMatrix& c0,
                              float alpha, float beta) {
    HostMatrix c(a.rows, b.cols);
    for (index_t i = 0; i < a.rows; ++i) {
        for (index_t j = 0; j < b.cols; ++j) {
            double sum = 0.0;
            for (index_t k = 0; k < a.cols; ++k) {
                sum += static_cast<double>(a.at(i, k)) * b.at(k, j);
            }
            c.at(i, j) = static_cast<float>(alpha * sum + beta * static_cast<double>(c0.at(i, j)));
        }
    }
    return c.values;
}

const Transpose both[] = {Transpose::no, Transpose::yes};

}  // namespace

TEST_CASE("gemm computes alpha op(a) op(b) + beta c for all four transpose combinations",
          "[device]") {
    CpuBackend backend(2);
    const HostMatrix a = test::matrix(2, 3, {1, 2, 3, 4, 5, 6});
    const HostMatrix b = test::matrix(3, 2, {7, 8, 9, 10, 11, 12});
    const HostMatrix c0 = test::matrix(2, 2, {1, 2, 3, 4});

    for (Transpose ta : both) {
        for (Transpose tb : both) {
            // a b = [[58, 64], [139, 154]]; 2 a b + 0.5 c0
            CHECK(run_gemm(backend, a, ta, b, tb, c0, 2.0f, 0.5f) ==
                  std::vector<float>{116.5f, 129, 279.5f, 310});
        }
    }
}

TEST_CASE("gemm matches a naive loop on random 5x3 by 3x4 inputs", "[device]") {
    CpuBackend backend(2);
    const HostMatrix a = test::random_matrix(5, 3, 1);
    const HostMatrix b = test::random_matrix(3, 4, 2);
    const HostMatrix c0 = test::random_matrix(5, 4, 3);
    const std::vector<float> expected = naive_gemm(a, b, c0, 1.5f, -0.5f);

    for (Transpose ta : both) {
        for (Transpose tb : both) {
            const std::vector<float> c = run_gemm(backend, a, ta, b, tb, c0, 1.5f, -0.5f);
            for (std::size_t i = 0; i < c.size(); ++i) {
                CHECK(c[i] == Approx(expected[i]).margin(1e-6));
            }
        }
    }
}

TEST_CASE("gemm's row blocks and k chunks match a naive loop and do not depend on the threads",
          "[device]") {
    // Shapes past the blocking thresholds (cpu_blas.cpp): a tall product split into row blocks
    // and a^T b with a long k split into chunks whose partial products are summed.
    struct Shape {
        index_t m, k, n;
    };
    for (const Shape s : {Shape{4100, 32, 24}, Shape{24, 5000, 40}, Shape{40, 5000, 24}}) {
        INFO("m " << s.m << " k " << s.k << " n " << s.n);
        const HostMatrix a = test::random_matrix(s.m, s.k, 11);
        const HostMatrix b = test::random_matrix(s.k, s.n, 12);
        const HostMatrix c0 = test::random_matrix(s.m, s.n, 13);
        const std::vector<float> expected = naive_gemm(a, b, c0, 1.5f, -0.5f);
        for (Transpose ta : both) {
            for (Transpose tb : both) {
                std::vector<float> first;
                for (int threads : {1, 2, 3}) {
                    CpuBackend backend(threads);
                    const std::vector<float> c = run_gemm(backend, a, ta, b, tb, c0, 1.5f, -0.5f);
                    if (first.empty()) {
                        first = c;
                        // A float sum of k products rounds differently in each BLAS kernel
                        // (AVX2 and AVX-512 OpenBLAS differ by 1.2e-4 at k = 5000): the margin
                        // grows with k; a lost or doubled chunk is off by O(1).
                        const double margin = 1e-4 * std::max(1.0, s.k / 1000.0);
                        for (std::size_t i = 0; i < c.size(); ++i) {
                            REQUIRE(c[i] == Approx(expected[i]).margin(margin));
                        }
                    } else {
                        REQUIRE(c == first);  // bit for bit, whatever the thread count
                    }
                }
            }
        }
    }
}

TEST_CASE("gemm with beta 0 ignores NaN in c", "[device]") {
    CpuBackend backend(1);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const HostMatrix c0 = test::matrix(1, 2, {nan, nan});

    const std::vector<float> c =
        run_gemm(backend, test::matrix(1, 2, {1, 2}), Transpose::no,
                 test::matrix(2, 2, {1, 0, 0, 1}), Transpose::no, c0, 1.0f, 0.0f);

    CHECK(c == std::vector<float>{1, 2});
}

TEST_CASE("gemm with an empty inner dimension scales c by beta", "[device]") {
    CpuBackend backend(1);
    const float nan = std::numeric_limits<float>::quiet_NaN();

    SECTION("beta 0.5") {
        CHECK(run_gemm(backend, HostMatrix(2, 0), Transpose::no, HostMatrix(0, 3), Transpose::no,
                       HostMatrix(2, 3, 1.0f), 1.0f, 0.5f) == std::vector<float>(6, 0.5f));
    }
    SECTION("beta 0 overwrites NaN") {
        CHECK(run_gemm(backend, HostMatrix(2, 0), Transpose::yes, HostMatrix(0, 3), Transpose::yes,
                       HostMatrix(2, 3, nan), 1.0f, 0.0f) == std::vector<float>(6, 0.0f));
    }
}

TEST_CASE("gemm with no output rows or columns is a no-op", "[device]") {
    CpuBackend backend(1);

    CHECK(run_gemm(backend, HostMatrix(0, 3), Transpose::no, HostMatrix(3, 2), Transpose::no,
                   HostMatrix(0, 2), 1.0f, 0.0f)
              .empty());
    CHECK(run_gemm(backend, HostMatrix(2, 3), Transpose::no, HostMatrix(3, 0), Transpose::no,
                   HostMatrix(2, 0), 1.0f, 0.0f)
              .empty());
}

TEST_CASE("gemm rejects mismatched inner dimensions", "[device]") {
    CpuBackend backend(1);
    DenseMatrix a(backend, 2, 3);
    DenseMatrix b(backend, 2, 2);
    DenseMatrix c(backend, 2, 2);

    REQUIRE_THROWS_WITH(
        backend.gemm(a.view(), Transpose::no, b.view(), Transpose::no, c.view(), 1.0f, 0.0f),
        Catch::Contains("gemm: op(a) is 2 x 3 but op(b) is 2 x 2"));
}

TEST_CASE("gather_rows copies the listed rows, repeats included", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix x =
        DenseMatrix::upload(backend, test::matrix(4, 2, {0, 1, 10, 11, 20, 21, 30, 31}));
    const std::vector<index_t> rows = {3, 0, 3};
    DenseMatrix out(backend, 3, 2);

    backend.gather_rows(x.view(), rows, out.view());

    CHECK(out.download().values == std::vector<float>{30, 31, 0, 1, 30, 31});
}

TEST_CASE("gather_rows rejects an out-of-range row id", "[device]") {
    CpuBackend backend(1);
    DenseMatrix x(backend, 4, 2);
    const std::vector<index_t> rows = {1, 4};
    DenseMatrix out(backend, 2, 2);

    REQUIRE_THROWS_WITH(backend.gather_rows(x.view(), rows, out.view()),
                        Catch::Contains("row id 4 at index 1 out of range [0, 4)"));
}

TEST_CASE("scatter_add_rows adds repeated row ids together", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix x =
        DenseMatrix::upload(backend, test::matrix(4, 2, {1, 2, 3, 4, 5, 6, 7, 8}));
    const std::vector<index_t> rows = {2, 0, 2, 2};
    DenseMatrix out = DenseMatrix::upload(backend, HostMatrix(3, 2, 1.0f));

    backend.scatter_add_rows(x.view(), rows, out.view());

    // out[0] = 1 + [3, 4]; out[1] untouched; out[2] = 1 + [1, 2] + [5, 6] + [7, 8]
    CHECK(out.download().values == std::vector<float>{4, 5, 1, 1, 14, 17});
}

TEST_CASE("scatter_add_rows is race-free and thread-count independent on many repeats",
          "[device]") {
    const HostMatrix x = test::random_matrix(5000, 100, 7);
    std::vector<index_t> rows(5000);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        rows[i] = static_cast<index_t>((i * 37) % 50);
    }
    HostMatrix expected(50, 100);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (index_t j = 0; j < 100; ++j) {
            expected.at(rows[i], j) += x.at(static_cast<index_t>(i), j);
        }
    }
    std::vector<std::vector<float>> results;

    for (int threads : {1, 2}) {
        CpuBackend backend(threads);
        const DenseMatrix dx = DenseMatrix::upload(backend, x);
        DenseMatrix out = DenseMatrix::upload(backend, HostMatrix(50, 100));
        backend.scatter_add_rows(dx.view(), rows, out.view());
        results.push_back(out.download().values);
    }

    CHECK(results[0] == expected.values);  // same order of additions as the serial loop
    CHECK(test::bitwise_equal(results[0], results[1]));
}

TEST_CASE("scatter_rows overwrites the listed rows and leaves the others", "[device]") {
    // Big enough (2000 x 20 elements) for the threaded path; ids distinct and shuffled, every
    // third row of out not listed.
    const index_t n = 3000;
    const index_t f = 20;
    std::vector<index_t> rows;
    for (index_t r = 0; r < n; ++r) {
        if (r % 3 != 1) {
            rows.push_back(r);
        }
    }
    std::mt19937 rng(11);
    std::shuffle(rows.begin(), rows.end(), rng);
    const auto m = static_cast<index_t>(rows.size());
    const HostMatrix x = test::random_matrix(m, f, 12);
    const HostMatrix out0 = test::random_matrix(n, f, 13);
    HostMatrix expected = out0;
    for (index_t i = 0; i < m; ++i) {
        for (index_t j = 0; j < f; ++j) {
            expected.at(rows[static_cast<std::size_t>(i)], j) = x.at(i, j);
        }
    }

    for (int threads : {1, 2}) {
        INFO("threads " << threads);
        CpuBackend backend(threads);
        const DenseMatrix dx = DenseMatrix::upload(backend, x);
        DenseMatrix out = DenseMatrix::upload(backend, out0);
        backend.scatter_rows(dx.view(), rows, out.view());
        CHECK(out.download().values == expected.values);
    }
}

TEST_CASE("scatter_rows copies a small case exactly", "[device]") {
    CpuBackend backend(1);
    const DenseMatrix x = DenseMatrix::upload(backend, test::matrix(2, 2, {1, 2, 3, 4}));
    const std::vector<index_t> rows = {2, 0};
    DenseMatrix out = DenseMatrix::upload(backend, HostMatrix(3, 2, 9.0f));

    backend.scatter_rows(x.view(), rows, out.view());

    CHECK(out.download().values == std::vector<float>{3, 4, 9, 9, 1, 2});
}

TEST_CASE("scatter_rows rejects an out-of-range row id and a shape mismatch", "[device]") {
    CpuBackend backend(1);
    DenseMatrix x(backend, 2, 2);
    DenseMatrix out(backend, 3, 2);

    const std::vector<index_t> bad = {0, 3};
    REQUIRE_THROWS_WITH(backend.scatter_rows(x.view(), bad, out.view()),
                        Catch::Contains("scatter_rows: row id 3 at index 1 out of range [0, 3)"));
    const std::vector<index_t> negative = {-1, 0};
    REQUIRE_THROWS_WITH(backend.scatter_rows(x.view(), negative, out.view()),
                        Catch::Contains("scatter_rows: row id -1 at index 0 out of range [0, 3)"));

    const std::vector<index_t> three = {0, 1, 2};
    REQUIRE_THROWS_WITH(
        backend.scatter_rows(x.view(), three, out.view()),
        Catch::Contains("scatter_rows: x is 2 x 2 but rows.size() x out.cols is 3 x 2"));
    DenseMatrix wide(backend, 3, 5);
    const std::vector<index_t> two = {0, 1};
    REQUIRE_THROWS_WITH(
        backend.scatter_rows(x.view(), two, wide.view()),
        Catch::Contains("scatter_rows: x is 2 x 2 but rows.size() x out.cols is 2 x 5"));
}

}  // namespace strata
