// gcn_normalize and row_normalize_features on hand-checkable graphs.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "datasets/normalize.hpp"
#include "src/base/error.hpp"

using Catch::Matchers::Contains;
using strata::GlobalCsr;
using strata::GraphDataset;

namespace {

GraphDataset graph_of(std::vector<std::int64_t> indptr, std::vector<std::int64_t> indices,
                      std::vector<float> weights = {}) {
    GraphDataset g;
    g.name = "hand";
    g.num_classes = 1;
    g.indptr = std::move(indptr);
    g.indices = std::move(indices);
    g.edge_weight = std::move(weights);
    return g;
}

void require_values(const GlobalCsr& a, const std::vector<double>& expected) {
    REQUIRE(a.values.size() == expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
        INFO("entry " << k);
        REQUIRE(a.values[k] == Approx(expected[k]).epsilon(1e-6));
    }
}

}  // namespace

TEST_CASE("gcn_normalize of the path 0-1-2 matches the hand-computed values", "[datasets]") {
    // A + I = [[1 1 0], [1 1 1], [0 1 1]], d = (2, 3, 2):
    // Â = [[1/2, 1/√6, 0], [1/√6, 1/3, 1/√6], [0, 1/√6, 1/2]].
    const GraphDataset g = graph_of({0, 1, 3, 4}, {1, 0, 2, 1});

    const GlobalCsr a = strata::gcn_normalize(g);

    const double s = 1.0 / std::sqrt(6.0);
    REQUIRE(a.indptr == std::vector<std::int64_t>{0, 2, 5, 7});
    REQUIRE(a.indices == std::vector<std::int64_t>{0, 1, 0, 1, 2, 1, 2});
    require_values(a, {0.5, s, s, 1.0 / 3.0, s, s, 0.5});
}

TEST_CASE("gcn_normalize sums duplicates, uses weights and adds I on top of self loops",
          "[datasets]") {
    // Row 0 holds 1 (w 2), 1 (w 1) and a self loop 0 (w 3); row 1 holds 0 (w 3).
    // A + I = [[3+1, 2+1], [3, 0+1]] = [[4, 3], [3, 1]], d = (7, 4):
    // Â = [[4/7, 3/√28], [3/√28, 1/4]].
    const GraphDataset g = graph_of({0, 3, 4}, {1, 1, 0, 0}, {2.0f, 1.0f, 3.0f, 3.0f});

    const GlobalCsr a = strata::gcn_normalize(g);

    REQUIRE(a.indptr == std::vector<std::int64_t>{0, 2, 4});
    REQUIRE(a.indices == std::vector<std::int64_t>{0, 1, 0, 1});
    const double c = 3.0 / std::sqrt(28.0);
    require_values(a, {4.0 / 7.0, c, c, 0.25});
}

TEST_CASE("gcn_normalize sorts unsorted rows and gives isolated vertices Â_vv = 1", "[datasets]") {
    // Directed 2 -> 0 and 1 -> 0 stored unsorted; vertex 3 isolated. Row sums:
    // d0 = 3, d1 = 1, d2 = 1, d3 = 1, so Â_00 = 1/3, Â_01 = Â_02 = 1/√3, Â_vv = 1 otherwise.
    const GraphDataset g = graph_of({0, 2, 2, 2, 2}, {2, 1});

    const GlobalCsr a = strata::gcn_normalize(g);

    REQUIRE(a.indptr == std::vector<std::int64_t>{0, 3, 4, 5, 6});
    REQUIRE(a.indices == std::vector<std::int64_t>{0, 1, 2, 1, 2, 3});
    const double r = 1.0 / std::sqrt(3.0);
    require_values(a, {1.0 / 3.0, r, r, 1.0, 1.0, 1.0});
}

TEST_CASE("gcn_normalize refuses a non-positive degree", "[datasets]") {
    const GraphDataset g = graph_of({0, 1, 2}, {1, 0}, {-1.0f, 1.0f});

    REQUIRE_THROWS_WITH(strata::gcn_normalize(g), Contains("degree of vertex 0 is 0"));
}

TEST_CASE("row_normalize_features divides each row by its sum and leaves zero rows", "[datasets]") {
    strata::HostMatrix x(3, 2);
    x.values = {1.0f, 3.0f, 0.0f, 0.0f, 2.0f, 2.0f};

    strata::row_normalize_features(x);

    REQUIRE(x.values == std::vector<float>{0.25f, 0.75f, 0.0f, 0.0f, 0.5f, 0.5f});
}

TEST_CASE("row_normalize_features divides a row with negative values by its L1 norm",
          "[datasets]") {
    // The signed sum of the first row is 0.001: dividing by it would give 3001 and -2999.
    strata::HostMatrix x(2, 3);
    x.values = {3.0f, -2.999f, 0.0f, -1.0f, -3.0f, 4.0f};

    strata::row_normalize_features(x);

    const double l1 = 3.0 + static_cast<double>(2.999f);
    REQUIRE(x.values == std::vector<float>{static_cast<float>(3.0 / l1),
                                           static_cast<float>(-static_cast<double>(2.999f) / l1),
                                           0.0f, -0.125f, -0.375f, 0.5f});
}
