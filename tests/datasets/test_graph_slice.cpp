// read_graph_slice: the P slices of a file concatenate to read_graph's dataset (Cora and a
// directed, weighted graph with duplicates, self loops and 3 splits; P = 1..5, by rows and by rows
// + edges), each rank reads about its share of the bytes, and a bad row names file, path and value.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/graph_io.hpp"
#include "datasets/graph_slice_io.hpp"
#include "datasets/h5_file.hpp"
#include "src/base/error.hpp"
#include "tests/datasets/graph_fixtures.hpp"
#include "tests/support/graphs.hpp"

using Catch::Matchers::Contains;
using strata::global_id;
using strata::GraphDataset;
using strata::GraphSlice;

namespace {

const std::string cora_path = std::string(STRATA_DATA_DIR) + "/cora.h5";

/// The shared weighted directed fixture (self loops, duplicates, rows without in-edges) with
/// three splits.
GraphDataset directed_weighted_graph() {
    GraphDataset d = strata::test::weighted_directed_graph(3000, 5, /*dyadic=*/false);
    d.num_splits = 3;
    const std::size_t n = static_cast<std::size_t>(d.num_vertices());
    d.train_mask.assign(3 * n, 0);
    d.val_mask.assign(3 * n, 0);
    d.test_mask.assign(3 * n, 0);
    for (std::size_t s = 0; s < 3; ++s) {
        for (std::size_t v = 0; v < n; ++v) {
            const std::size_t which = (v + s) % 3;
            (which == 0 ? d.train_mask : which == 1 ? d.val_mask : d.test_mask)[s * n + v] = 1;
        }
    }
    return d;
}

/// The slices of a P-way split concatenated into one dataset (indptr rebased, masks re-split).
GraphDataset concatenate(const std::vector<GraphSlice>& slices) {
    GraphDataset g;
    g.name = slices.front().name;
    g.num_classes = slices.front().num_classes;
    g.num_splits = slices.front().num_splits;
    g.features.cols = slices.front().features.cols;
    const auto n = static_cast<std::size_t>(slices.front().num_vertices);
    g.train_mask.assign(n * static_cast<std::size_t>(g.num_splits), 0);
    g.val_mask = g.train_mask;
    g.test_mask = g.train_mask;
    for (const GraphSlice& s : slices) {
        const std::int64_t base = g.indptr.back();
        for (std::size_t i = 1; i < s.indptr.size(); ++i) {
            g.indptr.push_back(base + s.indptr[i]);
        }
        g.indices.insert(g.indices.end(), s.indices.begin(), s.indices.end());
        g.edge_weight.insert(g.edge_weight.end(), s.edge_weight.begin(), s.edge_weight.end());
        g.features.values.insert(g.features.values.end(), s.features.values.begin(),
                                 s.features.values.end());
        g.features.rows += s.features.rows;
        g.labels.insert(g.labels.end(), s.labels.begin(), s.labels.end());
        const auto local = static_cast<std::size_t>(s.num_local());
        const auto first = static_cast<std::size_t>(s.first());
        for (std::size_t split = 0; split < static_cast<std::size_t>(s.num_splits); ++split) {
            for (std::size_t i = 0; i < local; ++i) {
                g.train_mask[split * n + first + i] = s.train_mask[split * local + i];
                g.val_mask[split * n + first + i] = s.val_mask[split * local + i];
                g.test_mask[split * n + first + i] = s.test_mask[split * local + i];
            }
        }
    }
    return g;
}

void require_equal(const GraphDataset& a, const GraphDataset& b) {
    REQUIRE(a.name == b.name);
    REQUIRE(a.num_classes == b.num_classes);
    REQUIRE(a.indptr == b.indptr);
    REQUIRE(a.indices == b.indices);
    REQUIRE(a.edge_weight == b.edge_weight);
    REQUIRE(a.features.rows == b.features.rows);
    REQUIRE(a.features.cols == b.features.cols);
    REQUIRE(a.features.values == b.features.values);
    REQUIRE(a.labels == b.labels);
    REQUIRE(a.num_splits == b.num_splits);
    REQUIRE(a.train_mask == b.train_mask);
    REQUIRE(a.val_mask == b.val_mask);
    REQUIRE(a.test_mask == b.test_mask);
}

void check_slices_concatenate(const std::string& path) {
    const GraphDataset whole = strata::read_graph(path);
    for (int p = 1; p <= 5; ++p) {
        for (const bool by_edges : {false, true}) {
            INFO("P = " << p << (by_edges ? ", by rows + edges" : ", by rows"));
            const std::vector<global_id> offsets =
                by_edges ? strata::slice_offsets(path, p)
                         : strata::slice_offsets(whole.num_vertices(), p);
            REQUIRE(offsets.size() == static_cast<std::size_t>(p) + 1);
            std::vector<GraphSlice> slices;
            std::vector<GraphSlice> cut;  // slice_of on the dataset in memory
            for (int r = 0; r < p; ++r) {
                cut.push_back(strata::slice_of(whole, offsets, r));
                slices.push_back(strata::read_graph_slice(path, offsets, r));
                REQUIRE(slices.back().num_vertices == whole.num_vertices());
                REQUIRE(slices.back().num_edges == whole.num_edges());
                REQUIRE(slices.back().first() == offsets[static_cast<std::size_t>(r)]);
            }
            require_equal(concatenate(slices), whole);
            require_equal(concatenate(cut), whole);
        }
    }
}

}  // namespace

