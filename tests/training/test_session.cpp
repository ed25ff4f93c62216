// The Session, on 1 and 2 ranks over the bundled Cora: outputs are checked before any data is
// read; the hooks run in their documented order; a stop one rank's hook asks for stops every
// rank; a graph in memory trains exactly as its file; the first metrics record carries the run
// configuration; a recipe's row normalization skips features with negative values; options the
// data cannot serve are refused by name.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <mpi.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "datasets/graph_io.hpp"
#include "src/base/error.hpp"
#include "tests/support/all_ranks.hpp"
#include "training/metrics_writer.hpp"
#include "training/session.hpp"

#include <unistd.h>

using namespace strata;
using Catch::Matchers::Contains;
using strata::test::all_ranks;
namespace fs = std::filesystem;

namespace {

const std::string cora = std::string(STRATA_DATA_DIR) + "/cora.h5";

/// One directory for every rank (rank 0's pid), removed at the end.
struct SharedDir {
    fs::path path;
    explicit SharedDir(const std::string& tag) {
        int pid = static_cast<int>(getpid());
        MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
        path =
            fs::temp_directory_path() / ("strata-test-session-" + tag + "-" + std::to_string(pid));
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) {
            fs::remove_all(path);
            fs::create_directories(path);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    ~SharedDir() {
        MPI_Barrier(MPI_COMM_WORLD);
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

Runtime one_thread() {
    return open_runtime({.device = "cpu", .comm = "mpi", .threads = 1});
}

RunConfig short_run(int epochs) {
    RunConfig c;
    c.data = cora;
    c.epochs = epochs;
    c.seed = 1;
    c.partition_method = "metis";
    return c;
}

/// Records what it sees, in the order it sees it.
class Recorder final : public RunObserver {
public:
    void started(const RunSummary& s) override {
        events.push_back("started " + s.data);
        notes.insert(notes.end(), s.notes.begin(), s.notes.end());
    }
    void note(const std::string& text, bool) override { notes.push_back(text); }
    void epoch(const EpochStats& s) override {
        events.push_back("epoch " + std::to_string(s.epoch));
        losses.push_back(s.loss);
    }
    void finished(const RunResult& r) override {
        events.push_back("finished " + std::to_string(r.epoch));
    }
    std::vector<std::string> events;
    std::vector<std::string> notes;
    std::vector<double> losses;
};

/// A caller's hook: asks to stop after `epoch` on `rank` only, and logs what it sees.
class StopOnOneRank final : public FitHook {
public:
    StopOnOneRank(int rank, int epoch, std::vector<std::string>& log)
        : rank_(rank), epoch_(epoch), log_(log) {}
    void begin_epoch(std::int64_t epoch) override {
        log_.push_back("hook begin " + std::to_string(epoch));
    }
    void end_epoch(const EpochStats& stats, FitState& state) override {
        log_.push_back("hook end " + std::to_string(stats.epoch));
        int me = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (me == rank_ && stats.epoch == epoch_) {
            state.stop_reason = "asked by the test";
        }
    }

private:
    int rank_;
    int epoch_;
    std::vector<std::string>& log_;
};

/// A Session of `c` (whose data does not exist) is refused for its existing output `option`
/// before the data is read. Collective.
void check_existing_output_refused(const RunConfig& c, Runtime& runtime, const char* option) {
    if (runtime.comm->rank() ==
        0) {  // rank 0 checks the outputs; the others would wait in the load
        try {
            Session session(c, runtime);
            FAIL("an existing " << option << " file was accepted");
        } catch (const OptionError& e) {
            CHECK(e.option() == option);
            CHECK_THAT(e.message(), Contains("the file exists; set overwrite to replace it"));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace

TEST_CASE("session: an existing metrics file is refused before any data is read", "[session]") {
    const SharedDir dir("metrics");
    const std::string metrics = (dir.path / "m.jsonl").string();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        std::ofstream(metrics) << "{\"epoch\": 1}\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    Runtime runtime = one_thread();
    RunConfig c = short_run(2);
    c.data = (dir.path / "does-not-exist.h5").string();  // never read: the refusal comes first
    c.metrics = metrics;
    check_existing_output_refused(c, runtime, "metrics");
}

TEST_CASE("session: hooks run in order; one rank's stop stops every rank", "[session]") {
    const SharedDir dir("order");
    Runtime runtime = one_thread();
    const int ranks = runtime.comm->size();
    RunConfig c = short_run(6);
    c.metrics = (dir.path / "m.jsonl").string();
    c.checkpoint_dir = (dir.path / "ck").string();
    c.checkpoint_every = 0;
    std::vector<std::string> log;
    StopOnOneRank stop(ranks - 1, 3, log);
    Recorder recorder;
    Session session(c, runtime, {.observer = &recorder, .hooks = {&stop}});
    const RunResult result = session.run();
    CHECK(all_ranks(result.epoch == 3));
    const std::string reason = ranks == 1
                                   ? "asked by the test"
                                   : "asked by the test (rank " + std::to_string(ranks - 1) + ")";
    CHECK(all_ranks(result.stop_reason == reason));
    CHECK(log == std::vector<std::string>{"hook begin 1", "hook end 1", "hook begin 2",
                                          "hook end 2", "hook begin 3", "hook end 3"});
    CHECK(recorder.events == std::vector<std::string>{"started " + cora, "epoch 1", "epoch 2",
                                                      "epoch 3", "finished 3"});
    if (runtime.comm->rank() == 0) {
        // The metrics record and the checkpoint of the stopping epoch were written.
        CHECK(read_metrics_records(c.metrics).size() == 3);
        CHECK(fs::exists(fs::path(c.checkpoint_dir) / "ckpt-000003.h5"));
        CHECK(result.checkpoint == (fs::path(c.checkpoint_dir) / "ckpt-000003.h5").string());
    }
}

TEST_CASE("session: the first metrics record carries the configuration it ran", "[session]") {
    const SharedDir dir("config");
    Runtime runtime = one_thread();
    RunConfig c = short_run(2);
    c.metrics = (dir.path / "m.jsonl").string();
    Session session(c, runtime);
    (void)session.run();
    if (runtime.comm->rank() == 0) {
        const std::vector<std::string> records = read_metrics_records(c.metrics);
        REQUIRE(records.size() == 2);
        const auto first = nlohmann::json::parse(records[0]);
        CHECK(first["schema_version"] == metrics_schema_version);
        CHECK(first["config"] == nlohmann::json::parse(config_to_json(session.config())));
        CHECK(first["config"]["lr"] == 0.01);  // resolved from the recipe
        CHECK_FALSE(nlohmann::json::parse(records[1]).contains("config"));
        // The configuration runs again as it is.
        const RunConfig again = config_from_json(first["config"].dump(), "record");
        CHECK(config_to_json(again) == config_to_json(session.config()));
    }
}

TEST_CASE("session: a trace holds every rank's spans of the traced epochs", "[session]") {
    const SharedDir dir("trace");
    Runtime runtime = one_thread();
    const int ranks = runtime.comm->size();
    RunConfig c = short_run(5);
    c.trace = (dir.path / "t.json").string();
    c.trace_epochs = "2:4";
    std::vector<std::string> log;
    StopOnOneRank stop(0, 3, log);  // the run ends after epoch 3: the trace is written then
    Session session(c, runtime, {.hooks = {&stop}});
    CHECK(all_ranks(session.run().epoch == 3));
    if (runtime.comm->rank() == 0) {
        const auto file = nlohmann::json::parse(std::ifstream(c.trace));
        CHECK(file["otherData"]["epochs"] == "2..3");
        std::vector<int> named(static_cast<std::size_t>(ranks), 0);
        std::vector<std::vector<std::int64_t>> steps(static_cast<std::size_t>(ranks));
        std::vector<std::string> categories;
        for (const auto& e : file["traceEvents"]) {
            const auto pid = e["pid"].get<std::size_t>();
            REQUIRE(pid < named.size());
            if (e["name"] == "process_name") {
                named[pid] += 1;
                continue;
            }
            if (e["ph"] != "X") {
                continue;
            }
            CHECK(e["dur"].get<double>() >= 0.0);
            categories.push_back(e["cat"].get<std::string>());
            if (e["name"] == "training step") {
                steps[pid].push_back(e["args"]["value"].get<std::int64_t>());
            }
        }
        for (int r = 0; r < ranks; ++r) {
            CHECK(named[static_cast<std::size_t>(r)] == 1);
            CHECK(steps[static_cast<std::size_t>(r)] == std::vector<std::int64_t>{2, 3});
        }
        for (const char* category : {"gemm", "aggregation", "elementwise", "loss", "step"}) {
            CHECK(std::count(categories.begin(), categories.end(), category) > 0);
        }
        if (ranks > 1) {  // the halo exchange's waits and the gradients' all-reduces
            CHECK(std::count(categories.begin(), categories.end(), "wait") > 0);
        }
    }
    // An existing trace is refused before any data is read, unless overwrite.
    c.data = (dir.path / "does-not-exist.h5").string();
    check_existing_output_refused(c, runtime, "trace");
}

TEST_CASE("session: a graph in memory trains exactly as its file", "[session]") {
    Runtime runtime = one_thread();
    const GraphDataset graph = read_graph(cora);
    Recorder from_file;
    Recorder from_memory;
    {
        Session session(short_run(3), runtime, {.observer = &from_file});
        (void)session.run();
    }
    {
        RunConfig c = short_run(3);
        c.data.clear();
        Session session(c, runtime, {.input = {.graph = &graph}, .observer = &from_memory});
        (void)session.run();
    }
    REQUIRE(from_file.losses.size() == 3);
    CHECK(all_ranks(from_file.losses == from_memory.losses));  // bit for bit
}

TEST_CASE("session: a recipe row-normalizes non-negative features only", "[session]") {
    Runtime runtime = one_thread();
    const GraphDataset cora_graph = read_graph(cora);
    GraphDataset negative = cora_graph;
    negative.features.values[0] = -1.0f;  // one value, on one rank's part when there are two
    const auto run = [&](const GraphDataset& graph, std::optional<bool> normalize) {
        RunConfig c = short_run(2);
        c.data.clear();
        c.model.model = "sage";  // its recipe row-normalizes
        c.row_normalize_features = normalize;
        Recorder recorder;
        Session session(c, runtime, {.input = {.graph = &graph}, .observer = &recorder});
        (void)session.run();
        return std::make_tuple(*session.config().row_normalize_features, recorder.losses,
                               recorder.notes);
    };
    const auto said = [](const std::vector<std::string>& notes, const std::string& text) {
        return std::any_of(notes.begin(), notes.end(),
                           [&](const std::string& n) { return n.find(text) != std::string::npos; });
    };
    const std::string kept =
        "as stored, not row-normalized: the recipe row-normalizes "
        "non-negative features, and these have negative values";
    const auto [cora_recipe, cora_losses, cora_notes] = run(cora_graph, std::nullopt);
    CHECK(cora_recipe);
    CHECK(said(cora_notes, "row-normalised features"));
    CHECK_FALSE(said(cora_notes, kept));
    const auto [recipe, losses, notes] = run(negative, std::nullopt);
    CHECK_FALSE(recipe);  // what the metrics, checkpoints and predict record
    CHECK(said(notes, kept));
    CHECK(said(notes, "raw features"));
    const auto [raw, raw_losses, raw_notes] = run(negative, false);
    CHECK(all_ranks(losses == raw_losses));  // bit for bit: the features as stored
    const auto [asked, asked_losses, asked_notes] = run(negative, true);
    CHECK(asked);  // asked for: each row divided by its L1 norm
    CHECK_FALSE(said(asked_notes, kept));
    CHECK(all_ranks(asked_losses != raw_losses));
}

TEST_CASE("session: options the data cannot serve are refused by name", "[session]") {
    Runtime runtime = one_thread();
    RunConfig c = short_run(1);
    c.select_by = "val_auc";
    try {
        Session session(c, runtime);
        FAIL("val_auc accepted on a 7-class task");
    } catch (const OptionError& e) {
        CHECK(e.option() == "select_by");
        CHECK_THAT(e.message(), Contains("select_by = 'val_auc': needs a two-class task, but " +
                                         cora + " has 7 classes"));
    }
    c = short_run(1);
    c.plan = "auto";
    CHECK_THROWS_WITH(Session(c, runtime), Contains("plan = 'auto': resolve it into a layout"));
    // Two classes, but every validation vertex of class 0: ROC-AUC would be NaN at every
    // evaluation. Refused on every rank (the classes are counted over the parts).
    GraphDataset two = read_graph(cora);
    two.num_classes = 2;
    std::int64_t val = 0;
    for (std::size_t v = 0; v < two.labels.size(); ++v) {
        two.labels[v] = two.val_mask[v] != 0 ? 0 : two.labels[v] % 2;
        val += two.val_mask[v];
    }
    c = short_run(1);
    c.data.clear();
    c.select_by = "val_auc";
    try {
        Session session(c, runtime, {.input = {.graph = &two}});
        FAIL("val_auc accepted on validation vertices of one class");
    } catch (const OptionError& e) {
        CHECK(e.option() == "select_by");
        CHECK_THAT(e.message(), Contains("select_by = 'val_auc': needs validation vertices of "
                                         "both classes, but split 0 of the graph in memory has " +
                                         std::to_string(val) +
                                         " of class 0 and 0 of class 1: ROC-AUC is undefined "
                                         "(use val_acc or val_loss)"));
    }
}
