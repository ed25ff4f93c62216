// The row kernels (gather.cu, spmm_rows.cu) run by the emulation against the CPU kernels on
// tests/gpu's inputs: gather_rows, scatter_rows bit for bit, scatter_add_rows to 1e-6 with
// repeated ids (atomics) and bit for bit with distinct ids, the bad-id status bits; the CSR row
// range SpMM and the compressed-row scatter to 1e-5 of the magnitude of the summed terms.
#include <cstdint>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "src/tensor/host_dcsr.hpp"
#include "tests/emulation/emulation_test_util.hpp"

namespace strata {
namespace {

namespace kernels = cuda::kernels;
using test::DeviceVector;
using test::no_stream;

const float nan = std::numeric_limits<float>::quiet_NaN();

/// A on the emulated device.
struct DeviceCsr {
    DeviceVector<index_t> row_ptr;
    DeviceVector<index_t> col_idx;
    DeviceVector<float> values;
    explicit DeviceCsr(const HostCsr& a)
        : row_ptr("row_ptr", a.row_ptr),
          col_idx("col_idx", a.col_idx),
          values("values", a.values) {}
};

/// y = A[first : first + count] x + beta y0 by the CPU kernel (one part).
std::vector<float> cpu_spmm_rows(const HostCsr& a, index_t first, index_t count,
                                 const std::vector<float>& x, index_t f, std::vector<float> y,
                                 float beta) {
    const std::vector<index_t> bounds = {0, count};
    cpu::spmm_csr(a.row_ptr.data() + first, a.col_idx.data(), a.values.data(), count, x.data(), f,
                  y.data(), beta, bounds.data(), 1);
    return y;
}

std::vector<float> abs_of(std::vector<float> v) {
    for (float& e : v) {
        e = std::abs(e);
    }
    return v;
}

struct SpmmCase {
    const char* name;
    HostCsr a;
    index_t f;
};

}  // namespace

TEST_CASE("emulated gather_rows and scatter_add_rows equal the CPU with repeated ids",
          "[emulation]") {
    for (const index_t f : {1, 33}) {
        INFO("f " << f);
        const std::vector<float> x = test::random_matrix(50, f, 4).values;
        std::vector<index_t> ids;
        for (index_t i = 0; i < 77; ++i) {
            ids.push_back((i * 13 + 5) % 50);  // every id, several of them twice
        }
        const std::vector<float> out0 = test::random_matrix(50, f, 5).values;
        const std::vector<float> packed = test::random_matrix(77, f, 6).values;
        const DeviceVector<index_t> rows("rows", ids);
        const DeviceVector<unsigned> status("status", std::vector<unsigned>{0u});
        const DeviceVector<float> dx("x", x);
        const DeviceVector<float> out("out", ids.size() * static_cast<std::size_t>(f));
        REQUIRE(kernels::gather_rows(dx.data(), 50, f, rows.data(), 77, out.data(), status.data(),
                                     no_stream) == cudaSuccess);
        std::vector<float> want(out.size());
        cpu::gather_rows(x.data(), f, ids.data(), ids.size(), want.data(), test::cpu_threads);
        CHECK(test::bitwise_equal(out.download(), want));

        const DeviceVector<float> dpacked("packed", packed);
        const DeviceVector<float> sum("out", out0);
        REQUIRE(kernels::scatter_add_rows(dpacked.data(), f, rows.data(), 77, sum.data(), 50,
                                          status.data(), no_stream) == cudaSuccess);
        std::vector<float> want_sum = out0;
        cpu::scatter_add_rows(packed.data(), f, ids.data(), ids.size(), want_sum.data(),
                              test::cpu_threads);
        CHECK(test::max_relative_difference(sum.download(), want_sum) < 1e-6);
        CHECK(status.download()[0] == 0u);
    }
}

TEST_CASE("emulated scatter_add_rows with distinct ids per call is the CPU's sum, bit for bit",
          "[emulation]") {
    const index_t f = 33;
    const std::vector<float> out0 = test::random_matrix(50, f, 7).values;
    const std::vector<std::vector<index_t>> calls = {
        {3, 9, 20, 41}, {0, 3, 9, 49}, {9, 10, 20}, {}};
    const DeviceVector<float> sum("out", out0);
    const DeviceVector<unsigned> status("status", std::vector<unsigned>{0u});
    std::vector<float> want = out0;
    std::uint32_t seed = 8;
    for (const std::vector<index_t>& ids : calls) {
        const auto n = static_cast<index_t>(ids.size());
        const std::vector<float> x = test::random_matrix(n, f, seed++).values;
        const DeviceVector<index_t> rows("rows", ids);
        const DeviceVector<float> dx("x", x);
        REQUIRE(kernels::scatter_add_rows(dx.data(), f, rows.data(), n, sum.data(), 50,
                                          status.data(), no_stream) == cudaSuccess);
        cpu::scatter_add_rows(x.data(), f, ids.data(), ids.size(), want.data(), test::cpu_threads);
    }
    CHECK(test::bitwise_equal(sum.download(), want));
}

TEST_CASE("emulated scatter_rows equals the CPU bit for bit with distinct shuffled ids",
          "[emulation]") {
    for (const index_t f : {1, 33}) {
        INFO("f " << f);
        std::vector<index_t> ids;
        for (index_t i = 0; i < 50; ++i) {
            const index_t id = (i * 17 + 3) % 50;  // a permutation of 0..49
            if (id % 4 != 2) {
                ids.push_back(id);  // rows 2, 6, 10, ... are not listed and must stay
            }
        }
        const auto m = static_cast<index_t>(ids.size());
        const std::vector<float> x = test::random_matrix(m, f, 7).values;
        const std::vector<float> out0 = test::random_matrix(50, f, 8).values;
        const DeviceVector<index_t> rows("rows", ids);
        const DeviceVector<unsigned> status("status", std::vector<unsigned>{0u});
        const DeviceVector<float> dx("x", x);
        const DeviceVector<float> out("out", out0);
        REQUIRE(kernels::scatter_rows(dx.data(), f, rows.data(), m, out.data(), 50, status.data(),
                                      no_stream) == cudaSuccess);
        std::vector<float> want = out0;
        cpu::scatter_rows(x.data(), f, ids.data(), ids.size(), want.data(), test::cpu_threads);
        CHECK(test::bitwise_equal(out.download(), want));
        CHECK(out.download()[static_cast<std::size_t>(2 * f)] ==
              out0[static_cast<std::size_t>(2 * f)]);
    }
}

TEST_CASE("emulated gather and scatters set their status bit for an id out of range and skip it",
          "[emulation]") {
    const std::vector<float> x = test::random_matrix(4, 3, 1).values;
    const std::vector<index_t> ids = {0, 4, 2, -1};
    const DeviceVector<index_t> rows("rows", ids);
    const DeviceVector<float> dx("x", x);
    const DeviceVector<unsigned> status("status", std::vector<unsigned>{0u});
    const DeviceVector<float> out("out", 4 * 3);
    REQUIRE(kernels::gather_rows(dx.data(), 4, 3, rows.data(), 4, out.data(), status.data(),
                                 no_stream) == cudaSuccess);
    CHECK(status.download()[0] == kernels::bad_gather_row);
    const std::vector<float> got = out.download();
    CHECK(got[3] == 0.0f);  // row 1 (id 4): zeros
    CHECK(got[9] == 0.0f);  // row 3 (id -1)
    CHECK(got[6] == x[6]);  // row 2: x's row 2
    const std::vector<float> zeros(4 * 3, 0.0f);
    const DeviceVector<float> sum("sum", zeros);
    REQUIRE(kernels::scatter_add_rows(out.data(), 3, rows.data(), 4, sum.data(), 4, status.data(),
                                      no_stream) == cudaSuccess);
    CHECK(status.download()[0] == (kernels::bad_gather_row | kernels::bad_scatter_row));
    REQUIRE(kernels::scatter_rows(out.data(), 3, rows.data(), 4, sum.data(), 4, status.data(),
                                  no_stream) == cudaSuccess);
    CHECK(status.download()[0] ==
          (kernels::bad_gather_row | kernels::bad_scatter_row | kernels::bad_scatter_set_row));
}

TEST_CASE("emulated spmm of a row range equals the CPU", "[emulation]") {
    const std::vector<SpmmCase> cases = {
        {"200 x 150, f 33", test::random_csr(200, 150, 0.05, 2), 33},
        {"37 x 53, f 1", test::random_csr(37, 53, 0.2, 1), 1},
        {"a row of 1500 entries, f 7", test::random_csr(40, 4000, 0.001, 3, 17, 1500), 7},
        {"a row of 3000 entries, f 130", test::random_csr(3, 3001, 0.0, 4, 1, 3000), 130},
        {"nnz 0", test::random_csr(10, 12, 0.0, 5), 5},
        {"0 columns", test::random_csr(6, 0, 0.5, 7), 3},
    };
    for (const SpmmCase& c : cases) {
        const index_t m = c.a.rows;
        const DeviceCsr a(c.a);
        // Empty (at the start, inside, at the end), the first row, the first rows, one row and a
        // run in the middle, the last row, the last rows, all but the first, all but the last,
        // all rows.
        const std::vector<std::pair<index_t, index_t>> ranges = {
            {0, 0},         {m / 2, 0}, {m, 0},
            {0, 1},         {0, m / 3}, {m / 2, 1},
            {m / 4, m / 2}, {m - 1, 1}, {std::max(0, m - 7), std::min(m, 7)},
            {1, m - 1},     {0, m - 1}, {0, m}};
        const std::vector<float> x = test::random_matrix(c.a.cols, c.f, 13).values;
        const DeviceVector<float> dx("x", x);
        for (const auto& [first, count] : ranges) {
            for (const float beta : {0.0f, 1.0f, 0.5f}) {
                INFO(c.name << ", rows [" << first << ", " << first + count << "), beta " << beta);
                std::vector<float> y0 = test::random_matrix(count, c.f, 14).values;
                if (beta == 0.0f) {
                    y0.assign(y0.size(), nan);  // beta 0 must never read y
                }
                const DeviceVector<float> y("y", y0);
                REQUIRE(kernels::spmm_csr_rows(a.row_ptr.data(), a.col_idx.data(), a.values.data(),
                                               first, count, dx.data(), c.f, y.data(), beta,
                                               no_stream) == cudaSuccess);
                const auto want = cpu_spmm_rows(c.a, first, count, x, c.f, y0, beta);
                const auto scale = cpu_spmm_rows(test::abs_of(c.a), first, count, abs_of(x), c.f,
                                                 abs_of(y0), beta);
                CHECK(test::max_scaled_difference(y.download(), want, scale) < 1e-5);
            }
        }
    }
}

TEST_CASE("emulated spmm_scatter_add equals the CPU and leaves unlisted rows alone",
          "[emulation]") {
    const std::vector<SpmmCase> cases = {
        {"200 x 150, f 33", test::random_csr(200, 150, 0.02, 2), 33},
        {"37 x 53, f 1", test::random_csr(37, 53, 0.2, 1), 1},
        {"a row of 1500 entries, f 7", test::random_csr(40, 4000, 0.001, 3, 17, 1500), 7},
        {"nnz 0", test::random_csr(10, 12, 0.0, 5), 5},
    };
    for (const SpmmCase& c : cases) {
        INFO(c.name);
        const HostDcsr a = compress_rows(c.a);
        const std::vector<float> x = test::random_matrix(c.a.cols, c.f, 13).values;
        const std::vector<float> y0 = test::random_matrix(c.a.rows, c.f, 14).values;
        const DeviceCsr block(a.block);
        const DeviceVector<index_t> rows("out_rows", a.row_ids);
        const DeviceVector<float> dx("x", x);
        const DeviceVector<float> y("y", y0);
        REQUIRE(kernels::spmm_csr_scatter_add(block.row_ptr.data(), block.col_idx.data(),
                                              block.values.data(), rows.data(), a.listed_rows(),
                                              dx.data(), c.f, y.data(), no_stream) == cudaSuccess);
        const auto run_cpu = [&](const HostCsr& b, const std::vector<float>& xs,
                                 std::vector<float> ys) {
            const std::vector<index_t> bounds = {0, b.rows};
            cpu::spmm_csr(b.row_ptr.data(), b.col_idx.data(), b.values.data(), b.rows, xs.data(),
                          c.f, ys.data(), 1.0f, bounds.data(), 1, a.row_ids.data());
            return ys;
        };
        const std::vector<float> got = y.download();
        const auto want = run_cpu(a.block, x, y0);
        const auto scale = run_cpu(test::abs_of(a.block), abs_of(x), abs_of(y0));
        CHECK(test::max_scaled_difference(got, want, scale) < 1e-5);
        std::vector<std::uint8_t> listed(static_cast<std::size_t>(c.a.rows), 0);
        for (const index_t r : a.row_ids) {
            listed[static_cast<std::size_t>(r)] = 1;
        }
        bool untouched = true;  // unlisted rows keep y0's bits
        for (std::size_t i = 0; i < got.size(); ++i) {
            if (listed[i / static_cast<std::size_t>(c.f)] == 0) {
                untouched = untouched && got[i] == y0[i];
            }
        }
        CHECK(untouched);
    }
}

}  // namespace strata