TEST_CASE("slice_offsets by rows split N into P near-equal ranges", "[datasets][slice]") {
    REQUIRE(strata::slice_offsets(10, 3) == std::vector<global_id>{0, 3, 6, 10});
    REQUIRE(strata::slice_offsets(2, 4) == std::vector<global_id>{0, 0, 1, 1, 2});
    REQUIRE(strata::slice_offsets(0, 2) == std::vector<global_id>{0, 0, 0});
    const global_id big = global_id{1} << 40;  // no overflow in r * N / P
    REQUIRE(strata::slice_offsets(big, 7)[7] == big);
    REQUIRE_THROWS_WITH(strata::slice_offsets(10, 0), Contains("at least one slice, got 0"));
}

TEST_CASE("slice_offsets by rows + edges balances the stored edges", "[datasets][slice]") {
    strata::test::TempDir dir;
    GraphDataset g = strata::test::tiny_graph();
    // Vertex 0 has 40 in-edges, the others 1 each: by rows + edges, slice 0 is vertex 0 alone.
    g.indptr = {0, 40, 41, 42, 43};
    g.indices.assign(43, 1);
    g.edge_weight.clear();
    const std::string path = dir.file("skewed.h5");
    strata::write_graph(g, path);
    REQUIRE(strata::slice_offsets(path, 2) == std::vector<global_id>{0, 1, 4});
    REQUIRE(strata::slice_offsets(4, 2) == std::vector<global_id>{0, 2, 4});
}

TEST_CASE("read_graph_slice: P slices of Cora concatenate to read_graph, P = 1..5",
          "[datasets][slice]") {
    check_slices_concatenate(cora_path);
}

TEST_CASE("read_graph_slice: P slices of a directed weighted graph with 3 splits, P = 1..5",
          "[datasets][slice]") {
    strata::test::TempDir dir;
    const std::string path = dir.file("directed.h5");
    strata::write_graph(directed_weighted_graph(), path);
    check_slices_concatenate(path);
}

