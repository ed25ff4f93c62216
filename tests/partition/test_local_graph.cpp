// LocalGraph: hand-checked blocks on tiny graphs, then the partition properties on Cora and
// generated graphs for K = 1, 2, 3, 4, 8 and every method, and METIS's communication volume.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "partition/local_graph.hpp"
#include "partition/local_normalize.hpp"
#include "partition/local_part.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition_report.hpp"
#include "src/base/error.hpp"
#include "tests/partition/checks.hpp"
#include "tests/partition/fixtures.hpp"

using Catch::Matchers::Contains;

namespace strata {
namespace {

Partition make_partition(const GraphDataset& g, const std::string& method, int k) {
    if (method == "block") {
        return partition_block(g.num_vertices(), k);
    }
    if (method == "random") {
        return partition_random(g.num_vertices(), k, 11);
    }
    return partition_metis(g, k,
                           MetisOptions{.seed = 5, .balance_edges = true, .balance_train = true});
}

std::vector<LocalGraph> all_ranks(const GlobalCsr& a, const Partition& p) {
    LocalGraphBuilder builder(a, p);
    std::vector<LocalGraph> graphs;
    for (int r = 0; r < p.num_parts; ++r) {
        graphs.push_back(builder.build(r));
    }
    return graphs;
}

std::int64_t communication_volume(const std::vector<LocalGraph>& graphs) {
    std::int64_t volume = 0;
    for (const LocalGraph& g : graphs) {
        volume += static_cast<std::int64_t>(g.halo_original.size());
    }
    return volume;
}

/// Every property of the issue for one (graph, partition); `a` = adjacency_matrix(graph).
void check_properties(const GraphDataset& graph, const GlobalCsr& a, const Partition& p) {
    const std::vector<LocalGraph> graphs = all_ranks(a, p);
    const global_id n = graph.num_vertices();

    // Valid, every vertex owned exactly once, contiguous new-id ranges.
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    global_id next_first = 0;
    bool owners_ok = true;
    for (const LocalGraph& g : graphs) {
        REQUIRE_NOTHROW(validate_local_graph(g, "rank " + std::to_string(g.rank)));
        CHECK(g.first_owned == next_first);
        next_first += g.num_owned;
        for (global_id v : g.owned_original) {
            ++seen[static_cast<std::size_t>(v)];
            owners_ok = owners_ok && p.owner[static_cast<std::size_t>(v)] == g.rank;
        }
    }
    CHECK(owners_ok);
    CHECK(next_first == n);
    CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));

    // Every A entry in exactly one block, with its exact value.
    CHECK(test::local_entries(graphs) == test::global_entries(a));

    // Degrees of owned and halo vertices = the global weighted in-degrees, bit for bit.
    const std::vector<double> in_degree = test::row_sums(a);
    bool degrees_ok = true;
    for (const LocalGraph& g : graphs) {
        for (std::size_t i = 0; i < g.owned_original.size(); ++i) {
            degrees_ok = degrees_ok && g.owned_degree[i] ==
                                           in_degree[static_cast<std::size_t>(g.owned_original[i])];
        }
        for (std::size_t j = 0; j < g.halo_original.size(); ++j) {
            degrees_ok = degrees_ok && g.halo_degree[j] ==
                                           in_degree[static_cast<std::size_t>(g.halo_original[j])];
        }
    }
    CHECK(degrees_ok);

    // Pattern consistency: r sends p exactly what p expects from r, in the same order.
    std::int64_t sent = 0;
    std::int64_t received = 0;
    bool symmetric_peers = true;
    bool same_rows = true;
    for (const LocalGraph& g : graphs) {
        sent += g.pattern.num_send_rows();
        received += g.pattern.num_recv_rows();
        for (std::size_t i = 0; i < g.pattern.peers.size(); ++i) {
            const LocalGraph& peer = graphs[static_cast<std::size_t>(g.pattern.peers[i])];
            const auto& back = peer.pattern.peers;
            symmetric_peers =
                symmetric_peers && std::find(back.begin(), back.end(), g.rank) != back.end();
            const std::vector<global_id> expected(
                g.halo_original.begin() + g.pattern.recv_offsets[i],
                g.halo_original.begin() + g.pattern.recv_offsets[i + 1]);
            same_rows = same_rows && test::sent_ids(peer, g.rank) == expected;
        }
    }
    CHECK(sent == received);
    CHECK(symmetric_peers);
    CHECK(same_rows);

