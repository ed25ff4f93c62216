// Local order: RCM on a part's inner block, and the permutation of a LocalPart's rows.
#include "partition/local_order.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "partition/metis_partitioner.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

/// The pattern of A + Aᵀ without the diagonal (rows unsorted, may repeat an id once per side).
HostCsr symmetric_pattern(const HostCsr& a) {
    const HostCsr t = transpose(a);
    HostCsr s;
    s.rows = a.rows;
    s.cols = a.cols;
    s.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
    s.col_idx.reserve(2 * a.col_idx.size());
    for (index_t r = 0; r < a.rows; ++r) {
        const auto u = static_cast<std::size_t>(r);
        // Both rows are sorted: merge them, dropping duplicates and the diagonal.
        index_t i = a.row_ptr[u];
        index_t j = t.row_ptr[u];
        const index_t i_end = a.row_ptr[u + 1];
        const index_t j_end = t.row_ptr[u + 1];
        index_t last = -1;
        while (i < i_end || j < j_end) {
            index_t c = 0;
            if (j >= j_end || (i < i_end && a.col_idx[static_cast<std::size_t>(i)] <=
                                                t.col_idx[static_cast<std::size_t>(j)])) {
                c = a.col_idx[static_cast<std::size_t>(i++)];
            } else {
                c = t.col_idx[static_cast<std::size_t>(j++)];
            }
            if (c != r && c != last) {
                s.col_idx.push_back(c);
                last = c;
            }
        }
        s.row_ptr[u + 1] = static_cast<index_t>(s.col_idx.size());
    }
    return s;
}

template <class T>
void permute(std::vector<T>& values, std::span<const index_t> order, std::size_t width = 1) {
    std::vector<T> out(values.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        const auto from = static_cast<std::size_t>(order[i]) * width;
        std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(from), width,
                    out.begin() + static_cast<std::ptrdiff_t>(i * width));
    }
    values = std::move(out);
}

/// ids -> inverse[ids], sorted ascending.
void remap_sorted(std::vector<index_t>& ids, const std::vector<index_t>& inverse) {
    for (index_t& id : ids) {
        id = inverse[static_cast<std::size_t>(id)];
    }
    std::sort(ids.begin(), ids.end());
}

/// A halo block's listed rows renamed inverse[r] and listed in ascending order again.
HostDcsr permute_listed_rows(const HostDcsr& h, const std::vector<index_t>& inverse) {
    std::vector<index_t> by_new(h.row_ids.size());
    std::iota(by_new.begin(), by_new.end(), 0);
    std::sort(by_new.begin(), by_new.end(), [&](index_t x, index_t y) {
        return inverse[static_cast<std::size_t>(h.row_ids[static_cast<std::size_t>(x)])] <
               inverse[static_cast<std::size_t>(h.row_ids[static_cast<std::size_t>(y)])];
    });
    HostDcsr out;
    out.rows = h.rows;
    out.block.rows = h.block.rows;
    out.block.cols = h.block.cols;
    out.block.col_idx.reserve(h.block.col_idx.size());
    out.block.values.reserve(h.block.values.size());
    for (const index_t r : by_new) {
        const auto u = static_cast<std::size_t>(r);
        out.row_ids.push_back(inverse[static_cast<std::size_t>(h.row_ids[u])]);
        const auto begin = static_cast<std::ptrdiff_t>(h.block.row_ptr[u]);
        const auto end = static_cast<std::ptrdiff_t>(h.block.row_ptr[u + 1]);
        out.block.col_idx.insert(out.block.col_idx.end(), h.block.col_idx.begin() + begin,
                                 h.block.col_idx.begin() + end);
        out.block.values.insert(out.block.values.end(), h.block.values.begin() + begin,
                                h.block.values.begin() + end);
        out.block.row_ptr.push_back(out.block.nnz());
    }
    return out;
}

}  // namespace

HostCsr permute_square(const HostCsr& a, std::span<const index_t> order,
                       const std::vector<index_t>& inverse) {
    const auto n = static_cast<std::size_t>(a.rows);
    HostCsr out;
    out.rows = a.rows;
    out.cols = a.cols;
    out.row_ptr.assign(n + 1, 0);
    for (std::size_t r = 0; r < n; ++r) {
        const auto old = static_cast<std::size_t>(order[r]);
        out.row_ptr[r + 1] = out.row_ptr[r] + a.row_ptr[old + 1] - a.row_ptr[old];
    }
    out.col_idx.resize(a.col_idx.size());
    out.values.resize(a.values.size());
    const auto rows = static_cast<std::int64_t>(n);
#pragma omp parallel
    {
        std::vector<std::pair<index_t, float>> row;
#pragma omp for schedule(dynamic, 1024)
        for (std::int64_t i = 0; i < rows; ++i) {
            const auto r = static_cast<std::size_t>(i);
            const auto old = static_cast<std::size_t>(order[r]);
            row.clear();
            for (auto k = static_cast<std::size_t>(a.row_ptr[old]);
                 k < static_cast<std::size_t>(a.row_ptr[old + 1]); ++k) {
                row.emplace_back(inverse[static_cast<std::size_t>(a.col_idx[k])], a.values[k]);
            }
            std::sort(row.begin(), row.end(),
                      [](const auto& x, const auto& y) { return x.first < y.first; });
            auto slot = static_cast<std::size_t>(out.row_ptr[r]);
            for (const auto& [column, value] : row) {
                out.col_idx[slot] = column;
                out.values[slot] = value;
                ++slot;
            }
        }
    }
    return out;
}

std::optional<LocalOrder> parse_local_order(std::string_view text) {
    if (text == "none") {
        return LocalOrder::none;
    }
    if (text == "rcm") {
        return LocalOrder::rcm;
    }
    if (text == "metis") {
        return LocalOrder::metis;
    }
    return std::nullopt;
}

