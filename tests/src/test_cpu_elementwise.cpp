// Tests of the CPU elementwise operations: fill, axpby, column sums, and the fused bias +
// activation forward and backward (without dropout; dropout is in test_cpu_dropout.cpp).
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

constexpr float qnan = std::numeric_limits<float>::quiet_NaN();

/// No dropout: rate 0 (row ids are then not needed).
constexpr DropoutKey no_dropout{};

}  // namespace

TEST_CASE("fill sets every entry", "[device]") {
    CpuBackend backend(2);
    DenseMatrix y(backend, 2, 3);

    backend.fill(y.view(), 7.0f);

    CHECK(y.download().values == std::vector<float>(6, 7.0f));
}

TEST_CASE("axpby with beta 0 overwrites y without reading it", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix x = DenseMatrix::upload(backend, test::matrix(2, 2, {1, -2, 3, 0.5f}));
    DenseMatrix y = DenseMatrix::upload(backend, test::matrix(2, 2, {qnan, qnan, qnan, qnan}));

    backend.axpby(3.0f, x.view(), 0.0f, y.view());

    CHECK(y.download().values == std::vector<float>{3, -6, 9, 1.5f});
}

TEST_CASE("axpby with alpha 1 and beta 1 adds x to y", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix x = DenseMatrix::upload(backend, test::matrix(2, 3, {1, 2, 3, 4, 5, 6}));
    DenseMatrix y = DenseMatrix::upload(backend, test::matrix(2, 3, {10, 20, 30, -1, -2, -3}));

    backend.axpby(1.0f, x.view(), 1.0f, y.view());

    CHECK(y.download().values == std::vector<float>{11, 22, 33, 3, 3, 3});
}

TEST_CASE("axpby with alpha 2 and beta 0.5 scales both terms", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix x = DenseMatrix::upload(backend, test::matrix(2, 2, {1, 2, 3, 4}));
    DenseMatrix y = DenseMatrix::upload(backend, test::matrix(2, 2, {4, 6, -8, 0}));

    backend.axpby(2.0f, x.view(), 0.5f, y.view());

    // 2·[1, 2, 3, 4] + 0.5·[4, 6, -8, 0]
    CHECK(y.download().values == std::vector<float>{4, 7, 2, 8});
}

TEST_CASE("axpby works in place with y aliasing x", "[device]") {
    CpuBackend backend(2);
    DenseMatrix y = DenseMatrix::upload(backend, test::matrix(1, 3, {1, -2, 4}));

    SECTION("beta 0") {
        backend.axpby(2.0f, y.view(), 0.0f, y.view());
        CHECK(y.download().values == std::vector<float>{2, -4, 8});
    }
    SECTION("beta 1: y = 3 y") {
        backend.axpby(2.0f, y.view(), 1.0f, y.view());
        CHECK(y.download().values == std::vector<float>{3, -6, 12});
    }
}

TEST_CASE("axpby rejects x and y of different shapes", "[device]") {
    CpuBackend backend(1);
    const DenseMatrix x(backend, 2, 3);
    DenseMatrix y(backend, 3, 2);

    REQUIRE_THROWS_WITH(backend.axpby(1.0f, x.view(), 0.0f, y.view()),
                        Catch::Contains("axpby: x is 2 x 3 but y is 3 x 2"));
}

TEST_CASE("column_sums sums each column, with beta", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix x = DenseMatrix::upload(backend, test::matrix(3, 2, {1, 2, 3, 4, 5, 6}));

    SECTION("beta 0 overwrites, even NaN") {
        std::vector<float> out = {qnan, qnan};
        backend.column_sums(x.view(), out, 0.0f);
        CHECK(out == std::vector<float>{9, 12});
    }
    SECTION("beta 0.5 accumulates") {
        std::vector<float> out = {2, 4};
        backend.column_sums(x.view(), out, 0.5f);
        CHECK(out == std::vector<float>{10, 14});
    }
    SECTION("no rows gives beta out") {
        const DenseMatrix empty(backend, 0, 2);
        std::vector<float> out = {2, 4};
        backend.column_sums(empty.view(), out, 1.0f);
        CHECK(out == std::vector<float>{2, 4});
    }
}

TEST_CASE("column_sums gives bitwise equal results with 1 and 2 threads", "[device]") {
    const HostMatrix x = test::random_matrix(5003, 40, 5);
    std::vector<std::vector<float>> results;

    for (int threads : {1, 2}) {
        CpuBackend backend(threads);
        const DenseMatrix dx = DenseMatrix::upload(backend, x);
        std::vector<float> out(40, 1.0f);
        backend.column_sums(dx.view(), out, 0.25f);
        results.push_back(out);
    }

    CHECK(test::bitwise_equal(results[0], results[1]));
    double sum0 = 0.25;
    for (index_t i = 0; i < x.rows; ++i) {
        sum0 += x.at(i, 0);
    }
    CHECK(results[0][0] == Approx(sum0).margin(1e-4));
}

TEST_CASE("bias_activation with a bias and no activation adds the bias to every row", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix x = DenseMatrix::upload(backend, test::matrix(2, 3, {1, 2, 3, 4, 5, 6}));
    DenseMatrix y =
        DenseMatrix::upload(backend, test::matrix(2, 3, {qnan, qnan, qnan, qnan, qnan, qnan}));
    const std::vector<float> bias = {10, 20, 30};

    backend.bias_activation(x.view(), bias, Activation::none, no_dropout, {}, y.view());

    CHECK(y.download().values == std::vector<float>{11, 22, 33, 14, 25, 36});
}

