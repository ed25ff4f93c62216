// ModelSpec <-> JSON through one table of fields, and its validation.
#include "layers/model_spec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "layers/gcn_model.hpp"
#include "layers/model_zoo.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

using json = nlohmann::json;

/// One option of ModelSpec: its JSON key and how to read and write it.
struct Field {
    const char* key;
    std::function<json(const ModelSpec&)> get;
    std::function<void(ModelSpec&, const json&, const std::string&)> set;
};

template <class T>
Field number(const char* key, T ModelSpec::*member) {
    return {key, [member](const ModelSpec& s) { return json(s.*member); },
            [key, member](ModelSpec& s, const json& v, const std::string& what) {
                if constexpr (std::is_same_v<T, bool>) {
                    STRATA_CHECK(v.is_boolean(), what, ": '", key, "' must be true or false, got ",
                                 v.dump());
                    s.*member = v.get<bool>();
                } else if constexpr (std::is_integral_v<T>) {
                    STRATA_CHECK(v.is_number_integer(), what, ": '", key,
                                 "' must be an integer, got ", v.dump());
                    const auto value = v.get<std::int64_t>();
                    STRATA_CHECK(value >= 0 && value <= 1'000'000'000, what, ": '", key,
                                 "' is out of range, got ", value);
                    s.*member = static_cast<T>(value);
                } else {
                    STRATA_CHECK(v.is_number(), what, ": '", key, "' must be a number, got ",
                                 v.dump());
                    s.*member = static_cast<T>(v.get<double>());
                }
            }};
}

const std::vector<Field>& fields() {
    static const std::vector<Field> table{
        number("layers", &ModelSpec::layers),
        number("hidden", &ModelSpec::hidden),
        number("dropout", &ModelSpec::dropout),
        number("weight_decay", &ModelSpec::weight_decay),
        number("decay_all_layers", &ModelSpec::decay_all_layers),
        number("conv_weight_decay", &ModelSpec::conv_weight_decay),
        number("bias", &ModelSpec::bias),
        number("alpha", &ModelSpec::alpha),
        number("lambda", &ModelSpec::lambda),
        number("hops", &ModelSpec::hops),
        number("heads", &ModelSpec::heads),
        number("output_heads", &ModelSpec::output_heads),
        number("attention_dropout", &ModelSpec::attention_dropout),
        number("negative_slope", &ModelSpec::negative_slope),
    };
    return table;
}

bool uses(const ModelInfo& info, const std::string& key) {
    return std::find(info.options.begin(), info.options.end(), key) != info.options.end();
}

}  // namespace

GcnOptions gcn_options(const ModelSpec& s) {
    return GcnOptions{.layers = s.layers,
                      .hidden = s.hidden,
                      .dropout = s.dropout,
                      .weight_decay = s.weight_decay,
                      .decay_all_layers = s.decay_all_layers,
                      .bias = s.bias,
                      .seed = s.seed};
}

ModelSpec gcn_spec(const GcnOptions& gcn) {
    ModelSpec s;
    s.model = "gcn";
    s.layers = gcn.layers;
    s.hidden = gcn.hidden;
    s.dropout = gcn.dropout;
    s.weight_decay = gcn.weight_decay;
    s.decay_all_layers = gcn.decay_all_layers;
    s.bias = gcn.bias;
    s.seed = gcn.seed;
    return s;
}

void validate(const ModelSpec& s, const std::string& what) {
    const ModelInfo& info = find_model(s.model);
    const auto check = [&](const char* key, bool ok, const auto& value, const char* rule) {
        STRATA_CHECK(!uses(info, key) || ok, what, ": '", key, "' must be ", rule, ", got ", value);
    };
    check("layers", s.layers >= 1 && s.layers <= 4096, s.layers, "in [1, 4096]");
    check("hidden", s.hidden >= 1, s.hidden, "at least 1");
    check("dropout", s.dropout >= 0.0f && s.dropout < 1.0f, s.dropout, "in [0, 1)");
    check("weight_decay", s.weight_decay >= 0.0f, s.weight_decay, "non-negative");
    check("conv_weight_decay", s.conv_weight_decay >= 0.0f, s.conv_weight_decay, "non-negative");
    check("alpha", s.alpha >= 0.0f && s.alpha <= 1.0f, s.alpha, "in [0, 1]");
    check("lambda", s.lambda > 0.0f, s.lambda, "positive");
    check("hops", s.hops >= 1 && s.hops <= 4096, s.hops, "in [1, 4096]");
    check("heads", s.heads >= 1, s.heads, "at least 1");
    check("output_heads", s.output_heads >= 1, s.output_heads, "at least 1");
    check("attention_dropout", s.attention_dropout >= 0.0f && s.attention_dropout < 1.0f,
          s.attention_dropout, "in [0, 1)");
    check("negative_slope", s.negative_slope >= 0.0f, s.negative_slope, "non-negative");
}

