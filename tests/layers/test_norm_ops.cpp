// Finite-difference gradient checks of LayerNormOp and EpsilonAddOp (and their += mode, chunked
// runs and the in-place alias of one tensor as both inputs), on one rank.
#include <catch2/catch.hpp>

#include "layers/epsilon_add_op.hpp"
#include "layers/layer_norm_op.hpp"
#include "tests/layers/layer_harness.hpp"

using namespace strata;
using strata::test::check_op_gradients;
using strata::test::OneRankGraph;
using strata::test::random_matrix;
using strata::test::run_op;

namespace {

/// max |a - b| over all entries of the runs' outputs, input gradients and parameter gradients.
double run_difference(const test::OpRun& a, const test::OpRun& b) {
    double worst = 0.0;
    const auto diff = [&](const std::vector<float>& p, const std::vector<float>& q) {
        REQUIRE(p.size() == q.size());
        for (std::size_t k = 0; k < p.size(); ++k) {
            worst = std::max<double>(worst, std::abs(p[k] - q[k]));
        }
    };
    diff(a.y[0].values, b.y[0].values);
    for (std::size_t i = 0; i < a.dx.size(); ++i) {
        diff(a.dx[i].values, b.dx[i].values);
    }
    for (std::size_t p = 0; p < a.dparams.size(); ++p) {
        diff(a.dparams[p], b.dparams[p]);
    }
    return worst;
}

}  // namespace

TEST_CASE("layer norm gradients match finite differences", "[layers]") {
    OneRankGraph g(12, 5);
    LayerNormOp op(6);

    const auto check = check_op_gradients(op, g, {random_matrix(12, 6, 1)}, true);

    CHECK(check.checked == 12 * 6 + 2 * 6);
    CHECK(check.worst_error < 2e-3);
}

TEST_CASE("layer norm: parameters, saves, row chunks and += ", "[layers]") {
    OneRankGraph g(12, 5);
    LayerNormOp op(6, 1e-3f);
    const std::vector<index_t> cols{6};
    const auto specs = op.parameter_specs(cols);
    REQUIRE(specs.size() == 2);
    CHECK(specs[0].name == "weight");
    CHECK(specs[0].init == Init::ones);
    CHECK(specs[1].name == "bias");
    CHECK(specs[1].init == Init::zeros);
    CHECK(specs[0].weight_decay == 0.0f);
    CHECK(op.saves().inputs == std::vector<int>{0});
    CHECK_FALSE(op.in_place());

    const HostMatrix x = random_matrix(12, 6, 2);
    const HostMatrix dy = random_matrix(12, 6, 3);
    const auto whole = run_op(op, g, {x}, dy, true);
    const auto chunked = run_op(op, g, {x}, dy, true, 3);
    CHECK(run_difference(whole, chunked) < 1e-6);

    const std::vector<HostMatrix> start{random_matrix(12, 6, 4)};
    const auto added = run_op(op, g, {x}, dy, true, 1, &start);
    double worst = 0.0;
    for (std::size_t k = 0; k < start[0].values.size(); ++k) {
        worst = std::max<double>(
            worst, std::abs(added.dx[0].values[k] - (start[0].values[k] + whole.dx[0].values[k])));
    }
    CHECK(worst < 1e-6);
    CHECK(added.dparams == whole.dparams);
    REQUIRE_THROWS_WITH(LayerNormOp(4, 0.0f), Catch::Contains("layer_norm: eps must be > 0"));
}

TEST_CASE("epsilon add gradients match finite differences", "[layers]") {
    OneRankGraph g(12, 5);
    EpsilonAddOp op;

    const auto check =
        check_op_gradients(op, g, {random_matrix(12, 4, 5), random_matrix(12, 4, 6)}, true);

    CHECK(check.checked == 2 * 12 * 4 + 1);
    CHECK(check.worst_error < 2e-3);
    const std::vector<index_t> cols{4, 4};
    const auto specs = op.parameter_specs(cols);
    REQUIRE(specs.size() == 1);
    CHECK(specs[0].name == "eps");
    CHECK(specs[0].rows == 1);
    CHECK(specs[0].cols == 1);
    CHECK(specs[0].init == Init::zeros);
}

