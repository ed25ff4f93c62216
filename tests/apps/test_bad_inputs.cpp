// Bad-input corpus: corrupt graph files (built with H5File or as raw bytes) given to the real
// `strata` binary. Each run must exit non-zero, not from a signal, with exactly one non-empty
// stderr line that names the file.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <utility>

#include <catch2/catch.hpp>

#include "datasets/graph_io.hpp"
#include "datasets/h5_file.hpp"
#include "tests/datasets/graph_fixtures.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

using strata::GraphDataset;
using strata::H5File;
using strata::test::RawGraphEdit;
using strata::test::TempDir;
using strata::test::tiny_graph;
using strata::test::write_raw_graph;

namespace {

struct RunResult {
    bool signaled = false;
    int exit_code = -1;
    std::string out;
    std::string err;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Runs the strata binary with `args`, stdout and stderr captured through files in `dir`.
RunResult run_strata(const TempDir& dir, const std::vector<std::string>& args) {
    const std::string out_path = dir.file("stdout.txt");
    const std::string err_path = dir.file("stderr.txt");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argv = {STRATA_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> pointers;
    for (auto& a : argv) {
        pointers.push_back(a.data());
    }
    pointers.push_back(nullptr);
    // Sanitizer settings for the child (ignored by a build without sanitizers). LeakSanitizer
    // prints statistics of matched suppressions (Open MPI's intentional leaks) to stderr:
    // that is the sanitizer's output, not strata's, so turn it off; real leak reports still
    // appear and fail the run. intercept_tls_get_addr=0: GCC 12's LeakSanitizer otherwise
    // crashes in its tracer on a bogus dynamic-TLS range at exit ("Tracer caught signal 11")
    // once HDF5 and Open MPI are both loaded.
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string_view entry(*e);
        if (entry.substr(0, 13) != "LSAN_OPTIONS=" && entry.substr(0, 13) != "ASAN_OPTIONS=") {
            env.emplace_back(entry);
        }
    }
    for (const auto& [name, option] : {std::pair{"LSAN_OPTIONS", "print_suppressions=0"},
                                       std::pair{"ASAN_OPTIONS", "intercept_tls_get_addr=0"}}) {
        const char* value = std::getenv(name);
        env.push_back(std::string(name) + "=" +
                      (value != nullptr && *value != '\0' ? std::string(value) + ":" : "") +
                      option);
    }
    std::vector<char*> env_pointers;
    for (auto& e : env) {
        env_pointers.push_back(e.data());
    }
    env_pointers.push_back(nullptr);
    pid_t pid = 0;
    const int spawned =
        posix_spawn(&pid, STRATA_BINARY, &actions, nullptr, pointers.data(), env_pointers.data());
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(spawned == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    RunResult r;
    r.signaled = WIFSIGNALED(status);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    return r;
}

std::vector<std::string> non_empty_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.find_first_not_of(" \t\r") != std::string::npos) {
            lines.push_back(line);
        }
    }
    return lines;
}

/// The contract for every bad input: a clean failure with one line naming `names`.
void require_clean_failure(const RunResult& r, const std::string& names) {
    INFO("stderr: " << r.err);
    REQUIRE_FALSE(r.signaled);
    REQUIRE(r.exit_code != 0);
    REQUIRE(r.exit_code < 128);
    const auto lines = non_empty_lines(r.err);
    REQUIRE(lines.size() == 1);
    REQUIRE(r.err.back() == '\n');
    REQUIRE(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    REQUIRE(lines[0].find(names) != std::string::npos);
}

void require_info_fails(const TempDir& dir, const std::string& file, const std::string& detail) {
    const RunResult r = run_strata(dir, {"info", file});
    require_clean_failure(r, file);
    INFO("stderr: " << r.err);
    REQUIRE(r.err.find(detail) != std::string::npos);
}

}  // namespace

TEST_CASE("strata info accepts a valid file (the harness can tell success)", "[apps]") {
    TempDir dir;
    strata::write_graph(tiny_graph(), dir.file("good.h5"));

    const RunResult text = run_strata(dir, {"info", dir.file("good.h5")});
    const RunResult json = run_strata(dir, {"info", dir.file("good.h5"), "--json"});

    REQUIRE(text.exit_code == 0);
    REQUIRE(text.err.empty());
    REQUIRE(text.out.find("vertices:          4") != std::string::npos);
    const std::string id = strata::read_graph_content_id(dir.file("good.h5"));
    REQUIRE(text.out.find("identity:          " + id + " (stored content id") != std::string::npos);
    REQUIRE(text.out.find("split:             train 1, val 1, test 2") != std::string::npos);
    REQUIRE(json.exit_code == 0);
    REQUIRE(non_empty_lines(json.out).size() == 1);
    REQUIRE(json.out.find("\"num_edges\":5") != std::string::npos);
    REQUIRE(json.out.find("\"identity\":\"" + id + "\"") != std::string::npos);
}

