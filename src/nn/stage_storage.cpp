// plan_stage_storage: a pipeline stage's memory plan placed in the executor's regions (shared
// with strata plan's layout planner, planner/pipeline_model.hpp, so that it sizes stages with the
// same code).
#include "src/nn/stage_storage.hpp"

#include <algorithm>

#include "src/base/error.hpp"
#include "src/tensor/grid_blocks.hpp"

namespace strata {

std::uint64_t aligned_floats(std::uint64_t floats) {
    return (floats + 15) / 16 * 16;  // 64-byte aligned regions
}

const Location& StageStorage::value(TensorId t) const {
    const int slot = schedule.values.at(static_cast<std::size_t>(t));
    STRATA_ASSERT(slot >= 0);
    return slots[static_cast<std::size_t>(slot)];
}

const Location& StageStorage::grad(TensorId t) const {
    const int slot = schedule.grads.at(static_cast<std::size_t>(t));
    STRATA_ASSERT(slot >= 0);
    return slots[static_cast<std::size_t>(slot)];
}

StageStorage plan_stage_storage(const ModelGraph& graph, const StageLayout& layout, int stage_index,
                                index_t rows, Recompute recompute, bool sliced) {
    const Stage& stage = layout.stages.at(static_cast<std::size_t>(stage_index));
    StageStorage st;
    st.schedule = plan_stage_schedule(graph,
                                      StageScope{.first = stage.first,
                                                 .end = stage.end,
                                                 .incoming = stage.incoming,
                                                 .outgoing = stage.outgoing},
                                      recompute);
    const Schedule& schedule = st.schedule;
    const auto whole_floats = [&](index_t cols) {
        return aligned_floats(static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols));
    };
    std::vector<bool> gradient(schedule.slots.size(), false);
    for (const int slot : schedule.grads) {
        if (slot >= 0) {
            gradient[static_cast<std::size_t>(slot)] = true;
        }
    }
    // S x F: the slots the slices mirror become chunk copies — aggregation inputs (computed in
    // the stage or received; not the raw inputs, nor those sent on: a send reads its rows
    // after the next chunk ran) and aggregation outputs' gradients.
    std::vector<bool> chunk(schedule.slots.size(), false);
    for (int n = stage.first; sliced && n < stage.end; ++n) {
        const Node& node = graph.node(n);
        if (node.op->kind() != OpKind::aggregate) {
            continue;
        }
        const int g = schedule.grads.at(static_cast<std::size_t>(node.output));
        if (g >= 0) {
            chunk[static_cast<std::size_t>(g)] = true;
        }
        for (const TensorId t : node.inputs) {
            const bool sent =
                std::find(stage.outgoing.begin(), stage.outgoing.end(), t) != stage.outgoing.end();
            const int v = schedule.values.at(static_cast<std::size_t>(t));
            if (graph.tensor(t).producer >= 0 && !sent && v >= 0) {
                chunk[static_cast<std::size_t>(v)] = true;
            }
        }
    }
    for (std::size_t s = 0; s < schedule.slots.size(); ++s) {
        const Slot& slot = schedule.slots[s];
        Location l{.cols = slot.cols};
        if (slot.input >= 0) {
            l.place = Place::input;
            l.input = slot.input;
        } else if (!slot.whole) {
            l.place = Place::scratch;
            l.offset = slot.offset;
        } else if (chunk[s]) {
            l.place = Place::chunk;
            l.offset = st.chunk_per_row;
            st.chunk_per_row += static_cast<std::size_t>(slot.cols);
        } else if (gradient[s]) {
            l.place = Place::kept_grad;
            l.offset = st.kept_grad_floats;
            st.kept_grad_floats += whole_floats(slot.cols);
        } else {
            l.place = Place::kept;
            l.offset = st.kept_floats;
            st.kept_floats += whole_floats(slot.cols);
        }
        st.slots.push_back(l);
    }
    // The receive rows: one step's stage transfer in (values from the stage before, or the
    // gradients from the stage after; never both at once), received while the step before
    // computes.
    const auto columns = [&](const std::vector<TensorId>& tensors) {
        std::size_t sum = 0;
        for (const TensorId t : tensors) {
            sum += static_cast<std::size_t>(graph.tensor(t).cols);
        }
        return sum;
    };
    st.receive_per_row = std::max(columns(stage.incoming), columns(stage.outgoing));
    st.scratch_per_row = schedule.arena_floats + st.receive_per_row;
    for (const PlanStep& step : schedule.steps) {
        if (step.kind == StepKind::recompute) {
            st.recompute.push_back(step.node);
        }
    }
    for (int n = stage.first; n < stage.end; ++n) {
        const Node& node = graph.node(n);
        if (node.op->kind() != OpKind::aggregate) {
            continue;
        }
        // An aggregation of the raw features needs no backward: its output has no gradient.
        const bool has_grad = schedule.grads.at(static_cast<std::size_t>(node.output)) >= 0;
        if (has_grad) {
            st.kept_grads.push_back(node.output);
        }
        for (const TensorId t : node.inputs) {
            if (graph.tensor(t).producer >= 0 &&
                std::find(st.snapshot.begin(), st.snapshot.end(), t) == st.snapshot.end()) {
                STRATA_ASSERT(st.value(t).place == Place::kept || st.chunk_only(t));
                st.snapshot.push_back(t);
                if (!st.chunk_only(t)) {
                    st.snapshot_floats += whole_floats(graph.tensor(t).cols);
                }
            }
        }
        STRATA_ASSERT(st.value(node.output).place == Place::kept &&
                      (!has_grad || st.grad(node.output).place == Place::kept_grad ||
                       st.grad(node.output).place == Place::chunk));
    }
    // The chunk copies backward reads: refilled from the mirror before a chunk's backward.
    for (const TensorId t : st.snapshot) {
        if (!st.chunk_only(t)) {
            continue;
        }
        const int slot = schedule.values.at(static_cast<std::size_t>(t));
        bool read = false;
        for (std::size_t k = static_cast<std::size_t>(schedule.boundary); k < schedule.steps.size();
             ++k) {
            const PlanStep& step = schedule.steps[k];
            read = read || std::find(step.x.begin(), step.x.end(), slot) != step.x.end() ||
                   (step.kind != StepKind::forward && step.kind != StepKind::recompute &&
                    step.y == slot);
        }
        if (read) {
            st.refill.push_back(t);
        }
    }
    return st;
}

