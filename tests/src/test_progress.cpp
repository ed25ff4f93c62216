// Tests of Progress when stdout is not a terminal: plain lines, at most one per 10% step.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/log.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace strata {
namespace {

/// Runs `body` with stdout redirected to a file and returns what it printed.
template <class Body>
std::string capture_stdout(Body body) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                       ("strata_test_progress_" + std::to_string(getpid()));
    std::fflush(stdout);
    const int saved = dup(STDOUT_FILENO);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(saved >= 0);
    REQUIRE(fd >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    body();
    std::fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    std::ifstream in(path);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::filesystem::remove(path);
    return text;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> result;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        result.push_back(line);
    }
    return result;
}

}  // namespace

TEST_CASE("Progress on a non-terminal prints one plain line per 10% step", "[base]") {
    const std::string text = capture_stdout([] {
        REQUIRE_FALSE(stdout_is_terminal());
        Progress progress("load", 20);
        for (int i = 1; i <= 20; ++i) {
            progress.update(i);
        }
        progress.finish();
    });

    const std::vector<std::string> got = lines(text);
    REQUIRE(got.size() == 11);  // 5% (decile 0), then 10%, 20%, ..., 100%
    CHECK(got.front() == "load: 5% (1/20)");
    CHECK(got[1] == "load: 10% (2/20)");
    CHECK(got.back() == "load: 100% (20/20)");
    CHECK(text.find('\r') == std::string::npos);
}

TEST_CASE("Progress finish prints 100% if the last update fell short", "[base]") {
    const std::string text = capture_stdout([] {
        Progress progress("step", 4);
        progress.update(1);
    });  // the destructor finishes

    CHECK(lines(text) == std::vector<std::string>{"step: 25% (1/4)", "step: 100% (4/4)"});
}

TEST_CASE("a disabled Progress prints nothing", "[base]") {
    const std::string text = capture_stdout([] {
        Progress progress("quiet", 10, /*enabled=*/false);
        progress.update(5);
        progress.finish();
    });

    CHECK(text.empty());
}

}  // namespace strata
