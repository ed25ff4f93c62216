// bench/spmm: CPU SpMM (y = A x, F features) on a generated graph far larger than the cache,
// in random and in community vertex order, and the random order after the project's local
// order (RCM, partition/local_order.hpp), against a STREAM triad measured in the same run.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include <CLI/CLI.hpp>

#include "bench/triad.hpp"
#include "partition/local_order.hpp"
#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/device/counter_rng.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"

namespace strata {
namespace {

struct Options {
    std::int64_t nodes = 1'000'000;
    std::int64_t edges = 20'000'000;
    index_t features = 128;
    int reps = 5;
    int threads = 2;
    index_t community = 1000;  ///< vertices per community
    double inside = 0.9;       ///< fraction of each vertex's edges inside its community
    std::uint64_t seed = 1;
    std::int64_t triad_elements = 80'000'000;
};

/// Uniform integer in [0, m) from the top 32 bits of a 64-bit random value (m < 2^32).
std::uint64_t below(std::uint64_t random, std::uint64_t m) {
    return ((random >> 32) * m) >> 32;
}

/// ~`edges` directed edges in rows of 0.5x-1.5x the mean degree; community c holds vertices
/// [c·size, (c+1)·size) and a fraction `inside` of each vertex's edges stay in its community
/// (the locality a METIS renumbering gives). Values 1/degree, column ids sorted.
HostCsr community_graph(const Options& opt) {
    const auto n = static_cast<index_t>(opt.nodes);
    const std::int64_t mean = std::max<std::int64_t>(1, opt.edges / opt.nodes);
    const std::int64_t lo = std::max<std::int64_t>(1, mean / 2);
    const std::int64_t span = 2 * (mean - lo) + 1;  // degrees lo .. 2·mean - lo
    HostCsr a;
    a.rows = n;
    a.cols = n;
    a.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
    std::int64_t total = 0;
    for (index_t v = 0; v < n; ++v) {
        total += lo + static_cast<std::int64_t>(
                          below(mix64(opt.seed ^ (static_cast<std::uint64_t>(v) << 20)),
                                static_cast<std::uint64_t>(span)));
        STRATA_CHECK(total < (std::int64_t{1} << 31), "spmm: ", total,
                     " edges do not fit 32-bit CSR offsets");
        a.row_ptr[static_cast<std::size_t>(v) + 1] = static_cast<index_t>(total);
    }
    a.col_idx.resize(static_cast<std::size_t>(total));
    a.values.resize(static_cast<std::size_t>(total));
    const double inside_cut = opt.inside * 4294967296.0;
#pragma omp parallel for num_threads(opt.threads) schedule(dynamic, 4096)
    for (index_t v = 0; v < n; ++v) {
        const index_t begin = a.row_ptr[static_cast<std::size_t>(v)];
        const index_t end = a.row_ptr[static_cast<std::size_t>(v) + 1];
        const index_t first = v / opt.community * opt.community;
        const index_t size = std::min(opt.community, n - first);
        std::uint64_t state = mix64(opt.seed + 0x5bd1e995ULL * static_cast<std::uint64_t>(v));
        for (index_t k = begin; k < end; ++k) {
            const std::uint64_t r = mix64(state++);
            const bool local = static_cast<double>(r & 0xffffffffULL) < inside_cut;
            const std::uint64_t r2 = mix64(state++);
            a.col_idx[static_cast<std::size_t>(k)] =
                local ? first + static_cast<index_t>(below(r2, static_cast<std::uint64_t>(size)))
                      : static_cast<index_t>(below(r2, static_cast<std::uint64_t>(n)));
            a.values[static_cast<std::size_t>(k)] = 1.0f / static_cast<float>(end - begin);
        }
        std::sort(a.col_idx.begin() + begin, a.col_idx.begin() + end);
    }
    return a;
}

/// The same graph with vertex v renamed perm[v] (rows and columns), rows re-sorted.
HostCsr renumber(const HostCsr& a, const std::vector<index_t>& perm, int threads) {
    const auto n = static_cast<std::size_t>(a.rows);
    std::vector<index_t> old_of(n);
    for (std::size_t v = 0; v < n; ++v) {
        old_of[static_cast<std::size_t>(perm[v])] = static_cast<index_t>(v);
    }
    HostCsr b;
    b.rows = a.rows;
    b.cols = a.cols;
    b.row_ptr.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::size_t>(old_of[i]);
        b.row_ptr[i + 1] = b.row_ptr[i] + (a.row_ptr[v + 1] - a.row_ptr[v]);
    }
    b.col_idx.resize(a.col_idx.size());
    b.values.resize(a.values.size());
    const auto rows = static_cast<index_t>(n);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4096)
    for (index_t i = 0; i < rows; ++i) {
        const auto v = static_cast<std::size_t>(old_of[static_cast<std::size_t>(i)]);
        index_t out = b.row_ptr[static_cast<std::size_t>(i)];
        const index_t first = out;
        for (index_t k = a.row_ptr[v]; k < a.row_ptr[v + 1]; ++k, ++out) {
            b.col_idx[static_cast<std::size_t>(out)] =
                perm[static_cast<std::size_t>(a.col_idx[static_cast<std::size_t>(k)])];
            b.values[static_cast<std::size_t>(out)] = a.values[static_cast<std::size_t>(k)];
        }
        std::sort(b.col_idx.begin() + first, b.col_idx.begin() + out);  // values are all 1/deg
    }
    return b;
}

