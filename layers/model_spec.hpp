// ModelSpec: every model of the zoo (layers/model_zoo.hpp) described by one plain struct, its
// JSON form (`strata train --model-spec FILE`, stored in checkpoints so that `strata predict`
// rebuilds the model without flags), and the one table of its options with the values each
// accepts, which the spec parser, validate() and the CLI flags all read.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>

#include "src/base/types.hpp"

namespace strata {

struct GcnOptions;

/// The options of every model; each model reads only the ones it lists (ModelInfo::options).
struct ModelSpec {
    std::string model = "gcn";  ///< gcn, gcnii, gcnii*, resgcn+, appnp, sage, gin, gat, mlp
    int layers = 2;             ///< graph layers (gcnii: convolutions between fc_in and fc_out)
    index_t hidden = 16;        ///< hidden width (gat: per head)
    float dropout = 0.5f;
    float weight_decay = 5e-4f;     ///< L2 on the weights (gcn: first layer; gcnii: fc_in, fc_out)
    bool decay_all_layers = false;  ///< gcn: --weight-decay on every layer's weights
    float conv_weight_decay = 0.01f;  ///< gcnii: L2 on the convolution weights W_l
    bool bias = true;                 ///< gcn: biases
    float alpha = 0.1f;               ///< gcnii: initial residual; appnp: teleport
    float lambda = 0.5f;              ///< gcnii: θ_l = ln(λ/l + 1)
    int hops = 10;                    ///< appnp: propagation steps K
    int heads = 8;                    ///< gat: heads of the hidden layers (concatenated)
    int output_heads = 1;             ///< gat: heads of the output layer (averaged)
    float attention_dropout = 0.6f;   ///< gat
    float negative_slope = 0.2f;      ///< gat: LeakyReLU of the attention scores
    std::uint64_t seed = 0;           ///< dropout masks (the run's --seed)
};

/// The values a numeric option accepts: from `min` to `max`, either end open or closed (max =
/// infinity: no upper bound).
struct OptionRange {
    double min = 0.0;
    double max = std::numeric_limits<double>::infinity();
    bool min_open = false;
    bool max_open = false;

    [[nodiscard]] bool contains(double value) const;
    /// What a message says a value must be: "in [0, 1)", "in [1, 4096]", "at least 1",
    /// "positive".
    [[nodiscard]] std::string describe() const;
    /// The interval alone, for help text: "[0, 1)", "[1, 4096]", "[1, inf)", "(0, inf)".
    [[nodiscard]] std::string interval() const;
};

/// One ModelSpec option: `key` is the field's name, the JSON key, and with '-' for '_' the
/// CLI flag (--weight-decay); `range` is what a number accepts (none for the true/false
/// options); `integer` whether it takes whole numbers only.
struct ModelOption {
    const char* key;
    std::optional<OptionRange> range;
    bool integer = false;
};

/// Every ModelSpec option, in the order of ModelSpec (and of validate()'s checks).
[[nodiscard]] std::span<const ModelOption> model_options();
/// The option called `key`; throws strata::Error "no model option 'x'".
[[nodiscard]] const ModelOption& find_model_option(const std::string& key);

/// The JSON object of `spec` with the keys its model uses (and "model"); `seed` is not part of
/// it (it is the run's). Keys are the ModelSpec field names.
[[nodiscard]] std::string spec_to_json(const ModelSpec& spec);

/// Parses a JSON object: "model" is required, every other key must be one its model uses
/// (defaults: the model's recipe). Throws strata::Error "<what>: ..." naming the key and value.
[[nodiscard]] ModelSpec spec_from_json(const std::string& text, const std::string& what);

/// to.<key> = from.<key> for the ModelSpec field called `key` ("hidden", "weight_decay", ...).
void copy_option(const std::string& key, const ModelSpec& from, ModelSpec& to);

/// Throws strata::Error "<what>: 'key' must be <range.describe()>, got v" for the first option
/// its model reads whose value is outside the option's range (model_options()).
void validate(const ModelSpec& spec, const std::string& what);

/// The GCN options of a "gcn" spec, and back (checkpoints of format 2 stored GcnOptions).
[[nodiscard]] GcnOptions gcn_options(const ModelSpec& spec);
[[nodiscard]] ModelSpec gcn_spec(const GcnOptions& gcn);

/// "gcnii, 64 layers, hidden 64, dropout 0.6, alpha 0.1, lambda 0.5, weight decay 0.01
/// (convolutions) / 0.0005 (fc)".
[[nodiscard]] std::string describe(const ModelSpec& spec);

}  // namespace strata
