// Tests of AtomicOutput: commit renames into place, no commit leaves nothing, no silent overwrite.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"

#include <unistd.h>

namespace fs = std::filesystem;

namespace strata {
namespace {

/// A fresh empty directory under the system temp directory, removed at scope exit.
class TempDir {
public:
    TempDir()
        : path_(fs::temp_directory_path() / ("strata_test_atomic_" + std::to_string(getpid()) +
                                             "_" + std::to_string(next_++))) {
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    [[nodiscard]] const fs::path& path() const { return path_; }

private:
    static inline int next_ = 0;
    fs::path path_;
};

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("AtomicOutput commit renames the temporary into place", "[base]") {
    TempDir dir;
    const fs::path target = dir.path() / "out.h5";

    AtomicOutput out(target);
    write_text(out.temp_path(), "data");
    CHECK_FALSE(fs::exists(target));
    out.commit();

    CHECK(read_text(target) == "data");
    CHECK_FALSE(fs::exists(out.temp_path()));
    CHECK(out.temp_path().parent_path() == dir.path());
}

TEST_CASE("AtomicOutput destroyed without commit leaves nothing behind", "[base]") {
    TempDir dir;
    const fs::path target = dir.path() / "run";
    fs::path temp;

    {
        AtomicOutput out(target);
        temp = out.temp_path();
        fs::create_directories(temp / "sub");  // a directory output, half written
        write_text(temp / "sub" / "metrics.jsonl", "{}");
    }

    CHECK_FALSE(fs::exists(target));
    CHECK_FALSE(fs::exists(temp));
    CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("AtomicOutput refuses an existing target unless overwrite is set", "[base]") {
    TempDir dir;
    const fs::path target = dir.path() / "out.txt";
    write_text(target, "old");

    REQUIRE_THROWS_WITH(AtomicOutput(target), Catch::Contains("output already exists"));
    CHECK(read_text(target) == "old");

    AtomicOutput out(target, /*overwrite=*/true);
    write_text(out.temp_path(), "new");
    out.commit();
    CHECK(read_text(target) == "new");
}

TEST_CASE("AtomicOutput rejects a missing parent directory", "[base]") {
    TempDir dir;

    REQUIRE_THROWS_AS(AtomicOutput(dir.path() / "missing" / "out.txt"), Error);
}

}  // namespace strata
