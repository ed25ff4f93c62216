// Model flags: one per ModelSpec field, each checked against the range the option table gives
// (layers/model_spec.hpp) and against the chosen model.
#include "apps/commands/model_options.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "apps/commands/cli_checks.hpp"
#include "src/base/error.hpp"

namespace strata::app {
namespace {

std::string flag_of(const std::string& key) {
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
}

std::string models_help() {
    std::ostringstream out;
    out << "Model (unset options take its recipe, docs/models.md):";
    for (const ModelInfo& m : model_zoo()) {
        out << "\n  " << m.name << ": " << m.summary << "\n    recipe: " << describe(m.recipe.spec)
            << "; lr " << m.recipe.lr << ", " << m.recipe.epochs << " epochs";
        if (m.recipe.patience > 0) {
            out << ", patience " << m.recipe.patience << " on " << m.recipe.select_by;
        } else {
            out << ", best by " << m.recipe.select_by;
        }
        out << "; features " << (m.recipe.row_normalize ? "row-normalized" : "as stored");
        out << "\n    options:";
        for (const std::string& o : m.options) {
            out << ' ' << flag_of(o);
        }
    }
    return out.str();
}

/// The flag's check: the option's range in the one table that the spec parser reads too.
CLI::Validator range_of(const char* key) {
    const OptionRange range = find_model_option(key).range.value();
    return numeric([range](double v) { return range.contains(v); }, range.describe(),
                   range.interval());
}

}  // namespace

void add_model_options(CLI::App& cmd, ModelOptions& o) {
    std::vector<std::string> names;
    for (const ModelInfo& m : model_zoo()) {
        names.push_back(m.name);
    }
    o.model_option = cmd.add_option("--model", o.model, models_help())->check(CLI::IsMember(names));
    CLI::Option* spec =
        cmd.add_option("--model-spec", o.spec_file,
                       "JSON file describing the model: {\"model\": \"gcnii\", \"layers\": 16, "
                       "...} (keys as the options, with _ for -)")
            ->check(CLI::ExistingFile);
    ModelSpec& f = o.flags;
    const auto add = [&](const char* key, auto& value, const char* help) {
        CLI::Option* opt =
            cmd.add_option(flag_of(key), value, help)->check(range_of(key))->default_str("recipe");
        o.options.emplace_back(key, opt);
        return opt;
    };
    add("layers", f.layers, "Graph layers (gcnii: convolutions)");
    add("hidden", f.hidden, "Hidden width (gat: per head)");
    add("dropout", f.dropout, "Dropout rate");
    add("weight_decay", f.weight_decay,
        "L2 coefficient of the weights (gcn: first layer; gcnii: fc_in and fc_out)");
    CLI::Option* all = cmd.add_flag("--decay-all-layers", f.decay_all_layers,
                                    "gcn: apply --weight-decay to every layer's weights");
    o.options.emplace_back("decay_all_layers", all);
    // Two flags for one option: "--bias,!--no-bias" prints as "--bias,--no-bias{false}".
    CLI::Option* bias = cmd.add_flag("--bias", f.bias, "gcn: a bias in every layer (the recipe)");
    CLI::Option* no_bias = cmd.add_flag_callback(
        "--no-bias", [&f] { f.bias = false; }, "gcn: no biases");
    bias->excludes(no_bias);
    o.options.emplace_back("bias", bias);
    o.options.emplace_back("bias", no_bias);
    add("conv_weight_decay", f.conv_weight_decay, "gcnii: L2 coefficient of the convolutions");
    add("alpha", f.alpha, "gcnii: initial residual; appnp: teleport probability");
    add("lambda", f.lambda, "gcnii: identity mapping, theta_l = ln(lambda/l + 1)");
    add("hops", f.hops, "appnp: propagation steps K");
    add("heads", f.heads, "gat: heads of the hidden layers");
    add("output_heads", f.output_heads, "gat: heads of the output layer (averaged)");
    add("attention_dropout", f.attention_dropout, "gat: dropout on the attention coefficients");
    add("negative_slope", f.negative_slope, "gat: LeakyReLU slope of the attention scores");
    spec->excludes(o.model_option);
    for (auto& [key, opt] : o.options) {
        spec->excludes(opt);
    }
}

ModelSpec resolve_model(const ModelOptions& o) {
    if (!o.spec_file.empty()) {
        std::ifstream in(o.spec_file);
        STRATA_CHECK(in.good(), o.spec_file, ": cannot read the model spec");
        std::stringstream text;
        text << in.rdbuf();
        return spec_from_json(text.str(), o.spec_file);
    }
    const ModelInfo& info = find_model(o.model);
    ModelSpec spec = info.recipe.spec;
    const std::vector<std::pair<std::string, CLI::Option*>>& options = o.options;
    // Copy every given flag; refuse one the model does not read.
    for (const auto& [key, opt] : options) {
        if (opt->count() == 0) {
            continue;
        }
        if (std::find(info.options.begin(), info.options.end(), key) == info.options.end()) {
            std::ostringstream known;
            for (const std::string& k : info.options) {
                known << (known.tellp() > 0 ? " " : "") << flag_of(k);
            }
            STRATA_FAIL(opt->get_name(), " does not apply to --model ", info.name,
                        " (its options: ", known.str(), ")");
        }
        copy_option(key, o.flags, spec);
    }
    validate(spec, "--model " + info.name);
    return spec;
}

}  // namespace strata::app
