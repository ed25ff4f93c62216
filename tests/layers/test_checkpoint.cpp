// Checkpoints: file round trip, keeping the newest two, detecting corrupt and truncated files
// (falling back to the previous one), refusing another model/dataset/partition, broadcasting,
// and training resumed from a checkpoint ≡ an uninterrupted run, bit for bit (same K).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include <catch2/catch.hpp>

#include "datasets/normalize.hpp"
#include "layers/checkpoint.hpp"
#include "layers/model_builder.hpp"
#include "partition/local_part.hpp"
#include "partition/partition.hpp"
#include "src/base/error.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/nn/optimizer.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"

#include <unistd.h>

using namespace strata;
using Catch::Matchers::Contains;
using strata::test::all_ranks;
namespace fs = std::filesystem;

namespace {

/// A fresh directory per test and process (ranks have different pids).
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& tag) {
        path = fs::temp_directory_path() /
               ("strata-test-checkpoint-" + tag + "-" + std::to_string(getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

Checkpoint sample_checkpoint(std::int64_t epoch) {
    Checkpoint c;
    c.identity = {.model = "gcn, 2 layers, hidden 4",
                  .parameters = "gcn.weight 3x4",
                  .dataset = "crc32:0badf00d",
                  .partition = "in memory, 1 part",
                  .training = "adam lr 0.01, seed 7"};
    c.gcn.layers = 3;
    c.gcn.hidden = 5;
    c.gcn.dropout = 0.25f;
    c.gcn.weight_decay = 1e-3f;
    c.gcn.decay_all_layers = true;
    c.gcn.bias = false;
    c.gcn.seed = 0xfedcba9876543210ULL;  // above 2^63: stored without a sign
    c.row_normalize = true;
    c.partition_method = "random";
    c.dataset_path = "data/g.h5";
    c.epoch = epoch;
    c.early_stopped = epoch % 2 == 0;
    // A recognisable byte pattern (found again in the file by the corruption test).
    c.params = {1.5f, -2.25f, 3e-8f, 1234.5f, 0.1f, -0.0f, 7.0f, static_cast<float>(epoch)};
    c.optimizer_state = {0.5f, 0.25f, 0.125f, static_cast<float>(epoch)};
    EpochStats best;
    best.epoch = epoch - 1;
    best.loss = 0.6931471805599453;
    best.train_acc = 0.9;
    best.val_acc = 0.8;
    best.test_acc = 0.7;
    best.val_loss = 1.0 / 3.0;
    c.best = best;
    c.val_losses = {2.0, 1.5, 1.0 / 3.0};
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

TEST_CASE("a checkpoint file reads back exactly what was written", "[layers][checkpoint]") {
    TempDir dir("roundtrip");
    const Checkpoint c = sample_checkpoint(6);
    write_checkpoint(dir.path / "c.h5", c);
    const Checkpoint r = read_checkpoint(dir.path / "c.h5");
    CHECK(r.identity.model == c.identity.model);
    CHECK(r.identity.parameters == c.identity.parameters);
    CHECK(r.identity.dataset == c.identity.dataset);
    CHECK(r.identity.partition == c.identity.partition);
    CHECK(r.identity.training == c.identity.training);
    CHECK(r.gcn.layers == 3);
    CHECK(r.gcn.hidden == 5);
    CHECK(r.gcn.dropout == 0.25f);
    CHECK(r.gcn.weight_decay == 1e-3f);
    CHECK(r.gcn.decay_all_layers);
    CHECK_FALSE(r.gcn.bias);
    CHECK(r.gcn.seed == 0xfedcba9876543210ULL);
    CHECK(r.row_normalize);
    CHECK(r.partition_method == "random");
    CHECK(r.dataset_path == "data/g.h5");
    CHECK(r.epoch == 6);
    CHECK(r.early_stopped);
    CHECK(same_bits(r.params, c.params));  // -0.0f and 3e-8f included
    CHECK(same_bits(r.optimizer_state, c.optimizer_state));
    REQUIRE(r.best.has_value());
    CHECK(r.best->epoch == 5);
    CHECK(r.best->loss == 0.6931471805599453);
    CHECK(r.best->val_acc == 0.8);
    CHECK(r.best->val_loss == 1.0 / 3.0);
    CHECK(r.val_losses == std::vector<double>{2.0, 1.5, 1.0 / 3.0});
    // No temporary is left next to it.
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("a checkpoint directory keeps the newest two, ordered by epoch", "[layers][checkpoint]") {
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
          "[layers][checkpoint]") {
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
        CHECK_THROWS_AS(read_checkpoint(newest), strata::Error);
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

TEST_CASE("a checkpoint of another model, dataset or partition is refused, naming the field",
          "[layers][checkpoint]") {
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
    CHECK_THROWS_WITH(check_identity(c, other, IdentityCheck::all, "c.h5"),
                      Contains("different partition"));
    // predict may run on another K: the partition is not compared.
    CHECK_NOTHROW(check_identity(c, other, IdentityCheck::model_and_dataset, "c.h5"));
    other = c.identity;
    other.training = "adam lr 0.02, seed 7";
    CHECK_THROWS_WITH(check_identity(c, other, IdentityCheck::all, "c.h5"),
                      Contains("different training options"));
}

TEST_CASE("broadcast_checkpoint gives every rank rank 0's state", "[layers][checkpoint][mpi]") {
    MpiCommunicator comm;
    Checkpoint c;
    if (comm.rank() == 0) {
        c = sample_checkpoint(8);
    }
    broadcast_checkpoint(c, comm, 0);
    const Checkpoint want = sample_checkpoint(8);
    const bool ok = c.epoch == 8 && c.early_stopped && same_bits(c.params, want.params) &&
                    same_bits(c.optimizer_state, want.optimizer_state) &&
                    c.val_losses == want.val_losses && c.best.has_value() && c.best->epoch == 7 &&
                    c.best->val_loss == 1.0 / 3.0 && c.gcn.layers == 3 && c.gcn.hidden == 5 &&
                    c.gcn.dropout == 0.25f && !c.gcn.bias && c.gcn.decay_all_layers &&
                    c.gcn.seed == 0xfedcba9876543210ULL && c.row_normalize;
    CHECK(all_ranks(ok));
}

namespace {

/// Everything one rank needs to train the GCN on a small generated graph.
class Run {
public:
    Run(Communicator& comm, const GraphDataset& g, const Partition& p, const GcnOptions& gcn)
        : backend_(make_cpu_backend(1)),
          part_(build_local_part(g, gcn_normalize(g), p, comm.rank())),
          blocks_(*backend_, part_.graph),
          features_(DenseMatrix::upload(*backend_, part_.features)),
          data_{.features = &features_,
                .labels = Buffer<index_t>(*backend_, std::span<const index_t>(part_.labels)),
                .train_mask = Buffer<std::uint8_t>(*backend_,
                                                   std::span<const std::uint8_t>(part_.train_mask)),
                .val_mask =
                    Buffer<std::uint8_t>(*backend_, std::span<const std::uint8_t>(part_.val_mask)),
                .test_mask =
                    Buffer<std::uint8_t>(*backend_, std::span<const std::uint8_t>(part_.test_mask)),
                .global_train = part_.global_train},
          model_(*backend_) {
        build_gcn(model_, blocks_, comm, part_.features.cols,
                  static_cast<index_t>(part_.num_classes), gcn);
        model_.allocate(part_.graph.num_owned, part_.features.cols, gcn.seed);
        adam_ = std::make_unique<Adam>(*backend_, model_.params().size(), AdamOptions{.lr = 0.02f});
        trainer_ = std::make_unique<Trainer>(model_, *adam_, *backend_, comm, data_);
    }
    Model& model() { return model_; }
    Adam& adam() { return *adam_; }
    EpochStats epoch(std::int64_t e) { return trainer_->train_epoch(e); }

private:
    std::unique_ptr<Backend> backend_;
    LocalPart part_;
    GraphBlocks blocks_;
    DenseMatrix features_;
    TrainData data_;
    Model model_;
    std::unique_ptr<Adam> adam_;
    std::unique_ptr<Trainer> trainer_;
};

bool same_stats(const EpochStats& a, const EpochStats& b) {
    return a.epoch == b.epoch && a.loss == b.loss && a.train_acc == b.train_acc &&
           a.val_acc == b.val_acc && a.test_acc == b.test_acc && a.val_loss == b.val_loss &&
           a.halo_bytes == b.halo_bytes;
}

}  // namespace

TEST_CASE("training resumed from a checkpoint equals an uninterrupted run bit for bit",
          "[layers][checkpoint][mpi]") {
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
    std::vector<EpochStats> want;
    for (int e = 1; e <= total; ++e) {
        want.push_back(uninterrupted.epoch(e));
    }

    // Interrupted after `stop` epochs: rank 0 writes, reads back and broadcasts.
    TempDir dir("resume");
    Checkpoint state;
    {
        Run first(comm, g, p, gcn);
        for (int e = 1; e <= stop; ++e) {
            first.epoch(e);
        }
        if (comm.rank() == 0) {
            state.epoch = stop;
            state.params = first.model().download_params();
            state.optimizer_state = first.adam().state();
            write_checkpoint(dir.path / "c.h5", state);
            state = read_checkpoint(dir.path / "c.h5");
        }
    }
    broadcast_checkpoint(state, comm, 0);
    Run resumed(comm, g, p, gcn);
    resumed.model().upload_params(state.params);
    resumed.adam().set_state(state.optimizer_state);
    bool ok = state.epoch == stop;
    for (int e = stop + 1; e <= total; ++e) {
        const EpochStats s = resumed.epoch(e);
        if (!same_stats(s, want[static_cast<std::size_t>(e - 1)])) {
            UNSCOPED_INFO("epoch " << e << ": loss " << s.loss << " vs uninterrupted "
                                   << want[static_cast<std::size_t>(e - 1)].loss);
            ok = false;
        }
    }
    ok = ok &&
         same_bits(resumed.model().download_params(), uninterrupted.model().download_params()) &&
         same_bits(resumed.adam().state(), uninterrupted.adam().state());
    CHECK(all_ranks(ok));

    // The test has teeth: resuming without the optimizer state does not give the same run.
    Run forgetful(comm, g, p, gcn);
    forgetful.model().upload_params(state.params);
    for (int e = stop + 1; e <= total; ++e) {
        forgetful.epoch(e);
    }
    CHECK(all_ranks(
        !same_bits(forgetful.model().download_params(), uninterrupted.model().download_params())));
}
