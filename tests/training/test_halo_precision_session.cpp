// Compressed halos in whole runs (Session over the bundled Cora, 2 ranks): bf16 and int8 train
// GCN with losses near fp32's, the same bits under every recompute mode and overlap off; bf16 sends
// exactly half of fp32's halo bytes (GAT's attention halo exchange too); the precision guard
// evaluates with fp32 halos beside each evaluation, and a margin the gap always exceeds switches
// the run to fp32 after two evaluations, printed and recorded (and from then on the epochs send
// fp32's bytes); the options the wire path cannot serve yet are refused by name.
// The layer pipeline (2 stages): bf16 and int8 stage transfers train near fp32 with the bytes
// the records say; its precision guard (the next step at fp32 beside the run's precision) switches
// with a margin -1 after two evaluations, and a run resumed from a checkpoint written after the
// switch stays fp32 and continues the uninterrupted run bit for bit. Stochastic rounding
// (halo_rounding) sends nearest's bytes, repeats its own bits (also recomputed), and differs.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "layers/model_zoo.hpp"
#include "src/base/error.hpp"
#include "tests/support/all_ranks.hpp"
#include "training/checkpoint.hpp"
#include "training/session.hpp"

#include <unistd.h>

using namespace strata;
using Catch::Matchers::Contains;
using strata::test::all_ranks;

