// The elementwise kernels (elementwise.cu, scalar.cu, column_sums.cu, bias_activation.cu) run by
// the emulation against the CPU kernels on tests/gpu's shapes: bit for bit where tests/gpu says
// so (fill, axpby, axpby_scalar, column_sums, bias_activation with none/relu/leaky_relu), to
// 1e-5 where it allows rounding (dot; elu and gelu, whose expf/erff differ on a GPU).
#include <cstdint>
#include <iterator>
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
const Shape shapes[] = {{0, 37}, {1, 37}, {1, 1}, {301, 45}, {257, 1}, {70, 33}, {700, 33}};

std::vector<float> values_of(const Shape& s, std::uint64_t seed, float lo = -1.0f,
                             float hi = 1.0f) {
    return test::random_matrix(s.rows, s.cols, seed, lo, hi).values;
}

/// floor 1e-1: an absolute error of 1e-6 where the values are near 0 (tests/gpu's `close`).
double close(const std::vector<float>& got, const std::vector<float>& want) {
    return test::max_relative_difference(got, want, 1e-1);
}

}  // namespace

TEST_CASE("emulated fill and scale equal the CPU exactly", "[emulation]") {
    for (const Shape s : shapes) {
        INFO(s.rows << " x " << s.cols);
        const std::vector<float> y0 = values_of(s, 2);
        const DeviceVector<float> y("y", y0);
        REQUIRE(kernels::fill(y.data(), s.size(), -2.5f, no_stream) == cudaSuccess);
        std::vector<float> want(s.size());
        cpu::fill(want.data(), want.size(), -2.5f, test::cpu_threads);
        CHECK(test::bitwise_equal(y.download(), want));
        const DeviceVector<float> z("z", y0);
        REQUIRE(kernels::scale(z.data(), s.size(), 0.3f, no_stream) == cudaSuccess);
        want = y0;
        for (float& v : want) {
            v *= 0.3f;  // y *= beta
        }
        CHECK(test::bitwise_equal(z.download(), want));
    }
}

TEST_CASE("emulated axpby and axpby_scalar equal the CPU exactly, in place too", "[emulation]") {
    const std::vector<float> scalar{0.37f};
    const DeviceVector<float> ds("s", scalar);
    for (const Shape s : shapes) {
        for (const float alpha : {1.0f, -1.5f}) {
            for (const float beta : {0.0f, 1.0f, 0.3f}) {
                INFO(s.rows << " x " << s.cols << ", alpha " << alpha << ", beta " << beta);
                const std::vector<float> x = values_of(s, 3);
                const std::vector<float> y0 =
                    beta == 0.0f ? std::vector<float>(s.size(), nan) : values_of(s, 4);
                const DeviceVector<float> dx("x", x);
                const DeviceVector<float> dy("y", y0);
                REQUIRE(kernels::axpby(alpha, dx.data(), beta, dy.data(), s.size(), no_stream) ==
                        cudaSuccess);
                std::vector<float> want = y0;
                cpu::axpby(alpha, x.data(), beta, want.data(), want.size(), test::cpu_threads);
                CHECK(test::bitwise_equal(dy.download(), want));
                const DeviceVector<float> in_place("x", x);
                REQUIRE(kernels::axpby(alpha, in_place.data(), beta, in_place.data(), s.size(),
                                       no_stream) == cudaSuccess);
                std::vector<float> want_in_place = x;
                cpu::axpby(alpha, want_in_place.data(), beta, want_in_place.data(), x.size(),
                           test::cpu_threads);
                CHECK(test::bitwise_equal(in_place.download(), want_in_place));

                const DeviceVector<float> sy("y", y0);
                REQUIRE(kernels::axpby_scalar(alpha, ds.data(), dx.data(), beta, sy.data(),
                                              s.size(), no_stream) == cudaSuccess);
                std::vector<float> want_scalar = y0;
                cpu::axpby_scalar(alpha, scalar.data(), x.data(), beta, want_scalar.data(),
                                  x.size(), test::cpu_threads);
                CHECK(test::bitwise_equal(sy.download(), want_scalar));
            }
        }
    }
}

