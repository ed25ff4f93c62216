// Partition directories: write_partition → read_part round trips, partition.json, the report,
// validation on read, and bad inputs (nothing left behind).
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "datasets/generate.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/h5_file.hpp"
#include "partition/chunking.hpp"
#include "partition/local_part.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition_job.hpp"
#include "src/base/error.hpp"
#include "tests/partition/checks.hpp"
#include "tests/partition/fixtures.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace strata {
namespace {

using test::TempDir;

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
}

PartitionInfo info_for(const std::string& method, std::uint64_t seed) {
    PartitionInfo info;
    info.source_path = "cora";
    info.source_checksum = "crc32:00000000";
    info.method = method;
    info.seed = seed;
    return info;
}

/// Copies a part file dataset by dataset, letting `edit` change one dataset's values; a root
/// int attribute named in `attributes` gets the value given there.
template <class Edit>
void copy_part_file(const std::string& from, const std::string& to, Edit edit,
                    const std::map<std::string, std::int64_t>& attributes = {}) {
    const H5File in = H5File::open(from);
    H5File out = H5File::create(to);
    for (const char* name : {"strata_format", "partition_id"}) {
        out.write_attribute("/", name, in.read_string_attribute("/", name));
    }
    for (const char* name :
         {"strata_format_version", "part", "num_parts", "num_global_vertices", "first_owned",
          "num_owned", "num_halo", "num_classes", "global_train", "global_val", "global_test"}) {
        const auto it = attributes.find(name);
        out.write_attribute("/", name,
                            it != attributes.end() ? it->second : in.read_int_attribute("/", name));
    }
    auto copy = [&](const std::string& path, auto tag) {
        using T = decltype(tag);
        H5Shape shape;
        std::vector<T> data = in.read<T>(path, &shape);
        edit(path, data);
        out.write(path, std::span<const T>(data), shape);
    };
    for (const char* path : {"/owned/original_ids", "/adjacency/row_ptr", "/halo/original_ids",
                             "/halo/global_ids", "/node/labels"}) {
        copy(path, std::int64_t{});
    }
    for (const char* path : {"/adjacency/col_idx", "/exchange/peers", "/exchange/send_offsets",
                             "/exchange/recv_offsets", "/exchange/send_rows", "/owned/chunk"}) {
        if (in.exists(path)) {
            copy(path, std::int32_t{});
        }
    }
    for (const char* path : {"/adjacency/values", "/node/features"}) {
        copy(path, float{});
    }
    for (const char* path : {"/degrees/owned", "/degrees/halo"}) {
        copy(path, double{});
    }
    for (const char* path : {"/node/train_mask", "/node/val_mask", "/node/test_mask"}) {
        copy(path, std::uint8_t{});
    }
}

}  // namespace

TEST_CASE("written parts read back equal to build_local_part for every rank", "[partition]") {
    const GraphDataset& g = test::cora();
    const GlobalCsr adjacency = adjacency_matrix(g);
    struct Case {
        const char* method;
        int k;
    };
    for (const Case c : {Case{"block", 1}, Case{"random", 3}, Case{"metis", 4}}) {
        INFO(c.method << " K=" << c.k);
        const TempDir dir;
        const Partition p = c.method == std::string("block") ? partition_block(2708, c.k)
                            : c.method == std::string("random")
                                ? partition_random(2708, c.k, 1)
                                : partition_metis(g, c.k, MetisOptions{.seed = 1});

        const PartitionReport report =
            write_partition(g, adjacency, p, info_for(c.method, 1), dir.file("out"), false);

        for (int r = 0; r < c.k; ++r) {
            std::string why;
            const bool same = test::same_part(read_part(dir.file("out"), r, c.k),
                                              build_local_part(g, adjacency, p, r), why);
            INFO("rank " << r << ": " << why);
            CHECK(same);
        }
        std::vector<std::string> expected{"partition.json"};
        for (int r = 0; r < c.k; ++r) {
            expected.push_back(part_file_name(r));
        }
        std::sort(expected.begin(), expected.end());
        std::vector<std::string> files;
        for (const auto& e : fs::directory_iterator(dir.file("out"))) {
            files.push_back(e.path().filename().string());
        }
        std::sort(files.begin(), files.end());
        CHECK(files == expected);
        CHECK(dir.entries() == std::vector<std::string>{"out"});  // no temporary left
        const PartitionReport stored = read_partition_report(dir.file("out"));
        CHECK(stored.partition_id == report.partition_id);
        CHECK(stored.num_parts == c.k);
        CHECK(stored.communication_volume == report.communication_volume);
        CHECK(stored.nnz == adjacency.nnz());
        CHECK(stored.global_train == 140);
    }
}

