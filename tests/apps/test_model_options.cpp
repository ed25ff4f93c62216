// The model flags against the spec: every ModelSpec option has a flag, and every numeric flag
// accepts exactly what a --model-spec file accepts, probed at and beyond both ends of the
// option's range (one table, layers/model_spec.hpp, gives both).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "apps/commands/model_options.hpp"
#include "src/base/error.hpp"

namespace {

using strata::ModelOption;

std::string flag_of(std::string key) {
    std::replace(key.begin(), key.end(), '_', '-');
    return "--" + key;
}

/// A model that reads `key`.
std::string model_reading(const std::string& key) {
    for (const strata::ModelInfo& m : strata::model_zoo()) {
        if (std::find(m.options.begin(), m.options.end(), key) != m.options.end()) {
            return m.name;
        }
    }
    FAIL("no model reads " << key);
    return "";
}

/// The CLI's answer: empty when the flag's check passes, else CLI11's message.
std::string cli_error(const std::string& model, const std::string& key, const std::string& value) {
    CLI::App app;
    strata::app::ModelOptions options;
    strata::app::add_model_options(app, options);
    try {
        app.parse("--model " + model + " " + flag_of(key) + " " + value, false);
    } catch (const CLI::ParseError& e) {
        return e.what();
    }
    return "";
}

/// The spec parser's answer for {"model": model, key: value}.
std::string spec_error(const std::string& model, const std::string& key, const std::string& value) {
    try {
        (void)strata::spec_from_json(
            "{\"model\": \"" + model + "\", \"" + key + "\": " + value + "}", "spec.json");
    } catch (const strata::Error& e) {
        return e.message();
    }
    return "";
}

std::string text(double v) {
    std::ostringstream out;
    out.precision(12);
    out << v;
    return out.str();
}

/// Values at and around the range's ends (away from float rounding: 1e-3 apart), and inside.
std::vector<double> probes(const ModelOption& option) {
    const strata::OptionRange& r = *option.range;
    const double step = option.integer ? 1.0 : 1e-3;
    std::vector<double> out{r.min - 1.0, r.min - step, r.min, r.min + step};
    if (std::isfinite(r.max)) {
        out.insert(out.end(), {r.max - step, r.max, r.max + step, r.max + 1.0});
    } else {
        out.insert(out.end(), {r.min + 100.0, 1e6});
    }
    return out;
}

}  // namespace

TEST_CASE("every model option has a flag", "[models][cli]") {
    CLI::App app;
    strata::app::ModelOptions options;
    strata::app::add_model_options(app, options);
    for (const ModelOption& option : strata::model_options()) {
        INFO(option.key);
        CHECK(std::any_of(options.options.begin(), options.options.end(),
                          [&](const auto& o) { return o.first == option.key; }));
        CHECK(app.get_option_no_throw(flag_of(option.key)) != nullptr);
    }
    std::vector<std::string> keys;
    for (const auto& entry : options.options) {
        keys.push_back(entry.first);
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    CHECK(keys.size() == strata::model_options().size());
}

TEST_CASE("every flag's range is the spec's", "[models][cli]") {
    int probed = 0;
    for (const ModelOption& option : strata::model_options()) {
        if (!option.range) {
            continue;
        }
        const std::string model = model_reading(option.key);
        for (const double v : probes(option)) {
            const std::string value = text(v);
            const std::string cli = cli_error(model, option.key, value);
            const std::string spec = spec_error(model, option.key, value);
            INFO(option.key << " = " << value << " (" << model << "): flag says '" << cli
                            << "', spec says '" << spec << "'");
            CHECK(cli.empty() == spec.empty());
            CHECK(cli.empty() == option.range->contains(v));
            if (!option.range->contains(v)) {
                CHECK_THAT(cli,
                           Catch::Matchers::Contains(flag_of(option.key) + ": must be " +
                                                     option.range->describe() + ", got " + value));
            }
            ++probed;
        }
    }
    CHECK(probed >= 40);  // the loop is not silently empty
}

TEST_CASE("out-of-range flags name the flag and the range", "[models][cli]") {
    CHECK_THAT(cli_error("gcn", "dropout", "0.995"), Catch::Matchers::Equals(""));
    CHECK_THAT(cli_error("gcn", "dropout", "1"),
               Catch::Matchers::Contains("--dropout: must be in [0, 1), got 1"));
    CHECK_THAT(cli_error("gcn", "layers", "4097"),
               Catch::Matchers::Contains("--layers: must be in [1, 4096], got 4097"));
    CHECK_THAT(cli_error("appnp", "hops", "5000"),
               Catch::Matchers::Contains("--hops: must be in [1, 4096], got 5000"));
    CHECK_THAT(cli_error("gcnii", "lambda", "0"),
               Catch::Matchers::Contains("--lambda: must be positive, got 0"));
}
