// WayMirrors: in the hybrid pipeline (W ways x S stages), way w owns chunks [w C/W, (w+1) C/W)
// and every way holds whole-graph buffers. Before an aggregation, the ways of a stage exchange
// the rows of the chunks they are processing that another way's rows read (GNNPipe's mirror
// exchange), so concurrently processed chunks see each other fresh:
//   forward:  rows v of chunk c with an edge into way w  (Â[u][v] != 0 for some u of way w),
//   backward: rows j of chunk c with an edge from way w  (Â[j][v] != 0 for some v of way w),
// the latter being the output-gradient rows way w's pull dx[v] = Σ_j Â[j][v] dy[j] reads.
#pragma once

#include <span>
#include <vector>

#include "src/tensor/host_csr.hpp"

namespace strata {

struct WayMirrors {
    int ways = 1;
    int chunks = 1;
    /// [c * ways + w]: ascending rows of chunk c that way w reads (empty for c's own way).
    std::vector<std::vector<index_t>> forward{};
    std::vector<std::vector<index_t>> backward{};

    [[nodiscard]] int way_of_chunk(int c) const { return c / (chunks / ways); }
    [[nodiscard]] const std::vector<index_t>& forward_rows(int c, int w) const {
        return forward[static_cast<std::size_t>(c * ways + w)];
    }
    [[nodiscard]] const std::vector<index_t>& backward_rows(int c, int w) const {
        return backward[static_cast<std::size_t>(c * ways + w)];
    }
};

/// Every list in one array for the exchange, way-major so that the lists of consecutive chunks
/// (a merged chunk) for one way are contiguous: forward list (c, w) is
/// rows[forward_offsets[w C + c] ..), backward lists after the forward ones likewise.
struct MirrorLists {
    std::vector<index_t> rows{};
    std::vector<std::size_t> forward_offsets{};   ///< W C + 1
    std::vector<std::size_t> backward_offsets{};  ///< W C + 1
    std::size_t send_rows = 0;  ///< the most rows a way sends in one exchange (all its chunks)
    std::size_t recv_rows = 0;  ///< the most rows a way receives from one other way
};

[[nodiscard]] MirrorLists pack_mirror_lists(const WayMirrors& mirrors);

/// From the operator's structure `a` (rows = destinations, columns = sources; any matrix with
/// Â's off-diagonal pattern, e.g. the raw adjacency) and chunk offsets (C + 1, C a multiple of
/// `ways`). O(nnz). Throws strata::OptionError ("chunks = 3: ...") if C is not a multiple of
/// `ways`.
[[nodiscard]] WayMirrors way_mirrors(const HostCsr& a, std::span<const index_t> chunk_offsets,
                                     int ways);

}  // namespace strata