TEST_CASE("part files carry every split of the dataset, split-major", "[partition]") {
    GraphDataset g = test::cora();
    const auto n = static_cast<std::size_t>(g.num_vertices());
    g.num_splits = 3;
    for (auto* mask : {&g.train_mask, &g.val_mask, &g.test_mask}) {
        mask->assign(3 * n, 0);
    }
    for (std::size_t s = 0; s < 3; ++s) {  // split s: train = every (s+2)-th vertex, etc.
        for (std::size_t v = 0; v < n; ++v) {
            g.train_mask[s * n + v] = v % (s + 2) == 0 ? 1 : 0;
            g.val_mask[s * n + v] = v % (s + 2) == 1 ? 1 : 0;
            g.test_mask[s * n + v] = v % 7 == s ? 1 : 0;
        }
    }
    const GlobalCsr a_hat = adjacency_matrix(g);
    const TempDir dir;
    const Partition p = partition_random(2708, 3, 5);
    const PartitionReport report =
        write_partition(g, a_hat, p, info_for("random", 5), dir.file("p"), false);
    CHECK(report.global_train == 1354);  // split 0's sizes
    for (int r = 0; r < 3; ++r) {
        const LocalPart part = read_part(dir.file("p"), r, 3);
        REQUIRE(part.num_splits == 3);
        REQUIRE(part.split == 0);
        const auto rows = static_cast<std::size_t>(part.graph.num_owned);
        REQUIRE(part.train_mask.size() == 3 * rows);
        for (std::size_t s = 0; s < 3; ++s) {
            for (std::size_t i = 0; i < rows; ++i) {
                const auto v = static_cast<std::size_t>(part.graph.owned_original[i]);
                REQUIRE(part.train_mask[s * rows + i] == g.train_mask[s * n + v]);
                REQUIRE(part.val_mask[s * rows + i] == g.val_mask[s * n + v]);
                REQUIRE(part.test_mask[s * rows + i] == g.test_mask[s * n + v]);
            }
        }
        std::string why;
        CHECK(test::same_part(part, build_local_part(g, a_hat, p, r), why));
    }
    const H5File file = H5File::open(dir.file("p/part-00001.h5"));
    CHECK(file.read_int_attribute("/", "strata_format_version") == partition_format_version);
    CHECK(file.shape("/node/val_mask") ==
          H5Shape{3, read_part(dir.file("p"), 1, 3).graph.num_owned});
}

TEST_CASE("a part that owns no vertex is written and read back", "[partition]") {
    const GraphDataset g = test::path_graph(4);
    const GlobalCsr adjacency = adjacency_matrix(g);
    const Partition p{3, {0, 2, 2, 0}};  // part 1 is empty
    const TempDir dir;

    (void)write_partition(g, adjacency, p, info_for("block", 0), dir.file("p"), false);

    const LocalPart empty = read_part(dir.file("p"), 1, 3);
    CHECK(empty.graph.num_owned == 0);
    CHECK(empty.graph.first_owned == 2);
    CHECK(empty.graph.pattern.peers.empty());
    CHECK(empty.features.rows == 0);
    CHECK(empty.features.cols == 2);
    for (int r = 0; r < 3; ++r) {
        std::string why;
        const bool same = test::same_part(read_part(dir.file("p"), r, 3),
                                          build_local_part(g, adjacency, p, r), why);
        INFO("rank " << r << ": " << why);
        CHECK(same);
    }
}

