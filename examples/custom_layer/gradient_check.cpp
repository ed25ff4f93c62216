// Finite differences of L(x, t) = Σ r ⊙ y(x, t), y = x ⊙ (1 + t), with random x, t, r on the CPU
// backend. L is bilinear in (x, t), so central differences are exact up to float rounding.
#include "gradient_check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "column_scale_op.hpp"
#include "src/device/buffer.hpp"

namespace example {
namespace {

using strata::Buffer;
using strata::ConstMatrixView;
using strata::GradMode;
using strata::index_t;
using strata::MatrixView;
using strata::RowRange;

constexpr index_t rows = 7;
constexpr index_t cols = 5;
constexpr float step = 1e-2f;

std::vector<float> random_values(std::size_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& e : v) {
        e = uniform(rng);
    }
    return v;
}

/// The op with its inputs, parameter and gradients in CPU-backend buffers.
struct Fixture {
    std::unique_ptr<strata::Backend> backend = strata::make_cpu_backend(1);
    std::mt19937 rng{7};
    std::vector<float> x = random_values(rows * cols, rng);
    std::vector<float> t = random_values(cols, rng);
    std::vector<float> r = random_values(rows * cols, rng);  // dL/dy
    Buffer<float> x_buf{*backend, std::span<const float>(x)};
    Buffer<float> t_buf{*backend, std::span<const float>(t)};
    Buffer<float> dt_buf{*backend, cols};
    Buffer<float> r_buf{*backend, std::span<const float>(r)};
    Buffer<float> y_buf{*backend, rows* cols};
    Buffer<float> dx_buf{*backend, rows* cols};
    ColumnScaleOp op{cols, 0.0f};
    strata::OpContext context{.backend = *backend, .graph = nullptr, .row_ids = {}};

    Fixture() {
        const std::array<strata::Parameter, 1> parameter{
            strata::Parameter{"shift", {t_buf.data(), 1, cols}, {dt_buf.data(), 1, cols}, 0.0f}};
        op.bind_parameters(parameter);
    }
    void forward(RowRange range) {
        const std::array<ConstMatrixView, 1> in{ConstMatrixView{x_buf.data(), rows, cols}};
        op.forward(context,
                   strata::ForwardArgs{
                       .x = in, .y = {y_buf.data(), rows, cols}, .rows = range, .workspace = {}});
    }
    /// L = Σ r ⊙ y after uploading the current host x and t.
    double loss() {
        backend->upload(x_buf.data(), x.data(), x.size() * sizeof(float));
        backend->upload(t_buf.data(), t.data(), t.size() * sizeof(float));
        forward({0, rows});
        const std::vector<float> y = y_buf.download();
        double sum = 0.0;
        for (std::size_t k = 0; k < y.size(); ++k) {
            sum += static_cast<double>(r[k]) * static_cast<double>(y[k]);
        }
        return sum;
    }
    /// Backward over `ranges` in turn, dt zeroed and dx set to `dx_start` first; {dx, dt}.
    std::array<std::vector<float>, 2> backward(GradMode mode, float dx_start,
                                               std::span<const RowRange> ranges) {
        const std::vector<float> dx0(static_cast<std::size_t>(rows * cols), dx_start);
        const std::vector<float> dt0(static_cast<std::size_t>(cols), 0.0f);
        backend->upload(dx_buf.data(), dx0.data(), dx0.size() * sizeof(float));
        backend->upload(dt_buf.data(), dt0.data(), dt0.size() * sizeof(float));
        const std::array<ConstMatrixView, 1> in{ConstMatrixView{x_buf.data(), rows, cols}};
        const std::array<MatrixView, 1> dx{MatrixView{dx_buf.data(), rows, cols}};
        const std::array<GradMode, 1> modes{mode};
        for (const RowRange range : ranges) {
            op.backward(context, strata::BackwardArgs{.x = in,
                                                      .y = {},
                                                      .dy = {r_buf.data(), rows, cols},
                                                      .dx = dx,
                                                      .modes = modes,
                                                      .rows = range,
                                                      .workspace = {}});
        }
        return {dx_buf.download(), dt_buf.download()};
    }
    /// Central differences of L with respect to every entry of `values` (x or t).
    std::vector<float> numeric(std::vector<float>& values) {
        std::vector<float> g(values.size());
        for (std::size_t k = 0; k < values.size(); ++k) {
            const float keep = values[k];
            values[k] = keep + step;
            const double plus = loss();
            values[k] = keep - step;
            const double minus = loss();
            values[k] = keep;
            g[k] = static_cast<float>((plus - minus) / (2.0 * static_cast<double>(step)));
        }
        (void)loss();  // restore the uploaded values
        return g;
    }
};

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
    double worst = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k) {
        const double scale = std::max(1.0, std::abs(static_cast<double>(b[k])));
        worst = std::max(worst, std::abs(static_cast<double>(a[k]) - b[k]) / scale);
    }
    return worst;
}

bool report(const char* what, double difference, double tolerance) {
    const bool ok = difference <= tolerance;
    std::printf("check: %-44s max difference %.2e (tolerance %.0e) %s\n", what, difference,
                tolerance, ok ? "ok" : "FAILED");
    return ok;
}

}  // namespace

bool check_column_scale() {
    Fixture f;
    const std::vector<float> dx_fd = f.numeric(f.x);
    const std::vector<float> dt_fd = f.numeric(f.t);
    const std::array<RowRange, 1> all{RowRange{0, rows}};
    const std::array<RowRange, 2> chunks{RowRange{0, 3}, RowRange{3, rows - 3}};
    constexpr double fd_tolerance = 1e-3;
    bool ok = true;

    const auto [dx, dt] = f.backward(GradMode::overwrite, 9.0f, all);
    ok &= report("dx (=) vs finite differences", max_difference(dx, dx_fd), fd_tolerance);
    ok &= report("dt vs finite differences", max_difference(dt, dt_fd), fd_tolerance);

    const auto [dx_acc, dt_acc] = f.backward(GradMode::accumulate, 0.5f, all);
    std::vector<float> want = dx_fd;
    for (float& e : want) {
        e += 0.5f;
    }
    ok &= report("dx (+=) adds to what is there", max_difference(dx_acc, want), fd_tolerance);

    const auto [dx_skip, dt_skip] = f.backward(GradMode::skip, 9.0f, all);
    const std::vector<float> untouched(dx_skip.size(), 9.0f);
    ok &= report("dx (skip) untouched", max_difference(dx_skip, untouched), 0.0);
    ok &= report("dt (skip) still accumulated", max_difference(dt_skip, dt), 0.0);

    const auto [dx_chunks, dt_chunks] = f.backward(GradMode::overwrite, 9.0f, chunks);
    ok &= report("two row chunks == all rows (dx, exact)", max_difference(dx_chunks, dx), 0.0);
    ok &= report("two row chunks == all rows (dt, exact)", max_difference(dt_chunks, dt), 0.0);

    std::printf("check: %s\n", ok ? "all passed" : "FAILED");
    return ok;
}

}  // namespace example
