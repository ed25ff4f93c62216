// Checkpoints of a training run (docs/checkpoints.md): the last state (weights, optimizer,
// epoch, history: what --resume needs) and the best weights so far (what `strata predict`
// serves), plus the identity (model, dataset, partition, training options) a resumed run or
// predict must match, and the run configuration. One HDF5 file per checkpoint, written
// atomically; a CheckpointDir keeps the newest ones and falls back past a corrupt one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "layers/model_spec.hpp"
#include "src/comm/communicator.hpp"
#include "src/nn/pipeline_history.hpp"
#include "training/fit.hpp"
#include "training/guard_state.hpp"

namespace strata {

/// Root attribute strata_format_version of a checkpoint file (strata_format = "checkpoint").
/// 1: last weights only (earlier strata; refused with a message saying what to do);
/// 2: last state + best weights + evaluation history, GCN options (still read);
/// 3: the model as a ModelSpec (JSON), any model of the zoo (still read);
/// 4: an optional /pipeline section (layer-pipeline runs: every rank's history, the guard), float
///    encoded (still read);
/// 5: the /pipeline section typed (settings as integers, each history tensor a matrix, the
///    guard's counters as integers and its best-tracker state), the best epoch typed with its
///    ROC-AUC, and the run configuration (root attribute `config`).
inline constexpr std::int64_t checkpoint_format_version = 5;

/// What a checkpoint belongs to. Every field is an exact string; check_identity names the
/// first one that differs.
struct CheckpointIdentity {
    std::string model;       ///< model_identity(): "gcn, 2 layers, hidden 16, ..."
    std::string parameters;  ///< ModelParameters::summary(): "gcn0.linear.weight 1433x16, ..."
    std::string dataset;     ///< data_identity(): "content64:..." (or "crc32:..." of an old file)
    std::string partition;   ///< partition_identity(): how the vertices were split over ranks
    std::string training;    ///< options that change the trajectory (optimizer, lr, seed, ...)
};

/// Which identity fields must agree: a resumed run checks all of them; `strata predict`
/// only the model, its parameters and the dataset (it may run on another number of ranks).
enum class IdentityCheck { all, model_and_dataset };

/// The whole state of a run after `epoch` completed epochs. Dropout masks are a pure function
/// of (seed, epoch, layer, vertex), so there is no other random state to save.
struct Checkpoint {
    CheckpointIdentity identity;
    /// How to rebuild the model and its input (`strata predict` needs no model flags):
    /// the model (model.seed = the run's --seed), --row-normalize-features, and the
    /// in-memory partitioning of a .h5 --data (method; its seed is model.seed).
    ModelSpec model;
    bool row_normalize = false;
    std::string partition_method = "metis";
    std::string dataset_path;  ///< informational only (paths differ between machines)
    /// The run configuration as JSON text (format 5, written by the training session); empty
    /// when read from an older file.
    std::string config;
    std::int64_t epoch = 0;                    ///< completed epochs (>= 1)
    bool early_stopped = false;                ///< ended by early stopping: nothing left to resume
    std::vector<float> params;                 ///< the last epoch's weights (ModelParameters order)
    std::vector<float> optimizer_state;        ///< Optimizer::state()
    Selection selection = Selection::val_acc;  ///< what "best" means (--select-by)
    std::vector<float> best_params;            ///< weights of the best evaluated epoch
    /// The best evaluated epoch: epoch, loss, the evaluation's accuracies and losses and
    /// ROC-AUC are stored (timings and byte counts are not; formats 2 to 4 kept no ROC-AUC and
    /// no exact training loss: read as 0).
    std::optional<EpochStats> best;
    std::vector<EvalRecord> history;  ///< every evaluated epoch (early stopping reads it)
    /// Layer-pipeline runs (/pipeline): PipelineExecutor::history() of every rank, in rank
    /// order (they differ per rank); empty for graph parallelism. After broadcast_checkpoint a
    /// rank other than the root holds only its own entry (the others default).
    std::vector<PipelineHistory> pipeline_history{};
    std::optional<GuardState> guard;  ///< the accuracy guard's state, when it is on
    /// "fp32" once the precision guard switched a compressed-halo run to fp32 halos (root
    /// attribute `halo_precision_switched`, optional in format 5); empty otherwise and in files
    /// written before it existed: the run's own halo_precision.
    std::string halo_precision_switched;
};

/// describe(model) plus ", row-normalized features" when the input rows were normalized.
[[nodiscard]] std::string model_identity(const ModelSpec& model, bool row_normalize);

/// Identity of `--data`: for a graph file, source_identity(): its stored content id
/// ("content64:...", format version 3, no array read) or, for an older file, "crc32:..." of its
/// bytes; for a partition directory, the source identity recorded in its partition.json (so a
/// checkpoint trained on a partition matches the .h5 it was cut from), or "partition <id>"
/// when none was recorded.
/// Throws strata::Error if the file or partition.json cannot be read.
[[nodiscard]] std::string data_identity(const std::string& data_path);

/// Identity of the split over ranks: "partition directory <partition_id>, K parts" or
/// "in memory, <method>, seed S, K parts" ("1 part" when K = 1, where method and seed do not
/// matter).
[[nodiscard]] std::string partition_identity(const std::string& data_path, int num_parts,
                                             const std::string& method, std::uint64_t seed);

/// The checksum stored beside every checkpoint array (its "checksum" attribute): FNV-1a 64 of
/// the array's bytes, as "fnv1a64:<16 hex digits>".
[[nodiscard]] std::string checkpoint_checksum(std::span<const std::byte> bytes);

/// Writes `checkpoint` to `path` under a temporary name and renames it into place (replacing
/// an existing file). Every array gets an FNV-1a 64 checksum. Throws strata::Error on I/O
/// failure (the temporary is removed).
void write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);