TEST_CASE("the report's counts are those of the local graphs", "[partition]") {
    // Path 0-1-2-3-4-5 in blocks {0,1,2} | {3,4,5}: one row each way, 2 cut entries.
    const GraphDataset g = test::path_graph(6);
    const GlobalCsr adjacency = adjacency_matrix(g);
    const TempDir dir;

    const PartitionReport r = write_partition(g, adjacency, partition_block(6, 2),
                                              info_for("block", 0), dir.file("p"), false);

    REQUIRE(r.parts.size() == 2);
    CHECK(r.parts[0].num_owned == 3);
    CHECK(r.parts[0].edges == 2 * 2 + 1);  // inner path edges + cut edge (A: no self loops)
    CHECK(r.parts[0].halo == 1);
    CHECK(r.parts[0].boundary == 1);
    CHECK(r.parts[0].rows_sent == 1);
    CHECK(r.parts[0].rows_received == 1);
    CHECK(r.edge_cut == 2);
    CHECK(r.communication_volume == 2);
    CHECK(r.vertex_imbalance == Approx(1.0));
    CHECK(r.nnz == 10);
    CHECK(r.info.phases.size() == 2);  // build, write
    const std::string table = format_report(r);
    CHECK_THAT(table, Contains("edge cut: 2 of 10 A entries"));
    CHECK_THAT(table, Contains("communication volume: 2 rows"));
}

TEST_CASE("read_part rejects a partition with another number of parts", "[partition]") {
    const GraphDataset g = test::path_graph(6);
    const TempDir dir;
    (void)write_partition(g, adjacency_matrix(g), partition_block(6, 3), info_for("block", 0),
                          dir.file("p"), false);

    REQUIRE_THROWS_WITH(read_part(dir.file("p"), 0, 2),
                        Contains("has 3 parts but 2 were expected"));
    REQUIRE_THROWS_WITH(read_part(dir.file("p"), 3, 3), Contains("rank 3 outside"));
    REQUIRE_THROWS_WITH(read_part(dir.file("missing"), 0, 3), Contains("not a directory"));
    REQUIRE_THROWS_WITH(read_part(dir.file(""), 0, 3), Contains("no partition.json"));
}

TEST_CASE("read_part rejects a part file of another partition", "[partition]") {
    const GraphDataset g = test::generated(300, 6, 4);
    const GlobalCsr adjacency = adjacency_matrix(g);
    const TempDir dir;
    (void)write_partition(g, adjacency, partition_random(300, 2, 1), info_for("random", 1),
                          dir.file("a"), false);
    (void)write_partition(g, adjacency, partition_random(300, 2, 2), info_for("random", 2),
                          dir.file("b"), false);

    fs::copy_file(dir.file("b/part-00001.h5"), dir.file("a/part-00001.h5"),
                  fs::copy_options::overwrite_existing);

    REQUIRE_NOTHROW(read_part(dir.file("a"), 0, 2));
    REQUIRE_THROWS_WITH(read_part(dir.file("a"), 1, 2), Contains("belongs to another partition"));
    fs::remove(dir.file("a/part-00000.h5"));
    REQUIRE_THROWS_WITH(read_part(dir.file("a"), 0, 2), Contains("missing part file"));
}

TEST_CASE("read_part checks partition.json's format and version", "[partition]") {
    const GraphDataset g = test::path_graph(6);
    const TempDir dir;
    (void)write_partition(g, adjacency_matrix(g), partition_block(6, 2), info_for("block", 0),
                          dir.file("p"), false);
    const std::string json = read_text(dir.file("p/partition.json"));
    const auto at = json.find("\"strata_format_version\": 4");
    REQUIRE(at != std::string::npos);

    std::string edited = json;
    edited.replace(at, 26, "\"strata_format_version\": 5");
    write_text(dir.file("p/partition.json"), edited);
    REQUIRE_THROWS_WITH(read_part(dir.file("p"), 0, 2), Contains("version 5 is not supported"));
    write_text(dir.file("p/partition.json"), "{ not json");
    REQUIRE_THROWS_WITH(read_part(dir.file("p"), 0, 2), Contains("not valid JSON"));
}

