// In-memory loads: owners by method, then the file loads' own builders.
#include "partition/in_memory_load.hpp"

#include <utility>
#include <vector>

#include "datasets/adjacency.hpp"
#include "datasets/graph_slice_io.hpp"
#include "partition/distribute_parts.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition.hpp"
#include "partition/ptscotch_partitioner.hpp"
#include "partition/slice_owners.hpp"
#include "src/base/error.hpp"

namespace strata {

LocalPart local_part_in_memory(const GraphView& graph, Communicator& comm,
                               const InMemoryPartitionOptions& options, int split_index,
                               const std::string& what) {
    check_split_index(graph.num_splits, split_index, what);
    const int size = comm.size();
    const global_id n = graph.num_vertices();
    LocalPart part;
    if (size == 1) {
        part = build_local_part(graph, adjacency_matrix(graph), partition_block(n, 1), 0);
    } else {
        STRATA_CHECK(n >= size, what, ": ", n, " vertices cannot be split over ", size, " ranks");
        // Rows + edges balanced, as a graph file is sliced (load_sliced): the same parts as the
        // file.
        const std::vector<global_id> offsets = slice_offsets(graph.indptr, size);
        const int rank = comm.rank();
        const global_id first = offsets[static_cast<std::size_t>(rank)];
        const global_id count = offsets[static_cast<std::size_t>(rank) + 1] - first;
        std::vector<int> owner;
        if (options.method == "metis") {
            Partition all{size, std::vector<int>(static_cast<std::size_t>(n), 0)};
            if (rank == 0) {
                all = partition_metis(build_metis_graph(graph, MetisOptions{}, what), size,
                                      options.seed);
            }
            broadcast_owners(all, comm);
            owner.assign(all.owner.begin() + static_cast<std::ptrdiff_t>(first),
                         all.owner.begin() + static_cast<std::ptrdiff_t>(first + count));
        } else if (options.method == "random") {
            owner = random_owners_of(n, size, options.seed, first, count);
        } else if (options.method == "block") {
            owner = block_owners_of(n, size, first, count);
        } else {
            STRATA_CHECK(options.method == "ptscotch", "partition_method = '", options.method,
                         "': expected ptscotch, metis, random or block");
            owner = partition_ptscotch(slice_of(graph, offsets, rank), size,
                                       PtScotchOptions{.seed = options.seed}, comm);
        }
        std::vector<LocalPart> parts =
            distribute_parts(slice_of(graph, offsets, rank), owner, size, comm);
        part = std::move(parts.front());
    }
    select_split(part, split_index, comm, what);
    return part;
}

ChunkedPart chunked_part_in_memory(const GraphView& graph, Communicator& comm,
                                   const ChunkOptions& options, int split_index,
                                   const std::string& what) {
    check_split_index(graph.num_splits, split_index, what);
    const global_id n = graph.num_vertices();
    check_chunk_options(options, n);  // on every rank, so that no rank waits in the broadcast
    Partition chunks{options.chunks, std::vector<int>(static_cast<std::size_t>(n), 0)};
    if (comm.rank() == 0) {
        chunks = chunk_partition(graph, options);
    }
    broadcast_owners(chunks, comm);
    ChunkedPart chunked;
    chunked.part = build_local_part(graph, adjacency_matrix(graph), partition_block(n, 1), 0);
    chunked.chunk_offsets = reorder_into_chunks(chunked.part, chunks);
    select_split_locally(chunked.part, split_index, what);
    return chunked;
}

}  // namespace strata
