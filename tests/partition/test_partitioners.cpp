// Block, random and METIS partitioners; renumbering; the METIS input graph and file.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "partition/metis_partitioner.hpp"
#include "partition/partition.hpp"
#include "src/base/error.hpp"
#include "tests/partition/fixtures.hpp"

using Catch::Matchers::Contains;

namespace strata {
namespace {

std::vector<global_id> part_sizes(const Partition& p) {
    std::vector<global_id> sizes(static_cast<std::size_t>(p.num_parts), 0);
    for (int r : p.owner) {
        ++sizes[static_cast<std::size_t>(r)];
    }
    return sizes;
}

}  // namespace

TEST_CASE("block partition cuts ids into contiguous ranges r*N/K", "[partition]") {
    const Partition p = partition_block(10, 3);

    REQUIRE(p.num_parts == 3);
    REQUIRE(p.owner == std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2, 2});
}

TEST_CASE("random partition is balanced, seeded and differs between seeds", "[partition]") {
    const Partition a = partition_random(100, 7, 42);
    const Partition b = partition_random(100, 7, 42);
    const Partition c = partition_random(100, 7, 43);

    REQUIRE(a.owner == b.owner);
    REQUIRE(a.owner != c.owner);
    const auto sizes = part_sizes(a);
    REQUIRE(*std::min_element(sizes.begin(), sizes.end()) == 14);
    REQUIRE(*std::max_element(sizes.begin(), sizes.end()) == 15);
    REQUIRE(a.owner != partition_block(100, 7).owner);  // actually shuffled
}

TEST_CASE("partitioners reject K < 1 and K > N", "[partition]") {
    REQUIRE_THROWS_WITH(partition_block(5, 0), Contains("must be >= 1"));
    REQUIRE_THROWS_WITH(partition_random(5, 6, 0), Contains("cannot split 5 vertices into 6"));
    REQUIRE_THROWS_WITH(partition_metis(test::path_graph(5), 6, MetisOptions{}),
                        Contains("cannot split 5 vertices into 6"));
    REQUIRE_NOTHROW(partition_block(5, 5));
}

TEST_CASE("validate_partition names the first vertex with a bad owner", "[partition]") {
    const Partition p{2, {0, 1, 2, 0}};

    REQUIRE_THROWS_WITH(validate_partition(p, 4, "p"), Contains("owner of vertex 2 is 2"));
    REQUIRE_THROWS_WITH(validate_partition(p, 5, "p"), Contains("4 owners for 5 vertices"));
}

TEST_CASE("renumbering is part-major and keeps original order within a part", "[partition]") {
    const Renumbering r = renumber(Partition{3, {1, 0, 1, 0, 2}});

    REQUIRE(r.part_offsets == std::vector<global_id>{0, 2, 4, 5});
    REQUIRE(r.new_id == std::vector<global_id>{2, 0, 3, 1, 4});
    REQUIRE(r.original == std::vector<global_id>{1, 3, 0, 2, 4});
}

TEST_CASE("METIS input is symmetrized without self loops or duplicates, with weights",
          "[partition]") {
    // 0 <-> 1, 2 -> 1 only, 3 -> 3 (self loop), 0 -> 1 twice. Train: vertices 0 and 3.
    const GraphDataset g = test::edge_list_graph(4, {{0, 1}, {1, 0}, {2, 1}, {3, 3}, {0, 1}});
    MetisOptions options;
    options.balance_edges = true;
    options.balance_train = true;

    const MetisGraph m = build_metis_graph(g, options);

    REQUIRE(m.xadj == std::vector<std::int32_t>{0, 1, 3, 4, 4});
    REQUIRE(m.adjncy == std::vector<std::int32_t>{1, 0, 2, 1});
    REQUIRE(m.ncon == 3);
    REQUIRE(m.constraints == std::vector<std::string>{"vertices", "edges", "train"});
    // (vertices, 1 + stored in-degree, train) per vertex.
    REQUIRE(m.vwgt == std::vector<std::int32_t>{1, 2, 1, 1, 4, 0, 1, 1, 0, 1, 2, 1});
}

