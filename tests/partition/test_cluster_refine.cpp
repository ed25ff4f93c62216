// The pieces around PT-Scotch in the distributed partitioner, under mpirun (1..4 ranks): the
// ghost numbering and its exchange, the size-constrained clustering, the contracted graph
// against a serial recomputation from the whole graph, the refinement, and the whole
// contracted path against serial METIS on a generated community graph.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/graph_io.hpp"
#include "datasets/graph_slice_io.hpp"
#include "partition/cluster_contraction.hpp"
#include "partition/ghost_graph.hpp"
#include "partition/label_refinement.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition.hpp"
#include "partition/ptscotch_partitioner.hpp"
#include "partition/symmetric_slice.hpp"
#include "src/base/error.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "tests/partition/edge_cut.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"

using namespace strata;
using strata::test::all_ranks;
using strata::test::cut_of;

namespace {

const std::string cora_path = std::string(STRATA_DATA_DIR) + "/cora.h5";

/// Every rank's values concatenated, on every rank.
template <class T>
std::vector<T> all_values(const std::vector<T>& local, Communicator& comm) {
    std::vector<std::byte> gathered = comm.gather(std::as_bytes(std::span<const T>(local)), 0);
    std::vector<std::int64_t> size{static_cast<std::int64_t>(gathered.size())};
    comm.broadcast(std::as_writable_bytes(std::span<std::int64_t>(size)), 0);
    gathered.resize(static_cast<std::size_t>(size[0]));
    comm.broadcast(gathered, 0);
    std::vector<T> values(gathered.size() / sizeof(T));
    std::memcpy(values.data(), gathered.data(), gathered.size());
    return values;
}

struct Fine {
    std::vector<global_id> offsets;
    GhostGraph graph;
    std::vector<std::int64_t> weight;  // 1 each
};

Fine fine_of(const GraphDataset& g, Communicator& comm) {
    Fine f;
    f.offsets = slice_offsets(g.num_vertices(), comm.size());
    const GraphSlice slice = slice_of(g, f.offsets, comm.rank());
    f.graph = ghost_graph(symmetric_adjacency(slice, comm), f.offsets, comm.rank(), comm);
    f.weight.assign(f.graph.num_local(), 1);
    return f;
}

}  // namespace

