// BatchNormOp on one rank: finite-difference gradients, the running estimates (PyTorch's
// update, unbiased variance) and evaluation from them, the partial-range error, no second update
// in a recomputation, Adam leaving the running estimates alone, and a model through the executor
// in every --recompute mode.
#include <catch2/catch.hpp>

#include "layers/batch_norm_op.hpp"
#include "src/nn/optimizer.hpp"
#include "tests/layers/layer_harness.hpp"

using namespace strata;
using strata::test::check_model_gradients;
using strata::test::check_op_gradients;
using strata::test::OneRankGraph;
using strata::test::OneRankModel;
using strata::test::random_matrix;

namespace {

/// Parameter buffers of a BatchNormOp with given host values, bound to it.
struct BnParams {
    std::vector<Buffer<float>> values;
    std::vector<Buffer<float>> grads;

    BnParams(BatchNormOp& op, Backend& backend, const std::vector<std::vector<float>>& host) {
        std::vector<Parameter> views;
        const char* names[] = {"weight", "bias", "running_mean", "running_var"};
        for (std::size_t p = 0; p < 4; ++p) {
            values.emplace_back(backend, std::span<const float>(host[p]));
            const std::vector<float> zeros(host[p].size(), 0.0f);
            grads.emplace_back(backend, std::span<const float>(zeros));
            const auto cols = static_cast<index_t>(host[p].size());
            views.push_back({.name = names[p],
                             .value = {values.back().data(), 1, cols},
                             .grad = {grads.back().data(), 1, cols},
                             .trainable = p < 2});
        }
        op.bind_parameters(views);
    }
};

}  // namespace

TEST_CASE("batch norm gradients match finite differences", "[layers]") {
    OneRankGraph g(12, 5);
    BatchNormOp op(6);

    const auto check = check_op_gradients(op, g, {random_matrix(12, 6, 1)}, true);

    CHECK(check.checked == 12 * 6 + 4 * 6);  // running estimates: gradient 0 both ways
    CHECK(check.worst_error < 2e-3);
}

TEST_CASE("batch norm: statistics, running estimates and evaluation", "[layers]") {
    OneRankGraph g(12, 5);
    Backend& backend = *g.backend;
    const index_t rows = 12;
    const index_t cols = 3;
    BatchNormOp op(cols, 1e-5f, 0.25f);
    const std::vector<index_t> in{cols};
    const auto specs = op.parameter_specs(in);
    REQUIRE(specs.size() == 4);
    CHECK(specs[0].init == Init::ones);
    CHECK(specs[2].name == "running_mean");
    CHECK_FALSE(specs[2].trainable);
    CHECK(specs[3].init == Init::ones);
    CHECK_FALSE(specs[3].trainable);
    CHECK(specs[0].trainable);

    const std::vector<float> gamma{1.5f, -0.5f, 2.0f};
    const std::vector<float> beta{0.1f, 0.2f, -0.3f};
    BnParams params(op, backend, {gamma, beta, {1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}});
    const HostMatrix x = random_matrix(rows, cols, 2);
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix y(backend, rows, cols);
    Buffer<float> ws(backend, 4 * static_cast<std::size_t>(cols));
    const std::vector<ConstMatrixView> xs{dx.view()};
    op.forward(g.context(true),
               ForwardArgs{.x = xs, .y = y.view(), .rows = {0, rows}, .workspace = ws.span()});

    std::vector<double> mean(cols, 0.0);
    std::vector<double> var(cols, 0.0);
    for (std::size_t k = 0; k < x.values.size(); ++k) {
        mean[k % cols] += x.values[k] / static_cast<double>(rows);
    }
    for (std::size_t k = 0; k < x.values.size(); ++k) {
        const double d = x.values[k] - mean[k % cols];
        var[k % cols] += d * d / static_cast<double>(rows);
    }
    const HostMatrix got = y.download();
    for (std::size_t k = 0; k < x.values.size(); ++k) {
        const std::size_t j = k % cols;
        const double want = (x.values[k] - mean[j]) / std::sqrt(var[j] + 1e-5) * gamma[j] + beta[j];
        CHECK(got.values[k] == Approx(want).margin(1e-5));
    }
    const std::vector<float> rm = params.values[2].download();
    const std::vector<float> rv = params.values[3].download();
    for (std::size_t j = 0; j < static_cast<std::size_t>(cols); ++j) {
        CHECK(rm[j] == Approx(0.75 * (1.0 + static_cast<double>(j)) + 0.25 * mean[j]).margin(1e-6));
        const double unbiased = var[j] * rows / (rows - 1.0);
        CHECK(rv[j] ==
              Approx(0.75 * (4.0 + static_cast<double>(j)) + 0.25 * unbiased).margin(1e-6));
    }

    // A recomputation (forward re-run during backward) does not update them again.
    OpContext again = g.context(true);
    again.recompute = true;
    op.forward(again,
               ForwardArgs{.x = xs, .y = y.view(), .rows = {0, rows}, .workspace = ws.span()});
    CHECK(params.values[2].download() == rm);
    CHECK(params.values[3].download() == rv);

    // Evaluation uses the running estimates, over any rows.
    DenseMatrix z(backend, rows, cols);
    op.forward(g.context(false),
               ForwardArgs{.x = xs, .y = z.view(), .rows = {4, 5}, .workspace = ws.span()});
    const HostMatrix e = z.download();
    for (index_t i = 4; i < 9; ++i) {
        for (index_t j = 0; j < cols; ++j) {
            const auto k = static_cast<std::size_t>(i * cols + j);
            const auto c = static_cast<std::size_t>(j);
            const double want =
                (x.values[k] - rm[c]) / std::sqrt(rv[c] + 1e-5) * gamma[c] + beta[c];
            CHECK(e.values[k] == Approx(want).margin(1e-5));
        }
    }

    // Training over a part of the rows is refused.
    REQUIRE_THROWS_WITH(
        op.forward(g.context(true),
                   ForwardArgs{.x = xs, .y = y.view(), .rows = {0, 6}, .workspace = ws.span()}),
        Catch::Contains("batch_norm 3: forward in training needs all rows at once") &&
            Catch::Contains("got rows [0, 6) of 12"));
}