void copy_option(const std::string& key, const ModelSpec& from, ModelSpec& to) {
    const auto f = std::find_if(fields().begin(), fields().end(),
                                [&](const Field& field) { return key == field.key; });
    STRATA_CHECK(f != fields().end(), "no model option '", key, "'");
    f->set(to, f->get(from), key);
}

std::string spec_to_json(const ModelSpec& spec) {
    const ModelInfo& info = find_model(spec.model);
    json out = json::object();
    out["model"] = spec.model;
    for (const Field& f : fields()) {
        if (uses(info, f.key)) {
            out[f.key] = f.get(spec);
        }
    }
    return out.dump();
}

ModelSpec spec_from_json(const std::string& text, const std::string& what) {
    json in;
    try {
        in = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e999
        STRATA_FAIL(what, ": not valid JSON: ", e.what());
    }
    STRATA_CHECK(in.is_object(), what, ": expected a JSON object, got ", in.type_name());
    STRATA_CHECK(in.contains("model") && in["model"].is_string(), what,
                 ": missing the string key 'model'");
    const std::string name = in["model"].get<std::string>();
    const ModelInfo* info = nullptr;
    try {
        info = &find_model(name);
    } catch (const Error& e) {
        STRATA_FAIL(what, ": ", e.message());
    }
    ModelSpec spec = info->recipe.spec;
    for (const auto& item : in.items()) {  // (clang 14 cannot capture a structured binding)
        const std::string& key = item.key();
        const auto& value = item.value();
        if (key == "model") {
            continue;
        }
        const auto f = std::find_if(fields().begin(), fields().end(),
                                    [&](const Field& field) { return key == field.key; });
        if (f == fields().end() || !uses(*info, key)) {
            std::ostringstream known;
            for (const std::string& o : info->options) {
                known << (known.tellp() > 0 ? ", " : "") << o;
            }
            STRATA_FAIL(what, ": unknown key '", key, "' for model ", name,
                        " (its keys: ", known.str(), ")");
        }
        f->set(spec, value, what);
    }
    validate(spec, what);
    return spec;
}

std::string describe(const ModelSpec& s) {
    if (s.model == "gcn") {  // the words of earlier checkpoints' identities
        return describe(gcn_options(s));
    }
    const ModelInfo& info = find_model(s.model);
    std::ostringstream out;
    out << s.model;
    const auto has = [&](const char* key) { return uses(info, key); };
    if (has("layers")) {
        out << ", " << s.layers << " layers";
    }
    if (has("hidden")) {
        out << ", hidden " << s.hidden;
    }
    if (has("heads")) {
        out << " x " << s.heads << " heads (output " << s.output_heads << ")";
    }
    if (has("dropout")) {
        out << ", dropout " << s.dropout;
    }
    if (has("attention_dropout")) {
        out << ", attention dropout " << s.attention_dropout;
    }
    if (has("alpha")) {
        out << ", alpha " << s.alpha;
    }
    if (has("lambda")) {
        out << ", lambda " << s.lambda;
    }
    if (has("hops")) {
        out << ", " << s.hops << " hops";
    }
    out << ", weight decay " << s.weight_decay;
    if (has("conv_weight_decay")) {
        out << " (fc), " << s.conv_weight_decay << " (convolutions)";
    } else if (has("decay_all_layers")) {
        out << (s.decay_all_layers ? " (all layers)" : " (first layer)");
    }
    if (has("bias") && !s.bias) {
        out << ", no bias";
    }
    return out.str();
}

}  // namespace strata