TEST_CASE("emulated dot equals the CPU to rounding, with beta 0 over NaN and beta 1",
          "[emulation]") {
    std::vector<Shape> cases(std::begin(shapes), std::end(shapes));
    cases.push_back({1100, 300});  // more than 1024 blocks of 256: the grid-stride loop
    for (const Shape s : cases) {
        for (const float beta : {0.0f, 1.0f}) {
            INFO(s.rows << " x " << s.cols << ", beta " << beta);
            const std::vector<float> a = values_of(s, 41);
            const std::vector<float> b = values_of(s, 42);
            const DeviceVector<float> da("a", a);
            const DeviceVector<float> db("b", b);
            const std::vector<float> start{beta == 0.0f ? nan : 1.5f};
            const DeviceVector<float> out("out", start);
            const DeviceVector<std::uint8_t> workspace("dot workspace",
                                                       kernels::dot_workspace_bytes(s.size()));
            REQUIRE(kernels::dot(da.data(), db.data(), s.size(), out.data(), beta, workspace.data(),
                                 no_stream) == cudaSuccess);
            const double sum = cpu::dot(a.data(), b.data(), a.size(), test::cpu_threads);
            const auto want = static_cast<float>(sum) + (beta == 0.0f ? 0.0f : beta * 1.5f);
            CHECK(close(out.download(), {want}) < 1e-5);
        }
    }
}

TEST_CASE("emulated column_sums equals the CPU bit for bit", "[emulation]") {
    for (const index_t rows : {0, 1, 255, 257, 20000}) {  // 20000: 64 chunks of 313 rows
        for (const index_t cols : {1, 37, 300}) {         // 300: two column blocks
            if (rows * cols > 1000000) {
                continue;  // 64 chunks take 20000 rows; 300 columns take 257
            }
            for (const float beta : {0.0f, 0.5f}) {
                INFO("rows " << rows << ", cols " << cols << ", beta " << beta);
                const Shape s{rows, cols};
                const std::vector<float> x = values_of(s, 7);
                const std::vector<float> out0 = beta == 0.0f
                                                    ? std::vector<float>(std::size_t(cols), nan)
                                                    : values_of(Shape{1, cols}, 8);
                const DeviceVector<float> dx("x", x);
                const DeviceVector<float> out("out", out0);
                const DeviceVector<std::uint8_t> workspace(
                    "column_sums workspace", kernels::column_sums_workspace_bytes(rows, cols));
                REQUIRE(kernels::column_sums(dx.data(), rows, cols, out.data(), beta,
                                             workspace.data(), no_stream) == cudaSuccess);
                std::vector<float> want = out0;
                cpu::column_sums(x.data(), rows, cols, want.data(), beta, test::cpu_threads);
                CHECK(test::bitwise_equal(out.download(), want));
            }
        }
    }
}

