// GatOp on one rank: the forward against a dense per-vertex loop over the dataset's own
// adjacency plus self loops (heads concat and mean, attention dropout off and on), finite-
// difference gradients of every parameter and the input on the directed fixture, a whole GAT
// model's gradients through the executor in every --recompute mode, and the errors.
#include <cmath>
#include <set>

#include <catch2/catch.hpp>

#include "layers/bias_activation_op.hpp"
#include "layers/gat_op.hpp"
#include "src/device/counter_rng.hpp"
#include "tests/layers/layer_harness.hpp"

using namespace strata;
using strata::test::check_model_gradients;
using strata::test::check_op_gradients;
using strata::test::OneRankGraph;
using strata::test::OneRankModel;
using strata::test::random_matrix;
using strata::test::run_op;

namespace {

/// y = GAT(x) by definition, in double, vertex by vertex: N(v) ∪ {v} from the dataset's CSR
/// (in-neighbours), parameters drawn like run_op's (seeds 11, 12, 13, 14), the attention
/// dropout mask from counter_rng.hpp keyed by (v, u, head) as documented.
HostMatrix reference_gat(const OneRankGraph& g, const HostMatrix& x, index_t heads, index_t f,
                         const GatOptions& o, bool training, std::uint64_t epoch) {
    const index_t in = x.cols;
    const index_t hf = heads * f;
    const HostMatrix w = random_matrix(in, hf, 11);
    const HostMatrix a_src = random_matrix(heads, f, 12);
    const HostMatrix a_dst = random_matrix(heads, f, 13);
    const index_t out = o.concat ? hf : f;
    const HostMatrix bias = random_matrix(1, out, 14);
    const index_t n = static_cast<index_t>(x.rows);
    const std::vector<global_id>& ids = g.part.graph.owned_original;
    std::vector<index_t> local(ids.size());
    for (index_t i = 0; i < n; ++i) {
        local[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)])] = i;
    }
    std::vector<double> wh(static_cast<std::size_t>(n) * hf, 0.0);
    for (index_t i = 0; i < n; ++i) {
        for (index_t c = 0; c < hf; ++c) {
            for (index_t k = 0; k < in; ++k) {
                wh[static_cast<std::size_t>(i) * hf + c] += double{x.at(i, k)} * w.at(k, c);
            }
        }
    }
    auto dot = [&](index_t i, index_t h, const HostMatrix& a) {
        double s = 0.0;
        for (index_t q = 0; q < f; ++q) {
            s += wh[static_cast<std::size_t>(i) * hf + h * f + q] * a.at(h, q);
        }
        return s;
    };
    const float rate = training ? o.attention_dropout : 0.0f;
    const std::uint64_t stream = dropout_stream(o.seed, epoch, o.dropout_id);
    HostMatrix y(n, out);
    for (index_t i = 0; i < n; ++i) {
        const global_id v = ids[static_cast<std::size_t>(i)];
        std::set<global_id> neighbours{v};
        for (auto k = g.graph.indptr[static_cast<std::size_t>(v)];
             k < g.graph.indptr[static_cast<std::size_t>(v) + 1]; ++k) {
            neighbours.insert(g.graph.indices[static_cast<std::size_t>(k)]);
        }
        for (index_t h = 0; h < heads; ++h) {
            std::vector<double> e;
            for (const global_id u : neighbours) {
                const double z =
                    dot(i, h, a_dst) + dot(local[static_cast<std::size_t>(u)], h, a_src);
                e.push_back(z > 0.0 ? z : o.negative_slope * z);
            }
            double m = e[0];
            for (const double v_e : e) {
                m = std::max(m, v_e);
            }
            double sum = 0.0;
            for (double& v_e : e) {
                v_e = std::exp(v_e - m);
                sum += v_e;
            }
            std::size_t at = 0;
            for (const global_id u : neighbours) {
                double alpha = e[at++] / sum;
                if (rate > 0.0f) {
                    const bool keep =
                        counter_u32(stream, v, u * heads + h) >= dropout_threshold(rate);
                    alpha = keep ? alpha / (1.0 - rate) : 0.0;
                }
                const index_t j = local[static_cast<std::size_t>(u)];
                for (index_t q = 0; q < f; ++q) {
                    const double term = alpha * wh[static_cast<std::size_t>(j) * hf + h * f + q];
                    if (o.concat) {
                        y.at(i, h * f + q) += static_cast<float>(term);
                    } else {
                        y.at(i, q) += static_cast<float>(term / heads);
                    }
                }
            }
        }
        for (index_t c = 0; c < out; ++c) {
            y.at(i, c) += o.bias ? bias.at(0, c) : 0.0f;
        }
    }
    return y;
}

}  // namespace

TEST_CASE("GAT forward equals a dense per-vertex loop over A + I", "[layers][gat]") {
    OneRankGraph g(16, 5, /*directed=*/true);
    const HostMatrix x = random_matrix(16, 5, 1);
    for (const bool concat : {true, false}) {
        for (const float rate : {0.0f, 0.5f}) {
            const GatOptions o{
                .concat = concat, .attention_dropout = rate, .seed = 4, .dropout_id = 3};
            GatOp op(5, 3, 2, o);
            INFO("concat " << concat << ", attention dropout " << rate);
            const HostMatrix dy = random_matrix(16, concat ? 6 : 2, 2);

            const HostMatrix y = run_op(op, g, {x}, dy, /*training=*/true).y[0];

            const HostMatrix expected = reference_gat(g, x, 3, 2, o, true, 3);
            CHECK(test::max_relative_difference(y, expected, 1e-3) < 1e-4);
        }
    }
}

