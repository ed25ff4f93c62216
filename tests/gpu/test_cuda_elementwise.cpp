// CUDA backend against the CPU backend, exactly: fill, axpby (beta 0 over NaN, in place),
// column_sums (several row chunks, beta 0 over NaN), and the fused bias_activation and its
// backward (relu on and off, bias empty or not, dropout rate 0 and 0.5, beta 0 over NaN and 1, in
// place) on awkward shapes (0 rows, 1 row, widths that are not multiples of 32): all must agree bit
// for bit, the dropout masks too, because both use src/device/counter_rng.hpp.
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

/// Large, scattered global row ids (as a partition's rows have): i · 7919 + 2^40.
std::vector<global_id> global_row_ids(index_t rows) {
    std::vector<global_id> ids(static_cast<std::size_t>(rows));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<global_id>(i) * 7919 + (global_id{1} << 40);
    }
    return ids;
}

struct Shape {
    index_t rows;
    index_t cols;
};
const Shape shapes[] = {{0, 37}, {1, 37}, {1, 1}, {301, 45}, {257, 1}, {70, 33}};

}  // namespace

TEST_CASE("CUDA fill equals the CPU exactly", "[gpu]") {
    test::Backends b;
    const HostMatrix x = test::random_matrix(301, 37, 1);
    const HostMatrix y0 = test::random_matrix(301, 37, 2);
    const auto r = on_both(b, x, y0, [](Backend& be, const DenseMatrix&, DenseMatrix& y) {
        be.fill(y.view(), -2.5f);
    });
    CHECK(test::bitwise_equal(r[1], r[0]));
    CHECK(r[1][300] == -2.5f);
}

TEST_CASE("CUDA axpby equals the CPU exactly, in place too", "[gpu]") {
    test::Backends b;
    for (const Shape s : shapes) {
        for (const float alpha : {1.0f, -1.5f}) {
            for (const float beta : {0.0f, 1.0f, 0.3f}) {
                INFO(s.rows << " x " << s.cols << ", alpha " << alpha << ", beta " << beta);
                const HostMatrix x = test::random_matrix(s.rows, s.cols, 3);
                const HostMatrix y0 = beta == 0.0f ? HostMatrix(s.rows, s.cols, nan)  // never read
                                                   : test::random_matrix(s.rows, s.cols, 4);
                const auto r = on_both(
                    b, x, y0, [alpha, beta](Backend& be, const DenseMatrix& dx, DenseMatrix& y) {
                        be.axpby(alpha, dx.view(), beta, y.view());
                    });
                CHECK(test::bitwise_equal(r[1], r[0]));
                const auto in_place = on_both(
                    b, x, x, [alpha, beta](Backend& be, const DenseMatrix&, DenseMatrix& y) {
                        be.axpby(alpha, y.view(), beta, y.view());
                    });
                CHECK(test::bitwise_equal(in_place[1], in_place[0]));
            }
        }
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

TEST_CASE("CUDA bias_activation equals the CPU bit for bit, in place too", "[gpu]") {
    test::Backends b;
    for (const Shape s : shapes) {
        const HostMatrix x = test::random_matrix(s.rows, s.cols, 11);
        const HostMatrix bias = test::random_matrix(1, s.cols, 12);
        const std::vector<global_id> ids = global_row_ids(s.rows);
        for (const Activation act : {Activation::none, Activation::relu}) {
            for (const bool with_bias : {false, true}) {
                for (const float rate : {0.0f, 0.5f}) {
                    INFO(s.rows << " x " << s.cols << ", relu " << (act == Activation::relu)
                                << ", bias " << with_bias << ", rate " << rate);
                    const DropoutKey key{.seed = 42, .epoch = 3, .layer = 1, .rate = rate};
                    std::vector<std::vector<float>> out;
                    std::vector<std::vector<float>> in_place;
                    for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
                        const Buffer<global_id> row_ids(*be, std::span<const global_id>(ids));
                        const Buffer<float> dbias(*be, std::span<const float>(bias.values));
                        const std::span<const float> bias_span =
                            with_bias ? dbias.span() : std::span<const float>();
                        // Without dropout the row ids may be left out.
                        const std::span<const global_id> id_span =
                            rate > 0.0f ? row_ids.span() : std::span<const global_id>();
                        const DenseMatrix dx = DenseMatrix::upload(*be, x);
                        DenseMatrix dy = DenseMatrix::upload(*be, HostMatrix(s.rows, s.cols, nan));
                        be->bias_activation(dx.view(), bias_span, act, key, id_span, dy.view());
                        out.push_back(dy.download().values);
                        DenseMatrix dz = DenseMatrix::upload(*be, x);
                        be->bias_activation(dz.view(), bias_span, act, key, id_span, dz.view());
                        in_place.push_back(dz.download().values);
                    }
                    CHECK(test::bitwise_equal(out[1], out[0]));
                    CHECK(test::bitwise_equal(in_place[1], out[0]));
                }
            }
        }
    }
}

TEST_CASE("CUDA bias_activation_backward equals the CPU bit for bit, in place too", "[gpu]") {
    test::Backends b;
    for (const Shape s : shapes) {
        const HostMatrix x = test::random_matrix(s.rows, s.cols, 21);
        const HostMatrix dy = test::random_matrix(s.rows, s.cols, 22);
        const HostMatrix dx_old = test::random_matrix(s.rows, s.cols, 23);
        const std::vector<global_id> ids = global_row_ids(s.rows);
        for (const Activation act : {Activation::none, Activation::relu}) {
            for (const float rate : {0.0f, 0.5f}) {
                const DropoutKey key{.seed = 7, .epoch = 1, .layer = 2, .rate = rate};
                // y: the CPU's forward output (zeros where relu or dropout cut), the same on both.
                HostMatrix y;
                {
                    const Buffer<global_id> row_ids(*b.cpu, std::span<const global_id>(ids));
                    const DenseMatrix dx = DenseMatrix::upload(*b.cpu, x);
                    DenseMatrix dout(*b.cpu, s.rows, s.cols);
                    b.cpu->bias_activation(dx.view(), {}, act, key, row_ids.span(), dout.view());
                    y = dout.download();
                }
                for (const float beta : {0.0f, 1.0f}) {
                    INFO(s.rows << " x " << s.cols << ", relu " << (act == Activation::relu)
                                << ", rate " << rate << ", beta " << beta);
                    const HostMatrix dx0 = beta == 0.0f ? HostMatrix(s.rows, s.cols, nan) : dx_old;
                    std::vector<std::vector<float>> out;
                    std::vector<std::vector<float>> in_place;
                    for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
                        const Buffer<global_id> row_ids(*be, std::span<const global_id>(ids));
                        const std::span<const global_id> id_span =
                            rate > 0.0f ? row_ids.span() : std::span<const global_id>();
                        const DenseMatrix dyv = DenseMatrix::upload(*be, y);
                        // Without relu y is not read: pass none.
                        const ConstMatrixView y_view =
                            act == Activation::relu ? dyv.view() : ConstMatrixView{};
                        const DenseMatrix ddy = DenseMatrix::upload(*be, dy);
                        DenseMatrix ddx = DenseMatrix::upload(*be, dx0);
                        be->bias_activation_backward(y_view, {}, ddy.view(), act, key, id_span,
                                                     ddx.view(), beta);
                        out.push_back(ddx.download().values);
                        if (beta == 0.0f) {  // dx aliasing dy (beta 1 would read dy as dx)
                            DenseMatrix dz = DenseMatrix::upload(*be, dy);
                            be->bias_activation_backward(y_view, {}, dz.view(), act, key, id_span,
                                                         dz.view(), 0.0f);
                            in_place.push_back(dz.download().values);
                        }
                    }
                    CHECK(test::bitwise_equal(out[1], out[0]));
                    if (beta == 0.0f) {
                        CHECK(test::bitwise_equal(in_place[1], out[0]));
                    }
                }
            }
        }
    }
}