std::size_t stage_workspace_floats(const ModelGraph& graph, const StageStorage& storage,
                                   index_t chunk_rows, const GraphOperator& aggregation) {
    std::size_t workspace = 0;
    for (const PlanStep& step : storage.schedule.steps) {
        if (step.node < 0) {
            continue;  // the loss
        }
        const Op& op = *graph.node(step.node).op;
        const std::vector<index_t> in = graph.input_cols(step.node);
        const WorkspaceQuery query{.rows = op.row_local() ? chunk_rows : aggregation.num_rows(),
                                   .input_cols = in,
                                   .output_cols = graph.tensor(graph.node(step.node).output).cols,
                                   .graph = &aggregation,
                                   .modes = step.modes};
        workspace =
            std::max(workspace, step.kind == StepKind::backward ? op.backward_workspace(query)
                                                                : op.forward_workspace(query));
    }
    return workspace;
}

std::vector<std::vector<int>> way_mirror_slots(const ModelGraph& graph,
                                               const StageStorage& storage) {
    const Schedule& schedule = storage.schedule;
    std::vector<std::vector<int>> out(schedule.steps.size());
    for (std::size_t k = 0; k < schedule.steps.size(); ++k) {
        const PlanStep& step = schedule.steps[k];
        if (step.kind == StepKind::loss || graph.node(step.node).op->row_local()) {
            continue;
        }
        if (static_cast<int>(k) < schedule.boundary) {  // the other ways' fresh input rows
            for (const int slot : step.x) {
                // Kept whole (or, with feature slices, a chunk copy whose mirror is whole);
                // the raw inputs never change.
                if (storage.slots.at(static_cast<std::size_t>(slot)).place != Place::input) {
                    out[k].push_back(slot);
                }
            }
        } else if (step.kind == StepKind::backward) {  // the pull dx = Âᵀ dy reads every dy row
            out[k].push_back(step.dy);
        }
    }
    return out;
}

