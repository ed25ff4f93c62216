// load_local_part: directory → read_part; a graph .h5 with one rank → read it whole; with
// K > 1 ranks → the owners come from the method (block, random, and METIS on rank 0, before any
// rank reads its slice; PT-Scotch on the slices), each rank reads its slice, and
// distribute_parts builds every rank's part. Then the split is selected. Plus the two pieces
// load_chunked_part shares.
#include "partition/distributed_load.hpp"

#include <filesystem>
#include <utility>
#include <vector>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/graph_slice_io.hpp"
#include "partition/distribute_parts.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition.hpp"
#include "partition/ptscotch_partitioner.hpp"
#include "partition/slice_owners.hpp"
#include "src/base/error.hpp"
#include "src/comm/run_alone.hpp"

namespace strata {
namespace {

/// build_metis_graph of the file's adjacency, read alone (indptr and indices: no vertex data).
/// What was read is freed on return, before METIS runs: at ogbn-products scale (117.8M
/// entries) the 64-bit indices and the weights are 1.4 GB that METIS's 32-bit copy replaces.
MetisGraph metis_graph_of_file(const std::string& path, global_id num_vertices) {
    GraphSlice whole =
        read_graph_slice(path, {0, num_vertices}, 0, SliceReadOptions{.vertex_data = false});
    GraphDataset adjacency;
    adjacency.indptr = std::move(whole.indptr);
    adjacency.indices = std::move(whole.indices);
    adjacency.train_mask.assign(static_cast<std::size_t>(num_vertices), 0);
    return build_metis_graph(adjacency, MetisOptions{});
}

/// --partition-method metis with K > 1 ranks: rank 0 runs partition_metis_adjacency alone
/// (run_alone: the others' wait limit bounds its silence, not its work), then broadcasts the
/// owners (4 bytes per vertex); every rank keeps those of its slice's rows
/// [offsets[rank], offsets[rank + 1]).
std::vector<int> metis_owners_on_rank0(const std::string& path,
                                       const std::vector<global_id>& offsets, std::uint64_t seed,
                                       Communicator& comm) {
    const int num_parts = comm.size();
    Partition partition;
    partition.num_parts = num_parts;
    partition.owner.assign(static_cast<std::size_t>(offsets.back()), 0);
    run_alone(comm, 0, "serial METIS of the whole graph", [&] {
        partition = partition_metis_adjacency(path, offsets.back(), num_parts, seed);
    });
    broadcast_owners(partition, comm);
    const auto rank = static_cast<std::size_t>(comm.rank());
    return {partition.owner.begin() + static_cast<std::ptrdiff_t>(offsets[rank]),
            partition.owner.begin() + static_cast<std::ptrdiff_t>(offsets[rank + 1])};
}

/// The file's number of splits, read before any expensive step: an empty slice reads the
/// attributes and the shapes (and one indptr entry), no rows.
int num_splits_of(const std::string& path, global_id num_vertices) {
    return read_graph_slice(path, {0, 0, num_vertices}, 0).num_splits;
}

/// K > 1 ranks from a graph file: no rank holds the whole graph (metis: rank 0 its adjacency).
LocalPart load_sliced(const std::string& path, Communicator& comm,
                      const InMemoryPartitionOptions& options, int split_index,
                      const PartReadOptions& read) {
    const int rank = comm.rank();
    const int size = comm.size();
    STRATA_CHECK(std::filesystem::exists(path), path, ": no such file or directory");
    const std::vector<global_id> offsets = slice_offsets(path, size);  // rows + edges balanced
    const global_id n = offsets.back();
    STRATA_CHECK(n >= size, path, ": ", n, " vertices cannot be split over ", size, " ranks");
    STRATA_CHECK(options.method == "metis" || options.method == "ptscotch" ||
                     options.method == "random" || options.method == "block",
                 "--partition-method: unknown method '", options.method,
                 "' (metis, ptscotch, random or block)");
    check_split_index(num_splits_of(path, n), split_index, path);
    // The owners of the slice's rows; all but PT-Scotch's before the slice is read, so that
    // rank 0 runs METIS without its slice (docs/scale.md, "Memory per rank to expect").
    const global_id first = offsets[static_cast<std::size_t>(rank)];
    const global_id count = offsets[static_cast<std::size_t>(rank) + 1] - first;
    std::vector<int> owner;
    if (size == 1) {
        owner.assign(static_cast<std::size_t>(count), 0);  // one rank: the whole graph
    } else if (options.method == "metis") {
        owner = metis_owners_on_rank0(path, offsets, options.seed, comm);
    } else if (options.method == "random") {
        owner = random_owners_of(n, size, options.seed, first, count);
    } else if (options.method == "block") {
        owner = block_owners_of(n, size, first, count);
    }
    if (size > 1 && options.method == "ptscotch") {
        // PT-Scotch on the adjacency alone (its edges freed once the symmetric graph is built),
        // then the slice with its vertex data: the two are never held together.
        owner = partition_ptscotch(
            read_graph_slice(path, offsets, rank, SliceReadOptions{.vertex_data = false}), size,
            PtScotchOptions{.seed = options.seed}, comm);
    }
    GraphSlice slice = read_graph_slice(path, offsets, rank,
                                        {.bytes_read = read.bytes_read, .features = read.features});
    std::vector<LocalPart> parts = distribute_parts(std::move(slice), owner, size, comm);
    return std::move(parts.front());
}

LocalPart load_all_splits(const std::string& path, Communicator& comm,
                          const InMemoryPartitionOptions& options, int split_index,
                          const PartReadOptions& read) {
    if (std::filesystem::is_directory(path)) {
        return read_part(path, comm.rank(), comm.size(), read);
    }
    // One rank reading a column block (a 1 x F grid's rank) reads it as a slice of every row.
    if (comm.size() > 1 || read.features.count > 1) {
        return load_sliced(path, comm, options, split_index, read);
    }
    // One rank: the whole graph is the part (the method is ignored).
    const GraphDataset graph = read_whole_graph(path, split_index);
    return build_local_part(graph, adjacency_matrix(graph),
                            partition_block(graph.num_vertices(), 1), 0);
}

}  // namespace

Partition partition_metis_adjacency(const std::string& path, global_id num_vertices, int num_parts,
                                    std::uint64_t seed) {
    const MetisGraph graph = metis_graph_of_file(path, num_vertices);
    return partition_metis(graph, num_parts, seed);
}

GraphDataset read_whole_graph(const std::string& path, int split_index) {
    STRATA_CHECK(std::filesystem::exists(path), path, ": no such file or directory");
    GraphDataset graph = read_graph(path);
    check_split_index(graph.num_splits, split_index, path);
    return graph;
}

void broadcast_owners(Partition& partition, Communicator& comm, int root) {
    comm.broadcast(std::as_writable_bytes(std::span<int>(partition.owner)), root);
}

LocalPart load_local_part(const std::string& path, Communicator& comm,
                          const InMemoryPartitionOptions& options, int split_index,
                          const PartReadOptions& read) {
    LocalPart part = load_all_splits(path, comm, options, split_index, read);
    select_split(part, split_index, comm, path);
    return part;
}

}  // namespace strata
