// load_local_part: directory → read_part; a graph .h5 with one rank → read it whole; with
// K > 1 ranks → each rank reads its slice, the owners come from the method, and
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

namespace strata {
namespace {

/// --partition-method metis with K > 1 ranks: rank 0 runs partition_metis_adjacency, then
/// broadcasts the owners (4 bytes per vertex); every rank keeps its slice's.
std::vector<int> metis_owners_on_rank0(const std::string& path, int num_parts, std::uint64_t seed,
                                       const GraphSlice& slice, Communicator& comm) {
    Partition partition;
    partition.num_parts = num_parts;
    partition.owner.assign(static_cast<std::size_t>(slice.num_vertices), 0);
    if (comm.rank() == 0) {
        partition = partition_metis_adjacency(path, slice.num_vertices, num_parts, seed);
    }
    broadcast_owners(partition, comm);
    return {
        partition.owner.begin() + static_cast<std::ptrdiff_t>(slice.first()),
        partition.owner.begin() + static_cast<std::ptrdiff_t>(slice.first() + slice.num_local())};
}

/// K > 1 ranks from a graph file: no rank holds the whole graph (metis: rank 0 its adjacency).
LocalPart load_sliced(const std::string& path, Communicator& comm,
                      const InMemoryPartitionOptions& options, int split_index) {
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
    std::vector<int> owner;
    GraphSlice slice = read_graph_slice(path, offsets, rank);
    check_split_index(slice.num_splits, split_index, path);
    if (options.method == "metis") {
        owner = metis_owners_on_rank0(path, size, options.seed, slice, comm);
    } else if (options.method == "ptscotch") {
        owner = partition_ptscotch(slice, size, PtScotchOptions{.seed = options.seed}, comm);
    } else if (options.method == "random") {
        owner = random_owners_of(n, size, options.seed, slice.first(), slice.num_local());
    } else {
        owner = block_owners_of(n, size, slice.first(), slice.num_local());
    }
    std::vector<LocalPart> parts = distribute_parts(std::move(slice), owner, size, comm);
    return std::move(parts.front());
}

LocalPart load_all_splits(const std::string& path, Communicator& comm,
                          const InMemoryPartitionOptions& options, int split_index) {
    if (std::filesystem::is_directory(path)) {
        return read_part(path, comm.rank(), comm.size());
    }
    if (comm.size() > 1) {
        return load_sliced(path, comm, options, split_index);
    }
    // One rank: the whole graph is the part (the method is ignored).
    const GraphDataset graph = read_whole_graph(path, split_index);
    return build_local_part(graph, adjacency_matrix(graph),
                            partition_block(graph.num_vertices(), 1), 0);
}

}  // namespace

Partition partition_metis_adjacency(const std::string& path, global_id num_vertices, int num_parts,
                                    std::uint64_t seed) {
    GraphSlice whole =
        read_graph_slice(path, {0, num_vertices}, 0, SliceReadOptions{.vertex_data = false});
    GraphDataset adjacency;
    adjacency.indptr = std::move(whole.indptr);
    adjacency.indices = std::move(whole.indices);
    adjacency.edge_weight = std::move(whole.edge_weight);
    adjacency.train_mask.assign(static_cast<std::size_t>(num_vertices), 0);
    return partition_metis(adjacency, num_parts, MetisOptions{.seed = seed});
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
                          const InMemoryPartitionOptions& options, int split_index) {
    LocalPart part = load_all_splits(path, comm, options, split_index);
    select_split(part, split_index, comm, path);
    return part;
}

}  // namespace strata
