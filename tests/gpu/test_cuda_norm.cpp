// CUDA backend against the CPU backend for the ops of the newer models: the elu, leaky_relu and
// gelu paths of bias_activation and its backward (with and without dropout and bias, beta 0 and
// 1), axpby_scalar, dot, layer_norm and its backward, centered_column_sums, batch_norm and its
// backward, on awkward shapes (0 rows, 1 row, widths that are not multiples of 32, more than one
// row chunk). Bit for bit where the operations are the same (leaky_relu, axpby_scalar, the
// batch_norm pair); elsewhere (expf/erff, sums in another order) to 1e-5 relative, 1e-6 absolute.
#include <cstdint>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/buffer.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/gpu/gpu_test_util.hpp"

namespace strata {
namespace {

struct Shape {
    index_t rows;
    index_t cols;
};
const Shape shapes[] = {{0, 37}, {1, 37}, {1, 1}, {301, 45}, {700, 33}, {70, 300}};

constexpr double tolerance = 1e-5;

std::vector<global_id> row_ids_for(index_t rows) {
    std::vector<global_id> ids(static_cast<std::size_t>(rows));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<global_id>(i) * 7919 + (global_id{1} << 40);
    }
    return ids;
}

/// floor 1e-1: an absolute error of 1e-6 where the values are near 0.
double close(const std::vector<float>& gpu, const std::vector<float>& cpu) {
    return test::max_relative_difference(gpu, cpu, 1e-1);
}

}  // namespace

