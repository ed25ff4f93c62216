// .npy parsing (hand-built headers), the graph format's splits (version 1 = one split, version 2
// = [S, N]) and the Geom-GCN split files of data/cora. The numpy-made .npz fixtures of both
// converter layouts are tested end to end in tests/apps/check_npz_and_splits.py.
#include <filesystem>
#include <numeric>

#include <catch2/catch.hpp>

#include "datasets/geom_gcn_splits.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/npz_file.hpp"
#include "tests/datasets/graph_fixtures.hpp"
#include "tests/datasets/npy_bytes.hpp"

using Catch::Matchers::Contains;
using strata::GraphDataset;
using strata::NpyArray;
using strata::parse_npy;
using strata::test::bytes_of;
using strata::test::npy;
using strata::test::TempDir;
using strata::test::tiny_graph;

namespace {

std::string cora_path() {
    return std::string(STRATA_DATA_DIR) + "/cora.h5";
}

std::string geom_dir() {
    return std::string(STRATA_DATA_DIR) + "/cora/geom_gcn_splits";
}

}  // namespace

TEST_CASE("parse_npy reads the supported dtypes and shapes", "[datasets][npz]") {
    const NpyArray i8 =
        parse_npy(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }",
                      bytes_of(std::vector<std::int64_t>{0, -1, 2, 3, 4, 5000000000})),
                  "x.npz: a");
    REQUIRE(i8.shape == std::vector<std::int64_t>{2, 3});
    REQUIRE(i8.to_int64() == std::vector<std::int64_t>{0, -1, 2, 3, 4, 5000000000});

    const NpyArray f8 = parse_npy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                                      bytes_of(std::vector<double>{0.5, -2.25})),
                                  "x.npz: b");
    REQUIRE(f8.to_float() == std::vector<float>{0.5f, -2.25f});

    const NpyArray b1 = parse_npy(
        npy("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", {1, 0, 0, 1}), "x.npz: c");
    REQUIRE(b1.to_mask() == std::vector<std::uint8_t>{1, 0, 0, 1});
    REQUIRE_THROWS_WITH(b1.to_float(), Contains("x.npz: c: dtype |b1 is not a float type"));

    const NpyArray i4 = parse_npy(npy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
                                      bytes_of(std::vector<std::int32_t>{1, 0, 2})),
                                  "x.npz: d");
    REQUIRE_THROWS_WITH(i4.to_mask(), Contains("x.npz: d: value 2 at index 2 is not 0 or 1"));
    const NpyArray scalar = parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                                          bytes_of(std::vector<float>{1.0f})),
                                      "x.npz: e");
    REQUIRE(scalar.shape.empty());
    REQUIRE(scalar.size() == 1);
}

TEST_CASE("parse_npy refuses what it does not support, in one line", "[datasets][npz]") {
    const auto data = bytes_of(std::vector<std::int64_t>{1, 2});
    REQUIRE_THROWS_WITH(
        parse_npy(npy("{'descr': '>i8', 'fortran_order': False, 'shape': (2,), }", data),
                  "x.npz: a"),
        Contains("x.npz: a: unsupported dtype '>i8'"));
    REQUIRE_THROWS_WITH(
        parse_npy(npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", data),
                  "x.npz: a"),
        Contains("unsupported dtype '|O'"));
    REQUIRE_THROWS_WITH(
        parse_npy(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", data),
                  "x.npz: a"),
        Contains("x.npz: a: has 16 data bytes, expected 24 for shape [3] of <i8"));
    std::vector<unsigned char> bad_magic =
        npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", data);
    bad_magic[1] = 'X';
    REQUIRE_THROWS_WITH(parse_npy(bad_magic, "x.npz: a"), Contains("not a .npy array"));
    REQUIRE_THROWS_WITH(
        parse_npy(npy("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", data),
                  "x.npz: a"),
        Contains("structured dtypes are not supported"));
    // Found by fuzz_npy (UBSan: the element count overflowed int64).
    REQUIRE_THROWS_WITH(
        parse_npy(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (261473708302151184, "
                      "92020), }",
                      data),
                  "x.npz: a"),
        Contains("x.npz: a: shape [261473708302151184, 92020] has too many elements"));
}

TEST_CASE("NpzFile names a missing file and a non-zip file", "[datasets][npz]") {
    TempDir dir;
    REQUIRE_THROWS_WITH(strata::NpzFile(dir.file("none.npz")),
                        Contains("none.npz: cannot read as .npz"));
    dir.write("text.npz", "hello, this is text\n");
    REQUIRE_THROWS_WITH(strata::NpzFile(dir.file("text.npz")),
                        Contains("text.npz: cannot read as .npz: Not a zip archive"));
}

