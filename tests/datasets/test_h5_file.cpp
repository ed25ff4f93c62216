// H5File: typed round trips, attributes, type/rank refusal, errors naming file and path, and a
// checked close().
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

#include <catch2/catch.hpp>

#include "datasets/h5_file.hpp"
#include "src/base/error.hpp"
#include "tests/datasets/graph_fixtures.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

using Catch::Matchers::Contains;
using strata::H5File;
using strata::H5Shape;

namespace {

template <class T>
void check_round_trip(const std::string& path) {
    const std::vector<T> data = {T(1), T(2), T(3), T(4), T(5), T(6)};
    {
        H5File f = H5File::create(path);
        f.write<T>("/a/b/values", data, {2, 3});
        f.write<T>("/compressed", data, {3, 2}, true);
        f.write<T>("/empty", std::vector<T>{}, {0, 4}, true);
    }
    const H5File f = H5File::open(path);
    H5Shape shape;
    REQUIRE(f.read<T>("/a/b/values", &shape, 2) == data);
    REQUIRE(shape == H5Shape{2, 3});
    REQUIRE(f.read<T>("/compressed", &shape) == data);
    REQUIRE(shape == H5Shape{3, 2});
    REQUIRE(f.read<T>("/empty", &shape).empty());
    REQUIRE(shape == H5Shape{0, 4});
    REQUIRE(f.read_rows<T>("/compressed", 1, 2) == std::vector<T>{T(3), T(4), T(5), T(6)});
    REQUIRE(f.read_rows<T>("/compressed", 3, 0).empty());
    REQUIRE(f.shape("/a/b/values") == H5Shape{2, 3});
}

}  // namespace

TEST_CASE("H5File round-trips every supported element type with its shape", "[datasets]") {
    strata::test::TempDir dir;
    check_round_trip<std::int64_t>(dir.file("i64.h5"));
    check_round_trip<std::int32_t>(dir.file("i32.h5"));
    check_round_trip<std::uint8_t>(dir.file("u8.h5"));
    check_round_trip<float>(dir.file("f32.h5"));
    check_round_trip<double>(dir.file("f64.h5"));
}

TEST_CASE("H5File keeps extreme values of each type exactly", "[datasets]") {
    strata::test::TempDir dir;
    const std::vector<std::int64_t> big = {std::numeric_limits<std::int64_t>::min(), -1,
                                           std::numeric_limits<std::int64_t>::max()};
    const std::vector<float> small = {1e-38f, -0.0f, 3.4e38f};
    {
        H5File f = H5File::create(dir.file("x.h5"));
        f.write<std::int64_t>("/big", big, {3});
        f.write<float>("/small", small, {3}, true);
    }
    const H5File f = H5File::open(dir.file("x.h5"));
    REQUIRE(f.read<std::int64_t>("/big") == big);
    REQUIRE(f.read<float>("/small") == small);
}

TEST_CASE("H5File attributes round-trip strings, integers and doubles", "[datasets]") {
    strata::test::TempDir dir;
    {
        H5File f = H5File::create(dir.file("a.h5"));
        f.write<float>("/g/data", std::vector<float>{1.0f}, {1});
        f.write_attribute("/", "name", std::string("cora"));
        f.write_attribute("/", "empty", std::string());
        f.write_attribute("/", "count", std::int64_t{-7});
        f.write_attribute("/g/data", "scale", 0.125);
        f.write_attribute("/", "count", std::int64_t{42});  // replaces
    }
    const H5File f = H5File::open(dir.file("a.h5"));
    REQUIRE(f.read_string_attribute("/", "name") == "cora");
    REQUIRE(f.read_string_attribute("/", "empty").empty());
    REQUIRE(f.read_int_attribute("/", "count") == 42);
    REQUIRE(f.read_double_attribute("/g/data", "scale") == 0.125);
    REQUIRE(f.has_attribute("/", "name"));
    REQUIRE_FALSE(f.has_attribute("/", "nope"));
    REQUIRE_FALSE(f.has_attribute("/missing/object", "name"));
    REQUIRE_THROWS_WITH(f.read_int_attribute("/", "name"),
                        Contains("a.h5: /: attribute 'name': expected an integer, found string"));
    REQUIRE_THROWS_WITH(f.read_string_attribute("/", "nope"),
                        Contains("a.h5: /: missing attribute 'nope'"));
}

TEST_CASE("H5File exists follows nested paths without errors", "[datasets]") {
    strata::test::TempDir dir;
    {
        H5File f = H5File::create(dir.file("e.h5"));
        f.write<std::uint8_t>("/node/mask", std::vector<std::uint8_t>{1, 0}, {2});
    }
    const H5File f = H5File::open(dir.file("e.h5"));
    REQUIRE(f.exists("/"));
    REQUIRE(f.exists("/node"));
    REQUIRE(f.exists("/node/mask"));
    REQUIRE_FALSE(f.exists("/node/labels"));
    REQUIRE_FALSE(f.exists("/graph/indptr"));  // the parent group is missing too
}

