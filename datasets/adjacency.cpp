// adjacency_matrix: per row, sort (column, weight) pairs and merge duplicates. Rows are
// independent, so OpenMP needs no care.
#include "datasets/adjacency.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <utility>

namespace strata {

GlobalCsr merged_rows(std::span<const std::int64_t> indptr, std::span<const std::int64_t> indices,
                      std::span<const float> edge_weight) {
    const auto n = static_cast<std::int64_t>(indptr.size()) - 1;
    const bool weighted = !edge_weight.empty();

    // Pass 1: the merged row lengths (distinct in-neighbours).
    std::vector<std::int64_t> row_nnz(static_cast<std::size_t>(n), 0);
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto begin = indptr[static_cast<std::size_t>(v)];
        const auto end = indptr[static_cast<std::size_t>(v) + 1];
        std::vector<std::int64_t> cols(indices.begin() + begin, indices.begin() + end);
        std::sort(cols.begin(), cols.end());
        row_nnz[static_cast<std::size_t>(v)] = std::unique(cols.begin(), cols.end()) - cols.begin();
    }
    GlobalCsr a;
    a.indptr.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t v = 0; v < n; ++v) {
        a.indptr[static_cast<std::size_t>(v) + 1] =
            a.indptr[static_cast<std::size_t>(v)] + row_nnz[static_cast<std::size_t>(v)];
    }
    a.indices.resize(static_cast<std::size_t>(a.indptr.back()));
    a.values.resize(a.indices.size());

    // Pass 2: merged rows; a duplicate group is summed in double in ascending weight order.
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto begin = indptr[static_cast<std::size_t>(v)];
        const auto end = indptr[static_cast<std::size_t>(v) + 1];
        std::vector<std::pair<std::int64_t, double>> entries;
        entries.reserve(static_cast<std::size_t>(end - begin));
        for (auto k = begin; k < end; ++k) {
            const auto kk = static_cast<std::size_t>(k);
            entries.emplace_back(indices[kk], weighted ? double{edge_weight[kk]} : 1.0);
        }
        std::sort(entries.begin(), entries.end());
        auto out = static_cast<std::size_t>(a.indptr[static_cast<std::size_t>(v)]);
        double sum = 0.0;
        for (std::size_t i = 0; i < entries.size(); ++i) {
            sum = i > 0 && entries[i].first == entries[i - 1].first ? sum + entries[i].second
                                                                    : entries[i].second;
            if (i + 1 == entries.size() || entries[i + 1].first != entries[i].first) {
                a.indices[out] = entries[i].first;
                a.values[out] = static_cast<float>(sum);
                ++out;
            }
        }
    }
    return a;
}

void sort_unique_rows(std::vector<std::int64_t>& indptr, std::vector<std::int64_t>& indices) {
    const auto n = static_cast<std::int64_t>(indptr.size()) - 1;
    std::vector<std::int64_t> length(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
#pragma omp parallel for schedule(dynamic, 4096)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto begin = indices.begin() + indptr[static_cast<std::size_t>(v)];
        const auto end = indices.begin() + indptr[static_cast<std::size_t>(v) + 1];
        std::sort(begin, end);
        length[static_cast<std::size_t>(v)] = std::unique(begin, end) - begin;
    }
    std::int64_t out = 0;
    for (std::size_t v = 0; v < length.size(); ++v) {
        const std::int64_t begin = indptr[v];
        if (out != begin) {
            std::memmove(indices.data() + out, indices.data() + begin,
                         static_cast<std::size_t>(length[v]) * sizeof(std::int64_t));
        }
        indptr[v] = out;
        out += length[v];
    }
    indptr[length.size()] = out;
    indices.resize(static_cast<std::size_t>(out));
}

GlobalCsr adjacency_matrix(const GraphView& g) {
    return merged_rows(g.indptr, g.indices, g.edge_weight);
}

}  // namespace strata
