// plan_stages: layer boundaries, a cost per node, and the min-max split over them.
#include "src/nn/stage_layout.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>

#include "src/base/error.hpp"

namespace strata {
namespace {

/// Tensors produced before node `cut` (not model inputs) and read at or after it.
std::vector<TensorId> crossing(const ModelGraph& graph, int cut) {
    std::vector<TensorId> tensors;
    for (TensorId t = 0; t < static_cast<TensorId>(graph.tensors().size()); ++t) {
        const int producer = graph.tensor(t).producer;
        if (producer < 0 || producer >= cut) {
            continue;
        }
        for (const auto& [node, input] : graph.consumers(t)) {
            (void)input;
            if (node >= cut) {
                tensors.push_back(t);
                break;
            }
        }
    }
    return tensors;
}

}  // namespace

double node_cost(const ModelGraph& graph, int n, const StageCostInputs& inputs) {
    const Node& node = graph.node(n);
    const std::vector<index_t> in = graph.input_cols(n);
    const auto rows = static_cast<double>(inputs.rows);
    const auto out = static_cast<double>(graph.tensor(node.output).cols);
    switch (node.op->kind()) {
        case OpKind::linear:
            return 2.0 * rows * static_cast<double>(in.at(0)) * out;
        case OpKind::aggregate:
        case OpKind::attention:
            return 2.0 * static_cast<double>(inputs.nnz) * out;
        case OpKind::pointwise:
            break;
    }
    double cols = out;
    for (const index_t c : in) {
        cols += static_cast<double>(c);
    }
    return rows * cols;
}

namespace {

/// Candidate cuts: before node p when node p-1 produced a layer input (and 0 and n).
std::vector<int> stage_bounds(const ModelGraph& graph) {
    const int n = graph.num_nodes();
    std::vector<int> bounds{0};
    for (int p = 1; p < n; ++p) {
        if (graph.tensor(graph.node(p - 1).output).layer_input) {
            bounds.push_back(p);
        }
    }
    bounds.push_back(n);
    return bounds;
}

}  // namespace

int max_stages(const ModelGraph& graph) {
    return static_cast<int>(stage_bounds(graph).size()) - 1;
}

StageLayout plan_stages(const ModelGraph& graph, int stages, const StageCostInputs& inputs) {
    const int n = graph.num_nodes();
    STRATA_CHECK_OPTION(stages >= 1, "stages", stages, "must be at least 1");
    StageLayout layout;
    for (int i = 0; i < n; ++i) {
        layout.node_cost.push_back(3.0 * node_cost(graph, i, inputs));  // forward + 2x backward
    }
    const std::vector<int> bounds = stage_bounds(graph);
    const int m = static_cast<int>(bounds.size()) - 1;  // segments between candidates
    STRATA_CHECK_OPTION(stages <= m, "stages", stages, "the model has ", m - 1,
                        " layer boundaries, so at most ", m, " stages");
    std::vector<double> prefix(static_cast<std::size_t>(n) + 1, 0.0);
    for (int i = 0; i < n; ++i) {
        prefix[static_cast<std::size_t>(i) + 1] =
            prefix[static_cast<std::size_t>(i)] + layout.node_cost[static_cast<std::size_t>(i)];
    }
    auto cost = [&](int a, int b) {  // candidates a < b
        return prefix[static_cast<std::size_t>(bounds[static_cast<std::size_t>(b)])] -
               prefix[static_cast<std::size_t>(bounds[static_cast<std::size_t>(a)])];
    };
    // best[k][j]: the least largest stage cost of candidates [0, j) split into k stages.
    constexpr double inf = std::numeric_limits<double>::infinity();
    const auto cols = static_cast<std::size_t>(m) + 1;
    std::vector<double> best(static_cast<std::size_t>(stages + 1) * cols, inf);
    std::vector<int> from(best.size(), -1);
    auto at = [&](int k, int j) {
        return static_cast<std::size_t>(k) * cols + static_cast<std::size_t>(j);
    };
    best[at(0, 0)] = 0.0;
    for (int k = 1; k <= stages; ++k) {
        for (int j = k; j <= m; ++j) {
            for (int i = k - 1; i < j; ++i) {
                const double value = std::max(best[at(k - 1, i)], cost(i, j));
                if (value < best[at(k, j)]) {
                    best[at(k, j)] = value;
                    from[at(k, j)] = i;
                }
            }
        }
    }
    std::vector<int> cut_candidates{m};
    for (int k = stages, j = m; k > 0; --k) {
        j = from[at(k, j)];
        cut_candidates.push_back(j);
    }
    std::reverse(cut_candidates.begin(), cut_candidates.end());
    for (int s = 0; s < stages; ++s) {
        Stage stage;
        stage.first = bounds[static_cast<std::size_t>(cut_candidates[static_cast<std::size_t>(s)])];
        stage.end =
            bounds[static_cast<std::size_t>(cut_candidates[static_cast<std::size_t>(s) + 1])];
        stage.cost = prefix[static_cast<std::size_t>(stage.end)] -
                     prefix[static_cast<std::size_t>(stage.first)];
        if (s > 0) {
            stage.incoming = crossing(graph, stage.first);
        }
        if (s + 1 < stages) {
            stage.outgoing = crossing(graph, stage.end);
        }
        layout.stages.push_back(std::move(stage));
    }
    return layout;
}

std::string StageLayout::describe(const ModelGraph& graph) const {
    double total = 0.0;
    for (const Stage& s : stages) {
        total += s.cost;
    }
    std::string text;
    for (std::size_t s = 0; s < stages.size(); ++s) {
        const Stage& stage = stages[s];
        std::array<char, 64> share{};
        std::snprintf(share.data(), share.size(), "%.0f%%",
                      total > 0 ? 100.0 * stage.cost / total : 0.0);
        text += (s == 0 ? "" : "; ") + std::string("stage ") + std::to_string(s) + ": nodes " +
                std::to_string(stage.first) + "-" + std::to_string(stage.end - 1) + " (" +
                graph.node(stage.first).name + " .. " + graph.node(stage.end - 1).name +
                "), cost " + share.data();
        if (s + 1 < stages.size()) {
            index_t columns = 0;
            for (const TensorId t : stage.outgoing) {
                columns += graph.tensor(t).cols;
            }
            text += ", sends " + std::to_string(columns) + " columns";
        }
    }
    return text;
}

}  // namespace strata