/// Transparent huge pages backing this process now, in MiB (0 if unknown).
double anon_huge_mib() {
    std::ifstream in("/proc/self/smaps_rollup");
    for (std::string key; in >> key;) {
        if (key == "AnonHugePages:") {
            double kib = 0.0;
            in >> kib;
            return kib / 1024.0;
        }
        in.ignore(1 << 10, '\n');
    }
    return 0.0;
}

struct VariantResult {
    const char* name;
    double median_s = 0.0;
    double gbs = 0.0;
    double ratio = 0.0;
    double max_rel_error = 0.0;
};

/// Times y = A x (beta 0) `reps` times after one warm-up (which also builds the plan), and
/// checks 64 sampled rows against a double-precision reference.
VariantResult run_variant(const char* name, CpuBackend& backend, const HostCsr& host,
                          const DenseMatrix& x, DenseMatrix& y, const Options& opt,
                          double triad_median_gbs) {
    const CsrMatrix a = CsrMatrix::upload(backend, host);
    backend.spmm(a, x.view(), y.view(), 0.0f);
    std::vector<double> seconds;
    for (int rep = 0; rep < opt.reps; ++rep) {
        Stopwatch watch;
        backend.spmm(a, x.view(), y.view(), 0.0f);
        seconds.push_back(watch.seconds());
    }
    std::sort(seconds.begin(), seconds.end());
    VariantResult r{name};
    r.median_s = seconds[seconds.size() / 2];
    const auto nnz = static_cast<double>(host.nnz());
    const auto n = static_cast<double>(host.rows);
    const auto f = static_cast<double>(opt.features);
    const double bytes = nnz * (4 + 4) + nnz * f * 4 + n * f * 4 + n * 4;
    r.gbs = bytes / r.median_s / 1e9;
    r.ratio = r.gbs / triad_median_gbs;
    // The CPU backend's memory is host memory: read y and x in place.
    const auto width = static_cast<std::size_t>(opt.features);
    for (int s = 0; s < 64; ++s) {
        const auto row =
            static_cast<std::size_t>(below(mix64(opt.seed * 977 + static_cast<std::uint64_t>(s)),
                                           static_cast<std::uint64_t>(host.rows)));
        for (std::size_t j = 0; j < width; ++j) {
            double ref = 0.0;
            double mag = 0.0;
            for (index_t k = host.row_ptr[row]; k < host.row_ptr[row + 1]; ++k) {
                const double term =
                    static_cast<double>(host.values[static_cast<std::size_t>(k)]) *
                    x.data()[static_cast<std::size_t>(host.col_idx[static_cast<std::size_t>(k)]) *
                                 width +
                             j];
                ref += term;
                mag += std::abs(term);
            }
            const double got = y.data()[row * width + j];
            r.max_rel_error = std::max(r.max_rel_error, std::abs(got - ref) / (mag + 1e-30));
        }
    }
    return r;
}

int run(const Options& opt) {
    STRATA_CHECK(opt.nodes > 0 && opt.nodes < (std::int64_t{1} << 31), "spmm: --nodes ", opt.nodes,
                 " must be in [1, 2^31)");
    STRATA_CHECK(opt.edges > 0 && opt.features > 0 && opt.reps > 0 && opt.threads > 0,
                 "spmm: --edges, --features, --reps and --threads must be positive");
    Stopwatch total;
    const bench::TriadResult triad =
        bench::run_triad(static_cast<std::size_t>(opt.triad_elements), 10, opt.threads);
    std::printf("triad: %lld doubles x 3, %d threads, %d reps: best %.1f GB/s, median %.1f GB/s\n",
                static_cast<long long>(triad.elements), triad.threads, triad.reps, triad.best_gbs,
                triad.median_gbs);

    Stopwatch generate;
    const HostCsr community = community_graph(opt);
    std::vector<index_t> perm(static_cast<std::size_t>(opt.nodes));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(opt.seed));
    const HostCsr random = renumber(community, perm, opt.threads);
    std::printf(
        "graph: %lld vertices, %lld directed edges, %d-vertex communities with %.0f%% of "
        "edges inside; generated in %.1f s\n",
        static_cast<long long>(opt.nodes), static_cast<long long>(community.nnz()), opt.community,
        100.0 * opt.inside, generate.seconds());
    Stopwatch ordering;
    const std::vector<index_t> order = rcm_order(random);  // what --local-order rcm computes
    std::vector<index_t> position(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        position[static_cast<std::size_t>(order[i])] = static_cast<index_t>(i);
    }
    const double rcm_seconds = ordering.seconds();
    const HostCsr reordered = renumber(random, position, opt.threads);
    Stopwatch metis_ordering;
    const std::vector<index_t> blocks = metis_block_order(random);  // --local-order metis
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        position[static_cast<std::size_t>(blocks[i])] = static_cast<index_t>(i);
    }
    const double metis_seconds = metis_ordering.seconds();
    const HostCsr metis_blocks = renumber(random, position, opt.threads);
    std::printf("local order of the random copy: rcm in %.2f s, metis blocks in %.2f s\n",
                rcm_seconds, metis_seconds);

    CpuBackend backend(opt.threads);
    DenseMatrix x(backend, community.rows, opt.features);
    DenseMatrix y(backend, community.rows, opt.features);
    const auto size = static_cast<std::int64_t>(x.view().size());
    float* xd = x.data();
    float* yd = y.data();
