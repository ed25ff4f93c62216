// The edge cut of a partition, counted on the METIS graph (undirected, loop-free, each edge
// stored twice): the quality measure the partitioner tests compare.
#pragma once

#include <cstdint>
#include <vector>

#include "partition/metis_partitioner.hpp"

namespace strata::test {

/// Undirected edges of the METIS graph whose ends lie in different parts.
inline std::int64_t cut_of(const MetisGraph& g, const std::vector<int>& owner) {
    std::int64_t cut = 0;
    for (std::size_t v = 0; v + 1 < g.xadj.size(); ++v) {
        for (auto k = g.xadj[v]; k < g.xadj[v + 1]; ++k) {
            cut +=
                owner[v] != owner[static_cast<std::size_t>(g.adjncy[static_cast<std::size_t>(k)])]
                    ? 1
                    : 0;
        }
    }
    return cut / 2;
}

}  // namespace strata::test