    // Local aggregation = global A X rows.
    CHECK(test::worst_aggregation_error(a, graphs, 5, 99) < 1e-5);

    // The parts together reproduce features, labels and masks exactly.
    bool data_ok = true;
    for (const LocalGraph& g : graphs) {
        const LocalPart part = attach_vertex_data(graph, g);
        for (index_t i = 0; i < g.num_owned; ++i) {
            const global_id v = g.owned_original[static_cast<std::size_t>(i)];
            const auto sv = static_cast<std::size_t>(v);
            data_ok = data_ok &&
                      std::equal(part.features.row(i), part.features.row(i) + part.features.cols,
                                 graph.features.row(static_cast<index_t>(v))) &&
                      part.labels[static_cast<std::size_t>(i)] == graph.labels[sv] &&
                      part.train_mask[static_cast<std::size_t>(i)] == graph.train_mask[sv] &&
                      part.val_mask[static_cast<std::size_t>(i)] == graph.val_mask[sv] &&
                      part.test_mask[static_cast<std::size_t>(i)] == graph.test_mask[sv];
        }
    }
    CHECK(data_ok);
}

}  // namespace

TEST_CASE("a 4-vertex path split {1,2} | {0,3} gives the hand-computed blocks", "[partition]") {
    const GraphDataset g = test::path_graph(4);
    const GlobalCsr a = adjacency_matrix(g);  // in-degrees 1, 2, 2, 1; with self loops 2, 3, 3, 2
    const Partition p{2, {1, 0, 0, 1}};
    const float third = 1.0f / 3.0f;
    const float sixth = static_cast<float>(1.0 / std::sqrt(6.0));

    const LocalGraph raw0 = build_local_graph(a, p, 0);
    const LocalGraph r0 = normalized(raw0, Normalization::symmetric);
    const LocalGraph r1 = normalized(build_local_graph(a, p, 1), Normalization::symmetric);

    REQUIRE(raw0.inner.col_idx == std::vector<index_t>{1, 0});  // no diagonal in A
    REQUIRE(raw0.inner.values == std::vector<float>{1.0f, 1.0f});
    REQUIRE(raw0.owned_degree == std::vector<double>{2.0, 2.0});
    REQUIRE(raw0.halo_degree == std::vector<double>{1.0, 1.0});

    REQUIRE(r0.first_owned == 0);
    REQUIRE(r0.num_owned == 2);
    REQUIRE(r0.owned_original == std::vector<global_id>{1, 2});
    REQUIRE(r0.inner.row_ptr == std::vector<index_t>{0, 2, 4});
    REQUIRE(r0.inner.col_idx == std::vector<index_t>{0, 1, 0, 1});
    CHECK(r0.inner.values[0] == Approx(third));
    CHECK(r0.inner.values[1] == Approx(third));
    REQUIRE(r0.pattern.peers == std::vector<int>{1});
    REQUIRE(r0.pattern.send_offsets == std::vector<index_t>{0, 2});
    REQUIRE(r0.pattern.recv_offsets == std::vector<index_t>{0, 2});
    REQUIRE(r0.halo_original == std::vector<global_id>{0, 3});
    REQUIRE(r0.send_rows == std::vector<index_t>{0, 1});
    REQUIRE(r0.halo.size() == 1);
    REQUIRE(r0.halo[0].cols() == 2);
    REQUIRE(r0.halo[0].row_ids == std::vector<index_t>{0, 1});
    REQUIRE(r0.halo[0].block.row_ptr == std::vector<index_t>{0, 1, 2});
    REQUIRE(r0.halo[0].block.col_idx == std::vector<index_t>{0, 1});
    CHECK(r0.halo[0].block.values[0] == Approx(sixth));
    REQUIRE(r0.boundary_rows == std::vector<index_t>{0, 1});
    REQUIRE(r0.interior_rows.empty());

    REQUIRE(r1.first_owned == 2);
    REQUIRE(r1.owned_original == std::vector<global_id>{0, 3});
    REQUIRE(r1.inner.col_idx == std::vector<index_t>{0, 1});
    CHECK(r1.inner.values[0] == Approx(0.5f));
    REQUIRE(r1.halo_original == std::vector<global_id>{1, 2});
    REQUIRE(r1.halo[0].block.col_idx == std::vector<index_t>{0, 1});
    REQUIRE(r1.send_rows == std::vector<index_t>{0, 1});
}

