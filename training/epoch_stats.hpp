// EpochStats: what one epoch of training produced, global over ranks (identical on every rank),
// the record the training loop's hooks, the metrics file and checkpoints share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "src/nn/executor.hpp"

namespace strata {

struct EpochStats {
    std::int64_t epoch = 0;
    double loss = 0.0;       ///< mean cross-entropy over training vertices (training forward)
    bool evaluated = false;  ///< whether the fields below up to val_loss were measured
    double train_acc = 0.0;
    double val_acc = 0.0;
    double test_acc = 0.0;
    double val_loss = 0.0;
    double eval_train_loss = 0.0;  ///< the evaluation's loss over the training set (no dropout)
    bool binary = false;           ///< two classes: val_auc/test_auc were measured (when evaluated)
    double val_auc = 0.0;          ///< ROC-AUC of the class-1 score (NaN if a set lacks a class)
    double test_auc = 0.0;
    // The time of the slowest rank (the longest epoch), in parts that add up:
    // epoch_s = compute_s + wait_s + eval_s, and train_s = compute_s + wait_s.
    double epoch_s = 0.0;         ///< training step + evaluation
    double train_s = 0.0;         ///< training step (forward, backward, update)
    double compute_s = 0.0;       ///< the training step's time not blocked on communication
    double wait_s = 0.0;          ///< the training step's time blocked on communication (exposed)
    double eval_s = 0.0;          ///< evaluation forward pass and metrics (its waits included)
    double max_wait_s = 0.0;      ///< the whole epoch's blocked time, max over ranks (not a part)
    std::int64_t halo_bytes = 0;  ///< halo payload (forward + backward), all ranks
    std::int64_t recompute_halo_bytes = 0;  ///< halo payload re-sent to recompute, all ranks
    /// The feature grid's layout switches (all-to-all inside feature groups; forward +
    /// backward), all ranks; 0 in 1D.
    std::int64_t a2a_bytes = 0;
    std::int64_t recompute_a2a_bytes = 0;  ///< layout switches of recomputations, all ranks
    std::int64_t allreduce_bytes = 0;      ///< all-reduce payload, summed over ranks
    /// The five byte counts above (halo, recompute halo, a2a, recompute a2a, all-reduce), and
    /// the layer pipeline's stage_bytes and way_bytes, split by where they went, summed over
    /// ranks: to a rank on another node, or within the node (an all-reduce counts as inter-node
    /// when its ranks span several nodes). intra + inter = their sum. Communicator::node_of;
    /// docs/layouts.md, "Topology".
    std::int64_t bytes_intra_node = 0;
    std::int64_t bytes_inter_node = 0;
    std::int64_t peak_rss_bytes = 0;             ///< max over ranks
    std::optional<PipelineEpochStats> pipeline;  ///< layer-pipeline runs only
    /// --profile: where the slowest rank's training step went (the same rank as the parts).
    std::optional<PhaseTimes> phases;
    /// Set by an accuracy guard when it acted after this epoch (training/accuracy_guard.hpp):
    /// "rollback: <reason>; restored epoch N; chunks 8 -> 4, snapshot period 23 -> 11".
    std::string guard;
    /// The halo precision in force while this epoch trained ("fp32", "bf16", "int8"; set by the
    /// precision guard, training/precision_guard.hpp; empty: fp32 and no guard).
    std::string halo_precision;
    /// Compressed halos, evaluated epochs: the validation accuracy of the same weights with fp32
    /// halos (the precision guard's comparison).
    std::optional<double> fp32_val_acc;
    /// Set by the precision guard on the epoch after which it switched the run to fp32 halos.
    std::string precision_guard;
    /// Layer pipeline with the accuracy guard, evaluated epochs while the run is stale: the
    /// next training step run on the evaluated weights from its stale rows and from fresh ones
    /// (the same dropout masks), without an update (StalenessControl::staleness_losses) — the two
    /// losses, and the staleness gap ||s ⊙ (g_stale - g_fresh)|| / ||s ⊙ g_fresh|| of the two
    /// gradients scaled as the optimizer's next step scales them, which the guard judges
    /// (training/accuracy_guard.hpp), and unscaled (raw: s = 1).
    std::optional<double> stale_train_loss;
    std::optional<double> fresh_train_loss;
    std::optional<double> staleness_gap;
    std::optional<double> raw_staleness_gap;
};

/// Which evaluated epoch is "best" (the run option select_by): the highest validation accuracy,
/// the lowest validation loss, or (two-class tasks) the highest validation ROC-AUC.
enum class Selection { val_acc, val_loss, val_auc };

/// "val_acc", "val_loss" or "val_auc".
[[nodiscard]] const char* to_string(Selection selection);
/// Throws strata::OptionError ("select_by = 'x': ...") unless `text` names a Selection.
[[nodiscard]] Selection parse_selection(const std::string& text);
/// The figure `selection` judges an evaluated epoch by (val_acc, val_loss or val_auc).
[[nodiscard]] double selection_figure(Selection selection, const EpochStats& stats);
/// Whether a larger figure is better (accuracy, ROC-AUC) or a smaller one (loss).
[[nodiscard]] bool higher_is_better(Selection selection);
/// Whether `candidate` beats `best` (strictly: the first of equal epochs stays best). A NaN
/// figure (an ROC-AUC of a set lacking a class) beats nothing, and anything finite beats it.
[[nodiscard]] bool better(Selection selection, const EpochStats& candidate, const EpochStats& best);

}  // namespace strata