TEST_CASE("epsilon add: row chunks, += and one tensor as both inputs in place", "[layers]") {
    OneRankGraph g(12, 5);
    EpsilonAddOp op;
    const HostMatrix x0 = random_matrix(12, 4, 7);
    const HostMatrix x1 = random_matrix(12, 4, 8);
    const HostMatrix dy = random_matrix(12, 4, 9);
    const auto whole = run_op(op, g, {x0, x1}, dy, true);
    const auto chunked = run_op(op, g, {x0, x1}, dy, true, 4);
    CHECK(run_difference(whole, chunked) < 1e-6);
    const std::vector<HostMatrix> start{random_matrix(12, 4, 10), random_matrix(12, 4, 11)};
    const auto added = run_op(op, g, {x0, x1}, dy, true, 1, &start);
    for (std::size_t i = 0; i < 2; ++i) {
        for (std::size_t k = 0; k < start[i].values.size(); ++k) {
            CHECK(added.dx[i].values[k] ==
                  Approx(start[i].values[k] + whole.dx[i].values[k]).margin(1e-6));
        }
    }

    // ε = 0.5; t is both inputs, y over t, dx0 = dx1 over dy: y = 2.5 t, dt = 2.5 dy,
    // dε = Σ dy ⊙ t.
    Backend& backend = *g.backend;
    const std::vector<float> half{0.5f};
    Buffer<float> eps_value(backend, std::span<const float>(half));
    const std::vector<float> zero{0.0f};
    Buffer<float> eps_grad(backend, std::span<const float>(zero));
    const std::vector<Parameter> params{
        {.name = "eps", .value = {eps_value.data(), 1, 1}, .grad = {eps_grad.data(), 1, 1}}};
    op.bind_parameters(params);
    DenseMatrix t = DenseMatrix::upload(backend, x0);
    const std::vector<ConstMatrixView> xs{t.view(), t.view()};
    op.forward(g.context(true),
               ForwardArgs{.x = xs, .y = t.view(), .rows = {0, 12}, .workspace = {}});
    const HostMatrix y = t.download();
    for (std::size_t k = 0; k < y.values.size(); ++k) {
        CHECK(y.values[k] == Approx(2.5f * x0.values[k]));
    }
    const DenseMatrix saved = DenseMatrix::upload(backend, x0);
    const std::vector<ConstMatrixView> xb{saved.view(), saved.view()};
    DenseMatrix d = DenseMatrix::upload(backend, dy);
    const std::vector<MatrixView> dx{d.view(), d.view()};
    const std::vector<GradMode> modes{GradMode::overwrite, GradMode::accumulate};
    op.backward(g.context(true), BackwardArgs{.x = xb,
                                              .y = {},
                                              .dy = d.view(),
                                              .dx = dx,
                                              .modes = modes,
                                              .rows = {0, 12},
                                              .workspace = {}});
    const HostMatrix got = d.download();
    double want_eps = 0.0;
    for (std::size_t k = 0; k < got.values.size(); ++k) {
        CHECK(got.values[k] == Approx(2.5f * dy.values[k]));
        want_eps += static_cast<double>(dy.values[k]) * x0.values[k];
    }
    CHECK(eps_grad.download()[0] == Approx(want_eps).epsilon(1e-5));
}

TEST_CASE("model parameters initialise Init::ones to ones (layer norm weight)", "[layers]") {
    OneRankGraph g(6, 3);
    ModelGraph graph;
    const TensorId x = graph.add_input("features", 3);
    graph.set_output(graph.add("ln", std::make_unique<LayerNormOp>(3), {x}));
    const ModelParameters params(*g.backend, graph, 1);

    CHECK(params.download() == std::vector<float>{1, 1, 1, 0, 0, 0});
    CHECK(params.all()[0].name == "ln.weight");
    CHECK(params.all()[1].name == "ln.bias");
}
