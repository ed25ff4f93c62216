// split_local_rows: the inner block in parallel (row counts, then a fill), the halo blocks in one
// pass over the boundary rows (each block's rows are appended in ascending order).
#include "partition/local_blocks.hpp"

#include <cstddef>

namespace strata {

LocalBlocks split_local_rows(index_t num_owned, const std::vector<index_t>& recv_offsets,
                             std::span<const std::int64_t> row_ptr, const index_t* col_idx,
                             const float* values, std::span<const std::int64_t> value_start) {
    const auto n = static_cast<std::size_t>(num_owned);
    const std::span<const std::int64_t> start = value_start.empty() ? row_ptr : value_start;
    const std::size_t num_peers = recv_offsets.size() - 1;
    std::vector<std::int32_t> peer_of(static_cast<std::size_t>(recv_offsets.back()));
    for (std::size_t p = 0; p < num_peers; ++p) {
        for (index_t j = recv_offsets[p]; j < recv_offsets[p + 1]; ++j) {
            peer_of[static_cast<std::size_t>(j)] = static_cast<std::int32_t>(p);
        }
    }
    LocalBlocks out;
    HostCsr& inner = out.inner;
    inner.rows = num_owned;
    inner.cols = num_owned;
    inner.row_ptr.assign(n + 1, 0);
    std::vector<std::uint8_t> boundary(n, 0);
    const auto rows = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t row = 0; row < rows; ++row) {
        const auto i = static_cast<std::size_t>(row);
        index_t owned = 0;
        for (auto k = static_cast<std::size_t>(row_ptr[i]);
             k < static_cast<std::size_t>(row_ptr[i + 1]); ++k) {
            owned += col_idx[k] < num_owned ? 1 : 0;
        }
        inner.row_ptr[i + 1] = owned;
        boundary[i] = static_cast<std::int64_t>(owned) < row_ptr[i + 1] - row_ptr[i] ? 1 : 0;
    }
    for (std::size_t i = 0; i < n; ++i) {
        inner.row_ptr[i + 1] += inner.row_ptr[i];
        (boundary[i] != 0 ? out.boundary_rows : out.interior_rows)
            .push_back(static_cast<index_t>(i));
    }
    inner.col_idx.resize(static_cast<std::size_t>(inner.row_ptr[n]));
    inner.values.resize(inner.col_idx.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t row = 0; row < rows; ++row) {
        const auto i = static_cast<std::size_t>(row);
        auto slot = static_cast<std::size_t>(inner.row_ptr[i]);
        for (auto k = static_cast<std::size_t>(row_ptr[i]);
             k < static_cast<std::size_t>(row_ptr[i + 1]); ++k) {
            if (col_idx[k] < num_owned) {
                inner.col_idx[slot] = col_idx[k];
                inner.values[slot++] = values[static_cast<std::size_t>(start[i]) + k -
                                              static_cast<std::size_t>(row_ptr[i])];
            }
        }
    }
    out.halo.resize(num_peers);
    for (std::size_t p = 0; p < num_peers; ++p) {
        out.halo[p].rows = num_owned;
        out.halo[p].block.cols = recv_offsets[p + 1] - recv_offsets[p];
    }
    for (const index_t r : out.boundary_rows) {
        const auto i = static_cast<std::size_t>(r);
        for (auto k = static_cast<std::size_t>(row_ptr[i]);
             k < static_cast<std::size_t>(row_ptr[i + 1]); ++k) {
            const index_t c = col_idx[k];
            if (c < num_owned) {
                continue;
            }
            const auto p =
                static_cast<std::size_t>(peer_of[static_cast<std::size_t>(c - num_owned)]);
            HostDcsr& block = out.halo[p];
            if (block.row_ids.empty() || block.row_ids.back() != r) {
                block.row_ids.push_back(r);
                block.block.row_ptr.push_back(block.block.row_ptr.back());
            }
            block.block.col_idx.push_back(c - num_owned - recv_offsets[p]);
            block.block.values.push_back(values[static_cast<std::size_t>(start[i]) + k -
                                                static_cast<std::size_t>(row_ptr[i])]);
            ++block.block.row_ptr.back();
        }
    }
    for (HostDcsr& block : out.halo) {
        block.block.rows = block.listed_rows();
    }
    return out;
}

}  // namespace strata
