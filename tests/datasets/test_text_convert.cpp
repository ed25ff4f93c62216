// Text converter on small files written here (exact CSR, errors with file:line), and Cora:
// text conversion == Planetoid pickle conversion == the committed data/cora.h5.
#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>

#include "datasets/graph_io.hpp"
#include "datasets/planetoid_convert.hpp"
#include "datasets/text_convert.hpp"
#include "src/base/error.hpp"
#include "tests/datasets/graph_fixtures.hpp"

using Catch::Matchers::Contains;
using strata::GraphDataset;
using strata::TextConvertOptions;
using strata::test::TempDir;

namespace {

/// 4 vertices; edges with a comment, a blank line, a duplicate and a self loop.
void write_small(const TempDir& dir) {
    dir.write("edges.txt", "# u v\n1 0\n2 0\n\n0 1\n1 0\n3 3\n2 3\n");
    dir.write("features.mtx",
              "%%MatrixMarket matrix coordinate real general\n% comment\n4 3 4\n"
              "1 1 1.5\n2 3 -2\n4 2 0.25\n3 1 1e1\n");
    dir.write("labels.txt", "0\n1\n-1\n2\n");
    dir.write("train.txt", "0\n");
    dir.write("val.txt", "1\n");
    dir.write("test.txt", "2\n3\n");
}

std::string cora_dir() {
    return std::string(STRATA_DATA_DIR) + "/cora";
}

}  // namespace

TEST_CASE("convert_text builds the CSR by destination, drops duplicates, keeps self loops",
          "[datasets]") {
    TempDir dir;
    write_small(dir);

    const GraphDataset g = strata::convert_text(dir.path.string(), {.name = "small"});

    REQUIRE(g.name == "small");
    REQUIRE(g.num_classes == 3);
    // Row v lists the sources u of edges u -> v: row 0 {1, 2}, row 1 {0}, row 3 {2, 3}.
    REQUIRE(g.indptr == std::vector<std::int64_t>{0, 2, 3, 3, 5});
    REQUIRE(g.indices == std::vector<std::int64_t>{1, 2, 0, 2, 3});
    REQUIRE(g.edge_weight.empty());
    REQUIRE(g.features.rows == 4);
    REQUIRE(g.features.cols == 3);
    REQUIRE(g.features.values ==
            std::vector<float>{1.5f, 0, 0, 0, 0, -2.0f, 10.0f, 0, 0, 0, 0.25f, 0});
    REQUIRE(g.labels == std::vector<std::int64_t>{0, 1, -1, 2});
    REQUIRE(g.train_mask == std::vector<std::uint8_t>{1, 0, 0, 0});
    REQUIRE(g.val_mask == std::vector<std::uint8_t>{0, 1, 0, 0});
    REQUIRE(g.test_mask == std::vector<std::uint8_t>{0, 0, 1, 1});
}

TEST_CASE("convert_text --undirected adds reverses; explicit lines keep their weight",
          "[datasets]") {
    TempDir dir;
    dir.write("edges.txt", "0 1 2.5\n1 0 4\n1 2 0.5\n");
    dir.write("features.txt", "1 2\n3 4\n5 6\n");
    dir.write("labels.txt", "0\n0\n1\n");

    const GraphDataset g =
        strata::convert_text(dir.path.string(), {.name = "w", .undirected = true});

    // Row 0: 1 -> 0 (listed, 4); row 1: 0 -> 1 (2.5), 2 -> 1 (reverse, 0.5); row 2: 1 -> 2.
    REQUIRE(g.indptr == std::vector<std::int64_t>{0, 1, 3, 4});
    REQUIRE(g.indices == std::vector<std::int64_t>{1, 0, 2, 1});
    REQUIRE(g.edge_weight == std::vector<float>{4.0f, 2.5f, 0.5f, 0.5f});
    REQUIRE(g.features.values == std::vector<float>{1, 2, 3, 4, 5, 6});
    REQUIRE(g.num_classes == 2);
    REQUIRE(g.train_mask == std::vector<std::uint8_t>{0, 0, 0});  // no train.txt: empty split
}