TEST_CASE("bias_activation with relu and no bias clamps negatives to zero", "[device]") {
    CpuBackend backend(2);
    const HostMatrix hx = test::matrix(2, 3, {-1, 0, 2, -0.5f, 3, -2});
    const DenseMatrix x = DenseMatrix::upload(backend, hx);
    DenseMatrix y(backend, 2, 3);

    backend.bias_activation(x.view(), {}, Activation::relu, no_dropout, {}, y.view());

    CHECK(y.download().values == std::vector<float>{0, 0, 2, 0, 3, 0});
    CHECK(x.download().values == hx.values);
}

TEST_CASE("bias_activation with a bias and relu adds first, then clamps", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix x = DenseMatrix::upload(backend, test::matrix(2, 3, {-1, 0, 2, -3, 1, -2}));
    DenseMatrix y(backend, 2, 3);
    const std::vector<float> bias = {2, -1, -2.5f};

    backend.bias_activation(x.view(), bias, Activation::relu, no_dropout, {}, y.view());

    // x + bias = [[1, -1, -0.5], [-1, 0, -4.5]]
    CHECK(y.download().values == std::vector<float>{1, 0, 0, 0, 0, 0});
}

TEST_CASE("bias_activation works in place with y aliasing x", "[device]") {
    CpuBackend backend(2);
    DenseMatrix y = DenseMatrix::upload(backend, test::matrix(2, 2, {-1, 2, 3, -4}));
    const std::vector<float> bias = {0.5f, -2.5f};

    backend.bias_activation(y.view(), bias, Activation::relu, no_dropout, {}, y.view());

    // y + bias = [[-0.5, -0.5], [3.5, -6.5]]
    CHECK(y.download().values == std::vector<float>{0, 0, 3.5f, 0});
}

TEST_CASE("bias_activation rejects a bias of the wrong length", "[device]") {
    CpuBackend backend(1);
    const DenseMatrix x(backend, 2, 3);
    DenseMatrix y(backend, 2, 3);
    const std::vector<float> bias = {1, 2};

    REQUIRE_THROWS_WITH(
        backend.bias_activation(x.view(), bias, Activation::none, no_dropout, {}, y.view()),
        Catch::Contains("bias_activation: bias has 2 entries but x has 3 columns"));
}

TEST_CASE("bias_activation_backward with relu passes the gradient where y is positive",
          "[device]") {
    CpuBackend backend(2);
    const DenseMatrix y = DenseMatrix::upload(backend, test::matrix(2, 3, {0, 0, 2, 0, 3, 0}));
    const DenseMatrix dy = DenseMatrix::upload(backend, test::matrix(2, 3, {1, 2, 3, 4, 5, 6}));
    DenseMatrix dx =
        DenseMatrix::upload(backend, test::matrix(2, 3, {qnan, qnan, qnan, qnan, qnan, qnan}));

    backend.bias_activation_backward(y.view(), {}, dy.view(), Activation::relu, no_dropout, {},
                                     dx.view(), 0.0f);

    CHECK(dx.download().values == std::vector<float>{0, 0, 3, 0, 5, 0});
}

TEST_CASE("bias_activation_backward without activation or dropout is the identity", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix dy = DenseMatrix::upload(backend, test::matrix(2, 2, {1, -2, 0, 4}));
    DenseMatrix dx = DenseMatrix::upload(backend, test::matrix(2, 2, {qnan, qnan, qnan, qnan}));

    // y is not read without relu: an empty view is enough.
    backend.bias_activation_backward({}, {}, dy.view(), Activation::none, no_dropout, {}, dx.view(),
                                     0.0f);

    CHECK(dx.download().values == std::vector<float>{1, -2, 0, 4});
}

TEST_CASE("bias_activation_backward with beta 1 accumulates into dx", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix y = DenseMatrix::upload(backend, test::matrix(2, 2, {1, 0, 0, 2}));
    const DenseMatrix dy = DenseMatrix::upload(backend, test::matrix(2, 2, {1, 2, 3, 4}));
    DenseMatrix dx = DenseMatrix::upload(backend, test::matrix(2, 2, {10, 20, 30, 40}));

    SECTION("relu") {
        backend.bias_activation_backward(y.view(), {}, dy.view(), Activation::relu, no_dropout, {},
                                         dx.view(), 1.0f);
        CHECK(dx.download().values == std::vector<float>{11, 20, 30, 44});
    }
    SECTION("no activation") {
        backend.bias_activation_backward(y.view(), {}, dy.view(), Activation::none, no_dropout, {},
                                         dx.view(), 1.0f);
        CHECK(dx.download().values == std::vector<float>{11, 22, 33, 44});
    }
}

TEST_CASE("bias_activation_backward works in place with dx aliasing dy", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix y = DenseMatrix::upload(backend, test::matrix(2, 3, {0, 0, 2, 0, 3, 0}));
    DenseMatrix dy = DenseMatrix::upload(backend, test::matrix(2, 3, {1, 2, 3, 4, 5, 6}));

    SECTION("beta 0") {
        backend.bias_activation_backward(y.view(), {}, dy.view(), Activation::relu, no_dropout, {},
                                         dy.view(), 0.0f);
        CHECK(dy.download().values == std::vector<float>{0, 0, 3, 0, 5, 0});
    }
    SECTION("beta 1: dx = g + dy") {
        backend.bias_activation_backward(y.view(), {}, dy.view(), Activation::relu, no_dropout, {},
                                         dy.view(), 1.0f);
        CHECK(dy.download().values == std::vector<float>{1, 2, 6, 4, 10, 6});
    }
}

}  // namespace strata
