// MetricsWriter: the JSONL metrics file (docs/training.md), one object per epoch, appended and
// flushed as each epoch ends, so a crash loses nothing already printed and `tail -f` follows
// the run. This file owns the metrics schema; later features add fields and bump the version.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "training/fit.hpp"

namespace strata {

/// "schema_version" of every record. 1: the unversioned records of earlier strata; 2: versioned
/// records with `evaluated`, `recompute_halo_bytes`, `planned_bytes`,
/// `planned_bytes_per_vertex`, `baseline_rss_bytes` (accuracies only on evaluated epochs);
/// 3: `split` (the dataset split the run trains and evaluates on, --split-index), and on
/// evaluated epochs of two-class tasks `val_auc`, `test_auc`; 4: `eval_train_loss` on evaluated
/// epochs, and on layer-pipeline runs `stage_bytes`, `way_bytes`, `bubble_s`, `stage_wait_s`,
/// `chunks`, `snapshot_period`, plus `guard` on epochs after which the accuracy guard acted.
/// 5: the time fields come from the slowest rank and add up (epoch_s = compute_s + wait_s +
/// eval_s; wait_s is the training step's exposed wait), `max_wait_s` (the whole epoch's wait,
/// max over ranks: version 4's wait_s), `threads`, `overlap`. 6: `features` (how the input
/// features are stored, --sparse-features) and `features_density`. 7: `config` (the run
/// configuration, training/run_config.hpp, as a JSON object) on the first record of the file.
/// 8: `halo_precision` (what halo rows crossed the wire as during the epoch: fp32, bf16, int8),
/// and with compressed halos `fp32_val_acc` on evaluated epochs and `precision_guard` on the epoch
/// after which the precision guard switched the run to fp32; `a2a_bytes` and `recompute_a2a_bytes`
/// (the G x F grid's layout switches). 9: `bytes_intra_node` and `bytes_inter_node` (the byte
/// counts split by the nodes of the ranks, docs/layouts.md); `staleness_gap`, `stale_train_loss`
/// and `fresh_train_loss` on a guarded pipeline's evaluated epochs (the accuracy guard).
/// 10: `staleness_gap` is the gradients' difference as the optimizer scales each coordinate
/// (version 9's, unscaled, is now `raw_staleness_gap`).
inline constexpr int metrics_schema_version = 10;

/// Constant fields every record carries.
struct MetricsContext {
    std::int64_t planned_bytes = 0;  ///< the run's memory plan on the largest rank
    double planned_bytes_per_vertex = 0.0;
    std::int64_t baseline_rss_bytes = 0;  ///< resident memory before the data (largest rank)
    int split = 0;                        ///< the dataset split in use (--split-index)
    int threads = 0;                      ///< CPU threads per rank (rank 0; 0: not CPU)
    std::string overlap = "on";           ///< --overlap
    std::string features = "dense";       ///< "dense" or "sparse" (--sparse-features' choice)
    double features_density = 0.0;        ///< non-zeros / entries of the features, all ranks
    std::string halo_precision = "fp32";  ///< the run's (epochs without a guard's figure)
    std::string config{};  ///< the run configuration's JSON (config_to_json), on the first record
};

class MetricsWriter final : public FitHook {
public:
    /// Active only when `active` (rank 0) and `path` is not empty. Creates or truncates `path`
    /// (a Session has refused an existing file unless asked to replace it);
    /// with `resume_epoch` > 0 instead rewrites it once, atomically, with the records of epochs
    /// <= resume_epoch (records that do not parse — a line cut short by a crash — are dropped),
    /// then appends. Throws strata::Error if the file cannot be written. A record that cannot
    /// be written whole (a full disk) is cut off again (the file ends at the previous record)
    /// and the error names the file, the epoch and the system's reason.
    MetricsWriter(std::string path, bool active, std::int64_t resume_epoch, MetricsContext context);
    MetricsWriter(const MetricsWriter&) = delete;
    MetricsWriter& operator=(const MetricsWriter&) = delete;
    ~MetricsWriter() override;

    void end_epoch(const EpochStats& stats, FitState& state) override;
    /// Records kept from the existing file on resume.
    [[nodiscard]] std::int64_t kept() const { return kept_; }

private:
    std::string path_;
    MetricsContext context_;
    std::FILE* file_ = nullptr;
    std::int64_t kept_ = 0;
    long good_size_ = 0;  ///< bytes of whole records in the file
};

/// One metrics record (no newline); `first` (the file's first record) adds context.config.
[[nodiscard]] std::string metrics_record(const EpochStats& stats, const MetricsContext& context,
                                         bool first = false);

/// The records of a metrics file that parse as JSON objects with an integer "epoch", in file
/// order (a trailing partial line is skipped).
[[nodiscard]] std::vector<std::string> read_metrics_records(const std::string& path);

}  // namespace strata
