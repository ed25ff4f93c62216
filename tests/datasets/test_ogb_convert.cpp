// OGB converter on small gzip fixtures written here: exact CSR (directed, --undirected,
// duplicates, self loops), features, labels with nan/empty = -1, masks; and every kind of bad
// input gives an error naming file:line and leaves no output file.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/graph_io.hpp"
#include "datasets/gzip_lines.hpp"
#include "datasets/ogb_convert.hpp"
#include "src/base/error.hpp"
#include "tests/datasets/graph_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using strata::GraphDataset;
using strata::OgbConversion;
using strata::OgbConvertOptions;
using strata::test::TempDir;

namespace {

/// The text of every file of a small OGB directory, keyed by its path under the root.
/// 6 vertices; edges 0->1, 1->2, 2->1, 3->3 (self loop), 4->0, 0->1 (duplicate).
std::map<std::string, std::string> small_files() {
    return {
        {"raw/num-node-list.csv.gz", "6\n"},
        {"raw/num-edge-list.csv.gz", "6\n"},
        {"raw/edge.csv.gz", "0,1\n1,2\n2,1\n3,3\n4,0\n0,1\n"},
        {"raw/node-feat.csv.gz", "1.5,0,-2\n0,1e1,3\n0.25,0.5,0.75\n-1,-1,-1\n2,4,8\n7,7,7\n"},
        {"raw/node-label.csv.gz", "3\n1.0\nnan\n\n0\nNaN\n"},
        {"split/random/train.csv.gz", "0\n4\n"},
        {"split/random/valid.csv.gz", "1\n"},
        {"split/random/test.csv.gz", "2\n5\n"},
    };
}

void write_files(const TempDir& dir, const std::map<std::string, std::string>& files) {
    for (const auto& [name, text] : files) {
        const fs::path path = dir.path / name;
        fs::create_directories(path.parent_path());
        strata::write_gzip_file(path.string(), text);
    }
}

/// The expected graph apart from its CSR: features, labels, masks of small_files().
GraphDataset expected_nodes() {
    GraphDataset g;
    g.name = "small";
    g.num_classes = 4;
    g.features = strata::HostMatrix(6, 3);
    g.features.values = {1.5f, 0, -2, 0, 10, 3, 0.25f, 0.5f, 0.75f, -1, -1, -1, 2, 4, 8, 7, 7, 7};
    g.labels = {3, 1, -1, -1, 0, -1};
    g.train_mask = {1, 0, 0, 0, 1, 0};
    g.val_mask = {0, 1, 0, 0, 0, 0};
    g.test_mask = {0, 0, 1, 0, 0, 1};
    return g;
}

/// What `strata convert --from ogb` does: convert, then write atomically.
void convert_to(const TempDir& in, const std::string& out, const OgbConvertOptions& options = {}) {
    const OgbConversion c = strata::convert_ogb(in.path.string(), options);
    strata::write_graph(c.graph, out);
}

std::string read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST_CASE("convert_ogb builds the CSR by destination, drops duplicates, keeps self loops",
          "[datasets]") {
    TempDir in;
    TempDir out;
    write_files(in, small_files());

    const OgbConversion c = strata::convert_ogb(in.path.string(), {.name = "small"});
    convert_to(in, out.file("g.h5"), {.name = "small"});
    const GraphDataset written = strata::read_graph(out.file("g.h5"));

    GraphDataset expected = expected_nodes();
    // Row v lists the sources u of u -> v: row 0 {4}, row 1 {0, 2}, row 2 {1}, row 3 {3}.
    expected.indptr = {0, 1, 3, 4, 5, 5, 5};
    expected.indices = {4, 0, 2, 1, 3};
    std::string why;
    const bool same_converted = strata::test::same_graph(c.graph, expected, &why);
    INFO("first difference: " << why);
    REQUIRE(same_converted);
    const bool same_written = strata::test::same_graph(written, expected, &why);
    INFO("first difference after write and read: " << why);
    REQUIRE(same_written);
    REQUIRE(c.summary.num_vertices == 6);
    REQUIRE(c.summary.edges_read == 6);
    REQUIRE(c.summary.self_loops_read == 1);
    REQUIRE(c.summary.reverse_edges_added == 0);
    REQUIRE(c.summary.duplicates_dropped == 1);
    REQUIRE(c.summary.num_edges == 5);
    REQUIRE(c.summary.num_features == 3);
    REQUIRE(c.summary.num_classes == 4);
    REQUIRE(c.summary.labeled_vertices == 3);
    REQUIRE(c.summary.split == "random");
    REQUIRE(c.summary.train == 2);
    REQUIRE(c.summary.valid == 1);
    REQUIRE(c.summary.test == 2);
}

TEST_CASE("convert_ogb --undirected adds reverses, except of self loops, and dedups them",
          "[datasets]") {
    TempDir in;
    TempDir out;
    write_files(in, small_files());

    convert_to(in, out.file("g.h5"), {.name = "small", .undirected = true});
    const OgbConversion c =
        strata::convert_ogb(in.path.string(), {.name = "small", .undirected = true});
    const GraphDataset written = strata::read_graph(out.file("g.h5"));

    GraphDataset expected = expected_nodes();
    // Adds 1->0, 2->1, 1->2, 0->4, 1->0: row 0 {1, 4}, row 1 {0, 2}, row 2 {1}, row 3 {3},
    // row 4 {0}; 11 entries, of which 4 repeat one already there.
    expected.indptr = {0, 2, 4, 5, 6, 7, 7};
    expected.indices = {1, 4, 0, 2, 1, 3, 0};
    std::string why;
    const bool same = strata::test::same_graph(written, expected, &why);
    INFO("first difference: " << why);
    REQUIRE(same);
    REQUIRE(c.summary.edges_read == 6);
    REQUIRE(c.summary.reverse_edges_added == 5);
    REQUIRE(c.summary.duplicates_dropped == 4);
    REQUIRE(c.summary.num_edges == 7);
}

TEST_CASE("convert_ogb reads lines across chunk boundaries and files without a last newline",
          "[datasets]") {
    // 300k edges i -> (i+1) mod N are ~3.5 MB of text: several 1 MiB chunks of the reader.
    const std::int64_t n = 1000;
    const std::int64_t m = 300000;
    std::string edges;
    for (std::int64_t i = 0; i < m; ++i) {
        edges += std::to_string(i % n) + "," + std::to_string((i + 1) % n) + "\n";
    }
    edges.pop_back();  // no newline after the last line
    std::string features;
    std::string labels;
    for (std::int64_t v = 0; v < n; ++v) {
        features += std::to_string(v) + ".5\r\n";  // Windows line ends are accepted too
        labels += std::to_string(v % 7) + "\n";
    }
    TempDir in;
    auto files = small_files();
    files["raw/num-node-list.csv.gz"] = std::to_string(n) + "\n";
    files["raw/num-edge-list.csv.gz"] = std::to_string(m) + "\n";
    files["raw/edge.csv.gz"] = edges;
    files["raw/node-feat.csv.gz"] = features;
    files["raw/node-label.csv.gz"] = labels;
    write_files(in, files);

    const OgbConversion c = strata::convert_ogb(in.path.string(), {});

    // Each edge i -> i+1 is listed 300 times: one survives per row.
    REQUIRE(c.summary.edges_read == m);
    REQUIRE(c.summary.duplicates_dropped == m - n);
    REQUIRE(c.graph.num_edges() == n);
    REQUIRE(c.graph.indices[0] == n - 1);
    REQUIRE(c.graph.indices[500] == 499);
    REQUIRE(c.graph.features.values[999] == 999.5f);
    REQUIRE(c.graph.num_classes == 7);
    REQUIRE(c.graph.name == in.path.filename().string());  // default: the directory's name
}

TEST_CASE("convert_ogb takes the only split, or the one named, and refuses to guess",
          "[datasets]") {
    TempDir in;
    auto files = small_files();
    files["split/other/train.csv.gz"] = "1\n2\n3\n";
    files["split/other/valid.csv.gz"] = "";
    files["split/other/test.csv.gz"] = "0\n";
    write_files(in, files);

    const OgbConversion c = strata::convert_ogb(in.path.string(), {.split = "other"});

    REQUIRE(c.summary.split == "other");
    REQUIRE(c.graph.train_mask == std::vector<std::uint8_t>{0, 1, 1, 1, 0, 0});
    REQUIRE(c.graph.val_mask == std::vector<std::uint8_t>(6, 0));
    REQUIRE_THROWS_WITH(strata::convert_ogb(in.path.string(), {}),
                        Contains("split: holds several splits (other, random); choose one with "
                                 "--split"));
    REQUIRE_THROWS_WITH(strata::convert_ogb(in.path.string(), {.split = "time"}),
                        Contains("split/time: no such split directory"));
}

TEST_CASE("convert_ogb rejects bad text with file:line and the field, writing nothing",
          "[datasets]") {
    auto files = small_files();
    std::string expected;
    SECTION("a non-numeric edge id") {
        files["raw/edge.csv.gz"] = "0,1\n1,2\n2,1\nx,3\n4,0\n0,1\n";
        expected = "raw/edge.csv.gz:4: field 1 (src) 'x' is not an integer";
    }
    SECTION("an edge id out of range") {
        files["raw/edge.csv.gz"] = "0,1\n1,6\n2,1\n3,3\n4,0\n0,1\n";
        expected = "raw/edge.csv.gz:2: field 2 (dst): vertex id 6 out of range [0, 6)";
    }
    SECTION("a negative edge id") {
        files["raw/edge.csv.gz"] = "0,1\n1,2\n2,1\n3,3\n-4,0\n0,1\n";
        expected = "raw/edge.csv.gz:5: field 1 (src): vertex id -4 out of range [0, 6)";
    }
    SECTION("an edge line with three fields") {
        files["raw/edge.csv.gz"] = "0,1\n1,2,0.5\n2,1\n3,3\n4,0\n0,1\n";
        expected = "raw/edge.csv.gz:2: expected 2 fields (src,dst), found 3";
    }
    SECTION("more edge lines than num-edge-list says") {
        files["raw/num-edge-list.csv.gz"] = "5\n";
        expected =
            "raw/edge.csv.gz:6: more edge lines than the 5 that raw/num-edge-list.csv.gz "
            "says";
    }
    SECTION("fewer edge lines than num-edge-list says") {
        files["raw/num-edge-list.csv.gz"] = "7\n";
        expected = "raw/edge.csv.gz: has 6 edge lines, but raw/num-edge-list.csv.gz says 7";
    }
    SECTION("a ragged feature row") {
        files["raw/node-feat.csv.gz"] = "1.5,0,-2\n0,1e1,3\n0.25,0.5\n-1,-1,-1\n2,4,8\n7,7,7\n";
        expected = "raw/node-feat.csv.gz:3: expected 3 values (as on line 1), found 2";
    }
    SECTION("a non-numeric feature") {
        files["raw/node-feat.csv.gz"] = "1.5,0,-2\n0,abc,3\n0.25,0.5,1\n-1,-1,-1\n2,4,8\n7,7,7\n";
        expected = "raw/node-feat.csv.gz:2: field 2 (feature) 'abc' is not a number";
    }
    SECTION("a non-finite feature") {
        files["raw/node-feat.csv.gz"] = "1.5,0,-2\n0,1,3\n0.25,0.5,1\n-1,-1,inf\n2,4,8\n7,7,7\n";
        expected = "raw/node-feat.csv.gz:4: field 3 (feature) 'inf' is not finite";
    }
    SECTION("too few feature rows") {
        files["raw/node-feat.csv.gz"] = "1,2\n3,4\n5,6\n7,8\n9,10\n";
        expected =
            "raw/node-feat.csv.gz: has 5 feature rows, but raw/num-node-list.csv.gz says "
            "N = 6";
    }
    SECTION("too many feature rows") {
        files["raw/node-feat.csv.gz"] = "1\n2\n3\n4\n5\n6\n7\n";
        expected = "raw/node-feat.csv.gz:7: more than N = 6 feature rows";
    }
    SECTION("a vertex count beyond the machine's memory") {
        files["raw/num-node-list.csv.gz"] = "2000000000\n";
        setenv("STRATA_MEMORY_LIMIT_BYTES", "1000000000", 1);  // unset after the conversion
        expected =
            "raw/num-node-list.csv.gz: N = 2000000000 vertices need 38.0 GB, more than "
            "STRATA_MEMORY_LIMIT_BYTES (1.0 GB)";
    }
    SECTION("a non-numeric label") {
        files["raw/node-label.csv.gz"] = "3\ncat\nnan\n\n0\nNaN\n";
        expected = "raw/node-label.csv.gz:2: field 1 (class id) 'cat' is not a number";
    }
    SECTION("a fractional label") {
        files["raw/node-label.csv.gz"] = "3\n1.0\n2.5\n\n0\nNaN\n";
        expected = "raw/node-label.csv.gz:3: field 1 (class id) '2.5' is not a class id";
    }
    SECTION("a missing label line") {
        files["raw/node-label.csv.gz"] = "3\n1\n2\n0\n0\n";
        expected = "raw/node-label.csv.gz: has 5 labels, but raw/num-node-list.csv.gz says N = 6";
    }
    SECTION("a split id out of range") {
        files["split/random/test.csv.gz"] = "2\n9\n";
        expected =
            "split/random/test.csv.gz:2: field 1 (vertex id): vertex id 9 out of range "
            "[0, 6)";
    }
    SECTION("a duplicate split id") {
        files["split/random/train.csv.gz"] = "0\n4\n0\n";
        expected = "split/random/train.csv.gz:3: field 1 (vertex id): duplicate id 0";
    }
    SECTION("a vertex count that is not a number") {
        files["raw/num-node-list.csv.gz"] = "six\n";
        expected =
            "raw/num-node-list.csv.gz:1: field 1 (number of vertices) 'six' is not an "
            "integer";
    }
    SECTION("several graphs") {
        files["raw/num-node-list.csv.gz"] = "6\n4\n";
        expected = "raw/num-node-list.csv.gz:2: a second line (a second graph)";
    }
    SECTION("a missing feature file") {
        files.erase("raw/node-feat.csv.gz");
        expected = "raw/node-feat.csv.gz: missing (one row per vertex)";
    }
    TempDir in;
    TempDir out;
    write_files(in, files);

    CHECK_THROWS_WITH(convert_to(in, out.file("g.h5")), Contains(expected));
    unsetenv("STRATA_MEMORY_LIMIT_BYTES");
    REQUIRE(fs::is_empty(out.path));  // no g.h5, no temporary left behind
}

TEST_CASE("convert_ogb rejects corrupt, truncated and non-gzip files, writing nothing",
          "[datasets]") {
    // 20k lines so that the damage sits well inside the compressed stream.
    std::string edges;
    for (int i = 0; i < 20000; ++i) {
        edges += std::to_string(i % 6) + "," + std::to_string((i * 7 + 1) % 6) + "\n";
    }
    auto files = small_files();
    files["raw/edge.csv.gz"] = edges;
    files["raw/num-edge-list.csv.gz"] = "20000\n";
    TempDir in;
    TempDir out;
    write_files(in, files);
    const fs::path edge_file = in.path / "raw/edge.csv.gz";
    std::string bytes = read_bytes(edge_file);
    REQUIRE(bytes.size() > 200);
    std::string expected;
    std::string or_expected;  // zlib cannot always tell damage from a cut

    SECTION("a flipped byte in the compressed data") {
        bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
        expected = ": gzip data is corrupt (";
        or_expected = ": gzip data ends unexpectedly (truncated or corrupt file)";
    }
    SECTION("a file cut in the middle") {
        bytes.resize(bytes.size() / 2);
        expected = ": gzip data ends unexpectedly (truncated or corrupt file)";
    }
    SECTION("a wrong checksum in the trailer") {
        bytes[bytes.size() - 6] = static_cast<char>(bytes[bytes.size() - 6] ^ 0x01);
        // zlib rejects the whole chunk read with the bad trailer: the first line not returned.
        expected = "raw/edge.csv.gz:1: gzip data is corrupt (incorrect data check)";
    }
    SECTION("plain text instead of gzip") {
        bytes = edges;
        expected = "raw/edge.csv.gz: not gzip data (expected a .gz file)";
    }
    write_bytes(edge_file, bytes);
    if (or_expected.empty()) {
        or_expected = expected;
    }

    REQUIRE_THROWS_WITH(
        convert_to(in, out.file("g.h5")),
        Contains("raw/edge.csv.gz") && (Contains(expected) || Contains(or_expected)));

    REQUIRE(fs::is_empty(out.path));
}

TEST_CASE("GzipLineReader names the line where the gzip data stops", "[datasets]") {
    TempDir dir;
    std::string text;
    for (int i = 1; i <= 50000; ++i) {
        text += "line " + std::to_string(i) + "\n";
    }
    strata::write_gzip_file(dir.file("t.gz"), text);
    std::string bytes = read_bytes(dir.file("t.gz"));
    bytes.resize(bytes.size() - 8);  // drop the trailer only: all data lines are intact
    write_bytes(dir.file("t.gz"), bytes);
    strata::GzipLineReader in(dir.file("t.gz"));
    std::string_view line;
    std::int64_t count = 0;

    REQUIRE_THROWS_WITH(
        [&] {
            while (in.next(line)) {
                ++count;
            }
        }(),
        Contains("t.gz:50001: gzip data ends unexpectedly"));

    REQUIRE(count == 50000);
    REQUIRE(line == "line 50000");
}
