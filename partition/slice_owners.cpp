// block_owners_of / random_owners_of: the slice's range of the baseline partitions.
#include "partition/slice_owners.hpp"

#include <algorithm>

#include "partition/partition.hpp"
#include "src/base/error.hpp"

namespace strata {

std::vector<int> block_owners_of(global_id num_vertices, int num_parts, global_id first,
                                 global_id count) {
    STRATA_CHECK(num_parts >= 1, "number of parts must be >= 1, got ", num_parts);
    STRATA_CHECK(num_parts == 1 || num_parts <= num_vertices, "cannot split ", num_vertices,
                 " vertices into ", num_parts, " parts (parts must be <= vertices)");
    STRATA_CHECK(first >= 0 && count >= 0 && first + count <= num_vertices,
                 "block_owners_of: rows [", first, ", ", first + count, ") outside [0, ",
                 num_vertices, ")");
    std::vector<int> owner(static_cast<std::size_t>(count));
    for (int r = 0; r < num_parts; ++r) {
        const global_id begin = std::max(num_vertices * r / num_parts, first);
        const global_id end = std::min(num_vertices * (r + 1) / num_parts, first + count);
        for (global_id v = begin; v < end; ++v) {
            owner[static_cast<std::size_t>(v - first)] = r;
        }
    }
    return owner;
}

std::vector<int> random_owners_of(global_id num_vertices, int num_parts, std::uint64_t seed,
                                  global_id first, global_id count) {
    const Partition whole = partition_random(num_vertices, num_parts, seed);
    STRATA_CHECK(first >= 0 && count >= 0 && first + count <= num_vertices,
                 "random_owners_of: rows [", first, ", ", first + count, ") outside [0, ",
                 num_vertices, ")");
    return {whole.owner.begin() + static_cast<std::ptrdiff_t>(first),
            whole.owner.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

}  // namespace strata
