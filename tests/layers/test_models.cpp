// The model zoo on one rank: every model's whole-model gradients (loss included) against
// finite differences on a DIRECTED graph (Âᵀ != Â, in-degrees != out-degrees), each on the
// operator its ModelGraph names (symmetric, mean, sum), in every --recompute mode, and the
// negative control that the check fails when the backward uses the operator untransposed or
// another operator's transpose; model specs to JSON and back; spec errors.
#include <catch2/catch.hpp>

#include "layers/model_zoo.hpp"
#include "src/base/error.hpp"
#include "tests/layers/layer_harness.hpp"

using namespace strata;
using strata::test::check_model_gradients;
using strata::test::OneRankGraph;
using strata::test::OneRankModel;

namespace {

/// A small instance of `name`: few layers, narrow, dropout on (the FD probes reuse one epoch's
/// masks).
ModelSpec small(const std::string& name) {
    ModelSpec s = find_model(name).recipe.spec;
    s.layers = name == "resgcn+" || name == "gcnii" || name == "gcnii*" ? 3 : 2;
    s.hidden = 4;
    s.heads = 2;
    s.output_heads = 2;
    s.hops = 3;
    s.dropout = 0.3f;
    s.attention_dropout = 0.3f;
    s.seed = 6;  // seed 5 puts a GIN ReLU input within the finite-difference step of its kink (the
                 // dropout masks of counter_rng.hpp); 6 and 7 pass
    return s;
}

/// The number of aggregation nodes (ops that call the GraphOperator) in `graph`.
int aggregations(const ModelGraph& graph) {
    int count = 0;
    for (const Node& node : graph.nodes()) {
        count += node.op->kind() == OpKind::aggregate ? 1 : 0;
    }
    return count;
}

/// A wrong GraphOperator for the negative control: forward is `right`'s (Â h); backward
/// multiplies by Â untransposed (`other` null: its inner block, the whole operator on one rank)
/// or by `other`'s transpose (another normalization's operator).
class WrongBackward final : public GraphOperator {
public:
    WrongBackward(OneRankGraph& right, OneRankGraph* other) : right_(right), other_(other) {}
    [[nodiscard]] index_t num_rows() const override { return right_.aggregation->num_rows(); }
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override {
        return right_.aggregation->workspace_floats(width);
    }
    void forward(ConstMatrixView h, MatrixView z, RowRange rows, std::span<float> workspace,
                 ExchangeCall call) override {
        right_.aggregation->forward(h, z, rows, workspace, call);
    }
    void backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                  std::span<float> workspace, ExchangeCall call) override {
        REQUIRE(rows == RowRange{0, num_rows()});
        if (other_ != nullptr) {
            other_->aggregation->backward(dz, dh, rows, beta, workspace, call);
        } else {
            right_.backend->spmm(right_.inputs->blocks.inner(), dz, dh, beta);
        }
    }
    [[nodiscard]] HaloBytes bytes_sent() const override { return {}; }

private:
    OneRankGraph& right_;
    OneRankGraph* other_;
};

/// Worst relative difference allowed between a model's gradients and finite differences.
constexpr double fd_tolerance = 3e-3;

}  // namespace

TEST_CASE("every model's gradients match finite differences on a directed graph", "[models]") {
    for (const ModelInfo& info : model_zoo()) {
        const ModelSpec spec = small(info.name);
        for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
            BuiltModel model = build_model(spec, 5, 3);
            // The model's own operator: SAGE's mean and GIN's sum are differentiated here too.
            OneRankGraph g(16, 5, /*directed=*/true, model.graph.normalization());
            OneRankModel m(g, std::move(model.graph), mode);
            jitter(m);
            INFO(describe(spec) << ", recompute " << to_string(mode) << ", operator "
                                << to_string(m.graph.normalization()));

            const auto check = check_model_gradients(m);

            CHECK(check.checked == static_cast<std::int64_t>(m.parameters->size()));
            CHECK(check.worst_error < fd_tolerance);
        }
    }
}

