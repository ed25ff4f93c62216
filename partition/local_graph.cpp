// LocalGraphBuilder: per-rank inner/halo blocks, exchange pattern and send lists from one
// halo plan; validate_local_graph checks what the trainer relies on.
#include "partition/local_graph.hpp"

#include <cmath>
#include <limits>

#include "partition/local_blocks.hpp"
#include "partition/local_limits.hpp"
#include "src/base/error.hpp"

namespace strata {

LocalGraphBuilder::LocalGraphBuilder(const GlobalCsr& adjacency, const Partition& partition)
    : a_(adjacency), partition_(partition) {
    validate_partition(partition, adjacency.num_rows(), "partition");
    numbering_ = renumber(partition);
    plan_ = build_halo_plan(adjacency, partition, numbering_);
    column_.assign(static_cast<std::size_t>(adjacency.num_rows()), -1);
    // Weighted in-degrees, each summed once in column order, so every rank that holds a vertex
    // (as owned or halo) holds the same double.
    degree_.assign(static_cast<std::size_t>(adjacency.num_rows()), 0.0);
    const auto rows = static_cast<std::int64_t>(degree_.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t v = 0; v < rows; ++v) {
        const auto u = static_cast<std::size_t>(v);
        double sum = 0.0;
        for (auto k = static_cast<std::size_t>(adjacency.indptr[u]);
             k < static_cast<std::size_t>(adjacency.indptr[u + 1]); ++k) {
            sum += static_cast<double>(adjacency.values[k]);
        }
        degree_[u] = sum;
    }
    // One 8-byte load per A entry tells both the owner and the row within it.
    code_.resize(numbering_.new_id.size());
    const auto n = static_cast<std::int64_t>(code_.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto u = static_cast<std::size_t>(v);
        const auto o = static_cast<std::size_t>(partition.owner[u]);
        code_[u] = static_cast<std::uint64_t>(o) << 32 |
                   static_cast<std::uint64_t>(numbering_.new_id[u] - numbering_.part_offsets[o]);
    }
}

LocalGraph LocalGraphBuilder::build(int rank) {
    const int num_parts = partition_.num_parts;
    STRATA_CHECK(rank >= 0 && rank < num_parts, "rank ", rank, " outside [0, ", num_parts, ")");
    LocalGraph g;
    g.rank = rank;
    g.num_parts = num_parts;
    g.num_global_vertices = a_.num_rows();
    g.first_owned = numbering_.part_offsets[static_cast<std::size_t>(rank)];
    LocalSizes sizes{.owned = numbering_.part_size(rank)};
    check_local_limits(sizes, rank, num_parts);
    g.num_owned = static_cast<index_t>(sizes.owned);
    const auto n = static_cast<std::size_t>(g.num_owned);
    g.owned_original.assign(numbering_.original.begin() + g.first_owned,
                            numbering_.original.begin() + g.first_owned + g.num_owned);
    g.owned_degree.reserve(g.owned_original.size());
    for (global_id v : g.owned_original) {
        g.owned_degree.push_back(degree_[static_cast<std::size_t>(v)]);
    }

    // Peers: parts this rank receives from (owners in its halo) or sends to (its vertices in
    // their halo); ascending.
    for (int p = 0; p < num_parts; ++p) {
        if (p != rank && (!plan_.halo_from(numbering_, rank, p).empty() ||
                          !plan_.halo_from(numbering_, p, rank).empty())) {
            g.pattern.peers.push_back(p);
        }
    }
    for (int p : g.pattern.peers) {
        sizes.rows_sent += static_cast<std::int64_t>(plan_.halo_from(numbering_, p, rank).size());
        sizes.halo += static_cast<std::int64_t>(plan_.halo_from(numbering_, rank, p).size());
    }
    check_local_limits(sizes, rank, num_parts);  // every offset below fits index_t
    std::int64_t sent = 0;
    std::int64_t received = 0;
    for (int p : g.pattern.peers) {
        const auto to_p = plan_.halo_from(numbering_, p, rank);
        for (global_id id : to_p) {
            g.send_rows.push_back(static_cast<index_t>(id - g.first_owned));
        }
        const auto from_p = plan_.halo_from(numbering_, rank, p);
        for (std::size_t j = 0; j < from_p.size(); ++j) {
            const global_id original = numbering_.original[static_cast<std::size_t>(from_p[j])];
            g.halo_original.push_back(original);
            g.halo_degree.push_back(degree_[static_cast<std::size_t>(original)]);
            column_[static_cast<std::size_t>(original)] =
                static_cast<index_t>(received) + static_cast<index_t>(j);
        }
        sent += static_cast<std::int64_t>(to_p.size());
        received += static_cast<std::int64_t>(from_p.size());
        g.pattern.send_offsets.push_back(static_cast<index_t>(sent));
        g.pattern.recv_offsets.push_back(static_cast<index_t>(received));
    }

    // Pass 1 (random access, one load per entry): the rank's rows with local column ids,
    // owned columns [0, n), halo columns n + position in the halo. Rows keep A's order.
    const auto rows = static_cast<std::int64_t>(n);
    std::vector<std::int64_t> row_ptr(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::size_t>(g.owned_original[i]);
        row_ptr[i + 1] = row_ptr[i] + a_.indptr[v + 1] - a_.indptr[v];
    }
    sizes.entries = row_ptr[n];
    check_local_limits(sizes, rank, num_parts);
    std::vector<index_t> local(static_cast<std::size_t>(row_ptr[n]));
    const auto me = static_cast<std::uint64_t>(rank);
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t row = 0; row < rows; ++row) {
        const auto i = static_cast<std::size_t>(row);
        const auto v = static_cast<std::size_t>(g.owned_original[i]);
        auto slot = static_cast<std::size_t>(row_ptr[i]);
        for (auto k = static_cast<std::size_t>(a_.indptr[v]);
             k < static_cast<std::size_t>(a_.indptr[v + 1]); ++k) {
            const auto u = static_cast<std::size_t>(a_.indices[k]);
            const std::uint64_t c = code_[u];
            local[slot++] =
                (c >> 32) == me ? static_cast<index_t>(c & 0xffffffffu) : g.num_owned + column_[u];
        }
    }

