// A subcommand of `strata`: its CLI11 options are registered on the root app, and `run` does
// the work after parsing. Each commands/<name>.cpp defines one add_<name>_command().
#pragma once

#include <functional>
#include <vector>

#include <CLI/CLI.hpp>

namespace strata::app {

struct Command {
    CLI::App* cli = nullptr;   ///< the subcommand; run() is called when it was given
    std::function<int()> run;  ///< returns the exit code; throws strata::Error on bad input
};

using AddCommand = Command (*)(CLI::App& root);

/// Every subcommand, in --help order (commands/registry.cpp).
const std::vector<AddCommand>& all_commands();

Command add_info_command(CLI::App& root);
Command add_convert_command(CLI::App& root);
Command add_generate_command(CLI::App& root);
Command add_partition_command(CLI::App& root);
Command add_train_command(CLI::App& root);
Command add_predict_command(CLI::App& root);

}  // namespace strata::app
