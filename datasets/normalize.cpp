// gcn_normalize: per row, sort (column, weight) pairs, merge duplicates, add the diagonal,
// then scale by D^-1/2 on both sides. Rows are independent, so OpenMP needs no care.
#include "datasets/normalize.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "src/base/error.hpp"

namespace strata {

GlobalCsr gcn_normalize(const GraphDataset& g) {
    const std::int64_t n = g.num_vertices();
    const bool weighted = !g.edge_weight.empty();

    // Pass 1: the merged row lengths (distinct in-neighbours plus the diagonal).
    std::vector<std::int64_t> row_nnz(static_cast<std::size_t>(n), 0);
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto begin = g.indptr[static_cast<std::size_t>(v)];
        const auto end = g.indptr[static_cast<std::size_t>(v) + 1];
        std::vector<std::int64_t> cols(g.indices.begin() + begin, g.indices.begin() + end);
        cols.push_back(v);
        std::sort(cols.begin(), cols.end());
        row_nnz[static_cast<std::size_t>(v)] = std::unique(cols.begin(), cols.end()) - cols.begin();
    }
    GlobalCsr a_hat;
    a_hat.indptr.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t v = 0; v < n; ++v) {
        a_hat.indptr[static_cast<std::size_t>(v) + 1] =
            a_hat.indptr[static_cast<std::size_t>(v)] + row_nnz[static_cast<std::size_t>(v)];
    }
    a_hat.indices.resize(static_cast<std::size_t>(a_hat.indptr.back()));
    std::vector<double> sums(a_hat.indices.size());
    std::vector<double> degree(static_cast<std::size_t>(n), 0.0);

    // Pass 2: merged (A + I) rows and their sums d_v.
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto begin = g.indptr[static_cast<std::size_t>(v)];
        const auto end = g.indptr[static_cast<std::size_t>(v) + 1];
        std::vector<std::pair<std::int64_t, double>> entries;
        entries.reserve(static_cast<std::size_t>(end - begin) + 1);
        for (auto k = begin; k < end; ++k) {
            const auto kk = static_cast<std::size_t>(k);
            entries.emplace_back(g.indices[kk], weighted ? double{g.edge_weight[kk]} : 1.0);
        }
        entries.emplace_back(v, 1.0);
        std::sort(entries.begin(), entries.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        auto out = static_cast<std::size_t>(a_hat.indptr[static_cast<std::size_t>(v)]);
        double row_sum = 0.0;
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (i > 0 && entries[i].first == entries[i - 1].first) {
                sums[out - 1] += entries[i].second;
            } else {
                a_hat.indices[out] = entries[i].first;
                sums[out] = entries[i].second;
                ++out;
            }
            row_sum += entries[i].second;
        }
        degree[static_cast<std::size_t>(v)] = row_sum;
    }
    for (std::int64_t v = 0; v < n; ++v) {
        STRATA_CHECK(degree[static_cast<std::size_t>(v)] > 0.0, g.name,
                     ": gcn_normalize: degree of vertex ", v, " is ",
                     degree[static_cast<std::size_t>(v)],
                     " (A + I must have positive row sums; negative edge weights?)");
    }

    // Pass 3: Â_vu = (A + I)_vu / sqrt(d_v d_u).
    a_hat.values.resize(a_hat.indices.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t v = 0; v < n; ++v) {
        const double dv = degree[static_cast<std::size_t>(v)];
        for (auto k = a_hat.indptr[static_cast<std::size_t>(v)];
             k < a_hat.indptr[static_cast<std::size_t>(v) + 1]; ++k) {
            const auto kk = static_cast<std::size_t>(k);
            const double du = degree[static_cast<std::size_t>(a_hat.indices[kk])];
            a_hat.values[kk] = static_cast<float>(sums[kk] / std::sqrt(dv * du));
        }
    }
    return a_hat;
}

void row_normalize_features(HostMatrix& x) {
#pragma omp parallel for schedule(static)
    for (index_t r = 0; r < x.rows; ++r) {
        float* row = x.row(r);
        double sum = 0.0;
        for (index_t c = 0; c < x.cols; ++c) {
            sum += row[c];
        }
        if (sum != 0.0) {
            for (index_t c = 0; c < x.cols; ++c) {
                row[c] = static_cast<float>(row[c] / sum);
            }
        }
    }
}

}  // namespace strata
