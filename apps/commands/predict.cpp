// `strata predict`: the predicted class and logits (optionally the last hidden layer) of every
// vertex from a checkpoint's best weights (the model whose accuracy `strata train` reported), in
// evaluation mode, computed by training/predictor.hpp on the same prepared rank training builds.
// One rank writes one HDF5 file in the original vertex order; K > 1 ranks write a directory of
// per-rank parts and an index (apps/commands/prediction_parts.hpp), nothing gathered on one rank
// (docs/checkpoints.md).
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
#include "apps/commands/option_flags.hpp"
#include "apps/commands/prediction_parts.hpp"
#include "apps/commands/runtime_options.hpp"
#include "datasets/h5_file.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/comm/broadcast_string.hpp"
#include "training/checkpoint.hpp"
#include "training/predictor.hpp"

namespace strata::app {
namespace {

struct PredictOptions {
    std::string data;
    std::string checkpoint;
    std::string out;
    bool embeddings = false;
    bool force = false;
    int split_index = 0;
    RuntimeOptions runtime;
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
    Runtime runtime = open_runtime(o.runtime);
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

    // The same input and model as training (any K works), the best weights, evaluation mode.
    const Predictions p = predict(checkpoint, checkpoint_path,
                                  prediction_config(checkpoint, o.data, o.split_index, o.runtime),
                                  runtime, o.embeddings);
    const PredictionsMeta meta{
        .checkpoint = checkpoint_path,
        .epoch = checkpoint.epoch,
        .best_epoch = checkpoint.best ? checkpoint.best->epoch : checkpoint.epoch,
        .model = checkpoint.identity.model,
        .dataset = checkpoint.identity.dataset};
    const global_id n = p.vertices;
    const HostMatrix* hidden = p.embeddings ? &*p.embeddings : nullptr;
    if (comm.size() == 1) {
        write_single_file(*out, meta, p.ids, p.logits, hidden, n);
    } else {
        write_prediction_parts(
            comm, out, o.out, meta,
            {.ids = &p.ids, .predictions = &p.predicted, .logits = &p.logits, .embeddings = hidden},
            n);
    }
    if (root) {
        auto ratio = [](std::int64_t a, std::int64_t b) {
            return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
        };
        const auto& counts = p.counts;
        std::printf(
            "strata predict: %lld vertices, %d classes, checkpoint %s (epoch %lld, best weights of "
            "epoch %lld) -> %s%s\n"
            "split=%d train_accuracy=%.4f val_accuracy=%.4f test_accuracy=%.4f\n",
            static_cast<long long>(n), static_cast<int>(p.classes), checkpoint_path.c_str(),
            static_cast<long long>(meta.epoch), static_cast<long long>(meta.best_epoch),
            o.out.c_str(),
            comm.size() == 1
                ? ""
                : (" (" + std::to_string(comm.size()) + " parts and index.json)").c_str(),
            p.split, ratio(counts[0], counts[1]), ratio(counts[2], counts[3]),
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
        "Predict every vertex's class from a checkpoint: writes /predictions (the argmax), "
        "/logits (the model's output layer before softmax, N x classes) and with --embeddings "
        "its last hidden layer (run under mpirun/srun with any K)");
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
                  "Also write /embeddings: the model's embedding tensor (docs/models.md: the "
                  "last hidden layer for gcn/sage/gat/mlp; after the last convolution for gcnii; "
                  "the classifier's input for gin and resgcn+; the MLP's hidden layer for appnp)");
    cmd->add_flag("--force", o->force, "Replace --out if it exists");
    cmd->add_option("--split-index", o->split_index,
                    "The dataset split whose masks the printed accuracies use, from 0")
        ->check(non_negative());
    const FlagTable flags = add_runtime_flags(*cmd, o->runtime);
    return {cmd, [o, flags] {
                return with_flag_names(flags, "--checkpoint", [&] { return run_predict(*o); });
            }};
}

}  // namespace strata::app
