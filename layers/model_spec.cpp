// ModelSpec <-> JSON through one table of fields with their ranges, and its validation.
#include "layers/model_spec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "layers/gcn_model.hpp"
#include "layers/model_zoo.hpp"
#include "src/base/decimal.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

using json = nlohmann::json;

/// One option of ModelSpec: its key and range, and how to read and write it.
struct Field {
    ModelOption option;
    std::function<json(const ModelSpec&)> get;
    std::function<void(ModelSpec&, const json&, const std::string&)> set;
    [[nodiscard]] const char* key() const { return option.key; }
};

constexpr double unbounded = std::numeric_limits<double>::infinity();

/// [min, max] (max_open: [min, max)).
OptionRange closed(double min, double max = unbounded, bool max_open = false) {
    return {.min = min, .max = max, .min_open = false, .max_open = max_open};
}
/// (0, inf).
OptionRange positive() {
    return {.min = 0.0, .max = unbounded, .min_open = true, .max_open = false};
}

/// The number formatted as messages print it ("0.5", "1e-06", "inf").
std::string number_text(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

template <class T>
Field number(const char* key, T ModelSpec::*member, std::optional<OptionRange> range) {
    const ModelOption option{key, range, std::is_integral_v<T> && !std::is_same_v<T, bool>};
    return {option,
            [member](const ModelSpec& s) {
                if constexpr (std::is_same_v<T, float>) {
                    return json(shortest_decimal(s.*member));  // 0.0005, not its binary value
                } else {
                    return json(s.*member);
                }
            },
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

/// The options and their ranges: the one place the spec parser, validate() and the CLI flags
/// (apps/commands/model_options.cpp) take them from.
const std::vector<Field>& fields() {
    static const std::vector<Field> table{
        number("layers", &ModelSpec::layers, closed(1, 4096)),
        number("hidden", &ModelSpec::hidden, closed(1)),
        number("dropout", &ModelSpec::dropout, closed(0, 1, /*max_open=*/true)),
        number("weight_decay", &ModelSpec::weight_decay, closed(0)),
        number("decay_all_layers", &ModelSpec::decay_all_layers, std::nullopt),
        number("conv_weight_decay", &ModelSpec::conv_weight_decay, closed(0)),
        number("bias", &ModelSpec::bias, std::nullopt),
        number("alpha", &ModelSpec::alpha, closed(0, 1)),
        number("lambda", &ModelSpec::lambda, positive()),
        number("hops", &ModelSpec::hops, closed(1, 4096)),
        number("heads", &ModelSpec::heads, closed(1)),
        number("output_heads", &ModelSpec::output_heads, closed(1)),
        number("attention_dropout", &ModelSpec::attention_dropout, closed(0, 1, /*max_open=*/true)),
        number("negative_slope", &ModelSpec::negative_slope, closed(0)),
    };
    return table;
}

const Field* find_field(const std::string& key) {
    const auto f = std::find_if(fields().begin(), fields().end(),
                                [&](const Field& field) { return key == field.key(); });
    return f == fields().end() ? nullptr : &*f;
}

bool uses(const ModelInfo& info, const std::string& key) {
    return std::find(info.options.begin(), info.options.end(), key) != info.options.end();
}

}  // namespace

bool OptionRange::contains(double value) const {
    return (min_open ? value > min : value >= min) && (max_open ? value < max : value <= max);
}

std::string OptionRange::describe() const {
    if (max == unbounded) {
        return min_open ? (min == 0.0 ? "positive" : "greater than " + number_text(min))
                        : "at least " + number_text(min);
    }
    return "in " + interval();
}

std::string OptionRange::interval() const {
    return (min_open ? "(" : "[") + number_text(min) + ", " + number_text(max) +
           (max_open || max == unbounded ? ")" : "]");
}

std::span<const ModelOption> model_options() {
    static const std::vector<ModelOption> options = [] {
        std::vector<ModelOption> out;
        for (const Field& f : fields()) {
            out.push_back(f.option);
        }
        return out;
    }();
    return options;
}

const ModelOption& find_model_option(const std::string& key) {
    const Field* f = find_field(key);
    STRATA_CHECK(f != nullptr, "no model option '", key, "'");
    return f->option;
}

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
    for (const Field& f : fields()) {
        if (!f.option.range || !uses(info, f.key())) {
            continue;
        }
        const json value = f.get(s);
        const double v = value.get<double>();
        STRATA_CHECK(f.option.range->contains(v), what, ": '", f.key(), "' must be ",
                     f.option.range->describe(), ", got ",
                     f.option.integer ? std::to_string(value.get<std::int64_t>()) : number_text(v));
    }
}

void copy_option(const std::string& key, const ModelSpec& from, ModelSpec& to) {
    const Field* f = find_field(key);
    STRATA_CHECK(f != nullptr, "no model option '", key, "'");
    f->set(to, f->get(from), key);
}

std::string spec_to_json(const ModelSpec& spec) {
    const ModelInfo& info = find_model(spec.model);
    json out = json::object();
    out["model"] = spec.model;
    for (const Field& f : fields()) {
        if (uses(info, f.key())) {
            out[f.key()] = f.get(spec);
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
        const Field* f = find_field(key);
        if (f == nullptr || !uses(*info, key)) {
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