TEST_CASE("read_graph_slice reads about its share of the file's bytes", "[datasets][slice]") {
    strata::test::TempDir dir;
    const std::string path = dir.file("directed.h5");
    const GraphDataset g = directed_weighted_graph();
    strata::write_graph(g, path);
    // Array bytes of the whole file: indptr, indices, weights, features, labels, 3 masks x S.
    const auto n = g.num_vertices();
    const auto e = g.num_edges();
    const std::int64_t whole = 8 * (n + 1) + 8 * e + 4 * e + 4 * n * g.features.cols + 8 * n +
                               3 * static_cast<std::int64_t>(g.num_splits) * n;
    for (const int p : {1, 4}) {
        const std::vector<global_id> offsets = strata::slice_offsets(path, p);
        std::int64_t total = 0;
        for (int r = 0; r < p; ++r) {
            std::int64_t bytes = 0;
            const GraphSlice s = strata::read_graph_slice(path, offsets, r, {.bytes_read = &bytes});
            const std::int64_t local_e = s.indptr.back();
            const std::int64_t share = 8 * (s.num_local() + 1) + 12 * local_e +
                                       (4 * g.features.cols + 8 + 3 * g.num_splits) * s.num_local();
            INFO("P = " << p << ", rank " << r << ": " << bytes << " bytes, share " << share
                        << ", whole " << whole);
            REQUIRE(bytes == share);
            if (p > 1) {
                REQUIRE(bytes < whole / p * 3 / 2);  // about 1/P, never the whole file
            }
            total += bytes;
        }
        REQUIRE(total == whole + 8 * (p - 1));  // the boundary indptr entries are read twice
    }
    std::int64_t adjacency_only = 0;
    const GraphSlice s =
        strata::read_graph_slice(path, strata::slice_offsets(n, 2), 0,
                                 {.vertex_data = false, .bytes_read = &adjacency_only});
    REQUIRE(adjacency_only == 8 * (s.num_local() + 1) + 12 * s.indptr.back());
    REQUIRE(s.features.values.empty());
    REQUIRE(s.features.cols == g.features.cols);
}

TEST_CASE("read_graph_slice names the file, the dataset and the bad value", "[datasets][slice]") {
    strata::test::TempDir dir;
    const std::string path = dir.file("bad.h5");
    GraphDataset g = strata::test::tiny_graph();
    strata::write_graph(g, path);
    const std::vector<global_id> halves{0, 2, 4};
    REQUIRE_THROWS_WITH(strata::read_graph_slice(path, halves, 2),
                        Contains("bad.h5: slice 2 of 2 slices does not exist"));
    REQUIRE_THROWS_WITH(strata::read_graph_slice(path, {0, 3, 2, 4}, 0),
                        Contains("bad.h5: slice offsets must rise from 0 to N = 4"));
    REQUIRE_THROWS_WITH(strata::read_graph_slice(dir.file("missing.h5"), halves, 0),
                        Contains("missing.h5: no such file"));

    // A raw file with a bad id in slice 1's edges and a bad mask value in slice 0's rows.
    const std::string raw = dir.file("raw.h5");
    {
        strata::H5File f = strata::H5File::create(raw);
        f.write_attribute("/", "strata_format", std::string("graph"));
        f.write_attribute("/", "strata_format_version", std::int64_t{2});
        f.write_attribute("/", "name", std::string("raw"));
        f.write_attribute("/", "num_classes", std::int64_t{3});
        f.write<std::int64_t>("/graph/indptr", g.indptr, {5});
        std::vector<std::int64_t> indices = g.indices;
        indices[3] = 9;
        f.write<std::int64_t>("/graph/indices", indices, {5});
        f.write<float>("/node/features", g.features.values, {4, 3});
        f.write<std::int64_t>("/node/labels", g.labels, {4});
        std::vector<std::uint8_t> train = g.train_mask;
        train[1] = 7;
        f.write<std::uint8_t>("/node/train_mask", train, {1, 4});
        f.write<std::uint8_t>("/node/val_mask", g.val_mask, {1, 4});
        f.write<std::uint8_t>("/node/test_mask", g.test_mask, {1, 4});
        f.close();
    }
    REQUIRE_THROWS_WITH(strata::read_graph_slice(raw, halves, 1),
                        Contains("raw.h5: /graph/indices: vertex id 9 at index 3 out of range "
                                 "[0, 4)"));
    REQUIRE_THROWS_WITH(strata::read_graph_slice(raw, halves, 0),
                        Contains("raw.h5: /node/train_mask: value 7 at index 1 is not 0 or 1"));
    // The same messages as read_graph's.
    REQUIRE_THROWS_WITH(strata::read_graph(raw),
                        Contains("raw.h5: /graph/indices: vertex id 9 at index 3 out of range "
                                 "[0, 4)"));
}
