// Runs the Planetoid converter script with posix_spawn (no shell, no quoting issues) and
// captures its stderr so that a failure becomes one strata::Error line.
#include "datasets/planetoid_convert.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "datasets/graph_io.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace strata {
namespace {

struct ProcessResult {
    int exit_code = -1;  ///< -1 when killed by a signal
    std::string error;   ///< everything written to stderr
};

ProcessResult run_process(const std::vector<std::string>& argv) {
    int fds[2];
    STRATA_CHECK(pipe(fds) == 0, "cannot create a pipe to run ", argv[0]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    pid_t pid = 0;
    const int status = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (status != 0) {
        close(fds[0]);
        STRATA_FAIL("cannot run ", argv[0], ": ", std::strerror(status));
    }
    ProcessResult result;
    char buffer[4096];
    for (ssize_t got = 0; (got = read(fds[0], buffer, sizeof buffer)) != 0;) {
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        result.error.append(buffer, static_cast<std::size_t>(got));
    }
    close(fds[0]);
    int wait_status = 0;
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    return result;
}

/// The last non-empty line of a process's stderr (a traceback's "Error: ..." line).
std::string last_line(const std::string& text) {
    std::size_t end = text.find_last_not_of(" \n\r\t");
    if (end == std::string::npos) {
        return "(no message)";
    }
    const std::size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1,
                       end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string python_interpreter() {
    const char* env = std::getenv("STRATA_PYTHON");
    return env != nullptr && *env != '\0' ? env : "/usr/bin/python3";
}

}  // namespace

std::string find_planetoid_script() {
    std::vector<fs::path> candidates;
    if (const char* env = std::getenv("STRATA_PLANETOID_SCRIPT"); env != nullptr && *env != '\0') {
        candidates.emplace_back(env);
    }
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        candidates.push_back(exe.parent_path() / "../share/strata/planetoid_to_h5.py");
    }
    candidates.push_back(fs::path(STRATA_SOURCE_DIR) / "datasets/planetoid_to_h5.py");
    std::string tried;
    for (const auto& path : candidates) {
        if (fs::is_regular_file(path, ec)) {
            return fs::weakly_canonical(path, ec).string();
        }
        tried += (tried.empty() ? "" : ", ") + path.string();
    }
    STRATA_FAIL("cannot find planetoid_to_h5.py (tried ", tried,
                "; set STRATA_PLANETOID_SCRIPT to its path)");
}

void convert_planetoid(const std::string& dir, const std::string& name, const std::string& out,
                       bool overwrite) {
    STRATA_CHECK(fs::is_directory(dir), dir, ": not a directory");
    const std::string python = python_interpreter();
    STRATA_CHECK(access(python.c_str(), X_OK) == 0, python,
                 ": Python interpreter not found (the Planetoid pickles need Python with numpy, "
                 "scipy and h5py; set STRATA_PYTHON)");
    const ProcessResult check = run_process({python, "-c", "import numpy, scipy.sparse, h5py"});
    STRATA_CHECK(check.exit_code == 0, python, " cannot import numpy, scipy and h5py (",
                 last_line(check.error),
                 "); on Debian: apt-get install python3-numpy python3-scipy python3-h5py");
    const std::string script = find_planetoid_script();

    {
        const AtomicOutput probe(out, overwrite);  // fail before converting if out exists
    }
    // The script writes a version 1 file to a scratch name (removed on scope exit, never
    // committed); write_graph then writes the current format, with its content id.
    const AtomicOutput scratch(out + ".planetoid", /*overwrite=*/true);
    const ProcessResult run = run_process(
        {python, script, "--dir", dir, "--name", name, "--out", scratch.temp_path().string()});
    STRATA_CHECK(run.exit_code == 0, dir, ": Planetoid conversion failed: ", last_line(run.error));
    GraphDataset graph;
    try {
        graph = read_graph(scratch.temp_path().string());
    } catch (const Error& e) {
        STRATA_FAIL(script, " wrote an invalid dataset: ", e.message());
    }
    write_graph(graph, out, overwrite);
}

}  // namespace strata
