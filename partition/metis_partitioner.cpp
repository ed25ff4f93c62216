// The one place METIS is called: METIS_PartGraphKway on a MetisGraph, seeded, checked.
#include "partition/metis_partitioner.hpp"

#include <limits>

#include <metis.h>

#include "src/base/error.hpp"

namespace strata {

static_assert(sizeof(idx_t) == sizeof(std::int32_t),
              "MetisGraph holds 32-bit ids: this METIS must be built with IDXTYPEWIDTH 32");

namespace {

const char* metis_status_name(int status) {
    switch (status) {
        case METIS_ERROR_INPUT:
            return "METIS_ERROR_INPUT (invalid input)";
        case METIS_ERROR_MEMORY:
            return "METIS_ERROR_MEMORY (out of memory)";
        default:
            return "METIS_ERROR";
    }
}

}  // namespace

Partition partition_metis(const MetisGraph& graph, int num_parts, std::uint64_t seed,
                          std::int64_t* edgecut) {
    const global_id n = graph.num_vertices();
    STRATA_CHECK(num_parts >= 1, "number of parts must be >= 1, got ", num_parts);
    STRATA_CHECK(num_parts == 1 || num_parts <= n, "cannot split ", n, " vertices into ", num_parts,
                 " parts (parts must be <= vertices)");
    STRATA_CHECK(seed <= static_cast<std::uint64_t>(std::numeric_limits<idx_t>::max()),
                 "METIS seed ", seed, " does not fit METIS's 32-bit idx_t (at most ",
                 std::numeric_limits<idx_t>::max(), ")");
    STRATA_CHECK(graph.ncon >= 1 &&
                     graph.vwgt.size() ==
                         static_cast<std::size_t>(n) * static_cast<std::size_t>(graph.ncon) &&
                     static_cast<std::size_t>(graph.xadj.back()) == graph.adjncy.size(),
                 "METIS graph: inconsistent sizes (", graph.xadj.size(), " xadj, ",
                 graph.adjncy.size(), " adjncy, ", graph.vwgt.size(), " vwgt, ncon ", graph.ncon,
                 ")");
    Partition partition{num_parts, std::vector<int>(static_cast<std::size_t>(n), 0)};
    if (edgecut != nullptr) {
        *edgecut = 0;
    }
    if (num_parts == 1 || n == 0) {
        return partition;
    }

    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = static_cast<idx_t>(seed);
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t nvtxs = static_cast<idx_t>(n);
    idx_t ncon = graph.ncon;
    idx_t nparts = num_parts;
    idx_t objval = 0;
    std::vector<idx_t> part(static_cast<std::size_t>(n));
    // METIS takes non-const pointers but does not modify xadj/adjncy/vwgt (numbering is 0).
    const int status = METIS_PartGraphKway(
        &nvtxs, &ncon, const_cast<idx_t*>(graph.xadj.data()),
        const_cast<idx_t*>(graph.adjncy.data()), const_cast<idx_t*>(graph.vwgt.data()),
        /*vsize=*/nullptr, /*adjwgt=*/nullptr, &nparts, /*tpwgts=*/nullptr, /*ubvec=*/nullptr,
        options, &objval, part.data());
    STRATA_CHECK(status == METIS_OK, "METIS_PartGraphKway(", n, " vertices, ", num_parts,
                 " parts, ncon ", graph.ncon, ") failed: ", metis_status_name(status));
    for (std::size_t v = 0; v < part.size(); ++v) {
        partition.owner[v] = static_cast<int>(part[v]);
    }
    if (edgecut != nullptr) {
        *edgecut = objval;
    }
    return partition;
}

}  // namespace strata
