// Plexus's published model (SC'25; hpcgroup/plexus gcn_comm_model.py and mem_model.py as read in
// ../shared/docs/research/multidim.md, sections 2.5 and 6), for `strata plan --compare plexus`: a
// comparison on paper, model against model, of a GCN with the plan's widths. Nothing here is
// measured or run. For a grid (X, Y, Z), powers of two with X Y Z = P, layer l (input width
// d_{l-1}, output width d_l, N vertices, E entries of Â with its self loops) rotates its axes
// (r, c, f) = (Y, X, Z), (Z, Y, X), (X, Z, Y) for l mod 3 = 0, 1, 2:
//   words received per rank per training step
//     Σ_l (2 N d_l / P) (2 (G_c - 1) + (G_f - 1) + (G_r - 1))   all-reduces and all-gathers
//     + (G_r - 1) N d_0 / P                                     the input's all-gather (layer 0)
//   memory (words) per rank
//     per rotation used: 2 (3 E / (G_r G_c) + 2 N / G_r)        the adjacency (CSR, one per layout)
//     + Σ_l 2 x 2 N d_l / (G_r G_c)                            aggregation and activation
//     + 4 N d_0 / P + 4 |W| / P                                features; weights and Adam
//   x 4 bytes. The best grid: the fewest words among the grids whose local width d_l / G_f is at
// least 32 at every layer (Plexus's min_local_f), or among all grids when none is.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::planner {

struct PlexusGrid {
    int x = 1;
    int y = 1;
    int z = 1;
    double words = 0.0;         ///< received per rank per training step
    double memory_bytes = 0.0;  ///< per rank
    bool meets_floor = true;    ///< every layer's local width >= 32
};

/// Plexus's model for one grid. `widths`: d_0 (input features), d_1 .. d_L (layer outputs).
[[nodiscard]] PlexusGrid plexus_grid(double vertices, double entries,
                                     const std::vector<double>& widths, double parameters, int x,
                                     int y, int z);

/// The grid Plexus's search picks for `ranks` (a power of two; otherwise the largest power of two
/// below it, as Plexus runs only those).
[[nodiscard]] PlexusGrid plexus_best_grid(double vertices, double entries,
                                          const std::vector<double>& widths, double parameters,
                                          int ranks);

}  // namespace strata::planner
