// The typed sections of a checkpoint file: the best-epoch record and the /pipeline section.
#include "training/checkpoint_sections.hpp"

#include <array>
#include <cstdio>
#include <limits>
#include <optional>

#include "src/base/error.hpp"
#include "src/base/integral_value.hpp"

namespace strata::checkpoint_detail {
namespace {

constexpr std::size_t record_figures = 8;
constexpr std::int64_t max_epoch = std::int64_t{1} << 53;
constexpr std::int64_t max_count = std::int64_t{1} << 20;
constexpr std::array<const char*, 3> history_parts{"embeddings", "snapshot", "gradients"};

std::string numbered(const char* format, std::size_t i) {
    std::array<char, 64> name{};
    std::snprintf(name.data(), name.size(), format, i);
    return name.data();
}

/// "/pipeline/rank_00003": rank 3's history (format 5).
std::string rank_group(std::size_t rank) {
    return numbered("/pipeline/rank_%05zu", rank);
}

std::vector<HistoryTensor>& history_part(PipelineHistory& h, std::size_t part) {
    return part == 0 ? h.embeddings : part == 1 ? h.snapshot : h.gradients;
}
const std::vector<HistoryTensor>& history_part(const PipelineHistory& h, std::size_t part) {
    return part == 0 ? h.embeddings : part == 1 ? h.snapshot : h.gradients;
}

std::int64_t flag(bool value) {
    return value ? 1 : 0;
}

/// A whole number stored as a float64 (format 4), in [lo, hi].
std::int64_t whole(double v, std::int64_t lo, std::int64_t hi, const std::string& where) {
    const std::optional<std::int64_t> n = integral_value(v, lo, hi);
    STRATA_CHECK(n.has_value(), where, " ", v, " is not a whole number in [", lo, ", ", hi, "]");
    return *n;
}

void write_guard(H5File& file, const GuardState& g) {
    const std::string group = "/pipeline/guard";
    write_with_checksum(file, group + "/parameters", g.parameters);
    write_with_checksum(file, group + "/optimizer", g.optimizer);
    file.write_attribute(group, "select_by", std::string(to_string(g.criterion)));
    file.write_attribute(group, "triggers", g.triggers);
    file.write_attribute(group, "below", g.below);
    file.write_attribute(group, "below_since", g.below_since);
    file.write_attribute(group, "above", g.above);
    file.write_attribute(group, "above_since", g.above_since);
    file.write_attribute(group, "good_epoch", g.good_epoch);
    if (g.best_figure) {
        file.write_attribute(group, "best_figure", *g.best_figure);
    }
    if (g.min_train_loss) {
        file.write_attribute(group, "min_train_loss", *g.min_train_loss);
    }
    file.write_attribute(group, "tracker_pending", flag(g.tracker_pending));
    if (!g.tracker_pending) {
        write_with_checksum(file, group + "/tracker_parameters", g.tracker_parameters);
        if (g.tracker_best) {
            write_record(file, group + "/tracker_best", *g.tracker_best);
        }
    }
}

GuardState read_guard(const H5File& file) {
    const std::string group = "/pipeline/guard";
    const std::string where = file.path() + ": " + group;
    GuardState g;
    g.parameters = read_verified<float>(file, group + "/parameters");
    g.optimizer = read_verified<float>(file, group + "/optimizer");
    const std::string select_by = file.read_string_attribute(group, "select_by");
    STRATA_CHECK(select_by == "val_acc" || select_by == "val_loss" || select_by == "val_auc", where,
                 ": select_by is '", select_by, "', expected val_acc, val_loss or val_auc");
    g.criterion = parse_selection(select_by);
    g.triggers = file.read_int_attribute(group, "triggers");
    g.below = file.read_int_attribute(group, "below");
    g.below_since = file.read_int_attribute(group, "below_since");
    g.good_epoch = file.read_int_attribute(group, "good_epoch");
    if (file.has_attribute(group, "above")) {  // absent before issue 31: no streak yet
        g.above = file.read_int_attribute(group, "above");
        g.above_since = file.read_int_attribute(group, "above_since");
    }
    STRATA_CHECK(g.triggers >= 0 && g.below >= 0 && g.above >= 0 && g.good_epoch >= 0, where,
                 ": triggers ", g.triggers, ", below ", g.below, ", above ", g.above,
                 ", good_epoch ", g.good_epoch);
    if (file.has_attribute(group, "best_figure")) {
        g.best_figure = file.read_double_attribute(group, "best_figure");
    }
    if (file.has_attribute(group, "min_train_loss")) {
        g.min_train_loss = file.read_double_attribute(group, "min_train_loss");
    }
    g.tracker_pending = file.read_int_attribute(group, "tracker_pending") != 0;
    if (!g.tracker_pending) {
        g.tracker_parameters = read_verified<float>(file, group + "/tracker_parameters");
        if (file.exists(group + "/tracker_best")) {
            g.tracker_best = read_record(file, group + "/tracker_best");
        }
    }
    return g;
}

/// Format 4's /pipeline/guard_figures: triggers, below, best val accuracy (-1: none), minimum
/// exact training loss, whether there is one, good epoch, first epoch of the streak.
GuardState read_guard_v4(const H5File& file) {
    const std::string where = file.path() + ": /pipeline/guard_figures:";
    GuardState g;
    const std::vector<double> f = read_verified<double>(file, "/pipeline/guard_figures");
    STRATA_CHECK(f.size() == 7, where, " ", f.size(), " values, expected 7");
    g.criterion = Selection::val_acc;  // format 4's guard judged validation accuracy
    g.triggers = whole(f[0], 0, std::numeric_limits<int>::max(), where + " rollbacks");
    g.below = whole(f[1], 0, std::numeric_limits<int>::max(), where + " evaluations below");
    if (f[2] >= 0.0) {
        g.best_figure = f[2];
    }
    if (f[4] != 0.0) {
        g.min_train_loss = f[3];
    }
    g.good_epoch = whole(f[5], 0, max_epoch, where + " good epoch");
    g.below_since = whole(f[6], -max_epoch, max_epoch, where + " streak start");
    g.parameters = read_verified<float>(file, "/pipeline/guard_parameters");
    g.optimizer = read_verified<float>(file, "/pipeline/guard_optimizer");
    g.tracker_pending = true;  // format 4 kept no best-tracker state
    return g;
}

}  // namespace

void write_record(H5File& file, const std::string& group, const EpochStats& s) {
    write_with_checksum(file, group + "/figures",
                        std::vector<double>{s.loss, s.train_acc, s.val_acc, s.test_acc, s.val_loss,
                                            s.eval_train_loss, s.val_auc, s.test_auc});
    file.write_attribute(group, "epoch", s.epoch);
    file.write_attribute(group, "binary", flag(s.binary));
}

EpochStats read_record(const H5File& file, const std::string& group) {
    const std::vector<double> f = read_verified<double>(file, group + "/figures");
    STRATA_CHECK(f.size() == record_figures, file.path(), ": ", group, "/figures has ", f.size(),
                 " values, expected ", record_figures);
    EpochStats s;
    s.evaluated = true;
    s.epoch = file.read_int_attribute(group, "epoch");
    STRATA_CHECK(s.epoch >= 0, file.path(), ": ", group, ": epoch ", s.epoch);
    s.binary = file.read_int_attribute(group, "binary") != 0;
    s.loss = f[0];
    s.train_acc = f[1];
    s.val_acc = f[2];
    s.test_acc = f[3];
    s.val_loss = f[4];
    s.eval_train_loss = f[5];
    s.val_auc = f[6];
    s.test_auc = f[7];
    return s;
}

EpochStats read_record_v4(const H5File& file, const std::string& dataset) {
    const std::vector<double> v = read_verified<double>(file, dataset);
    STRATA_CHECK(v.size() == 6, file.path(), ": ", dataset, " has ", v.size(),
                 " values, expected 6");
    EpochStats s;
    s.epoch = whole(v[0], 0, max_epoch, file.path() + ": " + dataset + ": epoch");
    s.loss = v[1];
    s.evaluated = true;
    s.train_acc = v[2];
    s.val_acc = v[3];
    s.test_acc = v[4];
    s.val_loss = v[5];
    return s;
}

void write_pipeline_section(H5File& file, const Checkpoint& c) {
    for (std::size_t r = 0; r < c.pipeline_history.size(); ++r) {
        const PipelineHistory& h = c.pipeline_history[r];
        const std::string group = rank_group(r);
        STRATA_CHECK(!h.from_format4, file.path(), ": rank ", r,
                     "'s pipeline history was read from a format-4 checkpoint (untyped) and "
                     "cannot be written again");
        write_with_checksum(
            file, group + "/settings",
            std::vector<std::int64_t>{h.chunks, h.snapshot_period, flag(h.has_snapshot)});
        for (std::size_t p = 0; p < history_parts.size(); ++p) {
            const std::vector<HistoryTensor>& tensors = history_part(h, p);
            file.write_attribute(group, history_parts[p],
                                 static_cast<std::int64_t>(tensors.size()));
            for (std::size_t i = 0; i < tensors.size(); ++i) {
                const HistoryTensor& t = tensors[i];
                STRATA_CHECK(t.values.size() == static_cast<std::size_t>(t.rows * t.cols),
                             file.path(), ": history tensor '", t.name, "' ", t.rows, " x ", t.cols,
                             " holds ", t.values.size(), " values");
                const std::string dataset = group + "/" + history_parts[p] + numbered("_%04zu", i);
                write_with_checksum(file, dataset, std::span<const float>(t.values),
                                    {t.rows, t.cols});
                file.write_attribute(dataset, "tensor", t.name);
            }
        }
    }
    if (c.guard) {
        write_guard(file, *c.guard);
    }
    if (!c.pipeline_history.empty() || c.guard) {
        file.write_attribute("/pipeline", "ranks",
                             static_cast<std::int64_t>(c.pipeline_history.size()));
    }
}

void read_pipeline_section(const H5File& file, std::int64_t version, Checkpoint& c) {
    if (!file.exists("/pipeline")) {
        return;
    }
    const std::int64_t ranks = file.read_int_attribute("/pipeline", "ranks");
    STRATA_CHECK(ranks >= 0 && ranks <= max_count, file.path(), ": /pipeline ranks = ", ranks);
    for (std::int64_t r = 0; r < ranks; ++r) {
        PipelineHistory h;
        if (version == 4) {  // one float32 array: chunks, period, has-snapshot, then the rows
            const std::string dataset =
                numbered("/pipeline/history_rank_%05zu", static_cast<std::size_t>(r));
            std::vector<float> flat = read_verified<float>(file, dataset);
            const std::string where = file.path() + ": " + dataset + ":";
            STRATA_CHECK(flat.size() >= 3, where, " ", flat.size(), " values");
            h.chunks = whole(flat[0], 1, std::numeric_limits<int>::max(), where + " chunks");
            h.snapshot_period =
                whole(flat[1], 0, std::numeric_limits<int>::max(), where + " snapshot period");
            h.has_snapshot = flat[2] != 0.0f;
            h.from_format4 = true;
            h.format4_rows.assign(flat.begin() + 3, flat.end());
        } else {
            const std::string group = rank_group(static_cast<std::size_t>(r));
            const std::vector<std::int64_t> settings =
                read_verified<std::int64_t>(file, group + "/settings");
            STRATA_CHECK(settings.size() == 3 && settings[0] >= 1 && settings[1] >= 0 &&
                             (settings[2] == 0 || settings[2] == 1),
                         file.path(), ": ", group,
                         "/settings: expected chunks >= 1, snapshot period >= 0, has-snapshot "
                         "0 or 1");
            h.chunks = settings[0];
            h.snapshot_period = settings[1];
            h.has_snapshot = settings[2] == 1;
            for (std::size_t p = 0; p < history_parts.size(); ++p) {
                const std::int64_t n = file.read_int_attribute(group, history_parts[p]);
                STRATA_CHECK(n >= 0 && n <= max_count, file.path(), ": ", group, " ",
                             history_parts[p], " = ", n);
                for (std::int64_t i = 0; i < n; ++i) {
                    const std::string dataset = group + "/" + history_parts[p] +
                                                numbered("_%04zu", static_cast<std::size_t>(i));
                    H5Shape shape;
                    HistoryTensor t;
                    t.values = read_verified<float>(file, dataset, &shape, 2);
                    t.rows = shape.at(0);
                    t.cols = shape.at(1);
                    t.name = file.read_string_attribute(dataset, "tensor");
                    history_part(h, p).push_back(std::move(t));
                }
            }
        }
        c.pipeline_history.push_back(std::move(h));
    }
    if (version == 4 && file.exists("/pipeline/guard_figures")) {
        c.guard = read_guard_v4(file);
    } else if (version >= 5 && file.exists("/pipeline/guard")) {
        c.guard = read_guard(file);
    }
}

}  // namespace strata::checkpoint_detail