TEST_CASE("ghost_graph: local columns name the symmetric rows; exchange_ghosts fills ghosts",
          "[partition][mpi]") {
    MpiCommunicator comm;
    const GraphDataset g = read_graph(cora_path);
    const auto offsets = slice_offsets(g.num_vertices(), comm.size());
    const GraphSlice slice = slice_of(g, offsets, comm.rank());
    const SliceAdjacency adj = symmetric_adjacency(slice, comm);
    const GhostGraph ghosts = ghost_graph(SliceAdjacency(adj), offsets, comm.rank(), comm);
    const std::size_t n = ghosts.num_local();
    bool same = ghosts.indptr == adj.indptr && ghosts.indices.size() == adj.indices.size();
    for (std::size_t k = 0; same && k < adj.indices.size(); ++k) {
        const auto c = static_cast<std::size_t>(ghosts.indices[k]);
        same = adj.indices[k] ==
               (c < n ? ghosts.first + static_cast<global_id>(c) : ghosts.ghost_ids[c - n]);
    }
    // Each rank's global ids, exchanged: every ghost receives its own id from its owner.
    std::vector<global_id> ids(n);
    std::iota(ids.begin(), ids.end(), ghosts.first);
    std::vector<global_id> received(ghosts.num_ghosts(), -1);
    exchange_ghosts<global_id>(ghosts, ids, received, comm);
    CHECK(same);
    CHECK(received == ghosts.ghost_ids);
    CHECK((comm.size() > 1) == (ghosts.num_ghosts() > 0));
    REQUIRE(all_ranks(same && received == ghosts.ghost_ids));
    REQUIRE_THROWS_WITH(check_ghost_limit(1, 2'000'000'000, 200'000'000),
                        Catch::Contains("slice 1: 2000000000 rows and 200000000 neighbours on "
                                        "other slices exceed the 32-bit local limit "
                                        "(2147483647); run on more processes"));
    check_ghost_limit(1, 2'000'000'000, 147'483'647);
}

TEST_CASE("cluster_locally: two triangles; the weight bound; deterministic", "[partition]") {
    // Two triangles {0, 1, 2}, {3, 4, 5} joined by the edge 2 - 3, one slice.
    GhostGraph g;
    g.indptr = {0, 2, 4, 7, 10, 12, 14};
    g.indices = {1, 2, 0, 2, 0, 1, 3, 2, 4, 5, 3, 5, 3, 4};
    const std::vector<std::int64_t> ones(6, 1);
    const LocalClusters two = cluster_locally(g, ones, 3, 5, 1);
    CHECK(two.count == 2);
    CHECK(two.of == std::vector<index_t>{0, 0, 0, 1, 1, 1});
    CHECK(cluster_locally(g, ones, 1, 5, 1).count == 6);  // nothing fits with anything
    const GraphDataset big = test::community_graph(3000, 5, 8, 1, 3);
    GhostGraph whole;
    whole.indptr = big.indptr;
    whole.indices.assign(big.indices.begin(), big.indices.end());
    const std::vector<std::int64_t> weight(3000, 1);
    const LocalClusters c = cluster_locally(whole, weight, 40, 5, 9);
    std::vector<std::int64_t> size(static_cast<std::size_t>(c.count), 0);
    for (const index_t x : c.of) {
        ++size[static_cast<std::size_t>(x)];
    }
    CHECK(*std::max_element(size.begin(), size.end()) <= 40);
    CHECK(c.count < 3000 / 10);  // clusters of about the bound
    CHECK(cluster_locally(whole, weight, 40, 5, 9).of == c.of);
    // Mostly one community each (80% of the edges are inside one; clusters drawn at random
    // would have a majority of about a third).
    std::vector<std::map<int, int>> classes(static_cast<std::size_t>(c.count));
    for (std::size_t v = 0; v < c.of.size(); ++v) {
        ++classes[static_cast<std::size_t>(c.of[v])][static_cast<int>(big.labels[v])];
    }
    std::int64_t majority = 0;
    for (const auto& m : classes) {
        int best = 0;
        for (const auto& [label, count] : m) {
            best = std::max(best, count);
        }
        majority += best;
    }
    CHECK(majority >= 2 * 3000 / 3);
}

TEST_CASE("contract_clusters equals the contraction of the whole graph", "[partition][mpi]") {
    MpiCommunicator comm;
    const GraphDataset g = test::community_graph(2000, 4, 6, 1, 5, /*directed=*/true);
    Fine f = fine_of(g, comm);
    const LocalClusters clusters = cluster_locally(f.graph, f.weight, 25, 5, 2);
    const ContractedGraph cg = contract_clusters(f.graph, clusters, f.weight, comm);
    // Every vertex's global cluster, on every rank.
    std::vector<global_id> mine(clusters.of.size());
    for (std::size_t v = 0; v < mine.size(); ++v) {
        mine[v] = cg.offsets[static_cast<std::size_t>(comm.rank())] + clusters.of[v];
    }
    const std::vector<global_id> cluster = all_values(mine, comm);
    // Serially, from the whole symmetric graph.
    const MetisGraph whole = build_metis_graph(g, MetisOptions{});
    std::map<std::pair<global_id, global_id>, std::int64_t> expected;
    std::map<global_id, std::int64_t> members;
    for (std::size_t v = 0; v < cluster.size(); ++v) {
        ++members[cluster[v]];
        for (auto k = whole.xadj[v]; k < whole.xadj[v + 1]; ++k) {
            const global_id d =
                cluster[static_cast<std::size_t>(whole.adjncy[static_cast<std::size_t>(k)])];
            if (d != cluster[v]) {
                ++expected[{cluster[v], d}];
            }
        }
    }
    bool same = cg.vertex_weight.size() == static_cast<std::size_t>(clusters.count) &&
                cg.offsets.back() == static_cast<global_id>(members.size());
    std::int64_t entries = 0;
    for (std::size_t c = 0; same && c + 1 < cg.indptr.size(); ++c) {
        const global_id self =
            cg.offsets[static_cast<std::size_t>(comm.rank())] + static_cast<global_id>(c);
        same = cg.vertex_weight[c] == members[self] &&
               std::is_sorted(cg.indices.begin() + cg.indptr[c],
                              cg.indices.begin() + cg.indptr[c + 1]);
        for (auto k = cg.indptr[c]; same && k < cg.indptr[c + 1]; ++k) {
            const auto e = static_cast<std::size_t>(k);
            same = expected.count({self, cg.indices[e]}) == 1 &&
                   expected[{self, cg.indices[e]}] == cg.edge_weight[e];
            ++entries;
        }
    }
    std::vector<std::int64_t> total{entries};
    comm.allreduce_sum(total);
    CHECK(same);
    CHECK(total[0] == static_cast<std::int64_t>(expected.size()));
    CHECK(cg.offsets.back() < 2000 / 3);  // clusters of several vertices (at most 25)
    REQUIRE(all_ranks(same && total[0] == static_cast<std::int64_t>(expected.size())));
}

TEST_CASE("refine_parts lowers a random partition's cut within the bound, deterministically",
          "[partition][mpi]") {
    MpiCommunicator comm;
    const GraphDataset g = read_graph(cora_path);
    const MetisGraph whole = build_metis_graph(g, MetisOptions{});
    Fine f = fine_of(g, comm);
    for (const int k : {2, 4}) {
        const Partition random = partition_random(g.num_vertices(), k, 3);
        const auto first = static_cast<std::size_t>(f.graph.first);
        std::vector<int> part(
            random.owner.begin() + static_cast<std::ptrdiff_t>(first),
            random.owner.begin() + static_cast<std::ptrdiff_t>(first + f.graph.num_local()));
        std::vector<int> again = part;
        const RefineOptions options{.num_parts = k, .imbalance = 0.03, .max_rounds = 12};
        const std::int64_t moves = refine_parts(f.graph, f.weight, part, options, comm);
        (void)refine_parts(f.graph, f.weight, again, options, comm);
        const std::vector<int> owner = all_values(part, comm);
        std::vector<std::int64_t> sizes(static_cast<std::size_t>(k), 0);
        std::vector<std::int64_t> before(static_cast<std::size_t>(k), 0);
        for (std::size_t v = 0; v < owner.size(); ++v) {
            ++sizes[static_cast<std::size_t>(owner[v])];
            ++before[static_cast<std::size_t>(random.owner[v])];
        }
        const auto bound =
            static_cast<std::int64_t>(1.03 * static_cast<double>(g.num_vertices()) / k);
        const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
        const std::int64_t cut = cut_of(whole, owner);
        const std::int64_t random_cut = cut_of(whole, random.owner);
        INFO("K = " << k << ": cut " << random_cut << " -> " << cut << ", " << moves << " moves");
        CHECK(moves > 0);
        CHECK(cut < random_cut * 3 / 4);
        CHECK(largest <= std::max(bound, *std::max_element(before.begin(), before.end())));
        CHECK(part == again);
        REQUIRE(all_ranks(part == again && cut < random_cut));
    }
}

TEST_CASE("contracted PT-Scotch on a community graph: valid, balanced, cut near METIS's",
          "[partition][mpi]") {
    MpiCommunicator comm;
    const GraphDataset g = test::community_graph(12000, 6, 12, 1, 11, /*directed=*/true);
    const MetisGraph whole = build_metis_graph(g, MetisOptions{});
    const auto offsets = slice_offsets(g.num_vertices(), comm.size());
    const GraphSlice slice = slice_of(g, offsets, comm.rank());
    for (const int k : {2, 3, 4}) {
        const std::int64_t metis_cut = cut_of(whole, partition_metis(whole, k, 7).owner);
        for (const int clusters : {0, 500}) {
            const std::vector<int> local = partition_ptscotch(
                slice, k, PtScotchOptions{.seed = 7, .clusters_per_part = clusters}, comm);
            const std::vector<int> owner = all_values(local, comm);
            std::vector<std::int64_t> sizes(static_cast<std::size_t>(k), 0);
            for (const int o : owner) {
                ++sizes[static_cast<std::size_t>(o)];
            }
            const double imbalance =
                static_cast<double>(*std::max_element(sizes.begin(), sizes.end())) * k /
                static_cast<double>(g.num_vertices());
            const std::int64_t cut = cut_of(whole, owner);
            INFO("P = " << comm.size() << ", K = " << k << ", clusters per part " << clusters
                        << ": cut " << cut << " (METIS " << metis_cut << "), imbalance "
                        << imbalance);
            CHECK(imbalance <= 1.04);
            CHECK(cut <= metis_cut * 115 / 100);
            REQUIRE(all_ranks(imbalance <= 1.04));
        }
    }
}
