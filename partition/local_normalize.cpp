// normalized: per row, the operator's values from A and the degrees; the symmetric operator's
// inner block gets its diagonal merged in (two passes: row lengths, then values).
#include "partition/local_normalize.hpp"

#include <cmath>
#include <cstddef>

#include "src/base/error.hpp"

namespace strata {
namespace {

/// 1 + d for every owned and received vertex, checked positive.
std::vector<double> symmetric_degrees(const std::vector<double>& degree,
                                      const std::vector<global_id>& original, const char* kind) {
    std::vector<double> out(degree.size());
    for (std::size_t i = 0; i < degree.size(); ++i) {
        out[i] = 1.0 + degree[i];
        STRATA_CHECK(out[i] > 0.0, "symmetric normalization: degree of ", kind, " vertex ",
                     original[i], " is ", out[i],
                     " (A + I must have positive row sums; negative edge weights?)");
    }
    return out;
}

/// The inner block of A + I: A's rows with the diagonal merged in (A_ii + 1 where present).
HostCsr add_identity(const HostCsr& a) {
    const auto n = static_cast<std::size_t>(a.rows);
    HostCsr out;
    out.rows = a.rows;
    out.cols = a.cols;
    out.row_ptr.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        bool has_diagonal = false;
        for (auto k = static_cast<std::size_t>(a.row_ptr[i]);
             k < static_cast<std::size_t>(a.row_ptr[i + 1]); ++k) {
            has_diagonal = has_diagonal || a.col_idx[k] == static_cast<index_t>(i);
        }
        out.row_ptr[i + 1] =
            out.row_ptr[i] + (a.row_ptr[i + 1] - a.row_ptr[i]) + (has_diagonal ? 0 : 1);
    }
    out.col_idx.resize(static_cast<std::size_t>(out.row_ptr[n]));
    out.values.resize(out.col_idx.size());
    const auto rows = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t row = 0; row < rows; ++row) {
        const auto i = static_cast<std::size_t>(row);
        const auto diagonal = static_cast<index_t>(row);
        auto slot = static_cast<std::size_t>(out.row_ptr[i]);
        bool placed = false;
        for (auto k = static_cast<std::size_t>(a.row_ptr[i]);
             k < static_cast<std::size_t>(a.row_ptr[i + 1]); ++k) {
            if (!placed && a.col_idx[k] >= diagonal) {
                placed = true;
                if (a.col_idx[k] > diagonal) {
                    out.col_idx[slot] = diagonal;
                    out.values[slot++] = 0.0f;  // the 1 is added with the scaling
                }
            }
            out.col_idx[slot] = a.col_idx[k];
            out.values[slot++] = a.values[k];
        }
        if (!placed) {
            out.col_idx[slot] = diagonal;
            out.values[slot] = 0.0f;
        }
    }
    return out;
}

/// block.values[k] = (block.values[k] + δ) / sqrt(row_d[i] col_d[c]), δ = 1 on the diagonal of
/// the inner block; i = row_ids[r] for block row r (r itself when row_ids is null).
void scale_symmetric(HostCsr& block, const std::vector<double>& row_d, const double* col_d,
                     bool inner, const index_t* row_ids = nullptr) {
    const auto rows = static_cast<std::int64_t>(block.rows);
#pragma omp parallel for schedule(static)
    for (std::int64_t row = 0; row < rows; ++row) {
        const auto r = static_cast<std::size_t>(row);
        const double dv = row_d[row_ids == nullptr ? r : static_cast<std::size_t>(row_ids[r])];
        for (auto k = static_cast<std::size_t>(block.row_ptr[r]);
             k < static_cast<std::size_t>(block.row_ptr[r + 1]); ++k) {
            const index_t c = block.col_idx[k];
            const double a = static_cast<double>(block.values[k]) +
                             (inner && c == static_cast<index_t>(row) ? 1.0 : 0.0);
            const double du = col_d[static_cast<std::size_t>(c)];
            block.values[k] = static_cast<float>(a / std::sqrt(dv * du));
        }
    }
}

/// block.values[k] /= d[i] (0 where d[i] = 0); i = row_ids[r] for block row r (r itself when
/// row_ids is null).
void scale_mean(HostCsr& block, const std::vector<double>& d, const index_t* row_ids = nullptr) {
    const auto rows = static_cast<std::int64_t>(block.rows);
#pragma omp parallel for schedule(static)
    for (std::int64_t row = 0; row < rows; ++row) {
        const auto r = static_cast<std::size_t>(row);
        const double dv = d[row_ids == nullptr ? r : static_cast<std::size_t>(row_ids[r])];
        for (auto k = static_cast<std::size_t>(block.row_ptr[r]);
             k < static_cast<std::size_t>(block.row_ptr[r + 1]); ++k) {
            block.values[k] =
                dv == 0.0 ? 0.0f : static_cast<float>(static_cast<double>(block.values[k]) / dv);
        }
    }
}

}  // namespace

LocalGraph normalized(const LocalGraph& raw, Normalization n) {
    STRATA_CHECK(raw.owned_degree.size() == static_cast<std::size_t>(raw.num_owned) &&
                     raw.halo_degree.size() == raw.halo_original.size() &&
                     raw.halo.size() == raw.pattern.peers.size(),
                 "normalized: rank ", raw.rank, ": ", raw.owned_degree.size(), " owned and ",
                 raw.halo_degree.size(), " halo degrees for ", raw.num_owned, " owned and ",
                 raw.halo_original.size(), " halo vertices");
    LocalGraph out = raw;
    switch (n) {
        case Normalization::symmetric: {
            const std::vector<double> owned =
                symmetric_degrees(raw.owned_degree, raw.owned_original, "owned");
            const std::vector<double> halo =
                symmetric_degrees(raw.halo_degree, raw.halo_original, "halo");
            out.inner = add_identity(raw.inner);
            scale_symmetric(out.inner, owned, owned.data(), true);
            for (std::size_t p = 0; p < out.halo.size(); ++p) {
                const auto first = static_cast<std::size_t>(raw.pattern.recv_offsets[p]);
                scale_symmetric(out.halo[p].block, owned, halo.data() + first, false,
                                out.halo[p].row_ids.data());
            }
            break;
        }
        case Normalization::mean:
            scale_mean(out.inner, raw.owned_degree);
            for (HostDcsr& block : out.halo) {
                scale_mean(block.block, raw.owned_degree, block.row_ids.data());
            }
            break;
        case Normalization::sum:
            break;
    }
    return out;
}

}  // namespace strata
