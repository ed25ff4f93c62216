// Graph format v1: write/read round trips, atomic output, and every validation failure named.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include <catch2/catch.hpp>

#include "datasets/content_hash.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/h5_file.hpp"
#include "src/base/error.hpp"
#include "tests/datasets/graph_fixtures.hpp"

using Catch::Matchers::Contains;
using strata::GraphDataset;
using strata::test::same_graph;
using strata::test::tiny_graph;

TEST_CASE("write_graph then read_graph returns the same dataset", "[datasets]") {
    strata::test::TempDir dir;
    for (bool weighted : {true, false}) {
        const GraphDataset g = tiny_graph(weighted);
        const std::string path = dir.file(weighted ? "w.h5" : "u.h5");

        strata::write_graph(g, path);
        const GraphDataset back = strata::read_graph(path);

        std::string why;
        const bool same = same_graph(g, back, &why);
        INFO("weighted " << weighted << ", differs in " << why);
        REQUIRE(same);
        REQUIRE(back.num_vertices() == 4);
        REQUIRE(back.num_edges() == 5);
        REQUIRE(back.edge_weight.size() == (weighted ? 5u : 0u));
    }
}

TEST_CASE("write_graph stores the documented layout and attributes", "[datasets]") {
    strata::test::TempDir dir;
    strata::write_graph(tiny_graph(), dir.file("g.h5"));

    const strata::H5File f = strata::H5File::open(dir.file("g.h5"));

    REQUIRE(f.read_string_attribute("/", "strata_format") == "graph");
    REQUIRE(f.read_int_attribute("/", "strata_format_version") == 3);
    REQUIRE(f.read_string_attribute("/", "content_id") == strata::graph_content_id(tiny_graph()));
    REQUIRE(f.read_string_attribute("/", "name") == "tiny");
    REQUIRE(f.read_int_attribute("/", "num_classes") == 3);
    REQUIRE(f.shape("/graph/indptr") == strata::H5Shape{5});
    REQUIRE(f.shape("/graph/indices") == strata::H5Shape{5});
    REQUIRE(f.shape("/graph/edge_weight") == strata::H5Shape{5});
    REQUIRE(f.shape("/node/features") == strata::H5Shape{4, 3});
    REQUIRE(f.shape("/node/labels") == strata::H5Shape{4});
    for (const char* p : {"/node/train_mask", "/node/val_mask", "/node/test_mask"}) {
        REQUIRE(f.shape(p) == strata::H5Shape{1, 4});  // [S, N], one split
    }
}

TEST_CASE("write_graph refuses to replace a file unless asked and leaves no temporary",
          "[datasets]") {
    strata::test::TempDir dir;
    const std::string path = dir.file("g.h5");
    strata::write_graph(tiny_graph(), path);

    REQUIRE_THROWS_WITH(strata::write_graph(tiny_graph(false), path),
                        Contains("output already exists"));
    REQUIRE(strata::read_graph(path).edge_weight.size() == 5);  // untouched
    strata::write_graph(tiny_graph(false), path, true);
    REQUIRE(strata::read_graph(path).edge_weight.empty());

    GraphDataset bad = tiny_graph();
    bad.labels[0] = 7;
    REQUIRE_THROWS_WITH(strata::write_graph(bad, dir.file("bad.h5")),
                        Catch::Contains("label 7 at index 0 out of range [-1, "));
    REQUIRE_FALSE(std::filesystem::exists(dir.file("bad.h5")));
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path)) {
        ++entries;
    }
    REQUIRE(entries == 1);  // only g.h5: no temporary left behind
}

TEST_CASE("validate_graph names the first bad value of every invariant", "[datasets]") {
    GraphDataset g = tiny_graph();
    const float nan = std::numeric_limits<float>::quiet_NaN();

    SECTION("the valid graph passes") {
        REQUIRE_NOTHROW(strata::validate_graph(g, "x.h5"));
    }
    SECTION("num_classes < 1") {
        g.num_classes = 0;
        g.labels = {-1, -1, -1, -1};
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("x.h5: /: num_classes must be >= 1, found 0"));
    }
    SECTION("indptr empty") {
        g.indptr.clear();
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("x.h5: /graph/indptr: is empty"));
    }
    SECTION("indptr does not start at 0") {
        g.indptr[0] = 1;
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("x.h5: /graph/indptr: must start at 0, found 1"));
    }
    SECTION("indptr not monotone") {
        g.indptr = {0, 3, 2, 4, 5};
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("x.h5: /graph/indptr: not monotone at index 2 (3 > 2)"));
    }
    SECTION("indptr does not end at E") {
        g.indptr.back() = 4;
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("/graph/indptr: ends at 4, expected E = 5"));
    }
    SECTION("index out of range") {
        g.indices[3] = 4;
        REQUIRE_THROWS_WITH(
            strata::validate_graph(g, "x.h5"),
            Contains("x.h5: /graph/indices: vertex id 4 at index 3 out of range [0, 4)"));
    }
    SECTION("negative index") {
        g.indices[0] = -1;
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("vertex id -1 at index 0 out of range"));
    }
    SECTION("edge weight of the wrong length") {
        g.edge_weight.pop_back();
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("/graph/edge_weight: has 4 elements, expected 5 (E)"));
    }
    SECTION("non-finite edge weight") {
        g.edge_weight[2] = std::numeric_limits<float>::infinity();
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("/graph/edge_weight: non-finite value inf at index 2"));
    }
    SECTION("features with the wrong row count") {
        g.features = strata::HostMatrix(3, 3);
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("/node/features: has 3 rows, expected N = 4"));
    }
    SECTION("features whose storage does not match the shape") {
        g.features.values.pop_back();
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("/node/features: has 11 elements, expected 12 (N x F)"));
    }
    SECTION("NaN feature") {
        g.features.at(2, 1) = nan;
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("x.h5: /node/features: non-finite value nan at [2, 1]"));
    }
    SECTION("labels of the wrong length") {
        g.labels.push_back(0);
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("/node/labels: has 5 elements, expected 4 (N)"));
    }
    SECTION("label >= num_classes") {
        g.labels[3] = 3;
        REQUIRE_THROWS_WITH(
            strata::validate_graph(g, "x.h5"),
            Contains("x.h5: /node/labels: label 3 at index 3 out of range [-1, 3)"));
    }
    SECTION("label < -1") {
        g.labels[1] = -2;
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("label -2 at index 1 out of range [-1, 3)"));
    }
    SECTION("mask value other than 0/1") {
        g.val_mask[2] = 2;
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("x.h5: /node/val_mask: value 2 at index 2 is not 0 or 1"));
    }
    SECTION("mask of the wrong length") {
        g.test_mask.resize(3);
        REQUIRE_THROWS_WITH(strata::validate_graph(g, "x.h5"),
                            Contains("/node/test_mask: has 3 elements, expected 4 (N)"));
    }
}

