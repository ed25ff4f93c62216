// The planner's default locations, the machine model a plan uses, and the oversubscription check.
#include "planner/machine_file.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace strata::planner {

std::string strata_cache_dir() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
        return std::string(xdg) + "/strata";
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        return std::string(home) + "/.cache/strata";
    }
    return "/tmp/strata-cache";
}

std::string default_machine_path() {
    return strata_cache_dir() + "/machine.json";
}

std::string default_plan_cache() {
    return strata_cache_dir() + "/plan";
}

std::string MachineFile::describe() const {
    switch (source) {
        case Source::none:
            return "uncalibrated (built-in defaults; run strata calibrate)";
        case Source::environment:
            return path + " (from STRATA_MACHINE, measured on " + model.host + ")";
        case Source::given:
        case Source::cache:
            break;
    }
    return path + " (measured on " + model.host + ")";
}

MachineFile find_machine(const std::string& path) {
    if (!path.empty()) {
        return {read_machine(path), path, MachineFile::Source::given};
    }
    if (const char* env = std::getenv("STRATA_MACHINE"); env != nullptr && *env != '\0') {
        return {read_machine(env), env, MachineFile::Source::environment};
    }
    const std::string cached = default_machine_path();
    if (std::filesystem::exists(cached)) {
        return {read_machine(cached), cached, MachineFile::Source::cache};
    }
    return {default_machine(), "", MachineFile::Source::none};
}

int node_cores(const MachineFile& machine) {
    if (machine.calibrated()) {
        return std::max(1, machine.model.cores);
    }
    return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

std::string oversubscription_warning(std::span<const int> ranks, int ranks_per_node, int threads,
                                     int cores) {
    std::string which;
    std::string layouts;
    for (const int k : ranks) {
        const int per_node = ranks_per_node > 0 ? std::min(ranks_per_node, k) : k;
        const int per_rank = threads > 0 ? threads : std::max(1, cores / std::max(1, per_node));
        if (static_cast<long long>(per_node) * per_rank > cores) {
            which += (which.empty() ? "" : ", ") + std::to_string(k);
            layouts += (layouts.empty() ? "" : ", ") + std::to_string(per_node) + " x " +
                       std::to_string(per_rank);
        }
    }
    if (which.empty()) {
        return "";
    }
    return "K = " + which + ": more ranks x threads on a node (" + layouts + ") than its " +
           std::to_string(cores) +
           " cores: the ranks would share cores; the plan prices their compute as time-shared "
           "(ranks x threads / cores times as long), and such runs' timings move with "
           "everything else on the cores";
}

}  // namespace strata::planner
