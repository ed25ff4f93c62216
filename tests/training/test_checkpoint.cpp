// Checkpoints: file round trip (last state, best weights, history, the run configuration),
// format 1 refused with what to do, formats 2, 3 and 4 still read (committed files, made as
// checkpoints/make_old_checkpoints.sh says), the format-5 pipeline section (typed per-rank
// histories and guard state: round trip, checksums, gathered by the Checkpointer, each rank's
// own after the broadcast), keeping the newest two, detecting corrupt and truncated files
// (falling back to the previous one), refusing another model/dataset/partition/parallelism,
// broadcasting, and a run stopped and resumed through fit ≡ an uninterrupted run, bit for bit
// (same K).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/h5_file.hpp"
#include "layers/gcn_model.hpp"
#include "layers/model_inputs.hpp"
#include "layers/model_zoo.hpp"
#include "layers/overlapped_aggregation.hpp"
#include "layers/training_inputs.hpp"
#include "partition/local_part.hpp"
#include "partition/partition.hpp"
#include "partition/partition_job.hpp"
#include "partition/partition_report.hpp"
#include "src/base/error.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/optimizer.hpp"
#include "src/nn/pipeline_executor.hpp"
#include "tests/datasets/graph_fixtures.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"
#include "training/best_tracker.hpp"
#include "training/checkpoint.hpp"
#include "training/checkpointer.hpp"

#include <unistd.h>

using namespace strata;
using Catch::Matchers::Contains;
using strata::test::all_ranks;
namespace fs = std::filesystem;