TEST_CASE("a 6-vertex path in two blocks has one boundary row per side", "[partition]") {
    const GraphDataset g = test::path_graph(6);
    const GlobalCsr a = adjacency_matrix(g);

    const LocalGraph r0 = build_local_graph(a, partition_block(6, 2), 0);

    REQUIRE(r0.owned_original == std::vector<global_id>{0, 1, 2});
    REQUIRE(r0.boundary_rows == std::vector<index_t>{2});
    REQUIRE(r0.interior_rows == std::vector<index_t>{0, 1});
    REQUIRE(r0.send_rows == std::vector<index_t>{2});
    REQUIRE(r0.halo_original == std::vector<global_id>{3});
    REQUIRE(r0.halo[0].rows == 3);  // compressed rows: only row 2 has a halo entry
    REQUIRE(r0.halo[0].row_ids == std::vector<index_t>{2});
    REQUIRE(r0.halo[0].block.row_ptr == std::vector<index_t>{0, 1});
    REQUIRE(expand_rows(r0.halo[0]).row_ptr == std::vector<index_t>{0, 0, 0, 1});
}

TEST_CASE("a one-way edge makes a peer that is only sent to", "[partition]") {
    const GraphDataset g = test::edge_list_graph(4, {{0, 3}});  // 0 -> 3: row 3 reads vertex 0
    const GlobalCsr a = adjacency_matrix(g);
    const Partition p = partition_block(4, 2);

    const LocalGraph r0 = build_local_graph(a, p, 0);
    const LocalGraph r1 = build_local_graph(a, p, 1);

    REQUIRE(r0.pattern.peers == std::vector<int>{1});
    REQUIRE(r0.pattern.send_offsets == std::vector<index_t>{0, 1});
    REQUIRE(r0.pattern.recv_offsets == std::vector<index_t>{0, 0});
    REQUIRE(r0.send_rows == std::vector<index_t>{0});
    REQUIRE(r0.halo[0].cols() == 0);
    REQUIRE(r0.halo[0].row_ids.empty());
    REQUIRE(r0.boundary_rows.empty());
    REQUIRE(r1.pattern.recv_offsets == std::vector<index_t>{0, 1});
    REQUIRE(r1.halo_original == std::vector<global_id>{0});
    REQUIRE(r1.boundary_rows == std::vector<index_t>{1});
    REQUIRE(r1.owned_degree == std::vector<double>{0.0, 1.0});
    REQUIRE(r1.halo_degree == std::vector<double>{0.0});  // vertex 0 has no in-edge
    REQUIRE_NOTHROW(validate_local_graph(r0, "r0"));
}

TEST_CASE("the builder gives the same LocalGraph as build_local_graph for each rank",
          "[partition]") {
    const GraphDataset g = test::generated(500, 6, 1);
    const GlobalCsr a = adjacency_matrix(g);
    const Partition p = partition_random(500, 3, 2);
    LocalGraphBuilder builder(a, p);

    for (int r = 0; r < 3; ++r) {
        std::string why;
        const bool same = test::same_part(attach_vertex_data(g, builder.build(r)),
                                          build_local_part(g, a, p, r), why);
        CHECK(same);
        INFO(why);
    }
}

TEST_CASE("local graphs reject a malformed A or partition", "[partition]") {
    const GraphDataset g = test::path_graph(4);
    GlobalCsr a = adjacency_matrix(g);  // rows [1], [0, 2], [1, 3], [2]

    REQUIRE_THROWS_WITH(build_local_graph(a, Partition{2, {0, 1, 0}}, 0),
                        Contains("3 owners for 4 vertices"));
    REQUIRE_THROWS_WITH(build_local_graph(a, partition_block(4, 2), 2),
                        Contains("rank 2 outside [0, 2)"));
    std::swap(a.indices[1], a.indices[2]);
    REQUIRE_THROWS_WITH(build_local_graph(a, partition_block(4, 2), 0),
                        Contains("not sorted ascending"));
}

TEST_CASE("validate_local_graph catches a broken invariant", "[partition]") {
    const GlobalCsr a = adjacency_matrix(test::path_graph(6));
    LocalGraph g = build_local_graph(a, partition_block(6, 2), 0);
    LocalGraph bad = g;

    bad.send_rows[0] = 3;
    REQUIRE_THROWS_WITH(validate_local_graph(bad, "g"), Contains("send row 3"));
    bad = g;
    bad.boundary_rows = {1};
    bad.interior_rows = {0, 2};
    REQUIRE_THROWS_WITH(validate_local_graph(bad, "g"), Contains("misclassified"));
    bad = g;
    bad.pattern.peers = {0};
    REQUIRE_THROWS_WITH(validate_local_graph(bad, "g"), Contains("peer 0"));
    bad = g;
    bad.halo_degree.clear();
    REQUIRE_THROWS_WITH(validate_local_graph(bad, "g"),
                        Contains("3 owned and 0 halo degrees for 3 owned and 1 halo vertices"));
    bad = g;
    bad.owned_degree[1] = std::nan("");
    REQUIRE_THROWS_WITH(validate_local_graph(bad, "g"), Contains("owned degree 1 is nan"));
}

