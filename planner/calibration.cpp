// calibrate: the kernels' and the training runs' figures in interleaved rounds, the fits, the
// network between ranks, and the warnings about a busy machine or figures that move.
#include "planner/calibration.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "planner/cost_model.hpp"
#include "planner/kernel_probes.hpp"
#include "planner/training_probe.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"

#include <unistd.h>

namespace strata::planner {
namespace {

/// printf into a line for `log` (nothing without one).
template <class... Args>
void logf(const std::function<void(const std::string&)>& log, const char* format, Args... args) {
    if (log) {
        char line[512];
        std::snprintf(line, sizeof(line), format, args...);
        log(line);
    }
}

/// " (spread 4 %)" for figure `name` of `r`.
std::string spread_text(const ThreadRates& r, const std::string& name) {
    const auto it = r.spread.find(name);
    char text[48];
    std::snprintf(text, sizeof(text), " (spread %.0f %%)",
                  it == r.spread.end() ? 0.0 : 100.0 * it->second);
    return text;
}

/// The progress lines of the kernels' figures at `r.threads`: one per figure group, its median
/// over rounds and spread.
void log_rates(const ThreadRates& r, const std::function<void(const std::string&)>& log) {
    const int t = r.threads;
    logf(log, "threads %d: streaming %.1f GB/s%s", t, r.memory_gbs,
         spread_text(r, "memory_gbs").c_str());
    logf(log, "threads %d: fixed cost of a step %.1f us%s", t, 1e6 * r.step_s,
         spread_text(r, "step_s").c_str());
    logf(log, "threads %d: edge dropout %.1f ns/entry%s", t, 1e9 * r.dropout_entry_s,
         spread_text(r, "dropout_entry_s").c_str());
    logf(log, "threads %d: BLAS/OpenMP hand-over %.1f us%s", t, 1e6 * r.blas_switch_s,
         spread_text(r, "blas_switch_s").c_str());
    for (std::size_t i = 0; i < r.gemm.size(); ++i) {
        const int k = static_cast<int>(r.gemm[i].x);
        logf(log, "threads %d: GEMM width %d: %.0f GFLOP/s%s (Xt dY %.0f%s)", t, k, r.gemm[i].rate,
             spread_text(r, "gemm_gflops@" + std::to_string(k)).c_str(), r.gemm_tn[i].rate,
             spread_text(r, "gemm_tn_gflops@" + std::to_string(k)).c_str());
    }
    logf(log, "threads %d: softmax cross-entropy %.2f ns/logit%s", t, 1e9 * r.softmax_entry_s,
         spread_text(r, "softmax_entry_s").c_str());
    for (std::size_t i = 0; i < r.spmm_in_cache.size(); ++i) {
        const int w = static_cast<int>(r.spmm_in_cache[i].x);
        logf(log, "threads %d: SpMM width %d: %.2f%s (in cache), %.2f%s (out) G entries x cols/s",
             t, w, r.spmm_in_cache[i].rate,
             spread_text(r, "spmm_in_cache_g@" + std::to_string(w)).c_str(),
             r.spmm_out_of_cache[i].rate,
             spread_text(r, "spmm_out_of_cache_g@" + std::to_string(w)).c_str());
    }
    logf(log, "threads %d: streaming in cache %.1f GB/s%s", t, r.cache_gbs,
         spread_text(r, "cache_gbs").c_str());
}

/// Each rank exchanges `each` floats both ways with each of `partners` (the halo exchange's
/// pattern; none: idle, it only joins the barrier and the reduction), every rank at once;
/// seconds per exchange over a fixed count, the slowest rank's.
double exchange_seconds(Communicator& comm, Backend& backend, const std::vector<int>& partners,
                        index_t each, double budget, const Clock& clock) {
    ExchangePattern pattern;
    pattern.peers = partners;
    for (std::size_t i = 1; i <= partners.size(); ++i) {  // after the pattern's leading 0
        pattern.send_offsets.push_back(each * static_cast<index_t>(i));
    }
    pattern.recv_offsets = pattern.send_offsets;
    const index_t rows = pattern.num_send_rows();
    DenseMatrix send(backend, std::max<index_t>(rows, 1), 1);
    DenseMatrix recv(backend, std::max<index_t>(rows, 1), 1);
    // Written first: pages never written read as the kernel's one zero page, always in cache
    // (an unwritten send buffer measured 18 GB/s where the written one moves 11).
    std::fill_n(send.data(), send.rows(), 1.0f);
    std::fill_n(recv.data(), recv.rows(), 0.0f);
    const ConstMatrixView s{send.view().data, rows, 1};
    const MatrixView r{recv.view().data, rows, 1};
    // A fixed repetition count on every rank (all must join each barrier).
    const auto once = [&] {
        auto exchange = comm.start_exchange(pattern, s, r);
        exchange->wait_all();
    };
    std::array<double, 1> first{clock()};
    once();
    first[0] = clock() - first[0];
    comm.allreduce_max(first);
    // Three where one exchange outlasts the budget (a slow link: 134 MB a node at 0.25 Gbit/s
    // take 5 s), else as if each took 10 ms.
    const int reps = each < 1024         ? 200
                     : first[0] > budget ? 3
                                         : std::max(3, static_cast<int>(budget / 0.01));
    const double start = clock();
    for (int i = 0; i < reps; ++i) {
        once();
    }
    std::array<double, 1> t{(clock() - start) / reps};
    comm.allreduce_max(t);
    return t[0];
}

/// This rank's partners among `pairs`, ascending.
std::vector<int> partners_in(const std::vector<std::pair<int, int>>& pairs, int rank) {
    std::vector<int> partners;
    for (const auto& [a, b] : pairs) {
        if (a == rank || b == rank) {
            partners.push_back(a == rank ? b : a);
        }
    }
    std::sort(partners.begin(), partners.end());
    return partners;
}

/// One network's figures: `pairs` exchange at once, 1 float and then `each` floats a pair both
/// ways, a round each; the latency is the small exchange's time, the bandwidth (GB/s each way)
/// the big messages' bytes in one direction, pairs x each floats, over the extra time they
/// took. Collective; every rank returns the same.
struct NetworkFigures {
    Repeated latency;
    Repeated bandwidth;
};

NetworkFigures measure_network(Communicator& comm, const std::vector<std::pair<int, int>>& pairs,
                               index_t each, const CalibrationOptions& options) {
    CpuBackend backend(1);
    const std::vector<int> partners = partners_in(pairs, comm.rank());
    const double budget = options.seconds_per_figure / options.rounds;
    std::vector<double> latency;
    std::vector<double> bandwidth;
    for (int round = 0; round < options.rounds; ++round) {
        const double small = exchange_seconds(comm, backend, partners, 1, budget, options.clock);
        const double big = exchange_seconds(comm, backend, partners, each, budget, options.clock);
        latency.push_back(small);
        bandwidth.push_back(static_cast<double>(pairs.size()) * 4.0 * each /
                            std::max(1e-9, big - small) / 1e9);
    }
    return {summarize(latency), summarize(bandwidth)};
}

/// The training runs of the fits, a round each: the big run's epoch and aggregation phase and
/// the tiny run's epoch.
struct FitRuns {
    std::unique_ptr<TrainingProbe> big;   ///< GCN 3 x 128 on 60k vertices
    std::unique_ptr<TrainingProbe> tiny;  ///< GCN 3 x 16 on 2k vertices
};

void add_fit_probes(FigureRounds& rounds, FitRuns& runs, const Clock& clock) {
    rounds.add({"fit.big_epoch_s", "fit.big_aggregation_s"}, [&runs, clock] {
        const TrainingProbe::Round r = runs.big->round(3, clock);
        return std::vector<double>{r.epoch_s, r.aggregation_s};
    });
    // Small graphs: more epochs, for a stable median of a sub-millisecond epoch.
    rounds.add({"fit.tiny_epoch_s"},
               [&runs, clock] { return std::vector<double>{runs.tiny->round(13, clock).epoch_s}; });
}

/// Fits at `rates.threads` from the rounds of the fit runs, in order (each per round, with the
/// kernel figures' medians; the fitted figure the median over rounds, its spread recorded):
/// - spmm_scale: a GCN 3 x 128 on 60k vertices, measured / predicted aggregation phase (the
///   SpMM rates are timed on random graphs; a real graph's locality and degrees are not);
/// - step_s: a GCN 3 x 16 on 2000 vertices, whose epoch is mostly fixed costs: (measured -
///   predicted without them) / steps, at least the same round's kernel-level figure (which
///   misses the team's wake-ups between kernels and the host's work between steps);
/// - time_scale: the first run's measured / predicted epoch with both applied.
/// `base`: the machine being calibrated (its cache and cores; its rates are not used).
void fit(ThreadRates& rates, const MachineModel& base, const FitRuns& runs,
         const std::map<std::string, Repeated>& figures,
         const std::function<void(const std::string&)>& log) {
    MachineModel machine = base;
    rates.time_scale = 1.0;
    rates.spmm_scale = 1.0;
    const auto rounds = [&](const char* name) { return figures.at(name).rounds; };
    const auto predict = [&](const TrainingProbe& run) {
        machine.by_threads = {rates};
        const RunShape shape{
            .machine = &machine, .network = machine.shared_memory, .threads = rates.threads};
        return predict_graph_epoch(run.model(), Recompute::none, run.stats(), shape);
    };
    const auto fitted = [&](const char* name, const std::vector<double>& values) {
        const Repeated r = summarize(values);
        rates.spread[name] = r.spread;
        return r.median;
    };
    std::vector<double> per_round;
    const double spmm_s = predict(*runs.big).train_terms.spmm_s;
    for (const double a : rounds("fit.big_aggregation_s")) {
        per_round.push_back(a / spmm_s);
    }
    rates.spmm_scale = fitted("spmm_scale", per_round);

    const std::vector<double> kernel_step_s = rounds("step_s");  // the kernel-level figure
    rates.step_s = 0.0;
    const double without = predict(*runs.tiny).epoch_s;
    rates.step_s = 1e-6;
    const double steps = (predict(*runs.tiny).epoch_s - without) / 1e-6;
    per_round.clear();
    const std::vector<double> tiny = rounds("fit.tiny_epoch_s");
    for (std::size_t i = 0; i < tiny.size(); ++i) {
        per_round.push_back(std::max(kernel_step_s[i], (tiny[i] - without) / steps));
    }
    rates.step_s = fitted("step_s", per_round);

    const double predicted = predict(*runs.big).epoch_s;
    per_round.clear();
    for (const double e : rounds("fit.big_epoch_s")) {
        per_round.push_back(e / predicted);
    }
    rates.time_scale = fitted("time_scale", per_round);
    logf(log,
         "threads %d: GCN 3x128 on 60k vertices: aggregation %.1f ms (SpMM scale %.3f%s); GCN "
         "3x16 on 2k vertices: epoch %.3f ms, %.0f steps (step %.1f us%s); GCN 3x128: epoch "
         "%.1f ms, predicted %.1f ms: time scale %.3f%s",
         rates.threads, 1e3 * figures.at("fit.big_aggregation_s").median, rates.spmm_scale,
         spread_text(rates, "spmm_scale").c_str(), 1e3 * figures.at("fit.tiny_epoch_s").median,
         steps, 1e6 * rates.step_s, spread_text(rates, "step_s").c_str(),
         1e3 * figures.at("fit.big_epoch_s").median, 1e3 * predicted, rates.time_scale,
         spread_text(rates, "time_scale").c_str());
}

/// The kernels (and, with options.fit, the fit runs) at `threads` in interleaved rounds.
/// `base`: the machine being calibrated (host, cores, cache).
ThreadRates measure_threads(int threads, const MachineModel& base, const CalibrationOptions& o) {
    CpuBackend backend(threads);
    FigureRounds rounds;
    const double budget = o.seconds_per_figure / o.rounds;
    add_kernel_probes(rounds, backend, budget, base.cache_bytes, o.clock);
    FitRuns runs;
    if (o.fit) {
        logf(o.log, "threads %d: fitting: training a GCN 3x128 on 60k generated vertices", threads);
        runs.big = std::make_unique<TrainingProbe>(backend, 60000, 20, 128, 128);
        logf(o.log, "threads %d: fitting: training a GCN 3x16 on 2k generated vertices", threads);
        runs.tiny = std::make_unique<TrainingProbe>(backend, 2000, 5, 64, 16);
        add_fit_probes(rounds, runs, o.clock);
    }
    const std::map<std::string, Repeated> figures = rounds.run(o.rounds, [&](int round) {
        logf(o.log, "threads %d: round %d of %d done", threads, round, o.rounds);
    });
    // The load while calibrate's own threads ran (the last minute).
    const double load = load_average();
    ThreadRates r = rates_from(threads, figures);
    log_rates(r, o.log);
    if (o.fit) {
        fit(r, base, runs, figures, o.log);
    }
    logf(o.log,
         "threads %d: stream %.1f GB/s (in cache %.1f), step %.1f us, dropout %.1f ns/entry, "
         "softmax %.2f ns/logit, BLAS switch %.1f us, GEMM %.0f-%.0f (Xt dY %.0f-%.0f) GFLOP/s, "
         "SpMM %.2f-%.2f (in cache) %.2f-%.2f (out) G entries x cols/s",
         threads, r.memory_gbs, r.cache_gbs, 1e6 * r.step_s, 1e9 * r.dropout_entry_s,
         1e9 * r.softmax_entry_s, 1e6 * r.blas_switch_s, r.gemm.front().rate, r.gemm.back().rate,
         r.gemm_tn.front().rate, r.gemm_tn.back().rate, r.spmm_in_cache.front().rate,
         r.spmm_in_cache.back().rate, r.spmm_out_of_cache.front().rate,
         r.spmm_out_of_cache.back().rate);
    const std::string warning =
        spread_warning("threads " + std::to_string(threads), r.spread, load, base.cores);
    if (!warning.empty() && o.warn) {
        o.warn(warning);
    }
    return r;
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

std::string spread_warning(const std::string& what, const std::map<std::string, double>& spreads,
                           double load, int cores) {
    std::string worst;
    double largest = 0.0;
    int above = 0;
    for (const auto& [name, spread] : spreads) {
        above += spread > spread_threshold ? 1 : 0;
        if (worst.empty() || spread > largest) {
            worst = name;
            largest = spread;
        }
    }
    const bool loaded = load > static_cast<double>(cores);
    if (above == 0 && !loaded) {
        return "";
    }
    char text[512];
    if (above > 0) {
        std::snprintf(text, sizeof(text),
                      "%s: figures move between rounds: %s spread %.0f %% (%d figure%s above %.0f "
                      "%%), load average %.2f on %d cores%s; calibrate again on an idle machine",
                      what.c_str(), worst.c_str(), 100.0 * largest, above, above == 1 ? "" : "s",
                      100.0 * spread_threshold, load, cores, loaded ? " (above the cores)" : "");
    } else {
        std::snprintf(text, sizeof(text),
                      "%s: the machine is loaded: load average %.2f above its %d cores while "
                      "timing (largest spread %s %.0f %%); calibrate again on an idle machine",
                      what.c_str(), load, cores, worst.empty() ? "none" : worst.c_str(),
                      100.0 * largest);
    }
    return text;
}

std::string cores_warning(const ThreadRates& one, const ThreadRates& many) {
    if (many.threads <= one.threads || one.spmm_in_cache.empty() || one.gemm.empty() ||
        many.spmm_in_cache.empty() || many.gemm.empty()) {
        return "";
    }
    const double threads = static_cast<double>(many.threads) / one.threads;
    struct Scaling {
        const char* name;
        double width;
        double ratio;
    };
    const auto scaling = [](const char* name, const std::vector<RatePoint>& all,
                            const std::vector<RatePoint>& single) {
        const double rate = single.back().rate;
        return Scaling{name, single.back().x, rate > 0.0 ? all.back().rate / rate : 0.0};
    };
    const Scaling spmm = scaling("in-cache SpMM", many.spmm_in_cache, one.spmm_in_cache);
    const Scaling gemm = scaling("GEMM", many.gemm, one.gemm);
    const Scaling& least = spmm.ratio <= gemm.ratio ? spmm : gemm;
    const Scaling& other = &least == &spmm ? gemm : spmm;
    if (least.ratio >= core_scaling_floor * threads) {
        return "";
    }
    char text[400];
    std::snprintf(text, sizeof(text),
                  "threads %d: %s at width %.0f ran %.2fx as fast as one thread's (%s %.2fx); work "
                  "in cache scales with the cores, so they were shared while timing (another job, "
                  "SMT siblings, a VM's busy host) and every %d-thread figure is too slow; "
                  "calibrate again when the cores are free",
                  many.threads, least.name, least.width, least.ratio, other.name, other.ratio,
                  many.threads);
    return text;
}

NetworkPairs network_pairs(const std::vector<int>& nodes) {
    NetworkPairs pairs;
    const int size = static_cast<int>(nodes.size());
    const auto ranks_of = [&](int node) {
        std::vector<int> ranks;
        for (int r = 0; r < size; ++r) {
            if (nodes[static_cast<std::size_t>(r)] == node) {
                ranks.push_back(r);
            }
        }
        return ranks;
    };
    for (int r = 0; r < size && pairs.inside.empty(); ++r) {
        const std::vector<int> mates = ranks_of(nodes[static_cast<std::size_t>(r)]);
        if (mates.size() >= 2) {
            pairs.inside.emplace_back(mates[0], mates[1]);
        }
    }
    if (size == 0) {
        return pairs;
    }
    const auto other =
        std::find_if(nodes.begin(), nodes.end(), [&](int node) { return node != nodes.front(); });
    if (other != nodes.end()) {
        const std::vector<int> a = ranks_of(nodes.front());
        const std::vector<int> b = ranks_of(*other);
        for (int x : a) {
            for (int y : b) {
                pairs.across.emplace_back(x, y);
            }
        }
        pairs.split = static_cast<int>(std::max(a.size(), b.size()));
        pairs.across_nodes = {nodes.front(), *other};
        if (pairs.split > 1 && std::min(a.size(), b.size()) > 1) {
            for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
                pairs.paired.emplace_back(a[i], b[i]);
            }
        }
    }
    return pairs;
}

MachineModel merge_network(MachineModel kernels, const MachineModel& network) {
    const auto take = [&](const std::string& key) {
        for (const char* figure : {".latency_s", ".bandwidth_gbs"}) {
            const auto it = network.network_spread.find(key + figure);
            if (it != network.network_spread.end()) {
                kernels.network_spread[key + figure] = it->second;
            }
        }
    };
    if (network.mpi_measured) {
        kernels.shared_memory = network.shared_memory;
        kernels.mpi_measured = true;
        take("shared_memory");
    }
    if (network.inter_node_measured) {
        kernels.inter_node = network.inter_node;
        kernels.inter_node_paired = network.inter_node_paired;
        kernels.inter_node_measured = true;
        take("inter_node");
        take("inter_node_paired");
    }
    return kernels;
}

MachineModel with_link_by_hand(MachineModel m, double link_gbit, double latency_us) {
    // The link given by hand has one figure, whatever the pattern.
    if (link_gbit > 0) {
        m.inter_node.bandwidth_gbs = link_gbit / 8.0;
        m.inter_node_paired.bandwidth_gbs = m.inter_node.bandwidth_gbs;
        m.inter_node_measured = false;
        m.network_spread.erase("inter_node.bandwidth_gbs");
        m.network_spread.erase("inter_node_paired.bandwidth_gbs");
    }
    if (latency_us > 0) {
        m.inter_node.latency_s = latency_us * 1e-6;
        m.inter_node_paired.latency_s = m.inter_node.latency_s;
        m.inter_node_measured = false;
        m.network_spread.erase("inter_node.latency_s");
        m.network_spread.erase("inter_node_paired.latency_s");
    }
    return m;
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
    m.shared_memory = default_machine().shared_memory;
    m.inter_node = default_machine().inter_node;
    m.inter_node_paired = m.inter_node;
    STRATA_CHECK(options.rounds >= 3, "calibrate: rounds must be at least 3, got ", options.rounds);
    // Kernels with one process only: waiting ranks would spin in MPI on the cores measured.
    if (comm.size() == 1) {
        std::vector<int> counts{1};
        if (m.cores > 1) {
            counts.push_back(m.cores);
        }
        for (int threads : counts) {
            m.by_threads.push_back(measure_threads(threads, m, options));
        }
        const std::string warning = cores_warning(m.by_threads.front(), m.by_threads.back());
        if (!warning.empty() && options.warn) {
            options.warn(warning);
        }
    }
    // The network inside a node (one pair) and across nodes (every rank of a node with every
    // rank of another, at once), in rounds.
    if (comm.size() >= 2) {
        std::vector<int> nodes(static_cast<std::size_t>(comm.size()));
        for (int r = 0; r < comm.size(); ++r) {
            nodes[static_cast<std::size_t>(r)] = comm.node_of(r);
        }
        const NetworkPairs pairs = network_pairs(nodes);
        // A message twice the last-level cache (16 MB to 256 MB): exchanges of the graphs worth
        // distributing stream from memory, slower than between caches on one node.
        const auto big_floats = static_cast<index_t>(std::clamp(2.0 * m.cache_bytes / sizeof(float),
                                                                static_cast<double>(1 << 22),
                                                                static_cast<double>(1 << 26)));
        // Across nodes the busiest rank sends as much as one pair inside: the big message split
        // among its partners (as many as the larger node has ranks).
        const auto record = [&](const std::vector<std::pair<int, int>>& which, Network& network,
                                int split, const std::string& key, const std::string& what) {
            const NetworkFigures f =
                measure_network(comm, which, std::max<index_t>(1, big_floats / split), options);
            network = {.latency_s = f.latency.median, .bandwidth_gbs = f.bandwidth.median};
            m.network_spread[key + ".latency_s"] = f.latency.spread;
            m.network_spread[key + ".bandwidth_gbs"] = f.bandwidth.spread;
            char line[240];
            std::snprintf(line, sizeof(line),
                          "network %s: latency %.2f us (spread %.0f %%), bandwidth %.3f GB/s each "
                          "way (spread %.0f %%)",
                          what.c_str(), 1e6 * f.latency.median, 100 * f.latency.spread,
                          f.bandwidth.median, 100 * f.bandwidth.spread);
            log(line);
        };
        if (!pairs.inside.empty()) {
            record(pairs.inside, m.shared_memory, 1, "shared_memory",
                   "inside a node (ranks " + std::to_string(pairs.inside[0].first) + "-" +
                       std::to_string(pairs.inside[0].second) + ")");
            m.mpi_measured = true;
        }
        if (!pairs.across.empty()) {
            const auto [a, b] = pairs.across_nodes;
            const auto count = [&](int node) {
                return std::count(nodes.begin(), nodes.end(), node);
            };
            record(pairs.across, m.inter_node, pairs.split, "inter_node",
                   "across nodes (" + std::to_string(count(a)) + " x " + std::to_string(count(b)) +
                       " ranks of nodes " + std::to_string(a) + " and " + std::to_string(b) +
                       ", every pair at once)");
            if (pairs.paired.empty()) {  // one partner a rank already: the same pattern
                paired_as_inter_node(m);
            } else {
                std::string which;
                for (const auto& [x, y] : pairs.paired) {
                    if (!which.empty()) {
                        which += ", ";
                    }
                    which += std::to_string(x);
                    which += '-';
                    which += std::to_string(y);
                }
                record(pairs.paired, m.inter_node_paired, 1, "inter_node_paired",
                       "across nodes, paired (ranks " + which + ", one partner each, at once)");
            }
            m.inter_node_measured = true;
        }
        const std::string warning =
            spread_warning("network", m.network_spread, load_average(), m.cores);
        if (root && !warning.empty() && options.warn) {
            options.warn(warning);
        }
    }
    return m;
}

}  // namespace strata::planner
