// Degree-corrected planted partition: counter-based random numbers (a value is a pure function
// of seed, purpose and index), two passes over the edges (count, then fill rows in place), and
// a per-row sort + unique that makes the result independent of the thread schedule.
#include "datasets/generate.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>
#include <span>
#include <utility>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "src/base/error.hpp"
#include "src/base/release.hpp"
#include "src/device/counter_rng.hpp"

namespace strata {
namespace {

// Purposes of the random streams derived from the seed.
enum Stream : std::uint64_t { weights = 1, edges = 2, centroids = 3, noise = 4, labels = 5 };

std::uint64_t stream_key(std::uint64_t seed, Stream s) {
    return mix64(mix64(seed) ^ (static_cast<std::uint64_t>(s) * 0xd1b54a32d192ed03ULL));
}

/// The i-th output of the SplitMix64 stream `key`: a pure function of (key, i).
std::uint64_t counter(std::uint64_t key, std::uint64_t i) {
    return mix64(key + i * 0x9e3779b97f4a7c15ULL);
}

/// Uniform in [0, 1) with 53 random bits.
double unit(std::uint64_t r) {
    return static_cast<double>(r >> 11) * 0x1.0p-53;
}

/// Two independent standard normals from two independent 64-bit values (Box–Muller).
std::pair<double, double> gaussian_pair(std::uint64_t r1, std::uint64_t r2) {
    const double radius = std::sqrt(-2.0 * std::log(1.0 - unit(r1)));  // 1 - u in (0, 1]
    const double angle = 2.0 * std::numbers::pi * unit(r2);
    return {radius * std::cos(angle), radius * std::sin(angle)};
}

/// Walker/Vose alias tables for several independent groups stored side by side: a group owns
/// entries [offset, offset + n) and samples an index local to its range in O(1), with one
/// cache line touched per sample (probability and alias packed together).
struct AliasTables {
    struct Entry {
        float prob;     ///< keep the drawn index with this probability
        index_t alias;  ///< else take this one (local to the group)
    };
    std::vector<Entry> entries;

    explicit AliasTables(std::size_t n) : entries(n) {}

    void build_group(std::span<const double> w, std::size_t offset) {
        const std::size_t n = w.size();
        double total = 0.0;
        for (double x : w) {
            total += x;
        }
        std::vector<double> scaled(n);
        std::vector<index_t> small;
        std::vector<index_t> large;
        for (std::size_t i = 0; i < n; ++i) {
            scaled[i] = w[i] * static_cast<double>(n) / total;
            (scaled[i] < 1.0 ? small : large).push_back(static_cast<index_t>(i));
        }
        while (!small.empty() && !large.empty()) {
            const auto s = static_cast<std::size_t>(small.back());
            small.pop_back();
            const index_t l = large.back();
            entries[offset + s] = {static_cast<float>(scaled[s]), l};
            scaled[static_cast<std::size_t>(l)] -= 1.0 - scaled[s];
            if (scaled[static_cast<std::size_t>(l)] < 1.0) {
                large.pop_back();
                small.push_back(l);
            }
        }
        for (const auto* rest : {&large, &small}) {  // leftovers are 1 up to rounding
            for (index_t i : *rest) {
                entries[offset + static_cast<std::size_t>(i)] = {1.0f, i};
            }
        }
    }

