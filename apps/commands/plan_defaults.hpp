// Where `strata plan` and `strata train --plan auto` find the machine model and the partition
// statistics cache when not told.
#pragma once

#include <string>

#include "planner/machine_model.hpp"

namespace strata::app {

/// $XDG_CACHE_HOME/strata (or ~/.cache/strata, or /tmp/strata-cache without HOME).
[[nodiscard]] std::string strata_cache_dir();
/// strata_cache_dir()/plan.
[[nodiscard]] std::string default_plan_cache();
/// `path` when given; else $STRATA_MACHINE; else strata_cache_dir()/machine.json if it exists;
/// else planner::default_machine().
[[nodiscard]] planner::MachineModel load_machine(const std::string& path);

}  // namespace strata::app
