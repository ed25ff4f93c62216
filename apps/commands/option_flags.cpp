// Option errors named by their flags.
#include "apps/commands/option_flags.hpp"

#include "src/base/error.hpp"

namespace strata::app {

std::string flag_of_option(const FlagTable& table, const std::string& option,
                           const std::string& fallback) {
    for (const auto& [key, flag] : table) {
        if (key == option) {
            return flag->get_name();
        }
    }
    return fallback;
}

int with_flag_names(const FlagTable& table, const std::string& fallback,
                    const std::function<int()>& run) {
    try {
        return run();
    } catch (const OptionError& e) {
        throw Error(e.message() + " (" + flag_of_option(table, e.option(), fallback) + ")", e);
    }
}

}  // namespace strata::app
