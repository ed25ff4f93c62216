// The content id of graph format 3: stored by write_graph, equal for two identical conversions or
// generations, different when any array, num_classes or the name changes, independent of how the
// bytes reach the hash; verified by read_graph; absent (read as "") in version 1 and 2 files.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/content_hash.hpp"
#include "datasets/generate.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/h5_file.hpp"
#include "datasets/text_convert.hpp"
#include "src/base/error.hpp"
#include "tests/datasets/graph_fixtures.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using strata::GraphDataset;
using strata::test::same_graph;
using strata::test::TempDir;
using strata::test::tiny_graph;

TEST_CASE("write_graph stores the content id; read_graph_content_id reads it alone",
          "[datasets][content_id]") {
    TempDir dir;
    const GraphDataset g = tiny_graph();
    strata::write_graph(g, dir.file("g.h5"));
    const std::string id = strata::read_graph_content_id(dir.file("g.h5"));
    CHECK_THAT(id, StartsWith("content64:"));
    CHECK(id.size() == std::string("content64:").size() + 16);
    CHECK(id == strata::graph_content_id(g));
    CHECK(strata::H5File::open(dir.file("g.h5")).read_string_attribute("/", "content_id") == id);
    CHECK_NOTHROW(strata::read_graph(dir.file("g.h5")));
}

TEST_CASE("two identical generations agree; another seed or any changed field differs",
          "[datasets][content_id]") {
    TempDir dir;
    const strata::GenerateOptions options{
        .num_vertices = 200, .avg_degree = 5, .num_features = 8, .num_classes = 3, .seed = 11};
    strata::write_graph(strata::generate_graph(options), dir.file("a.h5"));
    strata::write_graph(strata::generate_graph(options), dir.file("b.h5"));
    const std::string a = strata::read_graph_content_id(dir.file("a.h5"));
    CHECK(a == strata::read_graph_content_id(dir.file("b.h5")));

    strata::GenerateOptions other = options;
    other.seed = 12;
    CHECK(strata::graph_content_id(strata::generate_graph(other)) != a);

    // Any one change: an edge, a weight, a feature, a label, a mask entry, C, S, the name.
    const GraphDataset g = tiny_graph();
    const std::string base = strata::graph_content_id(g);
    std::vector<GraphDataset> changed(9, g);
    changed[0].indices[0] = (changed[0].indices[0] + 1) % 4;
    changed[1].edge_weight[2] += 0.5F;
    changed[2].edge_weight.clear();
    changed[3].features.values[5] = -changed[3].features.values[5] + 1.0F;
    changed[4].labels[1] = changed[4].labels[1] == 0 ? 1 : 0;
    changed[5].val_mask[3] = changed[5].val_mask[3] == 0 ? 1 : 0;
    changed[6].num_classes += 1;
    changed[7].name = "tiny-2";
    changed[8].num_splits = 2;
    for (auto* mask : {&changed[8].train_mask, &changed[8].val_mask, &changed[8].test_mask}) {
        mask->insert(mask->end(), mask->begin(), mask->end());
    }
    for (std::size_t i = 0; i < changed.size(); ++i) {
        INFO("change " << i);
        CHECK(strata::graph_content_id(changed[i]) != base);
    }
}

TEST_CASE("two conversions of Cora's text files give one content id", "[datasets][content_id]") {
    TempDir dir;
    const std::string cora = std::string(STRATA_DATA_DIR) + "/cora";
    strata::write_graph(strata::convert_text(cora, {.name = "cora"}), dir.file("a.h5"));
    strata::write_graph(strata::convert_text(cora, {.name = "cora"}), dir.file("b.h5"));
    const std::string a = strata::read_graph_content_id(dir.file("a.h5"));
    CHECK(a == strata::read_graph_content_id(dir.file("b.h5")));
    // The committed data/cora.h5 is that conversion (data/README.md).
    CHECK(a == strata::read_graph_content_id(std::string(STRATA_DATA_DIR) + "/cora.h5"));
}