namespace {

using strata::test::TempDir;  // a fresh directory per test and process (ranks: other pids)

Checkpoint sample_checkpoint(std::int64_t epoch) {
    Checkpoint c;
    c.identity = {.model = "gcn, 2 layers, hidden 4",
                  .parameters = "gcn0.linear.weight 3x4",
                  .dataset = "crc32:0badf00d",
                  .partition = "in memory, 1 part",
                  .training = "adam lr 0.01, seed 7"};
    c.model.model = "gcn";
    c.model.layers = 3;
    c.model.hidden = 5;
    c.model.dropout = 0.25f;
    c.model.weight_decay = 1e-3f;
    c.model.decay_all_layers = true;
    c.model.bias = false;
    c.model.seed = 0xfedcba9876543210ULL;  // above 2^63: stored without a sign
    c.row_normalize = true;
    c.partition_method = "random";
    c.dataset_path = "data/g.h5";
    c.config = R"({"data": "data/g.h5", "epochs": 200, "parallel": "graph"})";
    c.epoch = epoch;
    c.early_stopped = epoch % 2 == 0;
    // A recognisable byte pattern (found again in the file by the corruption test).
    c.params = {1.5f, -2.25f, 3e-8f, 1234.5f, 0.1f, -0.0f, 7.0f, static_cast<float>(epoch)};
    c.optimizer_state = {0.5f, 0.25f, 0.125f, static_cast<float>(epoch)};
    c.selection = Selection::val_loss;
    c.best_params = {9.5f, -8.25f, 7e-9f, 6.5f, 0.2f, 0.0f, -7.0f, static_cast<float>(epoch)};
    EpochStats best;
    best.epoch = epoch - 1;
    best.loss = 0.6931471805599453;
    best.train_acc = 0.9;
    best.val_acc = 0.8;
    best.test_acc = 0.7;
    best.val_loss = 1.0 / 3.0;
    best.eval_train_loss = 0.125;
    best.binary = true;
    best.val_auc = 0.875;
    best.test_auc = 0.8125;
    best.evaluated = true;
    c.best = best;
    c.history = {{1, 2.0, 0.5}, {3, 1.5, 0.75}, {epoch - 1, 1.0 / 3.0, 0.8}};
    return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

/// Flips one byte of the first occurrence of `pattern` in the file.
void corrupt_bytes(const fs::path& file, const std::vector<float>& pattern) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    const std::string needle(reinterpret_cast<const char*>(pattern.data()),
                             pattern.size() * sizeof(float));
    const auto at = bytes.find(needle);
    REQUIRE(at != std::string::npos);
    bytes[at + 5] = static_cast<char>(bytes[at + 5] ^ 0x10);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("a checkpoint file reads back exactly what was written", "[training][checkpoint]") {
    TempDir dir("roundtrip");
    const Checkpoint c = sample_checkpoint(6);
    write_checkpoint(dir.path / "c.h5", c);
    const Checkpoint r = read_checkpoint(dir.path / "c.h5");
    CHECK(r.identity.model == c.identity.model);
    CHECK(r.identity.parameters == c.identity.parameters);
    CHECK(r.identity.dataset == c.identity.dataset);
    CHECK(r.identity.partition == c.identity.partition);
    CHECK(r.identity.training == c.identity.training);
    CHECK(r.model.model == "gcn");
    CHECK(r.model.layers == 3);
    CHECK(r.model.hidden == 5);
    CHECK(r.model.dropout == 0.25f);
    CHECK(r.model.weight_decay == 1e-3f);
    CHECK(r.model.decay_all_layers);
    CHECK_FALSE(r.model.bias);
    CHECK(r.model.seed == 0xfedcba9876543210ULL);
    CHECK(r.row_normalize);
    CHECK(r.partition_method == "random");
    CHECK(r.dataset_path == "data/g.h5");
    CHECK(r.config == c.config);
    CHECK(r.epoch == 6);
    CHECK(r.early_stopped);
    CHECK(same_bits(r.params, c.params));  // -0.0f and 3e-8f included
    CHECK(same_bits(r.optimizer_state, c.optimizer_state));
    CHECK(same_bits(r.best_params, c.best_params));
    CHECK(r.selection == Selection::val_loss);
    REQUIRE(r.best.has_value());
    CHECK(r.best->epoch == 5);
    CHECK(r.best->loss == 0.6931471805599453);
    CHECK(r.best->val_acc == 0.8);
    CHECK(r.best->val_loss == 1.0 / 3.0);
    CHECK(r.best->eval_train_loss == 0.125);  // format 5: the whole record, ROC-AUC included
    CHECK(r.best->binary);
    CHECK(r.best->val_auc == 0.875);
    CHECK(r.best->test_auc == 0.8125);
    REQUIRE(r.history.size() == 3);
    CHECK(r.history[1].epoch == 3);
    CHECK(r.history[1].val_loss == 1.5);
    CHECK(r.history[1].val_acc == 0.75);
    CHECK(r.history[2].val_loss == 1.0 / 3.0);
    // No temporary is left next to it.
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("a format 1 checkpoint is refused with what to do", "[training][checkpoint]") {
    TempDir dir("v1");
    {
        H5File file = H5File::create((dir.path / "old.h5").string());
        file.write_attribute("/", "strata_format", std::string("checkpoint"));
        file.write_attribute("/", "strata_format_version", std::int64_t{1});
    }

    CHECK_THROWS_WITH(read_checkpoint(dir.path / "old.h5"),
                      Contains("old.h5: checkpoint format version 1") &&
                          Contains("holds only the last epoch's weights") &&
                          Contains("train again with this strata"));
}

TEST_CASE("any model's spec round-trips through a checkpoint", "[training][checkpoint]") {
    TempDir dir("spec");
    Checkpoint c = sample_checkpoint(4);
    c.model = find_model("gcnii").recipe.spec;
    c.model.layers = 16;
    c.model.alpha = 0.2f;
    c.model.seed = 77;
    write_checkpoint(dir.path / "c.h5", c);

    const Checkpoint r = read_checkpoint(dir.path / "c.h5");

    CHECK(spec_to_json(r.model) == spec_to_json(c.model));
    CHECK(r.model.seed == 77);
}

TEST_CASE("checkpoints of formats 2, 3 and 4 (committed files) are still read",
          "[training][checkpoint]") {
    const fs::path files = STRATA_CHECKPOINT_FILES;
    // The same graph-parallel checkpoint in formats 2 (GCN options as attributes), 3 and 4.
    std::vector<Checkpoint> graph;
    for (const char* name : {"v2.h5", "v3.h5", "v4-graph.h5"}) {
        INFO(name);
        const Checkpoint r = read_checkpoint(files / name);
        CHECK(r.epoch == 3);
        CHECK(describe(r.model) ==
              "gcn, 2 layers, hidden 4, dropout 0.5, weight decay 0.0005 (first layer), bias");
        CHECK(r.params.size() == 43);
        CHECK(r.optimizer_state.size() == 87);
        CHECK(r.selection == Selection::val_loss);
        REQUIRE(r.best.has_value());
        CHECK(r.best->epoch == 3);
        CHECK(r.best->val_auc == 0.0);  // not kept before format 5
        CHECK(r.history.size() == 3);
        CHECK(r.config.empty());  // not kept before format 5
        CHECK(r.pipeline_history.empty());
        CHECK_FALSE(r.guard.has_value());
        graph.push_back(r);
    }
    CHECK(same_bits(graph[0].params, graph[2].params));
    CHECK(same_bits(graph[1].best_params, graph[2].best_params));
    CHECK(graph[0].best->val_loss == graph[2].best->val_loss);

    // A layer-pipeline run's (2 ranks, guard on, a snapshot, T2 off): each rank's history comes
    // back untyped (split by the executor's layout on restore), the guard as judged by
    // validation accuracy with no best-tracker state.
    const Checkpoint p = read_checkpoint(files / "v4-pipeline.h5");
    CHECK(describe(p.model).rfind("gcnii, 2 layers, hidden 4", 0) == 0);
    REQUIRE(p.pipeline_history.size() == 2);
    for (const PipelineHistory& h : p.pipeline_history) {
        CHECK(h.from_format4);
        CHECK(h.chunks == 4);
        CHECK(h.snapshot_period == 2);
        CHECK(h.has_snapshot);
        CHECK(h.embeddings.empty());
        CHECK(h.format4_rows.size() == 3 * 40 * 4);  // rows, snapshot, gradients of 40 x 4
    }
    REQUIRE(p.guard.has_value());
    CHECK(p.guard->criterion == Selection::val_acc);
    CHECK(p.guard->triggers == 0);
    CHECK(p.guard->best_figure == 0.625);
    REQUIRE(p.guard->min_train_loss.has_value());
    CHECK(*p.guard->min_train_loss == Approx(1.05735261));
    CHECK(p.guard->good_epoch == 3);
    CHECK(p.guard->parameters.size() == 75);
    CHECK(p.guard->optimizer.size() == 151);
    CHECK(p.guard->tracker_pending);

    // Written again, it is format 5 (typed), except the untyped histories, which no run writes
    // back (a resumed run writes its executor's).
    TempDir dir("old");
    Checkpoint again = p;
    again.pipeline_history.clear();
    write_checkpoint(dir.path / "c.h5", again);
    const Checkpoint r = read_checkpoint(dir.path / "c.h5");
    REQUIRE(r.guard.has_value());
    CHECK(r.guard->best_figure == 0.625);
    CHECK(same_bits(r.guard->parameters, p.guard->parameters));
    CHECK_THROWS_WITH(write_checkpoint(dir.path / "d.h5", p),
                      Contains("read from a format-4 checkpoint (untyped)"));
}

TEST_CASE("a checkpoint's bad select_by or format-2 option is refused naming the file",
          "[training][checkpoint]") {
    TempDir dir("bad_attrs");
    const Checkpoint c = sample_checkpoint(4);
    const fs::path select = dir.path / "select.h5";
    const fs::path dropout = dir.path / "dropout.h5";
    const fs::path best = dir.path / "best.h5";
    write_checkpoint(select, c);
    write_checkpoint(dropout, c);
    write_checkpoint(best, c);
    const std::string script =
        "import h5py, numpy as np, sys\n"
        "a = h5py.File(sys.argv[1], 'r+').attrs; a['select_by'] = np.bytes_(b'val_f1')\n"
        "a = h5py.File(sys.argv[2], 'r+').attrs\n"
        "a['strata_format_version'] = np.int64(2); del a['model_spec']\n"
        "a['model_type'] = np.bytes_(b'gcn'); a['gcn_layers'] = np.int64(2)\n"
        "a['gcn_hidden'] = np.int64(5); a['gcn_dropout'] = np.float64(1.5)\n"
        "a['gcn_weight_decay'] = np.float64(0); a['gcn_decay_all_layers'] = np.int64(0)\n"
        "a['gcn_bias'] = np.int64(1)\n"
        // /progress/best with epoch 1e300 and a valid checksum (fuzz_checkpoint's UBSan
        // finding: the cast to an integer was undefined).
        "f = h5py.File(sys.argv[3], 'r+'); v = np.array([1e300, 1, 1, 1, 1, 1], '<f8')\n"
        "f.attrs['strata_format_version'] = np.int64(4)\n"
        "h = 0xcbf29ce484222325\n"
        "for x in v.tobytes(): h = ((h ^ x) * 0x100000001b3) % 2**64\n"
        "del f['/progress/best']; f['/progress/best'] = v\n"
        "f['/progress/best'].attrs['checksum'] = np.bytes_(('fnv1a64:%016x' % h).encode())\n";
    const std::string command = "/usr/bin/python3 -c \"" + script + "\" " + select.string() + " " +
                                dropout.string() + " " + best.string();
    REQUIRE(std::system(command.c_str()) == 0);

    CHECK_THROWS_WITH(
        read_checkpoint(select),
        Contains("select.h5: select_by is 'val_f1', expected val_acc, val_loss or val_auc"));
    CHECK_THROWS_WITH(read_checkpoint(best),
                      Contains("best.h5: /progress/best: epoch 1e+300 is not a whole number"));
    CHECK_THROWS_WITH(read_checkpoint(dropout),
                      Contains("dropout.h5: 'dropout' must be in [0, 1), got 1.5"));
}

namespace {

/// `rows` x `cols` recognisable values.
HistoryTensor sample_tensor(const std::string& name, std::int64_t rows, std::int64_t cols,
                            float base) {
    HistoryTensor t{.name = name, .rows = rows, .cols = cols};
    for (std::int64_t i = 0; i < rows * cols; ++i) {
        t.values.push_back(base + 0.25f * static_cast<float>(i));
    }
    return t;
}

/// Rank r's pipeline history in the samples: 5 + 3 r rows, two aggregation inputs, their
/// snapshot, one aggregation output's gradients.
PipelineHistory sample_history(int rank) {
    const std::int64_t rows = 5 + 3 * rank;
    const float base = -100.0f * static_cast<float>(rank + 1);
    return PipelineHistory{.chunks = 4,
                           .snapshot_period = 3,
                           .has_snapshot = true,
                           .embeddings = {sample_tensor("conv1.dropout", rows, 3, base),
                                          sample_tensor("conv2.dropout", rows, 2, base + 10.0f)},
                           .snapshot = {sample_tensor("conv1.dropout", rows, 3, base + 20.0f),
                                        sample_tensor("conv2.dropout", rows, 2, base + 30.0f)},
                           .gradients = {sample_tensor("conv1.aggregate", rows, 3, base + 40.0f)}};
}

bool same_tensors(const std::vector<HistoryTensor>& a, const std::vector<HistoryTensor>& b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].name != b[i].name || a[i].rows != b[i].rows || a[i].cols != b[i].cols ||
            !same_bits(a[i].values, b[i].values)) {
            return false;
        }
    }
    return true;
}

bool same_history(const PipelineHistory& a, const PipelineHistory& b) {
    return a.chunks == b.chunks && a.snapshot_period == b.snapshot_period &&
           a.has_snapshot == b.has_snapshot && same_tensors(a.embeddings, b.embeddings) &&
           same_tensors(a.snapshot, b.snapshot) && same_tensors(a.gradients, b.gradients) &&
           a.from_format4 == b.from_format4 && same_bits(a.format4_rows, b.format4_rows);
}

GuardState sample_guard() {
    EpochStats best;
    best.epoch = 2;
    best.evaluated = true;
    best.loss = 0.75;
    best.val_acc = 0.5;
    best.val_loss = 1.25;
    best.val_auc = 0.625;
    best.binary = true;
    return {.criterion = Selection::val_loss,
            .triggers = 1,
            .above = 2,
            .above_since = 7,
            .below = 1,
            .below_since = 5,
            .best_figure = 0.5400000000000001,
            .min_train_loss = 1.9123456789,
            .good_epoch = 3,
            .parameters = {0.5f, -1.5f, 2.5e-7f, 8.0f},
            .optimizer = {0.125f, -0.0f, 3.0f},
            .tracker_pending = false,
            .tracker_best = best,
            .tracker_parameters = {7.5f, -6.5f, 5.5e-7f, 4.0f}};
}

bool same_guard(const GuardState& a, const GuardState& b) {
    return a.criterion == b.criterion && a.triggers == b.triggers && a.below == b.below &&
           a.below_since == b.below_since && a.above == b.above && a.above_since == b.above_since &&
           a.best_figure == b.best_figure && a.min_train_loss == b.min_train_loss &&
           a.good_epoch == b.good_epoch && same_bits(a.parameters, b.parameters) &&
           same_bits(a.optimizer, b.optimizer) && a.tracker_pending == b.tracker_pending &&
           a.tracker_best.has_value() == b.tracker_best.has_value() &&
           (!a.tracker_best || (a.tracker_best->epoch == b.tracker_best->epoch &&
                                a.tracker_best->val_loss == b.tracker_best->val_loss &&
                                a.tracker_best->val_auc == b.tracker_best->val_auc &&
                                a.tracker_best->binary == b.tracker_best->binary)) &&
           same_bits(a.tracker_parameters, b.tracker_parameters);
}

/// Rewrites a file's strata_format_version (h5py).
void set_version(const fs::path& file, int version) {
    const std::string command =
        "/usr/bin/python3 -c \"import h5py, numpy as np, sys; "
        "h5py.File(sys.argv[1], 'r+').attrs['strata_format_version'] = "
        "np.int64(" +
        std::to_string(version) + ")\" " + file.string();
    REQUIRE(std::system(command.c_str()) == 0);
}

}  // namespace

