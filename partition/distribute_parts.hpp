// distribute_parts: from one GraphSlice per rank and the part of each of its rows, every rank
// builds the LocalParts it holds, equal bit for bit to build_local_part on the whole graph,
// without any rank holding the whole graph (per-rank loading of a graph .h5, issue 16).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "datasets/graph_slice.hpp"
#include "partition/local_part.hpp"
#include "partition/partition.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

/// Stored bytes of slice rows sent per rank in one round of the row redistribution (16 MiB):
/// small next to a part, so that the load holds the slice, the part and a few batches.
inline constexpr std::size_t default_batch_bytes = std::size_t{16} << 20;

/// Collective over `comm` (P ranks; `slice` is this rank's, slice.rank == comm.rank()).
/// slice_owner[i] in [0, num_parts) is the part of slice row i. Part p is built on rank p % P;
/// returns this rank's parts in ascending part order (for training K == P: one part, rank's).
/// Each equals build_local_part(graph, adjacency_matrix(graph), partition, p) for the whole
/// graph and the partition the owners make: same part-major renumbering (renumber), inner and
/// compressed halo blocks, exchange pattern, send lists, degrees of owned and received rows,
/// vertex data, and global_train/val/test of split 0.
///
/// What moves, and what each rank holds:
/// - every rank's owners to every rank (gather_owners): 4 bytes per vertex of the whole graph,
///   the only O(N) array; nothing O(N·F) or O(E) of the whole graph is held anywhere;
/// - each slice row, merged as adjacency_matrix merges (duplicates summed, sorted), with its
///   degree (row sum, computed where the row is read), features, label and masks, to its part;
/// - per pair of parts, the original ids one needs from the other (its halo), and back their
///   degrees.
/// Rows are sent in batches of about `batch_bytes` per rank and round (at least one row), each
/// merged just before it is sent, so that the load holds the slice, the part it builds and a
/// few batches.
/// Messages go through Communicator::all_to_all (src/comm/communicator.hpp: large-count safe;
/// point-to-point on an MpiCommunicator, gathers on any other). Each round's blocks for all
/// ranks are made before it is sent (one batch of rows, or one round's halo messages).
/// Throws strata::Error on inconsistent input (owner out of range, sizes, a label outside
/// [-1, num_classes)) or a part beyond the 32-bit local limits (check_local_limits's message).
[[nodiscard]] std::vector<LocalPart> distribute_parts(
    const GraphSlice& slice, std::span<const int> slice_owner, int num_parts, Communicator& comm,
    std::size_t batch_bytes = default_batch_bytes);

/// The same, emptying `slice` as soon as its rows are sent (before the halo rounds and the
/// blocks are built), so that the slice and the finished part are never held together.
[[nodiscard]] std::vector<LocalPart> distribute_parts(
    GraphSlice&& slice, std::span<const int> slice_owner, int num_parts, Communicator& comm,
    std::size_t batch_bytes = default_batch_bytes);

/// The owners of all N vertices on every rank from each rank's slice owners: comm.gather to
/// rank 0, then comm.broadcast (4 bytes per vertex). Validated (validate_partition).
[[nodiscard]] Partition gather_owners(const GraphSlice& slice, std::span<const int> slice_owner,
                                      int num_parts, Communicator& comm);

}  // namespace strata
