// Finite-difference checks of every op of the catalogue (src/nn/op_catalogue.hpp) on a directed
// graph where the aggregation's transpose matters, and of `+=` gradient accumulation by every
// op; an activation sweep beyond the catalogue's samples; whole models — a GCN in every
// --recompute mode, and a residual model whose tensors have two consumers — through the
// FullGraphExecutor.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "layers/add_op.hpp"
#include "layers/aggregate_op.hpp"
#include "layers/bias_activation_op.hpp"
#include "layers/gcn_model.hpp"
#include "layers/linear_op.hpp"
#include "tests/layers/layer_harness.hpp"
#include "tests/layers/op_catalogue_harness.hpp"

using namespace strata;
using strata::test::away_from_zero;
using strata::test::catalogue_cases;
using strata::test::CatalogueCase;
using strata::test::check_model_gradients;
using strata::test::check_op_gradients;
using strata::test::graph_for;
using strata::test::inputs_for;
using strata::test::OneRankGraph;
using strata::test::OneRankModel;
using strata::test::random_matrix;
using strata::test::run_op;

namespace {

/// What check_op_gradients probes: every input entry (when the input gets a gradient) and every
/// parameter.
int probed(const CatalogueCase& c, const std::vector<HostMatrix>& x) {
    std::size_t n = 0;
    for (const HostMatrix& m : x) {
        n += c.input_gradients() ? m.values.size() : 0;
    }
    for (const ParameterSpec& spec : c.op().parameter_specs(c.sample.input_cols)) {
        n += static_cast<std::size_t>(spec.rows) * static_cast<std::size_t>(spec.cols);
    }
    return static_cast<int>(n);
}

}  // namespace

TEST_CASE("every op's gradients match finite differences on a directed graph", "[layers]") {
    std::set<std::string> tested;
    for (CatalogueCase& c : catalogue_cases()) {
        INFO(c.label());
        const auto g = graph_for(c, 14);
        REQUIRE_FALSE(g->inputs->blocks.inner_symmetric());
        const std::vector<HostMatrix> x = inputs_for(c, 14, 5);

        const auto check =
            check_op_gradients(c.op(), *g, x, /*training=*/true, 1e-3f, c.input_gradients());

        CHECK(check.checked == probed(c, x));
        CHECK(check.worst_error < 2e-3);
        tested.insert(c.entry->name);
    }
    REQUIRE_FALSE(tested.empty());                  // an empty loop fails
    CHECK(tested.size() == op_catalogue().size());  // every row, each with a sample
}

TEST_CASE("aggregation on a symmetric graph stores its inner block once", "[layers]") {
    OneRankGraph g(14, 4);
    AggregateOp op;

    const auto check = check_op_gradients(op, g, {random_matrix(14, 4, 3)}, true);

    CHECK(g.inputs->blocks.inner_symmetric());
    CHECK(&g.inputs->blocks.inner_t() == &g.inputs->blocks.inner());
    CHECK(check.worst_error < 2e-3);
}

TEST_CASE("bias + activation + dropout gradients match finite differences", "[layers]") {
    OneRankGraph g(12, 5);
    for (const Activation act : {Activation::none, Activation::relu, Activation::elu,
                                 Activation::leaky_relu, Activation::gelu}) {
        for (const float rate : {0.0f, 0.4f}) {
            for (const bool bias : {false, true}) {
                BiasActivationOp op(6, BiasActivationOptions{.bias = bias,
                                                             .activation = act,
                                                             .negative_slope = 0.15f,
                                                             .dropout = rate,
                                                             .seed = 5,
                                                             .dropout_id = 2});
                INFO(op.describe());

                const auto check = check_op_gradients(
                    op, g, {away_from_zero(random_matrix(12, 6, 4))}, /*training=*/true, 1e-3f);

                CHECK(check.checked == 12 * 6 + (bias ? 6 : 0));
                CHECK(check.worst_error < 2e-3);
            }
        }
    }
}