TEST_CASE("a pipeline checkpoint (format 5) reads back every rank's history and the guard state",
          "[training][checkpoint]") {
    TempDir dir("pipeline");
    Checkpoint c = sample_checkpoint(6);
    c.pipeline_history = {sample_history(0), sample_history(1)};  // different sizes
    c.pipeline_history[1].has_snapshot = false;
    c.pipeline_history[1].snapshot.clear();
    c.guard = sample_guard();
    const fs::path file = dir.path / "c.h5";
    write_checkpoint(file, c);

    SECTION("round trip, bit for bit, typed") {
        const Checkpoint r = read_checkpoint(file);
        REQUIRE(r.pipeline_history.size() == 2);
        CHECK(same_history(r.pipeline_history[0], c.pipeline_history[0]));
        CHECK(same_history(r.pipeline_history[1], c.pipeline_history[1]));
        REQUIRE(r.guard.has_value());
        CHECK(same_guard(*r.guard, sample_guard()));
        CHECK(same_bits(r.params, c.params));
        const H5File h5 = H5File::open(file.string());
        CHECK(h5.read_int_attribute("/", "strata_format_version") == 5);
        CHECK(h5.read_int_attribute("/pipeline", "ranks") == 2);
        // Integers as integers, each tensor a matrix named by its model tensor.
        CHECK(h5.read<std::int64_t>("/pipeline/rank_00001/settings") ==
              std::vector<std::int64_t>{4, 3, 0});
        CHECK(h5.shape("/pipeline/rank_00001/embeddings_0001") == H5Shape{8, 2});
        CHECK(h5.read_string_attribute("/pipeline/rank_00001/embeddings_0001", "tensor") ==
              "conv2.dropout");
        CHECK(h5.read_int_attribute("/pipeline/rank_00001", "snapshot") == 0);
        CHECK(h5.read_int_attribute("/pipeline/guard", "triggers") == 1);
        CHECK(h5.read_string_attribute("/pipeline/guard", "select_by") == "val_loss");
    }
    SECTION("a guard without a best figure yet, its tracker state pending") {
        GuardState fresh = sample_guard();
        fresh.best_figure.reset();
        fresh.min_train_loss.reset();
        fresh.tracker_pending = true;
        fresh.tracker_best.reset();
        fresh.tracker_parameters.clear();
        c.guard = fresh;
        write_checkpoint(file, c);
        const Checkpoint r = read_checkpoint(file);
        REQUIRE(r.guard.has_value());
        CHECK(same_guard(*r.guard, fresh));
    }
    SECTION("one flipped byte in rank 1's history fails its checksum") {
        corrupt_bytes(file, c.pipeline_history[1].embeddings[0].values);
        CHECK_THROWS_WITH(read_checkpoint(file),
                          Contains("/pipeline/rank_00001/embeddings_0000: checksum mismatch"));
    }
    SECTION("one flipped byte in the guard's weights fails their checksum") {
        corrupt_bytes(file, sample_guard().parameters);
        CHECK_THROWS_WITH(read_checkpoint(file),
                          Contains("/pipeline/guard/parameters: checksum mismatch"));
    }
}

