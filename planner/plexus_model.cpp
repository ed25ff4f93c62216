// plexus_grid, plexus_best_grid: the formulas of plexus_model.hpp.
#include "planner/plexus_model.hpp"

#include <array>
#include <set>

#include "src/base/error.hpp"

namespace strata::planner {

PlexusGrid plexus_grid(double vertices, double entries, const std::vector<double>& widths,
                       double parameters, int x, int y, int z) {
    STRATA_CHECK(widths.size() >= 2, "plexus model: ", widths.size(),
                 " widths (need the input's and at least one layer's)");
    STRATA_CHECK(x >= 1 && y >= 1 && z >= 1, "plexus model: grid ", x, "x", y, "x", z);
    PlexusGrid g{.x = x, .y = y, .z = z};
    const double p = static_cast<double>(x) * y * z;
    const double n = vertices;
    std::set<int> rotations;
    double memory_words = 4.0 * n * widths[0] / p + 4.0 * parameters / p;
    for (std::size_t l = 1; l < widths.size(); ++l) {
        const int rotation = static_cast<int>((l - 1) % 3);
        // (r, c, f) per rotation: (Y, X, Z), (Z, Y, X), (X, Z, Y)
        const std::array<std::array<int, 3>, 3> axes{{{y, x, z}, {z, y, x}, {x, z, y}}};
        const auto [gr, gc, gf] = axes[static_cast<std::size_t>(rotation)];
        const double d = widths[l];
        g.words += 2.0 * n * d / p * (2.0 * (gc - 1) + (gf - 1) + (gr - 1));
        if (l == 1) {
            g.words += (gr - 1) * n * widths[0] / p;
        }
        if (rotations.insert(rotation).second) {
            memory_words += 2.0 * (3.0 * entries / (gr * gc) + 2.0 * n / gr);
        }
        memory_words += 2.0 * 2.0 * n * d / (gr * gc);
        g.meets_floor = g.meets_floor && d / gf >= 32.0;
    }
    g.memory_bytes = 4.0 * memory_words;
    return g;
}

PlexusGrid plexus_best_grid(double vertices, double entries, const std::vector<double>& widths,
                            double parameters, int ranks) {
    STRATA_CHECK(ranks >= 1, "plexus model: ", ranks, " ranks");
    int p = 1;
    while (2 * p <= ranks) {
        p *= 2;
    }
    PlexusGrid best;
    bool found = false;
    for (int x = 1; x <= p; x *= 2) {
        for (int y = 1; x * y <= p; y *= 2) {
            const int z = p / (x * y);
            const PlexusGrid g = plexus_grid(vertices, entries, widths, parameters, x, y, z);
            // Grids above the floor first; among equals, the fewer words.
            if (!found || (g.meets_floor && !best.meets_floor) ||
                (g.meets_floor == best.meets_floor && g.words < best.words)) {
                best = g;
                found = true;
            }
        }
    }
    return best;
}

}  // namespace strata::planner
