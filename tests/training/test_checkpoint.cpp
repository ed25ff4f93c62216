// Checkpoints: file round trip (last state, best weights, history), format 1 refused with what
// to do, formats 2 and 3 still read, the format-4 pipeline section (per-rank histories, guard
// state: round trip, checksums, gathered by the Checkpointer, each rank's own after the
// broadcast), keeping the newest two, detecting corrupt and truncated files (falling back to the
// previous one), refusing another model/dataset/partition/parallelism, broadcasting, and a run
// stopped and resumed through fit ≡ an uninterrupted run, bit for bit (same K).
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
#include "layers/model_zoo.hpp"
#include "layers/pipelined_aggregation.hpp"
#include "layers/training_inputs.hpp"
#include "partition/local_part.hpp"
#include "partition/partition.hpp"
#include "partition/partition_job.hpp"
#include "partition/partition_report.hpp"
#include "src/base/error.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/optimizer.hpp"
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
    best.evaluated = true;
    c.best = best;
    c.history = {{1, 2.0, 0.5}, {3, 1.5, 0.75}, {epoch - 1, 1.0 / 3.0, 0.8}};
    return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
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

TEST_CASE("a format 2 checkpoint (GCN options as attributes) is still read",
          "[training][checkpoint]") {
    TempDir dir("v2");
    const Checkpoint c = sample_checkpoint(4);
    write_checkpoint(dir.path / "c.h5", c);
    // Rewritten as format 2 wrote it (h5py: fixed-length strings as strata writes them).
    const std::string script =
        "import h5py, numpy as np, sys\n"
        "f = h5py.File(sys.argv[1], 'r+'); a = f.attrs\n"
        "a['strata_format_version'] = np.int64(2); del a['model_spec']\n"
        "a['model_type'] = np.bytes_(b'gcn'); a['gcn_layers'] = np.int64(3)\n"
        "a['gcn_hidden'] = np.int64(5); a['gcn_dropout'] = np.float64(0.25)\n"
        "a['gcn_weight_decay'] = np.float64(np.float32(1e-3))\n"
        "a['gcn_decay_all_layers'] = np.int64(1); a['gcn_bias'] = np.int64(0)\n";
    const std::string command =
        "/usr/bin/python3 -c \"" + script + "\" " + (dir.path / "c.h5").string();
    REQUIRE(std::system(command.c_str()) == 0);

    const Checkpoint r = read_checkpoint(dir.path / "c.h5");

    CHECK(spec_to_json(r.model) == spec_to_json(c.model));
    CHECK(r.model.seed == c.model.seed);
    CHECK(describe(r.model) ==
          "gcn, 3 layers, hidden 5, dropout 0.25, weight decay 0.001 (all "
          "layers), no bias");
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
        "h = 0xcbf29ce484222325\n"
        "for x in v.tobytes(): h = ((h ^ x) * 0x100000001b3) % 2**64\n"
        "del f['/progress/best']; f['/progress/best'] = v\n"
        "f['/progress/best'].attrs['checksum'] = np.bytes_(('fnv1a64:%016x' % h).encode())\n";
    const std::string command = "/usr/bin/python3 -c \"" + script + "\" " + select.string() + " " +
                                dropout.string() + " " + best.string();
    REQUIRE(std::system(command.c_str()) == 0);

    CHECK_THROWS_WITH(read_checkpoint(select),
                      Contains("select.h5: select_by is 'val_f1', expected val_acc, val_loss or val_auc"));
    CHECK_THROWS_WITH(read_checkpoint(best),
                      Contains("best.h5: /progress/best: epoch 1e+300 is not a whole number"));
    CHECK_THROWS_WITH(read_checkpoint(dropout),
                      Contains("dropout.h5: 'dropout' must be in [0, 1), got 1.5"));
}

