// --device, --comm and --threads of `strata train` and `strata predict`: the runtime options
// (training/runtime.hpp) as flags.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/commands/option_flags.hpp"
#include "training/runtime.hpp"

namespace strata::app {

/// Registers the three flags on `cmd`, bound to `options`; returns (run option, flag) pairs.
FlagTable add_runtime_flags(CLI::App& cmd, RuntimeOptions& options);

}  // namespace strata::app
