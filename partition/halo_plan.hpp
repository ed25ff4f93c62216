// HaloPlan: for every part, the vertices of other parts that its rows of A reference (its halo),
// computed for all parts in one O(nnz) pass. Send lists are read off the peers' halos.
#pragma once

#include <span>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "partition/partition.hpp"

namespace strata {

/// halo[p]: new global ids of the columns of part p's rows owned by another part, ascending.
/// Because new ids are part-major and keep original order within a part, ascending new ids
/// are "grouped by owner rank ascending, original id ascending within an owner".
struct HaloPlan {
    std::vector<std::vector<global_id>> halo;

    /// The part of halo[part] owned by `owner` (a contiguous, ascending range). This is also
    /// what `owner` sends to `part`, in this order.
    [[nodiscard]] std::span<const global_id> halo_from(const Renumbering& numbering, int part,
                                                       int owner) const;
};

/// One pass over the rows of A (parallel over parts). `a` is N x N with original ids;
/// `partition` must be valid for N and `numbering` = renumber(partition).
/// Throws strata::Error if the shapes disagree.
[[nodiscard]] HaloPlan build_halo_plan(const GlobalCsr& a, const Partition& partition,
                                       const Renumbering& numbering);

}  // namespace strata
