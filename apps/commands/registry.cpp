// The list of subcommands of `strata`.
#include "apps/commands/command.hpp"

namespace strata::app {

const std::vector<AddCommand>& all_commands() {
    static const std::vector<AddCommand> commands = {
        // Add each command here when its commands/<name>.cpp exists.
    };
    return commands;
}

}  // namespace strata::app
