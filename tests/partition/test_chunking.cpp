// Chunks for --parallel pipeline: chunk_partition (METIS parts merged at random, balanced, none
// empty), reorder_into_chunks (P A Pᵀ and every row-indexed array follow owned_original) on a
// weighted directed graph, the one-line errors, and load_chunked_part on every rank (same
// chunks everywhere, whole-graph split counts). Run under mpirun with 1 and 2 ranks.
#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <span>
#include <tuple>
#include <vector>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "partition/chunking.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/whole_partition.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "tests/partition/fixtures.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"

#include <unistd.h>

namespace strata {
namespace {

using Catch::Matchers::Contains;

std::vector<global_id> chunk_sizes(const Partition& chunks) {
    std::vector<global_id> size(static_cast<std::size_t>(chunks.num_parts), 0);
    for (int c : chunks.owner) {
        REQUIRE(c >= 0);
        REQUIRE(c < chunks.num_parts);
        ++size[static_cast<std::size_t>(c)];
    }
    return size;
}

/// The whole graph as one part (what every pipeline stage holds before the reorder).
LocalPart one_part(const GraphDataset& graph) {
    return build_local_part(graph, adjacency_matrix(graph),
                            partition_block(graph.num_vertices(), 1), 0);
}

std::int64_t count_ones(std::span<const std::uint8_t> mask) {
    return std::count(mask.begin(), mask.end(), std::uint8_t{1});
}

TEST_CASE("chunk_partition: every vertex in a balanced, non-empty chunk; seeded", "[chunks]") {
    const GraphDataset graph = test::generated(3000, 10.0, 5);
    for (int c : {1, 3, 8}) {
        INFO("C = " << c);
        const ChunkOptions options{.chunks = c, .seed = 11};
        const Partition chunks = chunk_partition(graph, options);
        REQUIRE(chunks.num_parts == c);
        REQUIRE(chunks.owner.size() == 3000);
        const std::vector<global_id> size = chunk_sizes(chunks);
        const double mean = 3000.0 / c;
        for (global_id s : size) {
            CHECK(s > 0);
            CHECK(static_cast<double>(s) <= 2.0 * mean);
        }
        CHECK(chunk_partition(graph, options).owner == chunks.owner);
        if (c > 1) {
            const Partition other = chunk_partition(graph, ChunkOptions{.chunks = c, .seed = 12});
            CHECK(other.owner != chunks.owner);
        }
    }
}

TEST_CASE("chunk_partition merges METIS parts 4-to-1 at random, not as part / 4", "[chunks]") {
    const GraphDataset graph = test::generated(2000, 8.0, 3);
    const int c = 6;
    for (std::uint64_t seed : {9u, 10u}) {
        // METIS with the seed chunk_partition uses: each of its parts must land in one chunk.
        const Partition metis = partition_metis(graph, 4 * c, MetisOptions{.seed = seed});
        const Partition chunks = chunk_partition(graph, ChunkOptions{.chunks = c, .seed = seed});
        std::map<int, int> chunk_of_part;
        for (std::size_t v = 0; v < metis.owner.size(); ++v) {
            const auto [it, inserted] = chunk_of_part.emplace(metis.owner[v], chunks.owner[v]);
            CHECK(it->second == chunks.owner[v]);  // a METIS part lies in one chunk
        }
        REQUIRE(chunk_of_part.size() == static_cast<std::size_t>(4 * c));
        std::vector<int> parts_per_chunk(static_cast<std::size_t>(c), 0);
        bool all_div4 = true;
        for (const auto& [part, chunk] : chunk_of_part) {
            ++parts_per_chunk[static_cast<std::size_t>(chunk)];
            all_div4 = all_div4 && chunk == part / 4;
        }
        CHECK(parts_per_chunk == std::vector<int>(static_cast<std::size_t>(c), 4));
        CHECK_FALSE(all_div4);
    }
}

TEST_CASE("chunk_partition on tiny graphs: fewer METIS parts, still no empty chunk", "[chunks]") {
    // N = 7, C = 3: 12 METIS parts do not fit, 6 do (2 per chunk). N = C: one vertex each.
    // Two disconnected vertices plus isolated ones (METIS may leave parts empty).
    const GraphDataset path = test::path_graph(7);
    const GraphDataset isolated = test::edge_list_graph(9, {{0, 1}, {1, 0}});
    for (const GraphDataset* graph : {&path, &isolated}) {
        const global_id n = graph->num_vertices();
        for (int c : {2, 3, static_cast<int>(n)}) {
            INFO("N = " << n << ", C = " << c);
            for (std::uint64_t seed : {0u, 1u, 2u}) {
                const Partition chunks =
                    chunk_partition(*graph, ChunkOptions{.chunks = c, .seed = seed});
                const std::vector<global_id> size = chunk_sizes(chunks);
                CHECK(std::count(size.begin(), size.end(), global_id{0}) == 0);
                CHECK(std::accumulate(size.begin(), size.end(), global_id{0}) == n);
            }
        }
    }
}

TEST_CASE("chunk options errors are one line naming the flag and value", "[chunks]") {
    const GraphDataset& cora = test::cora();
    CHECK_THROWS_WITH(chunk_partition(cora, ChunkOptions{.chunks = 0}),
                      Contains("chunks = 0: must be at least 1"));
    CHECK_THROWS_WITH(chunk_partition(cora, ChunkOptions{.chunks = 5000}),
                      Contains("chunks = 5000: the graph has only 2708 vertices"));
    CHECK_THROWS_WITH(chunk_partition(cora, ChunkOptions{.chunks = 2, .oversplit = 0}),
                      Contains("chunk oversplit 0: must be at least 1"));
}

TEST_CASE("reorder_into_chunks permutes A, degrees and vertex data by chunk", "[chunks]") {
    GraphDataset graph = test::weighted_directed_graph(400, 21, /*dyadic=*/false);
    test::add_second_split(graph);
    const LocalPart before = one_part(graph);
    // The one-part LocalPart is in original order.
    REQUIRE(before.graph.owned_original.size() == 400);
    for (std::size_t i = 0; i < 400; ++i) {
        REQUIRE(before.graph.owned_original[i] == static_cast<global_id>(i));
    }
    const int c = 5;
    const Partition chunks = chunk_partition(graph, ChunkOptions{.chunks = c, .seed = 4});
    LocalPart part = before;
    const std::vector<index_t> offsets = reorder_into_chunks(part, chunks);
    const LocalGraph& g = part.graph;
    const auto n = static_cast<std::size_t>(g.num_owned);
    REQUIRE(n == 400);

    // (a) contiguous chunks, original order kept inside each, a permutation overall.
    REQUIRE(offsets.size() == static_cast<std::size_t>(c) + 1);
    CHECK(offsets.front() == 0);
    CHECK(offsets.back() == 400);
    std::vector<global_id> seen = g.owned_original;
    std::sort(seen.begin(), seen.end());
    std::vector<global_id> all(400);
    std::iota(all.begin(), all.end(), global_id{0});
    CHECK(seen == all);
    for (int k = 0; k < c; ++k) {
        const auto first = static_cast<std::size_t>(offsets[static_cast<std::size_t>(k)]);
        const auto last = static_cast<std::size_t>(offsets[static_cast<std::size_t>(k) + 1]);
        CHECK(first < last);
        for (std::size_t i = first; i < last; ++i) {
            CHECK(chunks.owner[static_cast<std::size_t>(g.owned_original[i])] == k);
            if (i > first) {
                CHECK(g.owned_original[i - 1] < g.owned_original[i]);
            }
        }
    }
    CHECK_FALSE(std::is_sorted(g.owned_original.begin(), g.owned_original.end()));

    // (b) inner = P A Pᵀ: same nnz, each (i, j, w) is (orig(i), orig(j), w) of the one-part A.
    validate(g.inner, "reordered inner");
    REQUIRE(g.inner.rows == 400);
    REQUIRE(g.inner.cols == 400);
    REQUIRE(g.inner.nnz() == before.graph.inner.nnz());
    using Entry = std::tuple<global_id, global_id, float>;
    auto entries = [](const LocalGraph& lg) {
        std::vector<Entry> out;
        for (index_t r = 0; r < lg.inner.rows; ++r) {
            for (index_t k = lg.inner.row_ptr[static_cast<std::size_t>(r)];
                 k < lg.inner.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
                const auto slot = static_cast<std::size_t>(k);
                if (k > lg.inner.row_ptr[static_cast<std::size_t>(r)]) {
                    CHECK(lg.inner.col_idx[slot - 1] < lg.inner.col_idx[slot]);
                }
                out.emplace_back(
                    lg.owned_original[static_cast<std::size_t>(r)],
                    lg.owned_original[static_cast<std::size_t>(lg.inner.col_idx[slot])],
                    lg.inner.values[slot]);
            }
        }
        std::sort(out.begin(), out.end());
        return out;
    };
    const std::vector<Entry> expected = entries(before.graph);
    CHECK(entries(g) == expected);
    // The directed graph is not symmetric, so a transposed permutation would be caught.
    CHECK_FALSE(is_symmetric(before.graph.inner));

    // (c) degrees, features, labels and both splits' masks follow owned_original.
    CHECK(g.boundary_rows.empty());
    REQUIRE(g.interior_rows.size() == n);
    REQUIRE(g.owned_degree.size() == n);
    REQUIRE(part.features.rows == 400);
    REQUIRE(part.features.cols == graph.features.cols);
    REQUIRE(part.num_splits == 2);
    for (std::size_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::size_t>(g.owned_original[i]);
        CHECK(g.interior_rows[i] == static_cast<index_t>(i));
        CHECK(g.owned_degree[i] == before.graph.owned_degree[v]);
        for (index_t f = 0; f < part.features.cols; ++f) {
            CHECK(part.features.at(static_cast<index_t>(i), f) ==
                  graph.features.at(static_cast<index_t>(v), f));
        }
        CHECK(part.labels[i] == graph.labels[v]);
        for (std::size_t s = 0; s < 2; ++s) {
            CHECK(part.train_mask[s * n + i] == graph.train_mask[s * n + v]);
            CHECK(part.val_mask[s * n + i] == graph.val_mask[s * n + v]);
            CHECK(part.test_mask[s * n + i] == graph.test_mask[s * n + v]);
        }
    }
}

TEST_CASE("reorder_into_chunks refuses a multi-part part and a mismatched partition", "[chunks]") {
    const GraphDataset graph = test::path_graph(6);
    const GlobalCsr a = adjacency_matrix(graph);
    LocalPart half = build_local_part(graph, a, partition_block(6, 2), 0);
    CHECK_THROWS_WITH(reorder_into_chunks(half, partition_block(3, 1)),
                      Contains("chunks need the whole graph as one part"));
    LocalPart whole = one_part(graph);
    CHECK_THROWS_WITH(reorder_into_chunks(whole, partition_block(5, 2)),
                      Contains("the chunk partition has 5 owners but the part has 6 rows"));
}

TEST_CASE("load_chunked_part: same chunks on every rank, whole-graph split counts", "[chunks]") {
    MpiCommunicator comm(MPI_COMM_WORLD);
    const std::string path = test::data_dir() + "/cora.h5";
    const ChunkOptions options{.chunks = 4, .seed = 7};
    const ChunkedPart chunked = load_chunked_part(path, comm, options, 0);
    const LocalGraph& g = chunked.part.graph;
    REQUIRE(g.num_owned == 2708);
    REQUIRE(chunked.chunk_offsets.size() == 5);
    CHECK(chunked.chunk_offsets.front() == 0);
    CHECK(chunked.chunk_offsets.back() == 2708);

    // Rank 0's offsets and owned_original, broadcast: every rank must hold the same.
    std::vector<index_t> offsets = chunked.chunk_offsets;
    std::vector<global_id> original = g.owned_original;
    MPI_Bcast(offsets.data(), static_cast<int>(offsets.size()), MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(original.data(), static_cast<int>(original.size()), MPI_INT64_T, 0, MPI_COMM_WORLD);
    CHECK(test::all_ranks(offsets == chunked.chunk_offsets && original == g.owned_original));

    // And they are this graph's chunks (rank 0 computed them with the same options).
    const GraphDataset graph = read_graph(path);
    const Partition chunks = chunk_partition(graph, options);
    LocalPart reordered = one_part(graph);
    CHECK(reorder_into_chunks(reordered, chunks) == chunked.chunk_offsets);
    CHECK(reordered.graph.owned_original == g.owned_original);

    // Counts of the whole graph's split 0, not summed over the ranks.
    CHECK(chunked.part.split == 0);
    CHECK(chunked.part.global_train == count_ones(graph.split_of(graph.train_mask, 0)));
    CHECK(chunked.part.global_val == count_ones(graph.split_of(graph.val_mask, 0)));
    CHECK(chunked.part.global_test == count_ones(graph.split_of(graph.test_mask, 0)));
    CHECK(chunked.part.global_train == 140);
}

TEST_CASE("load_chunked_part errors on every rank without a hang", "[chunks]") {
    MpiCommunicator comm(MPI_COMM_WORLD);
    CHECK_THROWS_WITH(load_chunked_part(test::data_dir() + "/cora", comm, ChunkOptions{}, 0),
                      Contains("/cora: not a partition directory (no partition.json"));
    const std::string path = test::data_dir() + "/cora.h5";
    CHECK_THROWS_WITH(load_chunked_part(path, comm, ChunkOptions{.chunks = 5000}, 0),
                      Contains("chunks = 5000: the graph has only 2708 vertices"));
    CHECK_THROWS_WITH(load_chunked_part(path, comm, ChunkOptions{.chunks = 2}, 10),
                      Contains("--split-index 10 out of range"));
    CHECK_THROWS_WITH(load_chunked_part(test::data_dir() + "/missing.h5", comm, ChunkOptions{}, 0),
                      Contains("missing.h5: no such file or directory"));
}

/// A directory path that is the same on every rank (rank 0's pid), removed at the end.
class SharedTempDir {
public:
    explicit SharedTempDir(const std::string& name) {
        int pid = static_cast<int>(getpid());
        MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
        path_ = std::filesystem::temp_directory_path() /
                ("strata_test_chunking_" + std::to_string(pid) + "_" + name);
    }
    SharedTempDir(const SharedTempDir&) = delete;
    SharedTempDir& operator=(const SharedTempDir&) = delete;
    ~SharedTempDir() {
        MPI_Barrier(MPI_COMM_WORLD);
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    [[nodiscard]] std::string operator/(const std::string& name) const {
        return (path_ / name).string();
    }

private:
    std::filesystem::path path_;
};

TEST_CASE("chunk_within_parts: C/K non-empty chunks inside every part; seeded", "[chunks]") {
    const GraphDataset graph = test::generated(900, 8, 4);
    const Partition parts = partition_metis(graph, 3, MetisOptions{});
    const Partition chunks = chunk_within_parts(graph, parts, ChunkOptions{.chunks = 6, .seed = 1});
    REQUIRE(chunks.num_parts == 6);
    for (std::size_t v = 0; v < chunks.owner.size(); ++v) {
        CHECK(chunks.owner[v] / 2 == parts.owner[v]);
    }
    const std::vector<global_id> size = chunk_sizes(chunks);
    CHECK(*std::min_element(size.begin(), size.end()) > 0);
    CHECK(chunk_within_parts(graph, parts, ChunkOptions{.chunks = 6, .seed = 1}).owner ==
          chunks.owner);
    // One chunk per part is the partition itself.
    CHECK(chunk_within_parts(graph, parts, ChunkOptions{.chunks = 3}).owner == parts.owner);

    CHECK_THROWS_WITH(chunk_within_parts(graph, parts, ChunkOptions{.chunks = 4}),
                      Contains("--chunks 4 with --parts 3: every part needs the same number of "
                               "chunks (a multiple of 3)"));
    const GraphDataset path = test::path_graph(6);
    CHECK_THROWS_WITH(
        chunk_within_parts(path, Partition{2, {0, 0, 0, 0, 0, 1}}, ChunkOptions{.chunks = 4}),
        Contains("--chunks 4 with --parts 2: part 1 has 1 vertices, fewer than its 2 chunks"));
}

TEST_CASE("a partition directory with a chunk map: the pipeline loads it on every rank",
          "[chunks]") {
    MpiCommunicator comm(MPI_COMM_WORLD);
    const GraphDataset& graph = test::cora();
    const GlobalCsr adjacency = adjacency_matrix(graph);
    const Partition parts = partition_metis(graph, 2, MetisOptions{});
    const Partition chunks = chunk_within_parts(graph, parts, ChunkOptions{.chunks = 4, .seed = 5});
    const SharedTempDir dir("chunked");
    if (comm.rank() == 0) {
        std::filesystem::create_directories(dir / "");
        PartitionInfo info;
        info.source_path = "data/cora.h5";
        info.method = "metis";
        (void)write_partition(graph, adjacency, parts, info, dir / "cora.2", true, &chunks);
        (void)write_partition(graph, adjacency, parts, info, dir / "plain.2", true);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    // The whole graph back from the parts: A, vertex data, parts and chunks as written.
    const WholePartition whole = read_whole_partition(dir / "cora.2");
    CHECK(whole.adjacency.indptr == adjacency.indptr);
    CHECK(whole.adjacency.indices == adjacency.indices);
    CHECK(whole.adjacency.values == adjacency.values);
    CHECK(whole.graph.features.values == graph.features.values);
    CHECK(whole.graph.labels == graph.labels);
    CHECK(whole.graph.train_mask == graph.train_mask);
    CHECK(whole.graph.test_mask == graph.test_mask);
    CHECK(whole.parts.owner == parts.owner);
    CHECK(whole.chunks.owner == chunks.owner);

    // The pipeline's part: the stored chunks as row ranges, original order inside each chunk,
    // equal to reordering the whole graph by the same chunk map.
    const ChunkedPart chunked =
        load_chunked_part(dir / "cora.2", comm, ChunkOptions{.chunks = 0}, 0);
    LocalPart expected = one_part(graph);
    CHECK(reorder_into_chunks(expected, chunks) == chunked.chunk_offsets);
    const LocalGraph& g = chunked.part.graph;
    CHECK(g.owned_original == expected.graph.owned_original);
    CHECK(g.inner.row_ptr == expected.graph.inner.row_ptr);
    CHECK(g.inner.col_idx == expected.graph.inner.col_idx);
    CHECK(g.inner.values == expected.graph.inner.values);
    CHECK(g.owned_degree == expected.graph.owned_degree);
    CHECK(chunked.part.features.values == expected.features.values);
    CHECK(chunked.part.global_train == 140);
    REQUIRE(chunked.chunk_offsets.size() == 5);
    for (std::size_t c = 0; c < 4; ++c) {
        for (index_t r = chunked.chunk_offsets[c]; r < chunked.chunk_offsets[c + 1]; ++r) {
            const auto v = static_cast<std::size_t>(g.owned_original[static_cast<std::size_t>(r)]);
            CHECK(chunks.owner[v] == static_cast<int>(c));
            CHECK(parts.owner[v] == static_cast<int>(c / 2));
            if (r > chunked.chunk_offsets[c]) {
                CHECK(g.owned_original[static_cast<std::size_t>(r) - 1] <
                      static_cast<global_id>(v));
            }
        }
    }
    CHECK(load_chunked_part(dir / "cora.2", comm, ChunkOptions{.chunks = 4}, 0).chunk_offsets ==
          chunked.chunk_offsets);

    CHECK_THROWS_WITH(load_chunked_part(dir / "cora.2", comm, ChunkOptions{.chunks = 8}, 0),
                      Contains("chunks = 8: " + (dir / "cora.2") + " has 4 chunks (2 per part)"));
    CHECK_THROWS_WITH(
        load_chunked_part(dir / "plain.2", comm, ChunkOptions{.chunks = 0}, 0),
        Contains("plain.2: no chunk map for the layer pipeline (parallel = pipeline): make one "
                 "with 'strata partition "
                 "--data data/cora.h5 --parts 2 --chunks C --out DIR', or pass the graph .h5"));
    CHECK_THROWS_WITH(load_chunked_part(dir / "cora.2", comm, ChunkOptions{.chunks = 0}, 3),
                      Contains("--split-index 3 out of range"));
}

}  // namespace
}  // namespace strata
