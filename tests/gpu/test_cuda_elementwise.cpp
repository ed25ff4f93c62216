// CUDA backend against the CPU backend, exactly: fill, add_bias, relu (in place too),
// relu_backward, column_sums (several row chunks, beta 0 over NaN) and dropout masks, which must
// agree bit for bit because both use src/device/counter_rng.hpp.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/device/buffer.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/gpu/gpu_test_util.hpp"

namespace strata {
namespace {

using Catch::Matchers::Contains;

const float nan = std::numeric_limits<float>::quiet_NaN();

/// Runs `op(backend, x, y)` on both backends from the same x and y0; returns {cpu, gpu} y.
template <class Op>
std::vector<std::vector<float>> on_both(test::Backends& b, const HostMatrix& x,
                                        const HostMatrix& y0, Op op) {
    std::vector<std::vector<float>> result;
    for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
        const DenseMatrix dx = DenseMatrix::upload(*be, x);
        DenseMatrix dy = DenseMatrix::upload(*be, y0);
        op(*be, dx, dy);
        result.push_back(dy.download().values);
    }
    return result;
}

}  // namespace

TEST_CASE("CUDA fill, add_bias, relu and relu_backward equal the CPU exactly", "[gpu]") {
    test::Backends b;
    const HostMatrix x = test::random_matrix(301, 37, 1);
    const HostMatrix y0 = test::random_matrix(301, 37, 2);
    const HostMatrix bias = test::random_matrix(1, 37, 3);

    SECTION("fill") {
        const auto r = on_both(b, x, y0, [](Backend& be, const DenseMatrix&, DenseMatrix& y) {
            be.fill(y.view(), -2.5f);
        });
        CHECK(test::bitwise_equal(r[1], r[0]));
        CHECK(r[1][300] == -2.5f);
    }
    SECTION("add_bias") {
        const auto r = on_both(b, bias, y0, [](Backend& be, const DenseMatrix& bx, DenseMatrix& y) {
            be.add_bias(y.view(), std::span<const float>(bx.data(), 37));
        });
        CHECK(test::bitwise_equal(r[1], r[0]));
    }
    SECTION("relu, out of place and in place") {
        const auto r = on_both(b, x, y0, [](Backend& be, const DenseMatrix& dx, DenseMatrix& y) {
            be.relu(dx.view(), y.view());
        });
        CHECK(test::bitwise_equal(r[1], r[0]));
        const auto in_place = on_both(b, x, x, [](Backend& be, const DenseMatrix&, DenseMatrix& y) {
            be.relu(y.view(), y.view());
        });
        CHECK(test::bitwise_equal(in_place[1], r[0]));
    }
    SECTION("relu_backward") {
        const auto r = on_both(b, x, y0, [](Backend& be, const DenseMatrix& dx, DenseMatrix& dy) {
            DenseMatrix grad(be, dy.rows(), dy.cols());
            be.relu_backward(dx.view(), dy.view(), grad.view());
            be.copy(dy.data(), grad.data(), dy.view().size() * sizeof(float));
        });
        CHECK(test::bitwise_equal(r[1], r[0]));
    }
}

TEST_CASE("CUDA column_sums equals the CPU bit for bit", "[gpu]") {
    test::Backends b;
    for (const index_t rows : {0, 1, 255, 257, 20000}) {
        for (const index_t cols : {1, 37}) {
            for (const float beta : {0.0f, 0.5f}) {
                INFO("rows " << rows << ", cols " << cols << ", beta " << beta);
                const HostMatrix x = test::random_matrix(rows, cols, 7);
                HostMatrix out0 = test::random_matrix(1, cols, 8);
                if (beta == 0.0f) {
                    out0.values.assign(out0.values.size(), nan);
                }
                const auto r =
                    on_both(b, x, out0, [beta](Backend& be, const DenseMatrix& dx, DenseMatrix& o) {
                        be.column_sums(
                            dx.view(),
                            std::span<float>(o.data(), static_cast<std::size_t>(o.cols())), beta);
                    });
                CHECK(test::bitwise_equal(r[1], r[0]));
            }
        }
    }
}

TEST_CASE("CUDA dropout masks are bit-identical to the CPU", "[gpu]") {
    test::Backends b;
    const index_t rows = 300;
    const index_t cols = 45;
    const HostMatrix x = test::random_matrix(rows, cols, 5, 0.5f, 2.0f);  // no zeros in x
    std::vector<global_id> ids(static_cast<std::size_t>(rows));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<global_id>(i) * 7919 + (global_id{1} << 40);  // large global ids
    }
    for (const float rate : {0.0f, 0.1f, 0.5f, 0.9f}) {
        INFO("rate " << rate);
        const DropoutKey key{.seed = 42, .epoch = 3, .layer = 1, .rate = rate};
        std::vector<std::vector<float>> out;
        std::vector<std::vector<float>> in_place;
        for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
            const Buffer<global_id> row_ids(*be, std::span<const global_id>(ids));
            const DenseMatrix dx = DenseMatrix::upload(*be, x);
            DenseMatrix dy(*be, rows, cols);
            be->dropout(dx.view(), dy.view(), key, row_ids.span());
            out.push_back(dy.download().values);
            DenseMatrix dz = DenseMatrix::upload(*be, x);
            be->dropout(dz.view(), dz.view(), key, row_ids.span());
            in_place.push_back(dz.download().values);
        }
        CHECK(test::bitwise_equal(out[1], out[0]));
        CHECK(test::bitwise_equal(in_place[1], out[0]));
        std::size_t dropped = 0;
        for (const float v : out[1]) {
            dropped += v == 0.0f ? 1 : 0;
        }
        const double fraction = static_cast<double>(dropped) / static_cast<double>(out[1].size());
        CHECK(fraction == Approx(rate).margin(0.03));
    }
}

TEST_CASE("CUDA dropout rejects a rate of 1 like the CPU", "[gpu]") {
    test::Backends b;
    DenseMatrix x(*b.gpu, 2, 2);
    const std::vector<global_id> ids = {0, 1};
    const Buffer<global_id> row_ids(*b.gpu, std::span<const global_id>(ids));
    const DropoutKey key{.seed = 1, .epoch = 0, .layer = 0, .rate = 1.0f};
    REQUIRE_THROWS_WITH(b.gpu->dropout(x.view(), x.view(), key, row_ids.span()),
                        Contains("not in [0, 1)"));
}

}  // namespace strata
