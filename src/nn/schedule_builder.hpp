// ScheduleBuilder: the bookkeeping under the memory plan — buffers ("instances") with lifetimes
// in step positions, in-place aliases, and their layout in one arena (greedy by size); a layer-
// pipeline stage's whole-graph buffers are marked and left out of the arena (stage_storage.hpp
// places them). Internal to src/nn (execution_plan.cpp); tests see its result through
// ExecutionPlan and StageStorage.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "src/nn/execution_plan.hpp"

namespace strata::plan_detail {

// Lifetimes are measured in positions: step s spans positions 2s (its first phase) and 2s + 1
// (its second phase). Only a folded backward uses the phases apart: the aggregation's part
// (dy, scratch) ends with the first, so the linear's dx may take their memory in the second.
[[nodiscard]] inline int begin_of(int step) {
    return 2 * step;
}
[[nodiscard]] inline int end_of(int step) {
    return 2 * step + 1;
}

// Planning-time references: >= 0 an instance, -1 none, <= -2 model input k as -(k + 2).
inline constexpr int no_ref = -1;
[[nodiscard]] inline int input_ref(int k) {
    return -(k + 2);
}
[[nodiscard]] inline bool is_input_ref(int ref) {
    return ref <= -2;
}

/// A buffer during planning; in-place aliases point at the instance whose memory they share.
struct Instance {
    std::size_t floats = 0;
    index_t cols = 0;
    int first = 0;
    int last = 0;
    int parent = -1;
    bool whole = false;  ///< a pipeline stage's whole-graph buffer (not in the arena)
    std::string label;
};

/// Instances and steps of one schedule, and its conversion into slots.
class ScheduleBuilder {
public:
    /// `alignment`: floats each arena buffer is rounded up to (16: 64 bytes; 1 for a stage's
    /// per-row layout).
    explicit ScheduleBuilder(const ModelGraph& graph, std::size_t alignment = 16)
        : graph_(graph), alignment_(alignment) {}

    /// A buffer written from position `first` on.
    int add(std::size_t floats, index_t cols, int first, std::string label);
    /// A buffer written by step s (alive for the whole step).
    int add_at(int s, std::size_t floats, index_t cols, std::string label);
    /// The reference is read or written during step s: its lifetime reaches the step's end.
    void use(int ref, int s) { use_at(ref, end_of(s)); }
    /// ... until position `position` only.
    void use_at(int ref, int position);
    /// `from` (which starts where `into` ends) shares into's memory from now on.
    void alias(int into, int from);
    [[nodiscard]] int last_use(int ref) { return at(ref).last; }
    /// The reference's buffer holds every row (a pipeline stage's whole-graph buffer).
    void set_whole(int ref);
    [[nodiscard]] bool is_whole(int ref);
    /// Marks whole every buffer written before `position` and read at or after it.
    void set_whole_across(int position);

    std::vector<PlanStep> steps;
    std::vector<int> values;  ///< per tensor: the reference of its value as forward wrote it
    std::vector<int> grads;   ///< per tensor: the reference of its gradient

    /// Offsets (greedy by size), slots, and references turned into slot indices. Values alive
    /// across `loss_step` (>= 0) are counted as kept for backward; `boundary` is the schedule's
    /// first step after the forward ones.
    Schedule finish(int loss_step, int boundary);

private:
    int root(int i);
    Instance& at(int ref) { return instances_[static_cast<std::size_t>(root(ref))]; }

    const ModelGraph& graph_;
    std::size_t alignment_;
    std::vector<Instance> instances_;
};

}  // namespace strata::plan_detail
