// RunConfig: everything that defines a training run, as one plain struct with a JSON form —
// what `strata train` builds from its flags (or reads with --config FILE), what a Session runs,
// what checkpoints and the first metrics record store. Field names read as options ("ways",
// "select_by"), not as flags; every check names the option and its value
// ("ways = 0: must be at least 1", strata::OptionError). docs/training.md lists every option.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "layers/model_spec.hpp"

namespace strata {

struct RunConfig {
    // --- The data
    std::string data;  ///< graph .h5 or partition directory (empty: the session's in-memory graph)
    int split_index = 0;  ///< which of the dataset's splits
    /// How the ranks partition a .h5 (K > 1): auto (ptscotch; metis under a plan, what the
    /// planner measured) | ptscotch | metis | random | block.
    std::string partition_method = "auto";
    std::string local_order = "rcm";       ///< vertex order inside a part: none|rcm|metis
    std::string sparse_features = "auto";  ///< input features as CSR: auto|on|off
    /// Divide each feature row by its L1 norm (datasets/normalize.hpp); unset: the recipe's.
    std::optional<bool> row_normalize_features;
    /// Set by resolve_recipe when row_normalize_features is the recipe's, not the user's (not
    /// an option: never stored). The recipes row-normalize non-negative features only, so
    /// prepare then keeps features with a negative value as stored (prepare.hpp).
    bool row_normalize_by_recipe = false;

    // --- The model (model.seed is the run's seed)
    ModelSpec model;

    // --- Training (unset optionals take the model's recipe: resolve_recipe)
    std::optional<int> epochs;
    std::optional<float> lr;
    std::string weight_decay_mode = "l2";  ///< l2 (PyTorch Adam's weight_decay) | decoupled (AdamW)
    std::uint64_t seed = 0;                ///< initialization, dropout, partitioning, chunk order
    int eval_every = 1;                    ///< evaluate every N epochs (and at the last)
    std::optional<std::string> select_by;  ///< best epoch by val_acc | val_loss | val_auc
    int early_stop = 0;           ///< stop when val loss exceeds the mean of the last N evaluations
    std::optional<int> patience;  ///< stop after N evaluations without a better select_by figure

    // --- The layout
    std::string parallel = "graph";  ///< graph | pipeline (layer pipeline, docs/pipeline.md)
    std::string recompute = "none";  ///< none | aggregation | all (docs/training.md)
    bool overlap = true;             ///< progress the halo exchange during the inner SpMM
    /// What halo rows cross the wire as: fp32 | bf16 | int8 (src/comm/halo_packing.hpp; graph
    /// parallelism on device = cpu). Not fp32: the precision guard watches it (guard = true).
    std::string halo_precision = "fp32";
    /// How values round to halo_precision: nearest | stochastic (unbiased, keyed like dropout
    /// by seed, epoch, node, vertex and column; graph parallelism only).
    std::string halo_rounding = "nearest";
    /// Precision guard: the validation-accuracy gap (a fraction: 0.02 is two points) between the
    /// fp32-halo and the compressed evaluation of the same weights that, at two evaluations in a
    /// row, switches the run to fp32 halos for good.
    double precision_margin = 0.02;
    bool profile = false;         ///< time the training step's phases (graph parallelism)
    int stages = 0;               ///< pipeline stages S (0: ranks / ways)
    int ways = 1;                 ///< pipeline ranks per stage W (the W x S hybrid)
    int chunks = 0;               ///< pipeline chunks C (0: the partition's chunk map, else 4 S W)
    bool chunk_shuffle = true;    ///< pipeline: a new chunk order every epoch (GNNPipe T1)
    bool grad_zero_scale = true;  ///< pipeline: GNNPipe T2
    int snapshot_period = 23;     ///< pipeline: GNNPipe T3 (0: last epoch's rows)
    bool guard = true;      ///< pipeline: the accuracy guard; halo_precision != fp32: its guard
    int guard_window = 10;  ///< pipeline guard: epochs a trigger streak must span
    /// Pipeline guard: the staleness gap it tolerates, ||s (g_stale - g_fresh)|| / ||s g_fresh||
    /// of the next step's gradients, s as the optimizer's step scales each coordinate
    /// (training/accuracy_guard.hpp).
    double guard_bound = 1.0;
    /// The G x F grid (docs/layouts.md): F column slices per graph part, G = ranks / F parts
    /// (1: the graph-parallel layout of every earlier run).
    int feature_slices = 1;
    /// The grid's aggregation in B column blocks of every slice, one after the other: its two
    /// layout-C buffers / B, B x the switch and halo messages, the same bytes and bits
    /// (docs/layouts.md, "Memory"). Graph parallelism with feature_slices > 1 only.
    int column_blocks = 1;
    /// "" (none), "auto" (plan this run) or a `strata plan --json` file: resolved into the
    /// layout fields by planner::resolve_plan before a Session runs the config.
    std::string plan;
    std::string machine;  ///< plan = auto: the machine model file ("": the default places)