TEST_CASE("emulated bias_activation and its backward equal the CPU, in place too", "[emulation]") {
    for (const Shape s : shapes) {
        const std::vector<float> x = values_of(s, 31, -3.0f, 3.0f);
        const std::vector<float> bias = values_of(Shape{1, s.cols}, 32);
        const std::vector<float> dy = values_of(s, 33);
        const std::vector<float> dx_old = values_of(s, 34);
        const std::vector<global_id> ids = test::global_row_ids(s.rows);
        const DeviceVector<global_id> dids("row_ids", ids);
        const DeviceVector<float> dbias("bias", bias);
        for (const Activation a : {Activation::none, Activation::relu, Activation::elu,
                                   Activation::leaky_relu, Activation::gelu}) {
            for (const float rate : {0.0f, 0.5f}) {
                for (const bool with_bias : {false, true}) {
                    INFO(s.rows << " x " << s.cols << ", act " << static_cast<int>(a) << ", rate "
                                << rate << ", bias " << with_bias);
                    const ActivationSpec spec{a, 0.15f};
                    const DropoutKey key{.seed = 3, .epoch = 4, .layer = 5, .rate = rate};
                    const kernels::DropoutMask mask = test::dropout_mask(key);
                    const bool exact = a != Activation::elu && a != Activation::gelu;
                    const auto agree = [exact](const std::vector<float>& got,
                                               const std::vector<float>& want) {
                        return exact ? test::bitwise_equal(got, want) : close(got, want) < 1e-5;
                    };
                    // Without dropout the row ids may be left out.
                    const global_id* ids_host = rate > 0.0f ? ids.data() : nullptr;
                    const global_id* ids_dev = rate > 0.0f ? dids.data() : nullptr;
                    const float* bias_host = with_bias ? bias.data() : nullptr;
                    const float* bias_dev = with_bias ? dbias.data() : nullptr;

                    std::vector<float> want(s.size());
                    cpu::bias_activation(x.data(), bias_host, s.rows, s.cols, spec, key, ids_host,
                                         want.data(), test::cpu_threads);
                    const DeviceVector<float> dx_in("x", x);
                    const DeviceVector<float> y("y", s.size());
                    REQUIRE(kernels::bias_activation(dx_in.data(), bias_dev, s.rows, s.cols,
                                                     static_cast<int>(a), spec.negative_slope, mask,
                                                     ids_dev, y.data(), no_stream) == cudaSuccess);
                    CHECK(agree(y.download(), want));
                    const DeviceVector<float> in_place("x", x);
                    REQUIRE(kernels::bias_activation(in_place.data(), bias_dev, s.rows, s.cols,
                                                     static_cast<int>(a), spec.negative_slope, mask,
                                                     ids_dev, in_place.data(),
                                                     no_stream) == cudaSuccess);
                    CHECK(agree(in_place.download(), want));

                    // Backward from the CPU's forward output (x for gelu), the same on both.
                    const std::vector<float>& saved = a == Activation::gelu ? x : want;
                    const float* saved_host = a == Activation::none ? nullptr : saved.data();
                    const DeviceVector<float> dsaved("saved", saved);
                    const float* saved_dev = a == Activation::none ? nullptr : dsaved.data();
                    const DeviceVector<float> ddy("dy", dy);
                    for (const float beta : {0.0f, 1.0f}) {
                        INFO("beta " << beta);
                        const std::vector<float> dx0 =
                            beta == 0.0f ? std::vector<float>(s.size(), nan) : dx_old;
                        std::vector<float> want_dx = dx0;
                        cpu::bias_activation_backward(saved_host, bias_host, dy.data(), s.rows,
                                                      s.cols, spec, key, ids_host, want_dx.data(),
                                                      beta, test::cpu_threads);
                        const DeviceVector<float> ddx("dx", dx0);
                        REQUIRE(kernels::bias_activation_backward(
                                    saved_dev, bias_dev, ddy.data(), s.rows, s.cols,
                                    static_cast<int>(a), spec.negative_slope, mask, ids_dev,
                                    ddx.data(), beta, no_stream) == cudaSuccess);
                        CHECK(agree(ddx.download(), want_dx));
                    }
                    // dx over dy (beta 0).
                    std::vector<float> want_over = dy;
                    cpu::bias_activation_backward(saved_host, bias_host, want_over.data(), s.rows,
                                                  s.cols, spec, key, ids_host, want_over.data(),
                                                  0.0f, test::cpu_threads);
                    const DeviceVector<float> over("dy", dy);
                    REQUIRE(kernels::bias_activation_backward(
                                saved_dev, bias_dev, over.data(), s.rows, s.cols,
                                static_cast<int>(a), spec.negative_slope, mask, ids_dev,
                                over.data(), 0.0f, no_stream) == cudaSuccess);
                    CHECK(agree(over.download(), want_over));
                }
            }
        }
    }
}

}  // namespace strata
