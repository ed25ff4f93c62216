// ScheduleBuilder: lifetimes, aliases and the arena layout of a schedule.
#include "src/nn/schedule_builder.hpp"

#include <algorithm>

namespace strata::plan_detail {

int ScheduleBuilder::add(std::size_t floats, index_t cols, int first, std::string label) {
    instances_.push_back({floats, cols, first, first, -1, false, std::move(label)});
    return static_cast<int>(instances_.size()) - 1;
}

int ScheduleBuilder::add_at(int s, std::size_t floats, index_t cols, std::string label) {
    const int i = add(floats, cols, begin_of(s), std::move(label));
    use_at(i, end_of(s));
    return i;
}

int ScheduleBuilder::root(int i) {
    while (instances_[static_cast<std::size_t>(i)].parent >= 0) {
        i = instances_[static_cast<std::size_t>(i)].parent;
    }
    return i;
}

void ScheduleBuilder::use_at(int ref, int position) {
    if (ref >= 0) {
        Instance& i = at(ref);
        i.last = std::max(i.last, position);
    }
}

void ScheduleBuilder::set_whole(int ref) {
    if (ref >= 0) {
        at(ref).whole = true;
    }
}

bool ScheduleBuilder::is_whole(int ref) {
    return ref >= 0 && at(ref).whole;
}

void ScheduleBuilder::set_whole_across(int position) {
    for (Instance& i : instances_) {
        if (i.parent < 0 && i.first < position && i.last >= position) {
            i.whole = true;
        }
    }
}

void ScheduleBuilder::alias(int into, int from) {
    const int r = root(into);
    const int f = root(from);
    if (r == f) {
        return;
    }
    Instance& target = instances_[static_cast<std::size_t>(r)];
    const Instance& source = instances_[static_cast<std::size_t>(f)];
    target.last = std::max(target.last, source.last);
    target.whole = target.whole || source.whole;
    target.label += " = " + source.label;
    instances_[static_cast<std::size_t>(f)].parent = r;
}

Schedule ScheduleBuilder::finish(int loss_step, int boundary) {
    const auto aligned = [&](std::size_t floats) {
        return (floats + alignment_ - 1) / alignment_ * alignment_;
    };
    Schedule schedule;
    schedule.boundary = boundary;
    const auto& inputs = graph_.inputs();
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        schedule.slots.push_back({static_cast<int>(k), 0, 0, graph_.tensor(inputs[k]).cols,
                                  "input " + graph_.tensor(inputs[k]).name});
    }
    std::vector<int> roots;
    std::vector<int> order;  // the arena's buffers
    for (int i = 0; i < static_cast<int>(instances_.size()); ++i) {
        const Instance& me = instances_[static_cast<std::size_t>(i)];
        if (me.parent < 0) {
            roots.push_back(i);
            if (!me.whole) {
                order.push_back(i);
            }
        }
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const Instance& x = instances_[static_cast<std::size_t>(a)];
        const Instance& y = instances_[static_cast<std::size_t>(b)];
        return x.floats != y.floats ? x.floats > y.floats : x.first < y.first;
    });
    std::vector<std::size_t> offset(instances_.size(), 0);
    std::vector<int> placed;
    for (const int i : order) {
        const Instance& me = instances_[static_cast<std::size_t>(i)];
        const std::size_t size = aligned(me.floats);
        std::vector<std::pair<std::size_t, std::size_t>> busy;  // [offset, end) in my lifetime
        for (const int p : placed) {
            const Instance& other = instances_[static_cast<std::size_t>(p)];
            if (other.first <= me.last && me.first <= other.last) {
                busy.emplace_back(offset[static_cast<std::size_t>(p)],
                                  offset[static_cast<std::size_t>(p)] + aligned(other.floats));
            }
        }
        std::sort(busy.begin(), busy.end());
        std::size_t candidate = 0;
        for (const auto& [begin, end] : busy) {
            if (candidate + size <= begin) {
                break;
            }
            candidate = std::max(candidate, end);
        }
        offset[static_cast<std::size_t>(i)] = candidate;
        schedule.arena_floats = std::max(schedule.arena_floats, candidate + size);
        placed.push_back(i);
    }
    std::vector<int> slot_of(instances_.size(), -1);
    for (const int i : roots) {
        const Instance& me = instances_[static_cast<std::size_t>(i)];
        slot_of[static_cast<std::size_t>(i)] = static_cast<int>(schedule.slots.size());
        schedule.slots.push_back({.input = -1,
                                  .offset = offset[static_cast<std::size_t>(i)],
                                  .floats = me.floats,
                                  .cols = me.cols,
                                  .label = me.label,
                                  .whole = me.whole});
        if (loss_step >= 0 && !me.whole && me.first < begin_of(loss_step) &&
            me.last > end_of(loss_step)) {
            schedule.kept_floats += me.floats;
        }
    }
    auto slot = [&](int ref) {
        if (ref == no_ref) {
            return -1;
        }
        if (is_input_ref(ref)) {
            return -ref - 2;
        }
        return slot_of[static_cast<std::size_t>(root(ref))];
    };
    for (PlanStep& step : steps) {
        for (int& r : step.x) {
            r = slot(r);
        }
        for (int& r : step.dx) {
            r = slot(r);
        }
        step.y = slot(step.y);
        step.dy = slot(step.dy);
        step.workspace = slot(step.workspace);
        step.folded_grad = slot(step.folded_grad);
    }
    schedule.steps = std::move(steps);
    for (const int r : values) {
        schedule.values.push_back(slot(r));
    }
    for (const int r : grads) {
        schedule.grads.push_back(slot(r));
    }
    return schedule;
}

}  // namespace strata::plan_detail
