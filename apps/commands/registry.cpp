// The list of subcommands of `strata`.
#include "apps/commands/command.hpp"

namespace strata::app {

std::vector<AddCommand> all_commands(TrainExtensions train_extensions) {
    // Add each command here when its commands/<name>.cpp exists.
    return {
        &add_info_command,
        &add_convert_command,
        &add_generate_command,
        &add_partition_command,
        [train_extensions](CLI::App& root) { return add_train_command(root, train_extensions); },
        &add_predict_command,
        &add_calibrate_command,
        &add_plan_command,
    };
}

}  // namespace strata::app