TEST_CASE("CUDA elu, leaky_relu and gelu bias_activation and backward equal the CPU", "[gpu]") {
    test::Backends b;
    for (const Shape s : shapes) {
        const HostMatrix x = test::random_matrix(s.rows, s.cols, 31, -3.0f, 3.0f);
        const HostMatrix bias = test::random_matrix(1, s.cols, 32);
        const HostMatrix dy = test::random_matrix(s.rows, s.cols, 33);
        const HostMatrix dx_old = test::random_matrix(s.rows, s.cols, 34);
        const std::vector<global_id> ids = row_ids_for(s.rows);
        for (const Activation a : {Activation::elu, Activation::leaky_relu, Activation::gelu}) {
            for (const float rate : {0.0f, 0.5f}) {
                for (const bool with_bias : {false, true}) {
                    for (const float beta : {0.0f, 1.0f}) {
                        INFO(s.rows << " x " << s.cols << ", act " << static_cast<int>(a)
                                    << ", rate " << rate << ", bias " << with_bias << ", beta "
                                    << beta);
                        const ActivationSpec spec{a, 0.15f};
                        const DropoutKey key{.seed = 3, .epoch = 4, .layer = 5, .rate = rate};
                        std::vector<std::vector<float>> ys;
                        std::vector<std::vector<float>> dxs;
                        for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
                            const Buffer<global_id> row_ids(*be, std::span<const global_id>(ids));
                            const Buffer<float> dbias(*be, std::span<const float>(bias.values));
                            const std::span<const float> bias_span =
                                with_bias ? dbias.span() : std::span<const float>();
                            const DenseMatrix dx_in = DenseMatrix::upload(*be, x);
                            DenseMatrix y(*be, s.rows, s.cols);
                            be->bias_activation(dx_in.view(), bias_span, spec, key, row_ids.span(),
                                                y.view());
                            ys.push_back(y.download().values);
                            // Backward from the CPU's forward output, the same on both backends.
                            const DenseMatrix saved = a == Activation::gelu
                                                          ? DenseMatrix::upload(*be, x)
                                                          : DenseMatrix::upload(*be, [&] {
                                                                HostMatrix m(s.rows, s.cols);
                                                                m.values = ys[0];
                                                                return m;
                                                            }());
                            const DenseMatrix ddy = DenseMatrix::upload(*be, dy);
                            DenseMatrix ddx = DenseMatrix::upload(*be, dx_old);
                            be->bias_activation_backward(saved.view(), bias_span, ddy.view(), spec,
                                                         key, row_ids.span(), ddx.view(), beta);
                            dxs.push_back(ddx.download().values);
                        }
                        if (a == Activation::leaky_relu) {
                            CHECK(test::bitwise_equal(ys[1], ys[0]));
                            CHECK(test::bitwise_equal(dxs[1], dxs[0]));
                        } else {
                            CHECK(close(ys[1], ys[0]) < tolerance);
                            CHECK(close(dxs[1], dxs[0]) < tolerance);
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("CUDA axpby_scalar equals the CPU bit for bit and dot to rounding", "[gpu]") {
    test::Backends b;
    for (const Shape s : shapes) {
        INFO(s.rows << " x " << s.cols);
        const HostMatrix x = test::random_matrix(s.rows, s.cols, 41);
        const HostMatrix y0 = test::random_matrix(s.rows, s.cols, 42);
        const std::vector<float> scalar{0.37f};
        std::vector<std::vector<float>> ys;
        std::vector<std::vector<float>> dots;
        for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
            const Buffer<float> ds(*be, std::span<const float>(scalar));
            const DenseMatrix dx = DenseMatrix::upload(*be, x);
            DenseMatrix y = DenseMatrix::upload(*be, y0);
            be->axpby_scalar(1.0f, ds.span(), dx.view(), 0.5f, y.view());
            DenseMatrix z = DenseMatrix::upload(*be, y0);  // beta 0, in place
            be->axpby_scalar(2.0f, ds.span(), z.view(), 0.0f, z.view());
            std::vector<float> v = y.download().values;
            const std::vector<float> w = z.download().values;
            v.insert(v.end(), w.begin(), w.end());
            ys.push_back(v);
            const std::vector<float> start{1.5f};
            Buffer<float> out(*be, std::span<const float>(start));
            be->dot(dx.view(), y.view(), out.span(), 1.0f);
            dots.push_back(out.download());
        }
        CHECK(test::bitwise_equal(ys[1], ys[0]));
        CHECK(close(dots[1], dots[0]) < tolerance);
    }
}

TEST_CASE("CUDA layer_norm and its backward equal the CPU to rounding", "[gpu]") {
    test::Backends b;
    for (const Shape s : shapes) {
        const HostMatrix x = test::random_matrix(s.rows, s.cols, 51, -2.0f, 4.0f);
        const HostMatrix gamma = test::random_matrix(1, s.cols, 52, 0.5f, 1.5f);
        const HostMatrix beta_p = test::random_matrix(1, s.cols, 53);
        const HostMatrix dy = test::random_matrix(s.rows, s.cols, 54);
        const HostMatrix dx_old = test::random_matrix(s.rows, s.cols, 55);
        for (const float beta : {0.0f, 1.0f}) {
            INFO(s.rows << " x " << s.cols << ", beta " << beta);
            std::vector<std::vector<float>> results;
            for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
                const Buffer<float> g(*be, std::span<const float>(gamma.values));
                const Buffer<float> bp(*be, std::span<const float>(beta_p.values));
                const DenseMatrix dx_in = DenseMatrix::upload(*be, x);
                DenseMatrix y(*be, s.rows, s.cols);
                be->layer_norm(dx_in.view(), g.span(), bp.span(), 1e-5f, y.view());
                const DenseMatrix ddy = DenseMatrix::upload(*be, dy);
                DenseMatrix ddx = DenseMatrix::upload(*be, dx_old);
                Buffer<float> dgamma(*be, std::span<const float>(gamma.values));  // += onto γ
                Buffer<float> dbeta(*be, std::span<const float>(beta_p.values));
                be->layer_norm_backward(dx_in.view(), ddy.view(), g.span(), 1e-5f, ddx.view(), beta,
                                        dgamma.span(), dbeta.span());
                std::vector<float> r = y.download().values;
                for (const std::vector<float>& part :
                     {ddx.download().values, dgamma.download(), dbeta.download()}) {
                    r.insert(r.end(), part.begin(), part.end());
                }
                if (beta == 0.0f) {  // dx over dy
                    DenseMatrix dz = DenseMatrix::upload(*be, dy);
                    be->layer_norm_backward(dx_in.view(), dz.view(), g.span(), 1e-5f, dz.view(),
                                            0.0f, {}, {});
                    const std::vector<float> z = dz.download().values;
                    r.insert(r.end(), z.begin(), z.end());
                }
                results.push_back(r);
            }
            CHECK(close(results[1], results[0]) < tolerance);
        }
    }
}

TEST_CASE("CUDA batch norm kernels equal the CPU", "[gpu]") {
    test::Backends b;
    for (const Shape s : shapes) {
        INFO(s.rows << " x " << s.cols);
        const HostMatrix x = test::random_matrix(s.rows, s.cols, 61, 9.0f, 11.0f);
        const HostMatrix dy = test::random_matrix(s.rows, s.cols, 62);
        const HostMatrix mean = test::random_matrix(1, s.cols, 63, 9.5f, 10.5f);
        const HostMatrix var = test::random_matrix(1, s.cols, 64, 0.1f, 0.5f);
        const HostMatrix gamma = test::random_matrix(1, s.cols, 65, 0.5f, 1.5f);
        const HostMatrix beta_p = test::random_matrix(1, s.cols, 66);
        const HostMatrix sums = test::random_matrix(1, s.cols, 67);
        std::vector<std::vector<float>> exact;
        std::vector<std::vector<float>> summed;
        for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
            const auto up = [&](const HostMatrix& m) {
                return Buffer<float>(*be, std::span<const float>(m.values));
            };
            const Buffer<float> dm = up(mean);
            const Buffer<float> dv = up(var);
            const Buffer<float> dg = up(gamma);
            const Buffer<float> db = up(beta_p);
            const Buffer<float> ds = up(sums);
            const DenseMatrix dx_in = DenseMatrix::upload(*be, x);
            const DenseMatrix ddy = DenseMatrix::upload(*be, dy);
            DenseMatrix y(*be, s.rows, s.cols);
            be->batch_norm(dx_in.view(), dm.span(), dv.span(), 1e-5f, dg.span(), db.span(),
                           y.view());
            DenseMatrix dx = DenseMatrix::upload(*be, dy);  // over dy, beta 0
            be->batch_norm_backward(dx_in.view(), dx.view(), dm.span(), dv.span(), 1e-5f, dg.span(),
                                    ds.span(), ds.span(), 1234.0, dx.view(), 0.0f);
            DenseMatrix acc = DenseMatrix::upload(*be, dy);  // beta 1
            be->batch_norm_backward(dx_in.view(), ddy.view(), dm.span(), dv.span(), 1e-5f,
                                    dg.span(), ds.span(), ds.span(), 1234.0, acc.view(), 1.0f);
            std::vector<float> e = y.download().values;
            for (const std::vector<float>& part : {dx.download().values, acc.download().values}) {
                e.insert(e.end(), part.begin(), part.end());
            }
            exact.push_back(e);
            Buffer<float> sq = up(sums);
            be->centered_column_sums(dx_in.view(), dm.span(), {}, 0.0f, {}, sq.span(), 0.0f);
            Buffer<float> sw = up(sums);  // beta 1, with var and w
            be->centered_column_sums(dx_in.view(), dm.span(), dv.span(), 1e-5f, ddy.view(),
                                     sw.span(), 1.0f);
            std::vector<float> r = sq.download();
            const std::vector<float> w = sw.download();
            r.insert(r.end(), w.begin(), w.end());
            summed.push_back(r);
        }
        CHECK(test::bitwise_equal(exact[1], exact[0]));
        CHECK(close(summed[1], summed[0]) < tolerance);
    }
}

}  // namespace strata
