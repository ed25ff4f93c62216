// plan_stage_storage: the placement of a pipeline stage's tensors (moved out of the executor so
// that the planner sizes stages with the same code).
#include "src/nn/stage_storage.hpp"

#include <algorithm>

#include "src/base/error.hpp"

namespace strata {

std::uint64_t aligned_floats(std::uint64_t floats) {
    return (floats + 15) / 16 * 16;  // 64-byte aligned regions
}

StageStorage plan_stage_storage(const ModelGraph& graph, const StageLayout& layout, int stage_index,
                                index_t rows) {
    const Stage& stage = layout.stages.at(static_cast<std::size_t>(stage_index));
    StageStorage st;
    const auto num_tensors = graph.tensors().size();
    st.value.assign(num_tensors, {});
    st.grad.assign(num_tensors, {});
    for (std::size_t k = 0; k < graph.inputs().size(); ++k) {
        const TensorId t = graph.inputs()[k];
        st.value[static_cast<std::size_t>(t)] = {
            .place = Place::input, .input = static_cast<int>(k), .cols = graph.tensor(t).cols};
    }
    std::vector<bool> kept(num_tensors, false);
    for (const TensorId t : stage.incoming) {
        kept[static_cast<std::size_t>(t)] = true;
    }
    for (const TensorId t : stage.outgoing) {
        kept[static_cast<std::size_t>(t)] = true;
    }
    std::vector<bool> kept_grad(num_tensors, false);
    for (int n = stage.first; n < stage.end; ++n) {
        const Node& node = graph.node(n);
        st.nodes.push_back(n);
        // Layer inputs are kept too (one per layer): backward then recomputes only the cheap
        // pointwise values inside a layer, never a linear (GCNII's ReLU reads its output h).
        if (graph.tensor(node.output).layer_input) {
            kept[static_cast<std::size_t>(node.output)] = true;
        }
        if (node.op->kind() == OpKind::aggregate) {
            kept[static_cast<std::size_t>(node.output)] = true;
            kept_grad[static_cast<std::size_t>(node.output)] = true;
            for (const TensorId t : node.inputs) {
                if (graph.tensor(t).producer >= 0 && !kept[static_cast<std::size_t>(t)]) {
                    kept[static_cast<std::size_t>(t)] = true;
                }
                if (graph.tensor(t).producer >= 0 &&
                    std::find(st.snapshot.begin(), st.snapshot.end(), t) == st.snapshot.end()) {
                    st.snapshot.push_back(t);
                }
            }
        }
    }
    // Tensors of the stage: produced here or received.
    std::vector<TensorId> tensors = stage.incoming;
    for (const int n : st.nodes) {
        tensors.push_back(graph.node(n).output);
    }
    for (const TensorId t : tensors) {
        const auto i = static_cast<std::size_t>(t);
        const index_t cols = graph.tensor(t).cols;
        const auto whole = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
        if (kept[i]) {
            st.value[i] = {.place = Place::kept, .offset = st.kept_floats, .cols = cols};
            st.kept_floats += aligned_floats(whole);
        } else {
            st.value[i] = {.place = Place::scratch, .offset = st.scratch_per_row, .cols = cols};
            st.scratch_per_row += static_cast<std::size_t>(cols);
        }
        if (kept_grad[i]) {
            st.grad[i] = {.place = Place::kept, .offset = st.kept_grad_floats, .cols = cols};
            st.kept_grad_floats += aligned_floats(whole);
            st.kept_grads.push_back(t);
        } else {
            st.grad[i] = {.place = Place::scratch, .offset = st.scratch_per_row, .cols = cols};
            st.scratch_per_row += static_cast<std::size_t>(cols);
        }
    }
    // Backward recomputes, per chunk, only the scratch values that some backward (or the loss)
    // reads, and what they are computed from (Op::saves() says what a backward reads).
    std::vector<bool> needed(num_tensors, false);
    for (const int n : st.nodes) {
        const Node& node = graph.node(n);
        const Saves saves = node.op->saves();
        for (const int i : saves.inputs) {
            needed[static_cast<std::size_t>(node.inputs[static_cast<std::size_t>(i)])] = true;
        }
        if (saves.output) {
            needed[static_cast<std::size_t>(node.output)] = true;
        }
    }
    if (stage.end == graph.num_nodes()) {
        needed[static_cast<std::size_t>(graph.output())] = true;  // the loss reads the logits
    }
    std::vector<bool> recomputed(static_cast<std::size_t>(graph.num_nodes()), false);
    for (std::size_t k = st.nodes.size(); k-- > 0;) {  // consumers before producers
        const Node& node = graph.node(st.nodes[k]);
        const auto out = static_cast<std::size_t>(node.output);
        if (needed[out] && st.value[out].place == Place::scratch) {
            recomputed[static_cast<std::size_t>(st.nodes[k])] = true;
            for (const TensorId t : node.inputs) {
                needed[static_cast<std::size_t>(t)] = true;
            }
        }
    }
    for (const int n : st.nodes) {
        if (recomputed[static_cast<std::size_t>(n)]) {
            STRATA_ASSERT(graph.node(n).op->row_local());
            st.recompute.push_back(n);
        }
    }
    for (const TensorId t : st.snapshot) {
        st.snapshot_floats += aligned_floats(static_cast<std::size_t>(rows) *
                                             static_cast<std::size_t>(graph.tensor(t).cols));
    }
    // Gradient modes: the first writer of a tensor's chunk rows overwrites, later ones add. The
    // next stage (received gradients) and the loss write first.
    std::vector<bool> written(num_tensors, false);
    for (const TensorId t : stage.outgoing) {
        written[static_cast<std::size_t>(t)] = true;
    }
    if (stage.end == graph.num_nodes()) {
        written[static_cast<std::size_t>(graph.output())] = true;
    }
    st.modes.resize(st.nodes.size());
    for (std::size_t k = st.nodes.size(); k-- > 0;) {
        const Node& node = graph.node(st.nodes[k]);
        for (const TensorId t : node.inputs) {
            const auto i = static_cast<std::size_t>(t);
            if (graph.tensor(t).producer < 0) {
                st.modes[k].push_back(GradMode::skip);
            } else {
                st.modes[k].push_back(written[i] ? GradMode::accumulate : GradMode::overwrite);
                written[i] = true;
            }
        }
    }
    return st;
}

std::size_t stage_workspace_floats(const ModelGraph& graph, const StageStorage& storage,
                                   index_t chunk_rows, const GraphOperator& aggregation) {
    std::size_t workspace = 0;
    for (std::size_t k = 0; k < storage.nodes.size(); ++k) {
        const int n = storage.nodes[k];
        const Op& op = *graph.node(n).op;
        const std::vector<index_t> in = graph.input_cols(n);
        const WorkspaceQuery query{.rows = op.row_local() ? chunk_rows : aggregation.num_rows(),
                                   .input_cols = in,
                                   .output_cols = graph.tensor(graph.node(n).output).cols,
                                   .graph = &aggregation,
                                   .modes = storage.modes[k]};
        workspace =
            std::max({workspace, op.forward_workspace(query), op.backward_workspace(query)});
    }
    return workspace;
}

std::vector<MemoryLine> stage_memory_lines(const StageMemory& m) {
    const auto bytes = [](std::size_t floats) {
        return static_cast<std::int64_t>(floats * sizeof(float));
    };
    const std::string stage_name = "stage " + std::to_string(m.stage) + " ";
    std::vector<MemoryLine> lines{
        {stage_name + "whole-graph activations (aggregation inputs/outputs, cut tensors)",
         bytes(m.kept_floats)},
        {stage_name + "whole-graph aggregation gradients", bytes(m.kept_grad_floats)},
        {stage_name + "chunk scratch (recomputed values, gradients)", bytes(m.scratch_floats)},
        {stage_name + "historical-embedding snapshot", bytes(m.snapshot_floats)},
        {stage_name + "mirror exchange (ways)", m.mirror_bytes},
        {"parameters + gradients (replicated)", bytes(2 * m.parameters)}};
    if (m.evaluates) {
        lines.push_back({"exact evaluation (rank 0)", bytes(m.evaluation_floats)});
    }
    return lines;
}

}  // namespace strata