TEST_CASE("read_graph refuses files that break the format, naming file and path", "[datasets]") {
    strata::test::TempDir dir;
    const std::string path = dir.file("bad.h5");
    const GraphDataset g = tiny_graph();
    using strata::H5File;
    using strata::test::RawGraphEdit;
    using strata::test::write_raw_graph;

    SECTION("a raw file written part by part is read back") {
        write_raw_graph(g, path);
        REQUIRE(same_graph(strata::read_graph(path), g));
    }
    SECTION("missing strata_format") {
        write_raw_graph(g, path, {.skip = "strata_format"});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /: missing attribute 'strata_format'"));
    }
    SECTION("another format") {
        write_raw_graph(g, path, {.skip = "strata_format", .extra = [](H5File& f) {
                                      f.write_attribute("/", "strata_format",
                                                        std::string("partition"));
                                  }});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /: strata_format is 'partition', expected 'graph'"));
    }
    SECTION("another version") {
        write_raw_graph(g, path, {.skip = "strata_format_version", .extra = [](H5File& f) {
                                      f.write_attribute("/", "strata_format_version",
                                                        std::int64_t{4});
                                  }});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /: strata_format_version 4 is not supported "
                                     "(this build reads versions 1 to 3)"));
    }
    SECTION("missing name") {
        write_raw_graph(g, path, {.skip = "name"});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /: missing attribute 'name'"));
    }
    SECTION("missing num_classes") {
        write_raw_graph(g, path, {.skip = "num_classes"});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /: missing attribute 'num_classes'"));
    }
    SECTION("missing dataset") {
        write_raw_graph(g, path, {.skip = "/node/labels"});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /node/labels: dataset not found"));
    }
    SECTION("wrong dtype") {
        write_raw_graph(g, path, {.skip = "/node/features", .extra = [&](H5File& f) {
                                      std::vector<double> x(g.features.values.begin(),
                                                            g.features.values.end());
                                      f.write<double>("/node/features", x, {4, 3});
                                  }});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /node/features: expected float32, found float64"));
    }
    SECTION("wrong rank") {
        write_raw_graph(g, path, {.skip = "/graph/indices", .extra = [&](H5File& f) {
                                      f.write<std::int64_t>("/graph/indices", g.indices, {5, 1});
                                  }});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /graph/indices: expected rank 1, found rank 2"));
    }
    SECTION("wrong shape") {
        write_raw_graph(
            g, path,
            {.skip = "/node/train_mask", .extra = [](H5File& f) {
                 f.write<std::uint8_t>("/node/train_mask", std::vector<std::uint8_t>{1, 0}, {2});
             }});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /node/train_mask: has 2 elements, expected 4 (N)"));
    }
    SECTION("edge weights of the wrong length") {
        write_raw_graph(g, path, {.skip = "/graph/edge_weight", .extra = [](H5File& f) {
                                      f.write<float>("/graph/edge_weight", std::vector<float>{1.0f},
                                                     {1});
                                  }});
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /graph/edge_weight: has 1 elements, expected 5"));
    }
    SECTION("a bad value found by validation names the file") {
        GraphDataset bad = g;
        bad.indptr = {0, 2, 1, 4, 5};
        write_raw_graph(bad, path);
        REQUIRE_THROWS_WITH(strata::read_graph(path),
                            Contains("bad.h5: /graph/indptr: not monotone at index 2 (2 > 1)"));
    }
}

TEST_CASE("write_graph gives byte-identical files for the same data", "[datasets]") {
    strata::test::TempDir dir;
    const auto bytes = [](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };

    strata::write_graph(tiny_graph(), dir.file("a.h5"));
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a time stamp would differ
    strata::write_graph(tiny_graph(), dir.file("b.h5"));

    REQUIRE(bytes(dir.file("a.h5")).size() > 1000);
    REQUIRE(bytes(dir.file("a.h5")) == bytes(dir.file("b.h5")));
}
