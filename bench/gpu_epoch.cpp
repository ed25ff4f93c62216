// bench_gpu_epoch: one GCN training epoch on one GPU (or the CPU, to test the program) on a
// generated graph, prepared by the library's own path (training/prepare.hpp and
// make_executor.hpp, what `strata train` runs; the graph in memory, dense features, the
// partition's vertex order), each epoch timed as `strata train`'s fit loop times it; then our
// SpMM on Â (N x N) at two widths against every cuSPARSE CSR algorithm.
// Optionally writes the graph as .npy files for the PyTorch Geometric baseline
// (bench/gpu_epoch_pyg.py, driven by bench/gpu_epoch). Progress on stderr; figures in --json.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/npy.hpp"
#include "datasets/generate.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"
#include "src/comm/mpi_session.hpp"
#include "src/device/cuda/spmm_tuning.hpp"
#include "src/nn/optimizer.hpp"
#include "training/make_executor.hpp"
#include "training/prepare.hpp"
#include "training/runtime.hpp"

namespace strata {
namespace {

using nlohmann::json;

struct Options {
    std::string device = "cuda";
    std::int64_t vertices = 2'400'000;
    double degree = 50.0;
    index_t features = 100;
    std::int64_t classes = 47;
    index_t hidden = 256;
    int layers = 3;
    int epochs = 10;
    int warmup = 2;
    std::uint64_t seed = 1;
    int threads = 0;
    int spmm_repetitions = 10;
    std::string npy_dir;
    std::string json_path;
};

void note(const std::string& line) {
    std::fprintf(stderr, "gpu_epoch: %s\n", line.c_str());
}

std::string fixed(double value, int digits = 3) {
    std::vector<char> text(64);
    std::snprintf(text.data(), text.size(), "%.*f", digits, value);
    return text.data();
}

double median(std::vector<double> values) {
    STRATA_CHECK(!values.empty(), "median of nothing");
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

/// indptr (int64), indices (int32), features (float32 N x F), labels (int64), train_mask
/// (bool): what bench/gpu_epoch_pyg.py reads.
void write_npy(const GraphDataset& graph, const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    const auto n = static_cast<std::int64_t>(graph.num_vertices());
    {
        bench::NpyWriter<std::int64_t> out(dir / "indptr.npy", {n + 1});
        out.append(std::span<const std::int64_t>(graph.indptr));
        out.commit();
    }
    {
        bench::NpyWriter<std::int32_t> out(dir / "indices.npy", {graph.num_edges()});
        std::vector<std::int32_t> chunk;
        const std::size_t step = std::size_t{1} << 20;
        for (std::size_t first = 0; first < graph.indices.size(); first += step) {
            const std::size_t last = std::min(graph.indices.size(), first + step);
            chunk.assign(graph.indices.begin() + static_cast<std::ptrdiff_t>(first),
                         graph.indices.begin() + static_cast<std::ptrdiff_t>(last));
            out.append(std::span<const std::int32_t>(chunk));
        }
        out.commit();
    }
    {
        bench::NpyWriter<float> out(dir / "features.npy", {n, graph.features.cols});
        out.append(std::span<const float>(graph.features.values));
        out.commit();
    }
    {
        bench::NpyWriter<std::int64_t> out(dir / "labels.npy", {n});
        out.append(std::span<const std::int64_t>(graph.labels));
        out.commit();
    }
    {
        bench::NpyWriter<bool> out(dir / "train_mask.npy", {n});
        out.append(graph.split_of(graph.train_mask, 0));
        out.commit();
    }
}

/// Generates the graph (and writes it as .npy files when asked).
GraphDataset generate(const Options& o, json& report) {
    GenerateOptions g;
    g.num_vertices = o.vertices;
    g.avg_degree = o.degree;
    g.num_features = o.features;
    g.num_classes = o.classes;
    g.seed = o.seed;
    note("generating " + std::to_string(o.vertices) + " vertices, degree " + fixed(o.degree, 1) +
         ", " + std::to_string(o.features) + " features, " + std::to_string(o.classes) +
         " classes");
    Stopwatch watch;
    GraphDataset graph = generate_graph(g);
    report["generate_s"] = watch.seconds();
    report["graph"] = {{"vertices", graph.num_vertices()},
                       {"directed_edges", graph.num_edges()},
                       {"features", graph.num_features()},
                       {"classes", graph.num_classes}};
    note("generated in " + fixed(watch.seconds(), 1) +
         " s: N = " + std::to_string(graph.num_vertices()) + " vertices, " +
         std::to_string(graph.num_edges()) + " directed edges");
    if (!o.npy_dir.empty()) {
        watch.restart();
        write_npy(graph, o.npy_dir);
        report["npy_dir"] = o.npy_dir;
        report["npy_s"] = watch.seconds();
        note("wrote the .npy files to " + o.npy_dir + " in " + fixed(watch.seconds(), 1) + " s");
    }
    return graph;
}

/// Our backend.spmm (beta 0) on `a` at width f against raw cusparseSpMM with each algorithm.
json time_spmm(Backend& backend, const CsrMatrix& a, index_t f, int repetitions) {
    DenseMatrix x(backend, a.cols(), f);
    DenseMatrix y(backend, a.rows(), f);
    backend.fill(x.view(), 1.0f);
    backend.spmm(a, x.view(), y.view(), 0.0f);  // warm-up (plans width f if training did not)
    std::vector<double> ours;
    for (int r = 0; r < repetitions; ++r) {
        backend.synchronize();
        Stopwatch watch;
        backend.spmm(a, x.view(), y.view(), 0.0f);
        backend.synchronize();
        ours.push_back(watch.seconds() * 1e3);
    }
    json row = {{"width", f}, {"ours_ms", median(ours)}};
    if (backend.kind() != DeviceKind::cuda) {
        note("spmm f " + std::to_string(f) + ": ours " + fixed(median(ours)) + " ms (CPU)");
        return row;
    }
    row["chosen"] = chosen_spmm_algorithm(a, f);
    std::optional<SpmmAlgorithmTime> best;
    json all = json::array();
    for (const SpmmAlgorithmTime& t :
         time_cusparse_spmm_algorithms(backend, a, x.view(), y.view(), repetitions)) {
        all.push_back(
            {{"algorithm", t.algorithm}, {"supported", t.supported}, {"median_ms", t.median_ms}});
        if (t.supported && (!best || t.median_ms < best->median_ms)) {
            best = t;
        }
    }
    row["cusparse"] = all;
    if (best) {
        row["best_algorithm"] = best->algorithm;
        row["best_ms"] = best->median_ms;
        row["ratio"] = median(ours) / best->median_ms;
    }
    note("spmm f " + std::to_string(f) + ": ours " + fixed(median(ours)) + " ms (" +
         row["chosen"].get<std::string>() + "), best cuSPARSE " +
         (best ? best->algorithm + " " + fixed(best->median_ms) + " ms" : std::string("none")));
    return row;
}

int run(const Options& o) {
    Runtime runtime = open_runtime({.device = o.device, .comm = "mpi", .threads = o.threads});
    Backend& backend = *runtime.backend;
    STRATA_CHECK(runtime.comm->size() == 1, "bench_gpu_epoch runs on one rank, not ",
                 runtime.comm->size());
    json report = {{"bench", "gpu_epoch"}};
    const bool cuda = backend.kind() == DeviceKind::cuda;

    RunConfig config;
    config.model = find_model("gcn").recipe.spec;
    config.model.layers = o.layers;
    config.model.hidden = o.hidden;
    config.model.dropout = 0.5f;
    config.model.weight_decay = 5e-4f;
    config.seed = o.seed;
    config.lr = 0.01f;
    config.local_order = "none";
    config.sparse_features = "off";
    config = resolve_layout(resolve_recipe(config), 1);
    Prepared prepared = [&] {
        const GraphDataset graph = generate(o, report);  // freed once uploaded
        const Stopwatch watch;
        Prepared p = prepare(config, backend, *runtime.comm, DataInput{.graph = &graph});
        backend.synchronize();
        report["prepare_s"] = watch.seconds();
        return p;
    }();
    const CsrMatrix& a_hat = prepared.inputs->uploaded->blocks.inner();  // one rank: all of Â
    report["device"] = backend.describe();
    report["graph"]["a_hat_nnz"] = a_hat.nnz();
    note("Â (nnz " + std::to_string(a_hat.nnz()) + ") built and uploaded to " + backend.describe() +
         " in " + fixed(report["prepare_s"].get<double>(), 1) + " s");
    ModelParameters parameters(backend, prepared.model.graph, o.seed);
    const MadeExecutor made = make_executor(config, prepared, backend, *runtime.comm, parameters);
    Executor& executor = *made.executor;
    Adam adam(backend, parameters.size(), AdamOptions{.lr = *config.lr});
    report["model"] = describe(config.model) + ", adam lr 0.01";

    // train_s: the training step as `strata train` times it (fit's EpochStats.train_s):
    // train_step (forward, loss, backward, gradients all-reduced) + adam.step, the device
    // synchronized at the end — the figure comparable to PyG's training step. stats_epoch_s adds
    // evaluate() on the same watch (fit's EpochStats.epoch_s when it evaluates every epoch);
    // epoch_s is that span ended by one more device synchronization.
    std::vector<double> train_s;
    std::vector<double> epoch_s;
    json epochs = json::array();
    for (int e = 1; e <= o.warmup + o.epochs; ++e) {
        backend.synchronize();
        Stopwatch epoch_watch;
        const double loss = executor.train_step(e);
        adam.step(parameters.all());
        backend.synchronize();
        const double step = epoch_watch.seconds();
        const Evaluation evaluation = executor.evaluate();
        const double step_epoch = epoch_watch.seconds();
        backend.synchronize();
        const double wall = epoch_watch.seconds();
        const bool warm = e > o.warmup;
        if (warm) {
            train_s.push_back(step);
            epoch_s.push_back(wall);
        }
        epochs.push_back({{"epoch", e},
                          {"loss", loss},
                          {"train_s", step},
                          {"epoch_s", wall},
                          {"stats_epoch_s", step_epoch},
                          {"warmup", !warm}});
        note("epoch " + std::to_string(e) + (warm ? "" : " (warm-up)") + ": loss " +
             fixed(loss, 4) + ", train_s " + fixed(step) + ", epoch " + fixed(wall) +
             " s, train acc " + fixed(evaluation.train_acc));
    }
    std::vector<double> eval_s;
    for (int r = 0; r < 3; ++r) {
        backend.synchronize();
        Stopwatch eval_watch;
        (void)executor.evaluate();
        backend.synchronize();
        eval_s.push_back(eval_watch.seconds());
    }
    report["epochs"] = epochs;
    report["timed_epochs"] = o.epochs;
    report["warmup_epochs"] = o.warmup;
    report["train_s"] = median(train_s);
    report["epoch_s"] = median(epoch_s);
    report["eval_s"] = median(eval_s);
    report["step_s"] = median(train_s);
    note("median over " + std::to_string(o.epochs) + " epochs: training step " +
         fixed(median(train_s)) + " s, whole epoch " + fixed(median(epoch_s)) +
         " s; evaluation pass alone " + fixed(median(eval_s)) + " s");
    std::int64_t gpu_used = cuda ? cuda_memory_in_use_bytes(backend) : 0;

    json spmm = json::array();
    for (const index_t f : {o.hidden, o.features}) {
        spmm.push_back(time_spmm(backend, a_hat, f, o.spmm_repetitions));
        gpu_used = cuda ? std::max(gpu_used, cuda_memory_in_use_bytes(backend)) : 0;
    }
    report["spmm"] = spmm;
    report["spmm_repetitions"] = o.spmm_repetitions;
    report["peak_rss_bytes"] = peak_rss_bytes();
    report["gpu_memory_used_bytes"] = gpu_used;
    note("peak host RSS " + fixed(static_cast<double>(peak_rss_bytes()) / (1 << 30), 2) + " GiB" +
         (cuda ? ", GPU memory in use (max sampled) " +
                     fixed(static_cast<double>(gpu_used) / (1 << 30), 2) + " GiB"
               : std::string()));
    if (!o.json_path.empty()) {
        AtomicOutput out(o.json_path, /*overwrite=*/true);
        std::ofstream(out.temp_path()) << report.dump(2) << '\n';
        out.commit();
    }
    return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
    strata::MpiSession mpi(argc, argv);
    strata::Options o;
    CLI::App app{"GCN epoch on one GPU (or the CPU) and SpMM against cuSPARSE's algorithms"};
    app.option_defaults()->always_capture_default();
    app.add_option("--device", o.device, "Backend")->check(CLI::IsMember({"cuda", "cpu"}));
    app.add_option("--vertices", o.vertices, "Generated vertices N")->check(CLI::Range(2, 1 << 30));
    app.add_option("--degree", o.degree, "Requested directed edges per vertex")
        ->check(CLI::PositiveNumber);
    app.add_option("--features", o.features, "Feature columns F")->check(CLI::PositiveNumber);
    app.add_option("--classes", o.classes, "Classes C")->check(CLI::Range(2, 1 << 20));
    app.add_option("--hidden", o.hidden, "Hidden width (also the first SpMM width)")
        ->check(CLI::PositiveNumber);
    app.add_option("--layers", o.layers, "GCN layers")->check(CLI::PositiveNumber);
    app.add_option("--epochs", o.epochs, "Timed epochs (after the warm-up)")
        ->check(CLI::PositiveNumber);
    app.add_option("--warmup", o.warmup, "Warm-up epochs, not timed")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--seed", o.seed, "Seed of the graph, initialization and dropout");
    app.add_option("--threads", o.threads, "OpenMP threads with --device cpu (0: default)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--spmm-repetitions", o.spmm_repetitions, "Timed SpMM runs per width")
        ->check(CLI::PositiveNumber);
    app.add_option("--npy-dir", o.npy_dir, "Write the graph as .npy files here (for PyG)");
    app.add_option("--json", o.json_path, "Write the figures to this JSON file");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    try {
        return strata::run(o);
    } catch (const strata::Error& e) {
        std::fprintf(stderr, "bench_gpu_epoch: error: %s [%s]\n", e.message().c_str(),
                     e.where().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_gpu_epoch: error: %s\n", e.what());
    }
    return 1;
}
