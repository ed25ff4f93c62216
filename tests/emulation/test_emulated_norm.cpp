// The normalisation kernels (norm.cu: a warp per row with shuffles, column partials over the
// CPU's row chunks) run by the emulation against the CPU kernels on tests/gpu's shapes (0 rows,
// 1 row, width 1, widths that are not multiples of 32, more than one row chunk, more rows than
// a block has warps): layer_norm and its backward (dx with beta 0 and 1 and over dy, dgamma and
// dbeta each present or not), centered_column_sums, batch_norm and its backward. Bit for bit
// for the elementwise batch_norm pair, to 1e-5 elsewhere (warp sums in another order), as
// tests/gpu.
#include <cstdint>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/emulation/emulation_test_util.hpp"

namespace strata {
namespace {

namespace kernels = cuda::kernels;
using test::DeviceVector;
using test::no_stream;
using test::Shape;

const float nan = std::numeric_limits<float>::quiet_NaN();
// tests/gpu's shapes and width 1 with rows not a multiple of a block; {700, 33}: three row
// chunks of 256 (column partials), 88 blocks of 8 warps (a warp per row).
const Shape shapes[] = {{0, 37}, {1, 37}, {1, 1}, {301, 45}, {700, 33}, {70, 300}, {257, 1}};
constexpr double tolerance = 1e-5;
constexpr float eps = 1e-5f;

std::vector<float> values_of(index_t rows, index_t cols, std::uint64_t seed, float lo = -1.0f,
                             float hi = 1.0f) {
    return test::random_matrix(rows, cols, seed, lo, hi).values;
}

/// floor 1e-1: an absolute error of 1e-6 where the values are near 0 (tests/gpu's `close`).
double close(const std::vector<float>& got, const std::vector<float>& want) {
    return test::max_relative_difference(got, want, 1e-1);
}

}  // namespace

TEST_CASE("emulated layer_norm and its backward equal the CPU to rounding", "[emulation]") {
    for (const Shape s : shapes) {
        const std::vector<float> x = values_of(s.rows, s.cols, 51, -2.0f, 4.0f);
        const std::vector<float> gamma = values_of(1, s.cols, 52, 0.5f, 1.5f);
        const std::vector<float> beta_p = values_of(1, s.cols, 53);
        const std::vector<float> dy = values_of(s.rows, s.cols, 54);
        const std::vector<float> dx_old = values_of(s.rows, s.cols, 55);
        const DeviceVector<float> dx_in("x", x);
        const DeviceVector<float> g("gamma", gamma);
        const DeviceVector<float> bp("beta", beta_p);
        const DeviceVector<float> ddy("dy", dy);
        INFO(s.rows << " x " << s.cols);

        const DeviceVector<float> y("y", s.size());
        REQUIRE(kernels::layer_norm(dx_in.data(), s.rows, s.cols, g.data(), bp.data(), eps,
                                    y.data(), no_stream) == cudaSuccess);
        std::vector<float> want_y(s.size());
        cpu::layer_norm(x.data(), s.rows, s.cols, gamma.data(), beta_p.data(), eps, want_y.data(),
                        test::cpu_threads);
        CHECK(close(y.download(), want_y) < tolerance);

        const DeviceVector<std::uint8_t> workspace(
            "layer_norm workspace", kernels::layer_norm_backward_workspace_bytes(s.rows, s.cols));
        for (const float beta : {0.0f, 1.0f}) {
            for (const int sums : {0, 1, 2, 3}) {  // bit 0: dgamma, bit 1: dbeta
                INFO("beta " << beta << ", dgamma " << (sums & 1) << ", dbeta " << (sums & 2));
                const std::vector<float> dx0 =
                    beta == 0.0f ? std::vector<float>(s.size(), nan) : dx_old;
                const DeviceVector<float> ddx("dx", dx0);
                const DeviceVector<float> dgamma("dgamma", gamma);  // += onto gamma's values
                const DeviceVector<float> dbeta("dbeta", beta_p);
                float* dg = (sums & 1) != 0 ? dgamma.data() : nullptr;
                float* db = (sums & 2) != 0 ? dbeta.data() : nullptr;
                REQUIRE(kernels::layer_norm_backward(dx_in.data(), ddy.data(), s.rows, s.cols,
                                                     g.data(), eps, ddx.data(), beta, dg, db,
                                                     workspace.data(), no_stream) == cudaSuccess);
                std::vector<float> want_dx = dx0;
                std::vector<float> want_dgamma = gamma;
                std::vector<float> want_dbeta = beta_p;
                cpu::layer_norm_backward(
                    x.data(), dy.data(), s.rows, s.cols, gamma.data(), eps, want_dx.data(), beta,
                    (sums & 1) != 0 ? want_dgamma.data() : nullptr,
                    (sums & 2) != 0 ? want_dbeta.data() : nullptr, test::cpu_threads);
                CHECK(close(ddx.download(), want_dx) < tolerance);
                CHECK(close(dgamma.download(), want_dgamma) < tolerance);
                CHECK(close(dbeta.download(), want_dbeta) < tolerance);
            }
        }
        // dx over dy, no parameter sums; and the sums alone (dx null).
        const DeviceVector<float> over("dy", dy);
        REQUIRE(kernels::layer_norm_backward(dx_in.data(), over.data(), s.rows, s.cols, g.data(),
                                             eps, over.data(), 0.0f, nullptr, nullptr,
                                             workspace.data(), no_stream) == cudaSuccess);
        std::vector<float> want_over = dy;
        cpu::layer_norm_backward(x.data(), want_over.data(), s.rows, s.cols, gamma.data(), eps,
                                 want_over.data(), 0.0f, nullptr, nullptr, test::cpu_threads);
        CHECK(close(over.download(), want_over) < tolerance);
        const DeviceVector<float> dgamma("dgamma", gamma);
        REQUIRE(kernels::layer_norm_backward(dx_in.data(), ddy.data(), s.rows, s.cols, g.data(),
                                             eps, nullptr, 0.0f, dgamma.data(), nullptr,
                                             workspace.data(), no_stream) == cudaSuccess);
        std::vector<float> want_dgamma = gamma;
        cpu::layer_norm_backward(x.data(), dy.data(), s.rows, s.cols, gamma.data(), eps, nullptr,
                                 0.0f, want_dgamma.data(), nullptr, test::cpu_threads);
        CHECK(close(dgamma.download(), want_dgamma) < tolerance);
    }
}

TEST_CASE("emulated batch norm kernels equal the CPU", "[emulation]") {
    for (const Shape s : shapes) {
        INFO(s.rows << " x " << s.cols);
        const std::vector<float> x = values_of(s.rows, s.cols, 61, 9.0f, 11.0f);
        const std::vector<float> dy = values_of(s.rows, s.cols, 62);
        const std::vector<float> mean = values_of(1, s.cols, 63, 9.5f, 10.5f);
        const std::vector<float> var = values_of(1, s.cols, 64, 0.1f, 0.5f);
        const std::vector<float> gamma = values_of(1, s.cols, 65, 0.5f, 1.5f);
        const std::vector<float> beta_p = values_of(1, s.cols, 66);
        const std::vector<float> sums = values_of(1, s.cols, 67);
        const DeviceVector<float> dx_in("x", x);
        const DeviceVector<float> ddy("dy", dy);
        const DeviceVector<float> dm("mean", mean);
        const DeviceVector<float> dv("var", var);
        const DeviceVector<float> dg("gamma", gamma);
        const DeviceVector<float> db("beta", beta_p);
        const DeviceVector<float> ds("sums", sums);
        const int t = test::cpu_threads;

        const DeviceVector<float> y("y", s.size());
        REQUIRE(kernels::batch_norm(dx_in.data(), s.rows, s.cols, dm.data(), dv.data(), eps,
                                    dg.data(), db.data(), y.data(), no_stream) == cudaSuccess);
        std::vector<float> want_y(s.size());
        cpu::batch_norm(x.data(), s.rows, s.cols, mean.data(), var.data(), eps, gamma.data(),
                        beta_p.data(), want_y.data(), t);
        CHECK(test::bitwise_equal(y.download(), want_y));

        const DeviceVector<float> over("dy", dy);  // over dy, beta 0
        REQUIRE(kernels::batch_norm_backward(dx_in.data(), over.data(), s.rows, s.cols, dm.data(),
                                             dv.data(), eps, dg.data(), ds.data(), ds.data(),
                                             1234.0, over.data(), 0.0f, no_stream) == cudaSuccess);
        std::vector<float> want_over = dy;
        cpu::batch_norm_backward(x.data(), want_over.data(), s.rows, s.cols, mean.data(),
                                 var.data(), eps, gamma.data(), sums.data(), sums.data(), 1234.0,
                                 want_over.data(), 0.0f, t);
        CHECK(test::bitwise_equal(over.download(), want_over));
        const DeviceVector<float> acc("dx", dy);  // beta 1
        REQUIRE(kernels::batch_norm_backward(dx_in.data(), ddy.data(), s.rows, s.cols, dm.data(),
                                             dv.data(), eps, dg.data(), ds.data(), ds.data(),
                                             1234.0, acc.data(), 1.0f, no_stream) == cudaSuccess);
        std::vector<float> want_acc = dy;
        cpu::batch_norm_backward(x.data(), dy.data(), s.rows, s.cols, mean.data(), var.data(), eps,
                                 gamma.data(), sums.data(), sums.data(), 1234.0, want_acc.data(),
                                 1.0f, t);
        CHECK(test::bitwise_equal(acc.download(), want_acc));

        const DeviceVector<std::uint8_t> workspace(
            "centered_column_sums workspace",
            kernels::centered_column_sums_workspace_bytes(s.rows, s.cols));
        const std::vector<float> nans(static_cast<std::size_t>(s.cols), nan);
        const DeviceVector<float> sq("out", nans);  // beta 0 over NaN, no var, no w
        REQUIRE(kernels::centered_column_sums(dx_in.data(), s.rows, s.cols, dm.data(), nullptr,
                                              0.0f, nullptr, sq.data(), 0.0f, workspace.data(),
                                              no_stream) == cudaSuccess);
        std::vector<float> want_sq = nans;
        cpu::centered_column_sums(x.data(), s.rows, s.cols, mean.data(), nullptr, 0.0f, nullptr,
                                  want_sq.data(), 0.0f, t);
        CHECK(close(sq.download(), want_sq) < tolerance);
        const DeviceVector<float> sw("out", sums);  // beta 1, with var and w
        REQUIRE(kernels::centered_column_sums(dx_in.data(), s.rows, s.cols, dm.data(), dv.data(),
                                              eps, ddy.data(), sw.data(), 1.0f, workspace.data(),
                                              no_stream) == cudaSuccess);
        std::vector<float> want_sw = sums;
        cpu::centered_column_sums(x.data(), s.rows, s.cols, mean.data(), var.data(), eps, dy.data(),
                                  want_sw.data(), 1.0f, t);
        CHECK(close(sw.download(), want_sw) < tolerance);
    }
}

}  // namespace strata