TEST_CASE("a version-1 partition is refused with the command that re-partitions it",
          "[partition]") {
    const GraphDataset g = test::path_graph(6);
    const TempDir dir;
    (void)write_partition(g, adjacency_matrix(g), partition_block(6, 2), info_for("block", 0),
                          dir.file("graph.2"), false);
    const std::string json = read_text(dir.file("graph.2/partition.json"));
    const auto at = json.find("\"strata_format_version\": 4");
    REQUIRE(at != std::string::npos);
    const std::string command = "re-partition with 'strata partition --data cora --parts 2 --out " +
                                (dir.file("graph.2")) + " --force'";

    SECTION("partition.json of version 1") {
        std::string edited = json;
        edited.replace(at, 26, "\"strata_format_version\": 1");
        write_text(dir.file("graph.2/partition.json"), edited);

        REQUIRE_THROWS_WITH(
            read_part(dir.file("graph.2"), 1, 2),
            Contains(dir.file("graph.2/partition.json") +
                     ": partition format version 1 is not supported (this strata reads versions "
                     "2 to 4): " +
                     command));
    }
    SECTION("a part file of version 1") {
        const std::string part = dir.file("graph.2/part-00000.h5");
        fs::rename(part, dir.file("v2.h5"));
        copy_part_file(dir.file("v2.h5"), part, [](const std::string&, auto&) {},
                       {{"strata_format_version", 1}});

        REQUIRE_NOTHROW(read_part(dir.file("graph.2"), 1, 2));
        REQUIRE_THROWS_WITH(
            read_part(dir.file("graph.2"), 0, 2),
            Contains(part +
                     ": partition format version 1 is not supported (this strata reads versions "
                     "2 to 4): " +
                     command));
    }
}

TEST_CASE("a version-2 partition (no chunk map) is still read", "[partition]") {
    const GraphDataset g = test::path_graph(6);
    const TempDir dir;
    (void)write_partition(g, adjacency_matrix(g), partition_block(6, 2), info_for("block", 0),
                          dir.file("p"), false);
    std::string json = read_text(dir.file("p/partition.json"));
    json.replace(json.find("\"strata_format_version\": 4"), 26, "\"strata_format_version\": 2");
    write_text(dir.file("p/partition.json"), json);
    for (int part = 0; part < 2; ++part) {
        const std::string path = dir.file("p/" + part_file_name(part));
        fs::rename(path, dir.file("v3.h5"));
        copy_part_file(dir.file("v3.h5"), path, [](const std::string&, auto&) {},
                       {{"strata_format_version", 2}});
        fs::remove(dir.file("v3.h5"));
    }
    const LocalPart part = read_part(dir.file("p"), 1, 2);
    CHECK(part.graph.owned_original == std::vector<global_id>{3, 4, 5});
    CHECK(part.chunk.empty());
}

