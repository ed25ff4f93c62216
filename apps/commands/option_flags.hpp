// Which flag sets which run option, and the one place a library's option error (strata::
// OptionError: "ways = 0: must be at least 1") gets the flag that sets it appended ("(--ways)").
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace strata::app {

/// (run option, the flag that sets it), e.g. ("ways", --ways).
using FlagTable = std::vector<std::pair<std::string, CLI::Option*>>;

/// The flag of `option` in `table` ("--ways"); `fallback` when none sets it.
[[nodiscard]] std::string flag_of_option(const FlagTable& table, const std::string& option,
                                         const std::string& fallback);

/// Runs `run`; a strata::OptionError escaping it is rethrown as a strata::Error with the flag
/// of its option appended: "ways = 0: must be at least 1 (--ways)".
int with_flag_names(const FlagTable& table, const std::string& fallback,
                    const std::function<int()>& run);

}  // namespace strata::app
