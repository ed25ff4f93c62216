// ghost_graph: remote columns sorted and deduplicated into ghosts, each column replaced by its
// local number, and the ghost lists sent to their owners (one all_to_all).
#include "partition/ghost_graph.hpp"

#include <algorithm>
#include <limits>

#include "src/base/error.hpp"
#include "src/base/release.hpp"

namespace strata {

void check_ghost_limit(int rank, std::size_t rows, std::size_t ghosts) {
    constexpr auto limit = static_cast<std::size_t>(std::numeric_limits<index_t>::max());
    STRATA_CHECK(rows <= limit && ghosts <= limit - rows, "slice ", rank, ": ", rows, " rows and ",
                 ghosts, " neighbours on other slices exceed the 32-bit local limit (", limit,
                 "); run on more processes");
}

GhostGraph ghost_graph(SliceAdjacency&& adj, const std::vector<global_id>& offsets, int rank,
                       Communicator& comm) {
    const std::size_t p = offsets.size() - 1;
    STRATA_CHECK(p == static_cast<std::size_t>(comm.size()) && rank == comm.rank(),
                 "ghost_graph: slice ", rank, " of ", p, " on rank ", comm.rank(), " of ",
                 comm.size());
    GhostGraph g;
    g.first = offsets[static_cast<std::size_t>(rank)];
    const global_id end = offsets[static_cast<std::size_t>(rank) + 1];
    const auto n = static_cast<std::size_t>(end - g.first);
    STRATA_CHECK(adj.indptr.size() == n + 1, "ghost_graph: ", adj.indptr.size() - 1,
                 " rows for a slice of ", n);

    // Ghosts: the remote columns, sorted, unique.
    g.ghost_ids.reserve(static_cast<std::size_t>(
        std::count_if(adj.indices.begin(), adj.indices.end(),
                      [&](std::int64_t u) { return u < g.first || u >= end; })));
    for (const std::int64_t u : adj.indices) {
        if (u < g.first || u >= end) {
            g.ghost_ids.push_back(u);
        }
    }
    std::sort(g.ghost_ids.begin(), g.ghost_ids.end());
    g.ghost_ids.erase(std::unique(g.ghost_ids.begin(), g.ghost_ids.end()), g.ghost_ids.end());
    g.ghost_ids.shrink_to_fit();
    check_ghost_limit(rank, n, g.ghost_ids.size());

    // Local columns.
    g.indices.resize(adj.indices.size());
    const auto num = static_cast<std::int64_t>(adj.indices.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < num; ++k) {
        const std::int64_t u = adj.indices[static_cast<std::size_t>(k)];
        g.indices[static_cast<std::size_t>(k)] =
            u >= g.first && u < end
                ? static_cast<index_t>(u - g.first)
                : static_cast<index_t>(
                      n + static_cast<std::size_t>(
                              std::lower_bound(g.ghost_ids.begin(), g.ghost_ids.end(), u) -
                              g.ghost_ids.begin()));
    }
    g.indptr = std::move(adj.indptr);
    release(adj.indices);

    // Ghosts grouped by owner; each owner is sent the ids it must answer for.
    g.ghost_offsets.resize(p + 1);
    for (std::size_t q = 0; q <= p; ++q) {
        g.ghost_offsets[q] = static_cast<std::size_t>(
            std::lower_bound(g.ghost_ids.begin(), g.ghost_ids.end(), offsets[q]) -
            g.ghost_ids.begin());
    }
    std::vector<std::size_t> byte_offsets(p + 1);
    for (std::size_t q = 0; q <= p; ++q) {
        byte_offsets[q] = g.ghost_offsets[q] * sizeof(global_id);
    }
    const ReceivedBlocks asked =
        comm.all_to_all(std::as_bytes(std::span<const global_id>(g.ghost_ids)), byte_offsets);
    g.send_rows.resize(asked.bytes.size() / sizeof(global_id));
    g.send_offsets.resize(p + 1);
    for (std::size_t q = 0; q <= p; ++q) {
        g.send_offsets[q] = asked.offsets[q] / sizeof(global_id);
    }
    for (std::size_t k = 0; k < g.send_rows.size(); ++k) {
        global_id id = 0;
        std::memcpy(&id, asked.bytes.data() + k * sizeof(id), sizeof(id));
        STRATA_CHECK(id >= g.first && id < end, "ghost_graph: rank ", rank, " asked for vertex ",
                     id, " outside its slice [", g.first, ", ", end, ")");
        g.send_rows[k] = static_cast<index_t>(id - g.first);
    }
    return g;
}

void exchange_ghost_bytes(const GhostGraph& g, std::span<const std::byte> local,
                          std::span<std::byte> ghost, std::size_t width, Communicator& comm) {
    STRATA_CHECK(local.size() == g.num_local() * width && ghost.size() == g.num_ghosts() * width,
                 "exchange_ghosts: ", local.size() / width, " local and ", ghost.size() / width,
                 " ghost values for ", g.num_local(), " rows and ", g.num_ghosts(), " ghosts");
    std::vector<std::byte> send(g.send_rows.size() * width);
    for (std::size_t k = 0; k < g.send_rows.size(); ++k) {
        std::memcpy(send.data() + k * width,
                    local.data() + static_cast<std::size_t>(g.send_rows[k]) * width, width);
    }
    std::vector<std::size_t> byte_offsets(g.send_offsets.size());
    for (std::size_t q = 0; q < byte_offsets.size(); ++q) {
        byte_offsets[q] = g.send_offsets[q] * width;
    }
    const ReceivedBlocks received = comm.all_to_all(send, byte_offsets);
    STRATA_CHECK(received.bytes.size() == ghost.size(), "exchange_ghosts: received ",
                 received.bytes.size() / width, " values for ", g.num_ghosts(), " ghosts");
    std::memcpy(ghost.data(), received.bytes.data(), ghost.size());
}

}  // namespace strata
