// Compressed-row (DCSR) blocks: compress / expand / transpose on hand and random matrices, the
// validation messages, and Backend::spmm_scatter_add against a plain loop and against spmm with
// beta 1 on the expanded matrix (bit for bit, 1 and 3 threads).
#include <cstddef>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "src/tensor/host_dcsr.hpp"
#include "tests/src/test_util.hpp"

using Catch::Matchers::Contains;

namespace strata {
namespace {

/// 5 x 3, rows 0, 2 and 3 empty: [[0,0,0],[1,0,2],[0,0,0],[0,0,0],[0,-1,0.5]].
HostCsr tall_csr() {
    HostCsr a;
    a.rows = 5;
    a.cols = 3;
    a.row_ptr = {0, 0, 2, 2, 2, 4};
    a.col_idx = {0, 2, 1, 2};
    a.values = {1.0f, 2.0f, -1.0f, 0.5f};
    return a;
}

bool same(const HostCsr& x, const HostCsr& y) {
    return x.rows == y.rows && x.cols == y.cols && x.row_ptr == y.row_ptr &&
           x.col_idx == y.col_idx && test::bitwise_equal(x.values, y.values);
}

/// y0 with y[rows[r]] += A[r] x, as a plain loop (float, entry order).
std::vector<float> reference_scatter(const HostDcsr& a, const HostMatrix& x, HostMatrix y) {
    for (std::size_t r = 0; r < a.row_ids.size(); ++r) {
        for (index_t k = a.block.row_ptr[r]; k < a.block.row_ptr[r + 1]; ++k) {
            const auto slot = static_cast<std::size_t>(k);
            for (index_t j = 0; j < x.cols; ++j) {
                y.at(a.row_ids[r], j) += a.block.values[slot] * x.at(a.block.col_idx[slot], j);
            }
        }
    }
    return y.values;
}

std::vector<float> run_scatter(Backend& backend, const HostDcsr& a, const HostMatrix& x,
                               const HostMatrix& y0) {
    const CsrMatrix da = CsrMatrix::upload(backend, a.block);
    const Buffer<index_t> rows(backend, std::span<const index_t>(a.row_ids));
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix dy = DenseMatrix::upload(backend, y0);
    backend.spmm_scatter_add(da, rows.span(), dx.view(), dy.view());
    return dy.download().values;
}

}  // namespace

TEST_CASE("compress_rows keeps the nonempty rows and expand_rows restores the matrix", "[tensor]") {
    const HostCsr a = tall_csr();
    const HostDcsr d = compress_rows(a);
    CHECK(d.rows == 5);
    CHECK(d.cols() == 3);
    CHECK(d.row_ids == std::vector<index_t>{1, 4});
    CHECK(d.block.rows == 2);
    CHECK(d.block.row_ptr == std::vector<index_t>{0, 2, 4});
    CHECK(d.block.col_idx == a.col_idx);
    CHECK(d.nnz() == 4);
    REQUIRE_NOTHROW(validate(d, "d"));
    CHECK(same(expand_rows(d), a));
    CHECK(same(transpose(d), transpose(a)));
    CHECK(dcsr_bytes(2, 4) == csr_bytes(2, 4) + 2 * 4);

    HostCsr zeros;
    zeros.rows = 4;
    zeros.cols = 2;
    zeros.row_ptr = {0, 0, 0, 0, 0};
    const HostDcsr empty = compress_rows(zeros);
    CHECK(empty.row_ids.empty());
    CHECK(empty.block.rows == 0);
    CHECK(same(expand_rows(empty), zeros));
    CHECK(transpose(empty).row_ptr == std::vector<index_t>{0, 0, 0});
}

TEST_CASE("compress, expand and transpose agree with the full matrix on random matrices",
          "[tensor]") {
    for (const double density : {0.0, 0.01, 0.1, 0.6}) {
        const HostCsr a = test::random_csr(300, 70, density, 17);
        const HostDcsr d = compress_rows(a);
        REQUIRE_NOTHROW(validate(d, "random"));
        CHECK(same(expand_rows(d), a));
        CHECK(same(transpose(d), transpose(a)));
        for (std::size_t r = 0; r < d.row_ids.size(); ++r) {
            CHECK(d.block.row_ptr[r + 1] > d.block.row_ptr[r]);
        }
    }
}

TEST_CASE("validate rejects bad row ids and a block of the wrong height", "[tensor]") {
    HostDcsr d = compress_rows(tall_csr());
    d.row_ids = {4, 1};
    CHECK_THROWS_WITH(validate(d, "blk"),
                      Contains("blk: row id 1 at position 1") && Contains("not ascending"));
    d.row_ids = {1, 5};
    CHECK_THROWS_WITH(validate(d, "blk"), Contains("row id 5") && Contains("[0, 5)"));
    d.row_ids = {1};
    CHECK_THROWS_WITH(validate(d, "blk"), Contains("blk: block of 2 rows for 1 row ids"));
}

TEST_CASE("spmm_scatter_add equals a plain loop and spmm with beta 1 on the expanded matrix",
          "[device]") {
    const HostCsr full = test::random_csr(257, 90, 0.04, 3);
    const HostDcsr a = compress_rows(full);
    REQUIRE(a.listed_rows() < full.rows);  // some rows are empty: the test means something
    REQUIRE(a.listed_rows() > 0);
    for (const index_t f : {1, 7, 33}) {
        const HostMatrix x = test::random_matrix(90, f, 5);
        const HostMatrix y0 = test::random_matrix(257, f, 6);
        const std::vector<float> expected = reference_scatter(a, x, y0);
        for (const int threads : {1, 3}) {
            CpuBackend backend(threads);
            CHECK(test::bitwise_equal(run_scatter(backend, a, x, y0), expected));
            const CsrMatrix dfull = CsrMatrix::upload(backend, full);
            const DenseMatrix dx = DenseMatrix::upload(backend, x);
            DenseMatrix dy = DenseMatrix::upload(backend, y0);
            backend.spmm(dfull, dx.view(), dy.view(), 1.0f);
            CHECK(test::bitwise_equal(dy.download().values, expected));
        }
    }
}

TEST_CASE("spmm_scatter_add leaves unlisted rows alone and checks its operands", "[device]") {
    CpuBackend backend(2);
    const HostDcsr a = compress_rows(tall_csr());
    const HostMatrix x = test::matrix(3, 2, {1, 2, 3, 4, 5, 6});
    const HostMatrix y0 = test::matrix(5, 2, {10, 11, 12, 13, 14, 15, 16, 17, 18, 19});
    // row 1 += 1*[1,2] + 2*[5,6] = [11,14]; row 4 += -1*[3,4] + 0.5*[5,6] = [-0.5,-1]
    CHECK(run_scatter(backend, a, x, y0) ==
          std::vector<float>{10, 11, 23, 27, 14, 15, 16, 17, 17.5f, 18});

    const CsrMatrix da = CsrMatrix::upload(backend, a.block);
    const std::vector<index_t> one{1};
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix dy = DenseMatrix::upload(backend, y0);
    CHECK_THROWS_WITH(backend.spmm_scatter_add(da, one, dx.view(), dy.view()),
                      Contains("spmm_scatter_add: 1 row ids for A's 2 rows"));
    DenseMatrix narrow = DenseMatrix::upload(backend, test::matrix(5, 1, {0, 0, 0, 0, 0}));
    const Buffer<index_t> rows(backend, std::span<const index_t>(a.row_ids));
    CHECK_THROWS_WITH(backend.spmm_scatter_add(da, rows.span(), dx.view(), narrow.view()),
                      Contains("spmm_scatter_add: y is 5 x 1"));
}

}  // namespace strata
