// LocalGraph: everything one rank needs to aggregate its own rows of A H: the inner block, one
// halo block per peer, the exchange pattern and send lists, after part-major renumbering, and
// the in-degrees every normalization needs (partition/local_normalize.hpp builds the operator).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "partition/halo_plan.hpp"
#include "partition/partition.hpp"
#include "src/comm/communicator.hpp"
#include "src/tensor/host_csr.hpp"
#include "src/tensor/host_dcsr.hpp"

namespace strata {

/// Rank `rank`'s rows of a matrix M, split by column owner: the raw adjacency A as partitioned
/// (values = stored edge weights, duplicates summed, no diagonal added), or an operator built
/// from it by normalized(). Local row i is new global id first_owned + i (original id
/// owned_original[i]). In every CSR, columns within a row are sorted ascending.
/// Z_owned = inner X_owned + Σ_i halo[i] X_recv(i), where X_recv(i) are the rows received from
/// pattern.peers[i] (recv rows [recv_offsets[i], recv_offsets[i+1])).
/// The degrees are those of the raw A (d_v = Σ_u A_vu, the weighted in-degree, in double) for
/// the owned rows and for every received row, so that any normalization is local.
struct LocalGraph {
    int rank = 0;
    int num_parts = 1;
    global_id num_global_vertices = 0;
    global_id first_owned = 0;  ///< new (renumbered) id of local row 0
    index_t num_owned = 0;
    std::vector<global_id> owned_original;  ///< original dataset id of each owned row
    HostCsr inner;                          ///< num_owned x num_owned: entries with an owned column
    /// Per pattern peer i: num_owned x recv_count(i), compressed rows: only the owned rows with
    /// >= 1 entry from that peer are listed (ascending); column j = j-th row received from that
    /// peer (the peer's vertices ordered by original id). O(listed rows + nnz) per peer.
    std::vector<HostDcsr> halo;
    std::vector<global_id> halo_original;  ///< original ids of all received rows, peer after peer
    std::vector<index_t> send_rows;        ///< local owned rows to pack, peer after peer (forward)
    ExchangePattern pattern;               ///< peers ascending; forward direction (rows of H)
    std::vector<index_t> boundary_rows;    ///< owned rows with >= 1 halo entry (ascending)
    std::vector<index_t> interior_rows;    ///< owned rows with none (ascending)
    std::vector<double> owned_degree;      ///< num_owned: Σ_u A_vu of each owned row
    std::vector<double> halo_degree;       ///< one per received row (halo_original's order)
};

/// Builds LocalGraphs for any rank from one O(nnz) pass over A (renumbering + halo plan, row
/// sums), so that building all K ranks costs O(nnz) in total, not K times. Keeps references to
/// `adjacency` and `partition`, which must outlive it.
class LocalGraphBuilder {
public:
    /// `adjacency`: N x N, original ids, rows sorted ascending and unique (adjacency_matrix's
    /// output; any such matrix works, e.g. gcn_normalize's Â, whose row sums then become the
    /// degrees). Throws strata::Error if the partition is invalid for N or the matrix is
    /// malformed.
    LocalGraphBuilder(const GlobalCsr& adjacency, const Partition& partition);

    /// O(nnz of the rank's rows + its halo + its send lists). Throws strata::Error if a local
    /// size does not fit index_t (2^31 - 1).
    [[nodiscard]] LocalGraph build(int rank);

    [[nodiscard]] const Renumbering& numbering() const { return numbering_; }
    [[nodiscard]] const HaloPlan& plan() const { return plan_; }

private:
    const GlobalCsr& a_;
    const Partition& partition_;
    Renumbering numbering_;
    HaloPlan plan_;
    std::vector<double> degree_;       ///< N: Σ_u A_vu (row sums, columns ascending, in double)
    std::vector<index_t> column_;      ///< N: position of a halo vertex in the rank's halo
    std::vector<std::uint64_t> code_;  ///< N: owner << 32 | row within the owner
};

/// Rank `rank`'s LocalGraph; adjacency = adjacency_matrix(graph) (same vertex ids as the
/// graph). O(nnz) (one halo pass); use LocalGraphBuilder to build several ranks.
[[nodiscard]] LocalGraph build_local_graph(const GlobalCsr& adjacency, const Partition& partition,
                                           int rank);

/// Checks every invariant the trainer relies on (shapes, CSR structure with sorted unique
/// columns, finite values, peers ascending and distinct and != rank, offsets, send rows in
/// range, ascending per peer, halo blocks listing exactly their nonempty rows (ascending),
/// boundary/interior rows consistent with the halo blocks, one
/// finite degree per owned and per received row).
/// Throws strata::Error whose message starts with `what`.
void validate_local_graph(const LocalGraph& graph, const std::string& what);

}  // namespace strata
