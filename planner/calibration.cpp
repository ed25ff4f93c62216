// calibrate: the kernels of the CPU backend timed at the shapes the executor runs.
#include "planner/calibration.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "datasets/adjacency.hpp"
#include "datasets/generate.hpp"
#include "layers/model_inputs.hpp"
#include "layers/model_zoo.hpp"
#include "partition/local_part.hpp"
#include "planner/cost_model.hpp"
#include "planner/partition_stats.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"
#include "src/comm/make_communicator.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/model_parameters.hpp"
#include "src/nn/optimizer.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"

#include <unistd.h>

namespace strata::planner {
namespace {

/// Fastest seconds of `run` over repetitions filling about `budget` seconds (>= 3): noise
/// (other processes, interrupts) only ever adds time, so the minimum is the reproducible figure.
template <class Run>
double time_it(double budget, Run&& run) {
    run();  // warm-up
    std::vector<double> times;
    const Stopwatch total;
    while (times.size() < 3 || (total.seconds() < budget && times.size() < 200)) {
        const Stopwatch watch;
        run();
        times.push_back(watch.seconds());
    }
    return *std::min_element(times.begin(), times.end());
}

/// A random graph of `rows` rows and `degree` entries per row, columns sorted.
HostCsr random_csr(index_t rows, int degree, std::uint64_t seed) {
    HostCsr a;
    a.rows = rows;
    a.cols = rows;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<index_t> column(0, rows - 1);
    a.row_ptr.reserve(static_cast<std::size_t>(rows) + 1);
    for (index_t r = 0; r < rows; ++r) {
        std::vector<index_t> cols(static_cast<std::size_t>(degree));
        for (index_t& c : cols) {
            c = column(rng);
        }
        std::sort(cols.begin(), cols.end());
        a.col_idx.insert(a.col_idx.end(), cols.begin(), cols.end());
        a.row_ptr.push_back(static_cast<index_t>(a.col_idx.size()));
    }
    a.values.assign(a.col_idx.size(), 0.04f);
    return a;
}

/// printf into a line for `log` (nothing without one).
template <class... Args>
void logf(const std::function<void(const std::string&)>& log, const char* format, Args... args) {
    if (log) {
        char line[384];
        std::snprintf(line, sizeof(line), format, args...);
        log(line);
    }
}

ThreadRates measure_rates(int threads, double budget, double cache_bytes,
                          const std::function<void(const std::string&)>& log) {
    CpuBackend backend(threads);
    ThreadRates r;
    r.threads = threads;
    // One line per figure as it is measured (the whole takes tens of seconds).
    const auto figure = [&](const char* format, auto... args) {
        char text[256];
        std::snprintf(text, sizeof(text), format, args...);
        logf(log, "threads %d: %s", threads, text);
    };
    {  // streaming: y = a x + b y over 3 x 4 bytes per element, far beyond the cache
        // 32 bytes per row: each array at least 4 x the cache
        const auto rows = static_cast<index_t>(std::max(double{1 << 22}, cache_bytes / 8.0));
        DenseMatrix x(backend, rows, 8);
        DenseMatrix y(backend, rows, 8);
        backend.fill(x.view(), 1.0f);
        backend.fill(y.view(), 1.0f);
        const double t = time_it(budget, [&] { backend.axpby(0.5f, x.view(), 0.5f, y.view()); });
        r.memory_gbs = 12.0 * static_cast<double>(x.view().size()) / t / 1e9;
        figure("streaming %.1f GB/s", r.memory_gbs);
    }
    {  // one step's fixed cost: the intercept of a kernel's time over its size (two cached
       // sizes above the serial one, so the team forks and joins as for the executor's kernels)
        const index_t n = 1 << 16;
        DenseMatrix x(backend, 2 * n, 1);
        const MatrixView half{x.view().data, n, 1};
        const double t1 = time_it(budget / 6, [&] { backend.fill(half, 0.0f); });
        const double t2 = time_it(budget / 6, [&] { backend.fill(x.view(), 0.0f); });
        r.step_s = std::max(0.0, 2.0 * t1 - t2);
        figure("fixed cost of a step %.1f us", 1e6 * r.step_s);
    }
    {  // the sparse first layer's dropout: a hash of (row id, column id) per stored entry
        const CsrMatrix a = CsrMatrix::upload(backend, random_csr(1 << 14, 16, 9));
        std::vector<global_id> ids(static_cast<std::size_t>(a.rows()));
        std::iota(ids.begin(), ids.end(), global_id{0});
        DenseMatrix values(backend, a.nnz(), 1);
        const DropoutKey key{.seed = 1, .epoch = 1, .layer = 1, .rate = 0.5f};
        const double t = time_it(budget / 4, [&] {
            backend.fill(values.view(), 1.0f);
            backend.edge_dropout(a, key, ids, ids, values.view());
        });
        r.dropout_entry_s = t / static_cast<double>(a.nnz());
        figure("edge dropout %.1f ns/entry", 1e9 * r.dropout_entry_s);
    }
    {  // a threaded GEMM between OpenMP kernels, less the two apart: the pools' hand-over
        const index_t rows = 4096;  // 4096 x 16 x 16: above blas_threading_flops
        DenseMatrix a(backend, rows, 16);
        DenseMatrix b(backend, 16, 16);
        DenseMatrix c(backend, rows, 16);
        DenseMatrix x(backend, 1 << 16, 1);  // above the elementwise kernels' serial size
        backend.fill(a.view(), 0.5f);
        backend.fill(b.view(), 0.5f);
        const auto gemm = [&] {
            backend.gemm(std::as_const(a).view(), Transpose::no, std::as_const(b).view(),
                         Transpose::no, c.view(), 1.0f, 0.0f);
        };
        const auto kernel = [&] { backend.fill(x.view(), 0.0f); };
        constexpr int reps = 16;  // a batch: the hand-over's typical cost, not its luckiest
        const auto batch = [&](bool with_gemm, bool with_kernel) {
            return time_it(budget / 4, [&] {
                for (int i = 0; i < reps; ++i) {
                    if (with_gemm) {
                        gemm();
                    }
                    if (with_kernel) {
                        kernel();
                    }
                }
            });
        };
        const double both = batch(true, true);
        r.blas_switch_s = std::max(0.0, (both - batch(true, false) - batch(false, true)) / reps);
        figure("BLAS/OpenMP hand-over %.1f us", 1e6 * r.blas_switch_s);
    }
    const index_t gemm_rows = 1 << 16;
    DenseMatrix ga(backend, gemm_rows, 256);
    DenseMatrix gb(backend, gemm_rows, 256);
    DenseMatrix gc(backend, gemm_rows, 256);
    backend.fill(ga.view(), 0.5f);
    backend.fill(gb.view(), 0.5f);
    for (const index_t k : {8, 16, 64, 256}) {
        const double flops = 2.0 * gemm_rows * 256.0 * static_cast<double>(k);
        {  // forward and dX: (rows x 256)(256 x k)
            const ConstMatrixView av{ga.view().data, gemm_rows, 256};
            const ConstMatrixView bv{gb.view().data, 256, k};
            const MatrixView cv{gc.view().data, gemm_rows, k};
            const double t = time_it(budget / 2, [&] {
                backend.gemm(av, Transpose::no, bv, Transpose::no, cv, 1.0f, 0.0f);
            });
            r.gemm.push_back({static_cast<double>(k), flops / t / 1e9});
        }
        {  // dW = Xᵀ dY: (rows x k)ᵀ (rows x 256), summed over the long dimension
            const ConstMatrixView xv{ga.view().data, gemm_rows, k};
            const ConstMatrixView dyv{gb.view().data, gemm_rows, 256};
            const MatrixView dwv{gc.view().data, k, 256};
            const double t = time_it(budget / 2, [&] {
                backend.gemm(xv, Transpose::yes, dyv, Transpose::no, dwv, 1.0f, 0.0f);
            });
            r.gemm_tn.push_back({static_cast<double>(k), flops / t / 1e9});
        }
        figure("GEMM width %d: %.0f GFLOP/s (Xt dY %.0f)", static_cast<int>(k), r.gemm.back().rate,
               r.gemm_tn.back().rate);
    }
    {  // the loss: softmax cross-entropy and its gradient over every row, 47 classes
        const index_t rows = 1 << 16;
        const index_t classes = 47;
        DenseMatrix logits(backend, rows, classes);
        DenseMatrix dlogits(backend, rows, classes);
        backend.fill(logits.view(), 0.25f);
        std::vector<index_t> labels(static_cast<std::size_t>(rows));
        for (std::size_t i = 0; i < labels.size(); ++i) {
            labels[i] = static_cast<index_t>(i % static_cast<std::size_t>(classes));
        }
        const std::vector<std::uint8_t> mask(labels.size(), 1);
        const double t = time_it(budget / 4, [&] {
            (void)backend.softmax_cross_entropy(std::as_const(logits).view(), labels, mask, 1.0f,
                                                dlogits.view());
        });
        r.softmax_entry_s = t / (static_cast<double>(rows) * classes);
        figure("softmax cross-entropy %.2f ns/logit", 1e9 * r.softmax_entry_s);
    }
    // SpMM at each width: in cache, x and y together fill half the last-level cache (what
    // the cost model's size_hit calls a hit); out of cache, 2^19 rows, far beyond it.
    const auto spmm_rate = [&](index_t rows, index_t width) {
        const CsrMatrix a = CsrMatrix::upload(backend, random_csr(rows, 16, 7));
        DenseMatrix x(backend, rows, width);
        DenseMatrix y(backend, rows, width);
        backend.fill(x.view(), 1.0f);
        const double t = time_it(budget / 4, [&] { backend.spmm(a, x.view(), y.view(), 0.0f); });
        return static_cast<double>(a.nnz()) * static_cast<double>(width) / t / 1e9;
    };
    for (const index_t width : {8, 16, 64, 256}) {
        const auto w = static_cast<double>(width);
        const auto in_rows =
            static_cast<index_t>(std::max(256.0, 0.5 * cache_bytes / (2.0 * 4.0 * w)));
        const double in = spmm_rate(in_rows, width);
        // 2^19 rows: at narrow widths x and y still partly fit, so the measured rate mixes both;
        // the out-of-cache rate is what remains once the hits (the cost model's size_hit) are
        // taken out: 1 / rate = hit / in + (1 - hit) / out.
        const index_t out_rows = 1 << 19;
        const double mixed = spmm_rate(out_rows, width);
        const double hit = std::min(1.0, 0.5 * cache_bytes / (2.0 * out_rows * 4.0 * w));
        const double inverse = (1.0 / mixed - hit / in) / (1.0 - hit);
        r.spmm_in_cache.push_back({w, in});
        r.spmm_out_of_cache.push_back(
            {w, hit < 0.9 && inverse > 1.0 / in ? 1.0 / inverse : std::min(mixed, in)});
        figure("SpMM width %d: %.2f (in cache), %.2f (out) G entries x cols/s",
               static_cast<int>(width), in, r.spmm_out_of_cache.back().rate);
    }
    {  // streaming in cache: axpby over x and y filling a quarter of the last-level cache
        const auto n = static_cast<index_t>(std::max(1024.0, 0.25 * cache_bytes / 8.0));
        DenseMatrix x(backend, n, 1);
        DenseMatrix y(backend, n, 1);
        backend.fill(x.view(), 1.0f);
        backend.fill(y.view(), 1.0f);
        const double t =
            time_it(budget / 4, [&] { backend.axpby(0.5f, x.view(), 0.5f, y.view()); });
        r.cache_gbs = 12.0 * static_cast<double>(n) / t / 1e9;
        figure("streaming in cache %.1f GB/s", r.cache_gbs);
    }
    if (log) {
        char line[384];
        std::snprintf(line, sizeof(line),
                      "threads %d: stream %.1f GB/s (in cache %.1f), step %.1f us, dropout %.1f "
                      "ns/entry, softmax %.2f "
                      "ns/logit, BLAS switch %.1f us, GEMM %.0f-%.0f (Xt dY %.0f-%.0f) "
                      "GFLOP/s, SpMM "
                      "%.2f-%.2f (in cache) %.2f-%.2f (out) G entries x cols/s",
                      threads, r.memory_gbs, r.cache_gbs, 1e6 * r.step_s, 1e9 * r.dropout_entry_s,
                      1e9 * r.softmax_entry_s, 1e6 * r.blas_switch_s, r.gemm.front().rate,
                      r.gemm.back().rate, r.gemm_tn.front().rate, r.gemm_tn.back().rate,
                      r.spmm_in_cache.front().rate, r.spmm_in_cache.back().rate,
                      r.spmm_out_of_cache.front().rate, r.spmm_out_of_cache.back().rate);
        log(line);
    }
    return r;
}

/// Ranks 0 and 1 exchange `floats` floats both ways (the halo exchange's pattern); seconds.
double exchange_seconds(Communicator& comm, Backend& backend, index_t floats, double budget) {
    const int rank = comm.rank();
    ExchangePattern pattern;
    if (rank <= 1) {
        pattern.peers = {1 - rank};
        pattern.send_offsets = {0, floats};
        pattern.recv_offsets = {0, floats};
    }
    DenseMatrix send(backend, std::max<index_t>(floats, 1), 1);
    DenseMatrix recv(backend, std::max<index_t>(floats, 1), 1);
    const ConstMatrixView s{send.view().data, rank <= 1 ? floats : 0, 1};
    const MatrixView r{recv.view().data, rank <= 1 ? floats : 0, 1};
    // A fixed repetition count on every rank (all must join each barrier).
    const auto once = [&] {
        auto exchange = comm.start_exchange(pattern, s, r);
        exchange->wait_all();
    };
    once();
    comm.barrier();
    const int reps = floats < 1024 ? 200 : std::max(3, static_cast<int>(budget / 0.01));
    const Stopwatch watch;
    for (int i = 0; i < reps; ++i) {
        once();
    }
    std::array<double, 1> t{watch.seconds() / reps};
    comm.allreduce_max(t);
    return t[0];
}

/// One rank's timed training run on a generated graph (GCN 3 x hidden): medians over epochs
/// 2-6 of the epoch and of the training step's aggregation phase (--profile), and the
/// partition statistics to predict it with.
struct TimedRun {
    std::unique_ptr<BuiltModel> model;
    PartitionStats stats;
    double epoch_s = 0.0;
    double aggregation_s = 0.0;
};

TimedRun timed_run(int threads, std::int64_t vertices, double degree, index_t features,
                   index_t hidden) {
    CpuBackend backend(threads);
    auto self = make_communicator(backend, CommKind::mpi, MPI_COMM_SELF);
    GenerateOptions g;
    g.num_vertices = vertices;
    g.avg_degree = degree;
    g.num_features = features;
    g.num_classes = 16;
    g.seed = 3;
    const GraphDataset graph = generate_graph(g);
    ModelSpec spec = find_model("gcn").recipe.spec;
    spec.layers = 3;
    spec.hidden = hidden;
    TimedRun run;
    run.model = std::make_unique<BuiltModel>(build_model(spec, features, 16));
    ModelGraph& model = run.model->graph;
    run.stats = measure_partition(graph, "calibration", 1, model.normalization(), 0);
    const LocalPart part = build_local_part(graph, adjacency_matrix(graph),
                                            partition_block(graph.num_vertices(), 1), 0);
    ModelInputs inputs(backend, *self, part, model);
    ModelParameters parameters(backend, model, 1);
    ExecutorOptions options;
    options.profile = true;
    FullGraphExecutor executor(backend, *self, model, parameters, *inputs.aggregation,
                               inputs.uploaded->data(), inputs.executor_options(options));
    Adam adam(backend, parameters.size(), AdamOptions{});
    std::vector<double> epochs;
    std::vector<double> aggregation;
    // Small graphs: more epochs, for a stable median of a sub-millisecond epoch.
    const int count = vertices < 10000 ? 41 : 6;
    for (int e = 1; e <= count; ++e) {
        const Stopwatch watch;
        (void)executor.train_step(e);
        adam.step(parameters.all());
        (void)executor.evaluate();
        backend.synchronize();
        if (e > 1) {
            epochs.push_back(watch.seconds());
            aggregation.push_back(executor.phase_times().value().aggregation);
        }
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    run.epoch_s = median(epochs);
    run.aggregation_s = median(aggregation);
    return run;
}

/// Fits at `threads` (its entry of `machine`, fitted figures reset first), in order:
/// - spmm_scale: a GCN 3 x 128 on 60k vertices, measured / predicted aggregation phase (the
///   SpMM rates are timed on random graphs; a real graph's locality and degrees are not);
/// - step_s: a GCN 3 x 16 on 2000 vertices, whose epoch is mostly fixed costs: (measured -
///   predicted without them) / steps (the kernel-level figure misses the team's wake-ups
///   between kernels and the host's work between steps);
/// - time_scale: the first run's measured / predicted epoch with both applied.
void fit(MachineModel& machine, int threads, const std::function<void(const std::string&)>& log) {
    ThreadRates* rates = nullptr;
    for (ThreadRates& r : machine.by_threads) {
        if (r.threads == threads) {
            rates = &r;
        }
    }
    STRATA_CHECK(rates != nullptr, "calibrate: no rates for ", threads, " threads");
    rates->time_scale = 1.0;
    rates->spmm_scale = 1.0;
    const RunShape shape{.machine = &machine, .network = machine.shared_memory, .threads = threads};
    const auto predict = [&](const TimedRun& run) {
        return predict_graph_epoch(run.model->graph, Recompute::none, run.stats, shape);
    };
    logf(log, "threads %d: fitting: training a GCN 3x128 on 60k generated vertices", threads);
    const TimedRun big = timed_run(threads, 60000, 20, 128, 128);
    rates->spmm_scale = big.aggregation_s / predict(big).train_terms.spmm_s;

    logf(log, "threads %d: fitting: training a GCN 3x16 on 2k generated vertices", threads);
    const TimedRun tiny = timed_run(threads, 2000, 5, 64, 16);
    const double kernel_step_s = rates->step_s;
    rates->step_s = 0.0;
    const double without = predict(tiny).epoch_s;
    rates->step_s = 1e-6;
    const double steps = (predict(tiny).epoch_s - without) / 1e-6;
    rates->step_s = std::max(kernel_step_s, (tiny.epoch_s - without) / steps);

    const double predicted = predict(big).epoch_s;
    rates->time_scale = big.epoch_s / predicted;
    if (log) {
        char line[320];
        std::snprintf(line, sizeof(line),
                      "threads %d: GCN 3x128 on 60k vertices: aggregation %.1f ms (SpMM scale "
                      "%.3f); GCN 3x16 on 2k vertices: epoch %.3f ms, %.0f steps (step %.1f us); "
                      "GCN 3x128: epoch %.1f ms, predicted %.1f ms: time scale %.3f",
                      threads, 1e3 * big.aggregation_s, rates->spmm_scale, 1e3 * tiny.epoch_s,
                      steps, 1e6 * rates->step_s, 1e3 * big.epoch_s, 1e3 * predicted,
                      rates->time_scale);
        log(line);
    }
}

/// The last-level data cache one core sees, as the kernel reports it in sysfs (what lscpu
/// prints); sysconf's figure only where sysfs has none, then 8 MiB. sysconf reads CPUID, which
/// in a VM can describe the host: on this project's 2-core VM it said 384 MiB for a 32 MiB L3,
/// so "in cache" SpMM was timed out of cache and the planner priced in-cache graphs at the
/// out-of-cache rate.
double last_level_cache_bytes() {
    long best_level = 0;
    double best = 0.0;
    for (int index = 0;; ++index) {
        const std::string dir =
            "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
        std::ifstream level_file(dir + "level");
        std::ifstream type_file(dir + "type");
        std::ifstream size_file(dir + "size");
        if (!level_file || !type_file || !size_file) {
            break;
        }
        long level = 0;
        std::string type;
        std::string size;
        level_file >> level;
        type_file >> type;
        size_file >> size;
        if (type == "Instruction" || size.empty() || level < best_level) {
            continue;
        }
        const char unit = size.back();
        const double bytes = std::strtod(size.c_str(), nullptr) * (unit == 'K'   ? 1024.0
                                                                   : unit == 'M' ? 1048576.0
                                                                                 : 1.0);
        if (bytes > 0.0) {
            best_level = level;
            best = bytes;
        }
    }
    if (best > 0.0) {
        return best;
    }
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return static_cast<double>(l3 > 0 ? l3 : l2 > 0 ? l2 : 8L << 20);
}

}  // namespace

double load_average() {
    std::ifstream in("/proc/loadavg");
    double load = -1.0;
    if (!(in >> load)) {
        return -1.0;
    }
    return load;
}

std::string busy_warning(double load, int cores) {
    const double threshold = 0.5 + static_cast<double>(cores) / 10.0;
    if (load < 0.0 || load <= threshold) {
        return "";
    }
    char text[320];
    std::snprintf(text, sizeof(text),
                  "the machine is busy (load average %.2f on %d cores, above %.1f): other work "
                  "slows every figure measured; calibrate on an idle machine for a model that "
                  "predicts its runs",
                  load, cores, threshold);
    return text;
}

MachineModel merge_network(MachineModel kernels, const MachineModel& network) {
    kernels.shared_memory = network.shared_memory;
    kernels.mpi_measured = network.mpi_measured;
    return kernels;
}

MachineModel calibrate(Communicator& comm, const CalibrationOptions& options) {
    MachineModel m;
    const bool root = comm.rank() == 0;
    const auto log = [&](const std::string& text) {
        if (root && options.log) {
            options.log(text);
        }
    };
    m.baseline_rss_bytes = static_cast<double>(current_rss_bytes());
    std::array<double, 1> baseline{m.baseline_rss_bytes};
    comm.allreduce_max(baseline);
    m.baseline_rss_bytes = baseline[0];
    char host[256] = {};
    (void)gethostname(host, sizeof(host) - 1);
    m.host = host;
    m.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    m.cache_bytes = last_level_cache_bytes();
    // Kernels with one process only: waiting ranks would spin in MPI on the cores measured.
    if (comm.size() == 1) {
        std::vector<int> counts{1};
        if (m.cores > 1) {
            counts.push_back(m.cores);
        }
        for (int threads : counts) {
            m.by_threads.push_back(
                measure_rates(threads, options.seconds_per_figure, m.cache_bytes, options.log));
        }
    }
    // Network between ranks 0 and 1 (shared memory when they are on one node).
    m.shared_memory = default_machine().shared_memory;
    m.inter_node = default_machine().inter_node;
    if (comm.size() >= 2) {
        CpuBackend backend(1);
        const double small = exchange_seconds(comm, backend, 1, options.seconds_per_figure);
        const index_t big_floats = 1 << 22;
        const double big = exchange_seconds(comm, backend, big_floats, options.seconds_per_figure);
        m.shared_memory.latency_s = small;
        m.shared_memory.bandwidth_gbs = 4.0 * big_floats / std::max(1e-9, big - small) / 1e9;
        m.mpi_measured = true;
        log("network (ranks 0-1): latency " + std::to_string(1e6 * small) + " us, bandwidth " +
            std::to_string(m.shared_memory.bandwidth_gbs) + " GB/s");
    }
    if (comm.size() == 1 && options.fit) {
        for (const ThreadRates& r : std::vector<ThreadRates>(m.by_threads)) {
            fit(m, r.threads, options.log);
        }
    }
    return m;
}

}  // namespace strata::planner
