// local_part_of_slices: agree on the slices (checked, offsets gathered), the owners by method,
// distribute_parts, then the split.
#include "partition/slice_load.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "partition/distribute_parts.hpp"
#include "partition/ptscotch_partitioner.hpp"
#include "partition/slice_owners.hpp"
#include "src/base/error.hpp"

namespace strata {

void check_slice(const GraphSlice& slice, const std::string& what) {
    const std::size_t rows = slice.indptr.size() - 1;
    STRATA_CHECK(!slice.indptr.empty() && slice.indptr.front() == 0, what,
                 ": indptr must start at 0");
    STRATA_CHECK(
        slice.vertex_offsets.size() == 2 &&
            slice.vertex_offsets[1] - slice.vertex_offsets[0] == static_cast<global_id>(rows),
        what, ": the slice's range does not hold its ", rows, " rows");
    STRATA_CHECK(std::is_sorted(slice.indptr.begin(), slice.indptr.end()), what,
                 ": indptr is not non-decreasing");
    const auto edges = static_cast<std::size_t>(slice.indptr.back());
    STRATA_CHECK(slice.indices.size() == edges, what, ": indices has ", slice.indices.size(),
                 " entries, indptr ends at ", edges);
    STRATA_CHECK(slice.edge_weight.empty() || slice.edge_weight.size() == edges, what,
                 ": edge_weight has ", slice.edge_weight.size(), " entries, expected ", edges);
    const global_id n = slice.num_vertices;
    for (const std::int64_t source : slice.indices) {
        STRATA_CHECK(source >= 0 && source < n, what, ": source id ", source, " is outside [0, ", n,
                     ")");
    }
    STRATA_CHECK(static_cast<std::size_t>(slice.features.rows) == rows, what, ": x has ",
                 slice.features.rows, " rows, expected ", rows);
    STRATA_CHECK(slice.labels.size() == rows, what, ": y has ", slice.labels.size(),
                 " entries, expected ", rows);
    for (const std::int64_t label : slice.labels) {
        STRATA_CHECK(label >= -1 && label < slice.num_classes, what, ": label ", label,
                     " is outside [-1, ", slice.num_classes, ")");
    }
    STRATA_CHECK(slice.num_splits >= 1, what, ": num_splits = ", slice.num_splits);
    const std::size_t mask_size = static_cast<std::size_t>(slice.num_splits) * rows;
    for (const auto* mask : {&slice.train_mask, &slice.val_mask, &slice.test_mask}) {
        STRATA_CHECK(mask->size() == mask_size, what, ": a mask has ", mask->size(),
                     " entries, expected ", mask_size, " (splits x rows)");
        STRATA_CHECK(std::all_of(mask->begin(), mask->end(), [](std::uint8_t v) { return v <= 1; }),
                     what, ": a mask holds a value other than 0 and 1");
    }
}

LocalPart local_part_of_slices(GraphSlice& slice, Communicator& comm,
                               const InMemoryPartitionOptions& options, int split_index,
                               const std::string& what) {
    const int size = comm.size();
    const int rank = comm.rank();
    if (slice.vertex_offsets.size() == static_cast<std::size_t>(size) + 1 && slice.rank == rank &&
        size > 1) {  // as a previous call left them: back to this rank's range
        slice.vertex_offsets = {slice.first(), slice.first() + slice.num_local()};
    }
    // Every rank's verdict on its own slice, then everyone's range, edge count and sizes.
    std::string error;
    try {
        check_slice(slice, what);
    } catch (const Error& e) {
        error = e.what();
    }
    const auto r = static_cast<std::size_t>(rank);
    const auto p = static_cast<std::size_t>(size);
    std::vector<std::int64_t> facts(6 * p, 0);  // first, rows, edges, N, classes, splits per rank
    facts[6 * r] = error.empty() ? slice.vertex_offsets[0] : -1;
    facts[6 * r + 1] = error.empty() ? static_cast<std::int64_t>(slice.indptr.size()) - 1 : -1;
    facts[6 * r + 2] = error.empty() ? slice.indptr.back() : 0;
    facts[6 * r + 3] = slice.num_vertices;
    facts[6 * r + 4] = slice.num_classes;
    facts[6 * r + 5] = slice.num_splits;
    comm.allreduce_sum(facts);
    std::vector<global_id> offsets{0};
    for (std::size_t q = 0; q < p; ++q) {
        const std::string who = what + " (rank " + std::to_string(q) + ")";
        STRATA_CHECK(facts[6 * q] >= 0, who, ": its slice is invalid",
                     q == r ? ": " + error : std::string());
        STRATA_CHECK(facts[6 * q] == offsets.back(), who, ": its rows start at vertex ",
                     facts[6 * q], ", expected ", offsets.back(),
                     " (rank r's rows must follow rank r - 1's, from vertex 0)");
        STRATA_CHECK(facts[6 * q + 3] == facts[3] && facts[6 * q + 4] == facts[4] &&
                         facts[6 * q + 5] == facts[5],
                     who, ": num_nodes, num_classes or num_splits differ from rank 0's");
        offsets.push_back(facts[6 * q] + facts[6 * q + 1]);
    }
    STRATA_CHECK(offsets.back() == slice.num_vertices, what, ": the ranks' rows end at vertex ",
                 offsets.back(), ", but the graph has ", slice.num_vertices, " vertices");
    STRATA_CHECK(slice.num_vertices >= size, what, ": ", slice.num_vertices,
                 " vertices cannot be split over ", size, " ranks");
    check_split_index(slice.num_splits, split_index, what);
    slice.vertex_offsets = offsets;
    slice.rank = rank;
    slice.num_edges = 0;
    for (std::size_t q = 0; q < p; ++q) {
        slice.num_edges += facts[6 * q + 2];
    }
    const global_id first = slice.first();
    const global_id count = slice.num_local();
    std::vector<int> owner;
    if (size == 1 || options.method == "block") {
        owner = block_owners_of(slice.num_vertices, size, first, count);
    } else if (options.method == "random") {
        owner = random_owners_of(slice.num_vertices, size, options.seed, first, count);
    } else if (options.method == "ptscotch") {
        owner = partition_ptscotch(slice, size, PtScotchOptions{.seed = options.seed}, comm);
    } else {
        STRATA_CHECK_OPTION(options.method != "metis", "partition_method", "'metis'",
                            "needs the whole graph on one rank; per-rank slices take ptscotch, "
                            "block or random");
        STRATA_CHECK_OPTION(false, "partition_method", "'" + options.method + "'",
                            "expected ptscotch, block or random");
    }
    std::vector<LocalPart> parts = distribute_parts(slice, owner, size, comm);
    LocalPart part = std::move(parts.front());
    select_split(part, split_index, comm, what);
    return part;
}

}  // namespace strata
