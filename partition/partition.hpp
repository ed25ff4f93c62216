// Partition (the owner rank of every vertex), the baseline partitioners (block, random) and the
// renumbering that makes every part a contiguous range of new global ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/base/types.hpp"

namespace strata {

/// owner[v] in [0, num_parts) is the part (rank) of original vertex v.
struct Partition {
    int num_parts = 0;
    std::vector<int> owner;
};

/// Contiguous ranges: part r owns original ids [r*N/K, (r+1)*N/K). Throws strata::Error unless
/// 1 <= num_parts <= max(num_vertices, 1).
[[nodiscard]] Partition partition_block(global_id num_vertices, int num_parts);

/// A seeded random permutation of the vertices split into K parts of sizes differing by at most
/// one (so no part is empty when K <= N). Same seed => same partition on every platform (own
/// SplitMix64 stream, no std distributions). Same preconditions as partition_block.
[[nodiscard]] Partition partition_random(global_id num_vertices, int num_parts, std::uint64_t seed);

/// Checks owner.size() == num_vertices and every owner in [0, num_parts), num_parts >= 1;
/// throws strata::Error whose message starts with `what` and names the first bad vertex.
void validate_partition(const Partition& partition, global_id num_vertices,
                        const std::string& what);

/// New global ids: part-major, original order within a part. Part r owns new ids
/// [part_offsets[r], part_offsets[r+1]).
struct Renumbering {
    std::vector<global_id> part_offsets;  ///< num_parts + 1 prefix sums of part sizes
    std::vector<global_id> new_id;        ///< N: new id of each original vertex
    std::vector<global_id> original;      ///< N: original id of each new id

    [[nodiscard]] int num_parts() const { return static_cast<int>(part_offsets.size()) - 1; }
    [[nodiscard]] global_id part_size(int part) const {
        return part_offsets[static_cast<std::size_t>(part) + 1] -
               part_offsets[static_cast<std::size_t>(part)];
    }
};

/// O(N) counting sort of the vertices by owner (stable, so original order is kept in a part).
/// Expects a valid partition (validate_partition).
[[nodiscard]] Renumbering renumber(const Partition& partition);

}  // namespace strata
