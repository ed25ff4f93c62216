// Tests of the CPU elementwise operations: fill, bias, column sums, ReLU forward and backward.
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"

namespace strata {

TEST_CASE("fill sets every entry", "[device]") {
    CpuBackend backend(2);
    DenseMatrix y(backend, 2, 3);

    backend.fill(y.view(), 7.0f);

    CHECK(y.download().values == std::vector<float>(6, 7.0f));
}

TEST_CASE("add_bias adds the bias to every row", "[device]") {
    CpuBackend backend(2);
    DenseMatrix y = DenseMatrix::upload(backend, test::matrix(2, 3, {1, 2, 3, 4, 5, 6}));
    const std::vector<float> bias = {10, 20, 30};

    backend.add_bias(y.view(), bias);

    CHECK(y.download().values == std::vector<float>{11, 22, 33, 14, 25, 36});
}

TEST_CASE("add_bias rejects a bias of the wrong length", "[device]") {
    CpuBackend backend(1);
    DenseMatrix y(backend, 2, 3);
    const std::vector<float> bias = {1, 2};

    REQUIRE_THROWS_WITH(backend.add_bias(y.view(), bias),
                        Catch::Contains("bias has 2 entries but y has 3 columns"));
}

TEST_CASE("column_sums sums each column, with beta", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix x = DenseMatrix::upload(backend, test::matrix(3, 2, {1, 2, 3, 4, 5, 6}));

    SECTION("beta 0 overwrites, even NaN") {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> out = {nan, nan};
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

TEST_CASE("relu clamps negatives to zero, also in place", "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::matrix(2, 3, {-1, 0, 2, -0.5f, 3, -2});
    const std::vector<float> expected = {0, 0, 2, 0, 3, 0};

    SECTION("out of place") {
        const DenseMatrix dx = DenseMatrix::upload(backend, x);
        DenseMatrix y(backend, 2, 3);
        backend.relu(dx.view(), y.view());
        CHECK(y.download().values == expected);
        CHECK(dx.download().values == x.values);
    }
    SECTION("in place") {
        DenseMatrix y = DenseMatrix::upload(backend, x);
        backend.relu(y.view(), y.view());
        CHECK(y.download().values == expected);
    }
}

TEST_CASE("relu_backward passes the gradient where the output is positive", "[device]") {
    CpuBackend backend(2);
    const DenseMatrix y = DenseMatrix::upload(backend, test::matrix(2, 3, {0, 0, 2, 0, 3, 0}));
    DenseMatrix dy = DenseMatrix::upload(backend, test::matrix(2, 3, {1, 2, 3, 4, 5, 6}));

    SECTION("out of place") {
        DenseMatrix dx(backend, 2, 3);
        backend.relu_backward(y.view(), dy.view(), dx.view());
        CHECK(dx.download().values == std::vector<float>{0, 0, 3, 0, 5, 0});
    }
    SECTION("in place over dy") {
        backend.relu_backward(y.view(), dy.view(), dy.view());
        CHECK(dy.download().values == std::vector<float>{0, 0, 3, 0, 5, 0});
    }
}

TEST_CASE("relu rejects mismatched shapes", "[device]") {
    CpuBackend backend(1);
    DenseMatrix x(backend, 2, 3);
    DenseMatrix y(backend, 3, 2);

    REQUIRE_THROWS_WITH(backend.relu(x.view(), y.view()),
                        Catch::Contains("relu: x is 2 x 3 but y is 3 x 2"));
}

}  // namespace strata
