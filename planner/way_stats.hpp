// The hybrid pipeline's (W ways a stage, src/nn/way_mirrors.hpp) mirror lists of the real graph,
// reduced to what strata plan prices. The chunks are the ones strata train builds for
// `--parallel pipeline --chunks C` from a graph .h5 (chunk_partition with the run's seed; rows in
// chunk order), the lists way_mirrors over the graph's adjacency in that order, as the executor
// builds them:
//   forward_rows   Σ over chunks c and ways w of |forward list (c, w)|: rows sent per epoch for
//                  each tensor exchanged before a forward step (pipeline_way_bytes)
//   backward_rows  likewise, per tensor exchanged before a backward step
//   list_rows, send_rows, recv_rows   MirrorLists (pack_mirror_lists): the lists on the device
//                  and the exchange buffers' rows (PipelineExecutor's mirror_bytes)
//   largest_chunk, largest_way        rows of the largest chunk and of the largest way's chunks
//                  (the chunk arena; the accuracy guard's check step at one chunk per way)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "src/tensor/host_csr.hpp"

namespace strata::planner {

struct WayStats {
    int chunks = 0;
    int ways = 0;
    std::int64_t forward_rows = 0;
    std::int64_t backward_rows = 0;
    std::int64_t list_rows = 0;
    std::int64_t send_rows = 0;
    std::int64_t recv_rows = 0;
    index_t largest_chunk = 0;
    index_t largest_way = 0;
};

/// From the operator's structure in chunk order (rows = destinations) and the C + 1 chunk
/// offsets, C a multiple of `ways` (way_mirrors' refusal otherwise).
[[nodiscard]] WayStats way_stats(const HostCsr& structure, std::span<const index_t> chunk_offsets,
                                 int ways);

/// The graph's adjacency (adjacency_matrix) with its rows and columns in chunk order and the
/// chunk offsets, for `chunks` chunks as strata train makes them (chunk_partition, seed `seed`;
/// rows keep their id order inside a chunk, as reorder_into_chunks does).
struct ChunkedStructure {
    HostCsr structure;
    std::vector<index_t> offsets;
};
[[nodiscard]] ChunkedStructure chunked_structure(const GraphDataset& graph, int chunks,
                                                 std::uint64_t seed);

}  // namespace strata::planner
