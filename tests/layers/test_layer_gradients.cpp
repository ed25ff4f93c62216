// Finite-difference checks of every layer's backward against its forward, and of the loss.
#include <catch2/catch.hpp>

#include "layers/activation_layers.hpp"
#include "layers/gcn_layer.hpp"
#include "layers/model_builder.hpp"
#include "src/nn/model.hpp"
#include "tests/layers/layer_harness.hpp"

using namespace strata;
using strata::test::check_layer_gradients;
using strata::test::OneRankGraph;
using strata::test::random_matrix;

TEST_CASE("gcn layer gradients match finite differences when it transforms first", "[layers]") {
    OneRankGraph g(12, 5);
    GcnLayer layer(*g.blocks, g.comm, 5, 3);
    REQUIRE(layer.transform_first());

    const auto check = check_layer_gradients(layer, *g.backend, random_matrix(12, 5, 1), true);

    CHECK(check.checked == 12 * 5 + 5 * 3 + 3);
    CHECK(check.worst_error < 2e-3);
}

TEST_CASE("gcn layer gradients match finite differences when it aggregates first", "[layers]") {
    OneRankGraph g(12, 3);
    GcnLayer layer(*g.blocks, g.comm, 3, 4, 0.0f, /*bias=*/false);
    REQUIRE_FALSE(layer.transform_first());

    const auto check = check_layer_gradients(layer, *g.backend, random_matrix(12, 3, 2), true);

    CHECK(check.checked == 12 * 3 + 3 * 4);
    CHECK(check.worst_error < 2e-3);
}

TEST_CASE("relu gradients match finite differences away from the kink", "[layers]") {
    OneRankGraph g;
    ReluLayer layer(*g.backend);
    HostMatrix x = random_matrix(12, 4, 3);
    for (auto& v : x.values) {
        v += (v >= 0.0f ? 0.1f : -0.1f);  // keep |x| > eps so the kink is not crossed
    }

    const auto check = check_layer_gradients(layer, *g.backend, x, true);

    CHECK(check.worst_error < 2e-3);
}

TEST_CASE("dropout gradients match finite differences with the same mask", "[layers]") {
    OneRankGraph g;
    DropoutLayer layer(*g.blocks, 0.5f, 42, 0);

    const auto check = check_layer_gradients(layer, *g.backend, random_matrix(12, 6, 4), true);

    CHECK(check.worst_error < 2e-3);
}

TEST_CASE("dropout is the identity in evaluation", "[layers]") {
    OneRankGraph g;
    DropoutLayer layer(*g.blocks, 0.5f, 42, 0);
    const HostMatrix x = random_matrix(12, 6, 5);
    const DenseMatrix dx = DenseMatrix::upload(*g.backend, x);
    DenseMatrix y(*g.backend, 12, 6);

    layer.forward(dx, y, LayerContext{.training = false});

    CHECK(y.download().values == x.values);
}

TEST_CASE("the training loss gradient of a whole GCN matches finite differences", "[layers]") {
    OneRankGraph g(12, 5);
    Model model(*g.backend);
    build_gcn(model, *g.blocks, g.comm, 5, 3,
              GcnOptions{.layers = 2, .hidden = 4, .dropout = 0.3f, .seed = 5});
    model.allocate(12, 5, 3);
    const DenseMatrix x = DenseMatrix::upload(*g.backend, random_matrix(12, 5, 6));
    std::vector<index_t> labels(12);
    std::vector<std::uint8_t> mask(12, 1);
    for (std::size_t i = 0; i < labels.size(); ++i) {
        labels[i] = static_cast<index_t>(g.graph.labels[i]);
    }
    mask[3] = 0;
    Buffer<index_t> d_labels(*g.backend, std::span<const index_t>(labels));
    Buffer<std::uint8_t> d_mask(*g.backend, std::span<const std::uint8_t>(mask));
    DenseMatrix dlogits(*g.backend, 12, 3);
    const LayerContext context{.training = true, .epoch = 1};
    auto loss = [&](bool with_grad) {
        const DenseMatrix& logits = model.forward(x, context);
        MatrixView grad = with_grad ? dlogits.view() : MatrixView{};
        return g.backend
                   ->softmax_cross_entropy(logits.view(), d_labels.span(), d_mask.span(), 1.0f / 11,
                                           grad)
                   .loss /
               11.0;
    };

    model.zero_grads();
    (void)loss(true);
    model.backward(dlogits, {});
    std::vector<float> grads(model.grads().size());
    g.backend->download(grads.data(), model.grads().data(), grads.size() * sizeof(float));
    std::vector<float> params = model.download_params();
    double worst = 0.0;
    const float eps = 1e-3f;  // small enough not to cross a ReLU kink of the hidden layer
    for (std::size_t i = 0; i < params.size(); ++i) {
        const float saved = params[i];
        params[i] = saved + eps;
        model.upload_params(params);
        const double plus = loss(false);
        params[i] = saved - eps;
        model.upload_params(params);
        const double minus = loss(false);
        params[i] = saved;
        model.upload_params(params);
        const double numeric = (plus - minus) / (2.0 * eps);
        worst = std::max(worst, std::abs(grads[i] - numeric) / std::max(1.0, std::abs(numeric)));
    }

    CHECK(params.size() == 5 * 4 + 4 + 4 * 3 + 3);
    CHECK(worst < 2e-3);
}