TEST_CASE("GAT evaluation draws no attention dropout", "[layers][gat]") {
    OneRankGraph g(16, 5, /*directed=*/true);
    const HostMatrix x = random_matrix(16, 5, 1);
    const GatOptions o{.attention_dropout = 0.5f, .seed = 4};
    GatOp op(5, 2, 3, o);

    const HostMatrix y = run_op(op, g, {x}, random_matrix(16, 6, 2), /*training=*/false).y[0];

    CHECK(test::max_relative_difference(y, reference_gat(g, x, 2, 3, o, false, 3), 1e-3) < 1e-4);
}

TEST_CASE("GAT gradients match finite differences on a directed graph", "[layers][gat]") {
    OneRankGraph g(14, 4, /*directed=*/true);
    REQUIRE_FALSE(g.inputs->blocks.inner_symmetric());
    for (const bool concat : {true, false}) {
        for (const float rate : {0.0f, 0.4f}) {
            for (const bool bias : {true, false}) {
                GatOp op(4, 3, 2,
                         GatOptions{.concat = concat,
                                    .attention_dropout = rate,
                                    .bias = bias,
                                    .seed = 7,
                                    .dropout_id = 1});
                INFO("concat " << concat << ", attention dropout " << rate << ", bias " << bias);

                const auto check =
                    check_op_gradients(op, g, {random_matrix(14, 4, 5)}, /*training=*/true, 1e-3f);

                const int params = 4 * 6 + 2 * 3 * 2 + (bias ? (concat ? 6 : 2) : 0);
                CHECK(check.checked == 14 * 4 + params);
                CHECK(check.worst_error < 2e-3);
            }
        }
    }
}

TEST_CASE("GAT accumulates its input gradient with +=", "[layers][gat]") {
    OneRankGraph g(14, 4, /*directed=*/true);
    GatOp op(4, 2, 3, GatOptions{});
    const std::vector<HostMatrix> x{random_matrix(14, 4, 5)};
    const HostMatrix dy = random_matrix(14, 6, 6);
    const std::vector<HostMatrix> start{random_matrix(14, 4, 7)};

    const auto fresh = run_op(op, g, x, dy, true);
    const auto added = run_op(op, g, x, dy, true, 1, &start);

    double worst = 0.0;
    for (std::size_t k = 0; k < start[0].values.size(); ++k) {
        worst = std::max(worst, std::abs(double{added.dx[0].values[k]} -
                                         (fresh.dx[0].values[k] + start[0].values[k])));
    }
    CHECK(worst < 1e-5);
}

TEST_CASE("a two-layer GAT model's gradients match finite differences in every recompute mode",
          "[layers][gat]") {
    OneRankGraph g(14, 4, /*directed=*/true);
    for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
        ModelGraph model;
        const TensorId x = model.add_input("features", 4);
        const TensorId h1 = model.add(
            "gat0", std::make_unique<GatOp>(4, 2, 3, GatOptions{.attention_dropout = 0.3f}), {x});
        const TensorId a1 = model.add("act0",
                                      std::make_unique<BiasActivationOp>(
                                          6, BiasActivationOptions{.activation = Activation::relu}),
                                      {h1});
        model.mark_layer_input(a1);
        model.set_output(model.add(
            "gat1", std::make_unique<GatOp>(6, 2, 3, GatOptions{.concat = false, .dropout_id = 1}),
            {a1}));
        OneRankModel m(g, std::move(model), mode);
        jitter(m);
        INFO("recompute " << to_string(mode));

        const auto check = check_model_gradients(m, 1e-3f);

        CHECK(check.checked == static_cast<int>(m.parameters->size()));
        CHECK(check.worst_error < 5e-3);
    }
}

TEST_CASE("GAT rejects bad sizes, a partial row range and a missing halo exchange",
          "[layers][gat]") {
    CHECK_THROWS_WITH(GatOp(0, 2, 3, GatOptions{}), Catch::Contains("sizes must be positive"));
    CHECK_THROWS_WITH(GatOp(4, 2, 3, GatOptions{.attention_dropout = 1.0f}),
                      Catch::Contains("attention dropout rate must be in [0, 1)"));
    GatOp op(4, 2, 3, GatOptions{});
    const std::vector<index_t> bad{5};
    CHECK_THROWS_WITH((void)op.output_cols(bad),
                      Catch::Contains("gat: input has 5 columns, the layer expects 4"));

    OneRankGraph g(14, 4, /*directed=*/true);
    CHECK_THROWS_WITH(run_op(op, g, {random_matrix(14, 4, 1)}, random_matrix(14, 6, 2), true, 2),
                      Catch::Contains("the op needs all rows at once"));
    g.halo.reset();
    CHECK_THROWS_WITH(run_op(op, g, {random_matrix(14, 4, 1)}, random_matrix(14, 6, 2), true),
                      Catch::Contains("gat: the executor lent no halo exchange"));
}

TEST_CASE("the halo exchange allocates exactly its plan line", "[layers][gat]") {
    OneRankGraph g(30, 4, /*directed=*/true);
    const std::int64_t before = g.backend->memory_stats().bytes_in_use;
    {
        const GraphHaloExchange halo(g.inputs->blocks, g.part.graph, g.comm);
        const std::int64_t used = g.backend->memory_stats().bytes_in_use - before;
        CHECK(used == GraphHaloExchange::plan_bytes(g.part.graph));
        CHECK(GraphHaloExchange::plan_line(g.part.graph).bytes == used);
        // One rank: A + I over owned columns only, the pattern of Â's inner block.
        CHECK(halo.num_halo() == 0);
        CHECK(halo.structure().nnz() == g.part.graph.inner.nnz());
        CHECK(halo.structure_t().rows() == 30);
    }
    CHECK(g.backend->memory_stats().bytes_in_use == before);
}
