// Synthetic generator: determinism (seed, thread count), structure (symmetric, no self loops,
// no duplicates), sizes within the stated tolerance, homophily, split sizes, option errors.
#include <algorithm>
#include <numeric>

#include <omp.h>

#include <catch2/catch.hpp>

#include "datasets/generate.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/graph_stats.hpp"
#include "src/base/error.hpp"
#include "tests/datasets/graph_fixtures.hpp"

using Catch::Matchers::Contains;
using strata::GenerateOptions;
using strata::GraphDataset;
using strata::index_t;

namespace {

GenerateOptions small_options(std::uint64_t seed) {
    return {.num_vertices = 3000,
            .avg_degree = 12.0,
            .num_features = 8,
            .num_classes = 5,
            .homophily = 0.8,
            .seed = seed};
}

}  // namespace

TEST_CASE("generate_graph: same seed gives identical arrays, another seed differs", "[datasets]") {
    const GraphDataset a = strata::generate_graph(small_options(7));
    const GraphDataset b = strata::generate_graph(small_options(7));
    const GraphDataset c = strata::generate_graph(small_options(8));

    REQUIRE(strata::test::same_graph(a, b));
    REQUIRE(a.indices != c.indices);
    REQUIRE(a.features.values != c.features.values);
    REQUIRE(a.train_mask != c.train_mask);
}

TEST_CASE("generate_graph does not depend on the number of threads", "[datasets]") {
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
    const GraphDataset one = strata::generate_graph(small_options(3));
    omp_set_num_threads(3);
    const GraphDataset three = strata::generate_graph(small_options(3));
    omp_set_num_threads(before);

    REQUIRE(strata::test::same_graph(one, three));
}

TEST_CASE("generate_graph is symmetric, loop-free, duplicate-free and valid", "[datasets]") {
    GenerateOptions o = small_options(1);
    o.shuffle = true;

    const GraphDataset g = strata::generate_graph(o);
    const strata::GraphStats s = strata::graph_stats(g);

    REQUIRE_NOTHROW(strata::validate_graph(g, "generated"));
    REQUIRE(s.symmetric);
    REQUIRE(s.self_loops == 0);
    REQUIRE(s.duplicate_edges == 0);
    for (std::size_t v = 0; v + 1 < g.indptr.size(); ++v) {
        REQUIRE(
            std::is_sorted(g.indices.begin() + g.indptr[v], g.indices.begin() + g.indptr[v + 1]));
    }
}

TEST_CASE("generate_graph sizes: E within 10% below N*D, power-law degrees, exact splits",
          "[datasets]") {
    // Stated tolerance: removing duplicates and self loops loses a few percent of the N*D/2
    // draws, never more than 10% for these settings; nothing is ever added.
    const GraphDataset g = strata::generate_graph(small_options(11));
    const strata::GraphStats s = strata::graph_stats(g);

    REQUIRE(g.num_vertices() == 3000);
    REQUIRE(g.num_features() == 8);
    REQUIRE(g.num_classes == 5);
    const double requested = 3000.0 * 12.0;
    REQUIRE(static_cast<double>(g.num_edges()) <= requested);
    REQUIRE(static_cast<double>(g.num_edges()) >= 0.9 * requested);
    REQUIRE(s.degree_max >= 4 * static_cast<std::int64_t>(s.degree_mean));  // heavy tail
    REQUIRE(s.degree_median < s.degree_mean);                               // skewed
    REQUIRE(s.num_train == 1800);
    REQUIRE(s.num_val == 600);
    REQUIRE(s.num_test == 600);
    for (std::size_t v = 0; v < 3000; ++v) {
        REQUIRE(g.train_mask[v] + g.val_mask[v] + g.test_mask[v] == 1);
    }
    REQUIRE(s.label_counts == std::vector<std::int64_t>{600, 600, 600, 600, 600});
    REQUIRE(s.unlabeled == 0);
}

TEST_CASE("generate_graph keeps about H + (1-H)/C of the edges inside a class", "[datasets]") {
    // With equal class volumes, P(same class) = H + (1 - H) * Σ_c (vol_c / vol)^2 ≈ H + (1-H)/C.
    for (double h : {0.0, 0.5, 0.9}) {
        GenerateOptions o = small_options(5);
        o.homophily = h;
        const GraphDataset g = strata::generate_graph(o);

        std::int64_t inside = 0;
        for (std::size_t v = 0; v + 1 < g.indptr.size(); ++v) {
            for (auto k = g.indptr[v]; k < g.indptr[v + 1]; ++k) {
                inside +=
                    g.labels[static_cast<std::size_t>(g.indices[static_cast<std::size_t>(k)])] ==
                    g.labels[v];
            }
        }
        const double fraction = static_cast<double>(inside) / static_cast<double>(g.num_edges());
        INFO("H = " << h << ", fraction inside = " << fraction);
        REQUIRE(fraction == Approx(h + (1.0 - h) / 5.0).margin(0.05));
    }
}

