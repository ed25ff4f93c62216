// The `strata` program: every subcommand of commands/registry.cpp.
#include "apps/commands/command.hpp"

int main(int argc, char** argv) {
    return strata::app::strata_main(argc, argv, strata::app::all_commands());
}