TEST_CASE("read_part reads one column block of the features, of a version-3 part file too",
          "[partition]") {
    // 30 features in 4 slices: columns [0, 8), [8, 16), [16, 23), [23, 30). Version 4 stores
    // them in column blocks; a version-3 file (here: contiguous, as copy_part_file writes) is read
    // the same way, decompressing whole rows.
    GenerateOptions options;
    options.num_vertices = 400;
    options.avg_degree = 6;
    options.num_features = 30;
    options.seed = 5;
    const GraphDataset g = generate_graph(options);
    const TempDir dir;
    (void)write_partition(g, adjacency_matrix(g), partition_block(400, 2), info_for("block", 0),
                          dir.file("p"), false);
    const LocalPart whole = read_part(dir.file("p"), 1, 2);
    REQUIRE(whole.features.cols == 30);
    std::int64_t whole_bytes = 0;
    (void)read_part(dir.file("p"), 1, 2, {.bytes_read = &whole_bytes});
    const auto check_slices = [&](const std::string& at) {
        for (int f = 0; f < 4; ++f) {
            const ColumnBlock columns = column_block(30, {f, 4});
            CHECK(columns.first == std::vector<std::int64_t>{0, 8, 16, 23}[f]);
            std::int64_t bytes = 0;
            const LocalPart part = read_part(at, 1, 2, {.features = {f, 4}, .bytes_read = &bytes});
            REQUIRE(part.features.cols == columns.count);
            REQUIRE(part.features.rows == whole.features.rows);
            bool same = true;
            for (std::int64_t r = 0; r < part.features.rows; ++r) {
                for (std::int64_t c = 0; c < columns.count; ++c) {
                    same =
                        same && part.features.at(r, static_cast<index_t>(c)) ==
                                    whole.features.at(r, static_cast<index_t>(columns.first + c));
                }
            }
            CHECK(same);
            CHECK(part.labels == whole.labels);
            CHECK(part.graph.owned_original == whole.graph.owned_original);
            // Only the block's columns are read: the whole part's bytes less the others'.
            CHECK(bytes == whole_bytes - 4 * whole.features.rows * (30 - columns.count));
        }
    };
    check_slices(dir.file("p"));
    std::string json = read_text(dir.file("p/partition.json"));
    json.replace(json.find("\"strata_format_version\": 4"), 26, "\"strata_format_version\": 3");
    write_text(dir.file("p/partition.json"), json);
    for (int part = 0; part < 2; ++part) {
        const std::string path = dir.file("p/" + part_file_name(part));
        fs::rename(path, dir.file("v4.h5"));
        copy_part_file(dir.file("v4.h5"), path, [](const std::string&, auto&) {},
                       {{"strata_format_version", 3}});
        fs::remove(dir.file("v4.h5"));
    }
    check_slices(dir.file("p"));
}

TEST_CASE("a chunk map is written, read back, and validated", "[partition]") {
    const GraphDataset g = test::generated(400, 6, 5);
    const GlobalCsr adjacency = adjacency_matrix(g);
    const Partition parts = partition_random(400, 2, 3);
    const Partition chunks = chunk_within_parts(g, parts, ChunkOptions{.chunks = 6, .seed = 2});
    const TempDir dir;
    const PartitionReport report =
        write_partition(g, adjacency, parts, info_for("random", 3), dir.file("p"), false, &chunks);
    CHECK(report.chunks_per_part == 3);
    const PartitionReport stored = read_partition_report(dir.file("p"));
    CHECK(stored.chunks_per_part == 3);
    CHECK(stored.chunk_sizes == report.chunk_sizes);
    CHECK_THAT(format_report(stored), Contains("chunks (--parallel pipeline): 6, 3 per part"));
    for (int p = 0; p < 2; ++p) {
        const LocalPart part = read_part(dir.file("p"), p, 2);
        REQUIRE(part.chunk.size() == static_cast<std::size_t>(part.graph.num_owned));
        for (std::size_t i = 0; i < part.chunk.size(); ++i) {
            CHECK(p * 3 + part.chunk[i] ==
                  chunks.owner[static_cast<std::size_t>(part.graph.owned_original[i])]);
        }
    }
    // The partition id covers the chunk map.
    const PartitionReport plain =
        write_partition(g, adjacency, parts, info_for("random", 3), dir.file("q"), false);
    CHECK(plain.partition_id != report.partition_id);
    CHECK(read_part(dir.file("q"), 0, 2).chunk.empty());

    // A chunk outside the part's range, and sizes that disagree with partition.json.
    const std::string part = dir.file("p/part-00001.h5");
    fs::copy_file(part, dir.file("good.h5"));
    const auto copy_with_chunk = [&](std::int32_t first) {
        copy_part_file(dir.file("good.h5"), part, [&](const std::string& path, auto& data) {
            if (path == "/owned/chunk") {
                data[0] = static_cast<std::decay_t<decltype(data[0])>>(first);
            }
        });
    };
    copy_with_chunk(3);
    CHECK_THROWS_WITH(read_part(dir.file("p"), 1, 2),
                      Contains("/owned/chunk[0] = 3 outside [0, 3)"));
    const int was = chunks.owner[static_cast<std::size_t>(
                        read_part(dir.file("q"), 1, 2).graph.owned_original[0])] -
                    3;
    copy_with_chunk(was == 0 ? 1 : 0);
    CHECK_THROWS_WITH(read_part(dir.file("p"), 1, 2),
                      Contains("/owned/chunk's chunk sizes differ from partition.json's"));
    copy_with_chunk(was);
    CHECK_NOTHROW(read_part(dir.file("p"), 1, 2));
    std::string json = read_text(dir.file("p/partition.json"));
    json.replace(json.find("\"per_part\": 3"), 13, "\"per_part\": 2");
    write_text(dir.file("p/partition.json"), json);
    CHECK_THROWS_WITH(read_partition_report(dir.file("p")),
                      Contains("partition.json: chunks: count 6 and per_part 2 disagree with "
                               "num_parts 2"));
}

