// `strata predict`: the predicted class and logits (optionally the last hidden layer) of every
// vertex from a checkpoint's best weights (the model whose accuracy `strata train` reported), in
// evaluation mode. One rank writes one HDF5 file in the original vertex order; K > 1 ranks write
// a directory of per-rank parts and an index (apps/commands/prediction_parts.hpp), nothing
// gathered on one rank (docs/checkpoints.md).
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/commands/cli_checks.hpp"
#include "apps/commands/command.hpp"
#include "apps/commands/device_options.hpp"
#include "apps/commands/prediction_parts.hpp"
#include "datasets/h5_file.hpp"
#include "datasets/normalize.hpp"
#include "layers/model_inputs.hpp"
#include "layers/model_zoo.hpp"
#include "partition/distributed_load.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/comm/broadcast_string.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "training/checkpoint.hpp"

namespace strata::app {
namespace {

struct PredictOptions {
    std::string data;
    std::string checkpoint;
    std::string out;
    bool embeddings = false;
    bool force = false;
    int split_index = 0;
    DeviceOptions device;
};

/// Format of the predictions file (root attributes strata_format / strata_format_version).
constexpr std::int64_t predictions_format_version = 1;

/// Rank 0: the checkpoint file, or the newest valid one of a checkpoint directory.
Checkpoint load_checkpoint(const std::string& path, std::string& resolved) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
        resolved = path;
        return read_checkpoint(path);
    }
    auto newest = CheckpointDir(path).load_newest();
    STRATA_CHECK(newest.has_value(), path, ": no checkpoint (ckpt-<epoch>.h5) in this directory");
    for (const auto& skipped : newest->skipped) {
        std::fprintf(stderr, "warning: skipping unreadable checkpoint %s\n", skipped.c_str());
    }
    resolved = newest->path.string();
    return std::move(newest->checkpoint);
}

/// Index of the first maximum of each row (the rule the trainer's accuracy uses).
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

/// The rows of `local` (its rows are the vertices `ids`) placed at their original ids: the
/// N x cols matrix of a one-rank run. Throws if a vertex is missing or repeated.
HostMatrix place_rows(const std::vector<global_id>& ids, const HostMatrix& local,
                      global_id num_vertices) {
    const auto cols = static_cast<std::size_t>(local.cols);
    HostMatrix all(num_vertices, local.cols);
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(num_vertices), 0);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const global_id v = ids[i];
        STRATA_CHECK(v >= 0 && v < num_vertices && seen[static_cast<std::size_t>(v)] == 0,
                     "predict: vertex ", v, " is out of range or was predicted twice");
        seen[static_cast<std::size_t>(v)] = 1;
        std::memcpy(all.row(v), local.row(static_cast<std::int64_t>(i)), cols * sizeof(float));
    }
    const auto missing = std::count(seen.begin(), seen.end(), std::uint8_t{0});
    STRATA_CHECK(missing == 0, "predict: ", missing, " vertices were not predicted");
    return all;
}

/// One rank: the rows in the original vertex order, in one HDF5 file (format "predictions" 1).
void write_single_file(AtomicOutput& out, const PredictionsMeta& meta,
                       const std::vector<global_id>& ids, const HostMatrix& logits,
                       const HostMatrix* hidden, global_id n) {
    const HostMatrix all_logits = place_rows(ids, logits, n);
    const std::vector<std::int64_t> predictions = argmax_rows(all_logits);
    {
        H5File file = H5File::create(out.temp_path().string());
        file.write_attribute("/", "strata_format", std::string("predictions"));
        file.write_attribute("/", "strata_format_version", predictions_format_version);
        file.write_attribute("/", "checkpoint", meta.checkpoint);
        file.write_attribute("/", "epoch", meta.epoch);
        file.write_attribute("/", "best_epoch", meta.best_epoch);
        file.write_attribute("/", "model", meta.model);
        file.write_attribute("/", "dataset", meta.dataset);
        file.write<std::int64_t>("/predictions", predictions, {n});
        file.write<float>("/logits", all_logits.values, {n, all_logits.cols}, true);
        if (hidden != nullptr) {
            const HostMatrix all_hidden = place_rows(ids, *hidden, n);
            file.write<float>("/embeddings", all_hidden.values, {n, all_hidden.cols}, true);
        }
        file.close();  // checked: a full disk fails here, naming the file
    }
    out.commit();
}

