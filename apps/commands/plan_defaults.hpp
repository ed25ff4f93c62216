// Where `strata plan` and `strata train --plan auto` find the machine model and the partition
// statistics cache when not told, and the --machine option both take.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "planner/machine_model.hpp"

namespace strata::app {

/// $XDG_CACHE_HOME/strata (or ~/.cache/strata, or /tmp/strata-cache without HOME).
[[nodiscard]] std::string strata_cache_dir();
/// strata_cache_dir()/plan.
[[nodiscard]] std::string default_plan_cache();
/// `path` when given; else $STRATA_MACHINE; else strata_cache_dir()/machine.json if it exists;
/// else planner::default_machine().
[[nodiscard]] planner::MachineModel load_machine(const std::string& path);
/// Adds --machine FILE (for load_machine) to `cmd`: its help is `use` followed by where the
/// model comes from and load_machine's defaults, the same for every command that takes it.
CLI::Option* add_machine_option(CLI::App& cmd, std::string& path, const std::string& use);

}  // namespace strata::app
