// The --machine option of the planner's commands.
#include "apps/commands/plan_defaults.hpp"

namespace strata::app {

CLI::Option* add_machine_option(CLI::App& cmd, std::string& path, const std::string& use) {
    return cmd.add_option("--machine", path,
                          use +
                              " (from strata calibrate; default: $STRATA_MACHINE, else "
                              "~/.cache/strata/machine.json, where strata calibrate writes "
                              "without --out, else uncalibrated built-in defaults)");
}

}  // namespace strata::app
