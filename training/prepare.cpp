// prepare: load, order, normalise, build, upload.
#include "training/prepare.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <span>

#include "datasets/content_hash.hpp"
#include "datasets/normalize.hpp"
#include "layers/grid_placement.hpp"
#include "layers/sparse_input_graph.hpp"
#include "partition/chunking.hpp"
#include "partition/distributed_load.hpp"
#include "partition/in_memory_load.hpp"
#include "partition/local_order.hpp"
#include "partition/slice_load.hpp"
#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/comm/make_communicator.hpp"
#include "training/checkpoint.hpp"

#include <malloc.h>

namespace strata {
namespace {

/// config.data, or "the graph in memory" when it is empty.
std::string source_name(const RunConfig& config) {
    return config.data.empty() ? std::string("the graph in memory") : config.data;
}

/// Columns `block` of `m`.
HostMatrix columns_of(const HostMatrix& m, ColumnBlock block) {
    HostMatrix out;
    out.rows = m.rows;
    out.cols = static_cast<index_t>(block.count);
    out.values.resize(static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(block.count));
    for (std::int64_t i = 0; i < m.rows; ++i) {
        const float* row = m.row(i) + block.first;
        std::copy(row, row + block.count, out.values.begin() + i * block.count);
    }
    return out;
}

/// The grid's input features, loaded in layout C (all n_g rows, column slice f), switched once to
/// layout R (row chunk f, all w columns), what the executor's first op reads whatever it is
/// (docs/layouts.md, "Loading"). The switch is the feature group's, counted nowhere (it is not a
/// training exchange); the C block is freed on return.
HostMatrix features_to_rows(Backend& backend, Communicator& feature_group, HostMatrix columns) {
    std::array<std::int64_t, 1> width{columns.cols};
    feature_group.allreduce_sum(std::span<std::int64_t>(width));
    LayoutSwitch layout(backend, feature_group, static_cast<index_t>(columns.rows));
    const RowRange chunk = layout.chunk();
    const auto w = static_cast<index_t>(width[0]);
    HostMatrix rows;
    rows.rows = chunk.count;
    rows.cols = w;
    rows.values.resize(static_cast<std::size_t>(chunk.count) * static_cast<std::size_t>(w));
    std::vector<float> staging(layout.staging_floats(w));
    layout.to_rows(ConstMatrixView{columns.values.data(), static_cast<index_t>(columns.rows),
                                   static_cast<index_t>(columns.cols)},
                   MatrixView{rows.values.data(), chunk.count, w}, staging,
                   ExchangePurpose::forward);
    return rows;
}

/// This rank's part, and for the layer pipeline its chunk offsets (and W > 1 its structure).
/// `slice`: the feature columns kept (the grid's layout C; all by default).
LocalPart load(const RunConfig& config, Communicator& comm, const DataInput& input,
               Prepared& prepared, FeatureSlice slice) {
    const std::string what = config.data.empty() && input.slice != nullptr
                                 ? std::string("the slices in memory")
                                 : source_name(config);
    STRATA_CHECK(!config.data.empty() || !input.empty(),
                 "run configuration: data is empty and no graph was given in memory");
    // A grid's graph group loads the parts; slices are cut over every rank of the run.
    STRATA_CHECK_OPTION(
        !config.data.empty() || input.slice == nullptr || config.feature_slices == 1,
        "feature_slices", config.feature_slices,
        "needs a whole graph or a file, not per-rank slices");
    if (config.parallel == "pipeline") {
        STRATA_CHECK_OPTION(!config.data.empty() || input.slice == nullptr, "parallel",
                            "'pipeline'", "needs a whole graph or a file, not per-rank slices");
        const ChunkOptions chunk_options{.chunks = config.chunks, .seed = config.seed};
        ChunkedPart chunked =
            config.data.empty()
                ? chunked_part_in_memory(input.in_memory(), comm, chunk_options, config.split_index,
                                         what)
                : load_chunked_part(config.data, comm, chunk_options, config.split_index);
        prepared.chunk_offsets = std::move(chunked.chunk_offsets);
        if (config.ways > 1) {
            prepared.structure = chunked.part.graph.inner;
        }
        prepared.notes.order = "local order: none (the layer pipeline keeps its chunks' order)";
        return std::move(chunked.part);
    }
    const InMemoryPartitionOptions partition{.method = config.partition_method,
                                             .seed = config.seed};
    LocalPart part =
        !config.data.empty()
            ? load_local_part(config.data, comm, partition, config.split_index,
                              {.features = slice, .bytes_read = &prepared.bytes_read})
        : input.slice != nullptr
            ? local_part_of_slices(*input.slice, comm, partition, config.split_index, what)
            : local_part_in_memory(input.in_memory(), comm, partition, config.split_index, what);
    if (config.data.empty() && slice.count > 1) {  // a graph in memory: its block of columns
        part.features = columns_of(part.features, column_block(part.features.cols, slice));
    }
    const Stopwatch ordering;
    apply_local_order(part, *parse_local_order(config.local_order));
    std::array<char, 96> text{};
    std::snprintf(text.data(), text.size(), "local order: %s (%.3f s on rank %d)",
                  config.local_order.c_str(), ordering.seconds(), comm.rank());
    prepared.notes.order = text.data();
    return part;
}

/// The part's rows `chunk` (all of them outside the grid).
PartRows rows_of(const LocalPart& part, RowRange chunk) {
    const auto first = static_cast<std::ptrdiff_t>(chunk.first);
    const auto end = static_cast<std::ptrdiff_t>(chunk.end());
    const auto copy = [&](const auto& values) {
        return std::vector<typename std::decay_t<decltype(values)>::value_type>(
            values.begin() + first, values.begin() + end);
    };
    return PartRows{.ids = copy(part.graph.owned_original),
                    .labels = copy(part.labels),
                    .train_mask = copy(part.split_of(part.train_mask)),
                    .val_mask = copy(part.split_of(part.val_mask)),
                    .test_mask = copy(part.split_of(part.test_mask))};
}

/// The grid's graph and feature groups, each feature group inside a node where the ranks per
/// node allow (place_grid; on one node rank r = g F + f). The fallback's reason in `warning`.
void split_grid(const RunConfig& config, Communicator& comm, Prepared::Grid& grid,
                std::string& warning) {
    std::vector<int> nodes(static_cast<std::size_t>(comm.size()));
    for (int r = 0; r < comm.size(); ++r) {
        nodes[static_cast<std::size_t>(r)] = comm.node_of(r);
    }
    GridPlacement placement = place_grid(nodes, config.feature_slices);
    const GridCoord me = placement.of_rank[static_cast<std::size_t>(comm.rank())];
    grid.graph_group = comm.split(me.f, me.g);
    grid.feature_group = comm.split(me.g, me.f);
    warning = std::move(placement.warning);
}

/// S x F (docs/pipeline.md): the grid's placement with stages for parts, so that a stage's
/// feature group sits inside a node where the ranks per node allow; on one node (or any layout
/// that place_grid maps consecutively) the consecutive map of before, on `comm` itself.
void split_stage_slices(const RunConfig& config, Communicator& comm, Prepared& prepared) {
    const int slices = config.feature_slices;
    std::vector<int> nodes(static_cast<std::size_t>(comm.size()));
    for (int r = 0; r < comm.size(); ++r) {
        nodes[static_cast<std::size_t>(r)] = comm.node_of(r);
    }
    GridPlacement placement = place_grid(nodes, slices);
    bool consecutive = true;
    for (int r = 0; r < comm.size(); ++r) {
        const GridCoord at = placement.of_rank[static_cast<std::size_t>(r)];
        consecutive = consecutive && at == GridCoord{r / slices, r % slices};
        prepared.stage_of_rank.push_back(at.g / config.ways);  // g = stage x W + way
    }
    const GridCoord me = placement.of_rank[static_cast<std::size_t>(comm.rank())];
    prepared.grid.feature_group = comm.split(me.g, me.f);
    if (!consecutive) {  // rank 0 stays (0, 0): place_grid fills rank 0's node first
        prepared.pipeline_world = comm.split(0, me.g * slices + me.f);
    }
    prepared.notes.grid_warning = std::move(placement.warning);
}

/// select_by = val_auc needs validation rows of both classes (else ROC-AUC is undefined, NaN
/// at every evaluation): counted over the parts of `comm`'s ranks (collective over it).
void check_both_classes(const LocalPart& part, Communicator& comm, const RunConfig& config) {
    std::array<std::int64_t, 2> count{};
    const std::span<const std::uint8_t> val = part.split_of(part.val_mask);
    for (std::size_t i = 0; i < val.size(); ++i) {
        const index_t label = part.labels[i];
        if (val[i] != 0 && (label == 0 || label == 1)) {
            ++count[static_cast<std::size_t>(label)];
        }
    }
    comm.allreduce_sum(count);
    STRATA_CHECK_OPTION(count[0] > 0 && count[1] > 0, "select_by", "'val_auc'",
                        "needs validation vertices of both classes, but split ", part.split, " of ",
                        source_name(config), " has ", count[0], " of class 0 and ", count[1],
                        " of class 1: ROC-AUC is undefined (use val_acc or val_loss)");
}

/// Whether some rank's features hold a negative value (collective over `comm`).
bool any_negative(const HostMatrix& features, Communicator& comm) {
    std::array<std::int64_t, 1> negative{std::any_of(features.values.begin(), features.values.end(),
                                                     [](float v) { return v < 0.0f; })
                                             ? 1
                                             : 0};
    comm.allreduce_max(negative);
    return negative[0] != 0;
}

}  // namespace

std::string dataset_identity(const std::string& data, const DataInput& input) {
    if (!data.empty()) {
        return data_identity(data);
    }
    if (input.slice != nullptr) {
        const GraphSlice& s = *input.slice;
        return "slices in memory: " + std::to_string(s.num_vertices) + " vertices, " +
               std::to_string(s.num_edges) + " edges, " + std::to_string(s.features.cols) +
               " features, " + std::to_string(s.num_classes) + " classes";
    }
    return graph_content_id(input.in_memory());
}

Prepared prepare(const RunConfig& config, Backend& backend, Communicator& comm,
                 const DataInput& input, const PrepareOptions& options) {
    Prepared prepared;
    const bool pipeline = config.parallel == "pipeline";
    if (pipeline) {
        prepared.self = make_communicator(backend, CommKind::mpi, MPI_COMM_SELF);
    }
    const bool sliced = config.feature_slices > 1;
    const bool grid = sliced && !pipeline;
    if (grid) {
        split_grid(config, comm, prepared.grid, prepared.notes.grid_warning);
    } else if (sliced) {  // S x F: a stage's F ranks inside a node (docs/pipeline.md)
        split_stage_slices(config, comm, prepared);
    }
    Communicator& part_comm = grid ? *prepared.grid.graph_group : comm;
    {
        const FeatureSlice slice =
            grid ? FeatureSlice{prepared.grid.feature_group->rank(), config.feature_slices}
                 : FeatureSlice{};
        LocalPart part = load(config, part_comm, input, prepared, slice);
        if (grid) {  // layout C as loaded, to the executor's layout R
            part.features =
                features_to_rows(backend, *prepared.grid.feature_group, std::move(part.features));
        }
        prepared.nnz = part.graph.inner.nnz();
        prepared.split = part.split;
        prepared.num_classes = part.num_classes;
        prepared.owned = part.graph.num_owned;
        prepared.vertices = part.graph.num_global_vertices;
        STRATA_CHECK_OPTION(config.select_by != "val_auc" || part.num_classes == 2, "select_by",
                            "'val_auc'", "needs a two-class task, but ", source_name(config),
                            " has ", part.num_classes, " classes (use val_acc or val_loss)");
        if (config.select_by == "val_auc") {  // over the ranks that split the vertices
            check_both_classes(part, pipeline ? *prepared.self : part_comm, config);
        }
        prepared.notes.split = "split: " + std::to_string(part.split) + " of " +
                               std::to_string(part.num_splits) + " (train " +
                               std::to_string(part.global_train) + ", val " +
                               std::to_string(part.global_val) + ", test " +
                               std::to_string(part.global_test) + " vertices)";
        std::string normalization;
        prepared.row_normalized = config.row_normalize_features.value_or(false);
        if (prepared.row_normalized && config.row_normalize_by_recipe &&
            any_negative(part.features, comm)) {
            prepared.row_normalized = false;
            normalization =
                "; as stored, not row-normalized: the recipe row-normalizes "
                "non-negative features, and these have negative values "
                "(--row-normalize-features divides each row by its L1 norm)";
        }
        if (prepared.row_normalized) {
            row_normalize_features(part.features);
        }
        const auto classes = static_cast<index_t>(part.num_classes);
        prepared.model = options.build_model
                             ? options.build_model(part.features.cols, classes)
                             : build_model(config.model, part.features.cols, classes);
        if (sliced) {
            const std::string blocker = grid_blocker(prepared.model.graph, config.feature_slices);
            STRATA_CHECK_OPTION(blocker.empty(), "feature_slices", config.feature_slices, "model ",
                                config.model.model, ": ", blocker);
        }
        prepared.features =
            choose_feature_storage(*parse_sparse_features(config.sparse_features), part.features,
                                   pipeline ? "the layer pipeline reads dense features"
                                   : grid   ? "the feature grid reads dense features"
                                            : sparse_input_blocker(prepared.model.graph),
                                   comm);
        if (prepared.features.storage == FeatureStorage::sparse) {
            prepared.model.graph = with_sparse_input(prepared.model.graph);
        }
        prepared.notes.features =
            std::string("features: ") +
            (prepared.features.storage == FeatureStorage::sparse
                 ? "sparse (CSR; the first linear is an SpMM, input dropout on the non-zeros)"
                 : "dense") +
            ", " + prepared.features.reason + normalization;
        prepared.inputs = std::make_unique<ModelInputs>(
            backend, pipeline ? *prepared.self : part_comm, part, prepared.model.graph,
            AggregationOptions{.overlap = config.overlap,
                               .precision = *parse_halo_precision(config.halo_precision),
                               .rounding = *parse_halo_rounding(config.halo_rounding),
                               .seed = config.seed},
            prepared.features.storage);
        prepared.lines = prepared.inputs->lines;
        RowRange chunk{0, part.graph.num_owned};
        if (sliced && pipeline) {
            prepared.stage_slices = std::make_unique<SlicedStageAggregation>(
                backend, *prepared.inputs->aggregation, *prepared.grid.feature_group,
                prepared.chunk_offsets);
            const std::string stages =
                std::to_string(comm.size() / (config.feature_slices * config.ways));
            const std::string slices = std::to_string(config.feature_slices);
            prepared.notes.grid =
                config.ways > 1
                    ? "layout: " + stages + " stages x " + std::to_string(config.ways) +
                          " ways x " + slices +
                          " feature slices (each way's chunks in row blocks, its aggregations on "
                          "column slices, the ways' mirror rows at the slice's width)"
                    : "layout: " + stages + " stages x " + slices +
                          " feature slices (each stage's chunks in row blocks, its "
                          "aggregations on column slices)";
            if (comm.num_nodes() > 1) {
                prepared.notes.grid += prepared.notes.grid_warning.empty()
                                           ? "; feature groups inside nodes, stages across " +
                                                 std::to_string(comm.num_nodes()) + " nodes"
                                           : std::string("; feature groups on consecutive ranks");
            }
        }
        if (grid) {
            Prepared::Grid& g = prepared.grid;
            g.layout =
                std::make_unique<LayoutSwitch>(backend, *g.feature_group, part.graph.num_owned);
            g.aggregation = std::make_unique<GridAggregation>(*prepared.inputs->aggregation,
                                                              *g.layout, config.column_blocks);
            chunk = g.layout->chunk();
            prepared.owned = chunk.count;
            const std::string parts = std::to_string(g.graph_group->size());
            const std::string slices = std::to_string(config.feature_slices);
            prepared.notes.grid =
                "layout: " + parts + "x" + slices + " grid (" + parts + " graph parts x " + slices +
                " feature slices; aggregations on column slices" +
                (config.column_blocks > 1
                     ? " in " + std::to_string(config.column_blocks) + " column blocks"
                     : std::string()) +
                ", dense ops on row chunks)";
            if (comm.num_nodes() > 1) {
                prepared.notes.grid += prepared.notes.grid_warning.empty()
                                           ? "; feature groups inside nodes, graph groups across " +
                                                 std::to_string(comm.num_nodes()) + " nodes"
                                           : std::string("; feature groups on consecutive ranks");
            }
        }
        if (options.keep_rows) {
            prepared.rows = rows_of(part, chunk);
        }
    }
    (void)malloc_trim(0);  // the part's host memory back to the system before the run allocates
    return prepared;
}

}  // namespace strata