TEST_CASE("read_part validates every dataset of a part file", "[partition]") {
    const GraphDataset g = test::generated(400, 6, 5);
    const TempDir dir;
    (void)write_partition(g, adjacency_matrix(g), partition_random(400, 2, 3),
                          info_for("random", 3), dir.file("p"), false);
    const std::string part = dir.file("p/part-00001.h5");
    const std::string good = dir.file("good.h5");
    fs::copy_file(part, good);
    struct Corruption {
        const char* dataset;
        const char* message;
    };
    for (const Corruption c : {Corruption{"/adjacency/col_idx", "/adjacency/col_idx[0]"},
                               Corruption{"/exchange/send_rows", "send row"},
                               Corruption{"/node/labels", "/node/labels[0]"},
                               Corruption{"/node/train_mask", "expected 0 or 1"},
                               Corruption{"/halo/global_ids", "is not owned by peer"},
                               Corruption{"/owned/original_ids", "not ascending"},
                               Corruption{"/adjacency/values", "not finite"},
                               Corruption{"/degrees/halo", "halo degree 0 is nan"}}) {
        INFO(c.dataset);
        copy_part_file(good, part, [&](const std::string& path, auto& data) {
            if (path == c.dataset) {
                using T = std::decay_t<decltype(data[0])>;
                if constexpr (std::is_floating_point_v<T>) {
                    data[0] = std::numeric_limits<T>::quiet_NaN();
                } else if constexpr (std::is_same_v<T, std::uint8_t>) {
                    data[0] = 7;
                } else {
                    data[0] = static_cast<T>(1000000);
                }
            }
        });
        REQUIRE_THROWS_WITH(read_part(dir.file("p"), 1, 2), Contains(c.message));
    }
    copy_part_file(good, part, [](const std::string&, auto&) {});
    REQUIRE_NOTHROW(read_part(dir.file("p"), 1, 2));
}

TEST_CASE("write_partition refuses an existing output unless forced and leaves nothing on error",
          "[partition]") {
    const GraphDataset g = test::path_graph(6);
    const GlobalCsr adjacency = adjacency_matrix(g);
    const TempDir dir;
    fs::create_directories(dir.file("p"));
    write_text(dir.file("p/keep.txt"), "old");

    REQUIRE_THROWS_WITH(write_partition(g, adjacency, partition_block(6, 2), info_for("block", 0),
                                        dir.file("p"), false),
                        Contains("already exists (use --force"));
    CHECK(fs::exists(dir.file("p/keep.txt")));
    REQUIRE_THROWS_WITH(write_partition(g, adjacency, Partition{2, {0, 1, 0, 1, 0, 5}},
                                        info_for("block", 0), dir.file("q"), false),
                        Contains("owner of vertex 5"));
    CHECK(dir.entries() == std::vector<std::string>{"p"});
    REQUIRE_NOTHROW(write_partition(g, adjacency, partition_block(6, 2), info_for("block", 0),
                                    dir.file("p"), true));
    CHECK(!fs::exists(dir.file("p/keep.txt")));
    CHECK(fs::exists(dir.file("p/part-00001.h5")));
    CHECK(dir.entries() == std::vector<std::string>{"p"});
}