namespace {

/// Rank r's pipeline history in the samples: the settings, then 5 + 3 r recognisable values.
std::vector<float> sample_history(int rank) {
    std::vector<float> h{4.0f, 3.0f, 1.0f};
    for (int i = 0; i < 5 + 3 * rank; ++i) {
        h.push_back(0.25f * static_cast<float>(i) - 100.0f * static_cast<float>(rank + 1));
    }
    return h;
}

GuardCheckpoint sample_guard() {
    return {.figures = {1.0, 0.0, 0.5400000000000001, 1.9123456789, 1.0, 3.0},
            .parameters = {0.5f, -1.5f, 2.5e-7f, 8.0f},
            .optimizer = {0.125f, -0.0f, 3.0f}};
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

TEST_CASE("a pipeline checkpoint (format 4) reads back every rank's history and the guard state",
          "[training][checkpoint]") {
    TempDir dir("pipeline");
    Checkpoint c = sample_checkpoint(6);
    c.pipeline_history = {sample_history(0), sample_history(1)};  // different sizes
    c.guard = sample_guard();
    const fs::path file = dir.path / "c.h5";
    write_checkpoint(file, c);

    SECTION("round trip, bit for bit") {
        const Checkpoint r = read_checkpoint(file);
        REQUIRE(r.pipeline_history.size() == 2);
        CHECK(same_bits(r.pipeline_history[0], sample_history(0)));
        CHECK(same_bits(r.pipeline_history[1], sample_history(1)));
        REQUIRE(r.guard.has_value());
        CHECK(r.guard->figures == sample_guard().figures);
        CHECK(same_bits(r.guard->parameters, sample_guard().parameters));
        CHECK(same_bits(r.guard->optimizer, sample_guard().optimizer));
        CHECK(same_bits(r.params, c.params));
        const H5File h5 = H5File::open(file.string());
        CHECK(h5.read_int_attribute("/", "strata_format_version") == 4);
        CHECK(h5.read_int_attribute("/pipeline", "ranks") == 2);
    }
    SECTION("one flipped byte in rank 1's history fails its checksum") {
        const std::vector<float> h = sample_history(1);
        corrupt_bytes(file, std::vector<float>(h.begin() + 3, h.end()));
        CHECK_THROWS_WITH(read_checkpoint(file),
                          Contains("/pipeline/history_rank_00001: checksum mismatch"));
    }
    SECTION("one flipped byte in the guard's weights fails their checksum") {
        corrupt_bytes(file, sample_guard().parameters);
        CHECK_THROWS_WITH(read_checkpoint(file),
                          Contains("/pipeline/guard_parameters: checksum mismatch"));
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

TEST_CASE("a format 3 checkpoint is still read; a newer format is refused",
          "[training][checkpoint]") {
    TempDir dir("v3");
    const fs::path file = dir.path / "c.h5";
    write_checkpoint(file, sample_checkpoint(5));  // format 3's layout: no /pipeline
    set_version(file, 3);
    const Checkpoint r = read_checkpoint(file);
    CHECK(r.epoch == 5);
    CHECK(same_bits(r.params, sample_checkpoint(5).params));
    CHECK(r.history.size() == 3);
    CHECK(r.pipeline_history.empty());
    CHECK_FALSE(r.guard.has_value());

    set_version(file, 5);
    CHECK_THROWS_WITH(read_checkpoint(file),
                      Contains("strata_format_version 5 is not supported (this strata reads "
                               "versions 2 to 4; it was written by a newer strata)"));
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
                      Contains("different dataset"));
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
                      Contains("different training options"));

    // Graph parallelism and the layer pipeline: said plainly, both ways.
    Checkpoint pipelined = c;
    pipelined.identity.training = c.identity.training + ", parallel pipeline, stages 2, ways 1";
    CHECK_THROWS_WITH(check_identity(pipelined, c.identity, IdentityCheck::all, "c.h5"),
                      Contains("c.h5: this checkpoint was written by a --parallel pipeline run but "
                               "this run is --parallel graph"));
    CHECK_THROWS_WITH(check_identity(c, pipelined.identity, IdentityCheck::all, "c.h5"),
                      Contains("written by a --parallel graph run but this run is --parallel "
                               "pipeline"));
    other = pipelined.identity;
    other.training = c.identity.training + ", parallel pipeline, stages 1, ways 2";
    CHECK_THROWS_WITH(check_identity(pipelined, other, IdentityCheck::all, "c.h5"),
                      Contains("different training options") && Contains("stages 2, ways 1"));
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
                      Contains("c.h5: this checkpoint belongs to a different dataset") &&
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
        same_bits(c.optimizer_state, want.optimizer_state) &&
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
              c.guard.has_value() && c.guard->figures == sample_guard().figures &&
              same_bits(c.guard->parameters, sample_guard().parameters) &&
              same_bits(c.guard->optimizer, sample_guard().optimizer) && c.epoch == 8;
    for (int r = 0; ok && r < comm.size(); ++r) {
        const auto& h = c.pipeline_history[static_cast<std::size_t>(r)];
        // Its own on every rank; the others' only on the root.
        ok = r == comm.rank() || comm.rank() == 0 ? same_bits(h, sample_history(r)) : h.empty();
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
    PipelinedAggregation aggregation_;
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
             r.guard.has_value() && r.guard->figures == sample_guard().figures;
        for (int rank = 0; ok && rank < comm.size(); ++rank) {
            ok =
                same_bits(r.pipeline_history[static_cast<std::size_t>(rank)], sample_history(rank));
        }
        ok = ok && CheckpointDir(dir.path).list().size() == 2;
    }
    CHECK(all_ranks(ok));
}