TEST_CASE("a graph-parallel checkpoint has no pipeline section", "[training][checkpoint]") {
    TempDir dir("nopipeline");
    write_checkpoint(dir.path / "c.h5", sample_checkpoint(3));
    CHECK_FALSE(H5File::open((dir.path / "c.h5").string()).exists("/pipeline"));
    const Checkpoint r = read_checkpoint(dir.path / "c.h5");
    CHECK(r.pipeline_history.empty());
    CHECK_FALSE(r.guard.has_value());
}

TEST_CASE("a newer format is refused", "[training][checkpoint]") {
    TempDir dir("v6");
    const fs::path file = dir.path / "c.h5";
    write_checkpoint(file, sample_checkpoint(5));
    set_version(file, 6);
    CHECK_THROWS_WITH(read_checkpoint(file),
                      Contains("strata_format_version 6 is not supported (this strata reads "
                               "versions 2 to 5; it was written by a newer strata)"));
}

TEST_CASE("a checkpoint directory keeps the newest two, ordered by epoch",
          "[training][checkpoint]") {
    TempDir dir("keep");
    CheckpointDir ckpts(dir.path / "run");
    CHECK(ckpts.list().empty());
    CHECK_FALSE(ckpts.load_newest().has_value());
    CHECK(ckpts.path_for(12) == dir.path / "run" / "ckpt-000012.h5");
    for (std::int64_t e : {1, 2, 9, 10, 11}) {
        CHECK(ckpts.save(sample_checkpoint(e)) == ckpts.path_for(e));
    }
    const auto list = ckpts.list();
    REQUIRE(list.size() == 2);
    CHECK(list[0].first == 10);  // numeric order, not 9 > 11 as text would give
    CHECK(list[1].first == 11);
    const auto newest = ckpts.load_newest();
    REQUIRE(newest.has_value());
    CHECK(newest->checkpoint.epoch == 11);
    CHECK(newest->skipped.empty());
}

