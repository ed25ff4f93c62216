// .npy members in either order: parse_npy gives the same C-order array for C- and Fortran-order
// payloads (every dtype, ranks 0 to 4), and convert_npz builds the same graph from C-order and
// Fortran-order archives, stored or deflated. The archives are committed fixtures made with numpy
// by tests/datasets/npz/make_fixtures.py (that file says which dtypes each one holds).
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/npz_convert.hpp"
#include "datasets/npz_file.hpp"
#include "tests/datasets/graph_fixtures.hpp"
#include "tests/datasets/npy_bytes.hpp"

using Catch::Matchers::Contains;
using strata::NpyArray;
using strata::parse_npy;

namespace {

/// A .npy of `descr`, `order` ("True", "False") and `shape` ("(2, 3)") holding `payload` as it
/// is.
std::vector<unsigned char> npy(const std::string& descr, const std::string& order,
                               const std::string& shape,
                               const std::vector<unsigned char>& payload) {
    return strata::test::npy(
        "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }",
        payload);
}

/// "(2, 3)", "(4,)", "()": the header's tuple.
std::string tuple(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t d = 0; d < shape.size(); ++d) {
        s += (d > 0 ? ", " : "") + std::to_string(shape[d]);
    }
    return s + (shape.size() == 1 ? ",)" : ")");
}

/// The C-order elements `c` (of `item` bytes each) laid out in Fortran order: Fortran position
/// f has the multi-index whose first component varies fastest.
std::vector<unsigned char> fortran_bytes(const std::vector<unsigned char>& c,
                                         const std::vector<std::int64_t>& shape, std::size_t item) {
    std::vector<unsigned char> f(c.size());
    const std::size_t count = c.size() / item;
    for (std::size_t at = 0; at < count; ++at) {
        std::size_t rest = at;
        std::size_t c_position = 0;
        std::vector<std::size_t> index(shape.size());
        for (std::size_t d = 0; d < shape.size(); ++d) {
            index[d] = rest % static_cast<std::size_t>(shape[d]);
            rest /= static_cast<std::size_t>(shape[d]);
        }
        for (std::size_t d = 0; d < shape.size(); ++d) {
            c_position = c_position * static_cast<std::size_t>(shape[d]) + index[d];
        }
        std::memcpy(f.data() + at * item, c.data() + c_position * item, item);
    }
    return f;
}

/// Distinct C-order values 0, 1, 2, ... (0/1 alternating for |b1) of one dtype, as bytes.
std::vector<unsigned char> c_values(const std::string& descr, std::size_t count,
                                    std::size_t& item) {
    std::vector<unsigned char> out;
    const auto append = [&](const auto value) {
        item = sizeof(value);
        const auto* p = reinterpret_cast<const unsigned char*>(&value);
        out.insert(out.end(), p, p + sizeof(value));
    };
    for (std::size_t i = 0; i < count; ++i) {
        if (descr == "<f4") {
            append(static_cast<float>(i) * 0.25f - 1.0f);
        } else if (descr == "<f8") {
            append(static_cast<double>(i) * 0.5 - 3.0);
        } else if (descr == "<i4") {
            append(static_cast<std::int32_t>(i) - 5);
        } else if (descr == "<i8") {
            append(static_cast<std::int64_t>(i) * 5000000000);
        } else if (descr == "|u1") {
            append(static_cast<std::uint8_t>(i * 7));
        } else {
            append(static_cast<std::uint8_t>(i % 3 == 0 ? 1 : 0));
        }
    }
    item = count == 0 ? 1 : item;
    return out;
}

std::string fixture(const std::string& name) {
    return std::string(STRATA_NPZ_FIXTURES) + "/" + name;
}

/// Converts every fixture of `layout` under one name (the name would otherwise be the stem).
std::vector<strata::GraphDataset> convert_all(const std::string& layout) {
    std::vector<strata::GraphDataset> graphs;
    for (const char* file : {"c_stored", "c_deflated", "f_stored", "f_deflated"}) {
        graphs.push_back(
            strata::convert_npz(fixture(layout + "_" + file + ".npz"), {.name = "g"}).graph);
    }
    return graphs;
}

void require_all_same(const std::vector<strata::GraphDataset>& graphs) {
    for (std::size_t k = 1; k < graphs.size(); ++k) {
        std::string why;
        const bool same = strata::test::same_graph(graphs[0], graphs[k], &why);
        INFO("fixture " << k << " differs from the first (C order, stored) in " << why);
        REQUIRE(same);
        REQUIRE(graphs[k].num_splits == graphs[0].num_splits);
    }
}

}  // namespace