TEST_CASE("CUDA dropout masks are bit-identical to the CPU at any rate", "[gpu]") {
    test::Backends b;
    const index_t rows = 300;
    const index_t cols = 45;
    const HostMatrix x = test::random_matrix(rows, cols, 5, 0.5f, 2.0f);  // no zeros in x
    const std::vector<global_id> ids = global_row_ids(rows);
    for (const float rate : {0.1f, 0.5f, 0.9f}) {
        INFO("rate " << rate);
        const DropoutKey key{.seed = 42, .epoch = 3, .layer = 1, .rate = rate};
        std::vector<std::vector<float>> out;
        for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
            const Buffer<global_id> row_ids(*be, std::span<const global_id>(ids));
            const DenseMatrix dx = DenseMatrix::upload(*be, x);
            DenseMatrix dy(*be, rows, cols);
            be->bias_activation(dx.view(), {}, Activation::none, key, row_ids.span(), dy.view());
            out.push_back(dy.download().values);
        }
        CHECK(test::bitwise_equal(out[1], out[0]));
        std::size_t dropped = 0;
        for (const float v : out[1]) {
            dropped += v == 0.0f ? 1 : 0;
        }
        const double fraction = static_cast<double>(dropped) / static_cast<double>(out[1].size());
        CHECK(fraction == Approx(rate).margin(0.03));
    }
}

TEST_CASE("CUDA bias_activation rejects a rate of 1 and missing row ids like the CPU", "[gpu]") {
    test::Backends b;
    DenseMatrix x(*b.gpu, 2, 2);
    const std::vector<global_id> ids = {0, 1};
    const Buffer<global_id> row_ids(*b.gpu, std::span<const global_id>(ids));
    const DropoutKey one{.seed = 1, .epoch = 0, .layer = 0, .rate = 1.0f};
    REQUIRE_THROWS_WITH(
        b.gpu->bias_activation(x.view(), {}, Activation::relu, one, row_ids.span(), x.view()),
        Contains("not in [0, 1)"));
    REQUIRE_THROWS_WITH(b.gpu->bias_activation_backward(x.view(), {}, x.view(), Activation::none,
                                                        one, row_ids.span(), x.view(), 0.0f),
                        Contains("not in [0, 1)"));
    const DropoutKey half{.seed = 1, .epoch = 0, .layer = 0, .rate = 0.5f};
    REQUIRE_THROWS_WITH(b.gpu->bias_activation(x.view(), {}, Activation::none, half, {}, x.view()),
                        Contains("row ids"));
}

}  // namespace strata