TEST_CASE("HDF5 prints nothing itself on any thread, whichever thread opened a file first",
          "[datasets]") {
    // Thread-safe HDF5 keeps automatic error printing per thread: `strata partition` opens the
    // source on a second thread first (its identity) while the main thread writes, and a full
    // disk then printed HDF5's whole error stack on the main thread besides strata's one line.
    strata::test::TempDir dir;
    std::thread([&] {
        H5File f = H5File::create(dir.file("full.h5"));
        f.write<float>("/data", std::vector<float>(100000, 1.0f), {100000});
    }).join();
    std::ifstream whole(dir.file("full.h5"), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(whole)),
                            std::istreambuf_iterator<char>());
    const std::string path = dir.write("cut.h5", bytes.substr(0, 2048));  // HDF5 fails on it
    const std::string log = dir.file("stderr.txt");
    std::fflush(stderr);
    const int saved = dup(2);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE((saved >= 0 && fd >= 0));
    dup2(fd, 2);
    bool threw = false;
    try {
        (void)H5File::open(path);
    } catch (const strata::Error&) {
        threw = true;
    }
    std::fflush(stderr);
    dup2(saved, 2);
    ::close(fd);
    ::close(saved);
    REQUIRE(threw);
    std::ifstream in(log);
    const std::string printed((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    REQUIRE(printed.empty());
}

TEST_CASE("H5File refuses a stored type other than the requested one", "[datasets]") {
    strata::test::TempDir dir;
    {
        H5File f = H5File::create(dir.file("t.h5"));
        f.write<double>("/node/features", std::vector<double>{1.0, 2.0}, {1, 2});
        f.write<std::int32_t>("/node/labels", std::vector<std::int32_t>{0}, {1});
        f.write<std::uint8_t>("/node/mask", std::vector<std::uint8_t>{0}, {1});
    }
    const H5File f = H5File::open(dir.file("t.h5"));
    REQUIRE_THROWS_WITH(f.read<float>("/node/features"),
                        Contains("t.h5: /node/features: expected float32, found float64"));
    REQUIRE_THROWS_WITH(f.read<std::int64_t>("/node/labels"),
                        Contains("t.h5: /node/labels: expected int64, found int32"));
    REQUIRE_THROWS_WITH(f.read<std::int32_t>("/node/mask"),
                        Contains("/node/mask: expected int32, found uint8"));
    REQUIRE_THROWS_WITH(f.read_rows<float>("/node/features", 0, 1),
                        Contains("expected float32, found float64"));
}

TEST_CASE("H5File reports a wrong rank, a missing dataset and rows out of range", "[datasets]") {
    strata::test::TempDir dir;
    {
        H5File f = H5File::create(dir.file("r.h5"));
        f.write<float>("/m", std::vector<float>(6, 1.0f), {2, 3});
    }
    const H5File f = H5File::open(dir.file("r.h5"));
    REQUIRE_THROWS_WITH(f.read<float>("/m", nullptr, 1),
                        Contains("r.h5: /m: expected rank 1, found rank 2 (shape [2, 3])"));
    REQUIRE_THROWS_WITH(f.read<float>("/nope/x"), Contains("r.h5: /nope/x: dataset not found"));
    REQUIRE_THROWS_WITH(f.shape("/nope"), Contains("r.h5: /nope: dataset not found"));
    REQUIRE_THROWS_WITH(f.read_rows<float>("/m", 1, 2),
                        Contains("r.h5: /m: rows [1, 3) out of range [0, 2)"));
}

TEST_CASE("H5File write refuses a size mismatch and an existing dataset", "[datasets]") {
    strata::test::TempDir dir;
    H5File f = H5File::create(dir.file("w.h5"));
    REQUIRE_THROWS_WITH(f.write<float>("/x", std::vector<float>(5), {2, 3}),
                        Contains("w.h5: /x: shape [2, 3] does not match 5 elements"));
    f.write<float>("/y", std::vector<float>(2), {2});
    REQUIRE_THROWS_WITH(f.write<float>("/y", std::vector<float>(2), {2}),
                        Contains("/y: dataset already exists"));
}

TEST_CASE("H5File::open names the file when it is missing, not HDF5 or truncated", "[datasets]") {
    strata::test::TempDir dir;

    SECTION("missing") {
        REQUIRE_THROWS_WITH(H5File::open(dir.file("none.h5")), Contains("none.h5: no such file"));
    }
    SECTION("a directory") {
        REQUIRE_THROWS_WITH(H5File::open(dir.path.string()), Contains("is a directory"));
    }
    SECTION("not HDF5") {
        const std::string path = dir.write("text.h5", "this is not an HDF5 file\n");
        REQUIRE_THROWS_WITH(H5File::open(path), Contains("text.h5: not an HDF5 file"));
    }
    SECTION("empty") {
        const std::string path = dir.write("empty.h5", "");
        REQUIRE_THROWS_WITH(H5File::open(path), Contains("empty.h5: not an HDF5 file"));
    }
    SECTION("truncated") {
        {
            H5File f = H5File::create(dir.file("full.h5"));
            f.write<float>("/data", std::vector<float>(100000, 1.0f), {100000});
        }
        std::ifstream in(dir.file("full.h5"), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        REQUIRE(bytes.size() > 4096);
        const std::string path = dir.write("cut.h5", bytes.substr(0, 2048));
        REQUIRE_THROWS_WITH(H5File::open(path), Contains("cut.h5"));
    }
}

TEST_CASE("H5File compressed datasets spanning several chunks read back exactly", "[datasets]") {
    // 300001 x 3 float32: 12-byte rows, chunks of 87381 rows => 4 chunks, the last one partial.
    strata::test::TempDir dir;
    std::vector<float> x(300001 * 3);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(i % 1000) * 0.5f - static_cast<float>(i % 7);
    }
    std::vector<std::int64_t> ids(300001);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<std::int64_t>(i * i) - 5;
    }
    {
        H5File f = H5File::create(dir.file("c.h5"));
        f.write<float>("/x", x, {300001, 3}, true);
        f.write<std::int64_t>("/ids", ids, {300001}, true);
    }
    const H5File f = H5File::open(dir.file("c.h5"));

    REQUIRE(f.read<float>("/x") == x);
    REQUIRE(f.read<std::int64_t>("/ids") == ids);
    const std::vector<float> rows = f.read_rows<float>("/x", 87380, 2);  // across a chunk border
    REQUIRE(rows == std::vector<float>(x.begin() + 87380 * 3, x.begin() + 87382 * 3));
}

