// Graph statistics; the symmetry test binary-searches sorted rows (sorting a copy if needed).
#include "datasets/graph_stats.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

namespace strata {

std::int64_t degree_bin_low(std::size_t k) {
    return k == 0 ? 0 : std::int64_t{1} << (k - 1);
}

GraphStats graph_stats(const GraphDataset& g) {
    GraphStats s;
    const std::int64_t n = g.num_vertices();
    const auto nz = static_cast<std::size_t>(n);
    s.num_vertices = n;
    s.num_edges = g.num_edges();
    s.num_features = g.num_features();
    s.num_classes = g.num_classes;
    s.weighted = !g.edge_weight.empty();

    std::vector<std::int64_t> degree(nz);
    std::vector<std::uint8_t> has_out(nz, 0);
    for (std::size_t v = 0; v < nz; ++v) {
        degree[v] = g.indptr[v + 1] - g.indptr[v];
        for (auto k = g.indptr[v]; k < g.indptr[v + 1]; ++k) {
            const auto u = g.indices[static_cast<std::size_t>(k)];
            has_out[static_cast<std::size_t>(u)] = 1;
            s.self_loops += u == static_cast<std::int64_t>(v) ? 1 : 0;
        }
    }
    for (std::size_t v = 0; v < nz; ++v) {
        s.isolated_vertices += degree[v] == 0 && has_out[v] == 0 ? 1 : 0;
        const auto bin =
            static_cast<std::size_t>(std::bit_width(static_cast<std::uint64_t>(degree[v])));
        if (s.degree_histogram.size() <= bin) {
            s.degree_histogram.resize(bin + 1, 0);
        }
        ++s.degree_histogram[bin];
    }
    if (n > 0) {
        s.degree_min = *std::min_element(degree.begin(), degree.end());
        s.degree_max = *std::max_element(degree.begin(), degree.end());
        s.degree_mean = static_cast<double>(s.num_edges) / static_cast<double>(n);
        std::vector<std::int64_t> sorted = degree;
        std::sort(sorted.begin(), sorted.end());
        s.degree_median = nz % 2 == 1
                              ? static_cast<double>(sorted[nz / 2])
                              : 0.5 * static_cast<double>(sorted[nz / 2 - 1] + sorted[nz / 2]);
    }

    // Sorted rows: the stored ones when already sorted, else a sorted copy.
    bool rows_sorted = true;
    for (std::size_t v = 0; v < nz && rows_sorted; ++v) {
        rows_sorted =
            std::is_sorted(g.indices.begin() + g.indptr[v], g.indices.begin() + g.indptr[v + 1]);
    }
    std::vector<std::int64_t> copy;
    if (!rows_sorted) {
        copy = g.indices;
        for (std::size_t v = 0; v < nz; ++v) {
            std::sort(copy.begin() + g.indptr[v], copy.begin() + g.indptr[v + 1]);
        }
    }
    const std::vector<std::int64_t>& rows = rows_sorted ? g.indices : copy;
    std::int64_t unmatched = 0;
    std::int64_t duplicates = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(+ : unmatched, duplicates)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto vz = static_cast<std::size_t>(v);
        for (auto k = g.indptr[vz]; k < g.indptr[vz + 1]; ++k) {
            const auto u = static_cast<std::size_t>(rows[static_cast<std::size_t>(k)]);
            if (k > g.indptr[vz] &&
                rows[static_cast<std::size_t>(k - 1)] == rows[static_cast<std::size_t>(k)]) {
                ++duplicates;
            }
            // edge u -> v is in row v; its reverse v -> u would be in row u
            unmatched +=
                std::binary_search(rows.begin() + g.indptr[u], rows.begin() + g.indptr[u + 1], v)
                    ? 0
                    : 1;
        }
    }
    s.symmetric = unmatched == 0;
    s.duplicate_edges = duplicates;

    s.label_counts.assign(static_cast<std::size_t>(std::max<std::int64_t>(g.num_classes, 0)), 0);
    for (std::int64_t l : g.labels) {
        if (l < 0) {
            ++s.unlabeled;
        } else {
            ++s.label_counts[static_cast<std::size_t>(l)];
        }
    }
    const auto ones = [](std::span<const std::uint8_t> m) {
        return std::accumulate(m.begin(), m.end(), std::int64_t{0});
    };
    s.num_splits = g.num_splits;
    for (int split = 0; split < g.num_splits; ++split) {
        s.split_sizes.push_back({.train = ones(g.split_of(g.train_mask, split)),
                                 .val = ones(g.split_of(g.val_mask, split)),
                                 .test = ones(g.split_of(g.test_mask, split))});
    }
    s.num_train = s.split_sizes[0].train;
    s.num_val = s.split_sizes[0].val;
    s.num_test = s.split_sizes[0].test;
    return s;
}

}  // namespace strata