TEST_CASE("a corrupt or truncated newest checkpoint is reported and the previous one is used",
          "[training][checkpoint]") {
    TempDir dir("corrupt");
    CheckpointDir ckpts(dir.path);
    ckpts.save(sample_checkpoint(4));
    ckpts.save(sample_checkpoint(5));
    const fs::path newest = ckpts.path_for(5);

    SECTION("one flipped byte in the parameters fails the checksum") {
        corrupt_bytes(newest, sample_checkpoint(5).params);
        CHECK_THROWS_WITH(read_checkpoint(newest), Contains("/model/params: checksum mismatch"));
    }
    SECTION("a file cut short is not a readable HDF5 file") {
        fs::resize_file(newest, fs::file_size(newest) / 2);
        CHECK_THROWS_WITH(read_checkpoint(newest),
                          Contains(newest.filename().string()) &&
                              Contains("cannot open HDF5 file (truncated or corrupt?)"));
    }
    const auto loaded = ckpts.load_newest();
    REQUIRE(loaded.has_value());
    CHECK(loaded->checkpoint.epoch == 4);
    CHECK(loaded->path == ckpts.path_for(4));
    REQUIRE(loaded->skipped.size() == 1);
    CHECK_THAT(loaded->skipped[0], Contains("ckpt-000005.h5: "));

    // Resuming from 4 sets 5 aside, so later saves never keep it among the newest two.
    const auto moved = ckpts.set_aside_newer_than(4);
    REQUIRE(moved.size() == 1);
    CHECK(moved[0].filename() == "ckpt-000005.h5.corrupt");
    ckpts.save(sample_checkpoint(5));
    ckpts.save(sample_checkpoint(6));
    CHECK(ckpts.load_newest()->checkpoint.epoch == 6);
    CHECK(ckpts.list().size() == 2);

    // None readable: an error that lists every file's reason.
    fs::resize_file(ckpts.path_for(5), 100);
    fs::resize_file(ckpts.path_for(6), 100);
    CHECK_THROWS_WITH(ckpts.load_newest(), Contains("no readable checkpoint among 2 files") &&
                                               Contains("ckpt-000005.h5") &&
                                               Contains("ckpt-000006.h5"));
}

TEST_CASE(
    "a checkpoint of another model, dataset or (pipeline) partition is refused, naming the field",
    "[training][checkpoint]") {
    const Checkpoint c = sample_checkpoint(3);
    CHECK_NOTHROW(check_identity(c, c.identity, IdentityCheck::all, "c.h5"));

    CheckpointIdentity other = c.identity;
    other.model = "gcn, 2 layers, hidden 32";
    CHECK_THROWS_WITH(check_identity(c, other, IdentityCheck::all, "c.h5"),
                      Contains("c.h5: this checkpoint belongs to a different model") &&
                          Contains("'gcn, 2 layers, hidden 4'") &&
                          Contains("'gcn, 2 layers, hidden 32'"));
    other = c.identity;
    other.dataset = "crc32:12345678";
    CHECK_THROWS_WITH(check_identity(c, other, IdentityCheck::model_and_dataset, "c.h5"),
                      Contains("c.h5: this checkpoint was trained on another dataset ('") &&
                          Contains("this run's data is 'crc32:12345678'"));
    // Another dataset whose widths change the parameters is named as another dataset too (the
    // dataset is compared first), not as "other parameters".
    other.parameters = "gcn0.linear.weight 500x4";
    CHECK_THROWS_WITH(check_identity(c, other, IdentityCheck::model_and_dataset, "c.h5"),
                      Contains("trained on another dataset"));
    other = c.identity;
    other.parameters = "gcn0.linear.weight 500x4";
    CHECK_THROWS_WITH(check_identity(c, other, IdentityCheck::model_and_dataset, "c.h5"),
                      Contains("c.h5: this checkpoint has other parameters: it was written for"));
    other = c.identity;
    other.partition = "in memory, metis, seed 0, 2 parts";
    // A graph-parallel checkpoint resumes on any partition (elastic resume), and predict may
    // run on another K: the partition is not compared.
    CHECK_NOTHROW(check_identity(c, other, IdentityCheck::all, "c.h5"));
    CHECK_NOTHROW(check_identity(c, other, IdentityCheck::model_and_dataset, "c.h5"));
    // A layer-pipeline checkpoint keeps per-stage state: another partition is refused.
    Checkpoint piped = c;
    piped.identity.training += ", parallel pipeline, stages 2, ways 1";
    other.training = piped.identity.training;
    CHECK_THROWS_WITH(check_identity(piped, other, IdentityCheck::all, "c.h5"),
                      Contains("c.h5: this checkpoint belongs to a different partition") &&
                          Contains("keeps each stage's state on its ranks"));
    CHECK_NOTHROW(check_identity(piped, other, IdentityCheck::model_and_dataset, "c.h5"));
    other = c.identity;
    other.training = "adam lr 0.02, seed 7";
    CHECK_THROWS_WITH(check_identity(c, other, IdentityCheck::all, "c.h5"),
                      Contains("was written with other training options"));

    // Graph parallelism and the layer pipeline: said plainly, both ways.
    Checkpoint pipelined = c;
    pipelined.identity.training = c.identity.training + ", parallel pipeline, stages 2, ways 1";
    CHECK_THROWS_WITH(check_identity(pipelined, c.identity, IdentityCheck::all, "c.h5"),
                      Contains("c.h5: this checkpoint was written by a parallel = pipeline run but "
                               "this run has parallel = graph"));
    CHECK_THROWS_WITH(check_identity(c, pipelined.identity, IdentityCheck::all, "c.h5"),
                      Contains("written by a parallel = graph run but this run has parallel = "
                               "pipeline"));
    other = pipelined.identity;
    other.training = c.identity.training + ", parallel pipeline, stages 1, ways 2";
    CHECK_THROWS_WITH(check_identity(pipelined, other, IdentityCheck::all, "c.h5"),
                      Contains("other training options") && Contains("stages 2, ways 1"));
    // predict serves either (one forward pass, no training state).
    CHECK_NOTHROW(check_identity(pipelined, c.identity, IdentityCheck::model_and_dataset, "c.h5"));
}

