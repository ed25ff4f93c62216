// Local order (partition/local_order.hpp): RCM on hand-checkable and shuffled graphs, and a
// reordered LocalPart that holds the same rows (by original id), edges, halo and vertex data.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "partition/local_order.hpp"
#include "partition/metis_partitioner.hpp"
#include "src/base/error.hpp"
#include "tests/partition/fixtures.hpp"

using Catch::Matchers::Contains;

namespace strata {
namespace {

/// The inner block of a one-part partition of `g` (the whole graph, in its own order).
HostCsr whole_inner(const GraphDataset& g) {
    return build_local_part(g, adjacency_matrix(g), partition_block(g.num_vertices(), 1), 0)
        .graph.inner;
}

/// max |position(u) - position(v)| over the edges, positions after `order`.
index_t bandwidth(const HostCsr& a, const std::vector<index_t>& order) {
    std::vector<index_t> position(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        position[static_cast<std::size_t>(order[i])] = static_cast<index_t>(i);
    }
    index_t worst = 0;
    for (index_t r = 0; r < a.rows; ++r) {
        for (index_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
            worst = std::max(worst, std::abs(position[r] - position[a.col_idx[k]]));
        }
    }
    return worst;
}

bool is_permutation_of_rows(const std::vector<index_t>& order, index_t n) {
    std::vector<index_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<index_t> ids(static_cast<std::size_t>(n));
    std::iota(ids.begin(), ids.end(), 0);
    return sorted == ids;
}

/// Every owned row's aggregation of a fixed function of the neighbours' original ids, with its
/// vertex data, keyed by the row's original id: what a reordering must not change.
struct RowSummary {
    double sum = 0.0;
    std::vector<float> features;
    std::int64_t label = 0;
    std::vector<std::uint8_t> masks;
    bool boundary = false;
};

std::map<global_id, RowSummary> summarize_rows(const LocalPart& part) {
    const LocalGraph& g = part.graph;
    const auto n = static_cast<std::size_t>(g.num_owned);
    const auto value = [](global_id original) { return std::sin(static_cast<double>(original)); };
    std::map<global_id, RowSummary> rows;
    for (std::size_t i = 0; i < n; ++i) {
        RowSummary& s = rows[g.owned_original[i]];
        for (index_t k = g.inner.row_ptr[i]; k < g.inner.row_ptr[i + 1]; ++k) {
            s.sum += g.inner.values[static_cast<std::size_t>(k)] *
                     value(g.owned_original[static_cast<std::size_t>(g.inner.col_idx[k])]);
        }
        s.features.assign(part.features.row(static_cast<std::int64_t>(i)),
                          part.features.row(static_cast<std::int64_t>(i)) + part.features.cols);
        s.label = part.labels[i];
        for (const auto* mask : {&part.train_mask, &part.val_mask, &part.test_mask}) {
            for (std::size_t split = 0; split * n < mask->size(); ++split) {
                s.masks.push_back((*mask)[split * n + i]);
            }
        }
        s.boundary = std::binary_search(g.boundary_rows.begin(), g.boundary_rows.end(),
                                        static_cast<index_t>(i));
    }
    for (std::size_t p = 0; p < g.halo.size(); ++p) {
        const HostDcsr& h = g.halo[p];
        const auto first = static_cast<std::size_t>(g.pattern.recv_offsets[p]);
        for (std::size_t r = 0; r < h.row_ids.size(); ++r) {
            RowSummary& s = rows[g.owned_original[static_cast<std::size_t>(h.row_ids[r])]];
            for (index_t k = h.block.row_ptr[r]; k < h.block.row_ptr[r + 1]; ++k) {
                s.sum +=
                    h.block.values[static_cast<std::size_t>(k)] *
                    value(g.halo_original[first + static_cast<std::size_t>(h.block.col_idx[k])]);
            }
        }
    }
    return rows;
}

std::vector<global_id> sent_originals(const LocalPart& part) {
    std::vector<global_id> out;
    for (const index_t row : part.graph.send_rows) {
        out.push_back(part.graph.owned_original[static_cast<std::size_t>(row)]);
    }
    return out;
}

}  // namespace

TEST_CASE("RCM lays a shuffled path out as a path", "[partition][order]") {
    // Path 0 - 1 - ... - 19 with ids shuffled: RCM finds bandwidth 1.
    const std::int64_t n = 20;
    std::vector<std::int64_t> id(n);
    std::iota(id.begin(), id.end(), 0);
    std::shuffle(id.begin(), id.end(), std::mt19937_64(5));
    std::vector<std::pair<std::int64_t, std::int64_t>> edges;
    for (std::int64_t v = 0; v + 1 < n; ++v) {
        edges.emplace_back(id[v], id[v + 1]);
        edges.emplace_back(id[v + 1], id[v]);
    }
    const HostCsr a = whole_inner(test::edge_list_graph(n, edges));
    std::vector<index_t> identity(n);
    std::iota(identity.begin(), identity.end(), 0);
    REQUIRE(bandwidth(a, identity) > 1);

    const std::vector<index_t> order = rcm_order(a);

    CHECK(is_permutation_of_rows(order, static_cast<index_t>(n)));
    CHECK(bandwidth(a, order) == 1);
}

TEST_CASE("RCM covers every component and isolated vertex, and narrows a shuffled graph",
          "[partition][order]") {
    // Two triangles and two isolated vertices; one directed edge (only A + Aᵀ is connected).
    const HostCsr small = whole_inner(test::edge_list_graph(
        8, {{0, 5}, {5, 0}, {5, 7}, {7, 5}, {0, 7}, {7, 0}, {1, 2}, {2, 3}, {3, 1}}));
    const std::vector<index_t> order = rcm_order(small);
    CHECK(is_permutation_of_rows(order, 8));
    CHECK(rcm_order(small) == order);  // deterministic

    const GraphDataset g = test::generated(3000, 6.0, 4, 30, 0.95);  // shuffled ids
    const HostCsr a = whole_inner(g);
    std::vector<index_t> identity(static_cast<std::size_t>(a.rows));
    std::iota(identity.begin(), identity.end(), 0);
    const std::vector<index_t> rcm = rcm_order(a);
    CHECK(is_permutation_of_rows(rcm, a.rows));
    CHECK(bandwidth(a, rcm) < bandwidth(a, identity) / 2);
}

TEST_CASE("a reordered part holds the same rows, edges, halo and vertex data",
          "[partition][order]") {
    const GraphDataset g = test::generated(600, 5.0, 9);
    const GlobalCsr adjacency = adjacency_matrix(g);
    const Partition p = partition_metis(g, 3, MetisOptions{.seed = 1});
    for (int rank = 0; rank < 3; ++rank) {
        LocalPart part = build_local_part(g, adjacency, p, rank);
        const auto before = summarize_rows(part);
        const auto sent = sent_originals(part);
        const LocalOrder kind = rank == 1 ? LocalOrder::metis : LocalOrder::rcm;
        INFO("rank " << rank << ", order " << to_string(kind));
        const std::vector<index_t> order = kind == LocalOrder::metis
                                               ? metis_block_order(part.graph.inner, 64)
                                               : rcm_order(part.graph.inner);
        REQUIRE(order != [&] {
            std::vector<index_t> identity(order.size());
            std::iota(identity.begin(), identity.end(), 0);
            return identity;
        }());

        reorder_rows(part, order);

        // validate_local_graph also wants owned_original ascending, which a reordered part
        // (like a chunked one) no longer is: its blocks' own invariants hold.
        validate(part.graph.inner, "reordered inner");
        for (const HostDcsr& h : part.graph.halo) {
            validate(h, "reordered halo");
        }
        CHECK(std::is_sorted(part.graph.boundary_rows.begin(), part.graph.boundary_rows.end()));
        CHECK(part.graph.boundary_rows.size() + part.graph.interior_rows.size() ==
              static_cast<std::size_t>(part.graph.num_owned));
        const auto after = summarize_rows(part);
        REQUIRE(after.size() == before.size());
        for (const auto& [original, row] : before) {
            const RowSummary& moved = after.at(original);
            CHECK(std::abs(moved.sum - row.sum) < 1e-9);
            CHECK(moved.features == row.features);
            CHECK(moved.label == row.label);
            CHECK(moved.masks == row.masks);
            CHECK(moved.boundary == row.boundary);
        }
        CHECK(sent_originals(part) == sent);
    }
}

TEST_CASE("METIS blocks keep most edges inside a block of a shuffled graph", "[partition][order]") {
    const GraphDataset g = test::generated(3000, 6.0, 4, 30, 0.95);  // shuffled ids
    const HostCsr a = whole_inner(g);
    const std::vector<index_t> order = metis_block_order(a, 100);
    REQUIRE(is_permutation_of_rows(order, a.rows));
    CHECK(metis_block_order(a, 100) == order);  // seeded
    std::vector<index_t> position(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        position[static_cast<std::size_t>(order[i])] = static_cast<index_t>(i);
    }
    // Within 2 blocks' width: far more edges than the shuffled order has.
    const auto near = [&](const std::vector<index_t>& pos) {
        std::int64_t count = 0;
        for (index_t r = 0; r < a.rows; ++r) {
            for (index_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
                count += std::abs(pos[r] - pos[a.col_idx[k]]) < 200 ? 1 : 0;
            }
        }
        return static_cast<double>(count) / a.nnz();
    };
    std::vector<index_t> identity(order.size());
    std::iota(identity.begin(), identity.end(), 0);
    CHECK(near(position) > 0.5);
    CHECK(near(identity) < 0.2);
    const HostCsr small = whole_inner(test::path_graph(5));
    CHECK(metis_block_order(small) == std::vector<index_t>{0, 1, 2, 3, 4});  // one block
}

TEST_CASE("a bad local order is refused with its entry", "[partition][order]") {
    LocalPart part = build_local_part(test::path_graph(4), adjacency_matrix(test::path_graph(4)),
                                      partition_block(4, 1), 0);
    const std::vector<index_t> repeated{0, 1, 1, 3};
    CHECK_THROWS_WITH(reorder_rows(part, repeated),
                      Contains("local order: entry 2 (1) is out of range or repeated"));
    CHECK_THROWS_WITH(reorder_rows(part, std::vector<index_t>{0, 1}),
                      Contains("local order: 2 positions for 4 owned rows"));
    CHECK(parse_local_order("rcm") == LocalOrder::rcm);
    CHECK(parse_local_order("metis") == LocalOrder::metis);
    CHECK_FALSE(parse_local_order("nd").has_value());
}

}  // namespace strata
