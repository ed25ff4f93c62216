// Default locations of the planner's files.
#include "apps/commands/plan_defaults.hpp"

#include <cstdlib>
#include <filesystem>

namespace strata::app {

std::string strata_cache_dir() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
        return std::string(xdg) + "/strata";
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        return std::string(home) + "/.cache/strata";
    }
    return "/tmp/strata-cache";
}

std::string default_plan_cache() {
    return strata_cache_dir() + "/plan";
}

planner::MachineModel load_machine(const std::string& path) {
    if (!path.empty()) {
        return planner::read_machine(path);
    }
    if (const char* env = std::getenv("STRATA_MACHINE"); env != nullptr && *env != '\0') {
        return planner::read_machine(env);
    }
    const std::string cached = strata_cache_dir() + "/machine.json";
    if (std::filesystem::exists(cached)) {
        return planner::read_machine(cached);
    }
    return planner::default_machine();
}

CLI::Option* add_machine_option(CLI::App& cmd, std::string& path, const std::string& use) {
    return cmd.add_option("--machine", path,
                          use +
                              " (from strata calibrate; default: $STRATA_MACHINE, else "
                              "~/.cache/strata/machine.json, else uncalibrated defaults)");
}

}  // namespace strata::app
