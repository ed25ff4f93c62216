// strata_main(): MPI session, subcommand dispatch, top-level error handling (one line for the
// job: with several ranks, MpiSession::abort), shared by `strata` (strata.cpp) and the test build
// (tests/apps/strata_testing.cpp).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/commands/command.hpp"
#include "src/base/error.hpp"
#include "src/comm/mpi_session.hpp"

namespace {

int run(int argc, char** argv, const std::vector<strata::app::AddCommand>& adders) {
    CLI::App root{"strata: full-graph GNN training across many processes"};
    root.require_subcommand(1);
    root.option_defaults()->always_capture_default();  // --help shows every default
    root.set_version_flag("--version", "strata 0.1.0");
    std::vector<strata::app::Command> commands;
    for (const auto& add : adders) {
        commands.push_back(add(root));
    }
    try {
        root.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) {  // --help, --version
            return root.exit(e);
        }
        std::string known;  // CLI11 says only "A subcommand is required" for a misspelt one
        bool is_command = false;
        for (const auto& command : commands) {
            known += (known.empty() ? "" : ", ") + command.cli->get_name();
            is_command = is_command || (argc > 1 && command.cli->get_name() == argv[1]);
        }
        if (argc > 1 && argv[1][0] != '-' && !is_command) {
            std::fprintf(stderr, "strata: error: unknown command '%s' (commands: %s; see --help)\n",
                         argv[1], known.c_str());
            return 2;
        }
        std::fprintf(stderr, "strata: error: %s (see --help)\n", e.what());
        return 2;
    }
    for (auto& command : commands) {
        if (command.cli->parsed()) {
            return command.run();
        }
    }
    return 2;
}

}  // namespace

int strata::app::strata_main(int argc, char** argv, const std::vector<AddCommand>& commands) {
    strata::MpiSession mpi(argc, argv);
    try {
        return run(argc, argv, commands);
    } catch (const strata::Error& e) {
        // One line: the user's message and where it was raised. An error on one rank ends
        // the whole job, printed once however many ranks fail (end_job), never a hang.
        const std::string line = e.message() + " [" + e.where() + "]";
        if (mpi.world_size() == 1) {
            std::fprintf(stderr, "strata: error: %s\n", line.c_str());
            return 1;
        }
        mpi.abort(line.c_str());
    } catch (const std::exception& e) {
        if (mpi.world_size() == 1) {
            std::fprintf(stderr, "strata: error: %s\n", e.what());
            return 1;
        }
        mpi.abort(e.what());
    }
}
