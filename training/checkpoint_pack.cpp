// The codecs of a checkpoint's typed parts.
#include "training/checkpoint_pack.hpp"

namespace strata {
namespace {

void put_value(Packer& p, double v) {
    p.put(v);
}
void put_value(Packer& p, const EpochStats& v) {
    put(p, v);
}
void get_value(Unpacker& u, double& v) {
    u.get(v);
}
void get_value(Unpacker& u, EpochStats& v) {
    get(u, v);
}

template <class T>
void put_optional(Packer& p, const std::optional<T>& value) {
    p.put(value.has_value());
    if (value) {
        put_value(p, *value);
    }
}

template <class T>
void get_optional(Unpacker& u, std::optional<T>& value) {
    bool has = false;
    u.get(has);
    value.reset();
    if (has) {
        T v{};
        get_value(u, v);
        value = v;
    }
}

void put_tensors(Packer& p, const std::vector<HistoryTensor>& tensors) {
    p.put(tensors.size());
    for (const HistoryTensor& t : tensors) {
        p.put(t.name);
        p.put(t.rows);
        p.put(t.cols);
        p.put(t.values);
    }
}

void get_tensors(Unpacker& u, std::vector<HistoryTensor>& tensors) {
    std::size_t n = 0;
    u.get(n);
    tensors.clear();
    for (std::size_t i = 0; i < n; ++i) {
        HistoryTensor t;
        u.get(t.name);
        u.get(t.rows);
        u.get(t.cols);
        u.get(t.values);
        tensors.push_back(std::move(t));
    }
}

}  // namespace

void put(Packer& p, const EpochStats& b) {
    p.put(b.epoch);
    p.put(b.loss);
    p.put(b.train_acc);
    p.put(b.val_acc);
    p.put(b.test_acc);
    p.put(b.val_loss);
    p.put(b.eval_train_loss);
    p.put(b.binary);
    p.put(b.val_auc);
    p.put(b.test_auc);
}

void get(Unpacker& u, EpochStats& b) {
    b = EpochStats{};
    b.evaluated = true;
    u.get(b.epoch);
    u.get(b.loss);
    u.get(b.train_acc);
    u.get(b.val_acc);
    u.get(b.test_acc);
    u.get(b.val_loss);
    u.get(b.eval_train_loss);
    u.get(b.binary);
    u.get(b.val_auc);
    u.get(b.test_auc);
}

void put(Packer& p, const PipelineHistory& h) {
    p.put(h.chunks);
    p.put(h.snapshot_period);
    p.put(h.has_snapshot);
    put_tensors(p, h.embeddings);
    put_tensors(p, h.snapshot);
    put_tensors(p, h.gradients);
    p.put(h.from_format4);
    p.put(h.format4_rows);
}

void get(Unpacker& u, PipelineHistory& h) {
    u.get(h.chunks);
    u.get(h.snapshot_period);
    u.get(h.has_snapshot);
    get_tensors(u, h.embeddings);
    get_tensors(u, h.snapshot);
    get_tensors(u, h.gradients);
    u.get(h.from_format4);
    u.get(h.format4_rows);
}

void put(Packer& p, const GuardState& g) {
    p.put(g.criterion);
    p.put(g.triggers);
    p.put(g.below);
    p.put(g.below_since);
    put_optional(p, g.best_figure);
    put_optional(p, g.min_train_loss);
    p.put(g.good_epoch);
    p.put(g.parameters);
    p.put(g.optimizer);
    p.put(g.tracker_pending);
    put_optional(p, g.tracker_best);
    p.put(g.tracker_parameters);
}

void get(Unpacker& u, GuardState& g) {
    u.get(g.criterion);
    u.get(g.triggers);
    u.get(g.below);
    u.get(g.below_since);
    get_optional(u, g.best_figure);
    get_optional(u, g.min_train_loss);
    u.get(g.good_epoch);
    u.get(g.parameters);
    u.get(g.optimizer);
    u.get(g.tracker_pending);
    get_optional(u, g.tracker_best);
    u.get(g.tracker_parameters);
}

}  // namespace strata