TEST_CASE("a symmetric graph gives the same METIS input with sorted or unsorted rows",
          "[partition]") {
    // Triangle 0-1-2 plus edge 2-3, a self loop on 1; both directions stored.
    const std::vector<std::pair<std::int64_t, std::int64_t>> edges{
        {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}, {0, 2}, {1, 2}, {3, 2}, {2, 3}};
    const GraphDataset sorted = test::edge_list_graph(4, edges);
    GraphDataset unsorted = sorted;
    std::swap(unsorted.indices[0], unsorted.indices[1]);  // row 0: {2, 1}

    const MetisGraph a = build_metis_graph(sorted, MetisOptions{});
    const MetisGraph b = build_metis_graph(unsorted, MetisOptions{});

    REQUIRE(a.xadj == std::vector<std::int32_t>{0, 2, 4, 7, 8});
    REQUIRE(a.adjncy == std::vector<std::int32_t>{1, 2, 0, 2, 0, 1, 3, 2});
    REQUIRE(b.xadj == a.xadj);
    REQUIRE(b.adjncy == a.adjncy);
}

TEST_CASE("a directed graph with sorted unique rows is still symmetrized", "[partition]") {
    // 0 -> 1 -> 2 -> 3, one direction only: sorted rows, but not symmetric.
    const GraphDataset g = test::edge_list_graph(4, {{0, 1}, {1, 2}, {2, 3}});

    const MetisGraph m = build_metis_graph(g, MetisOptions{});

    REQUIRE(m.xadj == std::vector<std::int32_t>{0, 1, 3, 5, 6});
    REQUIRE(m.adjncy == std::vector<std::int32_t>{1, 0, 2, 1, 3, 2});
}

TEST_CASE("a balance constraint with zero total is dropped", "[partition]") {
    GraphDataset g = test::path_graph(4);
    std::fill(g.train_mask.begin(), g.train_mask.end(), 0);
    MetisOptions options;
    options.balance_train = true;

    const MetisGraph m = build_metis_graph(g, options);

    REQUIRE(m.constraints == std::vector<std::string>{"vertices"});
    REQUIRE(m.vwgt == std::vector<std::int32_t>{1, 1, 1, 1});
    options.balance_vertices = false;
    options.balance_train = false;
    REQUIRE_THROWS_WITH(build_metis_graph(g, options), Contains("no balance constraint"));
}

TEST_CASE("the METIS graph file lists weights then 1-based neighbours", "[partition]") {
    const GraphDataset g = test::edge_list_graph(4, {{0, 1}, {1, 0}, {2, 1}, {3, 3}, {0, 1}});
    const MetisGraph m =
        build_metis_graph(g, MetisOptions{.seed = 0, .balance_edges = true, .balance_train = true});
    const auto path = std::filesystem::temp_directory_path() / "strata_test_metis.graph";

    write_metis_graph_file(m, path.string());

    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(path);
    REQUIRE(text.str() == "4 2 010 3\n1 2 1 2\n1 4 0 1 3\n1 1 0 2\n1 2 1\n");
}

TEST_CASE("METIS separates two cliques joined by one edge", "[partition]") {
    std::vector<std::pair<std::int64_t, std::int64_t>> edges;
    for (std::int64_t base : {0, 5}) {
        for (std::int64_t u = base; u < base + 5; ++u) {
            for (std::int64_t v = base; v < base + 5; ++v) {
                if (u != v) {
                    edges.emplace_back(u, v);
                }
            }
        }
    }
    edges.emplace_back(4, 5);
    edges.emplace_back(5, 4);
    const GraphDataset g = test::edge_list_graph(10, edges);
    std::int64_t cut = -1;

    const Partition p = partition_metis(build_metis_graph(g, MetisOptions{}), 2, 7, &cut);

    REQUIRE(cut == 1);
    for (int v = 1; v < 5; ++v) {
        CHECK(p.owner[static_cast<std::size_t>(v)] == p.owner[0]);
        CHECK(p.owner[static_cast<std::size_t>(v) + 5] == p.owner[5]);
    }
    REQUIRE(p.owner[0] != p.owner[5]);
}

TEST_CASE("METIS is deterministic in its seed and K = 1 puts everything in part 0", "[partition]") {
    const GraphDataset& g = test::cora();
    const MetisOptions options{.seed = 3, .balance_edges = true, .balance_train = true};

    const Partition a = partition_metis(g, 4, options);
    const Partition b = partition_metis(g, 4, options);
    const Partition one = partition_metis(g, 1, options);

    REQUIRE(a.owner == b.owner);
    const auto sizes = part_sizes(a);
    REQUIRE(sizes.size() == 4);
    for (global_id s : sizes) {
        CHECK(s > 2708 / 4 * 9 / 10);  // balanced within METIS's default 3% (+ slack)
    }
    REQUIRE(std::all_of(one.owner.begin(), one.owner.end(), [](int r) { return r == 0; }));
    REQUIRE_THROWS_WITH(partition_metis(build_metis_graph(g, options), 2, 1ULL << 40),
                        Contains("does not fit"));
}

}  // namespace strata