    // Pass 2 (local data only): split by column into the inner block and one compressed-row
    // block per peer; within a row each block's columns come out ascending because A's row is
    // sorted by original id and so is every peer's halo range.
    std::vector<std::int64_t> value_start(n);
    for (std::size_t i = 0; i < n; ++i) {
        value_start[i] = a_.indptr[static_cast<std::size_t>(g.owned_original[i])];
    }
    LocalBlocks blocks = split_local_rows(g.num_owned, g.pattern.recv_offsets, row_ptr,
                                          local.data(), a_.values.data(), value_start);
    g.inner = std::move(blocks.inner);
    g.halo = std::move(blocks.halo);
    g.boundary_rows = std::move(blocks.boundary_rows);
    g.interior_rows = std::move(blocks.interior_rows);
    return g;
}

LocalGraph build_local_graph(const GlobalCsr& adjacency, const Partition& partition, int rank) {
    LocalGraphBuilder builder(adjacency, partition);
    return builder.build(rank);
}

namespace {

void validate_block(const HostCsr& block, index_t rows, index_t cols, const std::string& what) {
    STRATA_CHECK(block.rows == rows && block.cols == cols, what, ": shape ", block.rows, " x ",
                 block.cols, ", expected ", rows, " x ", cols);
    validate(block, what.c_str());
    for (index_t r = 0; r < block.rows; ++r) {
        for (index_t k = block.row_ptr[static_cast<std::size_t>(r)];
             k < block.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
            const auto slot = static_cast<std::size_t>(k);
            STRATA_CHECK(k == block.row_ptr[static_cast<std::size_t>(r)] ||
                             block.col_idx[slot - 1] < block.col_idx[slot],
                         what, ": row ", r, " columns not strictly ascending (",
                         block.col_idx[slot - 1], " then ", block.col_idx[slot], ")");
            STRATA_CHECK(std::isfinite(block.values[slot]), what, ": non-finite value ",
                         block.values[slot], " in row ", r);
        }
    }
}

void validate_offsets(const std::vector<index_t>& offsets, std::size_t num_peers,
                      const std::string& what) {
    STRATA_CHECK(offsets.size() == num_peers + 1, what, ": ", offsets.size(), " offsets for ",
                 num_peers, " peers");
    STRATA_CHECK(offsets.front() == 0, what, ": first offset ", offsets.front(), ", expected 0");
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
        STRATA_CHECK(offsets[i] <= offsets[i + 1], what, ": not monotone at peer ", i, " (",
                     offsets[i], " > ", offsets[i + 1], ")");
    }
}

}  // namespace

