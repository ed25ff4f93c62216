// Tests of AtomicOutput: commit renames into place (a file, a directory over a directory with
// and without RENAME_EXCHANGE), no commit leaves nothing, no silent overwrite.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <catch2/catch.hpp>

#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace strata {
namespace {

using test::TempDir;

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
    const fs::path target = dir.path / "out.h5";

    AtomicOutput out(target);
    write_text(out.temp_path(), "data");
    CHECK_FALSE(fs::exists(target));
    out.commit();

    CHECK(read_text(target) == "data");
    CHECK_FALSE(fs::exists(out.temp_path()));
    CHECK(out.temp_path().parent_path() == dir.path);
}

TEST_CASE("AtomicOutput destroyed without commit leaves nothing behind", "[base]") {
    TempDir dir;
    const fs::path target = dir.path / "run";
    fs::path temp;

    {
        AtomicOutput out(target);
        temp = out.temp_path();
        fs::create_directories(temp / "sub");  // a directory output, half written
        write_text(temp / "sub" / "metrics.jsonl", "{}");
    }

    CHECK_FALSE(fs::exists(target));
    CHECK_FALSE(fs::exists(temp));
    CHECK(fs::is_empty(dir.path));
}

TEST_CASE("AtomicOutput refuses an existing target unless overwrite is set", "[base]") {
    TempDir dir;
    const fs::path target = dir.path / "out.txt";
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

    REQUIRE_THROWS_WITH(
        AtomicOutput(dir.path / "missing" / "out.txt"),
        Catch::Contains("out.txt: parent directory") && Catch::Contains("does not exist"));
}

TEST_CASE("AtomicOutput replaces a file by rename: the same inode is never removed first",
          "[base]") {
    TempDir dir;
    const fs::path target = dir.path / "out.txt";
    write_text(target, "old");
    // A hard link to the old file: rename(2) over the target leaves it with the old contents
    // (a remove-then-rename would too, so also check the target is never missing: a reader
    // that opened the old file before the commit still reads "old" after it).
    std::ifstream reader(target);
    AtomicOutput out(target, /*overwrite=*/true);
    write_text(out.temp_path(), "new");
    out.commit();
    CHECK(read_text(target) == "new");
    std::string seen;
    reader >> seen;
    CHECK(seen == "old");
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("AtomicOutput commit of nothing written names the output", "[base]") {
    TempDir dir;
    AtomicOutput out(dir.path / "out.txt");
    REQUIRE_THROWS_WITH(out.commit(), Catch::Contains("out.txt: nothing was written to"));
}

/// A directory output "old" with two files, replaced by a new one with one file.
void check_directory_replacement() {
    TempDir dir;
    const fs::path target = dir.path / "parts";
    fs::create_directories(target);
    write_text(target / "part-00000.h5", "old0");
    write_text(target / "part-00001.h5", "old1");

    AtomicOutput out(target, /*overwrite=*/true);
    fs::create_directories(out.temp_path());
    write_text(out.temp_path() / "part-00000.h5", "new0");
    out.commit();

    CHECK(read_text(target / "part-00000.h5") == "new0");
    CHECK_FALSE(fs::exists(target / "part-00001.h5"));
    // Neither the temporary nor the previous version (".parts.tmp.*", ".parts.old.*") is left.
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("AtomicOutput replaces a non-empty directory (renameat2 RENAME_EXCHANGE)", "[base]") {
    REQUIRE(rename_exchange_enabled());
    check_directory_replacement();
}

TEST_CASE("AtomicOutput replaces a non-empty directory without RENAME_EXCHANGE (fallback)",
          "[base]") {
    setenv("STRATA_NO_RENAME_EXCHANGE", "1", 1);
    CHECK_FALSE(rename_exchange_enabled());
    check_directory_replacement();
    unsetenv("STRATA_NO_RENAME_EXCHANGE");
}

TEST_CASE("fsync_path names a missing file", "[base]") {
    TempDir dir;
    REQUIRE_THROWS_WITH(fsync_path(dir.path / "missing"),
                        Catch::Contains("missing: cannot open to fsync: No such file"));
    write_text(dir.path / "here", "x");
    CHECK_NOTHROW(fsync_path(dir.path / "here"));
    CHECK_NOTHROW(fsync_tree(dir.path));
}

}  // namespace strata
