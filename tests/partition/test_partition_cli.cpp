// `strata partition` as a user runs it: the report on success, and one-line errors with a
// non-zero exit and nothing left behind on bad input.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "datasets/graph_io.hpp"
#include "tests/partition/fixtures.hpp"

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

struct Result {
    int exit_code = -1;
    std::string out;
    std::string err;
};

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

class Sandbox {
public:
    Sandbox() : dir_(fs::temp_directory_path() / ("strata_test_cli_" + std::to_string(getpid()))) {
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    Sandbox(const Sandbox&) = delete;
    Sandbox& operator=(const Sandbox&) = delete;
    ~Sandbox() {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    [[nodiscard]] std::string path(const std::string& name) const { return (dir_ / name).string(); }

    /// Runs `strata partition <args>` with stdout and stderr captured.
    Result partition(const std::string& args) const {
        const std::string command = std::string(STRATA_BINARY) + " partition " + args + " > " +
                                    path("stdout.txt") + " 2> " + path("stderr.txt");
        const int status = std::system(command.c_str());
        Result r;
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = read_text(dir_ / "stdout.txt");
        r.err = read_text(dir_ / "stderr.txt");
        fs::remove(dir_ / "stdout.txt");
        fs::remove(dir_ / "stderr.txt");
        return r;
    }
    [[nodiscard]] std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir_)) {
            names.push_back(e.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        return names;
    }

private:
    fs::path dir_;
};

/// A failure: exit code != 0, exactly one line on stderr containing `message`.
void check_failure(const Result& r, const std::string& message) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code != 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Contains("error") && Contains(message));
}

}  // namespace

TEST_CASE("strata partition prints the report and writes the directory", "[partition][apps]") {
    const Sandbox box;
    strata::write_graph(strata::test::generated(2000, 8, 1), box.path("g.h5"));

    const Result table = box.partition("--data " + box.path("g.h5") + " --parts 4 --out " +
                                       box.path("p") + " --seed 3");
    const Result json = box.partition("--data " + box.path("g.h5") +
                                      " -k 2 --method random --out " + box.path("q") + " --json");

    INFO(table.err);
    REQUIRE(table.exit_code == 0);
    CHECK_THAT(table.out, Contains("edge cut:") && Contains("communication volume:") &&
                              Contains("imbalance") && Contains("metis") && Contains("adjacency"));
    CHECK(fs::exists(box.path("p/part-00003.h5")));
    CHECK(fs::exists(box.path("p/partition.json")));
    REQUIRE(json.exit_code == 0);
    const auto parsed = nlohmann::json::parse(json.out);
    CHECK(parsed["num_parts"] == 2);
    CHECK(parsed["method"] == "random");
    CHECK(box.entries() == std::vector<std::string>{"g.h5", "p", "q"});
}

TEST_CASE("strata partition fails with one line and leaves nothing on bad input",
          "[partition][apps]") {
    const Sandbox box;
    strata::write_graph(strata::test::path_graph(5), box.path("g.h5"));
    std::ofstream(box.path("bad.h5")) << "not HDF5";
    fs::create_directories(box.path("exists"));
    const std::string g = " --data " + box.path("g.h5");
    const std::string out = " --out " + box.path("out");

    check_failure(box.partition("--data " + box.path("none.h5") + " --parts 2" + out), "none.h5");
    check_failure(box.partition("--data " + box.path("bad.h5") + " --parts 2" + out), "bad.h5");
    check_failure(box.partition(g + " --parts 0" + out), "--parts must be >= 1");
    check_failure(box.partition(g + " --parts 6" + out), "cannot split 5 vertices into 6 parts");
    check_failure(box.partition(g + " --parts 2 --out " + box.path("exists")),
                  "already exists (use --force");
    check_failure(box.partition(g + " --parts 2 --out " + box.path("bad.h5/out")),
                  "does not exist");
    check_failure(box.partition(g + " --parts 2 --balance nodes" + out),
                  "unknown constraint 'nodes'");
    check_failure(box.partition(g + " --parts 2 --method spectral" + out), "unknown method");

    CHECK(box.entries() == std::vector<std::string>{"bad.h5", "exists", "g.h5"});
    CHECK(fs::is_empty(box.path("exists")));
}