/// Rank g.rank's halo blocks as they were built before compressed rows: full height (num_owned
/// rows), row i holding A's entries of owned row i whose column is received from peer p, column
/// = its position in p's received range. Built straight from the global A, not from `g`'s blocks.
std::vector<HostCsr> full_height_halo(const GlobalCsr& a, const Partition& part,
                                      const LocalGraph& g) {
    const std::size_t num_peers = g.pattern.peers.size();
    std::vector<std::int64_t> column(static_cast<std::size_t>(a.num_rows()), -1);
    std::vector<std::size_t> peer_index(static_cast<std::size_t>(part.num_parts), 0);
    for (std::size_t p = 0; p < num_peers; ++p) {
        peer_index[static_cast<std::size_t>(g.pattern.peers[p])] = p;
        for (index_t j = g.pattern.recv_offsets[p]; j < g.pattern.recv_offsets[p + 1]; ++j) {
            column[static_cast<std::size_t>(g.halo_original[static_cast<std::size_t>(j)])] =
                j - g.pattern.recv_offsets[p];
        }
    }
    std::vector<HostCsr> blocks(num_peers);
    for (std::size_t p = 0; p < num_peers; ++p) {
        blocks[p].rows = g.num_owned;
        blocks[p].cols = g.pattern.recv_offsets[p + 1] - g.pattern.recv_offsets[p];
    }
    for (const global_id v : g.owned_original) {
        const auto row = static_cast<std::size_t>(v);
        for (auto k = static_cast<std::size_t>(a.indptr[row]);
             k < static_cast<std::size_t>(a.indptr[row + 1]); ++k) {
            const auto u = static_cast<std::size_t>(a.indices[k]);
            const int owner = part.owner[u];
            if (owner != g.rank) {
                HostCsr& b = blocks[peer_index[static_cast<std::size_t>(owner)]];
                b.col_idx.push_back(static_cast<index_t>(column[u]));
                b.values.push_back(a.values[k]);
            }
        }
        for (HostCsr& b : blocks) {
            b.row_ptr.push_back(b.nnz());
        }
    }
    return blocks;
}

/// Bytes of the uploaded halo blocks (block + transpose, GraphBlocks::plan's halo share), full
/// height and compressed.
struct BlockBytes {
    std::int64_t full = 0;
    std::int64_t compressed = 0;
};

BlockBytes halo_bytes(const LocalGraph& g) {
    BlockBytes bytes;
    for (const HostDcsr& block : g.halo) {
        const std::int64_t transposed = csr_bytes(block.cols(), block.nnz());
        bytes.full += csr_bytes(block.rows, block.nnz()) + transposed;
        bytes.compressed += dcsr_bytes(block.listed_rows(), block.nnz()) + transposed;
    }
    return bytes;
}

/// Expands every rank's compressed halo blocks and compares them with full_height_halo (same
/// structure, same value bits); returns the byte sums over ranks.
BlockBytes check_halo_equals_full_height(const GlobalCsr& a, const Partition& p) {
    BlockBytes total;
    for (const LocalGraph& g : all_ranks(a, p)) {
        const std::vector<HostCsr> full = full_height_halo(a, p, g);
        REQUIRE(g.halo.size() == full.size());
        for (std::size_t i = 0; i < full.size(); ++i) {
            INFO("rank " << g.rank << ", peer " << g.pattern.peers[i]);
            const HostCsr expanded = expand_rows(g.halo[i]);
            CHECK(expanded.rows == full[i].rows);
            CHECK(expanded.cols == full[i].cols);
            CHECK(expanded.row_ptr == full[i].row_ptr);
            CHECK(expanded.col_idx == full[i].col_idx);
            CHECK(std::memcmp(expanded.values.data(), full[i].values.data(),
                              full[i].values.size() * sizeof(float)) == 0);
            CHECK(g.halo[i].row_ids == compress_rows(full[i]).row_ids);
        }
        const BlockBytes bytes = halo_bytes(g);
        total.full += bytes.full;
        total.compressed += bytes.compressed;
    }
    return total;
}

