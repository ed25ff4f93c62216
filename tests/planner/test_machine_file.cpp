// Where the planner finds its files (planner/machine_file.hpp), the warnings about the machine
// (oversubscription, a busy machine), and partition statistics of a graph named by a bare file
// name in the working directory (README's `strata plan --data g.h5`).
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/generate.hpp"
#include "datasets/graph_io.hpp"
#include "planner/calibration.hpp"
#include "planner/machine_file.hpp"
#include "planner/partition_stats.hpp"
#include "src/base/error.hpp"

#include <unistd.h>

namespace fs = std::filesystem;
using strata::planner::MachineFile;

namespace {

/// A fresh directory under the system's temporary directory, removed at scope end.
struct ScratchDir {
    fs::path path;
    explicit ScratchDir(const std::string& name)
        : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

/// Sets (or, with nullptr, unsets) an environment variable for the scope.
struct ScopedEnv {
    std::string name;
    std::string old;
    bool had = false;
    ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
        if (const char* v = std::getenv(name.c_str()); v != nullptr) {
            had = true;
            old = v;
        }
        value != nullptr ? ::setenv(name.c_str(), value, 1) : ::unsetenv(name.c_str());
    }
    ~ScopedEnv() { had ? ::setenv(name.c_str(), old.c_str(), 1) : ::unsetenv(name.c_str()); }
};

/// The working directory changed for the scope.
struct ScopedCwd {
    fs::path old = fs::current_path();
    explicit ScopedCwd(const fs::path& to) { fs::current_path(to); }
    ~ScopedCwd() { fs::current_path(old); }
};

}  // namespace

TEST_CASE("find_machine: --machine, then STRATA_MACHINE, then the cache, else uncalibrated",
          "[planner]") {
    const ScratchDir dir("strata-machine-file");
    const ScopedEnv xdg("XDG_CACHE_HOME", dir.path.c_str());
    const ScopedEnv env("STRATA_MACHINE", nullptr);
    CHECK(strata::planner::default_machine_path() == (dir.path / "strata/machine.json").string());
    CHECK(strata::planner::default_plan_cache() == (dir.path / "strata/plan").string());

    const MachineFile none = strata::planner::find_machine("");
    CHECK(none.source == MachineFile::Source::none);
    CHECK_FALSE(none.calibrated());
    CHECK(none.path.empty());
    CHECK(none.describe() == "uncalibrated (built-in defaults; run strata calibrate)");

    strata::planner::MachineModel m = strata::planner::default_machine();
    m.host = "node7";
    m.cores = 6;
    fs::create_directories(dir.path / "strata");
    strata::planner::write_machine(m, strata::planner::default_machine_path());
    const MachineFile cached = strata::planner::find_machine("");
    CHECK(cached.source == MachineFile::Source::cache);
    CHECK(cached.model.host == "node7");
    CHECK(cached.describe() == strata::planner::default_machine_path() + " (measured on node7)");
    CHECK(strata::planner::node_cores(cached) == 6);

    m.host = "node8";
    const std::string other = (dir.path / "other.json").string();
    strata::planner::write_machine(m, other);
    {
        const ScopedEnv set("STRATA_MACHINE", other.c_str());
        const MachineFile from_env = strata::planner::find_machine("");
        CHECK(from_env.source == MachineFile::Source::environment);
        CHECK(from_env.describe() == other + " (from STRATA_MACHINE, measured on node8)");
        // A given file wins over the environment.
        const MachineFile given = strata::planner::find_machine(cached.path);
        CHECK(given.source == MachineFile::Source::given);
        CHECK(given.model.host == "node7");
    }
    // A named file that is not there is an error, never a silent fallback.
    CHECK_THROWS_WITH(strata::planner::find_machine((dir.path / "none.json").string()),
                      Catch::Contains("none.json: cannot read the machine model"));
}

TEST_CASE("oversubscription: more ranks x threads on a node than its cores", "[planner]") {
    using strata::planner::oversubscription_warning;
    const std::vector<int> ranks{1, 2, 4, 8};
    CHECK(oversubscription_warning(std::vector<int>{1, 2}, 0, 0, 2).empty());
    CHECK(oversubscription_warning(ranks, 0, 0, 2) ==
          "K = 4, 8: more ranks x threads on a node (4 x 1, 8 x 1) than its 2 cores: the ranks "
          "would share cores; the plan prices their compute as time-shared (ranks x threads / "
          "cores times as long), and such runs' timings move with everything else on the "
          "cores");
    // Two ranks per node: every K fits two cores.
    CHECK(oversubscription_warning(ranks, 2, 0, 2).empty());
    // Threads given: 2 ranks x 2 threads on 2 cores does not fit, 1 x 2 does.
    CHECK(oversubscription_warning(std::vector<int>{1, 2}, 0, 2, 2)
              .rfind("K = 2: more ranks x threads on a node (2 x 2) than its 2 cores", 0) == 0);
    // Uncalibrated: this machine's cores, not the built-in model's one.
    MachineFile none;
    CHECK(strata::planner::node_cores(none) >= 1);
}

TEST_CASE("a busy machine: load average above 0.5 + cores / 10", "[planner]") {
    using strata::planner::busy_warning;
    CHECK(busy_warning(0.2, 2).empty());
    CHECK(busy_warning(0.7, 2).empty());   // threshold 0.7
    CHECK(busy_warning(-1.0, 2).empty());  // unknown
    CHECK(busy_warning(1.3, 8).empty());
    CHECK(busy_warning(5.6, 2) ==
          "the machine is busy (load average 5.60 on 2 cores, above 0.7): other work slows "
          "every figure measured; calibrate on an idle machine for a model that predicts its "
          "runs");
    CHECK_FALSE(busy_warning(1.31, 8).empty());
    CHECK(strata::planner::load_average() >= -1.0);
}

TEST_CASE("partition statistics of a bare file name in the working directory", "[planner]") {
    const ScratchDir dir("strata-bare-name");
    strata::GenerateOptions g;
    g.num_vertices = 60;
    g.avg_degree = 4;
    g.num_features = 3;
    g.num_classes = 2;
    strata::write_graph(strata::generate_graph(g), (dir.path / "g.h5").string());
    fs::create_directories(dir.path / "sub");
    const ScopedCwd cwd(dir.path);
    // `fs::absolute("")` of the bare name's empty parent threw "cannot make absolute path".
    strata::planner::PartitionStatsCache cache("g.h5", (dir.path / "cache").string(), 0);
    CHECK(cache.get(2, strata::Normalization::symmetric).parts == 2);
    CHECK_NOTHROW(strata::planner::PartitionStatsCache("g.h5", "cache", 0));
    // Beside the input is refused, however it is spelled.
    CHECK_THROWS_WITH(strata::planner::PartitionStatsCache("g.h5", ".", 0),
                      Catch::Contains("must not be beside or inside the input data g.h5"));
    CHECK_THROWS_WITH(strata::planner::PartitionStatsCache("g.h5", "sub/..", 0),
                      Catch::Contains("must not be beside or inside the input data g.h5"));
    CHECK_THROWS_WITH(strata::planner::PartitionStatsCache("./g.h5", dir.path.string() + "/", 0),
                      Catch::Contains("must not be beside or inside the input data"));
}