    /// Index local to the group [offset, offset + n), from two random 64-bit values.
    [[nodiscard]] std::int64_t sample(std::size_t offset, std::uint64_t n, std::uint64_t r1,
                                      std::uint64_t r2) const {
        const std::size_t i = static_cast<std::size_t>(r1 % n);
        const Entry& e = entries[offset + i];
        return unit(r2) < static_cast<double>(e.prob) ? static_cast<std::int64_t>(i) : e.alias;
    }
};

void check_options(const GenerateOptions& o) {
    STRATA_CHECK(o.num_vertices >= 2 && o.num_vertices <= std::numeric_limits<index_t>::max(),
                 "generate: --nodes ", o.num_vertices, " out of range [2, ",
                 std::numeric_limits<index_t>::max(), "]");
    STRATA_CHECK(o.avg_degree > 0.0 && o.avg_degree <= static_cast<double>(o.num_vertices - 1),
                 "generate: --avg-degree ", o.avg_degree, " out of range (0, N-1]");
    STRATA_CHECK(o.num_features >= 1, "generate: --features ", o.num_features, " must be >= 1");
    STRATA_CHECK(o.num_classes >= 1 && o.num_classes <= o.num_vertices, "generate: --classes ",
                 o.num_classes, " out of range [1, N]");
    STRATA_CHECK(o.homophily >= 0.0 && o.homophily <= 1.0, "generate: --homophily ", o.homophily,
                 " out of range [0, 1]");
    STRATA_CHECK(o.degree_exponent > 2.0 && std::isfinite(o.degree_exponent),
                 "generate: --degree-exponent ", o.degree_exponent, " must be > 2");
    STRATA_CHECK(o.feature_noise >= 0.0 && std::isfinite(o.feature_noise),
                 "generate: --feature-noise ", o.feature_noise, " must be >= 0");
    STRATA_CHECK(o.label_noise >= 0.0 && o.label_noise <= 1.0, "generate: --label-noise ",
                 o.label_noise, " out of range [0, 1]");
    for (double f : {o.train_fraction, o.val_fraction, o.test_fraction}) {
        STRATA_CHECK(f >= 0.0 && f <= 1.0, "generate: split fraction ", f, " out of range [0, 1]");
    }
    STRATA_CHECK(o.train_fraction + o.val_fraction + o.test_fraction <= 1.0 + 1e-9,
                 "generate: split fractions sum to ",
                 o.train_fraction + o.val_fraction + o.test_fraction, " > 1");
}

/// Seeded Fisher–Yates permutation of [0, n) (sequential: the result is the seed's alone).
std::vector<index_t> permutation(std::int64_t n, std::uint64_t seed) {
    std::vector<index_t> p(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < p.size(); ++i) {
        p[i] = static_cast<index_t>(i);
    }
    std::mt19937_64 rng(seed);
    for (std::size_t i = p.size(); i > 1; --i) {
        std::swap(p[i - 1], p[static_cast<std::size_t>(rng() % i)]);
    }
    return p;
}

}  // namespace

GraphDataset generate_graph(const GenerateOptions& o) {
    check_options(o);
    const std::int64_t n = o.num_vertices;
    const auto nz = static_cast<std::size_t>(n);
    const std::int64_t c = o.num_classes;

    // Classes: contiguous blocks of ids, or blocks of a random permutation (--shuffle).
    std::vector<std::int64_t> label(nz);
    {
        const std::vector<index_t> perm =
            o.shuffle ? permutation(n, mix64(o.seed ^ 0x5u)) : std::vector<index_t>{};
        for (std::size_t v = 0; v < nz; ++v) {
            const std::int64_t rank = o.shuffle ? perm[v] : static_cast<std::int64_t>(v);
            label[v] = rank * c / n;
        }
    }
    // Members of each class, ascending, and where each class starts.
    std::vector<std::size_t> class_start(static_cast<std::size_t>(c) + 1, 0);
    for (std::int64_t l : label) {
        ++class_start[static_cast<std::size_t>(l) + 1];
    }
    for (std::size_t k = 1; k < class_start.size(); ++k) {
        class_start[k] += class_start[k - 1];
    }
    std::vector<index_t> members(nz);
    {
        std::vector<std::size_t> next(class_start.begin(), class_start.end() - 1);
        for (std::size_t v = 0; v < nz; ++v) {
            members[next[static_cast<std::size_t>(label[v])]++] = static_cast<index_t>(v);
        }
    }

    // Degree weights: Pareto(1, γ-1), capped so that no vertex expects more than sqrt(N·D)
    // neighbours (E[w] = a/(a-1) maps to the average degree D).
    const double a = o.degree_exponent - 1.0;
    const double mean_w = a / (a - 1.0);
    const double cap = mean_w * std::sqrt(static_cast<double>(n) / o.avg_degree);
    std::vector<double> weight(nz);
    const std::uint64_t weight_key = stream_key(o.seed, weights);
#pragma omp parallel for schedule(static)
    for (std::int64_t v = 0; v < n; ++v) {
        const double u = unit(counter(weight_key, static_cast<std::uint64_t>(v)));
        weight[static_cast<std::size_t>(v)] = std::min(cap, std::pow(1.0 - u, -1.0 / a));
    }
    AliasTables global(nz);
    global.build_group(weight, 0);
    AliasTables by_class(nz);
    {
        std::vector<double> w(nz);
        for (std::size_t i = 0; i < nz; ++i) {
            w[i] = weight[static_cast<std::size_t>(members[i])];
        }
        for (std::size_t k = 0; k + 1 < class_start.size(); ++k) {
            by_class.build_group(std::span<const double>(w).subspan(
                                     class_start[k], class_start[k + 1] - class_start[k]),
                                 class_start[k]);
        }
    }
    release(weight);

    // Undirected edge i: source by weight; destination by weight within the source's class
    // with probability H, else among all vertices.
    const auto num_draws =
        static_cast<std::int64_t>(std::llround(static_cast<double>(n) * o.avg_degree / 2.0));
    const std::uint64_t edge_key = stream_key(o.seed, edges);
    auto draw = [&](std::int64_t i, std::int64_t& u, std::int64_t& v) {
        const std::uint64_t base = 5 * static_cast<std::uint64_t>(i);  // 5 values per draw
        u = global.sample(0, static_cast<std::uint64_t>(n), counter(edge_key, base),
                          counter(edge_key, base + 1));
        const std::uint64_t r1 = counter(edge_key, base + 3);
        const std::uint64_t r2 = counter(edge_key, base + 4);
        if (unit(counter(edge_key, base + 2)) < o.homophily) {
            const auto k = static_cast<std::size_t>(label[static_cast<std::size_t>(u)]);
            const std::size_t size = class_start[k + 1] - class_start[k];
            v = members[class_start[k] +
                        static_cast<std::size_t>(by_class.sample(class_start[k], size, r1, r2))];
        } else {
            v = global.sample(0, static_cast<std::uint64_t>(n), r1, r2);
        }
    };

    // Pass 1: row lengths (both directions of every non-loop draw).
    GraphDataset g;
    g.name = o.name;
    g.num_classes = c;
    g.indptr.assign(nz + 1, 0);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < num_draws; ++i) {
        std::int64_t u = 0;
        std::int64_t v = 0;
        draw(i, u, v);
        if (u != v) {
            std::atomic_ref<std::int64_t>(g.indptr[static_cast<std::size_t>(u) + 1])
                .fetch_add(1, std::memory_order_relaxed);
            std::atomic_ref<std::int64_t>(g.indptr[static_cast<std::size_t>(v) + 1])
                .fetch_add(1, std::memory_order_relaxed);
        }
    }
    for (std::size_t v = 1; v <= nz; ++v) {
        g.indptr[v] += g.indptr[v - 1];
    }
    // Pass 2: fill rows in any order (atomic cursors); the sort below fixes the order.
    g.indices.resize(static_cast<std::size_t>(g.indptr.back()));
    {
        std::vector<std::int64_t> cursor(g.indptr.begin(), g.indptr.end() - 1);
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < num_draws; ++i) {
            std::int64_t u = 0;
            std::int64_t v = 0;
            draw(i, u, v);
            if (u != v) {
                const auto su = std::atomic_ref<std::int64_t>(cursor[static_cast<std::size_t>(u)])
                                    .fetch_add(1, std::memory_order_relaxed);
                const auto sv = std::atomic_ref<std::int64_t>(cursor[static_cast<std::size_t>(v)])
                                    .fetch_add(1, std::memory_order_relaxed);
                g.indices[static_cast<std::size_t>(sv)] = u;  // edge u -> v lives in row v
                g.indices[static_cast<std::size_t>(su)] = v;
            }
        }
    }
    // Sort and deduplicate each row in place, then compact the rows leftwards (keeping the
    // capacity: no second copy).
    sort_unique_rows(g.indptr, g.indices);

    // Features: class centroid (standard normal) + σ·noise (standard normal). Normals come in
    // Box–Muller pairs: columns (2p, 2p+1) of a row share counters 2q, 2q+1 of their stream.
    const auto f = static_cast<std::size_t>(o.num_features);
    const std::size_t pairs_per_row = (f + 1) / 2;
    std::vector<double> centroid(static_cast<std::size_t>(c) * f);
    const std::uint64_t centroid_key = stream_key(o.seed, centroids);
    for (std::size_t k = 0; k < centroid.size(); k += 2) {
        const auto [z0, z1] = gaussian_pair(counter(centroid_key, k), counter(centroid_key, k + 1));
        centroid[k] = z0;
        if (k + 1 < centroid.size()) {
            centroid[k + 1] = z1;
        }
    }
    g.features = HostMatrix(n, o.num_features);
    const std::uint64_t noise_key = stream_key(o.seed, noise);