    // --- Devices and communication
    std::string device = "cpu";   ///< cpu | cuda
    std::string comm = "auto";    ///< auto | mpi | nccl
    int threads = 0;              ///< CPU threads per rank (0: what the rank may use)
    double comm_timeout = 300.0;  ///< seconds one wait for another rank may take (0: forever)

    // --- Outputs
    std::string metrics;     ///< JSONL metrics file ("": none)
    bool overwrite = false;  ///< replace an existing metrics file (else refused, unless resume)
    /// Chrome trace of the traced epochs (training/trace_file.hpp; "": none); an existing file
    /// is replaced only with overwrite.
    std::string trace;
    std::string trace_epochs;    ///< "N" or "N:M" ("": the second epoch, the first of one)
    std::string checkpoint_dir;  ///< "": no checkpoints
    int checkpoint_every = 10;   ///< epochs between checkpoints (0: only at the end and on signals)
    bool resume = false;         ///< continue from the newest valid checkpoint of checkpoint_dir
};

/// Every option's name (the JSON keys, in RunConfig order; "model" is the ModelSpec object).
[[nodiscard]] const std::vector<std::string>& run_options();

/// The JSON object of `config`: every option; unset recipe options are null.
[[nodiscard]] std::string config_to_json(const RunConfig& config);
/// Parses a JSON object; absent keys keep their defaults, null recipe options stay unset. Throws
/// strata::Error "<what>: ..." for text that is not a JSON object and strata::OptionError for an
/// unknown key or a value of the wrong type ("<what>: ways = \"two\": must be an integer").
[[nodiscard]] RunConfig config_from_json(const std::string& text, const std::string& what);

/// to.<key> = from.<key> for the option called `key` ("model": the whole ModelSpec). Throws
/// strata::Error for an unknown key.
void copy_option(const std::string& key, const RunConfig& from, RunConfig& to);

/// The model's recipe (layers/model_zoo.hpp) for every unset recipe option (epochs, lr,
/// select_by, patience, row_normalize_features: then row_normalize_by_recipe), and model.seed =
/// seed.
[[nodiscard]] RunConfig resolve_recipe(RunConfig config);

/// Checks every option's value and the combinations that cannot work, without the data or the
/// ranks: ranges ("eval_every = 0: must be at least 1"), names ("parallel = 'pipe': expected graph
/// or pipeline"), options of the layer pipeline without it ("ways = 2: needs parallel =
/// pipeline"), profile with the pipeline, feature_slices > 1 with the pipeline, CUDA or a plan,
/// resume without checkpoint_dir, a plan beside the layout it chooses, the model
/// (validate(ModelSpec)). Throws strata::OptionError.
void validate(const RunConfig& config);

/// The defaults that depend on the ranks and the data: partition_method auto = ptscotch; the
/// layer pipeline's stages = ranks / ways, chunks = the partition directory's chunk map or
/// 4 x stages x ways, then checks stages x ways = ranks and chunks a multiple of ways; checks
/// that feature_slices divides the ranks. Throws strata::OptionError.
[[nodiscard]] RunConfig resolve_layout(RunConfig config, int ranks);

/// `config` without what only one invocation of it chooses — the outputs (metrics, overwrite,
/// trace, trace_epochs, checkpoint_dir, checkpoint_every, resume), the runtime (device, comm,
/// threads, comm_timeout), profile, a resolved plan's plan and machine — set to their defaults: the
/// run as checkpoints store it, the same for a run stopped and resumed as for the uninterrupted
/// one.
[[nodiscard]] RunConfig run_definition(RunConfig config);

/// The training trajectory's identity for checkpoints: the options besides the model that change
/// the results ("adam lr 0.01, seed 1, ..."; the layer pipeline's settings appended). A resumed
/// run must have the same one. recompute, overlap and the outputs are not part of it.
[[nodiscard]] std::string training_identity(const RunConfig& config);

}  // namespace strata