TEST_CASE("the finite-difference check fails when a model's operator is transposed or swapped",
          "[models]") {
    int models_checked = 0;
    for (const ModelInfo& info : model_zoo()) {
        const ModelSpec spec = small(info.name);
        const BuiltModel probe = build_model(spec, 5, 3);
        if (aggregations(probe.graph) == 0) {
            continue;  // gat and mlp: no GraphOperator to get wrong
        }
        const Normalization own = probe.graph.normalization();
        ++models_checked;
        OneRankGraph g(16, 5, /*directed=*/true, own);
        std::vector<std::unique_ptr<OneRankGraph>> others;
        for (const Normalization n :
             {Normalization::symmetric, Normalization::mean, Normalization::sum}) {
            if (n != own) {
                others.push_back(std::make_unique<OneRankGraph>(16, 5, true, n));
            }
        }
        std::vector<std::pair<std::string, OneRankGraph*>> wrongs = {{"untransposed", nullptr}};
        for (const auto& other : others) {
            wrongs.emplace_back(std::string(to_string(other->normalization)) + "'s transpose",
                                other.get());
        }
        for (const auto& [what, other] : wrongs) {
            WrongBackward wrong(g, other);
            OneRankModel m(g, build_model(spec, 5, 3).graph, Recompute::none, 3, &wrong);
            jitter(m);
            const auto check = check_model_gradients(m);
            INFO(describe(spec) << " on " << to_string(own) << ", backward with " << what
                                << ": worst error " << check.worst_error);
            CHECK(check.worst_error > 10 * fd_tolerance);  // 0.23 .. 5.5 when written
        }
    }
    CHECK(models_checked == static_cast<int>(model_zoo().size()) - 2);
}

TEST_CASE("model specs round-trip through JSON", "[models]") {
    for (const ModelInfo& info : model_zoo()) {
        ModelSpec spec = small(info.name);
        spec.seed = 0;  // not part of the spec
        const ModelSpec back = spec_from_json(spec_to_json(spec), "test");
        INFO(spec_to_json(spec));
        CHECK(spec_to_json(back) == spec_to_json(spec));
        CHECK(describe(back) == describe(spec));
    }
}

TEST_CASE("bad model specs get one clear line", "[models]") {
    const auto message = [](const std::string& text) {
        try {
            (void)spec_from_json(text, "spec.json");
        } catch (const Error& e) {
            return e.message();
        }
        return std::string("no error");
    };
    CHECK(message("{\"model\": \"gcnii\", \"heads\": 4}") ==
          "spec.json: unknown key 'heads' for model gcnii (its keys: layers, hidden, dropout, "
          "alpha, lambda, weight_decay, conv_weight_decay)");
    CHECK(message("{\"model\": \"nope\"}") ==
          "spec.json: unknown model 'nope' (known: gcn, gcnii, gcnii*, resgcn+, appnp, sage, gin, "
          "gat, mlp)");
    CHECK(message("{\"layers\": 4}") == "spec.json: missing the string key 'model'");
    CHECK(message("{\"model\": \"gcn\", \"dropout\": 1.5}") ==
          "spec.json: 'dropout' must be in [0, 1), got 1.5");
    CHECK(message("{\"model\": \"gcn\", \"layers\": \"many\"}") ==
          "spec.json: 'layers' must be an integer, got \"many\"");
    CHECK(message("[1, 2]") == "spec.json: expected a JSON object, got array");
    CHECK(message("{\"model\": ").rfind("spec.json: not valid JSON: ", 0) == 0);
    // A number beyond double (nlohmann throws out_of_range, not parse_error; fuzz_checkpoint).
    CHECK(message("{\"model\": \"gcn\", \"hidden\": 1e999}")
              .rfind("spec.json: not valid JSON: ", 0) == 0);
}

TEST_CASE("gcnii's depth and options shape the graph", "[models]") {
    ModelSpec spec = find_model("gcnii").recipe.spec;
    spec.layers = 8;
    const BuiltModel model = build_model(spec, 20, 4);
    int aggregations = 0;
    for (const Node& node : model.graph.nodes()) {
        aggregations += node.op->kind() == OpKind::aggregate ? 1 : 0;
    }
    CHECK(aggregations == 8);
    CHECK(model.embedding_tensor == "conv8.act");
    CHECK(model.graph.normalization() == Normalization::symmetric);
    CHECK(build_model(find_model("sage").recipe.spec, 20, 4).graph.normalization() ==
          Normalization::mean);
    CHECK(build_model(find_model("gin").recipe.spec, 20, 4).graph.normalization() ==
          Normalization::sum);
}
