// Chunked execution: every op of the catalogue (src/nn/op_catalogue.hpp) that runs on row chunks
// (runs_on_row_chunks: forward, then backward with parameter gradients accumulated chunk by
// chunk) equals the whole-rows run — what a layer-pipelined executor relies on — and every other
// op refuses a partial row range.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "tests/layers/layer_harness.hpp"
#include "tests/layers/op_catalogue_harness.hpp"

using namespace strata;
using strata::test::catalogue_cases;
using strata::test::CatalogueCase;
using strata::test::graph_for;
using strata::test::inputs_for;
using strata::test::OpRun;
using strata::test::random_matrix;
using strata::test::run_op;

namespace {

double worst_difference(const OpRun& a, const OpRun& b) {
    double worst = 0.0;
    auto compare = [&](const std::vector<float>& x, const std::vector<float>& y) {
        REQUIRE(x.size() == y.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            worst = std::max(worst, std::abs(static_cast<double>(x[i]) - y[i]) /
                                        std::max(1.0, std::abs(static_cast<double>(y[i]))));
        }
    };
    compare(a.y[0].values, b.y[0].values);
    for (std::size_t i = 0; i < a.dx.size(); ++i) {
        compare(a.dx[i].values, b.dx[i].values);
    }
    for (std::size_t p = 0; p < a.dparams.size(); ++p) {
        compare(a.dparams[p], b.dparams[p]);
    }
    return worst;
}

}  // namespace

TEST_CASE("every op run over row chunks equals the whole-rows run", "[layers]") {
    std::set<std::string> tested;
    std::set<std::string> applicable;
    for (CatalogueCase& c : catalogue_cases()) {
        if (!runs_on_row_chunks(c.op())) {
            continue;  // refuses a partial row range (the next test)
        }
        applicable.insert(c.entry->name);
        const auto g = graph_for(c, 37);  // 37 rows: chunks of unequal size
        const std::vector<HostMatrix> x = inputs_for(c, 37, 50);
        const HostMatrix dy = random_matrix(37, c.output_cols(), 60);
        const OpRun whole = run_op(c.op(), *g, x, dy, /*training=*/true);
        for (const int chunks : {2, 3, 5, 37}) {
            INFO(c.label() << ", " << chunks << " chunks");

            const OpRun chunked = run_op(c.op(), *g, x, dy, /*training=*/true, chunks);

            CHECK(chunked.y[0].values == whole.y[0].values);  // row-local or per-row sums: exact
            CHECK(worst_difference(chunked, whole) < 1e-6);
        }
        tested.insert(c.entry->name);
    }
    REQUIRE_FALSE(tested.empty());  // an empty loop fails
    CHECK(tested == applicable);
}

TEST_CASE("every op that does not run on row chunks refuses a partial row range", "[layers]") {
    // An error, never a result computed from part of what the op reads.
    std::set<std::string> tested;
    std::set<std::string> applicable;
    for (CatalogueCase& c : catalogue_cases()) {
        if (runs_on_row_chunks(c.op())) {
            continue;
        }
        applicable.insert(c.entry->name);
        INFO(c.label());
        const auto g = graph_for(c, 37);
        const std::vector<HostMatrix> x = inputs_for(c, 37, 50);
        const HostMatrix dy = random_matrix(37, c.output_cols(), 60);

        CHECK_THROWS_AS(
            run_op(c.op(), *g, x, dy, /*training=*/true, 2, nullptr, 11, c.input_gradients()),
            Error);
        tested.insert(c.entry->name);
    }
    REQUIRE_FALSE(tested.empty());
    CHECK(tested == applicable);
}