void validate_local_graph(const LocalGraph& g, const std::string& what) {
    STRATA_CHECK(g.num_parts >= 1 && g.rank >= 0 && g.rank < g.num_parts, what, ": rank ", g.rank,
                 " of ", g.num_parts, " parts");
    STRATA_CHECK(g.num_owned >= 0 && g.first_owned >= 0 &&
                     g.first_owned + g.num_owned <= g.num_global_vertices,
                 what, ": owned range [", g.first_owned, ", ", g.first_owned + g.num_owned,
                 ") outside [0, ", g.num_global_vertices, ")");
    const auto n = static_cast<std::size_t>(g.num_owned);
    STRATA_CHECK(g.owned_original.size() == n, what, ": ", g.owned_original.size(),
                 " original ids for ", n, " owned vertices");
    for (std::size_t i = 0; i < n; ++i) {
        STRATA_CHECK(g.owned_original[i] >= 0 && g.owned_original[i] < g.num_global_vertices &&
                         (i == 0 || g.owned_original[i - 1] < g.owned_original[i]),
                     what, ": owned original id ", g.owned_original[i], " at row ", i,
                     " out of range or not ascending");
    }
    const ExchangePattern& pattern = g.pattern;
    const std::size_t num_peers = pattern.peers.size();
    for (std::size_t i = 0; i < num_peers; ++i) {
        const int p = pattern.peers[i];
        STRATA_CHECK(
            p >= 0 && p < g.num_parts && p != g.rank && (i == 0 || pattern.peers[i - 1] < p), what,
            ": peer ", p, " at position ", i, " is out of range, this rank, or not ascending");
    }
    validate_offsets(pattern.send_offsets, num_peers, what + ": send offsets");
    validate_offsets(pattern.recv_offsets, num_peers, what + ": recv offsets");
    STRATA_CHECK(g.send_rows.size() == static_cast<std::size_t>(pattern.num_send_rows()), what,
                 ": ", g.send_rows.size(), " send rows, pattern says ", pattern.num_send_rows());
    for (std::size_t i = 0; i < num_peers; ++i) {
        for (index_t k = pattern.send_offsets[i]; k < pattern.send_offsets[i + 1]; ++k) {
            const index_t row = g.send_rows[static_cast<std::size_t>(k)];
            STRATA_CHECK(row >= 0 && row < g.num_owned &&
                             (k == pattern.send_offsets[i] ||
                              g.send_rows[static_cast<std::size_t>(k) - 1] < row),
                         what, ": send row ", row, " for peer ", pattern.peers[i],
                         " out of range [0, ", g.num_owned, ") or not ascending");
        }
    }
    STRATA_CHECK(g.halo_original.size() == static_cast<std::size_t>(pattern.num_recv_rows()), what,
                 ": ", g.halo_original.size(), " halo ids, pattern receives ",
                 pattern.num_recv_rows());
    for (std::size_t i = 0; i < num_peers; ++i) {
        for (index_t k = pattern.recv_offsets[i]; k < pattern.recv_offsets[i + 1]; ++k) {
            const global_id id = g.halo_original[static_cast<std::size_t>(k)];
            STRATA_CHECK(id >= 0 && id < g.num_global_vertices &&
                             (k == pattern.recv_offsets[i] ||
                              g.halo_original[static_cast<std::size_t>(k) - 1] < id),
                         what, ": halo original id ", id, " from peer ", pattern.peers[i],
                         " out of range or not ascending");
        }
    }
    STRATA_CHECK(g.owned_degree.size() == n && g.halo_degree.size() == g.halo_original.size(), what,
                 ": ", g.owned_degree.size(), " owned and ", g.halo_degree.size(),
                 " halo degrees for ", n, " owned and ", g.halo_original.size(), " halo vertices");
    for (auto [degrees, kind] :
         {std::pair{&g.owned_degree, "owned"}, std::pair{&g.halo_degree, "halo"}}) {
        for (std::size_t k = 0; k < degrees->size(); ++k) {
            STRATA_CHECK(std::isfinite((*degrees)[k]), what, ": ", kind, " degree ", k, " is ",
                         (*degrees)[k], " (not finite)");
        }
    }
    validate_block(g.inner, g.num_owned, g.num_owned, what + ": inner block");
    STRATA_CHECK(g.halo.size() == num_peers, what, ": ", g.halo.size(), " halo blocks for ",
                 num_peers, " peers");
    std::vector<std::uint8_t> has_halo(n, 0);
    for (std::size_t i = 0; i < num_peers; ++i) {
        const HostDcsr& block = g.halo[i];
        const std::string name = what + ": halo block of peer " + std::to_string(pattern.peers[i]);
        STRATA_CHECK(block.rows == g.num_owned, name, ": height ", block.rows, ", expected ",
                     g.num_owned);
        validate(block, name.c_str());
        validate_block(block.block, block.listed_rows(),
                       pattern.recv_offsets[i + 1] - pattern.recv_offsets[i], name);
        for (std::size_t r = 0; r < block.row_ids.size(); ++r) {
            STRATA_CHECK(block.block.row_ptr[r + 1] > block.block.row_ptr[r], name, ": listed row ",
                         block.row_ids[r], " has no entries");
            has_halo[static_cast<std::size_t>(block.row_ids[r])] = 1;
        }
    }
    STRATA_CHECK(g.boundary_rows.size() + g.interior_rows.size() == n, what, ": ",
                 g.boundary_rows.size(), " boundary + ", g.interior_rows.size(),
                 " interior rows for ", n, " owned rows");
    for (auto [rows, flag] : {std::pair{&g.boundary_rows, 1}, std::pair{&g.interior_rows, 0}}) {
        for (std::size_t k = 0; k < rows->size(); ++k) {
            const index_t r = (*rows)[k];
            STRATA_CHECK(r >= 0 && r < g.num_owned && (k == 0 || (*rows)[k - 1] < r) &&
                             has_halo[static_cast<std::size_t>(r)] == flag,
                         what, ": ", flag == 1 ? "boundary" : "interior", " row ", r,
                         " out of range, not ascending, or misclassified");
        }
    }
}

}  // namespace strata
