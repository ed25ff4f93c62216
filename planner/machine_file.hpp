// Where the planner's files live when nobody says (the machine model from `strata calibrate`,
// the partition statistics cache), which machine model a plan uses and where it came from, and
// what a machine model cannot price (more ranks or threads on a node than it has cores).
// `strata plan`, `strata calibrate` and `strata train --plan auto` call these, so all three
// find the same file and say the same thing about it.
#pragma once

#include <span>
#include <string>

#include "planner/machine_model.hpp"

namespace strata::planner {

/// $XDG_CACHE_HOME/strata (or ~/.cache/strata, or /tmp/strata-cache without HOME).
[[nodiscard]] std::string strata_cache_dir();
/// strata_cache_dir()/machine.json: where `strata calibrate` writes by default and where the
/// planner looks when neither a file nor $STRATA_MACHINE is given.
[[nodiscard]] std::string default_machine_path();
/// strata_cache_dir()/plan: the partition statistics cache.
[[nodiscard]] std::string default_plan_cache();

/// A machine model and where it came from.
struct MachineFile {
    enum class Source {
        given,        ///< the path the caller named (a --machine FILE)
        environment,  ///< $STRATA_MACHINE
        cache,        ///< default_machine_path()
        none,         ///< no calibration found: default_machine()'s built-in figures
    };
    MachineModel model;
    std::string path;  ///< the file read; empty for Source::none
    Source source = Source::none;

    [[nodiscard]] bool calibrated() const { return source != Source::none; }
    /// "/home/u/.cache/strata/machine.json (measured on node1)", "m.json (from STRATA_MACHINE,
    /// measured on node1)", or "uncalibrated (built-in defaults; run strata calibrate)".
    [[nodiscard]] std::string describe() const;
};

/// The machine model to plan with: `path` when not empty (a file that cannot be read is an
/// error); else $STRATA_MACHINE when set (likewise); else default_machine_path() when it exists;
/// else default_machine(), Source::none.
[[nodiscard]] MachineFile find_machine(const std::string& path);

/// The cores of the node a plan prices: the machine model's when calibrated, else this
/// machine's online CPUs (the built-in model's one core describes no real node).
[[nodiscard]] int node_cores(const MachineFile& machine);

/// Empty when every rank count K in `ranks` fits one node of `cores` cores: min(K,
/// `ranks_per_node`) ranks (0: all K on one node) of `threads` threads each (0: cores / ranks on
/// the node, at least 1, as strata train and strata plan choose). Else one line naming the K
/// that do not: their ranks would share cores (the plan prices their compute time-shared,
/// cost_model.hpp's time_share), and such runs' timings move with whatever else runs.
[[nodiscard]] std::string oversubscription_warning(std::span<const int> ranks, int ranks_per_node,
                                                   int threads, int cores);

}  // namespace strata::planner
