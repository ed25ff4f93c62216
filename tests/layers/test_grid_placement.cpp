// place_grid (layers/grid_placement.hpp): on one node the consecutive map r = g F + f; on several
// nodes, by slot or round robin, every feature group inside one node and every graph group across
// nodes, (g, f) a bijection; a node whose ranks are not a multiple of F falls back to the
// consecutive map with its one-line reason; F not dividing the ranks is refused by name. And
// canonical_node_ids numbers nodes by first appearance.
#include <map>
#include <random>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "layers/grid_placement.hpp"
#include "src/base/error.hpp"
#include "src/comm/node_rank.hpp"

using namespace strata;

namespace {

std::vector<GridCoord> consecutive(int ranks, int slices) {
    std::vector<GridCoord> map;
    for (int r = 0; r < ranks; ++r) {
        map.push_back({r / slices, r % slices});
    }
    return map;
}

/// Every (g, f) once; each feature group on one node; each graph group on as many nodes as
/// there are (every node holds the same number of feature groups here).
void check_topology(const std::vector<int>& nodes, int slices, const GridPlacement& p) {
    const auto ranks = static_cast<int>(nodes.size());
    REQUIRE(p.warning.empty());
    REQUIRE(p.of_rank.size() == nodes.size());
    std::set<std::pair<int, int>> seen;
    std::map<int, std::set<int>> feature_group_nodes;
    std::map<int, std::set<int>> graph_group_nodes;
    for (int r = 0; r < ranks; ++r) {
        const GridCoord c = p.of_rank[static_cast<std::size_t>(r)];
        CHECK(c.g >= 0);
        CHECK(c.g < ranks / slices);
        CHECK(c.f >= 0);
        CHECK(c.f < slices);
        seen.insert({c.g, c.f});
        feature_group_nodes[c.g].insert(nodes[static_cast<std::size_t>(r)]);
        graph_group_nodes[c.f].insert(nodes[static_cast<std::size_t>(r)]);
    }
    CHECK(seen.size() == nodes.size());
    const std::set<int> all(nodes.begin(), nodes.end());
    for (const auto& [g, on] : feature_group_nodes) {
        INFO("feature group " << g);
        CHECK(on.size() == 1);
    }
    for (const auto& [f, on] : graph_group_nodes) {
        INFO("graph group " << f);
        CHECK(on == all);
    }
}

}  // namespace

TEST_CASE("place_grid: one node is the consecutive map", "[grid]") {
    for (const int ranks : {1, 2, 4, 6, 8}) {
        for (int slices = 1; slices <= ranks; ++slices) {
            if (ranks % slices == 0) {
                const GridPlacement p =
                    place_grid(std::vector<int>(static_cast<std::size_t>(ranks), 0), slices);
                CHECK(p.of_rank == consecutive(ranks, slices));
                CHECK(p.warning.empty());
            }
        }
    }
}

TEST_CASE("place_grid: 2 nodes x 2 ranks, by slot and round robin", "[grid]") {
    const std::vector<int> by_slot{0, 0, 1, 1};
    const GridPlacement slot = place_grid(by_slot, 2);
    CHECK(slot.of_rank == consecutive(4, 2));  // by slot, the consecutive map is node-aware
    check_topology(by_slot, 2, slot);

    const std::vector<int> round_robin{0, 1, 0, 1};
    const GridPlacement rr = place_grid(round_robin, 2);
    CHECK(rr.of_rank == std::vector<GridCoord>{{0, 0}, {1, 0}, {0, 1}, {1, 1}});
    check_topology(round_robin, 2, rr);

    // F = 1 (1D); F = 4: one feature group over both nodes, which 2 ranks per node cannot
    // hold, so the fallback, with its reason.
    CHECK(place_grid(round_robin, 1).of_rank == consecutive(4, 1));
    const GridPlacement wide = place_grid(round_robin, 4);
    CHECK(wide.of_rank == consecutive(4, 4));
    CHECK(wide.warning ==
          "feature_slices = 4: node 0 has 2 ranks, not a multiple of 4, so feature groups are "
          "consecutive ranks (some span nodes)");
}

TEST_CASE("place_grid: 2 nodes x 4 ranks round robin, F = 2 and 4; 3 nodes x 2 by slot", "[grid]") {
    const std::vector<int> rr8{0, 1, 0, 1, 0, 1, 0, 1};
    const GridPlacement two = place_grid(rr8, 2);
    CHECK(two.of_rank ==
          std::vector<GridCoord>{{0, 0}, {2, 0}, {0, 1}, {2, 1}, {1, 0}, {3, 0}, {1, 1}, {3, 1}});
    check_topology(rr8, 2, two);
    check_topology(rr8, 4, place_grid(rr8, 4));
    const std::vector<int> slot6{0, 0, 1, 1, 2, 2};
    check_topology(slot6, 2, place_grid(slot6, 2));
}

TEST_CASE("place_grid: any mapping whose nodes hold multiples of F keeps feature groups inside",
          "[grid]") {
    std::mt19937 rng(3);
    for (int trial = 0; trial < 200; ++trial) {
        const int slices = 1 + static_cast<int>(rng() % 3);
        const int num_nodes = 1 + static_cast<int>(rng() % 4);
        const int per_node = slices * (1 + static_cast<int>(rng() % 3));
        std::vector<int> nodes;
        for (int n = 0; n < num_nodes; ++n) {
            nodes.insert(nodes.end(), static_cast<std::size_t>(per_node), n);
        }
        std::shuffle(nodes.begin(), nodes.end(), rng);  // any launcher mapping
        INFO("trial " << trial);
        check_topology(nodes, slices, place_grid(nodes, slices));
    }
}

TEST_CASE("place_grid: uneven nodes fall back to consecutive ranks, saying why", "[grid]") {
    const GridPlacement p = place_grid(std::vector<int>{0, 0, 0, 1}, 2);
    CHECK(p.of_rank == consecutive(4, 2));
    CHECK(p.warning ==
          "feature_slices = 2: node 0 has 3 ranks, not a multiple of 2, so feature groups are "
          "consecutive ranks (some span nodes)");
}

TEST_CASE("place_grid: feature_slices must divide the ranks", "[grid]") {
    CHECK_THROWS_WITH(
        place_grid(std::vector<int>{0, 0, 1}, 2),
        Catch::Matchers::StartsWith("feature_slices = 2: must divide the number of ranks (3)"));
    CHECK_THROWS_AS(place_grid(std::vector<int>{0, 0, 1}, 2), OptionError);
}

TEST_CASE("canonical_node_ids numbers nodes by first appearance", "[grid]") {
    CHECK(canonical_node_ids({7, 7, 3, 3}) == std::vector<int>{0, 0, 1, 1});
    CHECK(canonical_node_ids({5, 2, 5, 2}) == std::vector<int>{0, 1, 0, 1});
    CHECK(canonical_node_ids({}).empty());
}
