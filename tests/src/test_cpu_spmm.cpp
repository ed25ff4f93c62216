// Tests of the CPU SpMM (y = A[rows] x + beta y): hand cases, a double-precision reference on a
// random matrix, thread-count independence, row ranges, and the cached row partition.
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/device/cpu/cpu_kernels.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

/// A = [[1, 0, 2], [0, 0, 0], [0, -1, 0.5]]: row 1 is empty.
HostCsr hand_csr() {
    HostCsr a;
    a.rows = 3;
    a.cols = 3;
    a.row_ptr = {0, 2, 2, 4};
    a.col_idx = {0, 2, 1, 2};
    a.values = {1.0f, 2.0f, -1.0f, 0.5f};
    return a;
}

/// y = A x + beta y0 on `backend`, downloaded.
std::vector<float> run_spmm(Backend& backend, const HostCsr& a, const HostMatrix& x,
                            const HostMatrix& y0, float beta) {
    const CsrMatrix da = CsrMatrix::upload(backend, a);
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix dy = DenseMatrix::upload(backend, y0);
    backend.spmm(da, dx.view(), dy.view(), beta);
    return dy.download().values;
}

/// y = A[rows] x + beta y0 on `backend`, downloaded.   y0: rows.count x x.cols.
std::vector<float> run_spmm_rows(Backend& backend, const HostCsr& a, RowRange rows,
                                 const HostMatrix& x, const HostMatrix& y0, float beta) {
    const CsrMatrix da = CsrMatrix::upload(backend, a);
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix dy = DenseMatrix::upload(backend, y0);
    backend.spmm(da, rows, dx.view(), dy.view(), beta);
    return dy.download().values;
}

/// Rows [rows.first, rows.end()) of the row-major matrix `m` with `cols` columns.
std::vector<float> rows_of(const std::vector<float>& m, index_t cols, RowRange rows) {
    const auto begin = m.begin() + static_cast<std::ptrdiff_t>(rows.first) * cols;
    return {begin, begin + static_cast<std::ptrdiff_t>(rows.count) * cols};
}

/// Rows [rows.first, rows.end()) of `m` as a matrix of their own.
HostMatrix rows_of(const HostMatrix& m, RowRange rows) {
    HostMatrix r(rows.count, m.cols);
    r.values = rows_of(m.values, m.cols, rows);
    return r;
}

/// A = [[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, -1], [4, 0, 0.5, 0]]: row 1 is empty.
HostCsr hand_csr_4x4() {
    HostCsr a;
    a.rows = 4;
    a.cols = 4;
    a.row_ptr = {0, 2, 2, 4, 6};
    a.col_idx = {0, 2, 1, 3, 0, 2};
    a.values = {1.0f, 2.0f, 3.0f, -1.0f, 4.0f, 0.5f};
    return a;
}

}  // namespace

TEST_CASE("spmm computes A x with an empty row and beta 0 without reading y", "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::matrix(3, 2, {1, 2, 3, 4, 5, 6});
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const HostMatrix garbage = test::matrix(3, 2, {nan, nan, nan, nan, nan, nan});

    const std::vector<float> y = run_spmm(backend, hand_csr(), x, garbage, 0.0f);

    // row 0: 1·[1,2] + 2·[5,6]; row 1: empty; row 2: -1·[3,4] + 0.5·[5,6]
    CHECK(y == std::vector<float>{11, 14, 0, 0, -0.5f, -1});
}

TEST_CASE("spmm with beta 1 and beta 0.5 accumulates into y", "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::matrix(3, 2, {1, 2, 3, 4, 5, 6});
    const HostMatrix y0 = test::matrix(3, 2, {1, 1, 2, 2, 3, 3});

    SECTION("beta 1") {
        CHECK(run_spmm(backend, hand_csr(), x, y0, 1.0f) ==
              std::vector<float>{12, 15, 2, 2, 2.5f, 2});
    }
    SECTION("beta 0.5") {
        CHECK(run_spmm(backend, hand_csr(), x, y0, 0.5f) ==
              std::vector<float>{11.5f, 14.5f, 1, 1, 1, 0.5f});
    }
}