TEST_CASE("data_identity is the stored content id, without reading the arrays",
          "[training][checkpoint][content_id]") {
    TempDir dir("identity");
    const GraphDataset g = strata::test::tiny_graph();
    const std::string h5 = (dir.path / "g.h5").string();
    write_graph(g, h5);
    const std::string id = read_graph_content_id(h5);
    CHECK(id.rfind("content64:", 0) == 0);
    CHECK(data_identity(h5) == id);
    CHECK(source_identity(h5) == id);
    // The same data written again (another file, another time) has the same identity, so a
    // checkpoint of one resumes on the other; other data has another.
    write_graph(g, (dir.path / "copy.h5").string());
    CHECK(data_identity((dir.path / "copy.h5").string()) == id);
    GraphDataset other = g;
    other.features.values[0] += 1.0F;
    write_graph(other, (dir.path / "other.h5").string());
    CHECK(data_identity((dir.path / "other.h5").string()) != id);

    // A partition directory records the content id as its source: a checkpoint trained on it
    // matches the .h5 it was cut from, and its partition_id hashes the id (not the file).
    PartitionJob job;
    job.data_path = h5;
    job.out_dir = (dir.path / "parts").string();
    job.num_parts = 2;
    job.method = "block";
    const PartitionReport report = run_partition_job(job);
    CHECK(report.info.source_checksum == id);
    CHECK(data_identity(job.out_dir) == id);
    CHECK(partition_identity(job.out_dir, 2, "metis", 0) ==
          "partition directory " + report.partition_id + ", 2 parts");
}

TEST_CASE("a version 1 or 2 graph file falls back to the crc32 of the file",
          "[training][checkpoint][content_id]") {
    TempDir dir("identity-old");
    const std::string v1 = (dir.path / "v1.h5").string();
    strata::test::write_raw_graph(strata::test::tiny_graph(), v1);
    CHECK(read_graph_content_id(v1).empty());
    CHECK(data_identity(v1).rfind("crc32:", 0) == 0);
    CHECK(data_identity(v1) == file_checksum(v1));

    const std::string v2 = (dir.path / "v2.h5").string();
    strata::test::write_raw_graph(strata::test::tiny_graph(), v2,
                                  {.skip = "strata_format_version", .extra = [](H5File& f) {
                                       f.write_attribute("/", "strata_format_version",
                                                         std::int64_t{2});
                                   }});
    CHECK(data_identity(v2) == file_checksum(v2));

    // A checkpoint of the old file is refused on the same data converted again (format 3: the
    // identity is now the content id), naming the dataset field and both identities.
    Checkpoint c = sample_checkpoint(2);
    c.identity.dataset = data_identity(v1);
    const std::string v3 = (dir.path / "v3.h5").string();
    write_graph(read_graph(v1), v3);
    CheckpointIdentity current = c.identity;
    current.dataset = data_identity(v3);
    CHECK_THROWS_WITH(check_identity(c, current, IdentityCheck::all, "c.h5"),
                      Contains("c.h5: this checkpoint was trained on another dataset") &&
                          Contains(c.identity.dataset) && Contains(current.dataset));
}

TEST_CASE("broadcast_checkpoint gives every rank rank 0's state", "[training][checkpoint][mpi]") {
    MpiCommunicator comm;
    Checkpoint c;
    if (comm.rank() == 0) {
        c = sample_checkpoint(8);
    }
    broadcast_checkpoint(c, comm, 0);
    const Checkpoint want = sample_checkpoint(8);
    const bool ok =
        c.epoch == 8 && c.early_stopped && same_bits(c.params, want.params) &&
        c.config == want.config && c.best->val_auc == 0.875 && c.best->binary &&
        c.best->eval_train_loss == 0.125 && same_bits(c.optimizer_state, want.optimizer_state) &&
        same_bits(c.best_params, want.best_params) && c.selection == Selection::val_loss &&
        c.history.size() == 3 && c.history[2].val_loss == 1.0 / 3.0 &&
        c.identity.model == want.identity.model && c.identity.training == want.identity.training &&
        c.partition_method == "random" && c.dataset_path == "data/g.h5" && c.best.has_value() &&
        c.best->epoch == 7 && c.best->val_loss == 1.0 / 3.0 && c.model.layers == 3 &&
        c.model.hidden == 5 && c.model.dropout == 0.25f && !c.model.bias &&
        c.model.decay_all_layers && c.model.seed == 0xfedcba9876543210ULL && c.row_normalize;
    CHECK(all_ranks(ok));
}