std::string_view to_string(LocalOrder order) {
    switch (order) {
        case LocalOrder::rcm:
            return "rcm";
        case LocalOrder::metis:
            return "metis";
        case LocalOrder::none:
            break;
    }
    return "none";
}

std::vector<index_t> rcm_order(const HostCsr& a) {
    STRATA_CHECK(a.rows == a.cols, "rcm_order: the matrix is ", a.rows, " x ", a.cols,
                 ", not square");
    const HostCsr s = symmetric_pattern(a);
    const auto n = static_cast<std::size_t>(a.rows);
    std::vector<index_t> degree(n);
    for (std::size_t v = 0; v < n; ++v) {
        degree[v] = s.row_ptr[v + 1] - s.row_ptr[v];
    }
    std::vector<index_t> by_degree(n);  // component starts: least degree first, ties by id
    std::iota(by_degree.begin(), by_degree.end(), 0);
    std::stable_sort(by_degree.begin(), by_degree.end(), [&](index_t x, index_t y) {
        return degree[static_cast<std::size_t>(x)] < degree[static_cast<std::size_t>(y)];
    });
    const auto lighter = [&](index_t x, index_t y) {
        const index_t dx = degree[static_cast<std::size_t>(x)];
        const index_t dy = degree[static_cast<std::size_t>(y)];
        return dx != dy ? dx < dy : x < y;
    };
    std::vector<std::uint8_t> seen(n, 0);
    std::vector<index_t> order;
    order.reserve(n);
    for (const index_t start : by_degree) {
        if (seen[static_cast<std::size_t>(start)] != 0) {
            continue;
        }
        seen[static_cast<std::size_t>(start)] = 1;
        std::size_t head = order.size();
        order.push_back(start);
        while (head < order.size()) {  // breadth first; `order` is the queue
            const auto v = static_cast<std::size_t>(order[head++]);
            const std::size_t first = order.size();
            for (index_t k = s.row_ptr[v]; k < s.row_ptr[v + 1]; ++k) {
                const index_t u = s.col_idx[static_cast<std::size_t>(k)];
                if (seen[static_cast<std::size_t>(u)] == 0) {
                    seen[static_cast<std::size_t>(u)] = 1;
                    order.push_back(u);
                }
            }
            std::sort(order.begin() + static_cast<std::ptrdiff_t>(first), order.end(), lighter);
        }
    }
    std::reverse(order.begin(), order.end());
    return order;
}

std::vector<index_t> metis_block_order(const HostCsr& a, index_t block) {
    STRATA_CHECK(a.rows == a.cols && block >= 1, "metis_block_order: the matrix is ", a.rows, " x ",
                 a.cols, ", block ", block);
    std::vector<index_t> order(static_cast<std::size_t>(a.rows));
    std::iota(order.begin(), order.end(), 0);
    if (a.rows <= block) {
        return order;  // one block: nothing to group
    }
    const HostCsr s = symmetric_pattern(a);
    MetisGraph graph;
    graph.xadj.assign(s.row_ptr.begin(), s.row_ptr.end());
    graph.adjncy.assign(s.col_idx.begin(), s.col_idx.end());
    graph.vwgt.assign(static_cast<std::size_t>(a.rows), 1);
    const int parts = static_cast<int>((a.rows + block - 1) / block);
    const Partition p = partition_metis(graph, parts, 1);
    std::stable_sort(order.begin(), order.end(), [&](index_t x, index_t y) {
        return p.owner[static_cast<std::size_t>(x)] < p.owner[static_cast<std::size_t>(y)];
    });
    return order;
}

void reorder_rows(LocalPart& part, std::span<const index_t> order) {
    LocalGraph& g = part.graph;
    const auto n = static_cast<std::size_t>(g.num_owned);
    STRATA_CHECK(order.size() == n, "local order: ", order.size(), " positions for ", n,
                 " owned rows");
    std::vector<index_t> inverse(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
        const index_t v = order[i];
        STRATA_CHECK(
            v >= 0 && static_cast<std::size_t>(v) < n && inverse[static_cast<std::size_t>(v)] < 0,
            "local order: entry ", i, " (", v, ") is out of range or repeated");
        inverse[static_cast<std::size_t>(v)] = static_cast<index_t>(i);
    }
    g.inner = permute_square(g.inner, order, inverse);
    for (HostDcsr& h : g.halo) {
        h = permute_listed_rows(h, inverse);
    }
    for (index_t& row : g.send_rows) {  // the peers' order of each list is kept
        row = inverse[static_cast<std::size_t>(row)];
    }
    remap_sorted(g.boundary_rows, inverse);
    remap_sorted(g.interior_rows, inverse);
    permute(g.owned_original, order);
    permute(g.owned_degree, order);
    permute(part.features.values, order, static_cast<std::size_t>(part.features.cols));
    permute(part.labels, order);
    if (!part.chunk.empty()) {
        permute(part.chunk, order);
    }
    for (std::vector<std::uint8_t>* mask : {&part.train_mask, &part.val_mask, &part.test_mask}) {
        std::vector<std::uint8_t> out(mask->size());
        for (std::size_t s = 0; s * n < mask->size(); ++s) {
            for (std::size_t i = 0; i < n; ++i) {
                out[s * n + i] = (*mask)[s * n + static_cast<std::size_t>(order[i])];
            }
        }
        *mask = std::move(out);
    }
}

void apply_local_order(LocalPart& part, LocalOrder order) {
    if (order == LocalOrder::rcm) {
        reorder_rows(part, rcm_order(part.graph.inner));
    } else if (order == LocalOrder::metis) {
        reorder_rows(part, metis_block_order(part.graph.inner));
    }
}

}  // namespace strata