TEST_CASE("spmm handles a rectangular matrix with one feature column", "[device]") {
    CpuBackend backend(2);
    HostCsr a;  // [[0, 2, 0], [1, 0, 3]]
    a.rows = 2;
    a.cols = 3;
    a.row_ptr = {0, 1, 3};
    a.col_idx = {1, 0, 2};
    a.values = {2, 1, 3};

    const std::vector<float> y =
        run_spmm(backend, a, test::matrix(3, 1, {1, 2, 3}), HostMatrix(2, 1), 0.0f);

    CHECK(y == std::vector<float>{4, 10});
}

TEST_CASE("spmm with no stored entries gives zeros, or leaves y with beta 1", "[device]") {
    CpuBackend backend(2);
    HostCsr a;
    a.rows = 3;
    a.cols = 2;
    a.row_ptr = {0, 0, 0, 0};
    const HostMatrix x = test::matrix(2, 2, {1, 2, 3, 4});
    const HostMatrix y0 = test::matrix(3, 2, {1, 2, 3, 4, 5, 6});

    CHECK(run_spmm(backend, a, x, y0, 0.0f) == std::vector<float>(6, 0.0f));
    CHECK(run_spmm(backend, a, x, y0, 1.0f) == y0.values);
}

TEST_CASE("spmm rejects mismatched shapes", "[device]") {
    CpuBackend backend(1);
    const CsrMatrix a = CsrMatrix::upload(backend, hand_csr());
    DenseMatrix x(backend, 2, 2);  // A has 3 columns
    DenseMatrix y(backend, 3, 2);

    REQUIRE_THROWS_WITH(backend.spmm(a, x.view(), y.view(), 0.0f),
                        Catch::Contains("spmm: A is 3 x 3 but x has 2 rows"));
    DenseMatrix x3(backend, 3, 2);
    DenseMatrix y_wide(backend, 3, 3);
    REQUIRE_THROWS_WITH(backend.spmm(a, x3.view(), y_wide.view(), 0.0f),
                        Catch::Contains("spmm: y is 3 x 3 but A[rows] x is 3 x 2"));
}

TEST_CASE("spmm matches a double-precision reference on a random 200x150 matrix", "[device]") {
    CpuBackend backend(2);
    const HostCsr a = test::random_csr(200, 150, 0.05, 11);
    const HostMatrix x = test::random_matrix(150, 33, 12);
    const HostMatrix y0 = test::random_matrix(200, 33, 13);
    const float beta = 0.75f;

    const std::vector<float> y = run_spmm(backend, a, x, y0, beta);

    int bad = 0;
    for (index_t r = 0; r < a.rows; ++r) {
        for (index_t j = 0; j < 33; ++j) {
            double ref = beta * static_cast<double>(y0.at(r, j));
            double magnitude = std::abs(ref);
            for (index_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
                const double term = static_cast<double>(a.values[k]) * x.at(a.col_idx[k], j);
                ref += term;
                magnitude += std::abs(term);
            }
            const double got = y[static_cast<std::size_t>(r) * 33 + static_cast<std::size_t>(j)];
            bad += std::abs(got - ref) <= 1e-6 * magnitude + 1e-30 ? 0 : 1;
        }
    }
    CHECK(bad == 0);
}

TEST_CASE("spmm gives bitwise equal results with 1 and 2 threads", "[device]") {
    CpuBackend one(1);
    CpuBackend two(2);
    const HostCsr a = test::random_csr(200, 150, 0.05, 21);
    const HostMatrix x = test::random_matrix(150, 33, 22);
    const HostMatrix y0 = test::random_matrix(200, 33, 23);

    for (float beta : {0.0f, 1.0f, 0.3f}) {
        CHECK(test::bitwise_equal(run_spmm(one, a, x, y0, beta), run_spmm(two, a, x, y0, beta)));
    }
}