int run_predict(const PredictOptions& o) {
    Runtime runtime = open_runtime(o.device);
    Backend& backend = *runtime.backend;
    Communicator& comm = *runtime.comm;
    const bool root = comm.rank() == 0;

    // Rank 0 reads (and checks) the checkpoint and the output path, everyone gets the state.
    Checkpoint checkpoint;
    std::string checkpoint_path;
    std::unique_ptr<AtomicOutput> out;
    if (root) {
        out = std::make_unique<AtomicOutput>(o.out, o.force);
        // --force replaces a file by a file and a directory by a directory only.
        std::error_code ec;
        const bool parts = comm.size() > 1;
        STRATA_CHECK(!std::filesystem::exists(o.out, ec) ||
                         std::filesystem::is_directory(o.out, ec) == parts,
                     o.out, ": exists and is a ", parts ? "file" : "directory", ", but ",
                     parts ? "K > 1 ranks write a directory" : "one rank writes a file",
                     " (--force replaces only the same kind: remove it or choose another --out)");
        checkpoint = load_checkpoint(o.checkpoint, checkpoint_path);
    }
    broadcast_checkpoint(checkpoint, comm, 0);
    broadcast_string(comm, checkpoint_path, 0);

    // The same input as training: same in-memory partitioning of a .h5 by default (any K works).
    LocalPart part = load_local_part(o.data, comm,
                                     InMemoryPartitionOptions{.method = checkpoint.partition_method,
                                                              .seed = checkpoint.model.seed},
                                     o.split_index);
    if (checkpoint.row_normalize) {
        row_normalize_features(part.features);
    }
    BuiltModel model =
        build_model(checkpoint.model, part.features.cols, static_cast<index_t>(part.num_classes));
    ModelGraph& graph = model.graph;
    const std::string embedding = o.embeddings ? model.embedding_tensor : "";
    STRATA_CHECK(!o.embeddings || !embedding.empty(), "--embeddings: the model (",
                 describe(checkpoint.model), ") has no hidden layer");
    const ModelInputs inputs(backend, comm, part, graph);
    ModelParameters parameters(backend, graph, checkpoint.model.seed);
    if (root) {
        const CheckpointIdentity current{
            .model = model_identity(checkpoint.model, checkpoint.row_normalize),
            .parameters = parameters.summary(),
            .dataset = data_identity(o.data),
            .partition = {},  // any K and split may predict
            .training = {}};
        check_identity(checkpoint, current, IdentityCheck::model_and_dataset, checkpoint_path);
    }
    parameters.upload(checkpoint.best_params);
    ExecutorOptions options = inputs.executor_options({.training = false});
    if (o.embeddings) {
        options.evaluation_outputs.push_back(embedding);
    }
    FullGraphExecutor executor(backend, comm, graph, parameters, *inputs.aggregation,
                               inputs.inputs->data(), options);

    // Evaluation mode: no dropout.
    (void)executor.evaluate();
    HostMatrix logits(part.graph.num_owned, graph.tensor(graph.output()).cols);
    backend.download(logits.values.data(),
                     executor.evaluation_output(graph.tensor(graph.output()).name).data,
                     logits.values.size() * sizeof(float));
    std::optional<HostMatrix> hidden;
    if (o.embeddings) {
        const ConstMatrixView h = executor.evaluation_output(embedding);
        hidden = HostMatrix(h.rows, h.cols);
        backend.download(hidden->values.data(), h.data, h.size() * sizeof(float));
    }

    // Accuracy of these predictions on the selected split's masks (summed over ranks).
    const std::vector<std::int64_t> local_pred = argmax_rows(logits);
    std::array<std::int64_t, 6> counts{};
    const std::array<std::span<const std::uint8_t>, 3> masks{part.split_of(part.train_mask),
                                                             part.split_of(part.val_mask),
                                                             part.split_of(part.test_mask)};
    for (std::size_t i = 0; i < local_pred.size(); ++i) {
        const index_t label = part.labels[i];
        for (std::size_t m = 0; m < masks.size(); ++m) {
            if (masks[m][i] != 0 && label >= 0) {
                counts[2 * m] += local_pred[i] == label ? 1 : 0;
                counts[2 * m + 1] += 1;
            }
        }
    }
    comm.allreduce_sum(counts);

    const global_id n = part.graph.num_global_vertices;
    const PredictionsMeta meta{
        .checkpoint = checkpoint_path,
        .epoch = checkpoint.epoch,
        .best_epoch = checkpoint.best ? checkpoint.best->epoch : checkpoint.epoch,
        .model = checkpoint.identity.model,
        .dataset = checkpoint.identity.dataset};
    if (comm.size() == 1) {
        write_single_file(*out, meta, part.graph.owned_original, logits,
                          hidden ? &*hidden : nullptr, n);
    } else {
        write_prediction_parts(comm, out, o.out, meta,
                               {.ids = &part.graph.owned_original,
                                .predictions = &local_pred,
                                .logits = &logits,
                                .embeddings = hidden ? &*hidden : nullptr},
                               n);
    }
    if (root) {
        auto ratio = [](std::int64_t a, std::int64_t b) {
            return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
        };
        std::printf(
            "strata predict: %lld vertices, %d classes, checkpoint %s (epoch %lld, best weights of "
            "epoch %lld) -> %s%s\n"
            "split=%d train_accuracy=%.4f val_accuracy=%.4f test_accuracy=%.4f\n",
            static_cast<long long>(n), static_cast<int>(logits.cols), checkpoint_path.c_str(),
            static_cast<long long>(meta.epoch), static_cast<long long>(meta.best_epoch),
            o.out.c_str(),
            comm.size() == 1
                ? ""
                : (" (" + std::to_string(comm.size()) + " parts and index.json)").c_str(),
            part.split, ratio(counts[0], counts[1]), ratio(counts[2], counts[3]),
            ratio(counts[4], counts[5]));
        std::fflush(stdout);
    }
    comm.barrier();
    return 0;
}

}  // namespace

Command add_predict_command(CLI::App& root) {
    auto o = std::make_shared<PredictOptions>();
    CLI::App* cmd = root.add_subcommand(
        "predict",
        "Predict every vertex's class from a checkpoint (run under mpirun/srun with any K)");
    cmd->add_option("--data", o->data,
                    "Graph .h5 file, or a partition directory, of the training dataset")
        ->required();
    cmd->add_option("--checkpoint", o->checkpoint,
                    "Checkpoint file, or a --checkpoint-dir (its newest valid checkpoint)")
        ->required();
    cmd->add_option("--out", o->out,
                    "Predictions to create: one .h5 file on 1 rank; on K > 1 ranks a directory "
                    "of K part files and index.json (scripts/read_predictions.py assembles it)")
        ->required();
    cmd->add_flag("--embeddings", o->embeddings,
                  "Also write /embeddings: the last hidden layer (input of the last GCN layer)");
    cmd->add_flag("--force", o->force, "Replace --out if it exists");
    cmd->add_option("--split-index", o->split_index,
                    "The dataset split whose masks the printed accuracies use, from 0")
        ->check(non_negative());
    add_device_options(*cmd, o->device);
    return {cmd, [o] { return run_predict(*o); }};
}

}  // namespace strata::app
