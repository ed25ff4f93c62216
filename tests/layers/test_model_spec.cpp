// The option table of ModelSpec (layers/model_spec.hpp): ranges, their words, and validate()'s
// messages built from them.
#include <cmath>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "layers/model_zoo.hpp"
#include "src/base/error.hpp"

using strata::ModelSpec;
using strata::OptionRange;

namespace {

std::string message_of(const std::string& json) {
    try {
        (void)strata::spec_from_json(json, "spec.json");
    } catch (const strata::Error& e) {
        return e.message();
    }
    return "no error";
}

}  // namespace

TEST_CASE("option ranges: membership and words", "[models]") {
    const double inf = std::numeric_limits<double>::infinity();
    const OptionRange dropout{.min = 0, .max = 1, .min_open = false, .max_open = true};
    CHECK(dropout.contains(0.0));
    CHECK(dropout.contains(0.999));
    CHECK_FALSE(dropout.contains(1.0));
    CHECK_FALSE(dropout.contains(-1e-9));
    CHECK_FALSE(dropout.contains(std::nan("")));
    CHECK(dropout.describe() == "in [0, 1)");
    CHECK(dropout.interval() == "[0, 1)");
    const OptionRange at_least_one{.min = 1, .max = inf};
    CHECK(at_least_one.describe() == "at least 1");
    CHECK(at_least_one.interval() == "[1, inf)");
    CHECK(at_least_one.contains(1e9));
    const OptionRange positive{.min = 0, .max = inf, .min_open = true};
    CHECK(positive.describe() == "positive");
    CHECK_FALSE(positive.contains(0.0));
    CHECK(OptionRange{.min = 1, .max = 4096}.describe() == "in [1, 4096]");
}

TEST_CASE("the option table: every ModelSpec option once, numbers with a range", "[models]") {
    int numeric = 0;
    for (const strata::ModelOption& option : strata::model_options()) {
        INFO(option.key);
        CHECK(std::string(strata::find_model_option(option.key).key) == option.key);
        numeric += option.range ? 1 : 0;
    }
    CHECK(strata::model_options().size() == 14);
    CHECK(numeric == 12);  // all but decay_all_layers and bias
    CHECK(strata::find_model_option("layers").range->describe() == "in [1, 4096]");
    CHECK(strata::find_model_option("layers").integer);
    CHECK_FALSE(strata::find_model_option("dropout").integer);
    CHECK_FALSE(strata::find_model_option("bias").range.has_value());
    CHECK_THROWS_AS(strata::find_model_option("depth"), strata::Error);
}

TEST_CASE("validate names the key, the range and the value", "[models]") {
    CHECK(message_of(R"({"model": "gcn", "layers": 0})") ==
          "spec.json: 'layers' must be in [1, 4096], got 0");
    CHECK(message_of(R"({"model": "gcn", "layers": 5000})") ==
          "spec.json: 'layers' must be in [1, 4096], got 5000");
    CHECK(message_of(R"({"model": "gat", "heads": 0})") ==
          "spec.json: 'heads' must be at least 1, got 0");
    CHECK(message_of(R"({"model": "gcn", "weight_decay": -1})") ==
          "spec.json: 'weight_decay' must be at least 0, got -1");
    CHECK(message_of(R"({"model": "gcnii", "lambda": 0})") ==
          "spec.json: 'lambda' must be positive, got 0");
    CHECK(message_of(R"({"model": "appnp", "alpha": 1.5})") ==
          "spec.json: 'alpha' must be in [0, 1], got 1.5");
    CHECK(message_of(R"({"model": "appnp", "hops": 4097})") ==
          "spec.json: 'hops' must be in [1, 4096], got 4097");
    CHECK(message_of(R"({"model": "gat", "attention_dropout": 1})") ==
          "spec.json: 'attention_dropout' must be in [0, 1), got 1");
    // A value the model does not read is not checked (it keeps the recipe's).
    ModelSpec spec = strata::find_model("gcn").recipe.spec;
    spec.heads = 0;
    CHECK_NOTHROW(strata::validate(spec, "gcn"));
    spec.dropout = 1.0f;
    CHECK_THROWS_WITH(strata::validate(spec, "gcn"),
                      Catch::Matchers::StartsWith("gcn: 'dropout' must be in [0, 1), got 1"));
}
