// SparseFeatures: the choice, and the CSR upload with its transpose.
#include "layers/sparse_features.hpp"

#include <array>
#include <cstdio>
#include <numeric>
#include <vector>

#include "src/base/error.hpp"

namespace strata {
namespace {

std::string percent(double fraction) {
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "%.2f %%", 100.0 * fraction);
    return text.data();
}

/// x (rows x cols, CSR, columns ascending) from the non-zeros of `dense`.
HostCsr compress(const HostMatrix& dense) {
    HostCsr x;
    x.rows = static_cast<index_t>(dense.rows);
    x.cols = dense.cols;
    x.row_ptr.reserve(static_cast<std::size_t>(dense.rows) + 1);
    for (std::int64_t r = 0; r < dense.rows; ++r) {
        const float* row = dense.row(r);
        for (index_t c = 0; c < dense.cols; ++c) {
            if (row[c] != 0.0f) {
                x.col_idx.push_back(c);
                x.values.push_back(row[c]);
            }
        }
        x.row_ptr.push_back(x.nnz());
    }
    return x;
}

}  // namespace

std::optional<SparseFeaturesMode> parse_sparse_features(std::string_view text) {
    if (text == "auto") {
        return SparseFeaturesMode::automatic;
    }
    if (text == "on") {
        return SparseFeaturesMode::on;
    }
    if (text == "off") {
        return SparseFeaturesMode::off;
    }
    return std::nullopt;
}

std::int64_t count_nonzeros(const HostMatrix& m) {
    std::int64_t n = 0;
    for (const float v : m.values) {
        n += v != 0.0f ? 1 : 0;
    }
    return n;
}

FeatureChoice choose_feature_storage(SparseFeaturesMode mode, const HostMatrix& features,
                                     const std::string& blocker, Communicator& comm) {
    std::array<std::int64_t, 2> counts{count_nonzeros(features),
                                       static_cast<std::int64_t>(features.values.size())};
    comm.allreduce_sum(counts);
    FeatureChoice choice;
    choice.density =
        counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : 1.0;
    const std::string density = percent(choice.density) + " non-zero";
    switch (mode) {
        case SparseFeaturesMode::off:
            choice.reason = density + " (sparse_features = off)";
            return choice;
        case SparseFeaturesMode::on:
            STRATA_CHECK_OPTION(blocker.empty(), "sparse_features", "'on'", blocker);
            choice.storage = FeatureStorage::sparse;
            choice.reason = density + " (sparse_features = on)";
            return choice;
        case SparseFeaturesMode::automatic:
            break;
    }
    if (!blocker.empty()) {
        choice.reason = density + ", but " + blocker + " (auto)";
        return choice;
    }
    const bool sparse = choice.density <= sparse_features_threshold;
    choice.storage = sparse ? FeatureStorage::sparse : FeatureStorage::dense;
    choice.reason =
        density + (sparse ? " <= " : " > ") + percent(sparse_features_threshold) + " (auto)";
    return choice;
}

SparseFeatures::SparseFeatures(Backend& backend, const HostMatrix& dense) {
    STRATA_CHECK(dense.rows <= std::numeric_limits<index_t>::max(), "sparse features: ", dense.rows,
                 " rows do not fit 32-bit local ids");
    const HostCsr x = compress(dense);
    std::vector<index_t> entries;
    const HostCsr xt = transpose_with_entries(x, entries);
    x_ = CsrMatrix::upload(backend, x);
    xt_ = CsrMatrix::upload(backend, xt);
    x_dropped_ = CsrMatrix::upload(backend, x);
    xt_dropped_ = CsrMatrix::upload(backend, xt);
    xt_entries_ = Buffer<index_t>(backend, std::span<const index_t>(entries));
    std::vector<global_id> cols(static_cast<std::size_t>(dense.cols));
    std::iota(cols.begin(), cols.end(), global_id{0});
    col_ids_ = Buffer<global_id>(backend, std::span<const global_id>(cols));
    view_ = SparseInput{.x = &x_,
                        .xt = &xt_,
                        .x_dropped = &x_dropped_,
                        .xt_dropped = &xt_dropped_,
                        .xt_entries = xt_entries_.span(),
                        .col_ids = col_ids_.span()};
}

std::int64_t SparseFeatures::bytes(index_t rows, index_t cols, std::int64_t nnz) {
    // x and xᵀ twice (clean, dropped), the entry map, the column ids.
    return 2 * (csr_bytes(rows, nnz) + csr_bytes(cols, nnz)) +
           nnz * static_cast<std::int64_t>(sizeof(index_t)) +
           static_cast<std::int64_t>(cols) * static_cast<std::int64_t>(sizeof(global_id));
}

}  // namespace strata
