// predict: prepare, upload the best weights, evaluate, download.
#include "training/predictor.hpp"

#include "datasets/content_hash.hpp"
#include "src/base/error.hpp"
#include "training/make_executor.hpp"

namespace strata {

RunConfig prediction_config(const Checkpoint& checkpoint, const std::string& data, int split_index,
                            const RuntimeOptions& runtime) {
    // The trained run's own configuration when the checkpoint has one (format 5): its local
    // order and feature storage too, so that predictions equal its evaluation at the same K.
    RunConfig config;
    if (!checkpoint.config.empty()) {
        config = config_from_json(checkpoint.config, "the checkpoint's configuration");
    }
    const RunConfig defaults;
    config.parallel = defaults.parallel;  // evaluation is full-graph whatever layout trained it
    config.stages = defaults.stages;
    config.ways = defaults.ways;
    config.chunks = defaults.chunks;
    config.feature_slices = defaults.feature_slices;  // 1D at any K: the weights carry no layout
    config.profile = false;
    config.plan.clear();
    config.machine.clear();
    config.metrics.clear();
    config.checkpoint_dir.clear();
    config.resume = false;
    config.model = checkpoint.model;
    config.seed = checkpoint.model.seed;
    config.row_normalize_features = checkpoint.row_normalize;
    config.partition_method = checkpoint.partition_method;
    config.select_by = to_string(checkpoint.selection);
    config.data = data;
    config.split_index = split_index;
    config.device = runtime.device;
    config.comm = runtime.comm;
    config.threads = runtime.threads;
    return resolve_layout(resolve_recipe(config), 1);
}

std::vector<std::int64_t> argmax_rows(const HostMatrix& m) {
    std::vector<std::int64_t> best(static_cast<std::size_t>(m.rows), 0);
    for (index_t r = 0; r < m.rows; ++r) {
        const float* row = m.row(r);
        index_t b = 0;
        for (index_t c = 1; c < m.cols; ++c) {
            if (row[c] > row[b]) {
                b = c;
            }
        }
        best[static_cast<std::size_t>(r)] = b;
    }
    return best;
}

Predictions predict(const Checkpoint& checkpoint, const std::string& checkpoint_path,
                    const RunConfig& config, Runtime& runtime, bool embeddings,
                    const DataInput& input) {
    Backend& backend = *runtime.backend;
    Communicator& comm = *runtime.comm;
    Prepared prepared = prepare(config, backend, comm, input, PrepareOptions{.keep_rows = true});
    ModelGraph& graph = prepared.model.graph;
    const std::string embedding = embeddings ? prepared.model.embedding_tensor : "";
    STRATA_CHECK_OPTION(!embeddings || !embedding.empty(), "embeddings", "true", "the model (",
                        describe(config.model), ") has no hidden layer");
    ModelParameters parameters(backend, graph, config.seed);
    if (comm.rank() == 0) {
        const CheckpointIdentity current{
            .model = model_identity(config.model, *config.row_normalize_features),
            .parameters = parameters.summary(),
            .dataset = dataset_identity(config.data, input),
            .partition = {},  // any K and split may predict
            .training = {}};
        check_identity(checkpoint, current, IdentityCheck::model_and_dataset, checkpoint_path);
    }
    parameters.upload(checkpoint.best_params);
    ExecutorRequest request{.training = false};
    if (embeddings) {
        request.evaluation_outputs.push_back(embedding);
    }
    MadeExecutor made = make_executor(config, prepared, backend, comm, parameters, request);
    auto& executor = dynamic_cast<FullGraphExecutor&>(*made.executor);
    (void)executor.evaluate();

    Predictions out;
    const index_t rows = prepared.owned;
    out.classes = graph.tensor(graph.output()).cols;
    out.logits = HostMatrix(rows, out.classes);
    backend.download(out.logits.values.data(),
                     executor.evaluation_output(graph.tensor(graph.output()).name).data,
                     out.logits.values.size() * sizeof(float));
    if (embeddings) {
        const ConstMatrixView h = executor.evaluation_output(embedding);
        out.embeddings = HostMatrix(h.rows, h.cols);
        backend.download(out.embeddings->values.data(), h.data, h.size() * sizeof(float));
    }
    out.predicted = argmax_rows(out.logits);
    const PartRows& part = *prepared.rows;
    const std::array<const std::vector<std::uint8_t>*, 3> masks{&part.train_mask, &part.val_mask,
                                                                &part.test_mask};
    for (std::size_t i = 0; i < out.predicted.size(); ++i) {
        const index_t label = part.labels[i];
        for (std::size_t m = 0; m < masks.size(); ++m) {
            if ((*masks[m])[i] != 0 && label >= 0) {
                out.counts[2 * m] += out.predicted[i] == label ? 1 : 0;
                out.counts[2 * m + 1] += 1;
            }
        }
    }
    comm.allreduce_sum(out.counts);
    out.ids = part.ids;
    out.split = prepared.split;
    out.vertices = prepared.vertices;
    return out;
}

}  // namespace strata