TEST_CASE("Adam leaves non-trainable parameters alone", "[layers]") {
    OneRankGraph g(4, 3);
    Backend& backend = *g.backend;
    const std::vector<float> host{1.0f, 2.0f, 3.0f, 4.0f};
    const std::vector<float> grad{0.5f, 0.5f, 0.5f, 0.5f};
    Buffer<float> values(backend, std::span<const float>(host));
    Buffer<float> grads(backend, std::span<const float>(grad));
    const std::vector<Parameter> params{
        {.name = "w", .value = {values.data(), 1, 2}, .grad = {grads.data(), 1, 2}},
        {.name = "running",
         .value = {values.data() + 2, 1, 2},
         .grad = {grads.data() + 2, 1, 2},
         .trainable = false}};
    Adam adam(backend, 4, AdamOptions{});

    adam.step(params);

    const std::vector<float> after = values.download();
    CHECK(after[0] != 1.0f);
    CHECK(after[1] != 2.0f);
    CHECK(after[2] == 3.0f);
    CHECK(after[3] == 4.0f);
}

TEST_CASE("a model with batch norm has exact gradients in every recompute mode", "[layers]") {
    // x W0 -> Â -> batch norm -> gelu -> W1 -> bias, on a directed graph, through the executor.
    // gelu keeps its input, the batch norm's output: with --recompute all the batch norm runs
    // again during backward (OpContext::recompute), which must not update the running estimates.
    OneRankGraph g(16, 5, /*directed=*/true);
    std::vector<float> running;
    for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
        ModelGraph graph;
        const TensorId x = graph.add_input("features", 5);
        const TensorId t = graph.add("lin0", std::make_unique<LinearOp>(5, 6, 0.0f), {x});
        const TensorId a = graph.add("agg", std::make_unique<AggregateOp>(), {t});
        const TensorId n = graph.add("bn", std::make_unique<BatchNormOp>(6), {a});
        const TensorId h = graph.add("act",
                                     std::make_unique<BiasActivationOp>(
                                         6, BiasActivationOptions{.activation = Activation::gelu}),
                                     {n});
        graph.mark_layer_input(h);
        const TensorId y = graph.add("lin1", std::make_unique<LinearOp>(6, 3, 0.0f), {h});
        graph.set_output(graph.add(
            "out", std::make_unique<BiasActivationOp>(3, BiasActivationOptions{.bias = true}),
            {y}));
        OneRankModel m(g, std::move(graph), mode);
        INFO("recompute " << to_string(mode));

        (void)m.loss();  // one step from the initial values: the running estimates after it
        const std::vector<float> p = m.parameters->download();
        const std::vector<float> r(p.begin() + 5 * 6 + 2 * 6, p.begin() + 5 * 6 + 4 * 6);
        if (running.empty()) {
            running = r;
        }
        CHECK(r == running);  // recomputation does not update them a second time

        const auto check = check_model_gradients(m);

        CHECK(check.checked == 5 * 6 + 4 * 6 + 6 * 3 + 3);
        CHECK(check.worst_error < 2e-3);
    }
}
