// bench/roofline: the floor of one GCN training step on this machine, from figures measured in
// this run: SGEMM at the model's own shapes (OpenBLAS through the CPU backend), a STREAM triad,
// and the SpMM on the graph's own Â at each width the step uses.
//
// The step (graph-parallel executor, one rank; layer l maps in -> out, aggregate first when
// out >= in, as layers/gcn_model.cpp builds it):
//   forward   X_l W (2 N in out flops) and Â Z (nnz (4+4) + nnz w 4 + N w 4 + N 4 bytes, w the
//             width aggregated: in when aggregating first, else out);
//   backward  dW = Xᵀ dY (2 N in out), dX = dY Wᵀ (2 N in out, not for layer 0), Âᵀ dZ at the same
//             width (not for layer 0 when it aggregates first: no gradient for the input);
//   pointwise passes: input dropout (N F read + write), bias + relu + dropout per hidden layer
//             (forward 8 N out, backward 12 N out, bias gradient 4 N out), loss (8 N C), Adam.
// floor = Σ GEMM time at the best measured rate of its shape + Σ SpMM and pointwise bytes / triad.
// The measured SpMM time is printed next to its bandwidth floor (it may beat it: cached x rows).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/triad.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/normalize.hpp"
#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"

namespace strata {
namespace {

struct Options {
    std::string data;
    int layers = 3;
    index_t hidden = 256;
    int threads = 2;
    int reps = 3;
};

/// Best of `reps` timed runs after one warm-up.
template <typename Run>
double best_seconds(int reps, const Run& run) {
    run();
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const Stopwatch watch;
        run();
        best = std::min(best, watch.seconds());
    }
    return best;
}

/// Â as the CPU backend's 32-bit CSR.
HostCsr host_operator(const GlobalCsr& a) {
    STRATA_CHECK(a.num_rows() < (std::int64_t{1} << 31) && a.nnz() < (std::int64_t{1} << 31),
                 "roofline: the graph does not fit a 32-bit CSR");
    HostCsr h;
    h.rows = static_cast<index_t>(a.num_rows());
    h.cols = h.rows;
    h.row_ptr.assign(a.indptr.begin(), a.indptr.end());
    h.col_idx.assign(a.indices.begin(), a.indices.end());
    h.values = a.values;
    return h;
}

void fill_pattern(DenseMatrix& m) {
    float* d = m.data();
    const auto n = static_cast<std::int64_t>(m.view().size());
    for (std::int64_t i = 0; i < n; ++i) {
        d[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    }
}

struct Term {
    std::string name;
    double work = 0.0;        ///< flops (GEMM) or bytes (memory-bound)
    double measured_s = 0.0;  ///< the kernel alone, this run (0: not measured)
    double floor_s = 0.0;
    bool gemm = false;  ///< work in flops, floor = the measured time
};

int run(const Options& opt) {
    const GraphDataset graph = read_graph(opt.data);
    const GlobalCsr a_hat = gcn_normalize(graph);
    const HostCsr host = host_operator(a_hat);
    const auto n = static_cast<double>(host.rows);
    const auto nnz = static_cast<double>(host.nnz());
    const index_t features = graph.num_features();
    const auto classes = static_cast<index_t>(graph.num_classes);

    const bench::TriadResult triad = bench::run_triad(40'000'000, 5, opt.threads);
    const double bandwidth = triad.median_gbs * 1e9;
    CpuBackend backend(opt.threads);
    const CsrMatrix a = CsrMatrix::upload(backend, host);

    std::vector<Term> terms;
    auto memory_term = [&](std::string name, double bytes, double measured) {
        terms.push_back(Term{std::move(name), bytes, measured, bytes / bandwidth, false});
    };
    auto spmm_term = [&](const std::string& name, index_t width) {
        DenseMatrix x(backend, host.rows, width);
        DenseMatrix y(backend, host.rows, width);
        fill_pattern(x);
        const double s = best_seconds(opt.reps, [&] { backend.spmm(a, x.view(), y.view(), 0.0f); });
        const double w = width;
        memory_term(name, nnz * (4 + 4) + nnz * w * 4 + n * w * 4 + n * 4, s);
    };
    auto gemm_terms = [&](const std::string& layer, index_t in, index_t out, bool input_grad) {
        DenseMatrix x(backend, host.rows, in);
        DenseMatrix w(backend, in, out);
        DenseMatrix y(backend, host.rows, out);
        DenseMatrix dx(backend, host.rows, in);
        fill_pattern(x);
        fill_pattern(w);
        fill_pattern(y);
        const double flops = 2.0 * n * in * out;
        const double fwd = best_seconds(opt.reps, [&] {
            backend.gemm(x.view(), Transpose::no, w.view(), Transpose::no, y.view(), 1.0f, 0.0f);
        });
        terms.push_back(Term{layer + " X W", flops, fwd, fwd, true});
        const double dw = best_seconds(opt.reps, [&] {
            backend.gemm(x.view(), Transpose::yes, y.view(), Transpose::no, w.view(), 1.0f, 0.0f);
        });
        terms.push_back(Term{layer + " dW = X^T dY", flops, dw, dw, true});
        if (input_grad) {
            const double dxs = best_seconds(opt.reps, [&] {
                backend.gemm(y.view(), Transpose::no, w.view(), Transpose::yes, dx.view(), 1.0f,
                             0.0f);
            });
            terms.push_back(Term{layer + " dX = dY W^T", flops, dxs, dxs, true});
        }
    };

    memory_term("input dropout", 8.0 * n * features, 0.0);
    index_t in = features;
    double params = 0.0;
    for (int l = 0; l < opt.layers; ++l) {
        const bool last = l + 1 == opt.layers;
        const index_t out = last ? classes : opt.hidden;
        const bool aggregate_first = out >= in;
        const index_t width = aggregate_first ? in : out;
        const std::string layer = "layer " + std::to_string(l);
        gemm_terms(layer, in, out, l > 0);
        spmm_term(layer + " A Z (w " + std::to_string(width) + ")", width);
        if (l > 0 || !aggregate_first) {
            spmm_term(layer + " A^T dZ (w " + std::to_string(width) + ")", width);
        }
        const double elems = n * out;
        memory_term(layer + (last ? " bias" : " bias+relu+dropout"), 8.0 * elems, 0.0);
        memory_term(layer + " backward pointwise + bias grad", 16.0 * elems, 0.0);
        params += static_cast<double>(in) * out + out;
        in = out;
    }
    memory_term("loss (softmax cross-entropy)", 8.0 * n * classes, 0.0);
    memory_term("Adam (value, grad, 2 moments)", 4.0 * 4.0 * params * 2.0, 0.0);

    double floor_s = 0.0;
    double gemm_flops = 0.0;
    double gemm_s = 0.0;
    double memory_bytes = 0.0;
    double spmm_s = 0.0;
    std::printf("%-40s %12s %12s %12s\n", "term", "work", "measured_s", "floor_s");
    for (const Term& t : terms) {
        const bool gemm = t.gemm;
        std::printf("%-40s %9.2f %s %12.4f %12.4f\n", t.name.c_str(), t.work / 1e9,
                    gemm ? "GF" : "GB", t.measured_s, t.floor_s);
        floor_s += t.floor_s;
        if (gemm) {
            gemm_flops += t.work;
            gemm_s += t.floor_s;
        } else {
            memory_bytes += t.work;
            if (t.measured_s > 0.0) {
                spmm_s += t.measured_s;
            }
        }
    }
    std::printf(
        "graph %s: N %lld, nnz(Â) %lld, F %d, C %d; %d layers, hidden %d, %d threads\n"
        "triad median %.1f GB/s; GEMM %.1f GFLOP in %.3f s (%.1f GFLOP/s at the model's shapes);"
        " memory-bound %.2f GB -> %.3f s at triad; SpMM measured %.3f s\n"
        "floor of one training step: %.3f s\n",
        opt.data.c_str(), static_cast<long long>(host.rows), static_cast<long long>(host.nnz()),
        features, classes, opt.layers, opt.hidden, opt.threads, triad.median_gbs, gemm_flops / 1e9,
        gemm_s, gemm_flops / gemm_s / 1e9, memory_bytes / 1e9, memory_bytes / bandwidth, spmm_s,
        floor_s);
    std::printf(
        "{\"bench\":\"roofline\",\"nodes\":%lld,\"nnz\":%lld,\"threads\":%d,\"triad_gbs\":%.3f,"
        "\"gemm_gflop\":%.3f,\"gemm_s\":%.4f,\"gemm_gflops\":%.2f,\"memory_gb\":%.3f,"
        "\"memory_s\":%.4f,\"spmm_measured_s\":%.4f,\"floor_s\":%.4f}\n",
        static_cast<long long>(host.rows), static_cast<long long>(host.nnz()), opt.threads,
        triad.median_gbs, gemm_flops / 1e9, gemm_s, gemm_flops / gemm_s / 1e9, memory_bytes / 1e9,
        memory_bytes / bandwidth, spmm_s, floor_s);
    return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
    strata::Options opt;
    CLI::App app{"The floor of a GCN training step from SGEMM, triad and SpMM measured here"};
    app.add_option("--data", opt.data, "Graph .h5 file")->required();
    app.add_option("--layers", opt.layers, "GCN layers")->capture_default_str();
    app.add_option("--hidden", opt.hidden, "Hidden width")->capture_default_str();
    app.add_option("--threads", opt.threads, "Threads")->capture_default_str();
    app.add_option("--reps", opt.reps, "Timed repetitions per kernel (best is used)")
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        return strata::run(opt);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "roofline: %s\n", e.what());
        return 1;
    }
}