TEST_CASE("bias + activation saves what its backward reads and runs in place except gelu",
          "[layers]") {
    const auto op = [](Activation a) {
        return BiasActivationOp(4, BiasActivationOptions{.bias = true, .activation = a});
    };
    CHECK(op(Activation::none).saves().inputs.empty());
    CHECK_FALSE(op(Activation::none).saves().output);
    for (const Activation a : {Activation::relu, Activation::elu, Activation::leaky_relu}) {
        CHECK(op(a).saves().inputs.empty());
        CHECK(op(a).saves().output);
        CHECK(op(a).in_place());
    }
    CHECK(op(Activation::gelu).saves().inputs == std::vector<int>{0});
    CHECK_FALSE(op(Activation::gelu).saves().output);
    CHECK_FALSE(op(Activation::gelu).in_place());
    CHECK(op(Activation::leaky_relu).describe() == "bias+leaky_relu 0.2");
    REQUIRE_THROWS_WITH(
        BiasActivationOp(4, BiasActivationOptions{.activation = Activation::leaky_relu,
                                                  .negative_slope = -0.5f}),
        Catch::Contains("leaky_relu negative slope must be >= 0, got -0.5"));
}

TEST_CASE("a model with elu, leaky_relu or gelu and dropout has exact gradients", "[layers]") {
    // x W0 -> Â -> bias + act + dropout -> W1 -> bias: the activation inside the executor, where
    // elu and leaky_relu run in place over their input and gelu does not.
    OneRankGraph g(16, 5, /*directed=*/true);
    for (const Activation act : {Activation::elu, Activation::leaky_relu, Activation::gelu}) {
        ModelGraph graph;
        const TensorId x = graph.add_input("features", 5);
        const TensorId t = graph.add("lin0", std::make_unique<LinearOp>(5, 6, 0.0f), {x});
        const TensorId a = graph.add("agg", std::make_unique<AggregateOp>(), {t});
        const TensorId h = graph.add(
            "act",
            std::make_unique<BiasActivationOp>(
                6,
                BiasActivationOptions{
                    .bias = true, .activation = act, .dropout = 0.3f, .seed = 4, .dropout_id = 1}),
            {a});
        const TensorId y = graph.add("lin1", std::make_unique<LinearOp>(6, 3, 0.0f), {h});
        graph.set_output(graph.add(
            "out", std::make_unique<BiasActivationOp>(3, BiasActivationOptions{.bias = true}),
            {y}));
        OneRankModel m(g, std::move(graph), Recompute::none);
        INFO("activation " << static_cast<int>(act));

        const auto check = check_model_gradients(m);

        CHECK(check.checked == 5 * 6 + 6 + 6 * 3 + 3);
        CHECK(check.worst_error < 2e-3);
    }
}

TEST_CASE("a bare dropout is the identity in evaluation and skipped by its plan", "[layers]") {
    OneRankGraph g(12, 5);
    BiasActivationOp op(6, BiasActivationOptions{.dropout = 0.5f, .seed = 1});
    const HostMatrix x = random_matrix(12, 6, 5);

    const auto run = run_op(op, g, {x}, random_matrix(12, 6, 6), /*training=*/false);

    CHECK(op.identity_in_evaluation());
    CHECK(run.y[0].values == x.values);
}