TEST_CASE("spmm at a ragged width (its tail in a register) gives the bits of a padded width",
          "[device]") {
    // Each column is computed on its own, so columns [0, f) of the product at width f (a tail
    // past the last multiple of 8: cpu_spmm.cpp's spmm_row) must equal those of the product at
    // the next multiple of 8 (the plain vector loop), with empty rows and every beta path.
    CpuBackend backend(2);
    const HostCsr a = test::random_csr(200, 150, 0.05, 51);
    for (const index_t f : {9, 15, 33, 47, 100}) {
        const index_t padded = (f + 7) / 8 * 8;
        const HostMatrix x_wide = test::random_matrix(150, padded, 52);
        const HostMatrix y_wide = test::random_matrix(200, padded, 53);
        const auto narrow = [&](const std::vector<float>& values, std::int64_t rows) {
            HostMatrix out(rows, f);  // columns [0, f) of a rows x padded matrix
            for (std::int64_t r = 0; r < rows; ++r) {
                for (index_t j = 0; j < f; ++j) {
                    out.at(r, j) = values[static_cast<std::size_t>(r * padded + j)];
                }
            }
            return out;
        };
        for (const float beta : {0.0f, 1.0f, 0.3f}) {
            CAPTURE(f, beta);
            const std::vector<float> wide = run_spmm(backend, a, x_wide, y_wide, beta);
            const HostMatrix x = narrow(x_wide.values, 150);
            const HostMatrix y0 = narrow(y_wide.values, 200);
            CHECK(test::bitwise_equal(run_spmm(backend, a, x, y0, beta), narrow(wide, 200).values));
        }
    }
}

TEST_CASE("spmm caches its row partition in the matrix's plan slot", "[device]") {
    CpuBackend backend(2);
    const CsrMatrix a = CsrMatrix::upload(backend, test::random_csr(50, 40, 0.1, 31));
    const DenseMatrix x = DenseMatrix::upload(backend, test::random_matrix(40, 8, 32));
    DenseMatrix y(backend, 50, 8);
    REQUIRE(a.plan() == nullptr);

    backend.spmm(a, x.view(), y.view(), 0.0f);
    const SpmmPlan* first = a.plan();
    backend.spmm(a, x.view(), y.view(), 1.0f);

    CHECK(first != nullptr);
    CHECK(a.plan() == first);
}

TEST_CASE("spmm over a row range gives those rows of A x, with beta 0 and beta 1", "[device]") {
    CpuBackend backend(2);
    const HostCsr a = hand_csr_4x4();
    const HostMatrix x = test::matrix(4, 2, {1, 2, 3, 4, 5, 6, 7, 8});
    const HostMatrix y0 = test::matrix(4, 2, {1, 1, 2, 2, 3, 3, 4, 4});
    // A x: row 0 = 1·[1,2] + 2·[5,6]; row 1 is empty; row 2 = 3·[3,4] - [7,8];
    //      row 3 = 4·[1,2] + 0.5·[5,6].   A x + y0 adds [1,1], [2,2], [3,3], [4,4].
    const std::vector<float> ax = {11, 14, 0, 0, 2, 4, 6.5f, 11};
    const std::vector<float> ax_plus_y0 = {12, 15, 2, 2, 5, 7, 10.5f, 15};
    const float nan = std::numeric_limits<float>::quiet_NaN();
    REQUIRE(run_spmm(backend, a, x, HostMatrix(4, 2, nan), 0.0f) == ax);

    for (const RowRange rows :
         {RowRange{0, 0}, RowRange{0, 1}, RowRange{1, 2}, RowRange{3, 1}, RowRange{0, 4}}) {
        CAPTURE(rows.first, rows.count);
        const std::vector<float> beta0 =
            run_spmm_rows(backend, a, rows, x, HostMatrix(rows.count, 2, nan), 0.0f);
        const std::vector<float> beta1 =
            run_spmm_rows(backend, a, rows, x, rows_of(y0, rows), 1.0f);

        CHECK(beta0 == rows_of(ax, 2, rows));
        CHECK(beta1 == rows_of(ax_plus_y0, 2, rows));
    }
}

