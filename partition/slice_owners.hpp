// slice_owners: the part of every row of one rank's slice under the baseline partitioners
// (block, random), computed on that rank alone and equal to partition_block/partition_random's
// owners of those rows.
#pragma once

#include <cstdint>
#include <vector>

#include "src/base/types.hpp"

namespace strata {

/// partition_block(num_vertices, num_parts).owner[first .. first + count): O(count + K).
[[nodiscard]] std::vector<int> block_owners_of(global_id num_vertices, int num_parts,
                                               global_id first, global_id count);

/// partition_random(num_vertices, num_parts, seed).owner[first .. first + count). The seeded
/// Fisher-Yates shuffle is one sequential stream, so every rank replays it whole: O(N) time and
/// 16 bytes per vertex while it runs (ids only, no graph data); keeps the owners of today's
/// in-memory partitions, hence the same training results.
[[nodiscard]] std::vector<int> random_owners_of(global_id num_vertices, int num_parts,
                                                std::uint64_t seed, global_id first,
                                                global_id count);

}  // namespace strata
