// cluster_locally: label propagation with a dense per-cluster counter (touched list reset);
// contract_clusters: members grouped by cluster, their arcs sorted and counted per neighbouring
// cluster.
#include "partition/cluster_contraction.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "src/base/error.hpp"
#include "src/base/release.hpp"
#include "src/device/counter_rng.hpp"

namespace strata {

LocalClusters cluster_locally(const GhostGraph& g, std::span<const std::int64_t> vertex_weight,
                              std::int64_t max_weight, int rounds, std::uint64_t seed) {
    const std::size_t n = g.num_local();
    STRATA_CHECK(vertex_weight.size() == n, "cluster_locally: ", vertex_weight.size(),
                 " weights for ", n, " rows");
    std::vector<index_t> label(n);
    std::iota(label.begin(), label.end(), 0);
    std::vector<std::int64_t> weight(vertex_weight.begin(), vertex_weight.end());
    std::vector<index_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 random(seed);
    std::shuffle(order.begin(), order.end(), random);

    std::vector<std::int64_t> links(n, 0);  // neighbours of the current row in each cluster
    std::vector<index_t> touched;
    for (int round = 0; round < rounds; ++round) {
        const std::uint64_t salt = mix64(seed ^ (static_cast<std::uint64_t>(round) << 48));
        std::int64_t moves = 0;
        for (const index_t v : order) {
            const auto vi = static_cast<std::size_t>(v);
            for (auto k = g.indptr[vi]; k < g.indptr[vi + 1]; ++k) {
                const auto u = static_cast<std::size_t>(g.indices[static_cast<std::size_t>(k)]);
                if (u < n && u != vi) {
                    const auto c = static_cast<std::size_t>(label[u]);
                    if (links[c]++ == 0) {
                        touched.push_back(static_cast<index_t>(c));
                    }
                }
            }
            const index_t current = label[vi];
            const std::int64_t w = vertex_weight[vi];
            index_t best = current;
            std::int64_t best_links = links[static_cast<std::size_t>(current)];
            std::uint64_t best_hash = 0;
            for (const index_t c : touched) {
                const auto ci = static_cast<std::size_t>(c);
                if (c == current || weight[ci] + w > max_weight || links[ci] < best_links) {
                    continue;
                }
                const std::uint64_t h = mix64(static_cast<std::uint64_t>(c) ^ salt);
                if (links[ci] > best_links || (best != current && h > best_hash)) {
                    best = c;
                    best_links = links[ci];
                    best_hash = h;
                }
            }
            for (const index_t c : touched) {
                links[static_cast<std::size_t>(c)] = 0;
            }
            touched.clear();
            if (best != current) {
                weight[static_cast<std::size_t>(current)] -= w;
                weight[static_cast<std::size_t>(best)] += w;
                label[vi] = best;
                ++moves;
            }
        }
        if (moves == 0) {
            break;
        }
    }

    // Clusters numbered by first member.
    LocalClusters clusters;
    clusters.of.resize(n);
    std::vector<index_t> number(n, -1);
    for (std::size_t v = 0; v < n; ++v) {
        auto& id = number[static_cast<std::size_t>(label[v])];
        if (id < 0) {
            id = clusters.count++;
        }
        clusters.of[v] = id;
    }
    return clusters;
}

ContractedGraph contract_clusters(const GhostGraph& g, const LocalClusters& clusters,
                                  std::span<const std::int64_t> vertex_weight, Communicator& comm) {
    const std::size_t n = g.num_local();
    const auto p = static_cast<std::size_t>(comm.size());
    const auto rank = static_cast<std::size_t>(comm.rank());
    STRATA_CHECK(clusters.of.size() == n && vertex_weight.size() == n,
                 "contract_clusters: ", clusters.of.size(), " clusters and ", vertex_weight.size(),
                 " weights for ", n, " rows");
    ContractedGraph cg;
    {
        std::vector<std::int64_t> counts(p, 0);
        counts[rank] = clusters.count;
        comm.allreduce_sum(counts);
        cg.offsets.assign(p + 1, 0);
        std::partial_sum(counts.begin(), counts.end(), cg.offsets.begin() + 1);
    }
    const global_id base = cg.offsets[rank];
    std::vector<global_id> cluster_id(n);
    for (std::size_t v = 0; v < n; ++v) {
        cluster_id[v] = base + clusters.of[v];
    }
    std::vector<global_id> ghost_cluster(g.num_ghosts());
    exchange_ghosts<global_id>(g, cluster_id, ghost_cluster, comm);
    release(cluster_id);

    // Members of each cluster (counting sort by cluster).
    const auto num = static_cast<std::size_t>(clusters.count);
    std::vector<std::int64_t> start(num + 1, 0);
    for (const index_t c : clusters.of) {
        ++start[static_cast<std::size_t>(c) + 1];
    }
    std::partial_sum(start.begin(), start.end(), start.begin());
    std::vector<index_t> members(n);
    {
        std::vector<std::int64_t> at(start.begin(), start.end() - 1);
        for (std::size_t v = 0; v < n; ++v) {
            members[static_cast<std::size_t>(at[static_cast<std::size_t>(clusters.of[v])]++)] =
                static_cast<index_t>(v);
        }
    }

    // Each cluster's row: its members' arcs to other clusters, sorted and counted (memory of the
    // largest cluster's arcs, whatever the number of clusters).
    std::vector<global_id> arcs;
    cg.indptr.assign(num + 1, 0);
    cg.vertex_weight.assign(num, 0);
    for (std::size_t c = 0; c < num; ++c) {
        const global_id self = base + static_cast<global_id>(c);
        for (auto m = start[c]; m < start[c + 1]; ++m) {
            const auto v = static_cast<std::size_t>(members[static_cast<std::size_t>(m)]);
            cg.vertex_weight[c] += vertex_weight[v];
            for (auto k = g.indptr[v]; k < g.indptr[v + 1]; ++k) {
                const auto u = static_cast<std::size_t>(g.indices[static_cast<std::size_t>(k)]);
                const global_id d = u < n ? base + clusters.of[u] : ghost_cluster[u - n];
                if (d != self) {
                    arcs.push_back(d);
                }
            }
        }
        std::sort(arcs.begin(), arcs.end());
        for (std::size_t a = 0; a < arcs.size();) {
            std::size_t b = a;
            while (b < arcs.size() && arcs[b] == arcs[a]) {
                ++b;
            }
            cg.indices.push_back(arcs[a]);
            cg.edge_weight.push_back(static_cast<std::int64_t>(b - a));
            a = b;
        }
        arcs.clear();
        cg.indptr[c + 1] = static_cast<std::int64_t>(cg.indices.size());
    }
    cg.indices.shrink_to_fit();
    cg.edge_weight.shrink_to_fit();
    return cg;
}

}  // namespace strata