TEST_CASE("H5File column-blocked datasets read back exactly, whole and by column block",
          "[datasets]") {
    // 70001 x 37 float32 in blocks of 16 columns (16, 16, 5: the last block padded) and 16384
    // rows (1 MiB / 64 bytes: 5 row chunks, the last one partial); and 5 columns (fewer than a
    // block: whole rows).
    strata::test::TempDir dir;
    const std::int64_t n = 70001;
    const std::int64_t w = 37;
    std::vector<float> x(static_cast<std::size_t>(n * w));
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(i % 1013) * 0.25f - static_cast<float>(i % 11);
    }
    const std::vector<float> narrow(x.begin(), x.begin() + 5 * n);
    {
        H5File f = H5File::create(dir.file("b.h5"));
        f.write<float>("/x", x, {n, w}, true, 16);
        f.write<float>("/narrow", narrow, {n, 5}, true, 16);
    }
    const H5File f = H5File::open(dir.file("b.h5"));
    REQUIRE(f.read<float>("/x") == x);
    REQUIRE(f.read<float>("/narrow") == narrow);
    for (const auto& [first, count] :
         {std::pair<std::int64_t, std::int64_t>{0, 13}, {13, 12}, {25, 12}, {30, 7}, {0, 37}}) {
        INFO("columns [" << first << ", " << first + count << ")");
        const std::vector<float> block = f.read_block<float>("/x", {0, first}, {n, count});
        bool same = block.size() == static_cast<std::size_t>(n * count);
        for (std::int64_t r = 0; same && r < n; ++r) {
            for (std::int64_t c = 0; c < count; ++c) {
                same = same && block[static_cast<std::size_t>(r * count + c)] ==
                                   x[static_cast<std::size_t>(r * w + first + c)];
            }
        }
        REQUIRE(same);
    }
    const std::vector<float> rows = f.read_rows<float>("/x", 16383, 2);  // across a chunk border
    REQUIRE(rows == std::vector<float>(x.begin() + 16383 * w, x.begin() + 16385 * w));
}

TEST_CASE("H5File::close reports a write that cannot complete (file size limit), naming the file",
          "[datasets]") {
    strata::test::TempDir dir;
    const std::string path = dir.file("limited.h5");
    // A 64 KiB file-size limit (RLIMIT_FSIZE) with SIGXFSZ ignored: writes past it fail with
    // EFBIG, as on a full disk. Both are restored at scope exit.
    struct Limit {
        rlimit saved{};
        void (*handler)(int) = nullptr;
        Limit() {
            REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
            rlimit small = saved;
            small.rlim_cur = 64 * 1024;
            REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
            handler = std::signal(SIGXFSZ, SIG_IGN);
        }
        Limit(const Limit&) = delete;
        Limit& operator=(const Limit&) = delete;
        ~Limit() {
            setrlimit(RLIMIT_FSIZE, &saved);
            std::signal(SIGXFSZ, handler);
        }
    };
    const std::vector<float> big(1 << 16, 1.0F);  // 256 KiB
    bool threw = false;
    try {
        const Limit limit;
        H5File f = H5File::create(path);
        f.write<float>("/big", big, {static_cast<std::int64_t>(big.size())});
        f.close();
    } catch (const strata::Error& e) {
        threw = true;
        CHECK_THAT(e.message(), Contains(path) && Contains("File too large"));
    }
    CHECK(threw);

    H5File ok = H5File::create(dir.file("fine.h5"));
    ok.write<float>("/small", std::vector<float>(16, 2.0F), {16});
    ok.close();
    ok.close();  // idempotent
    CHECK(H5File::open(dir.file("fine.h5")).read<float>("/small").size() == 16);
}
