// The list of subcommands of `strata`.
#include "apps/commands/command.hpp"

namespace strata::app {

const std::vector<AddCommand>& all_commands() {
    static const std::vector<AddCommand> commands = {
        // Add each command here when its commands/<name>.cpp exists.
        &add_info_command,      &add_convert_command, &add_generate_command,
        &add_partition_command, &add_train_command,   &add_predict_command,
    };
    return commands;
}

}  // namespace strata::app
