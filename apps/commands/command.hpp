// A subcommand of `strata`: its CLI11 options are registered on the root app, and `run` does
// the work after parsing. Each commands/<name>.cpp defines one add_<name>_command().
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "training/fit.hpp"

namespace strata::app {

struct Command {
    CLI::App* cli = nullptr;   ///< the subcommand; run() is called when it was given
    std::function<int()> run;  ///< returns the exit code; throws strata::Error on bad input
};

using AddCommand = std::function<Command(CLI::App& root)>;

/// main() of a strata program with these subcommands: MPI session, parsing, dispatch, and an
/// escaped error turned into one line, printed once for the whole job (end_job, which ends every
/// rank). apps/strata_main.cpp.
int strata_main(int argc, char** argv, const std::vector<AddCommand>& commands);

/// What a test build adds to `strata train` (tests/apps/strata_testing.cpp): hooks that run
/// before the others at every epoch (fault injection). The production program has none.
struct TrainExtensions {
    std::function<std::vector<std::unique_ptr<FitHook>>(int rank)> hooks;
};

/// Every subcommand, in --help order (commands/registry.cpp); `train` gets the extensions.
[[nodiscard]] std::vector<AddCommand> all_commands(TrainExtensions train_extensions = {});

Command add_info_command(CLI::App& root);
Command add_convert_command(CLI::App& root);
Command add_generate_command(CLI::App& root);
Command add_partition_command(CLI::App& root);
Command add_train_command(CLI::App& root, TrainExtensions extensions = {});
Command add_predict_command(CLI::App& root);
Command add_calibrate_command(CLI::App& root);
Command add_plan_command(CLI::App& root);

}  // namespace strata::app
