// ScheduleBuilder: the bookkeeping under the planner — buffers ("instances") with lifetimes in
// step positions, in-place aliases, and their layout in one arena (greedy by size). Internal to
// src/nn (execution_plan.cpp); tests see its result through ExecutionPlan.
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
    std::string label;
};

/// Instances and steps of one schedule, and its conversion into slots.
class ScheduleBuilder {
public:
    explicit ScheduleBuilder(const ModelGraph& graph) : graph_(graph) {}

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

    std::vector<PlanStep> steps;

    /// Offsets (greedy by size), slots, and references turned into slot indices. Values alive
    /// across `loss_step` (>= 0) are counted as kept for backward.
    Schedule finish(int loss_step);

private:
    int root(int i);
    Instance& at(int ref) { return instances_[static_cast<std::size_t>(root(ref))]; }

    const ModelGraph& graph_;
    std::vector<Instance> instances_;
};

}  // namespace strata::plan_detail
