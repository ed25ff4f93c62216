// The codecs of a checkpoint's typed parts.
#include "training/checkpoint_pack.hpp"

#include <concepts>
#include <optional>
#include <type_traits>

namespace strata {
namespace {

// Each typed part's fields in the order they travel: one list serves both directions, so a
// field added to one side cannot be missed on the other.
template <class A, class S>
requires std::same_as<std::remove_const_t<S>, EpochStats>
void fields_of(A& a, S& b) {
    a(b.epoch, b.loss, b.train_acc, b.val_acc, b.test_acc, b.val_loss, b.eval_train_loss, b.binary,
      b.val_auc, b.test_auc);
}
template <class A, class S>
requires std::same_as<std::remove_const_t<S>, HistoryTensor>
void fields_of(A& a, S& t) {
    a(t.name, t.rows, t.cols, t.values);
}
template <class A, class S>
requires std::same_as<std::remove_const_t<S>, PipelineHistory>
void fields_of(A& a, S& h) {
    a(h.chunks, h.snapshot_period, h.has_snapshot, h.embeddings, h.snapshot, h.gradients,
      h.from_format4, h.format4_rows);
}
template <class A, class S>
requires std::same_as<std::remove_const_t<S>, GuardState>
void fields_of(A& a, S& g) {
    a(g.criterion, g.triggers, g.below, g.below_since, g.above, g.above_since, g.best_figure,
      g.min_train_loss, g.good_epoch, g.parameters, g.optimizer, g.tracker_pending, g.tracker_best,
      g.tracker_parameters);
}

template <class T>
constexpr bool is_optional = false;
template <class T>
constexpr bool is_optional<std::optional<T>> = true;
/// A vector the Packer cannot copy flat: its elements travel one by one.
template <class T>
constexpr bool is_vector_of_parts = false;
template <class T>
constexpr bool is_vector_of_parts<std::vector<T>> = !std::is_trivially_copyable_v<T>;

/// Optionals as a flag and the value, vectors of parts as a size and each part, parts as their
/// fields, everything else as the Packer writes it.
struct Put {
    Packer& p;
    template <class... T>
    void operator()(const T&... values) {
        (one(values), ...);
    }
    template <class T>
    void one(const T& v) {
        if constexpr (is_optional<T>) {
            p.put(v.has_value());
            if (v) {
                one(*v);
            }
        } else if constexpr (is_vector_of_parts<T>) {
            p.put(v.size());
            for (const auto& e : v) {
                one(e);
            }
        } else if constexpr (requires { fields_of(*this, v); }) {
            fields_of(*this, v);
        } else {
            p.put(v);
        }
    }
};

/// Put's inverse; an EpochStats read back is an evaluated one.
struct Get {
    Unpacker& u;
    template <class... T>
    void operator()(T&... values) {
        (one(values), ...);
    }
    template <class T>
    void one(T& v) {
        if constexpr (is_optional<T>) {
            bool has = false;
            u.get(has);
            v.reset();
            if (has) {
                one(v.emplace());
            }
        } else if constexpr (is_vector_of_parts<T>) {
            std::size_t n = 0;
            u.get(n);
            v.clear();
            for (std::size_t i = 0; i < n; ++i) {
                one(v.emplace_back());
            }
        } else if constexpr (std::is_same_v<T, EpochStats>) {
            v = EpochStats{};
            v.evaluated = true;
            fields_of(*this, v);
        } else if constexpr (requires { fields_of(*this, v); }) {
            fields_of(*this, v);
        } else {
            u.get(v);
        }
    }
};

}  // namespace

void put(Packer& p, const EpochStats& best) {
    Put{p}(best);
}
void get(Unpacker& u, EpochStats& best) {
    Get{u}(best);
}
void put(Packer& p, const PipelineHistory& history) {
    Put{p}(history);
}
void get(Unpacker& u, PipelineHistory& history) {
    Get{u}(history);
}
void put(Packer& p, const GuardState& guard) {
    Put{p}(guard);
}
void get(Unpacker& u, GuardState& guard) {
    Get{u}(guard);
}

}  // namespace strata
