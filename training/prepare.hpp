// prepare: one rank's data and model, uploaded — the one path `strata train`, `strata predict`,
// the benches, the example and the front ends share: read (a graph file, a partition directory or
// a graph in memory), order the part's rows, normalise the features, build the model, choose how
// the features are stored, upload the model's graph operator and data. Then make_executor puts
// the run's executor over it (training/make_executor.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "datasets/graph_slice.hpp"
#include "layers/grid_aggregation.hpp"
#include "layers/layout_switch.hpp"
#include "layers/model_inputs.hpp"
#include "layers/model_zoo.hpp"
#include "layers/pipeline_slices.hpp"
#include "layers/sparse_features.hpp"
#include "src/comm/communicator.hpp"
#include "src/tensor/host_csr.hpp"
#include "training/run_config.hpp"

namespace strata {

/// Where the data comes from when the configuration names no file (config.data empty): a whole
/// graph in memory, owned by the caller, the same on every rank, alive during prepare() — a
/// GraphDataset, or a view of arrays the caller owns (the Python module's: no copy is made) —
/// or each rank's own rows (`slice`: per-rank slices, partition/slice_load.hpp; no rank holds
/// the whole graph).
struct DataInput {
    const GraphDataset* graph = nullptr;
    const GraphView* view = nullptr;  ///< read instead of `graph` when set
    /// This rank's rows, read instead of a whole graph when set; its vertex_offsets are set to
    /// every rank's by prepare (local_part_of_slices).
    GraphSlice* slice = nullptr;

    [[nodiscard]] bool empty() const {
        return graph == nullptr && view == nullptr && slice == nullptr;
    }
    /// The graph in memory (view, else graph as a view). Requires a whole graph (not a slice).
    [[nodiscard]] GraphView in_memory() const { return view != nullptr ? *view : graph->view(); }
};

/// What a checkpoint records as the dataset of a run: data_identity(config.data) for a file or
/// directory, the content id of a whole graph in memory, and for per-rank slices their sizes
/// (slices have no content id: no rank holds the whole graph). On rank 0 (any rank for a file).
[[nodiscard]] std::string dataset_identity(const std::string& data, const DataInput& input);

/// Builds a model of one's own instead of config.model (examples/custom_layer): from the
/// features' width and the number of classes.
using ModelBuilder = std::function<BuiltModel(index_t in_features, index_t num_classes)>;

struct PrepareOptions {
    /// Keep the part's row ids, labels and masks of the selected split (PartRows): what
    /// predictions are written and scored with. Training releases them with the rest.
    bool keep_rows = false;
    ModelBuilder build_model{};  ///< empty: build_model(config.model, ...)
};

/// The rows of this rank's part, in its local order (prepare's keep_rows).
struct PartRows {
    std::vector<global_id> ids;  ///< the original id of each owned row
    std::vector<index_t> labels;
    std::vector<std::uint8_t> train_mask;  ///< the selected split's
    std::vector<std::uint8_t> val_mask;
    std::vector<std::uint8_t> test_mask;
};

/// One rank's prepared run. The host copy of the part is released once uploaded.
struct Prepared {
    BuiltModel model;  ///< its graph rewritten to read sparse features when they are
    /// The layer pipeline: this rank alone (every rank holds the whole graph; rank 0 evaluates).
    std::unique_ptr<Communicator> self;
    /// The G x F grid (feature_slices > 1, docs/layouts.md): rank (g, f) loads part g of a
    /// G-way partition over its graph group {(., f)} and runs on row chunk f of it; the feature
    /// group {(g, .)} switches layouts. The feature groups are inside nodes where the ranks per
    /// node allow (layers/grid_placement.hpp; on one node r = g F + f). All null when
    /// feature_slices = 1. Declared before `inputs`, whose aggregation runs over the graph group.
    struct Grid {
        std::unique_ptr<Communicator> graph_group;    ///< G ranks, rank g
        std::unique_ptr<Communicator> feature_group;  ///< F ranks, rank f
        std::unique_ptr<LayoutSwitch> layout;
        std::unique_ptr<GridAggregation> aggregation;  ///< the executor's graph operator
    } grid;
    std::unique_ptr<ModelInputs> inputs;  ///< the model's operator and data in backend memory
    /// The layer pipeline with feature slices (S x F): the stage's aggregation over its F ranks
    /// (grid.feature_group: placed as the grid's, inside a node where the ranks per node allow;
    /// on one node consecutive ranks, rank = stage x F + f), over inputs' operator.
    std::unique_ptr<SlicedStageAggregation> stage_slices;
    /// S x F whose feature groups are not consecutive ranks (place_grid moved them into nodes):
    /// the job's ranks renumbered stage x F + f, the pipeline's world. Null: `comm` is.
    std::unique_ptr<Communicator> pipeline_world;
    /// S x F: the stage of each rank of `comm` (empty otherwise: rank / (ways x F)).
    std::vector<int> stage_of_rank;
    FeatureChoice features;
    std::vector<index_t> chunk_offsets;  ///< the layer pipeline: C + 1 row offsets
    std::optional<HostCsr> structure;    ///< the pipeline's W > 1 mirror lists are made from it
    std::vector<MemoryLine> lines;       ///< what the upload allocated
    index_t owned = 0;                   ///< rows of this rank (the grid: of its row chunk)
    /// Array bytes this rank read from config.data (load_local_part's PartReadOptions::bytes_read:
    /// the part file, or the graph file's slice); 0 for a graph in memory or a whole .h5 read by
    /// one rank outside the grid.
    std::int64_t bytes_read = 0;
    global_id vertices = 0;  ///< of the whole graph
    std::int64_t nnz = 0;    ///< entries of this rank's inner block
    std::int64_t num_classes = 0;
    int split = 0;
    /// Whether the features were row-normalized: config.row_normalize_features, except for a
    /// recipe's (row_normalize_by_recipe) on features with a negative value on some rank, which
    /// stay as stored (notes.features says so). The session records this in its configuration.
    bool row_normalized = false;
    /// What the run chose, for the report.
    struct Notes {
        std::string split;     ///< "split: 0 of 1 (train 140, val 500, test 1000 vertices)"
        std::string order;     ///< "local order: rcm (0.003 s on rank 0)"
        std::string features;  ///< "features: dense, ..."
        std::string grid;      ///< "layout: 2x2 grid ..." (feature_slices > 1), else empty
        /// Why the grid's feature groups are consecutive ranks, not inside nodes (place_grid's
        /// fallback), else empty.
        std::string grid_warning;
    } notes;
    std::optional<PartRows> rows;  ///< keep_rows only (the grid: the row chunk's)
};

/// Collective over `comm`. `config` must be resolved (resolve_recipe, resolve_layout) and valid.
/// Reads config.data, or `input.graph` when config.data is empty. Throws strata::Error on any
/// invalid input (the readers' messages), strata::OptionError for options the data cannot
/// serve (select_by = val_auc on a task that has not two classes; sparse_features = on with a
/// model that cannot read them; feature_slices > 1 with a model the grid cannot slice).
[[nodiscard]] Prepared prepare(const RunConfig& config, Backend& backend, Communicator& comm,
                               const DataInput& input = {}, const PrepareOptions& options = {});

}  // namespace strata
