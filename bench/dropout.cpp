// bench/dropout: the fused elementwise tail y = dropout(act(x + b)) (Backend::bias_activation)
// and its backward, on a rows x cols matrix, next to a STREAM triad measured in the same run:
// with a free mask generator both are memory-bound (8 bytes per element forward: read x, write
// y; 12 backward: read saved and dy, write dx). Prints the best of `reps` in ns per element and
// GB/s, and one JSON line.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/triad.hpp"
#include "src/base/timer.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"

namespace strata {
namespace {

struct Case {
    const char* name;
    Activation act;
    float rate;
    bool backward;
    double bytes_per_element;
};

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
    using namespace strata;
    CLI::App app{"Fused bias + activation + dropout (forward, backward) vs a triad"};
    index_t rows = 200'000;
    index_t cols = 256;
    int threads = 1;
    int reps = 7;
    app.add_option("--rows", rows, "Rows")->capture_default_str();
    app.add_option("--cols", cols, "Columns")->capture_default_str();
    app.add_option("--threads", threads, "Threads")->capture_default_str();
    app.add_option("--reps", reps, "Timed repetitions (best is reported)")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    CpuBackend backend(threads);
    HostMatrix host(rows, cols);
    for (std::size_t i = 0; i < host.values.size(); ++i) {
        host.values[i] = static_cast<float>(static_cast<int>(i % 17) - 8) * 0.125f;
    }
    const DenseMatrix x = DenseMatrix::upload(backend, host);
    const DenseMatrix dy = DenseMatrix::upload(backend, host);
    DenseMatrix y(backend, rows, cols);
    std::vector<global_id> ids(static_cast<std::size_t>(rows));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<global_id>(i) * 7919 % rows;
    }
    std::vector<float> bias(static_cast<std::size_t>(cols), 0.01f);
    const double elements = static_cast<double>(rows) * static_cast<double>(cols);
    const bench::TriadResult triad = bench::run_triad(40'000'000, 5, threads);

    const Case cases[] = {
        {"relu, no dropout", Activation::relu, 0.0f, false, 8.0},
        {"relu + dropout 0.5", Activation::relu, 0.5f, false, 8.0},
        {"dropout 0.5 only", Activation::none, 0.5f, false, 8.0},
        {"elu + dropout 0.5", Activation::elu, 0.5f, false, 8.0},
        {"backward relu + dropout", Activation::relu, 0.5f, true, 12.0},
        {"backward dropout only", Activation::none, 0.5f, true, 12.0},
    };
    std::printf("%d x %d, %d thread(s); triad %.1f GB/s (best of 5)\n", rows, cols, threads,
                triad.best_gbs);
    std::string json = "{\"bench\": \"dropout\", \"rows\": " + std::to_string(rows) +
                       ", \"cols\": " + std::to_string(cols) +
                       ", \"threads\": " + std::to_string(threads) +
                       ", \"triad_gbs\": " + std::to_string(triad.best_gbs) + ", \"cases\": {";
    bool first = true;
    for (const Case& c : cases) {
        const DropoutKey key{.seed = 1, .epoch = 3, .layer = 1, .rate = c.rate};
        const std::span<const float> b =
            c.act == Activation::none ? std::span<const float>() : std::span<const float>(bias);
        double best = 1e30;
        for (int r = 0; r < reps; ++r) {
            Stopwatch timer;
            if (c.backward) {
                backend.bias_activation_backward(x.view(), b, dy.view(), c.act, key, ids, y.view(),
                                                 0.0f);
            } else {
                backend.bias_activation(x.view(), b, c.act, key, ids, y.view());
            }
            best = std::min(best, timer.seconds());
        }
        const double ns = best * 1e9 / elements;
        const double gbs = c.bytes_per_element * elements / best / 1e9;
        std::printf("%-26s %7.3f ms  %6.2f ns/element  %6.1f GB/s  (%.2f of triad)\n", c.name,
                    best * 1e3, ns, gbs, gbs / triad.best_gbs);
        json += std::string(first ? "" : ", ") + "\"" + c.name + "\": " + std::to_string(ns);
        first = false;
    }
    std::printf("%s}}\n", json.c_str());
    return 0;
}
