// refine_parts: a dense K-wide counter of each row's neighbours per part, a per-rank budget of
// the weight each part may still take.
#include "partition/label_refinement.hpp"

#include <algorithm>
#include <cmath>

#include "src/base/error.hpp"

namespace strata {

std::int64_t refine_parts(const GhostGraph& g, std::span<const std::int64_t> vertex_weight,
                          std::vector<int>& part, const RefineOptions& options,
                          Communicator& comm) {
    const std::size_t n = g.num_local();
    const auto k = static_cast<std::size_t>(options.num_parts);
    STRATA_CHECK(part.size() == n && vertex_weight.size() == n, "refine_parts: ", part.size(),
                 " parts and ", vertex_weight.size(), " weights for ", n, " rows");
    std::vector<std::int64_t> total{0};
    for (const std::int64_t w : vertex_weight) {
        total[0] += w;
    }
    comm.allreduce_sum(total);
    const auto bound = static_cast<std::int64_t>(std::floor(
        (1.0 + options.imbalance) * static_cast<double>(total[0]) / static_cast<double>(k)));
    const auto ranks = static_cast<std::int64_t>(comm.size());

    std::vector<int> ghost_part(g.num_ghosts());
    std::vector<std::int64_t> links(k, 0);
    std::vector<int> touched;
    std::int64_t all_moves = 0;
    int quiet = 0;
    for (int round = 0; round < options.max_rounds && quiet < 2; ++round) {
        exchange_ghosts<int>(g, part, ghost_part, comm);
        std::vector<std::int64_t> weight(k, 0);
        for (std::size_t v = 0; v < n; ++v) {
            weight[static_cast<std::size_t>(part[v])] += vertex_weight[v];
        }
        comm.allreduce_sum(weight);
        // The weight each part may still take from this rank this round.
        std::vector<std::int64_t> room(k);
        for (std::size_t q = 0; q < k; ++q) {
            room[q] = std::max<std::int64_t>(bound - weight[q], 0) / ranks;
        }
        const bool upward = round % 2 == 0;
        std::vector<std::int64_t> moves{0};
        for (std::size_t v = 0; v < n; ++v) {
            for (auto e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
                const auto u = static_cast<std::size_t>(g.indices[static_cast<std::size_t>(e)]);
                const int q = u < n ? part[u] : ghost_part[u - n];
                if (links[static_cast<std::size_t>(q)]++ == 0) {
                    touched.push_back(q);
                }
            }
            const int own = part[v];
            const std::int64_t w = vertex_weight[v];
            int best = own;
            std::int64_t best_links = links[static_cast<std::size_t>(own)];
            for (const int q : touched) {
                const auto qi = static_cast<std::size_t>(q);
                if ((q > own) == upward && q != own && room[qi] >= w &&
                    (links[qi] > best_links ||
                     (links[qi] == best_links && best != own && q < best))) {
                    best = q;
                    best_links = links[qi];
                }
            }
            for (const int q : touched) {
                links[static_cast<std::size_t>(q)] = 0;
            }
            touched.clear();
            if (best != own) {
                room[static_cast<std::size_t>(best)] -= w;
                part[v] = best;
                ++moves[0];
            }
        }
        comm.allreduce_sum(moves);
        all_moves += moves[0];
        quiet = moves[0] == 0 ? quiet + 1 : 0;
    }
    return all_moves;
}

}  // namespace strata