index_t way_mirror_width(const ModelGraph& graph, const StageStorage& storage, int slices,
                         int slice) {
    index_t widest = 0;
    for (const std::vector<int>& slots : way_mirror_slots(graph, storage)) {
        for (const int slot : slots) {
            widest =
                std::max(widest, storage.schedule.slots.at(static_cast<std::size_t>(slot)).cols);
        }
    }
    return grid_block(widest, slices, slice).count;
}

std::vector<SliceMirror> slice_mirrors(const ModelGraph& graph, const StageStorage& storage,
                                       bool snapshot) {
    std::vector<SliceMirror> out;
    // A buffer is its place and offset (or input): two slots there are one buffer, one mirror.
    const auto add = [&](int slot, bool with_snapshot) {
        if (slot < 0) {
            return;
        }
        const Location& l = storage.slots.at(static_cast<std::size_t>(slot));
        for (const SliceMirror& m : out) {
            const Location& o = storage.slots[static_cast<std::size_t>(m.slot)];
            if (o.place == l.place && o.offset == l.offset && o.input == l.input) {
                return;
            }
        }
        out.push_back({slot, with_snapshot});
    };
    const Schedule& schedule = storage.schedule;
    for (const TensorId t : storage.snapshot) {
        add(schedule.values.at(static_cast<std::size_t>(t)), snapshot);
    }
    for (const TensorId t : storage.kept_grads) {
        add(schedule.grads.at(static_cast<std::size_t>(t)), false);
    }
    for (const PlanStep& step : schedule.steps) {
        if (step.kind == StepKind::loss || graph.node(step.node).op->row_local()) {
            continue;
        }
        if (step.kind == StepKind::backward) {
            add(step.dy, false);
            continue;
        }
        for (const int slot : step.x) {
            add(slot, false);
        }
    }
    return out;
}

std::size_t slice_mirror_floats(const ModelGraph& graph, const StageStorage& storage, bool snapshot,
                                index_t rows, int slices, int slice) {
    STRATA_CHECK(slices >= 1 && slice >= 0 && slice < slices, "slice_mirror_floats: slice ", slice,
                 " of ", slices);
    std::size_t floats = 0;
    for (const SliceMirror& m : slice_mirrors(graph, storage, snapshot)) {
        const index_t cols = storage.slots[static_cast<std::size_t>(m.slot)].cols;
        const index_t mine = cols / slices + (slice < cols % slices ? 1 : 0);  // grid_block
        floats +=
            static_cast<std::size_t>(rows) * static_cast<std::size_t>(mine) * (m.snapshot ? 2 : 1);
    }
    return floats;
}

std::int64_t slice_share_bytes(index_t rows, std::span<const index_t> input_cols) {
    std::int64_t per_row = sizeof(index_t) + 3 * sizeof(std::uint8_t) + sizeof(global_id);
    for (const index_t cols : input_cols) {
        per_row += static_cast<std::int64_t>(cols) * static_cast<std::int64_t>(sizeof(float));
    }
    return static_cast<std::int64_t>(rows) * per_row;
}

std::vector<MemoryLine> stage_memory_lines(const StageMemory& m) {
    const auto bytes = [](std::size_t floats) {
        return static_cast<std::int64_t>(floats * sizeof(float));
    };
    const std::string stage_name = "stage " + std::to_string(m.stage) + " ";
    std::vector<MemoryLine> lines{
        {stage_name + "whole-graph activations (aggregation inputs/outputs, cut tensors, kept "
                      "values)",
         bytes(m.kept_floats)},
        {stage_name + "whole-graph aggregation gradients", bytes(m.kept_grad_floats)},
        {stage_name + "chunk scratch (recomputed values, gradients)", bytes(m.scratch_floats)},
        {stage_name + "historical-embedding snapshot", bytes(m.snapshot_floats)},
        {stage_name + "mirror exchange (ways)", m.mirror_bytes},
        {"parameters + gradients (replicated)", bytes(2 * m.parameters)}};
    if (m.slice_mirror_floats > 0) {
        lines.push_back({stage_name + "feature-slice mirrors (every row, column slice)",
                         bytes(m.slice_mirror_floats)});
    }
    if (m.share_bytes > 0) {
        lines.push_back({stage_name + "feature slice's rows of the data (a copy)", m.share_bytes});
    }
    if (m.evaluates) {
        lines.push_back({"exact evaluation (rank 0)", bytes(m.evaluation_floats)});
    }
    return lines;
}

}  // namespace strata
