// way_mirrors: one pass over the structure, marking (row, way) pairs; the lists packed for the
// exchange.
#include "src/nn/way_mirrors.hpp"

#include <algorithm>

#include "src/base/error.hpp"

namespace strata {

WayMirrors way_mirrors(const HostCsr& a, std::span<const index_t> chunk_offsets, int ways) {
    const int chunks = static_cast<int>(chunk_offsets.size()) - 1;
    STRATA_CHECK_OPTION(ways >= 1 && chunks >= 1 && chunks % ways == 0, "chunks", chunks,
                        "every way needs the same number of chunks (a multiple of ways = ", ways,
                        ")");
    STRATA_CHECK(chunk_offsets.back() == a.rows && a.rows == a.cols, "way_mirrors: ", a.rows, " x ",
                 a.cols, " structure for chunks covering ", chunk_offsets.back(), " rows");
    WayMirrors m;
    m.ways = ways;
    m.chunks = chunks;
    m.forward.resize(static_cast<std::size_t>(chunks * ways));
    m.backward.resize(static_cast<std::size_t>(chunks * ways));
    std::vector<int> chunk(static_cast<std::size_t>(a.rows));
    for (int c = 0; c < chunks; ++c) {
        std::fill(chunk.begin() + chunk_offsets[static_cast<std::size_t>(c)],
                  chunk.begin() + chunk_offsets[static_cast<std::size_t>(c) + 1], c);
    }
    const int per_way = chunks / ways;
    auto way = [&](index_t row) { return chunk[static_cast<std::size_t>(row)] / per_way; };
    // Marks per (row, way), so each list gets every row once, in ascending order.
    std::vector<std::uint8_t> forward(static_cast<std::size_t>(a.rows) * ways, 0);
    std::vector<std::uint8_t> backward(forward.size(), 0);
    for (index_t u = 0; u < a.rows; ++u) {
        const int wu = way(u);
        for (index_t k = a.row_ptr[static_cast<std::size_t>(u)];
             k < a.row_ptr[static_cast<std::size_t>(u) + 1]; ++k) {
            const index_t v = a.col_idx[static_cast<std::size_t>(k)];
            const int wv = way(v);
            if (wu != wv) {
                forward[static_cast<std::size_t>(v) * ways + wu] = 1;   // u (way wu) reads v
                backward[static_cast<std::size_t>(u) * ways + wv] = 1;  // v's pull reads dy[u]
            }
        }
    }
    for (index_t row = 0; row < a.rows; ++row) {
        const int c = chunk[static_cast<std::size_t>(row)];
        for (int w = 0; w < ways; ++w) {
            const std::size_t at = static_cast<std::size_t>(row) * ways + w;
            if (forward[at] != 0) {
                m.forward[static_cast<std::size_t>(c * ways + w)].push_back(row);
            }
            if (backward[at] != 0) {
                m.backward[static_cast<std::size_t>(c * ways + w)].push_back(row);
            }
        }
    }
    return m;
}

MirrorLists pack_mirror_lists(const WayMirrors& m) {
    MirrorLists packed;
    const auto ways = static_cast<std::size_t>(m.ways);
    const auto num_chunks = static_cast<std::size_t>(m.chunks);
    for (const bool forward : {true, false}) {
        const auto& lists = forward ? m.forward : m.backward;
        auto& offsets = forward ? packed.forward_offsets : packed.backward_offsets;
        std::vector<std::size_t> out(num_chunks, 0);
        for (std::size_t w = 0; w < ways; ++w) {
            std::size_t in_way = 0;  // a merged chunk may span all of a way's chunks
            for (std::size_t c = 0; c < num_chunks; ++c) {
                const std::vector<index_t>& list = lists[c * ways + w];
                offsets.push_back(packed.rows.size());
                packed.rows.insert(packed.rows.end(), list.begin(), list.end());
                out[c] += list.size();
                in_way += list.size();
            }
            packed.recv_rows = std::max(packed.recv_rows, in_way);
        }
        offsets.push_back(packed.rows.size());
        // Send bound: all of one way's chunks to every other way.
        const std::size_t per_way = num_chunks / ways;
        for (std::size_t w = 0; w < ways; ++w) {
            std::size_t total = 0;
            for (std::size_t c = w * per_way; c < (w + 1) * per_way; ++c) {
                total += out[c];
            }
            packed.send_rows = std::max(packed.send_rows, total);
        }
    }
    return packed;
}

}  // namespace strata
