// gcn_normalize: the merged adjacency (adjacency_matrix), its degrees, then per row the
// diagonal merged in and both sides scaled by D^-1/2. Rows are independent, so OpenMP needs no
// care.
#include "datasets/normalize.hpp"

#include <cmath>
#include <cstddef>

#include "datasets/adjacency.hpp"
#include "src/base/error.hpp"

namespace strata {

GlobalCsr gcn_normalize(const GraphDataset& g) {
    const GlobalCsr a = adjacency_matrix(g);
    const std::int64_t n = a.num_rows();

    // d_v = 1 + Σ_u A_vu and the merged row lengths (the diagonal added where A has none).
    std::vector<double> degree(static_cast<std::size_t>(n), 0.0);
    GlobalCsr a_hat;
    a_hat.indptr.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t v = 0; v < n; ++v) {
        const auto row = static_cast<std::size_t>(v);
        double sum = 0.0;
        bool has_diagonal = false;
        for (auto k = static_cast<std::size_t>(a.indptr[row]);
             k < static_cast<std::size_t>(a.indptr[row + 1]); ++k) {
            sum += static_cast<double>(a.values[k]);
            has_diagonal = has_diagonal || a.indices[k] == v;
        }
        degree[row] = 1.0 + sum;
        STRATA_CHECK(degree[row] > 0.0, g.name, ": gcn_normalize: degree of vertex ", v, " is ",
                     degree[row], " (A + I must have positive row sums; negative edge weights?)");
        a_hat.indptr[row + 1] =
            a_hat.indptr[row] + (a.indptr[row + 1] - a.indptr[row]) + (has_diagonal ? 0 : 1);
    }
    a_hat.indices.resize(static_cast<std::size_t>(a_hat.indptr.back()));
    a_hat.values.resize(a_hat.indices.size());

    // Â_vu = (A + I)_vu / sqrt(d_v d_u), in double, rounded to float once.
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto row = static_cast<std::size_t>(v);
        const double dv = degree[row];
        auto out = static_cast<std::size_t>(a_hat.indptr[row]);
        auto put = [&](std::int64_t u, double value) {
            a_hat.indices[out] = u;
            a_hat.values[out++] =
                static_cast<float>(value / std::sqrt(dv * degree[static_cast<std::size_t>(u)]));
        };
        bool placed = false;
        for (auto k = static_cast<std::size_t>(a.indptr[row]);
             k < static_cast<std::size_t>(a.indptr[row + 1]); ++k) {
            const std::int64_t u = a.indices[k];
            if (!placed && u >= v) {
                placed = true;
                if (u > v) {
                    put(v, 1.0);
                }
            }
            put(u, static_cast<double>(a.values[k]) + (u == v ? 1.0 : 0.0));
        }
        if (!placed) {
            put(v, 1.0);
        }
    }
    return a_hat;
}

void row_normalize_features(HostMatrix& x) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < x.rows; ++r) {
        float* row = x.row(r);
        double sum = 0.0;  // Σ_j |x_vj|: on non-negative rows the same additions as Σ_j x_vj
        for (index_t c = 0; c < x.cols; ++c) {
            sum += std::fabs(row[c]);
        }
        if (sum != 0.0) {
            for (index_t c = 0; c < x.cols; ++c) {
                row[c] = static_cast<float>(row[c] / sum);
            }
        }
    }
}

}  // namespace strata