TEST_CASE("compressed halo blocks equal the full-height ones on Cora and a generated graph",
          "[partition]") {
    const GraphDataset generated = test::generated(3000, 8, 4, 30, 0.9);  // 30 communities
    for (const GraphDataset* g : {&test::cora(), &generated}) {
        const GlobalCsr a = adjacency_matrix(*g);
        for (const char* method : {"metis", "random"}) {
            for (int k : {2, 3, 4}) {
                INFO("N = " << g->num_vertices() << ", method " << method << ", K = " << k);
                const BlockBytes bytes =
                    check_halo_equals_full_height(a, make_partition(*g, method, k));
                // A listed row costs 8 bytes (id + row pointer), a full-height row 4: with a random
                // partition nearly every row reads from every peer and the full height is
                // smaller; METIS leaves most rows without halo entries.
                if (std::string(method) == "metis") {
                    CHECK(bytes.compressed < bytes.full);
                    std::printf(
                        "halo block bytes (N=%lld, metis, K=%d, all ranks): full height "
                        "%lld, compressed %lld\n",
                        static_cast<long long>(g->num_vertices()), k,
                        static_cast<long long>(bytes.full),
                        static_cast<long long>(bytes.compressed));
                }
            }
        }
    }
}

TEST_CASE("halo block bytes on the 200k generated graph, K = 2, 4, 8", "[.][measure]") {
    const GraphDataset g = test::generated(200000, 10, 3, 200, 0.9);
    const GlobalCsr a = adjacency_matrix(g);
    for (int k : {2, 4, 8}) {
        const BlockBytes bytes = check_halo_equals_full_height(a, make_partition(g, "metis", k));
        std::printf(
            "halo block bytes (N=200000, metis, K=%d, all ranks): full height %lld, "
            "compressed %lld\n",
            k, static_cast<long long>(bytes.full), static_cast<long long>(bytes.compressed));
    }
}

TEST_CASE("every partition of Cora satisfies the partition properties", "[partition]") {
    const GraphDataset& g = test::cora();
    REQUIRE(g.num_vertices() == 2708);
    const GlobalCsr a = adjacency_matrix(g);
    for (const char* method : {"block", "random", "metis"}) {
        for (int k : {1, 2, 3, 4, 8}) {
            INFO("method " << method << ", K = " << k);
            check_properties(g, a, make_partition(g, method, k));
        }
    }
}

TEST_CASE("every partition of generated graphs satisfies the partition properties", "[partition]") {
    for (std::uint64_t seed : {1, 2}) {
        const GraphDataset g = test::generated(seed == 1 ? 3000 : 777, 8, seed);
        const GlobalCsr a = adjacency_matrix(g);
        for (const char* method : {"block", "random", "metis"}) {
            for (int k : {1, 2, 3, 4, 8}) {
                INFO("N = " << g.num_vertices() << ", method " << method << ", K = " << k);
                check_properties(g, a, make_partition(g, method, k));
            }
        }
    }
}

TEST_CASE("METIS moves at least 3x fewer halo rows than random on Cora K=4 and 200k K=8",
          "[partition][slow]") {
    struct Case {
        std::string name;
        GraphDataset graph;
        int k;
    };
    std::vector<Case> cases;
    cases.push_back({"cora", test::cora(), 4});
    // 200 communities of ~1000 vertices, 10% of edges between communities (METIS cuts
    // ~10% on such graphs, as on real ones; 5 huge random communities have no locality left).
    cases.push_back({"generated 200k", test::generated(200000, 10, 3, 200, 0.9), 8});
    for (const Case& c : cases) {
        const GlobalCsr a = adjacency_matrix(c.graph);
        const std::int64_t metis =
            communication_volume(all_ranks(a, make_partition(c.graph, "metis", c.k)));
        const std::int64_t random =
            communication_volume(all_ranks(a, make_partition(c.graph, "random", c.k)));

        std::printf(
            "communication volume (%s, N=%lld, K=%d): metis %lld, random %lld (%.1fx)\n",
            c.name.c_str(), static_cast<long long>(c.graph.num_vertices()), c.k,
            static_cast<long long>(metis), static_cast<long long>(random),
            static_cast<double>(random) / static_cast<double>(std::max<std::int64_t>(metis, 1)));
        INFO(c.name);
        CHECK(3 * metis <= random);
    }
}

}  // namespace strata