TEST_CASE("convert_text errors name file:line and the offending field", "[datasets]") {
    TempDir dir;
    write_small(dir);
    const std::string d = dir.path.string();
    const auto convert = [&] { return strata::convert_text(d, {.name = "x"}); };

    SECTION("an edge field that is not an integer") {
        dir.write("edges.txt", "0 1\n1 x2\n");
        REQUIRE_THROWS_WITH(convert(), Contains("edges.txt:2: field 2 (v) 'x2' is not an integer"));
    }
    SECTION("a vertex id out of range") {
        dir.write("edges.txt", "0 1\n\n1 4\n");
        REQUIRE_THROWS_WITH(convert(),
                            Contains("edges.txt:3: field 2: vertex id 4 out of range [0, 4)"));
    }
    SECTION("a class id too large for the output columns (the fuzzer's overflow)") {
        dir.write("labels.txt", "0\n9223372036854775807\n1\n0\n");
        REQUIRE_THROWS_WITH(convert(), Contains("labels.txt:2: field 1: class id "
                                                "9223372036854775807 is too large"));
    }
    SECTION("a line with another number of fields") {
        dir.write("edges.txt", "0 1 1.0\n1 2\n");
        REQUIRE_THROWS_WITH(convert(), Contains("edges.txt:2: expected 3 fields"));
    }
    SECTION("a non-finite weight") {
        dir.write("edges.txt", "0 1 nan\n");
        REQUIRE_THROWS_WITH(convert(), Contains("edges.txt:1: field 3 (weight) 'nan'"));
    }
    SECTION("a MatrixMarket file without its header") {
        dir.write("features.mtx", "4 3 0\n");
        REQUIRE_THROWS_WITH(convert(), Contains("features.mtx:1: expected header"));
    }
    SECTION("a MatrixMarket symmetric matrix") {
        dir.write("features.mtx", "%%MatrixMarket matrix coordinate real symmetric\n4 3 0\n");
        REQUIRE_THROWS_WITH(convert(), Contains("features.mtx:1: field 5: symmetry 'symmetric'"));
    }
    SECTION("a MatrixMarket row count other than N") {
        dir.write("features.mtx", "%%MatrixMarket matrix coordinate real general\n5 3 0\n");
        REQUIRE_THROWS_WITH(
            convert(), Contains("features.mtx:2: field 1: 5 rows, but labels.txt defines N = 4"));
    }
    SECTION("a MatrixMarket size beyond the machine's memory") {
        // Found by fuzz_text (an out-of-memory at 3 x 1467211594): refused before allocating.
        dir.write("features.mtx",
                  "%%MatrixMarket matrix coordinate real general\n4 1467211594 1\n1 1 1\n");
        setenv("STRATA_MEMORY_LIMIT_BYTES", "100000000", 1);
        CHECK_THROWS_WITH(convert(),
                          Contains("features.mtx:2: 4 x 1467211594 dense features need 24.2 GB, "
                                   "more than STRATA_MEMORY_LIMIT_BYTES (100.0 MB)"));
        unsetenv("STRATA_MEMORY_LIMIT_BYTES");
    }
    SECTION("a 0-based MatrixMarket entry") {
        dir.write("features.mtx", "%%MatrixMarket matrix coordinate real general\n4 3 1\n0 1 1\n");
        REQUIRE_THROWS_WITH(convert(),
                            Contains("features.mtx:3: field 1: row 0 out of range [1, 4]"));
    }
    SECTION("a duplicate MatrixMarket entry") {
        dir.write("features.mtx",
                  "%%MatrixMarket matrix coordinate real general\n4 3 2\n1 1 1\n1 1 2\n");
        REQUIRE_THROWS_WITH(convert(), Contains("features.mtx:4: duplicate entry (1, 1)"));
    }
    SECTION("fewer MatrixMarket entries than announced") {
        dir.write("features.mtx", "%%MatrixMarket matrix coordinate real general\n4 3 2\n1 1 1\n");
        REQUIRE_THROWS_WITH(convert(), Contains("features.mtx: the size line announces 2 entries, "
                                                "found 1"));
    }
    SECTION("dense features with a ragged row") {
        std::filesystem::remove(dir.file("features.mtx"));
        dir.write("features.txt", "1 2\n3 4\n5\n7 8\n");
        REQUIRE_THROWS_WITH(convert(),
                            Contains("features.txt:3: expected 2 values (as on the first row)"));
    }
    SECTION("both feature files") {
        dir.write("features.txt", "1\n2\n3\n4\n");
        REQUIRE_THROWS_WITH(convert(), Contains("both features.mtx and features.txt exist"));
    }
    SECTION("a label below -1") {
        dir.write("labels.txt", "0\n-3\n1\n1\n");
        REQUIRE_THROWS_WITH(convert(), Contains("labels.txt:2: field 1: class id -3 is negative"));
    }
    SECTION("a label line with two fields") {
        dir.write("labels.txt", "0\n1 2\n1\n1\n");
        REQUIRE_THROWS_WITH(convert(), Contains("labels.txt:2: expected 1 field (one class id)"));
    }
    SECTION("a missing labels file") {
        std::filesystem::remove(dir.file("labels.txt"));
        REQUIRE_THROWS_WITH(convert(), Contains("labels.txt: missing"));
    }
    SECTION("a duplicate id in a split") {
        dir.write("test.txt", "2\n3\n2\n");
        REQUIRE_THROWS_WITH(convert(), Contains("test.txt:3: field 1: duplicate id 2"));
    }
    SECTION("a split id out of range") {
        dir.write("val.txt", "9\n");
        REQUIRE_THROWS_WITH(convert(),
                            Contains("val.txt:1: field 1: vertex id 9 out of range [0, 4)"));
    }
}

