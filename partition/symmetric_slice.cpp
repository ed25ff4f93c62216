// symmetric_adjacency: local in-edges plus the reverse edges received from the other slices, each
// row sorted and deduplicated.
#include "partition/symmetric_slice.hpp"

#include <algorithm>
#include <cstring>
#include <span>

#include "datasets/adjacency.hpp"
#include "src/base/error.hpp"
#include "src/base/release.hpp"

namespace strata {

SliceAdjacency symmetric_adjacency(const GraphSlice& slice, Communicator& comm) {
    const std::vector<global_id>& offsets = slice.vertex_offsets;
    const std::size_t p = offsets.size() - 1;
    STRATA_CHECK(p == static_cast<std::size_t>(comm.size()) && slice.rank == comm.rank(),
                 "symmetric_adjacency: slice ", slice.rank, " of ", p, " on rank ", comm.rank(),
                 " of ", comm.size());
    const global_id first = slice.first();
    const auto n = static_cast<std::size_t>(slice.num_local());
    const auto owner = [&](std::int64_t u) {
        return static_cast<std::size_t>(std::upper_bound(offsets.begin(), offsets.end(), u) -
                                        offsets.begin() - 1);
    };

    // Reverse edges (u, v) for every stored u -> v, u != v, grouped by the owner of u.
    std::vector<std::int64_t> send_offsets(p + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t v = first + static_cast<std::int64_t>(i);
        for (auto k = slice.indptr[i]; k < slice.indptr[i + 1]; ++k) {
            const std::int64_t u = slice.indices[static_cast<std::size_t>(k)];
            if (u != v) {
                send_offsets[owner(u) + 1] += 2;
            }
        }
    }
    for (std::size_t q = 0; q < p; ++q) {
        send_offsets[q + 1] += send_offsets[q];
    }
    std::vector<std::int64_t> send(static_cast<std::size_t>(send_offsets.back()));
    {
        std::vector<std::int64_t> at(send_offsets.begin(), send_offsets.end() - 1);
        for (std::size_t i = 0; i < n; ++i) {
            const std::int64_t v = first + static_cast<std::int64_t>(i);
            for (auto k = slice.indptr[i]; k < slice.indptr[i + 1]; ++k) {
                const std::int64_t u = slice.indices[static_cast<std::size_t>(k)];
                if (u != v) {
                    auto& pos = at[owner(u)];
                    send[static_cast<std::size_t>(pos++)] = u;
                    send[static_cast<std::size_t>(pos++)] = v;
                }
            }
        }
    }
    std::vector<std::size_t> byte_offsets(p + 1);
    for (std::size_t q = 0; q <= p; ++q) {
        byte_offsets[q] = static_cast<std::size_t>(send_offsets[q]) * sizeof(std::int64_t);
    }
    ReceivedBlocks received =
        comm.all_to_all(std::as_bytes(std::span<const std::int64_t>(send)), byte_offsets);
    release(send);
    // The received (u, v) pairs, read in place (no second copy of them).
    const std::size_t num_pairs = received.bytes.size() / (2 * sizeof(std::int64_t));
    const auto pair_value = [&](std::size_t k, int which) {
        std::int64_t x = 0;
        std::memcpy(&x,
                    received.bytes.data() + (2 * k + static_cast<std::size_t>(which)) * sizeof(x),
                    sizeof(x));
        return x;
    };

    // Row sizes: stored in-edges without loops, plus received reverse edges.
    SliceAdjacency adj;
    adj.indptr.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t v = first + static_cast<std::int64_t>(i);
        for (auto k = slice.indptr[i]; k < slice.indptr[i + 1]; ++k) {
            adj.indptr[i + 1] += slice.indices[static_cast<std::size_t>(k)] != v ? 1 : 0;
        }
    }
    for (std::size_t k = 0; k < num_pairs; ++k) {
        adj.indptr[static_cast<std::size_t>(pair_value(k, 0) - first) + 1] += 1;
    }
    for (std::size_t i = 0; i < n; ++i) {
        adj.indptr[i + 1] += adj.indptr[i];
    }
    adj.indices.resize(static_cast<std::size_t>(adj.indptr.back()));
    std::vector<std::int64_t> at(adj.indptr.begin(), adj.indptr.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t v = first + static_cast<std::int64_t>(i);
        for (auto k = slice.indptr[i]; k < slice.indptr[i + 1]; ++k) {
            const std::int64_t u = slice.indices[static_cast<std::size_t>(k)];
            if (u != v) {
                adj.indices[static_cast<std::size_t>(at[i]++)] = u;
            }
        }
    }
    for (std::size_t k = 0; k < num_pairs; ++k) {
        const auto i = static_cast<std::size_t>(pair_value(k, 0) - first);
        adj.indices[static_cast<std::size_t>(at[i]++)] = pair_value(k, 1);
    }
    received = {};

    // Sorted, unique rows; the capacity given back (PT-Scotch runs next, holding this array).
    sort_unique_rows(adj.indptr, adj.indices);
    adj.indices.shrink_to_fit();
    return adj;
}

}  // namespace strata
