// Tests of the elu, leaky_relu and gelu paths of the fused CPU bias_activation and its backward
// against plain loops (double-precision formulas), with and without dropout, and the slope check.
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/counter_rng.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"
#include "tests/support/dropout_reference.hpp"

namespace strata {
namespace {

constexpr index_t act_rows = 23;
constexpr index_t act_cols = 7;

/// The reference activation in double.
double act_ref(Activation a, double slope, double v) {
    switch (a) {
        case Activation::relu:
            return v > 0 ? v : 0;
        case Activation::elu:
            return v > 0 ? v : std::exp(v) - 1;
        case Activation::leaky_relu:
            return v > 0 ? v : slope * v;
        case Activation::gelu:
            return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
        case Activation::none:
            break;
    }
    return v;
}

/// Its derivative in double.
double act_grad_ref(Activation a, double slope, double v) {
    switch (a) {
        case Activation::relu:
            return v > 0 ? 1 : 0;
        case Activation::elu:
            return v > 0 ? 1 : std::exp(v);
        case Activation::leaky_relu:
            return v > 0 ? 1 : slope;
        case Activation::gelu:
            return 0.5 * (1 + std::erf(v / std::sqrt(2.0))) +
                   v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
        case Activation::none:
            break;
    }
    return 1;
}

}  // namespace

TEST_CASE("bias_activation with elu, leaky_relu and gelu matches a plain loop, with dropout",
          "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::random_matrix(act_rows, act_cols, 3, -3.0f, 3.0f);
    const HostMatrix bias_row = test::random_matrix(1, act_cols, 4);
    const HostMatrix dy = test::random_matrix(act_rows, act_cols, 5);
    std::vector<global_id> ids(act_rows);
    std::iota(ids.begin(), ids.end(), 100);
    const DenseMatrix dev_x = DenseMatrix::upload(backend, x);
    const DenseMatrix dev_dy = DenseMatrix::upload(backend, dy);
    for (const Activation a : {Activation::elu, Activation::leaky_relu, Activation::gelu}) {
        for (const float rate : {0.0f, 0.4f}) {
            const ActivationSpec spec{a, 0.15f};
            const DropoutKey key{.seed = 9, .epoch = 2, .layer = 1, .rate = rate};
            INFO("activation " << static_cast<int>(a) << ", rate " << rate);
            DenseMatrix y(backend, act_rows, act_cols);
            backend.bias_activation(dev_x.view(), bias_row.values, spec, key, ids, y.view());
            const DenseMatrix& saved = a == Activation::gelu ? dev_x : y;
            DenseMatrix dx(backend, act_rows, act_cols);
            backend.bias_activation_backward(saved.view(), bias_row.values, dev_dy.view(), spec,
                                             key, ids, dx.view(), 0.0f);
            const std::vector<float> got_y = y.download().values;
            const std::vector<float> got_dx = dx.download().values;
            double worst_y = 0.0;
            double worst_dx = 0.0;
            int dropped = 0;
            for (index_t i = 0; i < act_rows; ++i) {
                for (index_t j = 0; j < act_cols; ++j) {
                    const auto k = static_cast<std::size_t>(i * act_cols + j);
                    const double v = static_cast<double>(x.values[k]) + bias_row.values[j];
                    const bool keep = test::dropout_kept(key, ids[static_cast<std::size_t>(i)], j);
                    dropped += keep ? 0 : 1;
                    const double s = keep ? 1.0 / (1.0 - rate) : 0.0;
                    worst_y = std::max(worst_y, std::abs(got_y[k] - s * act_ref(a, 0.15, v)));
                    worst_dx =
                        std::max(worst_dx,
                                 std::abs(got_dx[k] - s * dy.values[k] * act_grad_ref(a, 0.15, v)));
                }
            }
            CHECK(worst_y < 1e-5);
            CHECK(worst_dx < 1e-5);
            CHECK((rate == 0.0f ? dropped == 0 : dropped > 0));
        }
    }
}

TEST_CASE("bias_activation_backward with beta 1 accumulates for every activation", "[device]") {
    CpuBackend backend(1);
    const HostMatrix x = test::random_matrix(4, 5, 6, -2.0f, 2.0f);
    const HostMatrix dy = test::random_matrix(4, 5, 7);
    const HostMatrix start = test::random_matrix(4, 5, 8);
    const DenseMatrix dev_x = DenseMatrix::upload(backend, x);
    const DenseMatrix dev_dy = DenseMatrix::upload(backend, dy);
    for (const Activation a : {Activation::elu, Activation::leaky_relu, Activation::gelu}) {
        DenseMatrix y(backend, 4, 5);
        backend.bias_activation(dev_x.view(), {}, a, {}, {}, y.view());
        const DenseMatrix& saved = a == Activation::gelu ? dev_x : y;
        DenseMatrix fresh(backend, 4, 5);
        backend.bias_activation_backward(saved.view(), {}, dev_dy.view(), a, {}, {}, fresh.view(),
                                         0.0f);
        DenseMatrix added = DenseMatrix::upload(backend, start);
        backend.bias_activation_backward(saved.view(), {}, dev_dy.view(), a, {}, {}, added.view(),
                                         1.0f);
        const std::vector<float> f = fresh.download().values;
        const std::vector<float> s = added.download().values;
        for (std::size_t k = 0; k < f.size(); ++k) {
            CHECK(s[k] == Approx(start.values[k] + f[k]).margin(1e-6));
        }
    }
}

TEST_CASE("bias_activation rejects a negative leaky_relu slope", "[device]") {
    CpuBackend backend(1);
    DenseMatrix x(backend, 2, 2);
    backend.fill(x.view(), 1.0f);
    REQUIRE_THROWS_WITH(
        backend.bias_activation(x.view(), {}, {Activation::leaky_relu, -0.1f}, {}, {}, x.view()),
        Catch::Contains("bias_activation: leaky_relu negative slope -0.1 must be "
                        ">= 0"));
    REQUIRE_THROWS_WITH(
        backend.bias_activation_backward(x.view(), {}, x.view(), {Activation::leaky_relu, -1.0f},
                                         {}, {}, x.view(), 0.0f),
        Catch::Contains("bias_activation_backward: leaky_relu negative slope -1 must be >= 0"));
}

}  // namespace strata
