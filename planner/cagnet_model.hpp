// CAGNET's 1.5D (sparsity-aware, replication c) and stationary 2D (Gr x Gc) layouts priced on
// paper for `strata plan --compare cagnet` (../shared/docs/research/multidim.md sections 2.3,
// 2.4, 2.6 and 3): a comparison, model against the plan's 1D, of layouts Strata does not run.
// Nothing here is measured. Every layout moves, per aggregation direction of width w, a multiple
// of N w / P words per rank; with u the bytes one halo row costs per evaluated epoch (the sum
// over the aggregation directions of the training step and the evaluation, 4 w each at fp32):
//   1D, h(P) = M(P) / N of the plan's P-way partition      h(P) N u / P
//   1.5D, c | P, 2 <= c <= P / c, h(P/c) of the (P/c)-way   [h(P/c) + 2 (c - 1)] N u / P
//     partition (each replica receives the rows its P/c^2 block columns need, then the team of
//     c all-reduces the partial sums)
//   2D stationary, Gr Gc = P, Gr, Gc >= 2 (all-gather of   (Gr + Gc - 2) N u / P
//     H over Gr, reduce-scatter of Z over Gc)
// The weights' all-reduce (2 |W| words) is left out of every layout, as the plan's halo bytes
// leave it out. Crossovers (section 3): 1.5D beats 1D iff h(P/c) + 2 (c - 1) < h(P); 2D beats
// 1D iff Gr + Gc - 2 < h(P). Memory: a 1.5D rank holds its team's block row, i.e. 1D's rank at
// P/c ranks (c x the entries and activations of 1D at P) with 1/c of its halo rows; a 2D rank
// holds E/P entries and N/P rows of 1D at P, plus the gathered H (N/Gc rows) and the partial Z
// (N/Gr rows) in place of the halo buffers (team_stats, stationary_2d_stats: the plan's memory
// model prices them).
#pragma once

#include <functional>
#include <vector>

#include "planner/partition_stats.hpp"

namespace strata::planner {

/// One layout on paper: 1.5D (a = c, b = 0) or 2D (a = Gr, b = Gc); factor in units of N u / P.
struct PaperLayout {
    int a = 0;
    int b = 0;
    double factor = 0.0;
    double bytes = 0.0;  ///< per rank per evaluated epoch
};

/// h(K) of a K-way partition: Σ send rows / N (partition.json's communication volume over N).
[[nodiscard]] double halo_factor(const PartitionStats& stats);

/// The c a 1.5D layout of `ranks` may use: 2 <= c, c divides ranks, c <= ranks / c.
[[nodiscard]] std::vector<int> replication_factors(int ranks);

/// h(P) N u / P: 1D's bytes per rank in the same units.
[[nodiscard]] double oned_paper_bytes(int ranks, double vertices, double row_bytes, double h);

/// 1.5D with replication c; `h_team` = h(P / c).
[[nodiscard]] PaperLayout one_and_half_d(int ranks, int c, double vertices, double row_bytes,
                                         double h_team);
/// The c with the fewest bytes; a = 0 when `ranks` has none. `h(K)`: h of a K-way partition.
[[nodiscard]] PaperLayout best_one_and_half_d(int ranks, double vertices, double row_bytes,
                                              const std::function<double(int)>& h);

[[nodiscard]] PaperLayout stationary_2d(int rows, int cols, double vertices, double row_bytes);
/// The Gr x Gc (Gr <= Gc, both >= 2) with the fewest bytes; a = 0 when `ranks` is prime or 1.
[[nodiscard]] PaperLayout best_stationary_2d(int ranks, double vertices, double row_bytes);

/// A 1.5D rank for the memory model: `team` (the (P/c)-way statistics) with every rank's send
/// and receive rows divided by c.
[[nodiscard]] PartitionStats team_stats(const PartitionStats& team, int c);
/// A 2D rank for the memory model: `oned` (the P-way statistics) with every rank receiving
/// N/Gc - owned rows (the gathered H) and sending N/Gr - owned (the partial Z).
[[nodiscard]] PartitionStats stationary_2d_stats(const PartitionStats& oned, int rows, int cols);

}  // namespace strata::planner
