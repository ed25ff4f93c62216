// CAGNET's 1.5D and stationary 2D on paper: the formulas of cagnet_model.hpp.
#include "planner/cagnet_model.hpp"

#include <algorithm>
#include <cmath>

#include "src/base/error.hpp"

namespace strata::planner {

double halo_factor(const PartitionStats& stats) {
    return stats.vertices > 0
               ? static_cast<double>(total_send_rows(stats)) / static_cast<double>(stats.vertices)
               : 0.0;
}

std::vector<int> replication_factors(int ranks) {
    std::vector<int> out;
    for (int c = 2; c * c <= ranks; ++c) {
        if (ranks % c == 0) {
            out.push_back(c);
        }
    }
    return out;
}

double oned_paper_bytes(int ranks, double vertices, double row_bytes, double h) {
    STRATA_CHECK(ranks >= 1, "cagnet model: ", ranks, " ranks");
    return h * vertices * row_bytes / ranks;
}

PaperLayout one_and_half_d(int ranks, int c, double vertices, double row_bytes, double h_team) {
    STRATA_CHECK(c >= 2 && ranks % c == 0 && c * c <= ranks, "cagnet model: replication ", c,
                 " at ", ranks, " ranks (needs 2 <= c, c | P, c <= P / c)");
    PaperLayout l{.a = c, .factor = h_team + 2.0 * (c - 1)};
    l.bytes = l.factor * vertices * row_bytes / ranks;
    return l;
}

PaperLayout best_one_and_half_d(int ranks, double vertices, double row_bytes,
                                const std::function<double(int)>& h) {
    PaperLayout best;
    for (const int c : replication_factors(ranks)) {
        const PaperLayout l = one_and_half_d(ranks, c, vertices, row_bytes, h(ranks / c));
        if (best.a == 0 || l.bytes < best.bytes) {
            best = l;
        }
    }
    return best;
}

PaperLayout stationary_2d(int rows, int cols, double vertices, double row_bytes) {
    STRATA_CHECK(rows >= 1 && cols >= 1, "cagnet model: 2D grid ", rows, "x", cols);
    PaperLayout l{.a = rows, .b = cols, .factor = rows + cols - 2.0};
    l.bytes = l.factor * vertices * row_bytes / (static_cast<double>(rows) * cols);
    return l;
}

PaperLayout best_stationary_2d(int ranks, double vertices, double row_bytes) {
    PaperLayout best;
    for (int r = 2; r * r <= ranks; ++r) {
        if (ranks % r != 0) {
            continue;
        }
        const PaperLayout l = stationary_2d(r, ranks / r, vertices, row_bytes);
        if (best.a == 0 || l.bytes < best.bytes) {
            best = l;
        }
    }
    return best;
}

PartitionStats team_stats(const PartitionStats& team, int c) {
    STRATA_CHECK(c >= 1, "cagnet model: replication ", c);
    PartitionStats out = team;
    for (RankStats& r : out.ranks) {
        r.send_rows = (r.send_rows + c - 1) / c;
        r.recv_rows = (r.recv_rows + c - 1) / c;
    }
    return out;
}

PartitionStats stationary_2d_stats(const PartitionStats& oned, int rows, int cols) {
    STRATA_CHECK(
        rows >= 1 && cols >= 1 && static_cast<std::size_t>(rows) * cols == oned.ranks.size(),
        "cagnet model: 2D grid ", rows, "x", cols, " for ", oned.ranks.size(), " parts");
    PartitionStats out = oned;
    const auto n = static_cast<std::int64_t>(oned.vertices);
    for (RankStats& r : out.ranks) {
        r.recv_rows = std::max<std::int64_t>(0, (n + cols - 1) / cols - r.owned);
        r.send_rows = std::max<std::int64_t>(0, (n + rows - 1) / rows - r.owned);
    }
    return out;
}

}  // namespace strata::planner
