// ModelGraph: construction checks and queries.
#include "src/nn/model_graph.hpp"

#include "src/base/error.hpp"

namespace strata {

TensorId ModelGraph::add_input(std::string name, index_t cols) {
    STRATA_CHECK(nodes_.empty(), "ModelGraph: input '", name, "' added after the first node");
    STRATA_CHECK(cols > 0, "ModelGraph: input '", name, "' has ", cols, " columns");
    tensors_.push_back({std::move(name), cols, -1, false});
    inputs_.push_back(static_cast<TensorId>(tensors_.size()) - 1);
    return inputs_.back();
}

TensorId ModelGraph::add(std::string name, std::unique_ptr<Op> op, std::vector<TensorId> inputs) {
    STRATA_CHECK(op != nullptr, "ModelGraph: node '", name, "' has no op");
    STRATA_CHECK(static_cast<int>(inputs.size()) == op->num_inputs(), "ModelGraph: node '", name,
                 "' (", op->describe(), ") takes ", op->num_inputs(), " inputs, got ",
                 inputs.size());
    std::vector<index_t> cols;
    for (const TensorId t : inputs) {
        STRATA_CHECK(t >= 0 && t < static_cast<TensorId>(tensors_.size()), "ModelGraph: node '",
                     name, "' reads tensor ", t, ", which does not exist yet");
        cols.push_back(tensors_[static_cast<std::size_t>(t)].cols);
    }
    const index_t out = op->output_cols(cols);
    const auto node = static_cast<int>(nodes_.size());
    tensors_.push_back({name, out, node, false});
    const auto output = static_cast<TensorId>(tensors_.size()) - 1;
    nodes_.push_back({std::move(name), std::move(op), std::move(inputs), output});
    return output;
}

void ModelGraph::set_output(TensorId tensor) {
    STRATA_CHECK(tensor >= 0 && tensor < static_cast<TensorId>(tensors_.size()) &&
                     tensors_[static_cast<std::size_t>(tensor)].producer >= 0,
                 "ModelGraph: the output must be a node's output, got tensor ", tensor);
    output_ = tensor;
}

void ModelGraph::mark_layer_input(TensorId tensor) {
    tensors_.at(static_cast<std::size_t>(tensor)).layer_input = true;
}

TensorId ModelGraph::output() const {
    STRATA_CHECK(output_ >= 0, "ModelGraph: no output set");
    return output_;
}

std::optional<TensorId> ModelGraph::find(const std::string& name) const {
    for (std::size_t t = 0; t < tensors_.size(); ++t) {
        if (tensors_[t].name == name) {
            return static_cast<TensorId>(t);
        }
    }
    return std::nullopt;
}

std::vector<index_t> ModelGraph::input_cols(int n) const {
    std::vector<index_t> cols;
    for (const TensorId t : node(n).inputs) {
        cols.push_back(tensor(t).cols);
    }
    return cols;
}

std::vector<std::pair<int, int>> ModelGraph::consumers(TensorId t) const {
    std::vector<std::pair<int, int>> found;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
        const auto& inputs = nodes_[n].inputs;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (inputs[i] == t) {
                found.emplace_back(static_cast<int>(n), static_cast<int>(i));
            }
        }
    }
    return found;
}

}  // namespace strata