TEST_CASE("Cora converted from text has the published sizes and split", "[datasets][cora]") {
    const GraphDataset g = strata::convert_text(cora_dir(), {.name = "cora"});

    REQUIRE(g.num_vertices() == 2708);
    REQUIRE(g.num_edges() == 10556);
    REQUIRE(g.num_features() == 1433);
    REQUIRE(g.num_classes == 7);
    const auto count = [](const std::vector<std::uint8_t>& m) {
        return std::count(m.begin(), m.end(), std::uint8_t{1});
    };
    REQUIRE(count(g.train_mask) == 140);
    REQUIRE(count(g.val_mask) == 500);
    REQUIRE(count(g.test_mask) == 1000);
    std::vector<std::int64_t> per_class(7, 0);
    for (auto l : g.labels) {
        ++per_class[static_cast<std::size_t>(l)];
    }
    REQUIRE(per_class == std::vector<std::int64_t>{351, 217, 418, 818, 426, 298, 180});
}

TEST_CASE("Cora from the Planetoid pickles equals Cora from text, element by element",
          "[datasets][cora]") {
    TempDir dir;
    const std::string out = dir.file("cora_planetoid.h5");

    strata::convert_planetoid(cora_dir() + "/raw", "cora", out);
    const GraphDataset from_pickles = strata::read_graph(out);
    const GraphDataset from_text = strata::convert_text(cora_dir(), {.name = "cora"});

    std::string why;
    const bool same = strata::test::same_graph(from_pickles, from_text, &why);
    INFO("first difference: " << why);
    REQUIRE(same);
    // Written in the current format by strata (not the script): the two converters' files
    // carry one content id, that of data/cora.h5.
    REQUIRE(strata::read_graph_content_id(out) ==
            strata::read_graph_content_id(std::string(STRATA_DATA_DIR) + "/cora.h5"));
}

TEST_CASE("the committed data/cora.h5 equals a fresh text conversion", "[datasets][cora]") {
    const GraphDataset committed = strata::read_graph(std::string(STRATA_DATA_DIR) + "/cora.h5");
    const GraphDataset fresh = strata::convert_text(cora_dir(), {.name = "cora"});

    std::string why;
    const bool same = strata::test::same_graph(committed, fresh, &why);
    INFO("first difference: " << why);
    REQUIRE(same);
}

TEST_CASE("convert_planetoid reports a missing pickle in one line", "[datasets]") {
    TempDir dir;
    dir.write("ind.cora.x", "");

    REQUIRE_THROWS_WITH(strata::convert_planetoid(dir.path.string(), "cora", dir.file("o.h5")),
                        Contains("Planetoid conversion failed"));
    REQUIRE_FALSE(std::filesystem::exists(dir.file("o.h5")));
}

TEST_CASE("convert_planetoid names a missing Python interpreter", "[datasets]") {
    struct PythonOverride {  // restored even when an assertion fails
        PythonOverride() { setenv("STRATA_PYTHON", "/nonexistent/python3", 1); }
        ~PythonOverride() { unsetenv("STRATA_PYTHON"); }
    } override_python;
    TempDir dir;

    REQUIRE_THROWS_WITH(strata::convert_planetoid(cora_dir() + "/raw", "cora", dir.file("o.h5")),
                        Contains("/nonexistent/python3: Python interpreter not found"));
    REQUIRE_FALSE(std::filesystem::exists(dir.file("o.h5")));
}

TEST_CASE("find_planetoid_script finds the script of this source tree", "[datasets]") {
    const std::string script = strata::find_planetoid_script();

    REQUIRE(script.size() > 18);
    REQUIRE(script.substr(script.size() - 18) == "planetoid_to_h5.py");
    REQUIRE(std::filesystem::is_regular_file(script));
}
