// ModelGraph: a model as a small graph of operations — a list of nodes in topological order,
// each naming its input tensors and producing one output tensor. No general autograd: the
// memory plan (execution_plan.hpp) derives the backward schedule and every buffer from this list.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/nn/graph_operator.hpp"
#include "src/nn/op.hpp"

namespace strata {

using TensorId = int;

struct TensorInfo {
    std::string name;
    index_t cols = 0;
    int producer = -1;         ///< node index; -1 for a model input (e.g. the features)
    bool layer_input = false;  ///< a recomputation checkpoint: `--recompute all` keeps it
};

struct Node {
    std::string name;  ///< "gcn0.linear": prefix of its parameters' names
    std::unique_ptr<Op> op;
    std::vector<TensorId> inputs;
    TensorId output = -1;
};

class ModelGraph {
public:
    /// A model input of `cols` columns (all owned rows), provided by the executor's data.
    TensorId add_input(std::string name, index_t cols);
    /// Appends a node; its inputs must exist already (so the list stays topological). Throws
    /// strata::Error on a wrong input count or widths the op rejects.
    TensorId add(std::string name, std::unique_ptr<Op> op, std::vector<TensorId> inputs);
    /// The tensor the loss reads (logits).
    void set_output(TensorId tensor);
    /// Marks the input of a layer: under `--recompute all` only such tensors (and model inputs)
    /// are kept for backward; everything else is recomputed from them.
    void mark_layer_input(TensorId tensor);
    /// The matrix every aggregation of this model multiplies by (one per model); the inputs
    /// upload that operator (TrainingInputs::plan). Default: symmetric (GCN's Â).
    void set_normalization(Normalization n) { normalization_ = n; }
    [[nodiscard]] Normalization normalization() const { return normalization_; }

    [[nodiscard]] const std::vector<TensorInfo>& tensors() const { return tensors_; }
    [[nodiscard]] const TensorInfo& tensor(TensorId t) const {
        return tensors_.at(static_cast<std::size_t>(t));
    }
    [[nodiscard]] const std::vector<Node>& nodes() const { return nodes_; }
    [[nodiscard]] Node& node(int n) { return nodes_.at(static_cast<std::size_t>(n)); }
    [[nodiscard]] const Node& node(int n) const { return nodes_.at(static_cast<std::size_t>(n)); }
    [[nodiscard]] int num_nodes() const { return static_cast<int>(nodes_.size()); }
    [[nodiscard]] const std::vector<TensorId>& inputs() const { return inputs_; }
    [[nodiscard]] TensorId output() const;
    /// The tensor called `name`, if any.
    [[nodiscard]] std::optional<TensorId> find(const std::string& name) const;
    /// Input widths of node n.
    [[nodiscard]] std::vector<index_t> input_cols(int n) const;
    /// (node, input index) pairs that read tensor t, in node order.
    [[nodiscard]] std::vector<std::pair<int, int>> consumers(TensorId t) const;

private:
    std::vector<TensorInfo> tensors_;
    std::vector<Node> nodes_;
    std::vector<TensorId> inputs_;
    TensorId output_ = -1;
    Normalization normalization_ = Normalization::symmetric;
};

}  // namespace strata