#pragma omp parallel for schedule(static)
    for (std::int64_t v = 0; v < n; ++v) {
        float* row = g.features.row(v);
        const double* mean =
            centroid.data() + static_cast<std::size_t>(label[static_cast<std::size_t>(v)]) * f;
        for (std::size_t p = 0; p < pairs_per_row; ++p) {
            const std::uint64_t q = 2 * (static_cast<std::uint64_t>(v) * pairs_per_row + p);
            const auto [z0, z1] = gaussian_pair(counter(noise_key, q), counter(noise_key, q + 1));
            const std::size_t j = 2 * p;
            row[j] = static_cast<float>(mean[j] + o.feature_noise * z0);
            if (j + 1 < f) {
                row[j + 1] = static_cast<float>(mean[j + 1] + o.feature_noise * z1);
            }
        }
    }
    // Label noise: vertex v keeps its class unless draw 2v of the labels stream falls below
    // label_noise; then draw 2v + 1 picks a class uniformly (possibly the same one).
    if (o.label_noise > 0.0) {
        const std::uint64_t label_key = stream_key(o.seed, labels);
        for (std::size_t v = 0; v < nz; ++v) {
            if (unit(counter(label_key, 2 * v)) < o.label_noise) {
                label[v] = static_cast<std::int64_t>(counter(label_key, 2 * v + 1) %
                                                     static_cast<std::uint64_t>(c));
            }
        }
    }
    g.labels = std::move(label);

    // Split: exact sizes round(N·fraction) over a seeded permutation of the vertices.
    const std::vector<index_t> order = permutation(n, mix64(o.seed ^ 0x6u));
    const auto count = [&](double fraction) {
        return static_cast<std::size_t>(std::llround(fraction * static_cast<double>(n)));
    };
    const std::size_t num_train = std::min(nz, count(o.train_fraction));
    const std::size_t num_val = std::min(nz - num_train, count(o.val_fraction));
    const std::size_t num_test = std::min(nz - num_train - num_val, count(o.test_fraction));
    g.train_mask.assign(nz, 0);
    g.val_mask.assign(nz, 0);
    g.test_mask.assign(nz, 0);
    for (std::size_t i = 0; i < num_train + num_val + num_test; ++i) {
        auto& mask =
            i < num_train ? g.train_mask : (i < num_train + num_val ? g.val_mask : g.test_mask);
        mask[static_cast<std::size_t>(order[i])] = 1;
    }
    return g;
}

}  // namespace strata