TEST_CASE("run_partition_job writes a partition and reports every phase", "[partition]") {
    const TempDir dir;
    write_graph(test::generated(1000, 8, 6), dir.file("g.h5"));
    PartitionJob job;
    job.data_path = dir.file("g.h5");
    job.out_dir = dir.file("parts");
    job.num_parts = 3;

    const PartitionReport r = run_partition_job(job);

    std::vector<std::string> phases;
    for (const PhaseStat& phase : r.info.phases) {
        phases.push_back(phase.name);
        CHECK(phase.seconds >= 0.0);
        CHECK(phase.peak_rss_bytes > 0);
    }
    CHECK(phases ==
          std::vector<std::string>{"read", "metis", "reread", "adjacency", "build", "write"});
    CHECK(r.info.balance == std::vector<std::string>{"vertices", "edges", "train"});
    CHECK(r.info.metis_edgecut > 0);
    // Format 3: the source is identified by its stored content id (no second read of the file).
    CHECK(r.info.source_checksum.rfind("content64:", 0) == 0);
    CHECK(r.info.source_checksum == read_graph_content_id(dir.file("g.h5")));
    CHECK(read_part(dir.file("parts"), 2, 3).graph.rank == 2);
    CHECK(dir.entries() == std::vector<std::string>{"g.h5", "parts"});
}

TEST_CASE("run_partition_job gives one clear error per bad input and leaves nothing behind",
          "[partition]") {
    const TempDir dir;
    write_graph(test::path_graph(5), dir.file("g.h5"));
    write_text(dir.file("not.h5"), "this is not HDF5");
    fs::create_directories(dir.file("exists"));
    PartitionJob job;
    job.data_path = dir.file("g.h5");
    job.out_dir = dir.file("out");
    job.num_parts = 2;
    auto with = [&](auto change) {
        PartitionJob j = job;
        change(j);
        return j;
    };

    REQUIRE_THROWS_WITH(
        run_partition_job(with([&](PartitionJob& j) { j.data_path = dir.file("none.h5"); })),
        Contains("none.h5"));
    REQUIRE_THROWS_WITH(
        run_partition_job(with([&](PartitionJob& j) { j.data_path = dir.file("not.h5"); })),
        Contains("not.h5"));
    REQUIRE_THROWS_WITH(run_partition_job(with([](PartitionJob& j) { j.num_parts = 0; })),
                        Contains("--parts must be >= 1, got 0"));
    REQUIRE_THROWS_WITH(run_partition_job(with([](PartitionJob& j) { j.num_parts = 8; })),
                        Contains("cannot split 5 vertices into 8 parts"));
    REQUIRE_THROWS_WITH(
        run_partition_job(with([&](PartitionJob& j) { j.out_dir = dir.file("exists"); })),
        Contains("already exists (use --force"));
    REQUIRE_THROWS_WITH(
        run_partition_job(with([&](PartitionJob& j) { j.out_dir = dir.file("not.h5/out"); })),
        Contains("does not exist"));
    REQUIRE_THROWS_WITH(run_partition_job(with([](PartitionJob& j) { j.method = "spectral"; })),
                        Contains("unknown method 'spectral'"));
    REQUIRE_THROWS_WITH(run_partition_job(with([](PartitionJob& j) { j.seed = 1ULL << 33; })),
                        Contains("too large for METIS"));
    REQUIRE_THROWS_WITH(parse_balance("vertices,nodes"), Contains("unknown constraint 'nodes'"));
    REQUIRE_THROWS_WITH(parse_balance("edges,edges"), Contains("listed twice"));
    CHECK(parse_balance("train,vertices") == std::vector<std::string>{"train", "vertices"});
    if (geteuid() != 0) {  // root may write anywhere
        fs::create_directories(dir.file("ro"));
        fs::permissions(dir.file("ro"), fs::perms::owner_read | fs::perms::owner_exec);
        CHECK_THROWS_WITH(
            run_partition_job(with([&](PartitionJob& j) { j.out_dir = dir.file("ro/out"); })),
            Contains("not writable"));
        fs::permissions(dir.file("ro"), fs::perms::owner_all);
        fs::remove(dir.file("ro"));
    }
    CHECK(dir.entries() == std::vector<std::string>{"exists", "g.h5", "not.h5"});
    CHECK(fs::is_empty(dir.file("exists")));
}

}  // namespace strata
