// Chunks for --parallel pipeline (GNNPipe): every stage holds the whole graph as one part whose
// rows are cut into C contiguous chunks. chunk_partition picks the chunk of every vertex (METIS
// into oversplit*C parts, merged oversplit-to-1 at random); reorder_into_chunks renumbers a
// one-part LocalPart so that each chunk is a row range; load_chunked_part does both on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "partition/local_part.hpp"
#include "partition/partition.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

struct ChunkOptions {
    int chunks = 1;          ///< C >= 1
    std::uint64_t seed = 0;  ///< METIS seed (< 2^31) and the merge shuffle's seed
    int oversplit = 4;       ///< METIS parts per chunk before the random merge (>= 1)
};

/// Checks 1 <= C <= N and oversplit >= 1: "--chunks 0: must be at least 1", "--chunks 5000: the
/// graph has 2708 vertices" (C > N). Cheap; load_chunked_part calls it on every rank.
void check_chunk_options(const ChunkOptions& options, global_id num_vertices);

/// The chunk of every vertex (num_parts = C): METIS (partition_metis, vertices balanced) into
/// K = m*C parts with m = min(oversplit, N / C) (so fewer METIS parts on tiny graphs), then the
/// K part ids are shuffled by a seeded stream (partition_random over the part ids) and merged
/// m-to-1. A chunk left empty (METIS may leave parts empty on tiny or disconnected graphs) takes
/// the last vertex of the largest chunk (lowest id on ties), in chunk order: deterministic, and
/// always possible since C <= N. C == 1: every vertex in chunk 0, no METIS call. Same graph and
/// options => same result. Throws strata::Error (check_chunk_options, or METIS's errors).
[[nodiscard]] Partition chunk_partition(const GraphView& graph, const ChunkOptions& options);

/// Reorders a one-part LocalPart (graph.num_parts == 1, no halo) so that chunk c is rows
/// [offsets[c], offsets[c+1]), rows keeping their current order inside a chunk (renumber: a
/// stable counting sort). `chunks.owner` is indexed by ORIGINAL dataset id (owned_original).
/// Permuted by reorder_rows (partition/local_order.hpp): the inner CSR's rows and columns
/// (columns re-sorted ascending in each row, values moved with them), owned_original (still the
/// original id of each row, so it is no longer ascending: validate_local_graph's ascending check
/// does not hold for a reordered part), owned_degree, features, labels, every split's masks and
/// the chunk map; interior_rows becomes every row and boundary_rows none. Returns the C + 1
/// offsets. Throws strata::Error if the part has more than one part or a halo, or the partition's
/// size differs from the part's rows.
[[nodiscard]] std::vector<index_t> reorder_into_chunks(LocalPart& part, const Partition& chunks);

/// Chunks nested in parts, for `strata partition --chunks C`: part p's vertices are cut into
/// C/K chunks by chunk_partition's method applied to the subgraph they induce (METIS on the
/// part, merged at random; seed options.seed + p), and part p's chunks get the global ids
/// [p C/K, (p+1) C/K). options.chunks = C must be a multiple of K and C/K at most the smallest
/// part's size ("--chunks 9 with --parts 2: every part needs the same number of chunks (a
/// multiple of 2)", "--chunks 64 with --parts 2: part 1 has 20 vertices, fewer than its 32
/// chunks"). Throws strata::Error.
[[nodiscard]] Partition chunk_within_parts(const GraphView& graph, const Partition& parts,
                                           const ChunkOptions& options);

struct ChunkedPart {
    LocalPart part;                        ///< whole graph, chunk-contiguous rows, split selected
    std::vector<index_t> chunk_offsets{};  ///< C + 1
};

/// Every rank of `comm` builds the whole graph as one LocalPart whose chunks are row ranges,
/// then selects split `split_index` with the whole graph's counts (no sum over the ranks:
/// select_split_locally). From a graph .h5 `path` (read_whole_graph), rank 0 computes
/// chunk_partition (options.chunks chunks; run_alone) and broadcasts the owners. From a partition
/// directory made with `strata partition --chunks C` every rank reads all part files
/// (read_whole_partition) and takes the stored chunk map; options.chunks must be 0 or C
/// ("<dir>: --chunks 8, but the partition has 4 chunks (2 per part)"), and a directory without a
/// chunk map names the command that makes one. Either way rows keep their original-id order
/// inside a chunk. Collective over `comm`.
[[nodiscard]] ChunkedPart load_chunked_part(const std::string& path, Communicator& comm,
                                            const ChunkOptions& options, int split_index);

}  // namespace strata