TEST_CASE("generate_graph features separate the classes by their centroids", "[datasets]") {
    // Nearest class mean (means estimated on the same data) classifies most vertices right:
    // centroid distance ~ sqrt(2F) = 4 against noise σ = 0.5.
    GenerateOptions o = small_options(9);
    o.feature_noise = 0.5;
    const GraphDataset g = strata::generate_graph(o);
    const std::size_t f = 8;
    std::vector<double> mean(5 * f, 0.0);
    std::vector<double> count(5, 0.0);
    for (index_t v = 0; v < g.features.rows; ++v) {
        const auto c = static_cast<std::size_t>(g.labels[static_cast<std::size_t>(v)]);
        count[c] += 1.0;
        for (std::size_t j = 0; j < f; ++j) {
            mean[c * f + j] += g.features.at(v, static_cast<index_t>(j));
        }
    }
    for (std::size_t k = 0; k < mean.size(); ++k) {
        mean[k] /= count[k / f];
    }
    std::int64_t right = 0;
    for (index_t v = 0; v < g.features.rows; ++v) {
        std::size_t best = 0;
        double best_d = 1e300;
        for (std::size_t c = 0; c < 5; ++c) {
            double d = 0.0;
            for (std::size_t j = 0; j < f; ++j) {
                const double x = g.features.at(v, static_cast<index_t>(j)) - mean[c * f + j];
                d += x * x;
            }
            if (d < best_d) {
                best_d = d;
                best = c;
            }
        }
        right += best == static_cast<std::size_t>(g.labels[static_cast<std::size_t>(v)]);
    }
    REQUIRE(static_cast<double>(right) / 3000.0 > 0.9);
}

TEST_CASE("generate_graph refuses invalid options, naming the option", "[datasets]") {
    GenerateOptions o = small_options(0);

    SECTION("too few vertices") {
        o.num_vertices = 1;
        REQUIRE_THROWS_WITH(strata::generate_graph(o), Contains("--nodes 1 out of range"));
    }
    SECTION("degree above N-1") {
        o.avg_degree = 3000;
        REQUIRE_THROWS_WITH(strata::generate_graph(o), Contains("--avg-degree 3000 out of range"));
    }
    SECTION("more classes than vertices") {
        o.num_classes = 3001;
        REQUIRE_THROWS_WITH(strata::generate_graph(o), Contains("--classes 3001 out of range"));
    }
    SECTION("homophily above 1") {
        o.homophily = 1.5;
        REQUIRE_THROWS_WITH(strata::generate_graph(o), Contains("--homophily 1.5 out of range"));
    }
    SECTION("split fractions above 1 in total") {
        o.train_fraction = 0.9;
        REQUIRE_THROWS_WITH(strata::generate_graph(o), Contains("split fractions sum to 1.3 > 1"));
    }
    SECTION("degree exponent at most 2") {
        o.degree_exponent = 2.0;
        REQUIRE_THROWS_WITH(strata::generate_graph(o), Contains("--degree-exponent 2 must be > 2"));
    }
    SECTION("label noise above 1") {
        o.label_noise = 1.5;
        REQUIRE_THROWS_WITH(strata::generate_graph(o), Contains("--label-noise 1.5 out of range"));
    }
}

TEST_CASE("generate_graph label noise redraws about that share of labels, nothing else",
          "[datasets]") {
    const GraphDataset clean = strata::generate_graph(small_options(4));
    GenerateOptions o = small_options(4);
    o.label_noise = 0.3;
    const GraphDataset noisy = strata::generate_graph(o);
    CHECK(noisy.indptr == clean.indptr);  // edges and features follow the true class
    CHECK(noisy.indices == clean.indices);
    CHECK(noisy.features.values == clean.features.values);
    CHECK(noisy.train_mask == clean.train_mask);
    std::size_t changed = 0;
    for (std::size_t v = 0; v < clean.labels.size(); ++v) {
        changed += noisy.labels[v] != clean.labels[v] ? 1 : 0;
    }
    // Expected 0.3 x (1 - 1/5) x 3000 = 720 (a redrawn label may land on its class).
    CHECK(changed > 620);
    CHECK(changed < 820);
    o.label_noise = 0.0;
    CHECK(strata::generate_graph(o).labels == clean.labels);  // the default: as before
}

TEST_CASE("a generated graph survives write_graph and read_graph unchanged", "[datasets]") {
    strata::test::TempDir dir;
    const GraphDataset g = strata::generate_graph(small_options(2));

    strata::write_graph(g, dir.file("gen.h5"));

    REQUIRE(strata::test::same_graph(strata::read_graph(dir.file("gen.h5")), g));
}
