// The hybrid's mirror lists of the real graph: the chunks as strata train makes them, the
// adjacency permuted into chunk order, way_mirrors and pack_mirror_lists over it.
#include "planner/way_stats.hpp"

#include <algorithm>
#include <limits>

#include "datasets/adjacency.hpp"
#include "partition/chunking.hpp"
#include "partition/local_order.hpp"
#include "partition/partition.hpp"
#include "src/base/error.hpp"
#include "src/nn/way_mirrors.hpp"

namespace strata::planner {

WayStats way_stats(const HostCsr& structure, std::span<const index_t> chunk_offsets, int ways) {
    const WayMirrors mirrors = way_mirrors(structure, chunk_offsets, ways);
    const MirrorLists lists = pack_mirror_lists(mirrors);
    WayStats out;
    out.chunks = mirrors.chunks;
    out.ways = ways;
    for (int c = 0; c < mirrors.chunks; ++c) {
        for (int w = 0; w < ways; ++w) {
            out.forward_rows += static_cast<std::int64_t>(mirrors.forward_rows(c, w).size());
            out.backward_rows += static_cast<std::int64_t>(mirrors.backward_rows(c, w).size());
        }
    }
    out.list_rows = static_cast<std::int64_t>(lists.rows.size());
    out.send_rows = static_cast<std::int64_t>(lists.send_rows);
    out.recv_rows = static_cast<std::int64_t>(lists.recv_rows);
    const int per_way = mirrors.chunks / ways;
    for (int c = 0; c < mirrors.chunks; ++c) {
        const auto i = static_cast<std::size_t>(c);
        out.largest_chunk = std::max(out.largest_chunk, chunk_offsets[i + 1] - chunk_offsets[i]);
    }
    for (int w = 0; w < ways; ++w) {
        const auto first = static_cast<std::size_t>(w * per_way);
        const auto end = static_cast<std::size_t>((w + 1) * per_way);
        out.largest_way = std::max(out.largest_way, chunk_offsets[end] - chunk_offsets[first]);
    }
    return out;
}

ChunkedStructure chunked_structure(const GraphDataset& graph, int chunks, std::uint64_t seed) {
    const Partition partition = chunk_partition(graph, {.chunks = chunks, .seed = seed});
    const Renumbering numbering = renumber(partition);  // stable: id order inside a chunk
    const GlobalCsr a = adjacency_matrix(graph);
    const global_id n = a.num_rows();
    STRATA_CHECK(n <= static_cast<global_id>(std::numeric_limits<index_t>::max()) &&
                     a.nnz() <= static_cast<std::int64_t>(std::numeric_limits<index_t>::max()),
                 "chunked_structure: ", n, " vertices and ", a.nnz(),
                 " entries do not fit 32-bit row ids and offsets");
    // A in its id order, then permuted into chunk order as reorder_into_chunks permutes a part.
    HostCsr host;
    host.rows = static_cast<index_t>(n);
    host.cols = static_cast<index_t>(n);
    host.row_ptr.assign(a.indptr.begin(), a.indptr.end());
    host.col_idx.assign(a.indices.begin(), a.indices.end());
    host.values = a.values;
    const std::vector<index_t> order(numbering.original.begin(), numbering.original.end());
    const std::vector<index_t> inverse(numbering.new_id.begin(), numbering.new_id.end());
    ChunkedStructure out;
    out.structure = permute_square(host, order, inverse);
    out.offsets.reserve(numbering.part_offsets.size());
    for (const global_id offset : numbering.part_offsets) {
        out.offsets.push_back(static_cast<index_t>(offset));
    }
    return out;
}

}  // namespace strata::planner