TEST_CASE("broadcast_checkpoint hands every rank its own pipeline history and the guard state",
          "[training][checkpoint][mpi]") {
    MpiCommunicator comm;
    Checkpoint c;
    if (comm.rank() == 0) {
        c = sample_checkpoint(8);
        for (int r = 0; r < comm.size(); ++r) {
            c.pipeline_history.push_back(sample_history(r));
        }
        c.guard = sample_guard();
    }
    broadcast_checkpoint(c, comm, 0);
    bool ok = c.pipeline_history.size() == static_cast<std::size_t>(comm.size()) &&
              c.guard.has_value() && same_guard(*c.guard, sample_guard()) && c.epoch == 8;
    for (int r = 0; ok && r < comm.size(); ++r) {
        const auto& h = c.pipeline_history[static_cast<std::size_t>(r)];
        // Its own on every rank; the others' only on the root.
        ok = r == comm.rank() || comm.rank() == 0 ? same_history(h, sample_history(r))
                                                  : h.embeddings.empty() && h.chunks == 0;
    }
    CHECK(all_ranks(ok));
}

namespace {

/// Everything one rank needs to train the GCN on a small generated graph through fit.
class Run {
public:
    Run(Communicator& comm, const GraphDataset& g, const Partition& p, const GcnOptions& gcn)
        : comm_(comm),
          backend_(make_cpu_backend(1)),
          part_(build_local_part(g, adjacency_matrix(g), p, comm.rank())),
          inputs_(*backend_, part_, Normalization::symmetric),  // build_gcn's
          aggregation_(inputs_.blocks, comm),
          graph_(build_gcn(part_.features.cols, static_cast<index_t>(part_.num_classes), gcn)),
          parameters_(*backend_, graph_, gcn.seed),
          executor_(*backend_, comm, graph_, parameters_, aggregation_, inputs_.data(),
                    ExecutorOptions{}),
          adam_(*backend_, parameters_.size(), AdamOptions{.lr = 0.02f}),
          best_(*backend_, parameters_, Selection::val_acc) {}

    /// Epochs state.epoch + 1 .. `until` (of a run of `total`), recording each epoch's stats;
    /// `hooks` run after the best tracker.
    std::vector<EpochStats> fit_until(FitState& state, std::int64_t until, std::int64_t total,
                                      std::vector<FitHook*> hooks = {}) {
        struct Stopper final : FitHook {  // first: the checkpointer sees the stop
            std::int64_t until = 0;
            void end_epoch(const EpochStats&, FitState& s) override {
                if (s.epoch == until && !s.last_epoch()) {
                    s.stop_reason = "test stop";
                }
            }
        } stopper;
        stopper.until = until;
        struct Recorder final : FitHook {
            std::vector<EpochStats> seen;
            void end_epoch(const EpochStats& stats, FitState&) override { seen.push_back(stats); }
        } recorder;
        std::vector<FitHook*> all{&stopper, &best_};
        all.insert(all.end(), hooks.begin(), hooks.end());
        all.push_back(&recorder);
        state.epochs = total;
        fit(FitContext{executor_, adam_, parameters_, *backend_, comm_}, FitOptions{}, all, state);
        return recorder.seen;
    }
    ModelParameters& parameters() { return parameters_; }
    Adam& adam() { return adam_; }
    BestTracker& best() { return best_; }

private:
    Communicator& comm_;
    std::unique_ptr<Backend> backend_;
    LocalPart part_;
    TrainingInputs inputs_;
    OverlappedAggregation aggregation_;
    ModelGraph graph_;
    ModelParameters parameters_;
    FullGraphExecutor executor_;
    Adam adam_;
    BestTracker best_;
};

bool same_stats(const EpochStats& a, const EpochStats& b) {
    return a.epoch == b.epoch && a.loss == b.loss && a.train_acc == b.train_acc &&
           a.val_acc == b.val_acc && a.test_acc == b.test_acc && a.val_loss == b.val_loss &&
           a.halo_bytes == b.halo_bytes;
}

}  // namespace

TEST_CASE("a run stopped, checkpointed and resumed through fit equals an uninterrupted run",
          "[training][checkpoint][mpi]") {
    MpiCommunicator comm;
    const GraphDataset g = test::community_graph(240, 4, 5, 12, 31);
    const Partition p = comm.size() == 1 ? partition_block(g.num_vertices(), 1)
                                         : partition_random(g.num_vertices(), comm.size(), 5);
    GcnOptions gcn;
    gcn.hidden = 8;
    gcn.dropout = 0.5f;  // masks keyed by (seed, epoch, layer, vertex): nothing else to save
    gcn.seed = 11;
    constexpr int total = 12;
    constexpr int stop = 5;

    Run uninterrupted(comm, g, p, gcn);
    FitState whole;
    const std::vector<EpochStats> want = uninterrupted.fit_until(whole, total, total);

    // Interrupted after `stop` epochs: the checkpointer (rank 0) writes; rank 0 reads back and
    // broadcasts; restore() puts the state back into a fresh run.
    TempDir dir("resume");
    {
        Run first(comm, g, p, gcn);
        Checkpointer checkpointer(CheckpointDir(dir.path), 0, comm.rank() == 0, Checkpoint{},
                                  first.parameters(), first.adam(), first.best());
        FitState state;
        (void)first.fit_until(state, stop, total, {&checkpointer});
    }
    Checkpoint loaded;
    if (comm.rank() == 0) {
        auto newest = CheckpointDir(dir.path).load_newest();
        REQUIRE(newest.has_value());
        loaded = std::move(newest->checkpoint);
    }
    broadcast_checkpoint(loaded, comm, 0);
    Run resumed(comm, g, p, gcn);
    FitState state;
    restore(loaded, resumed.parameters(), resumed.adam(), resumed.best(), state);
    bool ok = state.epoch == stop && state.best.has_value();
    const std::vector<EpochStats> got = resumed.fit_until(state, total, total);
    ok = ok && got.size() == static_cast<std::size_t>(total - stop);
    for (std::size_t i = 0; ok && i < got.size(); ++i) {
        if (!same_stats(got[i], want[static_cast<std::size_t>(stop) + i])) {
            UNSCOPED_INFO("epoch " << got[i].epoch << ": loss " << got[i].loss
                                   << " vs uninterrupted " << want[stop + i].loss);
            ok = false;
        }
    }
    ok = ok && same_bits(resumed.parameters().download(), uninterrupted.parameters().download()) &&
         same_bits(resumed.adam().state(), uninterrupted.adam().state()) &&
         same_bits(resumed.best().download(), uninterrupted.best().download()) &&
         state.best->epoch == whole.best->epoch && state.history.size() == whole.history.size();
    CHECK(all_ranks(ok));

    // The test has teeth: resuming without the optimizer state does not give the same run.
    Run forgetful(comm, g, p, gcn);
    forgetful.parameters().upload(loaded.params);
    FitState forgot;
    forgot.epoch = stop;
    (void)forgetful.fit_until(forgot, total, total);
    CHECK(all_ranks(
        !same_bits(forgetful.parameters().download(), uninterrupted.parameters().download())));
}

