// Property checks of a set of LocalGraphs against the global matrix (A or Â) they were cut from.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "partition/local_graph.hpp"
#include "partition/local_part.hpp"

namespace strata::test {

using Entry = std::tuple<global_id, global_id, float>;

/// Every entry of a global matrix as (row, column, value) in original ids, sorted.
inline std::vector<Entry> global_entries(const GlobalCsr& a_hat) {
    std::vector<Entry> entries;
    for (std::size_t v = 0; v + 1 < a_hat.indptr.size(); ++v) {
        for (auto k = static_cast<std::size_t>(a_hat.indptr[v]);
             k < static_cast<std::size_t>(a_hat.indptr[v + 1]); ++k) {
            entries.emplace_back(static_cast<global_id>(v), a_hat.indices[k], a_hat.values[k]);
        }
    }
    std::sort(entries.begin(), entries.end());
    return entries;
}

/// Every block entry of every rank, mapped back to original ids, sorted.
inline std::vector<Entry> local_entries(const std::vector<LocalGraph>& graphs) {
    std::vector<Entry> entries;
    for (const LocalGraph& g : graphs) {
        auto add = [&](const HostCsr& block, auto column_id) {
            for (index_t r = 0; r < block.rows; ++r) {
                for (index_t k = block.row_ptr[static_cast<std::size_t>(r)];
                     k < block.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
                    entries.emplace_back(g.owned_original[static_cast<std::size_t>(r)],
                                         column_id(block.col_idx[static_cast<std::size_t>(k)]),
                                         block.values[static_cast<std::size_t>(k)]);
                }
            }
        };
        add(g.inner, [&](index_t c) { return g.owned_original[static_cast<std::size_t>(c)]; });
        for (std::size_t p = 0; p < g.halo.size(); ++p) {
            const index_t base = g.pattern.recv_offsets[p];
            add(expand_rows(g.halo[p]),
                [&](index_t c) { return g.halo_original[static_cast<std::size_t>(base + c)]; });
        }
    }
    std::sort(entries.begin(), entries.end());
    return entries;
}

/// Rows of `x` (N x F) sent by `from` to `to`, in send order: what `to` receives from `from`.
inline std::vector<global_id> sent_ids(const LocalGraph& from, int to) {
    std::vector<global_id> ids;
    const auto& peers = from.pattern.peers;
    const auto it = std::find(peers.begin(), peers.end(), to);
    if (it == peers.end()) {
        return ids;
    }
    const auto i = static_cast<std::size_t>(it - peers.begin());
    for (index_t k = from.pattern.send_offsets[i]; k < from.pattern.send_offsets[i + 1]; ++k) {
        ids.push_back(from.owned_original[static_cast<std::size_t>(
            from.send_rows[static_cast<std::size_t>(k)])]);
    }
    return ids;
}

/// Checks every rank's Z = inner X_owned + Σ_i halo[i] X_recv(i) against the global Â X rows
/// (double reference), with X_recv(i) gathered by the sender's send_rows as the exchange
/// would; returns the worst |z - ref| / (Σ_u |Â_vu| max|X| + tiny) over all rows.
inline double worst_aggregation_error(const GlobalCsr& a_hat, const std::vector<LocalGraph>& graphs,
                                      index_t f, std::uint64_t seed) {
    const global_id n = a_hat.num_rows();
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    HostMatrix x(static_cast<index_t>(n), f);
    for (float& value : x.values) {
        value = uniform(rng);
    }
    double worst = 0.0;
    for (const LocalGraph& g : graphs) {
        const auto rows = static_cast<std::size_t>(g.num_owned);
        std::vector<float> z(rows * static_cast<std::size_t>(f), 0.0f);
        auto spmm = [&](const HostCsr& block, auto x_row) {
            for (std::size_t r = 0; r < rows; ++r) {
                for (index_t k = block.row_ptr[r]; k < block.row_ptr[r + 1]; ++k) {
                    const float* xr = x_row(block.col_idx[static_cast<std::size_t>(k)]);
                    for (index_t c = 0; c < f; ++c) {
                        z[r * static_cast<std::size_t>(f) + static_cast<std::size_t>(c)] +=
                            block.values[static_cast<std::size_t>(k)] * xr[c];
                    }
                }
            }
        };
        spmm(g.inner, [&](index_t c) {
            return x.row(static_cast<index_t>(g.owned_original[static_cast<std::size_t>(c)]));
        });
        for (std::size_t i = 0; i < g.pattern.peers.size(); ++i) {
            const std::vector<global_id> recv =
                sent_ids(graphs[static_cast<std::size_t>(g.pattern.peers[i])], g.rank);
            spmm(expand_rows(g.halo[i]), [&](index_t c) {
                return x.row(static_cast<index_t>(recv.at(static_cast<std::size_t>(c))));
            });
        }
        for (std::size_t r = 0; r < rows; ++r) {
            const auto v = static_cast<std::size_t>(g.owned_original[r]);
            for (index_t c = 0; c < f; ++c) {
                double ref = 0.0;
                double scale = 1e-30;
                for (auto k = static_cast<std::size_t>(a_hat.indptr[v]);
                     k < static_cast<std::size_t>(a_hat.indptr[v + 1]); ++k) {
                    const double xv = x.at(static_cast<index_t>(a_hat.indices[k]), c);
                    ref += static_cast<double>(a_hat.values[k]) * xv;
                    scale += std::abs(static_cast<double>(a_hat.values[k]) * xv);
                }
                const double got = z[r * static_cast<std::size_t>(f) + static_cast<std::size_t>(c)];
                worst = std::max(worst, std::abs(got - ref) / scale);
            }
        }
    }
    return worst;
}

/// Bit-exact equality of two HostCsr.
inline bool same_csr(const HostCsr& a, const HostCsr& b) {
    return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr &&
           a.col_idx == b.col_idx && a.values == b.values;
}

/// Σ_u M_vu of every row v, in double, columns ascending (the builder's degrees).
inline std::vector<double> row_sums(const GlobalCsr& m) {
    std::vector<double> sums(static_cast<std::size_t>(m.num_rows()), 0.0);
    for (std::size_t v = 0; v < sums.size(); ++v) {
        for (auto k = static_cast<std::size_t>(m.indptr[v]);
             k < static_cast<std::size_t>(m.indptr[v + 1]); ++k) {
            sums[v] += static_cast<double>(m.values[k]);
        }
    }
    return sums;
}

/// Bit-exact equality of two LocalGraphs' operators: sizes, ids, blocks, exchange and
/// boundary rows (not the degrees); `why` names the first difference.
inline bool same_operator(const LocalGraph& x, const LocalGraph& y, std::string& why) {
    auto fail = [&](const char* what) {
        why = what;
        return false;
    };
    if (x.rank != y.rank || x.num_parts != y.num_parts ||
        x.num_global_vertices != y.num_global_vertices || x.first_owned != y.first_owned ||
        x.num_owned != y.num_owned) {
        return fail("sizes");
    }
    if (x.owned_original != y.owned_original) {
        return fail("owned_original");
    }
    if (!same_csr(x.inner, y.inner)) {
        return fail("inner");
    }
    if (x.halo.size() != y.halo.size()) {
        return fail("number of halo blocks");
    }
    for (std::size_t i = 0; i < x.halo.size(); ++i) {
        if (x.halo[i].rows != y.halo[i].rows || x.halo[i].row_ids != y.halo[i].row_ids ||
            !same_csr(x.halo[i].block, y.halo[i].block)) {
            return fail("halo block");
        }
    }
    if (x.halo_original != y.halo_original || x.send_rows != y.send_rows) {
        return fail("halo_original / send_rows");
    }
    if (x.pattern.peers != y.pattern.peers || x.pattern.send_offsets != y.pattern.send_offsets ||
        x.pattern.recv_offsets != y.pattern.recv_offsets) {
        return fail("pattern");
    }
    if (x.boundary_rows != y.boundary_rows || x.interior_rows != y.interior_rows) {
        return fail("boundary / interior rows");
    }
    return true;
}

/// Bit-exact equality of two LocalParts (graph with its degrees, vertex data, counts); `why`
/// names the first difference.
inline bool same_part(const LocalPart& a, const LocalPart& b, std::string& why) {
    auto fail = [&](const char* what) {
        why = what;
        return false;
    };
    if (!same_operator(a.graph, b.graph, why)) {
        return false;
    }
    if (a.graph.owned_degree != b.graph.owned_degree ||
        a.graph.halo_degree != b.graph.halo_degree) {
        return fail("degrees");
    }
    if (a.features.rows != b.features.rows || a.features.cols != b.features.cols ||
        a.features.values != b.features.values) {
        return fail("features");
    }
    if (a.labels != b.labels || a.num_splits != b.num_splits || a.split != b.split ||
        a.train_mask != b.train_mask || a.val_mask != b.val_mask || a.test_mask != b.test_mask) {
        return fail("labels / masks");
    }
    if (a.num_classes != b.num_classes || a.global_train != b.global_train ||
        a.global_val != b.global_val || a.global_test != b.global_test) {
        return fail("counts");
    }
    return true;
}

}  // namespace strata::test