TEST_CASE("strata info fails cleanly on every corrupt file of the corpus", "[apps]") {
    TempDir dir;
    const GraphDataset g = tiny_graph();
    const std::string path = dir.file("corrupt.h5");

    SECTION("missing file") {
        require_info_fails(dir, dir.file("missing.h5"), "no such file");
    }
    SECTION("a directory") {
        require_info_fails(dir, dir.path.string(), "is a directory");
    }
    SECTION("not HDF5") {
        dir.write("corrupt.h5", "u v\n0 1\n");
        require_info_fails(dir, path, "not an HDF5 file");
    }
    SECTION("empty file") {
        dir.write("corrupt.h5", "");
        require_info_fails(dir, path, "not an HDF5 file");
    }
    SECTION("truncated") {
        GraphDataset big = g;
        big.features = strata::HostMatrix(4, 20000, 0.5f);
        strata::write_graph(big, dir.file("full.h5"));
        dir.write("corrupt.h5", slurp(dir.file("full.h5")).substr(0, 3000));
        require_info_fails(dir, path, "truncated");
    }
    SECTION("missing dataset") {
        write_raw_graph(g, path, {.skip = "/graph/indices"});
        require_info_fails(dir, path, "/graph/indices: dataset not found");
    }
    SECTION("missing format attribute") {
        write_raw_graph(g, path, {.skip = "strata_format"});
        require_info_fails(dir, path, "missing attribute 'strata_format'");
    }
    SECTION("wrong dtype") {
        write_raw_graph(g, path, {.skip = "/node/features", .extra = [&](H5File& f) {
                                      std::vector<double> x(g.features.values.begin(),
                                                            g.features.values.end());
                                      f.write<double>("/node/features", x, {4, 3});
                                  }});
        require_info_fails(dir, path, "/node/features: expected float32, found float64");
    }
    SECTION("wrong shape") {
        write_raw_graph(
            g, path,
            {.skip = "/node/labels", .extra = [](H5File& f) {
                 f.write<std::int64_t>("/node/labels", std::vector<std::int64_t>{0, 1, 2}, {3});
             }});
        require_info_fails(dir, path, "/node/labels: has 3 elements, expected 4");
    }
    SECTION("indptr not monotone") {
        GraphDataset bad = g;
        bad.indptr = {0, 3, 2, 4, 5};
        write_raw_graph(bad, path);
        require_info_fails(dir, path, "/graph/indptr: not monotone at index 2 (3 > 2)");
    }
    SECTION("index out of range") {
        GraphDataset bad = g;
        bad.indices[4] = 99;
        write_raw_graph(bad, path);
        require_info_fails(dir, path, "/graph/indices: vertex id 99 at index 4 out of range");
    }
    SECTION("label >= num_classes") {
        GraphDataset bad = g;
        bad.labels[1] = 3;
        write_raw_graph(bad, path);
        require_info_fails(dir, path, "/node/labels: label 3 at index 1 out of range [-1, 3)");
    }
    SECTION("NaN feature") {
        GraphDataset bad = g;
        bad.features.at(1, 2) = std::numeric_limits<float>::quiet_NaN();
        write_raw_graph(bad, path);
        require_info_fails(dir, path, "/node/features: non-finite value nan at [1, 2]");
    }
}

TEST_CASE("strata convert and generate fail cleanly on bad input", "[apps]") {
    TempDir dir;

    SECTION("a bad edge line names file:line") {
        std::filesystem::create_directories(dir.path / "raw");
        dir.write("raw/edges.txt", "0 1\n1 zero\n");
        dir.write("raw/labels.txt", "0\n1\n");
        dir.write("raw/features.txt", "1\n2\n");
        const RunResult r = run_strata(dir, {"convert", "--from", "text", dir.file("raw"), "--name",
                                             "x", "--out", dir.file("x.h5")});
        require_clean_failure(r, dir.file("raw/edges.txt") + ":2");
        REQUIRE_FALSE(std::filesystem::exists(dir.file("x.h5")));
    }
    SECTION("an existing output is not replaced without --force") {
        strata::write_graph(tiny_graph(), dir.file("g.h5"));
        const RunResult r =
            run_strata(dir, {"generate", "--nodes", "50", "--avg-degree", "4", "--features", "3",
                             "--classes", "2", "--out", dir.file("g.h5")});
        require_clean_failure(r, dir.file("g.h5"));
        REQUIRE(strata::read_graph(dir.file("g.h5")).name == "tiny");
    }
    SECTION("an invalid generator option is named") {
        const RunResult r =
            run_strata(dir, {"generate", "--nodes", "50", "--avg-degree", "4", "--features", "3",
                             "--classes", "2", "--homophily", "2", "--out", dir.file("h.h5")});
        require_clean_failure(r, "--homophily");
        REQUIRE_FALSE(std::filesystem::exists(dir.file("h.h5")));
    }
}
