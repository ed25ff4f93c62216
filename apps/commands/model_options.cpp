// Model flags: one per ModelSpec field, checked against the chosen model.
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
        }
        out << "\n    options:";
        for (const std::string& o : m.options) {
            out << ' ' << flag_of(o);
        }
    }
    return out.str();
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
        CLI::Option* opt = cmd.add_option(flag_of(key), value, help)->default_str("recipe");
        o.options.emplace_back(key, opt);
        return opt;
    };
    add("layers", f.layers, "Graph layers (gcnii: convolutions)")->check(positive());
    add("hidden", f.hidden, "Hidden width (gat: per head)")->check(positive());
    add("dropout", f.dropout, "Dropout rate")->check(in_range(0.0, 0.99));
    add("weight_decay", f.weight_decay,
        "L2 coefficient of the weights (gcn: first layer; gcnii: fc_in and fc_out)")
        ->check(non_negative());
    CLI::Option* all = cmd.add_flag("--decay-all-layers", f.decay_all_layers,
                                    "gcn: apply --weight-decay to every layer's weights");
    o.options.emplace_back("decay_all_layers", all);
    CLI::Option* bias = cmd.add_flag("--bias,!--no-bias", f.bias, "gcn: biases (--no-bias: none)")
                            ->default_str("recipe");
    o.options.emplace_back("bias", bias);
    add("conv_weight_decay", f.conv_weight_decay, "gcnii: L2 coefficient of the convolutions")
        ->check(non_negative());
    add("alpha", f.alpha, "gcnii: initial residual; appnp: teleport probability")
        ->check(in_range(0.0, 1.0));
    add("lambda", f.lambda, "gcnii: identity mapping, theta_l = ln(lambda/l + 1)")
        ->check(positive());
    add("hops", f.hops, "appnp: propagation steps K")->check(positive());
    add("heads", f.heads, "gat: heads of the hidden layers")->check(positive());
    add("output_heads", f.output_heads, "gat: heads of the output layer (averaged)")
        ->check(positive());
    add("attention_dropout", f.attention_dropout, "gat: dropout on the attention coefficients")
        ->check(in_range(0.0, 0.99));
    add("negative_slope", f.negative_slope, "gat: LeakyReLU slope of the attention scores")
        ->check(non_negative());
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
            STRATA_FAIL(flag_of(key), " does not apply to --model ", info.name,
                        " (its options: ", known.str(), ")");
        }
        copy_option(key, o.flags, spec);
    }
    validate(spec, "--model " + info.name);
    return spec;
}

}  // namespace strata::app
