// The --machine option that `strata plan` and `strata train --plan auto` take. Where the
// planner finds its files when not told (the machine model, the partition statistics cache)
// is planner/machine_file.hpp.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "planner/machine_file.hpp"

namespace strata::app {

using planner::default_plan_cache;

/// Adds --machine FILE (for planner::find_machine) to `cmd`: its help is `use` followed by
/// where the model comes from when the option is not given, the same for every command.
CLI::Option* add_machine_option(CLI::App& cmd, std::string& path, const std::string& use);

}  // namespace strata::app