namespace {

const std::string cora = std::string(STRATA_DATA_DIR) + "/cora.h5";

Runtime one_thread() {
    return open_runtime({.device = "cpu", .comm = "mpi", .threads = 1});
}

RunConfig run_at(const std::string& precision, int epochs) {
    RunConfig c;
    c.data = cora;
    c.epochs = epochs;
    c.seed = 1;
    c.partition_method = "metis";
    c.halo_precision = precision;
    return c;
}

class Records final : public RunObserver {
public:
    void note(const std::string& text, bool) override { notes.push_back(text); }
    void epoch(const EpochStats& s) override { epochs.push_back(s); }
    std::vector<EpochStats> epochs;
    std::vector<std::string> notes;
};

std::vector<EpochStats> train(const RunConfig& c, Records& records) {
    Runtime runtime = one_thread();
    Session session(c, runtime, {.observer = &records});
    (void)session.run();
    return records.epochs;
}

RunConfig pipeline_at(const std::string& precision, int epochs) {
    RunConfig c = run_at(precision, epochs);
    c.parallel = "pipeline";  // 2 stages x 8 chunks on the 2 ranks
    return c;
}

/// One directory for every rank (rank 0's pid), removed at the end.
struct SharedDir {
    std::filesystem::path path;
    explicit SharedDir(const std::string& tag) {
        int pid = static_cast<int>(getpid());
        MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
        path = std::filesystem::temp_directory_path() /
               ("strata-test-precision-" + tag + "-" + std::to_string(pid));
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) {
            std::filesystem::remove_all(path);
            std::filesystem::create_directories(path);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    ~SharedDir() {
        MPI_Barrier(MPI_COMM_WORLD);
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

int said(const Records& records, const std::string& text) {
    int n = 0;
    for (const std::string& note : records.notes) {
        n += note.find(text) != std::string::npos ? 1 : 0;
    }
    return n;
}

}  // namespace

TEST_CASE("compressed halos: GCN on Cora trains near fp32; bf16 sends half the bytes",
          "[session][halo_precision]") {
    constexpr int epochs = 8;
    Records exact;
    Records bf16;
    Records int8;
    const std::vector<EpochStats> a = train(run_at("fp32", epochs), exact);
    const std::vector<EpochStats> b = train(run_at("bf16", epochs), bf16);
    const std::vector<EpochStats> q = train(run_at("int8", epochs), int8);
    REQUIRE(a.size() == epochs);
    REQUIRE(b.size() == epochs);
    REQUIRE(q.size() == epochs);
    bool ok = true;
    for (std::size_t e = 0; e < a.size(); ++e) {
        INFO("epoch " << e + 1);
        CHECK(std::fabs(b[e].loss - a[e].loss) <= 0.02 * a[e].loss);
        CHECK(std::fabs(q[e].loss - a[e].loss) <= 0.05 * a[e].loss);
        CHECK(std::fabs(q[e].val_acc - a[e].val_acc) <= 0.05);
        CHECK(a[e].halo_precision.empty());  // fp32 has no guard
        CHECK(b[e].halo_precision == "bf16");
        CHECK(q[e].halo_precision == "int8");
        CHECK(b[e].fp32_val_acc.has_value());
        // bf16 values are 2 bytes: every message exactly half of fp32's (forward, backward and
        // the evaluation's forward); int8: a quarter plus 4 bytes a row.
        CHECK(2 * b[e].halo_bytes == a[e].halo_bytes);
        CHECK(q[e].halo_bytes > a[e].halo_bytes / 4);
        CHECK((q[e].halo_bytes - a[e].halo_bytes / 4) % 4 == 0);
        ok = ok && 2 * b[e].halo_bytes == a[e].halo_bytes && a[e].halo_bytes > 0;
    }
    CHECK(a.back().loss != b.back().loss);  // the runs did differ
    REQUIRE(all_ranks(ok));
}

TEST_CASE("compressed halos: the recompute modes and overlap off give the same bits",
          "[session][halo_precision]") {
    // Packing is deterministic, so a recomputed aggregation re-sends the same int8 rows.
    Records none_records;
    const std::vector<EpochStats> none = train(run_at("int8", 4), none_records);
    REQUIRE(none.size() == 4);
    for (const char* mode : {"aggregation", "all"}) {
        RunConfig c = run_at("int8", 4);
        c.recompute = mode;
        Records records;
        const std::vector<EpochStats> again = train(c, records);
        REQUIRE(again.size() == 4);
        for (std::size_t e = 0; e < none.size(); ++e) {
            INFO(mode << ", epoch " << e + 1);
            CHECK(again[e].loss == none[e].loss);
            CHECK(again[e].val_acc == none[e].val_acc);
            CHECK(again[e].halo_bytes == none[e].halo_bytes);
        }
    }
    RunConfig off = run_at("int8", 4);
    off.overlap = false;
    Records off_records;
    const std::vector<EpochStats> serial = train(off, off_records);
    REQUIRE(serial.size() == 4);
    for (std::size_t e = 0; e < none.size(); ++e) {
        CHECK(serial[e].loss == none[e].loss);
    }
}

TEST_CASE(
    "stochastic halo rounding: nearest's bytes, its own bits again, under recompute and "
    "overlap off; GAT's exchange too",
    "[session][halo_precision]") {
    const auto at = [](const std::string& precision, const std::string& rounding,
                       const std::string& model) {
        RunConfig c = run_at(precision, 4);
        c.halo_rounding = rounding;
        if (model != "gcn") {
            c.model = find_model(model).recipe.spec;
        }
        return c;
    };
    bool ok = true;
    for (const char* model : {"gcn", "gat"})
        for (const char* precision : {"int8", "bf16"}) {
            INFO(model << ", " << precision);
            Records r_nearest;
            Records r_stochastic;
            Records r_again;
            const std::vector<EpochStats> nearest =
                train(at(precision, "nearest", model), r_nearest);
            const std::vector<EpochStats> stochastic =
                train(at(precision, "stochastic", model), r_stochastic);
            const std::vector<EpochStats> again =
                train(at(precision, "stochastic", model), r_again);
            REQUIRE(stochastic.size() == 4);
            REQUIRE(nearest.size() == 4);
            REQUIRE(again.size() == 4);
            for (std::size_t e = 0; e < stochastic.size(); ++e) {
                INFO("epoch " << e + 1);
                CHECK(stochastic[e].halo_bytes == nearest[e].halo_bytes);  // the same records
                CHECK(std::fabs(stochastic[e].loss - nearest[e].loss) <= 0.02 * nearest[e].loss);
                CHECK(again[e].loss == stochastic[e].loss);  // keyed, not drawn
                CHECK(again[e].val_acc == stochastic[e].val_acc);
            }
            // Epoch 1's forward is the first to round: from its loss on, the runs differ.
            CHECK(stochastic.back().loss != nearest.back().loss);
            ok = ok && stochastic.back().loss != nearest.back().loss &&
                 stochastic.back().halo_bytes == nearest.back().halo_bytes;
        }
    // A recomputed aggregation keys as the forward it repeats: the same rows, the same bits.
    Records base_records;
    const std::vector<EpochStats> base = train(at("int8", "stochastic", "gcn"), base_records);
    REQUIRE(base.size() == 4);
    for (const char* mode : {"aggregation", "all"}) {
        RunConfig c = at("int8", "stochastic", "gcn");
        c.recompute = mode;
        Records records;
        const std::vector<EpochStats> again = train(c, records);
        REQUIRE(again.size() == 4);
        for (std::size_t e = 0; e < base.size(); ++e) {
            INFO(mode << ", epoch " << e + 1);
            CHECK(again[e].loss == base[e].loss);
        }
    }
    RunConfig off = at("int8", "stochastic", "gcn");
    off.overlap = false;
    Records off_records;
    const std::vector<EpochStats> serial = train(off, off_records);
    REQUIRE(serial.size() == 4);
    for (std::size_t e = 0; e < base.size(); ++e) {
        CHECK(serial[e].loss == base[e].loss);
    }
    REQUIRE(all_ranks(ok));
}

TEST_CASE("compressed halos: GAT's attention halo exchange sends them too",
          "[session][halo_precision]") {
    RunConfig exact_config = run_at("fp32", 3);
    exact_config.model = find_model("gat").recipe.spec;
    RunConfig bf16_config = exact_config;
    bf16_config.halo_precision = "bf16";
    Records exact;
    Records bf16;
    const std::vector<EpochStats> a = train(exact_config, exact);
    const std::vector<EpochStats> b = train(bf16_config, bf16);
    REQUIRE(a.size() == 3);
    REQUIRE(b.size() == 3);
    for (std::size_t e = 0; e < a.size(); ++e) {
        CHECK(2 * b[e].halo_bytes == a[e].halo_bytes);  // gathers and scatter_adds alike
        CHECK(std::fabs(b[e].loss - a[e].loss) <= 0.02 * a[e].loss);
    }
    CHECK(all_ranks(a.back().halo_bytes > 0));
}

TEST_CASE("precision guard: a gap above the margin twice in a row switches the run to fp32",
          "[session][halo_precision]") {
    RunConfig c = run_at("int8", 5);
    c.precision_margin = -1.0;  // every gap exceeds it: the switch after the second evaluation
    Records records;
    const std::vector<EpochStats> s = train(c, records);
    Records exact;
    const std::vector<EpochStats> f = train(run_at("fp32", 5), exact);
    REQUIRE(s.size() == 5);
    CHECK(s[0].halo_precision == "int8");
    CHECK(s[0].precision_guard.empty());
    CHECK(s[1].halo_precision == "int8");
    CHECK_THAT(s[1].precision_guard,
               Contains("halo precision int8 -> fp32 from epoch 3 on: validation accuracy with "
                        "fp32 halos"));
    CHECK_THAT(s[1].precision_guard, Contains("at 2 evaluations in a row"));
    for (std::size_t e = 2; e < s.size(); ++e) {
        CHECK(s[e].halo_precision == "fp32");
        CHECK_FALSE(s[e].fp32_val_acc.has_value());
        CHECK(s[e].halo_bytes == f[e].halo_bytes);  // fp32's bytes from the switch on
        CHECK(s[e].precision_guard.empty());
    }
    CHECK(s[0].halo_bytes < f[0].halo_bytes);
    int printed = 0;
    for (const std::string& note : records.notes) {
        printed += note.find("precision guard after epoch 2: halo precision int8 -> fp32") !=
                           std::string::npos
                       ? 1
                       : 0;
    }
    CHECK(printed == 1);  // printed once
    // A margin never exceeded: no switch.
    c.precision_margin = 1.5;
    Records calm;
    for (const EpochStats& e : train(c, calm)) {
        CHECK(e.halo_precision == "int8");
        CHECK(e.precision_guard.empty());
    }
}

TEST_CASE("compressed stage transfers: a 2-stage pipeline on Cora trains near fp32",
          "[session][halo_precision][pipeline]") {
    constexpr int epochs = 6;
    Records exact;
    Records bf16;
    Records int8;
    const std::vector<EpochStats> a = train(pipeline_at("fp32", epochs), exact);
    const std::vector<EpochStats> b = train(pipeline_at("bf16", epochs), bf16);
    const std::vector<EpochStats> q = train(pipeline_at("int8", epochs), int8);
    REQUIRE(a.size() == epochs);
    REQUIRE(b.size() == epochs);
    REQUIRE(q.size() == epochs);
    constexpr std::int64_t rows = 2708;  // every row crosses each cut once forward, once back
    bool ok = true;
    for (std::size_t e = 0; e < a.size(); ++e) {
        INFO("epoch " << e + 1);
        REQUIRE(a[e].pipeline.has_value());
        REQUIRE(b[e].pipeline.has_value());
        REQUIRE(q[e].pipeline.has_value());
        const std::int64_t fp32_bytes = a[e].pipeline->stage_bytes;
        CHECK(std::fabs(b[e].loss - a[e].loss) <= 0.02 * a[e].loss);
        CHECK(std::fabs(q[e].loss - a[e].loss) <= 0.05 * a[e].loss);
        CHECK(std::fabs(q[e].val_acc - a[e].val_acc) <= 0.05);
        CHECK(b[e].halo_precision == "bf16");
        CHECK(q[e].halo_precision == "int8");
        CHECK_FALSE(b[e].fp32_val_acc.has_value());  // the pipeline compares the next step
        CHECK(b[e].precision_guard.empty());
        CHECK(q[e].precision_guard.empty());
        // bf16: 2 bytes a value; int8: 1 byte a value + 4 a row and cut tensor.
        CHECK(2 * b[e].pipeline->stage_bytes == fp32_bytes);
        const std::int64_t extra = q[e].pipeline->stage_bytes - fp32_bytes / 4;
        CHECK(extra > 0);
        CHECK(extra % (2 * rows * 4) == 0);
        ok = ok && 2 * b[e].pipeline->stage_bytes == fp32_bytes && fp32_bytes > 0 && extra > 0 &&
             extra % (2 * rows * 4) == 0;
    }
    CHECK(a.back().loss != b.back().loss);  // the runs did differ
    CHECK(a.back().loss != q.back().loss);
    REQUIRE(all_ranks(ok));
}

TEST_CASE("precision guard with the pipeline: the forced switch, and it survives a resume",
          "[session][halo_precision][pipeline]") {
    RunConfig c = pipeline_at("int8", 5);
    c.precision_margin = -1.0;  // every gap exceeds it: the switch after the second evaluation
    Records records;
    const std::vector<EpochStats> s = train(c, records);
    Records exact;
    const std::vector<EpochStats> f = train(pipeline_at("fp32", 5), exact);
    REQUIRE(s.size() == 5);
    REQUIRE(f.size() == 5);
    CHECK(s[0].halo_precision == "int8");
    CHECK(s[0].precision_guard.empty());
    CHECK(s[1].halo_precision == "int8");
    CHECK_THAT(s[1].precision_guard,
               Contains("halo precision int8 -> fp32 from epoch 3 on: the next step's training "
                        "loss with fp32 stage transfers"));
    CHECK_THAT(s[1].precision_guard, Contains("at 2 evaluations in a row"));
    CHECK(s[0].pipeline->stage_bytes < f[0].pipeline->stage_bytes);
    for (std::size_t e = 2; e < s.size(); ++e) {
        CHECK(s[e].halo_precision == "fp32");
        CHECK(s[e].pipeline->stage_bytes == f[e].pipeline->stage_bytes);  // fp32's from then on
        CHECK(s[e].precision_guard.empty());
    }
    CHECK(said(records, "precision guard after epoch 2: halo precision int8 -> fp32") == 1);

    // Stopped after epoch 3 (switched), resumed to 5: fp32 still, the uninterrupted run's bits.
    const SharedDir dir("resume");
    RunConfig first = c;
    first.epochs = 3;
    first.checkpoint_dir = (dir.path / "ck").string();
    Records before;
    (void)train(first, before);
    RunConfig second = first;
    second.epochs = 5;
    second.resume = true;
    Records after;
    const std::vector<EpochStats> r = train(second, after);
    REQUIRE(r.size() == 2);
    CHECK(said(after, "halo precision int8 -> fp32, as switched before the checkpoint") == 1);
    bool ok = true;
    for (std::size_t e = 0; e < r.size(); ++e) {
        INFO("resumed epoch " << r[e].epoch);
        CHECK(r[e].halo_precision == "fp32");
        CHECK(r[e].loss == s[e + 3].loss);
        CHECK(r[e].pipeline->stage_bytes == f[e + 3].pipeline->stage_bytes);
        ok = ok && r[e].loss == s[e + 3].loss && r[e].halo_precision == "fp32";
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {  // the file says so; a run that never switched leaves the field out
        CHECK(read_checkpoint(dir.path / "ck" / "ckpt-000003.h5").halo_precision_switched ==
              "fp32");
    }
    RunConfig calm = pipeline_at("int8", 2);
    calm.checkpoint_dir = (dir.path / "calm").string();
    Records calm_records;
    (void)train(calm, calm_records);
    if (rank == 0) {
        CHECK(
            read_checkpoint(dir.path / "calm" / "ckpt-000002.h5").halo_precision_switched.empty());
    }
    REQUIRE(all_ranks(ok));
}

TEST_CASE("compressed halos: CUDA and unknown precisions are refused by name",
          "[session][halo_precision]") {
    RunConfig c = run_at("int8", 1);
    c.device = "cuda";
    CHECK_THROWS_WITH(validate(c), Contains("halo_precision = 'int8': packs halo rows on the "
                                            "host: not supported with device = cuda yet"));
    c = run_at("fp16", 1);
    CHECK_THROWS_WITH(validate(c),
                      Contains("halo_precision = 'fp16': expected fp32, bf16 or int8"));
    c = run_at("fp32", 1);
    c.halo_rounding = "stochastic";
    CHECK_THROWS_WITH(validate(c), Contains("halo_rounding = 'stochastic': rounds compressed "
                                            "halos: needs halo_precision = bf16 or int8"));
    c = pipeline_at("int8", 1);
    c.halo_rounding = "stochastic";
    CHECK_THROWS_WITH(validate(c),
                      Contains("halo_rounding = 'stochastic': is for graph parallelism: the layer "
                               "pipeline's stage transfers and mirrors round to nearest"));
    c = run_at("int8", 1);
    c.halo_rounding = "up";
    CHECK_THROWS_WITH(validate(c),
                      Contains("halo_rounding = 'up': expected nearest or stochastic"));
}
