// The CPU kernels that read packed halo records as they are (Backend::spmm_scatter_add_packed,
// scatter_add_packed_rows): bit for bit what unpacking the records (unpack_rows) and the fp32
// kernels give, at every width class (under 8, multiples of 8, ragged), both formats, 1 and 2
// threads, with a zero row and (int8) a non-finite row; and their operand checks' messages.
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/comm/halo_packing.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "src/tensor/host_dcsr.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

using Catch::Matchers::Contains;

/// x's rows as `precision` records, and those records unpacked (what the fp32 path reads).
struct Packed {
    std::vector<std::byte> records;
    HostMatrix decoded;
};

Packed pack(HaloPrecision precision, const HostMatrix& x) {
    const auto n = static_cast<index_t>(x.rows);
    Packed p{
        std::vector<std::byte>(static_cast<std::size_t>(n) * packed_row_bytes(precision, x.cols)),
        HostMatrix(n, x.cols)};
    pack_rows(precision, {x.values.data(), n, x.cols}, p.records);
    unpack_rows(precision, p.records, {p.decoded.values.data(), n, x.cols});
    return p;
}

/// n x f values over several magnitudes; row 1 all zero, and with `non_finite` row 2 holds an
/// infinity (an int8 record of it decodes as NaN).
HostMatrix halo_rows(index_t n, index_t f, std::uint64_t seed, bool non_finite) {
    HostMatrix x = test::random_matrix(n, f, seed);
    for (index_t j = 0; j < f; ++j) {
        x.at(0, j) *= std::ldexp(1.0f, static_cast<int>(j % 9) - 4);
        x.at(1, j) = 0.0f;
    }
    if (non_finite) {
        x.at(2, f / 2) = std::numeric_limits<float>::infinity();
    }
    return x;
}

/// Row ids into a y of 2 m + 3 rows: distinct, out of order.
std::vector<index_t> spread_rows(index_t m) {
    std::vector<index_t> ids;
    for (index_t r = 0; r < m; ++r) {
        ids.push_back(2 * (m - 1 - r) + 1);
    }
    return ids;
}

ConstPackedMatrix view(HaloPrecision precision, const Packed& p) {
    return {.precision = precision,
            .data = p.records.data(),
            .rows = static_cast<index_t>(p.decoded.rows),
            .cols = p.decoded.cols};
}

}  // namespace

TEST_CASE("halo SpMM over packed records equals unpack then spmm_scatter_add, bit for bit",
          "[device][halo_packing]") {
    for (const int threads : {1, 2}) {
        CpuBackend backend(threads);
        for (const HaloPrecision precision : {HaloPrecision::bf16, HaloPrecision::int8}) {
            for (const index_t f : {1, 3, 7, 8, 9, 15, 16, 24, 47, 64, 100, 256}) {
                CAPTURE(threads, to_string(precision), f);
                const index_t m = 41;
                const index_t n = 37;
                const HostCsr a = test::random_csr(m, n, 0.2, static_cast<std::uint32_t>(f), 0);
                const Packed x = pack(precision, halo_rows(n, f, 7 + f, true));
                const std::vector<index_t> ids = spread_rows(m);
                const HostMatrix y0 = test::random_matrix(2 * m + 3, f, 99);

                const CsrMatrix da = CsrMatrix::upload(backend, a);
                const Buffer<index_t> rows(backend, std::span<const index_t>(ids));
                const DenseMatrix dx = DenseMatrix::upload(backend, x.decoded);
                DenseMatrix expected = DenseMatrix::upload(backend, y0);
                backend.spmm_scatter_add(da, rows.span(), dx.view(), expected.view());
                DenseMatrix got = DenseMatrix::upload(backend, y0);
                backend.spmm_scatter_add_packed(da, rows.span(), view(precision, x), got.view());
                CHECK(test::bitwise_equal(got.download().values, expected.download().values));
            }
        }
    }
}

TEST_CASE("gradient sum over packed records equals unpack then scatter_add_rows, bit for bit",
          "[device][halo_packing]") {
    for (const int threads : {1, 2}) {
        CpuBackend backend(threads);
        for (const HaloPrecision precision : {HaloPrecision::bf16, HaloPrecision::int8}) {
            for (const index_t f : {1, 5, 8, 13, 16, 40, 47, 100, 256}) {
                CAPTURE(threads, to_string(precision), f);
                const index_t n = 300;  // above the kernel's serial size at the wider widths
                const Packed x =
                    pack(precision, halo_rows(n, f, 3 + f, precision == HaloPrecision::bf16));
                std::vector<index_t> ids;
                for (index_t i = 0; i < n; ++i) {
                    ids.push_back((i * 7) % 53);  // repeated ids: summed in order of i
                }
                const HostMatrix out0 = test::random_matrix(53, f, 5);
                const DenseMatrix dx = DenseMatrix::upload(backend, x.decoded);
                DenseMatrix expected = DenseMatrix::upload(backend, out0);
                backend.scatter_add_rows(dx.view(), ids, expected.view());
                DenseMatrix got = DenseMatrix::upload(backend, out0);
                backend.scatter_add_packed_rows(view(precision, x), ids, got.view());
                CHECK(test::bitwise_equal(got.download().values, expected.download().values));
            }
        }
    }
}

TEST_CASE("packed-record operations check their operands", "[device][halo_packing]") {
    CpuBackend backend(1);
    const HostCsr a = test::random_csr(4, 3, 0.5, 1, 0);
    const Packed x = pack(HaloPrecision::bf16, test::random_matrix(3, 2, 1));
    const CsrMatrix da = CsrMatrix::upload(backend, a);
    const std::vector<index_t> ids{0, 2, 4, 6};
    DenseMatrix y = DenseMatrix::upload(backend, test::random_matrix(7, 2, 2));
    ConstPackedMatrix fp32 = view(HaloPrecision::bf16, x);
    fp32.precision = HaloPrecision::fp32;
    CHECK_THROWS_WITH(backend.spmm_scatter_add_packed(da, ids, fp32, y.view()),
                      Contains("spmm_scatter_add_packed: fp32 rows are not packed"));
    const std::vector<index_t> three{0, 2, 4};
    CHECK_THROWS_WITH(
        backend.spmm_scatter_add_packed(da, three, view(HaloPrecision::bf16, x), y.view()),
        Contains("spmm_scatter_add_packed: 3 row ids for A's 4 rows"));
    DenseMatrix wide = DenseMatrix::upload(backend, test::random_matrix(7, 3, 2));
    CHECK_THROWS_WITH(
        backend.spmm_scatter_add_packed(da, ids, view(HaloPrecision::bf16, x), wide.view()),
        Contains("spmm_scatter_add_packed: y is 7 x 3, expected >= 4 rows of 2 columns"));
    CHECK_THROWS_WITH(backend.scatter_add_packed_rows(view(HaloPrecision::bf16, x), ids, y.view()),
                      Contains("scatter_add_packed_rows: x is 3 x 2 but rows.size() x out.cols"));
    const std::vector<index_t> outside{0, 1, 9};
    CHECK_THROWS_WITH(
        backend.scatter_add_packed_rows(view(HaloPrecision::bf16, x), outside, y.view()),
        Contains("scatter_add_packed_rows: row id 9 at index 2 out of range [0, 7)"));
}

}  // namespace strata
