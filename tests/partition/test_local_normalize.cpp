// normalized(): the symmetric operator built on each rank equals the old global path
// (gcn_normalize, then cut) bit for bit; mean and sum against a dense loop over the edge list;
// the names of the normalizations.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "datasets/normalize.hpp"
#include "partition/local_graph.hpp"
#include "partition/local_normalize.hpp"
#include "partition/metis_partitioner.hpp"
#include "src/base/error.hpp"
#include "tests/partition/checks.hpp"
#include "tests/partition/fixtures.hpp"
#include "tests/support/graphs.hpp"

using Catch::Matchers::Contains;

namespace strata {
namespace {

Partition partition_for(const GraphDataset& g, const std::string& method, int k) {
    if (method == "random") {
        return partition_random(g.num_vertices(), k, 7);
    }
    if (method == "metis") {
        return partition_metis(g, k, MetisOptions{.seed = 2});
    }
    return partition_block(g.num_vertices(), k);
}

/// For every rank: normalized(raw, symmetric) == the rank's rows of gcn_normalize, bitwise.
void check_symmetric_equals_gcn_normalize(const GraphDataset& g) {
    const GlobalCsr a = adjacency_matrix(g);
    const GlobalCsr a_hat = gcn_normalize(g);
    for (const char* method : {"block", "random", "metis"}) {
        for (int k : {1, 3, 4}) {
            const Partition p = partition_for(g, method, k);
            LocalGraphBuilder raw(a, p);
            LocalGraphBuilder old(a_hat, p);
            for (int r = 0; r < k; ++r) {
                std::string why;
                const LocalGraph built = normalized(raw.build(r), Normalization::symmetric);
                const bool same = test::same_operator(built, old.build(r), why);
                INFO(g.name << ", " << method << " K=" << k << " rank " << r << ": " << why);
                CHECK(same);
                REQUIRE_NOTHROW(validate_local_graph(built, "normalized"));
            }
        }
    }
}

/// Dense N x N reference of an operator from the edge list, in double.
std::vector<std::vector<double>> dense_operator(const GraphDataset& g, Normalization n) {
    const auto size = static_cast<std::size_t>(g.num_vertices());
    std::vector<std::vector<double>> a(size, std::vector<double>(size, 0.0));
    for (std::size_t v = 0; v < size; ++v) {
        for (auto k = static_cast<std::size_t>(g.indptr[v]);
             k < static_cast<std::size_t>(g.indptr[v + 1]); ++k) {
            a[v][static_cast<std::size_t>(g.indices[k])] +=
                g.edge_weight.empty() ? 1.0 : double{g.edge_weight[k]};
        }
    }
    std::vector<double> degree(size, 0.0);
    for (std::size_t v = 0; v < size; ++v) {
        for (double x : a[v]) {
            degree[v] += x;
        }
    }
    if (n == Normalization::mean) {
        for (std::size_t v = 0; v < size; ++v) {
            for (double& x : a[v]) {
                x = degree[v] == 0.0 ? 0.0 : x / degree[v];
            }
        }
    } else if (n == Normalization::symmetric) {
        std::vector<std::vector<double>> m = a;
        for (std::size_t v = 0; v < size; ++v) {
            m[v][v] += 1.0;
            for (std::size_t u = 0; u < size; ++u) {
                m[v][u] /= std::sqrt((1.0 + degree[v]) * (1.0 + degree[u]));
            }
        }
        return m;
    }
    return a;
}

/// Every rank's normalized blocks against the dense reference: each stored entry within
/// float rounding, and every nonzero of the reference stored (so no entry is missing).
void check_against_dense(const GraphDataset& g, const Partition& p, Normalization n) {
    const std::vector<std::vector<double>> dense = dense_operator(g, n);
    const GlobalCsr a = adjacency_matrix(g);  // the builder keeps a reference
    LocalGraphBuilder builder(a, p);
    std::vector<LocalGraph> graphs;
    for (int r = 0; r < p.num_parts; ++r) {
        graphs.push_back(normalized(builder.build(r), n));
    }
    double worst = 0.0;
    std::size_t nonzeros = 0;
    std::size_t stored_nonzeros = 0;
    for (const auto& [v, u, value] : test::local_entries(graphs)) {
        const double expected = dense[static_cast<std::size_t>(v)][static_cast<std::size_t>(u)];
        worst = std::max(worst, std::abs(value - expected) / std::max(1e-30, std::abs(expected)));
        stored_nonzeros += value != 0.0f ? 1 : 0;
    }
    for (const auto& row : dense) {
        for (double x : row) {
            nonzeros += x != 0.0 ? 1 : 0;
        }
    }
    INFO(to_string(n) << ", K=" << p.num_parts);
    CHECK(worst < 1e-6);
    CHECK(stored_nonzeros == nonzeros);
}

}  // namespace

TEST_CASE("normalized(raw, symmetric) is gcn_normalize's Â cut per rank, bit for bit",
          "[partition]") {
    SECTION("Cora (unweighted)") {
        check_symmetric_equals_gcn_normalize(test::cora());
    }
    SECTION("a directed weighted graph with self loops and duplicates, exact sums") {
        check_symmetric_equals_gcn_normalize(test::weighted_directed_graph(300, 3, true));
    }
    SECTION("a directed weighted graph with self loops and duplicates, arbitrary weights") {
        check_symmetric_equals_gcn_normalize(test::weighted_directed_graph(300, 4, false));
    }
}

TEST_CASE("symmetric, mean and sum operators equal a dense loop over the edge list",
          "[partition]") {
    const GraphDataset g = test::weighted_directed_graph(60, 5, false);
    for (const Normalization n :
         {Normalization::symmetric, Normalization::mean, Normalization::sum}) {
        for (int k : {1, 3}) {
            check_against_dense(g, partition_random(60, k, 1), n);
        }
    }
}

TEST_CASE("each operator has A's exchange; only the symmetric one adds the diagonal",
          "[partition]") {
    // 0 -> 1 (w 2), 0 -> 1 again (w 0.5), 1 -> 1 (self loop, w 3), 2 -> 0: in-degrees
    // d = (1, 5.5, 0), so vertex 2 has no in-edge.
    GraphDataset g = test::edge_list_graph(3, {{0, 1}, {0, 1}, {1, 1}, {2, 0}});
    g.edge_weight = {1.0f, 2.0f, 0.5f, 3.0f};  // row 0: [2->0]; row 1: [0->1, 0->1, 1->1]
    const LocalGraph raw = build_local_graph(adjacency_matrix(g), partition_block(3, 1), 0);
    REQUIRE(raw.inner.row_ptr == std::vector<index_t>{0, 1, 3, 3});
    REQUIRE(raw.inner.col_idx == std::vector<index_t>{2, 0, 1});
    REQUIRE(raw.inner.values == std::vector<float>{1.0f, 2.5f, 3.0f});
    REQUIRE(raw.owned_degree == std::vector<double>{1.0, 5.5, 0.0});

    const LocalGraph sum = normalized(raw, Normalization::sum);
    const LocalGraph mean = normalized(raw, Normalization::mean);
    const LocalGraph sym = normalized(raw, Normalization::symmetric);

    CHECK(test::same_csr(sum.inner, raw.inner));
    CHECK(mean.inner.col_idx == raw.inner.col_idx);
    CHECK(mean.inner.values ==
          std::vector<float>{1.0f, static_cast<float>(2.5 / 5.5), static_cast<float>(3.0 / 5.5)});
    // A + I = [[1, 0, 1], [2.5, 4, 0], [0, 0, 1]], 1 + d = (2, 6.5, 1).
    REQUIRE(sym.inner.row_ptr == std::vector<index_t>{0, 2, 4, 5});
    REQUIRE(sym.inner.col_idx == std::vector<index_t>{0, 2, 0, 1, 2});
    CHECK(sym.inner.values == std::vector<float>{static_cast<float>(1.0 / std::sqrt(4.0)),
                                                 static_cast<float>(1.0 / std::sqrt(2.0)),
                                                 static_cast<float>(2.5 / std::sqrt(13.0)),
                                                 static_cast<float>(4.0 / std::sqrt(42.25)), 1.0f});
    CHECK(sym.owned_degree == raw.owned_degree);
    CHECK(sym.boundary_rows == raw.boundary_rows);
}

TEST_CASE("the symmetric operator refuses a non-positive 1 + d", "[partition]") {
    GraphDataset g = test::edge_list_graph(2, {{1, 0}});
    g.edge_weight = {-1.0f};
    const LocalGraph raw = build_local_graph(adjacency_matrix(g), partition_block(2, 1), 0);

    REQUIRE_THROWS_WITH(normalized(raw, Normalization::symmetric),
                        Contains("degree of owned vertex 0 is 0"));
    REQUIRE_NOTHROW(normalized(raw, Normalization::mean));
}

TEST_CASE("normalizations are named symmetric, mean and sum", "[partition]") {
    for (const Normalization n :
         {Normalization::symmetric, Normalization::mean, Normalization::sum}) {
        CHECK(parse_normalization(to_string(n)) == n);
    }
    CHECK(to_string(Normalization::mean) == "mean");
    CHECK(!parse_normalization("gcn").has_value());
}

}  // namespace strata