TEST_CASE("the content hash depends on the bytes, not on how they are split",
          "[datasets][content_id]") {
    std::vector<std::byte> bytes(61);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<std::byte>(i * 37 + 5);
    }
    strata::ContentHash whole;
    whole.add(bytes);
    for (const std::size_t cut : std::vector<std::size_t>{1, 3, 7, 8, 9, 17, 60}) {
        strata::ContentHash split;
        split.add(std::span<const std::byte>(bytes).first(cut));
        split.add(std::span<const std::byte>(bytes).subspan(cut));
        CHECK(split.id() == whole.id());
    }
    // Trailing zero bytes count (the total length is hashed).
    strata::ContentHash longer;
    longer.add(bytes);
    longer.add(std::vector<std::byte>(1));
    CHECK(longer.id() != whole.id());
    CHECK(strata::ContentHash().id() != whole.id());
}

TEST_CASE("version 1 and 2 files have no content id and still read", "[datasets][content_id]") {
    TempDir dir;
    const GraphDataset g = tiny_graph();
    strata::test::write_raw_graph(g, dir.file("v1.h5"));
    CHECK(strata::read_graph_content_id(dir.file("v1.h5")).empty());
    CHECK_NOTHROW(strata::read_graph(dir.file("v1.h5")));
    GraphDataset two = g;
    strata::test::write_raw_graph(two, dir.file("v2.h5"),
                                  {.skip = "strata_format_version", .extra = [](strata::H5File& f) {
                                       f.write_attribute("/", "strata_format_version",
                                                         std::int64_t{2});
                                   }});
    // Version 2's masks are [S, N]: written [N] above, so only the id is asked here.
    CHECK(strata::read_graph_content_id(dir.file("v2.h5")).empty());
}

/// A version 3 file written array by array (no validation) with `content_id` ("" = none).
void write_version3(const GraphDataset& g, const std::string& path, const std::string& content_id) {
    strata::H5File f = strata::H5File::create(path);
    f.write_attribute("/", "strata_format", std::string("graph"));
    f.write_attribute("/", "strata_format_version", std::int64_t{3});
    f.write_attribute("/", "name", g.name);
    f.write_attribute("/", "num_classes", g.num_classes);
    if (!content_id.empty()) {
        f.write_attribute("/", "content_id", content_id);
    }
    const std::int64_t n = g.num_vertices();
    f.write<std::int64_t>("/graph/indptr", g.indptr, {n + 1});
    f.write<std::int64_t>("/graph/indices", g.indices, {g.num_edges()});
    if (!g.edge_weight.empty()) {
        f.write<float>("/graph/edge_weight", g.edge_weight, {g.num_edges()});
    }
    f.write<float>("/node/features", g.features.values, {n, g.features.cols});
    f.write<std::int64_t>("/node/labels", g.labels, {n});
    f.write<std::uint8_t>("/node/train_mask", g.train_mask, {g.num_splits, n});
    f.write<std::uint8_t>("/node/val_mask", g.val_mask, {g.num_splits, n});
    f.write<std::uint8_t>("/node/test_mask", g.test_mask, {g.num_splits, n});
    f.close();
}

TEST_CASE("a version 3 file without its content id, or with a stale one, is refused",
          "[datasets][content_id]") {
    TempDir dir;
    const GraphDataset g = tiny_graph();
    write_version3(g, dir.file("ok.h5"), strata::graph_content_id(g));
    CHECK(same_graph(strata::read_graph(dir.file("ok.h5")), g));

    write_version3(g, dir.file("none.h5"), "");
    const char* missing =
        "none.h5: /: missing attribute 'content_id' (required from format "
        "version 3)";
    CHECK_THROWS_WITH(strata::read_graph(dir.file("none.h5")), Contains(missing));
    CHECK_THROWS_WITH(strata::read_graph_content_id(dir.file("none.h5")), Contains(missing));

    // The data changed after the id was computed (an edit outside strata).
    GraphDataset edited = g;
    edited.labels[0] = edited.labels[0] == 0 ? 1 : 0;
    write_version3(edited, dir.file("stale.h5"), strata::graph_content_id(g));
    CHECK_THROWS_WITH(strata::read_graph(dir.file("stale.h5")),
                      Contains("stale.h5: /: content_id " + strata::graph_content_id(g) +
                               " does not match the data (" + strata::graph_content_id(edited) +
                               "): the file was changed after strata wrote it"));
}
