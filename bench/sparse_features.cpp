// bench/sparse_features: the first layer's input dropout, y = d(x) W and dW = d(x)ᵀ dy on
// bag-of-words shapes (default Cora's: 2708 x 1433, 16 outputs), dense (BiasActivationOp then
// LinearOp: a dropout pass over every entry and two GEMMs) against sparse (SparseLinearOp: the
// same mask on the non-zeros, two SpMMs), for a range of densities: where the crossover is, for
// --sparse-features auto's threshold (layers/sparse_features.hpp). Median of `reps` per case.
#include "layers/sparse_features.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <vector>

#include <CLI/CLI.hpp>

#include "layers/bias_activation_op.hpp"
#include "layers/linear_op.hpp"
#include "layers/sparse_linear_op.hpp"
#include "src/base/timer.hpp"
#include "src/device/counter_rng.hpp"
#include "src/tensor/dense_matrix.hpp"

namespace strata {
namespace {

struct Options {
    index_t rows = 2708;
    index_t in = 1433;
    index_t out = 16;
    int threads = 1;
    int reps = 21;
    float dropout = 0.5f;
};

/// The process's CPU seconds (all threads): on a shared, oversubscribed machine a steadier
/// measure of the work than wall time, which waits for the cores too.
double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Timing {
    double wall = 0.0;  ///< median seconds
    double cpu = 0.0;   ///< median CPU seconds
};

template <class Step>
Timing median_seconds(int reps, Backend& backend, Step&& step) {
    step();  // warm-up
    std::vector<double> wall;
    std::vector<double> cpu;
    for (int r = 0; r < reps; ++r) {
        backend.synchronize();
        const double cpu_start = cpu_seconds();
        const Stopwatch watch;
        step();
        backend.synchronize();
        wall.push_back(watch.seconds());
        cpu.push_back(cpu_seconds() - cpu_start);
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

/// Median time of `op`'s forward over all rows of `x` into `y` and its backward for the weight
/// gradient only (no input gradient), after `before` (the dense path's dropout pass).
template <class Before>
Timing time_layer(int reps, const OpContext& context, Op& op, std::span<const ConstMatrixView> x,
                  MatrixView y, ConstMatrixView dy, Before&& before) {
    const std::array<MatrixView, 1> no_dx{MatrixView{}};
    const std::array<GradMode, 1> skip{GradMode::skip};
    const RowRange all{0, y.rows};
    return median_seconds(reps, context.backend, [&] {
        before();
        op.forward(context, {.x = x, .y = y, .rows = all, .workspace = {}});
        op.backward(
            context,
            {.x = x, .y = {}, .dy = dy, .dx = no_dx, .modes = skip, .rows = all, .workspace = {}});
    });
}

int run(const Options& o) {
    auto backend = make_cpu_backend(o.threads);
    std::vector<global_id> ids(static_cast<std::size_t>(o.rows));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<global_id>(i);
    }
    const Buffer<global_id> row_ids(*backend, std::span<const global_id>(ids));
    const auto fill = [](HostMatrix m, std::uint64_t seed) {
        for (std::size_t i = 0; i < m.values.size(); ++i) {
            m.values[i] = static_cast<float>(mix64(seed + i) >> 40) / 16777216.0f - 0.5f;
        }
        return m;
    };
    DenseMatrix w = DenseMatrix::upload(*backend, fill(HostMatrix(o.in, o.out), 1));
    DenseMatrix dw(*backend, o.in, o.out);
    const DenseMatrix dy = DenseMatrix::upload(*backend, fill(HostMatrix(o.rows, o.out), 2));
    DenseMatrix y(*backend, o.rows, o.out);
    DenseMatrix dropped(*backend, o.rows, o.in);
    const std::array<Parameter, 1> weight{Parameter{"weight", w.view(), dw.view(), 0.0f}};
    const OpContext context{
        .backend = *backend, .row_ids = row_ids.span(), .training = true, .epoch = 1};
    std::printf("x: %d x %d, W: %d x %d, input dropout %.2f, %d thread(s), median of %d\n", o.rows,
                o.in, o.in, o.out, static_cast<double>(o.dropout), o.threads, o.reps);
    std::printf("%9s %12s %13s %11s %12s %10s\n", "density", "dense_ms", "sparse_ms",
                "dense_cpu_ms", "sparse_cpu_ms", "cpu_ratio");
    for (const double density : {0.005, 0.0127, 0.025, 0.05, 0.1, 0.2, 0.4}) {
        HostMatrix x(o.rows, o.in);
        const auto cut = static_cast<std::uint64_t>(density * 4294967296.0);
        for (std::size_t i = 0; i < x.values.size(); ++i) {
            x.values[i] = (mix64(i * 7 + 3) & 0xffffffffULL) < cut ? 1.0f : 0.0f;
        }
        const DenseMatrix xd = DenseMatrix::upload(*backend, x);
        const SparseFeatures xs(*backend, x);
        BiasActivationOp drop(o.in, {.dropout = o.dropout, .seed = 1, .dropout_id = 0});
        LinearOp linear(o.in, o.out, 0.0f);
        linear.bind_parameters(weight);
        SparseLinearOp sparse(o.in, o.out, 0.0f, {.dropout = o.dropout, .seed = 1});
        sparse.bind_parameters(weight);
        const std::array<ConstMatrixView, 1> x_in{xd.view()};
        const std::array<ConstMatrixView, 1> d_in{dropped.view()};
        const RowRange all{0, o.rows};
        const Timing dense_s = time_layer(o.reps, context, linear, d_in, y.view(), dy.view(), [&] {
            drop.forward(context, {.x = x_in, .y = dropped.view(), .rows = all, .workspace = {}});
        });
        OpContext sparse_context = context;
        sparse_context.sparse_input = &xs.view();
        const std::array<ConstMatrixView, 1> none{ConstMatrixView{nullptr, o.rows, o.in}};
        const Timing sparse_s =
            time_layer(o.reps, sparse_context, sparse, none, y.view(), dy.view(), [] {});
        std::printf("%8.2f%% %12.3f %13.3f %11.3f %12.3f %10.2f\n", 100.0 * density,
                    1e3 * dense_s.wall, 1e3 * sparse_s.wall, 1e3 * dense_s.cpu, 1e3 * sparse_s.cpu,
                    sparse_s.cpu / dense_s.cpu);
    }
    return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
    strata::Options o;
    CLI::App app{"The first layer on dense vs sparse (CSR) input features, by density"};
    app.add_option("--rows", o.rows, "rows of x")->capture_default_str();
    app.add_option("--in", o.in, "columns of x")->capture_default_str();
    app.add_option("--out", o.out, "columns of W")->capture_default_str();
    app.add_option("--threads", o.threads, "CPU threads")->capture_default_str();
    app.add_option("--reps", o.reps, "timed repetitions")->capture_default_str();
    app.add_option("--dropout", o.dropout, "input dropout rate")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        return strata::run(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sparse_features: %s\n", e.what());
        return 1;
    }
}