TEST_CASE("parse_npy: a Fortran-order payload reads as the same C-order array, every dtype",
          "[datasets][npz]") {
    const std::vector<std::vector<std::int64_t>> shapes = {
        {}, {5}, {2, 3}, {3, 2}, {2, 3, 4}, {1, 3, 1, 2}, {2, 1, 3, 2}, {0, 3}};
    for (const std::string descr : {"<f4", "<f8", "<i4", "<i8", "|b1", "|u1"}) {
        for (const std::vector<std::int64_t>& shape : shapes) {
            INFO(descr << " shape " << tuple(shape));
            std::size_t count = 1;
            for (const std::int64_t d : shape) {
                count *= static_cast<std::size_t>(d);
            }
            std::size_t item = 1;
            const std::vector<unsigned char> c = c_values(descr, count, item);
            const NpyArray from_c = parse_npy(npy(descr, "False", tuple(shape), c), "x.npz: c");
            const NpyArray from_f = parse_npy(
                npy(descr, "True", tuple(shape), fortran_bytes(c, shape, item)), "x.npz: f");
            REQUIRE(from_c.bytes == c);
            REQUIRE(from_f.bytes == c);
            REQUIRE(from_f.shape == shape);
        }
    }
}

TEST_CASE("parse_npy: a 2 x 3 Fortran-order array, by hand; fortran_order must be a bool",
          "[datasets][npz]") {
    // [[1, 2, 3], [4, 5, 6]] in Fortran order: column by column.
    const std::vector<std::int32_t> columns = {1, 4, 2, 5, 3, 6};
    std::vector<unsigned char> payload(columns.size() * 4);
    std::memcpy(payload.data(), columns.data(), payload.size());
    const NpyArray a = parse_npy(npy("<i4", "True", "(2, 3)", payload), "x.npz: a");
    REQUIRE(a.to_int64() == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
    REQUIRE_THROWS_WITH(parse_npy(npy("<i4", "Maybe", "(2, 3)", payload), "x.npz: a"),
                        Contains("x.npz: a: .npy header: 'fortran_order' is neither True nor "
                                 "False"));
}

TEST_CASE("convert_npz: heterophilous-graphs in C and Fortran order, stored and deflated",
          "[datasets][npz]") {
    const std::vector<strata::GraphDataset> graphs = convert_all("het");
    require_all_same(graphs);
    const strata::GraphDataset& g = graphs[0];
    // edges 0->1, 1->0, 2->3, 3->4, 2->3 (dropped), 5->5, 4->2; rows are destinations.
    REQUIRE(g.indptr == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
    REQUIRE(g.indices == std::vector<std::int64_t>{1, 0, 4, 2, 3, 5});
    REQUIRE(g.features.rows == 6);
    REQUIRE(g.features.cols == 3);
    for (std::size_t i = 0; i < 18; ++i) {
        REQUIRE(g.features.values[i] == static_cast<float>(i) / 4.0f);
    }
    REQUIRE(g.labels == std::vector<std::int64_t>{0, 1, 2, 1, -1, 0});
    REQUIRE(g.num_splits == 2);
    REQUIRE(g.train_mask == std::vector<std::uint8_t>{1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0});
    REQUIRE(g.val_mask == std::vector<std::uint8_t>{0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0});
    REQUIRE(g.test_mask == std::vector<std::uint8_t>{0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1});
}

TEST_CASE("convert_npz: gnn-benchmark in C and Fortran order, stored and deflated",
          "[datasets][npz]") {
    const std::vector<strata::GraphDataset> graphs = convert_all("bench");
    require_all_same(graphs);
    const strata::GraphDataset& g = graphs[0];
    // adj rows are sources: 0->1 (0.5), 0->2 (1), 1->0 (1.5), 2->4 (2), 3->3 (2.5), 4->0 (3).
    REQUIRE(g.indptr == std::vector<std::int64_t>{0, 2, 3, 4, 5, 6});
    REQUIRE(g.indices == std::vector<std::int64_t>{1, 4, 0, 0, 3, 2});
    REQUIRE(g.edge_weight == std::vector<float>{1.5f, 3.0f, 0.5f, 1.0f, 2.5f, 2.0f});
    REQUIRE(g.features.rows == 5);
    REQUIRE(g.features.cols == 4);
    for (std::size_t i = 0; i < 20; ++i) {
        REQUIRE(g.features.values[i] == (static_cast<float>(i) - 7.0f) / 8.0f);
    }
    REQUIRE(g.labels == std::vector<std::int64_t>{1, 0, 2, 2, 0});
}
