// StageLayout: a model's nodes split into S consecutive stages for layer-pipeline parallelism
// (GNNPipe-style): stage s runs nodes [first, end) on every chunk of the graph and passes the
// tensors that cross each cut to the next stage (and their gradients back). Cuts sit at layer
// boundaries (ModelGraph::mark_layer_input), chosen to balance a cost model of the nodes, not
// their count: GNNPipe's equal-layer split left its whole input projection to stage 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/nn/model_graph.hpp"

namespace strata {

/// What the cost model needs to know about the graph a stage runs on.
struct StageCostInputs {
    index_t rows = 0;      ///< vertices (every stage runs all of them, chunk by chunk)
    std::int64_t nnz = 0;  ///< entries of the aggregation operator
};

struct Stage {
    int first = 0;  ///< first node
    int end = 0;    ///< one past the last node
    /// Tensors received from stage s-1 (their gradients go back): produced before `first` and
    /// read at or after it; model inputs never travel (every stage holds them).
    std::vector<TensorId> incoming{};
    /// Tensors sent to stage s+1: produced before `end` and read at or after it.
    std::vector<TensorId> outgoing{};
    double cost = 0.0;  ///< modelled forward + backward flops of its nodes
};

struct StageLayout {
    std::vector<Stage> stages;
    std::vector<double> node_cost;  ///< per node, the cost model's figure
    /// "stage 0: nodes 0-13 (fc_in.dropout .. conv2.act), cost 31%, sends 128 columns; ..."
    /// (reports; the columns are the widths of the tensors crossing its cut).
    [[nodiscard]] std::string describe(const ModelGraph& graph) const;
};

/// Modelled flops of node n (forward; backward is taken as twice that for every kind):
/// linear 2·rows·in·out, aggregation 2·nnz·cols, pointwise rows·cols per input and output.
[[nodiscard]] double node_cost(const ModelGraph& graph, int n, const StageCostInputs& inputs);

/// The most stages plan_stages accepts: the model's layer boundaries + 1.
[[nodiscard]] int max_stages(const ModelGraph& graph);

/// Splits the nodes into `stages` consecutive stages at layer boundaries, minimizing the largest
/// stage cost (exact, by dynamic programming over the boundaries). Throws strata::OptionError
/// "stages = 9: the model has 4 layer boundaries, so at most 5 stages" when it cannot.
[[nodiscard]] StageLayout plan_stages(const ModelGraph& graph, int stages,
                                      const StageCostInputs& inputs);

}  // namespace strata
