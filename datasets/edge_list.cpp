// edges_to_csr: counting sort by destination, then each row sorted by source.
#include "datasets/edge_list.hpp"

#include <algorithm>
#include <numeric>

namespace strata {

std::int64_t edges_to_csr(const EdgeList& edges, std::int64_t n, GraphDataset& g) {
    const std::size_t m = edges.src.size();
    std::vector<std::int64_t> count(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t v : edges.dst) {
        ++count[static_cast<std::size_t>(v) + 1];
    }
    std::partial_sum(count.begin(), count.end(), count.begin());
    std::vector<std::size_t> order(m);  // edge ids grouped by destination, in list order
    std::vector<std::int64_t> next(count.begin(), count.end() - 1);
    for (std::size_t k = 0; k < m; ++k) {
        order[static_cast<std::size_t>(next[static_cast<std::size_t>(edges.dst[k])]++)] = k;
    }
    g.indptr.assign(static_cast<std::size_t>(n) + 1, 0);
    g.indices.clear();
    g.edge_weight.clear();
    std::int64_t duplicates = 0;
    for (std::int64_t v = 0; v < n; ++v) {
        const auto begin = order.begin() + count[static_cast<std::size_t>(v)];
        const auto end = order.begin() + count[static_cast<std::size_t>(v) + 1];
        std::stable_sort(begin, end,
                         [&](std::size_t a, std::size_t b) { return edges.src[a] < edges.src[b]; });
        for (auto it = begin; it != end; ++it) {
            if (it != begin && edges.src[*it] == edges.src[*(it - 1)]) {
                ++duplicates;  // keep the first listed
                continue;
            }
            g.indices.push_back(edges.src[*it]);
            if (!edges.weight.empty()) {
                g.edge_weight.push_back(edges.weight[*it]);
            }
        }
        g.indptr[static_cast<std::size_t>(v) + 1] = static_cast<std::int64_t>(g.indices.size());
    }
    return duplicates;
}

}  // namespace strata
