// Chunked execution: every op run over row chunks (forward, then backward with parameter
// gradients accumulated chunk by chunk) equals the whole-rows run — what a layer-pipelined
// executor relies on.
#include <catch2/catch.hpp>

#include "layers/add_op.hpp"
#include "layers/aggregate_op.hpp"
#include "layers/bias_activation_op.hpp"
#include "layers/linear_op.hpp"
#include "tests/layers/layer_harness.hpp"

using namespace strata;
using strata::test::OneRankGraph;
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
    OneRankGraph g(37, 6, /*directed=*/true);  // 37 rows: chunks of unequal size
    LinearOp linear(6, 5, 0.0f);
    AggregateOp aggregate;
    BiasActivationOp act(6, BiasActivationOptions{.bias = true,
                                                  .activation = Activation::relu,
                                                  .dropout = 0.5f,
                                                  .seed = 3,
                                                  .dropout_id = 1});
    BiasActivationOp drop(6, BiasActivationOptions{.dropout = 0.5f, .seed = 3});
    AddOp add;
    const std::vector<std::pair<Op*, int>> ops{
        {&linear, 1}, {&aggregate, 1}, {&act, 1}, {&drop, 1}, {&add, 2}};
    for (const auto& [op, inputs] : ops) {
        std::vector<HostMatrix> x;
        for (int i = 0; i < inputs; ++i) {
            x.push_back(random_matrix(37, 6, 50 + static_cast<std::uint64_t>(i)));
        }
        const HostMatrix dy = random_matrix(
            37, op->output_cols(std::vector<index_t>(static_cast<std::size_t>(inputs), 6)), 60);
        const OpRun whole = run_op(*op, g, x, dy, /*training=*/true);
        for (const int chunks : {2, 3, 5, 37}) {
            INFO(op->describe() << ", " << chunks << " chunks");

            const OpRun chunked = run_op(*op, g, x, dy, /*training=*/true, chunks);

            CHECK(chunked.y[0].values == whole.y[0].values);  // row-local or per-row sums: exact
            CHECK(worst_difference(chunked, whole) < 1e-6);
        }
    }
}
