// The model flags of `strata train`: --model NAME with the options of the zoo's models, or
// --model-spec FILE; unset flags take the model's recipe (layers/model_zoo.hpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "layers/model_zoo.hpp"

namespace strata::app {

struct ModelOptions {
    std::string model = "gcn";
    std::string spec_file;
    ModelSpec flags;  ///< values parsed from the command line (valid where given)
    /// ModelSpec key → its flag (two for "bias": --bias and --no-bias).
    std::vector<std::pair<std::string, CLI::Option*>> options;
    CLI::Option* model_option = nullptr;
};

/// Registers --model, --model-spec and one flag per ModelSpec field on `cmd`.
void add_model_options(CLI::App& cmd, ModelOptions& options);

/// The model to build: --model-spec FILE, or --model's recipe with the flags given. Throws
/// strata::Error for a flag the model does not read ("--heads does not apply to --model gcnii
/// (its options: ...)") and for a spec file that cannot be read or parsed.
[[nodiscard]] ModelSpec resolve_model(const ModelOptions& options);

}  // namespace strata::app
