// Block and random partitioners, partition validation and the part-major renumbering.
#include "partition/partition.hpp"

#include <numeric>
#include <utility>

#include "src/base/error.hpp"

namespace strata {
namespace {

void check_counts(global_id num_vertices, int num_parts) {
    STRATA_CHECK(num_parts >= 1, "number of parts must be >= 1, got ", num_parts);
    STRATA_CHECK(num_vertices >= 0, "negative number of vertices ", num_vertices);
    STRATA_CHECK(num_parts == 1 || num_parts <= num_vertices, "cannot split ", num_vertices,
                 " vertices into ", num_parts, " parts (parts must be <= vertices)");
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed, fully specified generator.
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, bound): rejection of the 2^64 mod bound lowest values (no modulo bias).
    std::uint64_t below(std::uint64_t bound) {
        const std::uint64_t threshold = (0 - bound) % bound;
        while (true) {
            const std::uint64_t x = next();
            if (x >= threshold) {
                return x % bound;
            }
        }
    }

private:
    std::uint64_t state_;
};

/// Part of position i when N positions are cut into K ranges [r*N/K, (r+1)*N/K).
std::vector<int> block_owners(global_id num_vertices, int num_parts) {
    std::vector<int> owner(static_cast<std::size_t>(num_vertices));
    for (int r = 0; r < num_parts; ++r) {
        const global_id first = num_vertices * r / num_parts;
        const global_id last = num_vertices * (r + 1) / num_parts;
        for (global_id v = first; v < last; ++v) {
            owner[static_cast<std::size_t>(v)] = r;
        }
    }
    return owner;
}

}  // namespace

Partition partition_block(global_id num_vertices, int num_parts) {
    check_counts(num_vertices, num_parts);
    return Partition{num_parts, block_owners(num_vertices, num_parts)};
}

Partition partition_random(global_id num_vertices, int num_parts, std::uint64_t seed) {
    check_counts(num_vertices, num_parts);
    std::vector<global_id> order(static_cast<std::size_t>(num_vertices));
    std::iota(order.begin(), order.end(), global_id{0});
    SplitMix64 rng(seed);
    for (global_id i = num_vertices - 1; i > 0; --i) {  // Fisher-Yates
        const auto j = static_cast<global_id>(rng.below(static_cast<std::uint64_t>(i) + 1));
        std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
    }
    const std::vector<int> position_owner = block_owners(num_vertices, num_parts);
    Partition partition{num_parts, std::vector<int>(static_cast<std::size_t>(num_vertices))};
    for (std::size_t i = 0; i < order.size(); ++i) {
        partition.owner[static_cast<std::size_t>(order[i])] = position_owner[i];
    }
    return partition;
}

void validate_partition(const Partition& partition, global_id num_vertices,
                        const std::string& what) {
    STRATA_CHECK(partition.num_parts >= 1, what, ": number of parts must be >= 1, got ",
                 partition.num_parts);
    STRATA_CHECK(static_cast<global_id>(partition.owner.size()) == num_vertices, what, ": ",
                 partition.owner.size(), " owners for ", num_vertices, " vertices");
    for (std::size_t v = 0; v < partition.owner.size(); ++v) {
        const int r = partition.owner[v];
        STRATA_CHECK(r >= 0 && r < partition.num_parts, what, ": owner of vertex ", v, " is ", r,
                     ", outside [0, ", partition.num_parts, ")");
    }
}

Renumbering renumber(const Partition& partition) {
    const auto num_parts = static_cast<std::size_t>(partition.num_parts);
    const auto n = partition.owner.size();
    Renumbering r;
    r.part_offsets.assign(num_parts + 1, 0);
    for (int owner : partition.owner) {
        ++r.part_offsets[static_cast<std::size_t>(owner) + 1];
    }
    std::partial_sum(r.part_offsets.begin(), r.part_offsets.end(), r.part_offsets.begin());
    std::vector<global_id> next(r.part_offsets.begin(), r.part_offsets.end() - 1);
    r.new_id.resize(n);
    r.original.resize(n);
    for (std::size_t v = 0; v < n; ++v) {
        const global_id id = next[static_cast<std::size_t>(partition.owner[v])]++;
        r.new_id[v] = id;
        r.original[static_cast<std::size_t>(id)] = static_cast<global_id>(v);
    }
    return r;
}

}  // namespace strata