TEST_CASE(
    "spmm over row ranges of a random 200x150 matrix equals the full product bitwise, "
    "with 1 and 2 threads",
    "[device]") {
    const HostCsr a = test::random_csr(200, 150, 0.05, 41);
    const HostMatrix x = test::random_matrix(150, 33, 42);
    const HostMatrix y0 = test::random_matrix(200, 33, 43);
    const std::unique_ptr<Backend> one = make_cpu_backend(1);
    const std::unique_ptr<Backend> two = make_cpu_backend(2);
    const std::vector<RowRange> sample = {{0, 0},   {0, 1},  {0, 200},  {0, 100}, {100, 100},
                                          {199, 1}, {7, 50}, {13, 187}, {150, 0}, {63, 64},
                                          {1, 198}, {70, 1}, {42, 3}};

    for (const float beta : {0.0f, 0.3f}) {
        const std::vector<float> full = run_spmm(*two, a, x, y0, beta);
        for (const RowRange rows : sample) {
            CAPTURE(beta, rows.first, rows.count);
            const HostMatrix y0_rows = rows_of(y0, rows);
            const std::vector<float> expected = rows_of(full, 33, rows);

            CHECK(test::bitwise_equal(run_spmm_rows(*one, a, rows, x, y0_rows, beta), expected));
            CHECK(test::bitwise_equal(run_spmm_rows(*two, a, rows, x, y0_rows, beta), expected));
        }
    }
}

TEST_CASE("spmm rejects a row range outside A", "[device]") {
    CpuBackend backend(1);
    const CsrMatrix a = CsrMatrix::upload(backend, hand_csr_4x4());
    const DenseMatrix x(backend, 4, 2);
    DenseMatrix y(backend, 2, 2);

    REQUIRE_THROWS_WITH(backend.spmm(a, RowRange{3, 2}, x.view(), y.view(), 0.0f),
                        Catch::Contains("spmm: rows [3, 5) are not inside A's 4 rows"));
    REQUIRE_THROWS_WITH(backend.spmm(a, RowRange{-1, 2}, x.view(), y.view(), 0.0f),
                        Catch::Contains("spmm: rows [-1, 1) are not inside A's 4 rows"));
    REQUIRE_THROWS_WITH(backend.spmm(a, RowRange{0, 2}, x.view(), y.view().row_range(0, 1), 0.0f),
                        Catch::Contains("spmm: y is 1 x 2 but A[rows] x is 2 x 2"));
}

TEST_CASE("spmm over a partial row range does not replace the matrix's cached plan", "[device]") {
    CpuBackend backend(2);
    const CsrMatrix a = CsrMatrix::upload(backend, test::random_csr(50, 40, 0.1, 31));
    const DenseMatrix x = DenseMatrix::upload(backend, test::random_matrix(40, 8, 32));
    DenseMatrix y(backend, 50, 8);

    backend.spmm(a, RowRange{10, 20}, x.view(), y.view().row_range(0, 20), 0.0f);
    const SpmmPlan* after_partial = a.plan();
    backend.spmm(a, x.view(), y.view(), 0.0f);
    const SpmmPlan* after_full = a.plan();
    backend.spmm(a, RowRange{0, 49}, x.view(), y.view().row_range(0, 49), 0.0f);

    CHECK(after_partial == nullptr);
    CHECK(after_full != nullptr);
    CHECK(a.plan() == after_full);
}

TEST_CASE("the row partition balances stored entries plus rows", "[device]") {
    // work(r) = row_ptr[r] + r = 0, 5, 6, 8, 10, 15: half of 15 is reached at row 3.
    const std::vector<index_t> row_ptr = {0, 4, 4, 5, 6, 10};

    CHECK(cpu::balanced_row_bounds(row_ptr.data(), 5, 2) == std::vector<index_t>{0, 3, 5});
    CHECK(cpu::balanced_row_bounds(row_ptr.data(), 5, 1) == std::vector<index_t>{0, 5});
    const std::vector<index_t> empty = {0};
    CHECK(cpu::balanced_row_bounds(empty.data(), 0, 3) == std::vector<index_t>{0, 0, 0, 0});
}

}  // namespace strata