#pragma omp parallel for num_threads(opt.threads) schedule(static)
    for (std::int64_t i = 0; i < size; ++i) {  // first touch by the threads that use the pages
        xd[i] = static_cast<float>(mix64(static_cast<std::uint64_t>(i)) >> 40) / 16777216.0f - 0.5f;
        yd[i] = 0.0f;
    }

    const VariantResult results[] = {
        run_variant("random order", backend, random, x, y, opt, triad.median_gbs),
        run_variant("community order", backend, community, x, y, opt, triad.median_gbs),
        run_variant("random, rcm", backend, reordered, x, y, opt, triad.median_gbs),
        run_variant("random, metis", backend, metis_blocks, x, y, opt, triad.median_gbs)};
    std::printf("transparent huge pages in use: %.0f MiB\n", anon_huge_mib());
    std::printf("%-16s %10s %8s %15s %14s\n", "variant", "median_s", "GB/s", "ratio_to_triad",
                "max_rel_err");
    for (const VariantResult& r : results) {
        std::printf("%-16s %10.3f %8.2f %15.2f %14.1e\n", r.name, r.median_s, r.gbs, r.ratio,
                    r.max_rel_error);
    }
    std::printf(
        "(GB/s counts nnz*(4+4) + nnz*F*4 + N*F*4 + N*4 bytes; median of %d reps, %d "
        "threads, F = %d; total %.1f s)\n",
        opt.reps, opt.threads, opt.features, total.seconds());
    std::printf(
        "{\"bench\":\"spmm\",\"nodes\":%lld,\"nnz\":%lld,\"features\":%d,\"threads\":%d,"
        "\"reps\":%d,\"triad_best_gbs\":%.3f,\"triad_median_gbs\":%.3f,"
        "\"random\":{\"median_s\":%.5f,\"gbs\":%.3f,\"ratio\":%.3f},"
        "\"community\":{\"median_s\":%.5f,\"gbs\":%.3f,\"ratio\":%.3f},"
        "\"random_rcm\":{\"median_s\":%.5f,\"gbs\":%.3f,\"ratio\":%.3f,\"order_s\":%.3f},"
        "\"random_metis\":{\"median_s\":%.5f,\"gbs\":%.3f,\"ratio\":%.3f,\"order_s\":%.3f}}\n",
        static_cast<long long>(opt.nodes), static_cast<long long>(community.nnz()), opt.features,
        opt.threads, opt.reps, triad.best_gbs, triad.median_gbs, results[0].median_s,
        results[0].gbs, results[0].ratio, results[1].median_s, results[1].gbs, results[1].ratio,
        results[2].median_s, results[2].gbs, results[2].ratio, rcm_seconds, results[3].median_s,
        results[3].gbs, results[3].ratio, metis_seconds);
    for (const VariantResult& r : results) {
        STRATA_CHECK(r.max_rel_error < 1e-4, "spmm: ", r.name, " result differs from the ",
                     "double-precision reference by ", r.max_rel_error);
    }
    return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
    strata::Options opt;
    CLI::App app{"CPU SpMM bandwidth on a generated graph, next to a STREAM triad"};
    app.add_option("--nodes", opt.nodes, "vertices")->capture_default_str();
    app.add_option("--edges", opt.edges, "directed edges (about)")->capture_default_str();
    app.add_option("--features", opt.features, "feature columns F")->capture_default_str();
    app.add_option("--reps", opt.reps, "timed repetitions per variant")->capture_default_str();
    app.add_option("--threads", opt.threads, "OpenMP threads")->capture_default_str();
    app.add_option("--triad-elements", opt.triad_elements, "doubles per triad array")
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        return strata::run(opt);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "spmm: %s\n", e.what());
        return 1;
    }
}