TEST_CASE("the checkpointer gathers every rank's pipeline state to rank 0 at each save",
          "[training][checkpoint][mpi]") {
    MpiCommunicator comm;
    const GraphDataset g = test::community_graph(60, 3, 4, 8, 5);
    const Partition p = partition_block(g.num_vertices(), comm.size());
    GcnOptions gcn;
    gcn.hidden = 4;
    Run run(comm, g, p, gcn);
    TempDir dir("gather");
    Checkpointer checkpointer(CheckpointDir(dir.path), 2, comm.rank() == 0, Checkpoint{},
                              run.parameters(), run.adam(), run.best());
    int asked = 0;
    checkpointer.add_pipeline_state(comm, [&] {
        ++asked;
        return PipelineCheckpointState{.history = sample_history(comm.rank()),
                                       .guard = sample_guard()};
    });
    FitState state;
    state.epochs = 3;
    for (std::int64_t epoch = 1; epoch <= 3; ++epoch) {  // saves at 2 (every 2) and 3 (last)
        state.epoch = epoch;
        EpochStats stats;
        stats.epoch = epoch;
        checkpointer.end_epoch(stats, state);
    }
    bool ok = asked == 2;
    if (comm.rank() == 0) {
        const Checkpoint r = read_checkpoint(CheckpointDir(dir.path).path_for(3));
        ok = ok && r.pipeline_history.size() == static_cast<std::size_t>(comm.size()) &&
             r.guard.has_value() && same_guard(*r.guard, sample_guard());
        for (int rank = 0; ok && rank < comm.size(); ++rank) {
            ok = same_history(r.pipeline_history[static_cast<std::size_t>(rank)],
                              sample_history(rank));
        }
        ok = ok && CheckpointDir(dir.path).list().size() == 2;
    }
    CHECK(all_ranks(ok));
}

TEST_CASE("a format-4 pipeline history restores into the executor of its layout",
          "[training][checkpoint][mpi]") {
    // v4-pipeline.h5: GCNII-2 x 4 on tiny.h5 over 2 stages, 4 chunks, snapshot period 2, T2 off
    // (make_old_checkpoints.sh). Each rank's untyped rows are split by the stage's layout and
    // come back typed, tensor by tensor; training goes on from them.
    MpiCommunicator world;
    if (world.size() != 2) {
        return;  // the checkpoint's 2 stages
    }
    MpiCommunicator self(MPI_COMM_SELF);
    const fs::path files = STRATA_CHECKPOINT_FILES;
    const Checkpoint c = read_checkpoint(files / "v4-pipeline.h5");
    const GraphDataset g = read_graph((files / "tiny.h5").string());
    Partition one;
    one.num_parts = 1;
    one.owner.assign(static_cast<std::size_t>(g.num_vertices()), 0);
    const LocalPart part = build_local_part(g, adjacency_matrix(g), one, 0);
    auto backend = make_cpu_backend(1);
    BuiltModel model =
        build_model(c.model, part.features.cols, static_cast<index_t>(part.num_classes));
    const ModelInputs inputs(*backend, self, part, model.graph);
    ModelParameters parameters(*backend, model.graph, 1);
    parameters.upload(c.params);
    std::vector<index_t> offsets;
    for (int k = 0; k <= 4; ++k) {
        offsets.push_back(static_cast<index_t>(part.graph.num_owned * k / 4));
    }
    PipelineExecutor executor(*backend, world, self, model.graph, parameters, *inputs.aggregation,
                              inputs.uploaded->data(),
                              PipelineOptions{.stages = 2,
                                              .chunk_offsets = offsets,
                                              .grad_zero_scale = false,
                                              .snapshot_period = 2,
                                              .nnz = part.graph.inner.nnz()});
    const PipelineHistory& old = c.pipeline_history[static_cast<std::size_t>(world.rank())];
    executor.restore_history(old);
    const PipelineHistory h = executor.history();
    std::vector<float> rows;
    for (const auto* part_of : {&h.embeddings, &h.snapshot, &h.gradients}) {
        for (const HistoryTensor& t : *part_of) {
            rows.insert(rows.end(), t.values.begin(), t.values.end());
        }
    }
    bool ok = !h.from_format4 && h.chunks == 4 && h.snapshot_period == 2 && h.has_snapshot &&
              h.embeddings.size() == 1 && h.embeddings[0].rows == 40 && h.embeddings[0].cols == 4 &&
              same_bits(rows, old.format4_rows);
    ok = ok && std::isfinite(executor.train_step(4));
    CHECK(all_ranks(ok));

    // Rows that do not fit the layout are refused.
    PipelineHistory short_rows = old;
    short_rows.format4_rows.pop_back();
    CHECK_THROWS_WITH(executor.restore_history(short_rows),
                      Contains("pipeline history: 479 values"));
}