TEST_CASE("add with coefficients in place, with one tensor as both inputs", "[layers]") {
    // The plan's aliases: y over x0 (= x1), dx0 over dy and dx1 = dx0 (accumulated).
    OneRankGraph g(6, 3);
    Backend& backend = *g.backend;
    AddOp op(0.5f, 2.0f);
    const HostMatrix x = random_matrix(6, 4, 9);
    DenseMatrix t = DenseMatrix::upload(backend, x);
    const std::vector<ConstMatrixView> xs{t.view(), t.view()};
    op.forward(g.context(true),
               ForwardArgs{.x = xs, .y = t.view(), .rows = {0, 6}, .workspace = {}});
    const HostMatrix y = t.download();
    for (std::size_t k = 0; k < x.values.size(); ++k) {
        CHECK(y.values[k] == Approx(2.5f * x.values[k]));
    }
    const HostMatrix dy_host = random_matrix(6, 4, 10);
    DenseMatrix dy = DenseMatrix::upload(backend, dy_host);
    const std::vector<MatrixView> dx{dy.view(), dy.view()};
    const std::vector<GradMode> modes{GradMode::overwrite, GradMode::accumulate};
    op.backward(g.context(true), BackwardArgs{.x = {},
                                              .y = {},
                                              .dy = dy.view(),
                                              .dx = dx,
                                              .modes = modes,
                                              .rows = {0, 6},
                                              .workspace = {}});
    const HostMatrix got = dy.download();
    for (std::size_t k = 0; k < x.values.size(); ++k) {
        CHECK(got.values[k] == Approx(2.5f * dy_host.values[k]));
    }
}

TEST_CASE("every op's backward adds onto an existing gradient with +=", "[layers]") {
    std::set<std::string> tested;
    std::set<std::string> applicable;
    for (CatalogueCase& c : catalogue_cases()) {
        if (!c.input_gradients()) {
            continue;  // its input is a model input: no gradient to add onto
        }
        applicable.insert(c.entry->name);
        INFO(c.label());
        const auto g = graph_for(c, 12);
        const std::vector<HostMatrix> x = inputs_for(c, 12, 20);
        std::vector<HostMatrix> start;
        for (const HostMatrix& m : x) {
            start.push_back(random_matrix(12, m.cols, 30 + start.size()));
        }
        const HostMatrix dy = random_matrix(12, c.output_cols(), 40);

        const auto fresh = run_op(c.op(), *g, x, dy, true);
        const auto added = run_op(c.op(), *g, x, dy, true, 1, &start);

        double worst = 0.0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            for (std::size_t k = 0; k < start[i].values.size(); ++k) {
                worst = std::max<double>(
                    worst,
                    std::abs(added.dx[i].values[k] - (start[i].values[k] + fresh.dx[i].values[k])));
            }
        }
        CHECK(worst < 1e-6);
        CHECK(added.dparams == fresh.dparams);
        tested.insert(c.entry->name);
    }
    REQUIRE_FALSE(tested.empty());  // an empty loop fails
    CHECK(tested == applicable);
}

TEST_CASE("the training loss gradient of a GCN matches finite differences in every mode",
          "[layers]") {
    // 5 -> 8 (aggregate first), 8 -> 8 (aggregate first: a fold or a recomputation), 8 -> 3
    // (transform first), with dropout, on a directed graph.
    OneRankGraph g(16, 5, /*directed=*/true);
    for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
        OneRankModel m(
            g,
            build_gcn(
                5, 3,
                GcnOptions{
                    .layers = 3, .hidden = 8, .dropout = 0.3f, .weight_decay = 0.0f, .seed = 5}),
            mode);
        INFO("recompute " << to_string(mode));

        const auto check = check_model_gradients(m);

        CHECK(check.checked == 5 * 8 + 8 + 8 * 8 + 8 + 8 * 3 + 3);
        CHECK(check.worst_error < 2e-3);
    }
}

TEST_CASE("a tensor read by two ops gets the sum of both gradients", "[layers]") {
    // t = x W0;  h = relu(Â t + t + b);  logits = h W1 + b1: t feeds the aggregation and the add.
    OneRankGraph g(16, 5, /*directed=*/true);
    for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
        ModelGraph graph = strata::test::residual_model(5, 6, 3);
        OneRankModel m(g, std::move(graph), mode);
        INFO("recompute " << to_string(mode));

        const auto check = check_model_gradients(m);

        CHECK(check.checked == 5 * 6 + 6 + 6 * 3 + 3);
        CHECK(check.worst_error < 2e-3);
    }
}