TEST_CASE("graph format 2 stores S splits; a version-1 file reads as one split",
          "[datasets][npz]") {
    TempDir dir;
    GraphDataset g = tiny_graph();
    strata::test::write_raw_graph(g, dir.file("v1.h5"));  // version 1, masks [N]
    const GraphDataset v1 = strata::read_graph(dir.file("v1.h5"));
    REQUIRE(v1.num_splits == 1);
    REQUIRE(v1.train_mask == g.train_mask);

    g.num_splits = 2;
    g.train_mask = {1, 0, 0, 0, 0, 0, 1, 0};
    g.val_mask = {0, 1, 0, 0, 1, 0, 0, 0};
    g.test_mask = {0, 0, 1, 1, 0, 1, 0, 1};
    strata::write_graph(g, dir.file("v2.h5"));
    const GraphDataset v2 = strata::read_graph(dir.file("v2.h5"));
    REQUIRE(v2.num_splits == 2);
    REQUIRE(v2.train_mask == g.train_mask);
    REQUIRE(v2.test_mask == g.test_mask);
    REQUIRE(std::vector<std::uint8_t>(v2.split_of(v2.val_mask, 1).begin(),
                                      v2.split_of(v2.val_mask, 1).end()) ==
            std::vector<std::uint8_t>{1, 0, 0, 0});
    const strata::H5File file = strata::H5File::open(dir.file("v2.h5"));
    REQUIRE(file.read_int_attribute("/", "strata_format_version") == 3);
    REQUIRE(file.shape("/node/test_mask") == strata::H5Shape{2, 4});

    GraphDataset bad = g;
    bad.val_mask.resize(4);
    REQUIRE_THROWS_WITH(strata::write_graph(bad, dir.file("bad.h5")),
                        Contains("/node/val_mask: has 4 elements, expected 8 (S x N)"));
}

TEST_CASE("a version-2 file with one-dimensional masks is refused", "[datasets][npz]") {
    TempDir dir;
    const GraphDataset g = tiny_graph();
    strata::test::write_raw_graph(
        g, dir.file("bad.h5"), {.skip = "strata_format_version", .extra = [&](strata::H5File& f) {
                                    f.write_attribute("/", "strata_format_version",
                                                      std::int64_t{2});
                                }});
    // Version 2 with [N] masks: rank 1 where 2 is expected.
    REQUIRE_THROWS_WITH(strata::read_graph(dir.file("bad.h5")), Contains("/node/train_mask"));
}

TEST_CASE("Geom-GCN splits of Cora: 10 splits ordered by number, sizes as published",
          "[datasets][npz][cora]") {
    GraphDataset g = strata::read_graph(cora_path());
    strata::apply_geom_gcn_splits(g, geom_dir());
    REQUIRE(g.num_splits == 10);
    REQUIRE(g.train_mask.size() == 10u * 2708u);
    for (int s = 0; s < 10; ++s) {
        const auto count = [&](const std::vector<std::uint8_t>& m) {
            const auto part = g.split_of(m, s);
            return std::accumulate(part.begin(), part.end(), 0);
        };
        INFO("split " << s);
        CHECK(count(g.train_mask) == 1192);
        CHECK(count(g.val_mask) == 796);
        CHECK(count(g.test_mask) == 497);
    }
    // The splits differ from one another.
    REQUIRE_FALSE(
        std::equal(g.train_mask.begin(), g.train_mask.begin() + 2708, g.train_mask.begin() + 2708));
}

TEST_CASE("Geom-GCN splits: bad directories are named", "[datasets][npz]") {
    TempDir dir;
    GraphDataset g = strata::read_graph(cora_path());
    REQUIRE_THROWS_WITH(strata::apply_geom_gcn_splits(g, dir.file("none")),
                        Contains("none: not a directory"));
    REQUIRE_THROWS_WITH(strata::apply_geom_gcn_splits(g, dir.path.string()),
                        Contains("no split files"));
    std::filesystem::copy_file(geom_dir() + "/cora_split_0.6_0.2_0.npz",
                               dir.file("cora_split_0.6_0.2_0.npz"));
    std::filesystem::copy_file(geom_dir() + "/cora_split_0.6_0.2_0.npz", dir.file("extra.npz"));
    REQUIRE_THROWS_WITH(strata::apply_geom_gcn_splits(g, dir.path.string()),
                        Contains("extra.npz: cannot tell the split number"));
    std::filesystem::remove(dir.file("extra.npz"));
    std::filesystem::copy_file(geom_dir() + "/cora_split_0.6_0.2_1.npz",
                               dir.file("other_split_00.npz"));
    REQUIRE_THROWS_WITH(strata::apply_geom_gcn_splits(g, dir.path.string()),
                        Contains("split 0 is also"));
    GraphDataset small = tiny_graph();
    std::filesystem::remove(dir.file("other_split_00.npz"));
    REQUIRE_THROWS_WITH(strata::apply_geom_gcn_splits(small, dir.path.string()),
                        Contains("train_mask: has 2708 entries, but the graph has N = 4"));
    REQUIRE(small.num_splits == 1);  // unchanged on error
}
