// build_halo_plan: per part, mark off-part columns with a stamp array, then sort them.
#include "partition/halo_plan.hpp"

#include <algorithm>

#include "src/base/error.hpp"

namespace strata {

std::span<const global_id> HaloPlan::halo_from(const Renumbering& numbering, int part,
                                               int owner) const {
    const std::vector<global_id>& h = halo[static_cast<std::size_t>(part)];
    const auto first = std::lower_bound(h.begin(), h.end(),
                                        numbering.part_offsets[static_cast<std::size_t>(owner)]);
    const auto last = std::lower_bound(first, h.end(),
                                       numbering.part_offsets[static_cast<std::size_t>(owner) + 1]);
    return {h.data() + (first - h.begin()), static_cast<std::size_t>(last - first)};
}

HaloPlan build_halo_plan(const GlobalCsr& a, const Partition& partition,
                         const Renumbering& numbering) {
    const global_id n = a.num_rows();
    STRATA_CHECK(static_cast<global_id>(partition.owner.size()) == n &&
                     static_cast<global_id>(numbering.new_id.size()) == n &&
                     numbering.num_parts() == partition.num_parts,
                 "build_halo_plan: A has ", n, " rows but the partition covers ",
                 partition.owner.size(), " vertices in ", partition.num_parts, " parts");
    // A must be well formed before the parallel pass (an exception cannot leave an omp region).
    STRATA_CHECK(
        a.indptr.front() == 0 && a.indptr.back() == a.nnz() && a.values.size() == a.indices.size(),
        "build_halo_plan: A: indptr[0] = ", a.indptr.front(), ", indptr[N] = ", a.indptr.back(),
        ", ", a.indices.size(), " indices, ", a.values.size(), " values");
    for (std::size_t v = 0; v + 1 < a.indptr.size(); ++v) {
        STRATA_CHECK(a.indptr[v] <= a.indptr[v + 1],
                     "build_halo_plan: A: indptr not monotone at row ", v);
    }
    // A parallel pass says whether every row is in range, sorted and unique; only a bad A
    // pays for the serial pass that names the first bad entry.
    const auto rows = static_cast<std::int64_t>(a.indptr.size()) - 1;
    int ok = 1;
#pragma omp parallel for schedule(dynamic, 4096) reduction(min : ok)
    for (std::int64_t row = 0; row < rows; ++row) {
        const auto v = static_cast<std::size_t>(row);
        int row_ok = 1;
        for (auto k = static_cast<std::size_t>(a.indptr[v]);
             k < static_cast<std::size_t>(a.indptr[v + 1]); ++k) {
            const std::int64_t u = a.indices[k];
            if (u < 0 || u >= n ||
                (k > static_cast<std::size_t>(a.indptr[v]) && a.indices[k - 1] >= u)) {
                row_ok = 0;
            }
        }
        ok = std::min(ok, row_ok);
    }
    for (std::size_t v = 0; ok == 0 && v + 1 < a.indptr.size(); ++v) {
        for (auto k = static_cast<std::size_t>(a.indptr[v]);
             k < static_cast<std::size_t>(a.indptr[v + 1]); ++k) {
            const std::int64_t u = a.indices[k];
            STRATA_CHECK(u >= 0 && u < n, "build_halo_plan: A: column ", u, " in row ", v,
                         " outside [0, ", n, ")");
            // Sorted, unique rows make every block's rows sorted without a sort.
            STRATA_CHECK(k == static_cast<std::size_t>(a.indptr[v]) || a.indices[k - 1] < u,
                         "build_halo_plan: A: row ", v, " is not sorted ascending and unique (",
                         a.indices[k - 1], " then ", u, ")");
        }
    }
    const int num_parts = partition.num_parts;
    HaloPlan plan;
    plan.halo.resize(static_cast<std::size_t>(num_parts));
#pragma omp parallel
    {
        // stamp[u] == p + 1: u already recorded in part p's halo (one array per thread).
        std::vector<int> stamp(static_cast<std::size_t>(n), 0);
#pragma omp for schedule(dynamic, 1)
        for (int p = 0; p < num_parts; ++p) {
            std::vector<global_id>& halo = plan.halo[static_cast<std::size_t>(p)];
            const global_id first = numbering.part_offsets[static_cast<std::size_t>(p)];
            const global_id last = numbering.part_offsets[static_cast<std::size_t>(p) + 1];
            for (global_id id = first; id < last; ++id) {
                const auto v =
                    static_cast<std::size_t>(numbering.original[static_cast<std::size_t>(id)]);
                for (std::int64_t k = a.indptr[v]; k < a.indptr[v + 1]; ++k) {
                    const auto u = static_cast<std::size_t>(a.indices[static_cast<std::size_t>(k)]);
                    if (partition.owner[u] != p && stamp[u] != p + 1) {
                        stamp[u] = p + 1;
                        halo.push_back(numbering.new_id[u]);
                    }
                }
            }
            std::sort(halo.begin(), halo.end());
            halo.shrink_to_fit();
        }
    }
    return plan;
}

}  // namespace strata
