// GhostGraph: a slice's symmetric adjacency in local numbering, with the ghost (remote) vertices
// it touches and the lists that refresh a value per ghost from its owner. The fine graph of the
// distributed clustering and refinement around PT-Scotch (partition/cluster_contraction.hpp,
// partition/label_refinement.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "partition/symmetric_slice.hpp"
#include "src/base/types.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

/// Rows [0, n) are the slice's vertices (global id = first + i). Column k < n is local row k,
/// column n + j is ghost j, a vertex of another slice (global id ghost_ids[j]). Ghosts are
/// sorted by global id, so grouped by owner: ghosts of rank q are [ghost_offsets[q],
/// ghost_offsets[q + 1]). Rank q needs the values of rows send_rows[send_offsets[q] ..
/// send_offsets[q + 1]), in the order of its ghosts.
struct GhostGraph {
    global_id first = 0;
    std::vector<std::int64_t> indptr{0};  ///< n + 1
    std::vector<index_t> indices;         ///< indptr.back(): local row, or n + ghost
    std::vector<global_id> ghost_ids;
    std::vector<std::size_t> ghost_offsets;  ///< P + 1
    std::vector<index_t> send_rows;
    std::vector<std::size_t> send_offsets;  ///< P + 1

    [[nodiscard]] std::size_t num_local() const { return indptr.size() - 1; }
    [[nodiscard]] std::size_t num_ghosts() const { return ghost_ids.size(); }
};

/// Throws strata::Error (one line, naming the limit and the fix: more processes) when `rows`
/// local rows and `ghosts` ghosts of slice `rank` do not fit 32-bit local ids.
void check_ghost_limit(int rank, std::size_t rows, std::size_t ghosts);

/// Collective. Renumbers `adj` (rows of slice `rank` of `offsets`, global columns; freed here)
/// into local columns, and asks each ghost's owner for the rows it must send back. Throws
/// strata::Error (one line, naming the limit and the fix) when rows + ghosts exceed 2^31 - 1.
/// Memory: 4 bytes per entry, 8 per ghost, plus 8 per remote entry while renumbering.
[[nodiscard]] GhostGraph ghost_graph(SliceAdjacency&& adj, const std::vector<global_id>& offsets,
                                     int rank, Communicator& comm);

/// Bytes-level core of exchange_ghosts: `width` bytes per row.
void exchange_ghost_bytes(const GhostGraph& g, std::span<const std::byte> local,
                          std::span<std::byte> ghost, std::size_t width, Communicator& comm);

/// Collective: ghost[j] = the owner's local[row] of ghost j (one all_to_all).
template <class T>
void exchange_ghosts(const GhostGraph& g, std::span<const T> local, std::span<T> ghost,
                     Communicator& comm) {
    exchange_ghost_bytes(g, std::as_bytes(local), std::as_writable_bytes(ghost), sizeof(T), comm);
}

}  // namespace strata
