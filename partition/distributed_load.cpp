// load_local_part: directory → read_part; file → read, merge A, partition on rank 0,
// broadcast; then the split is selected. Plus the two pieces load_chunked_part shares.
#include "partition/distributed_load.hpp"

#include <filesystem>
#include <vector>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

LocalPart load_all_splits(const std::string& path, Communicator& comm,
                          const InMemoryPartitionOptions& options, int split_index) {
    const int rank = comm.rank();
    const int size = comm.size();
    if (std::filesystem::is_directory(path)) {
        return read_part(path, rank, size);
    }
    // Every rank reads the (read-only) file; only rank 0 partitions, and broadcasts the owners.
    const GraphDataset graph = read_whole_graph(path, split_index);
    const GlobalCsr adjacency = adjacency_matrix(graph);
    Partition partition;
    partition.num_parts = size;
    partition.owner.assign(static_cast<std::size_t>(graph.num_vertices()), 0);
    if (size > 1) {
        STRATA_CHECK(graph.num_vertices() >= size, path, ": ", graph.num_vertices(),
                     " vertices cannot be split over ", size, " ranks");
        if (rank == 0) {
            if (options.method == "metis") {
                partition = partition_metis(graph, size, MetisOptions{.seed = options.seed});
            } else if (options.method == "random") {
                partition = partition_random(graph.num_vertices(), size, options.seed);
            } else if (options.method == "block") {
                partition = partition_block(graph.num_vertices(), size);
            } else {
                STRATA_FAIL("--partition-method: unknown method '", options.method,
                            "' (metis, random or block)");
            }
        }
        broadcast_owners(partition, comm);
    }
    return build_local_part(graph, adjacency, partition, rank);
}

}  // namespace

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
