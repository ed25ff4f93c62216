// distribute_parts on every rank equals build_local_part on the whole graph, bit for bit: Cora
// and a weighted directed graph (unsorted rows, duplicates, self loops, empty rows), block and
// random partitions, K = P parts and K = P + 2 (several parts per rank), two splits, through
// MpiCommunicator's all_to_all and (the small graph) the default gather rounds; the parallel
// partition writer against the serial one; the one-line errors. Run under mpirun with 1 to 5 ranks.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "datasets/graph_slice_io.hpp"
#include "partition/distribute_parts.hpp"
#include "partition/slice_owners.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "tests/partition/checks.hpp"
#include "tests/partition/fixtures.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/gather_all_to_all.hpp"
#include "tests/support/graphs.hpp"

#include <unistd.h>

namespace strata {
namespace {

using Catch::Matchers::Contains;

/// Every rank's parts from its slice, compared with build_local_part; returns the first
/// difference (empty: all equal) on this rank.
std::string compare(const GraphDataset& graph, const Partition& partition, Communicator& comm,
                    std::size_t batch_bytes) {
    const std::vector<global_id> offsets = slice_offsets(graph.num_vertices(), comm.size());
    const GraphSlice slice = slice_of(graph, offsets, comm.rank());
    const auto first = static_cast<std::size_t>(slice.first());
    const std::span<const int> owner =
        std::span<const int>(partition.owner)
            .subspan(first, static_cast<std::size_t>(slice.num_local()));
    // Small batches also take the overload that empties the slice once it is sent.
    const std::vector<LocalPart> parts =
        batch_bytes == default_batch_bytes
            ? distribute_parts(slice, owner, partition.num_parts, comm, batch_bytes)
            : distribute_parts(GraphSlice(slice), owner, partition.num_parts, comm, batch_bytes);
    const GlobalCsr adjacency = adjacency_matrix(graph);
    std::size_t k = 0;
    for (int p = comm.rank(); p < partition.num_parts; p += comm.size(), ++k) {
        if (k >= parts.size()) {
            return "part " + std::to_string(p) + " missing";
        }
        std::string why;
        if (!test::same_part(parts[k], build_local_part(graph, adjacency, partition, p), why)) {
            return "part " + std::to_string(p) + ": " + why;
        }
    }
    return k == parts.size() ? "" : "extra parts";
}

/// `gathers`: also through Communicator's default all_to_all (gather rounds), not only
/// MpiCommunicator's point-to-point one.
void check_all(const GraphDataset& graph, std::uint64_t seed, std::size_t small_batch,
               bool gathers) {
    MpiCommunicator mpi;
    test::GatherAllToAll gather_comm(mpi);
    const int size = mpi.size();
    for (const bool via_gathers : {false, true}) {
        if (via_gathers && !gathers) {
            continue;
        }
        Communicator& comm = via_gathers ? static_cast<Communicator&>(gather_comm) : mpi;
        for (const int k : {size, size + 2}) {
            for (const bool random : {false, true}) {
                const Partition partition = random ? partition_random(graph.num_vertices(), k, seed)
                                                   : partition_block(graph.num_vertices(), k);
                // One batch, and batches of a few rows (a different count on every rank).
                for (const std::size_t batch : {default_batch_bytes, small_batch}) {
                    INFO(graph.name << ": " << k << " parts, " << (random ? "random" : "block")
                                    << ", batches of " << batch << " bytes"
                                    << (via_gathers ? ", gather rounds" : ""));
                    const std::string why = compare(graph, partition, comm, batch);
                    INFO(why);
                    CHECK(test::all_ranks(why.empty()));
                }
            }
        }
    }
}

TEST_CASE("distribute_parts equals build_local_part on Cora", "[distribute]") {
    check_all(test::cora(), 7, std::size_t{400} << 10, false);  // about 70 rows a batch
}

TEST_CASE("distribute_parts equals build_local_part on a weighted directed graph", "[distribute]") {
    GraphDataset graph = test::weighted_directed_graph(431, 3, /*dyadic=*/false);
    test::add_second_split(graph);
    check_all(graph, 11, 700, true);  // about 6 rows a batch
}

TEST_CASE("slice owners equal the whole block and random partitions' rows", "[distribute]") {
    for (const auto& [n, k] : {std::pair<global_id, int>{1, 1}, {10, 3}, {1000, 7}, {13, 13}}) {
        const Partition block = partition_block(n, k);
        const Partition random = partition_random(n, k, 42);
        for (const int slices : {1, 2, 5}) {
            const std::vector<global_id> offsets = slice_offsets(n, slices);
            for (int r = 0; r < slices; ++r) {
                const global_id first = offsets[static_cast<std::size_t>(r)];
                const global_id count = offsets[static_cast<std::size_t>(r) + 1] - first;
                const auto b = block.owner.begin() + first;
                const auto q = random.owner.begin() + first;
                CHECK(block_owners_of(n, k, first, count) == std::vector<int>(b, b + count));
                CHECK(random_owners_of(n, k, 42, first, count) == std::vector<int>(q, q + count));
            }
        }
    }
    CHECK_THROWS_WITH(block_owners_of(3, 4, 0, 3),
                      Contains("cannot split 3 vertices into 4 parts (parts must be <= vertices)"));
}

TEST_CASE("distribute_parts rejects an owner outside [0, K)", "[distribute]") {
    MpiCommunicator comm;
    const GraphDataset graph = test::weighted_directed_graph(40, 5, /*dyadic=*/true);
    const GraphSlice slice = slice_of(graph, slice_offsets(40, comm.size()), comm.rank());
    std::vector<int> owner(static_cast<std::size_t>(slice.num_local()), 0);
    if (comm.rank() == 0) {
        owner[1] = 9;
    }
    // Every rank reaches the same check after the owners are shared, so all throw together.
    CHECK_THROWS_WITH(distribute_parts(slice, owner, 2, comm),
                      Contains("owner of vertex 1 is 9, outside [0, 2)"));
    std::vector<int> short_owner(owner.size() + 1, 0);
    CHECK_THROWS_WITH(distribute_parts(slice, short_owner, 2, comm),
                      Contains(" owners for " + std::to_string(slice.num_local()) + " slice rows"));
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST_CASE("the parallel writer writes the directory the serial writer writes", "[distribute]") {
    // write_partition_parallel (every rank writes its parts) against write_partition on rank 0
    // for the same partition: every part file reads back equal, and partition.json agrees on
    // the id, offsets, totals and every part's statistics. A rank's error leaves nothing.
    MpiCommunicator comm;
    GraphDataset graph = test::weighted_directed_graph(211, 4, /*dyadic=*/false);
    const int k = comm.size() + 1;
    const Partition partition = partition_random(graph.num_vertices(), k, 5);
    // A per-job directory every rank agrees on (rank 0's pid).
    std::vector<std::int64_t> id{comm.rank() == 0 ? static_cast<std::int64_t>(getpid()) : 0};
    comm.allreduce_max(id);
    const auto base = std::filesystem::temp_directory_path() /
                      ("strata_test_parallel_write_" + std::to_string(id[0]));
    const std::string parallel = (base / "parallel").string();
    const std::string serial = (base / "serial").string();
    if (comm.rank() == 0) {
        std::filesystem::create_directories(base);
    }
    comm.barrier();
    PartitionInfo info;
    info.method = "random";
    info.seed = 5;
    info.source_checksum = "content64:test";
    const std::vector<global_id> offsets = slice_offsets(graph.num_vertices(), comm.size());
    const GraphSlice slice = slice_of(graph, offsets, comm.rank());
    const std::vector<int> owner(
        partition.owner.begin() + static_cast<std::ptrdiff_t>(slice.first()),
        partition.owner.begin() + static_cast<std::ptrdiff_t>(slice.first() + slice.num_local()));
    const std::vector<LocalPart> parts = distribute_parts(slice, owner, k, comm);
    const PartitionTotals totals{.num_edges = graph.num_edges(),
                                 .num_features = graph.features.cols,
                                 .num_classes = graph.num_classes};
    const PartitionReport written =
        write_partition_parallel(parts, partition, info, totals, parallel, false, comm);
    if (comm.rank() == 0) {
        (void)write_partition(graph, adjacency_matrix(graph), partition, info, serial, false);
    }
    comm.barrier();
    std::string why;
    bool same = true;
    for (int p = comm.rank(); p < k; p += comm.size()) {
        same = same && test::same_part(read_part(parallel, p, k), read_part(serial, p, k), why);
    }
    INFO(why);
    CHECK(test::all_ranks(same));
    if (comm.rank() == 0) {
        const PartitionReport a = read_partition_report(parallel);
        const PartitionReport b = read_partition_report(serial);
        CHECK(a.partition_id == b.partition_id);
        CHECK(written.partition_id == b.partition_id);
        CHECK(a.part_offsets == b.part_offsets);
        CHECK(a.nnz == b.nnz);
        CHECK(a.num_edges == b.num_edges);
        CHECK(a.global_train == b.global_train);
        REQUIRE(a.parts.size() == b.parts.size());
        for (std::size_t p = 0; p < a.parts.size(); ++p) {
            CHECK(a.parts[p].edges == b.parts[p].edges);
            CHECK(a.parts[p].halo == b.parts[p].halo);
            CHECK(a.parts[p].rows_sent == b.parts[p].rows_sent);
            CHECK(a.parts[p].send == b.parts[p].send);
        }
    }
    // The directory exists now: writing it again without force fails on every rank, and the
    // existing directory is left as it was.
    CHECK_THROWS_WITH(
        write_partition_parallel(parts, partition, info, totals, parallel, false, comm),
        Contains(comm.rank() == 0 ? "parallel" : "failed on another rank"));
    CHECK(test::all_ranks(std::filesystem::exists(parallel + "/partition.json")));
    comm.barrier();
    if (comm.rank() == 0) {
        std::filesystem::remove_all(base);
    }
}

}  // namespace
}  // namespace strata