/// Reads `path` (format 2, 3, 4 or 5) and verifies its format, version, shapes and the
/// checksum of every array. A format-4 history comes back untyped
/// (PipelineHistory::format4_rows), a format-4 guard state as judged by validation accuracy
/// with its best-tracker state pending.
/// Throws strata::Error naming the file and the problem: not HDF5 / truncated, an older or
/// newer format version (with what to do), a missing or mistyped dataset or attribute, a
/// checksum mismatch.
[[nodiscard]] Checkpoint read_checkpoint(const std::filesystem::path& path);

/// Throws strata::Error "<what>: written for <field> '<stored>', but this run has '<current>'"
/// for the first field of `which` that differs. The partition of a graph-parallel checkpoint
/// is not checked (elastic resume: any number of ranks, any partition of the same data);
/// a layer-pipeline checkpoint must match it.
void check_identity(const Checkpoint& checkpoint, const CheckpointIdentity& current,
                    IdentityCheck which, const std::string& what);

/// Copies rank `root`'s checkpoint to every rank. Collective. Every field is copied except
/// pipeline_history: every rank r gets pipeline_history.size() entries of which only entry r is
/// filled (the root keeps all; entries of ranks >= comm.size() reach nobody else).
void broadcast_checkpoint(Checkpoint& checkpoint, Communicator& comm, int root);

/// A directory of checkpoints "ckpt-<epoch, 6+ digits>.h5" (one training run).
class CheckpointDir {
public:
    /// Nothing is created until save().
    explicit CheckpointDir(std::filesystem::path dir) : dir_(std::move(dir)) {}

    [[nodiscard]] const std::filesystem::path& path() const { return dir_; }
    /// "<dir>/ckpt-000012.h5".
    [[nodiscard]] std::filesystem::path path_for(std::int64_t epoch) const;
    /// Checkpoint files present, ascending by epoch (empty if the directory does not exist).
    [[nodiscard]] std::vector<std::pair<std::int64_t, std::filesystem::path>> list() const;

    /// Creates the directory if needed, writes the checkpoint of `checkpoint.epoch` atomically
    /// and removes all but the `keep` newest checkpoint files. Returns the path written.
    std::filesystem::path save(const Checkpoint& checkpoint, int keep = 2);

    struct Loaded {
        Checkpoint checkpoint;
        std::filesystem::path path;
        /// Newer checkpoints that failed to read or verify: "ckpt-000012.h5: <reason>".
        std::vector<std::string> skipped;
    };
    /// The newest checkpoint that reads and verifies, skipping (and listing) corrupt or
    /// truncated newer ones; std::nullopt if there is no checkpoint file at all. Throws
    /// strata::Error listing every reason if checkpoint files exist but none is readable.
    [[nodiscard]] std::optional<Loaded> load_newest() const;

    /// After resuming from `epoch`: renames newer (unreadable) checkpoints to "<name>.corrupt"
    /// so that they are neither resumed nor counted by save(), and removes temporaries left
    /// by an interrupted save. Returns the renamed files.
    std::vector<std::filesystem::path> set_aside_newer_than(std::int64_t epoch) const;

private:
    std::filesystem::path dir_;
};

}  // namespace strata
