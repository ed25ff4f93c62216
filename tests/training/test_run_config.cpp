// The run configuration: its JSON form round-trips, a bad option is named with its value, the
// recipe fills what is unset, the layout's defaults follow the ranks, and the training identity
// is the string checkpoints of earlier strata stored (so they still resume).
#include <cmath>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "layers/model_zoo.hpp"
#include "src/base/error.hpp"
#include "training/run_config.hpp"

using namespace strata;
using Catch::Matchers::Contains;

namespace {

/// The OptionError `run` throws: its option and its message.
template <class Run>
std::pair<std::string, std::string> option_error(Run&& run) {
    try {
        run();
    } catch (const OptionError& e) {
        return {e.option(), e.message()};
    }
    FAIL("no OptionError");
    return {};
}

RunConfig with(const char* key, nlohmann::json value) {
    return config_from_json(nlohmann::json{{key, value}}.dump(), "test");
}

}  // namespace

TEST_CASE("run configuration: JSON round-trips every option", "[run_config]") {
    RunConfig c;
    c.data = "g.h5";
    c.split_index = 3;
    c.model = find_model("gcnii").recipe.spec;
    c.epochs = 7;
    c.lr = 0.01f;
    c.seed = 12345678901234ULL;
    c.select_by = "val_loss";
    c.parallel = "pipeline";
    c.ways = 2;
    c.overlap = false;
    c.comm_timeout = 12.5;
    c.metrics = "m.jsonl";
    const std::string text = config_to_json(c);
    const RunConfig back = config_from_json(text, "test");
    CHECK(config_to_json(back) == text);
    CHECK(back.model.seed == c.seed);  // the model's seed is the run's
    const auto j = nlohmann::json::parse(text);
    CHECK(j["lr"].dump() == "0.01");  // the float as written, not 0.009999999776482582
    CHECK(j["patience"].is_null());   // unset: the recipe's
    CHECK(j["model"]["model"] == "gcnii");
    for (const std::string& key : run_options()) {
        CHECK(j.contains(key));
    }
    CHECK(j.size() == run_options().size());
}

TEST_CASE("run configuration: unknown keys and wrong types are named", "[run_config]") {
    CHECK_THROWS_WITH(config_from_json("[1, 2]", "c.json"),
                      Contains("c.json: expected a JSON object of run options"));
    CHECK_THROWS_WITH(config_from_json("{\"wayz\": 2}", "c.json"),
                      Contains("c.json: unknown option 'wayz'"));
    const auto [option, message] = option_error([] { (void)with("ways", "two"); });
    CHECK(option == "ways");
    CHECK(message == "test: ways = \"two\": must be an integer");
    CHECK_THROWS_WITH(with("overlap", 1), Contains("overlap = 1: must be true or false"));
    CHECK_THROWS_WITH(with("model", 3), Contains("model = 3: must be an object"));
}

TEST_CASE("run configuration: every check names the option and its value", "[run_config]") {
    const auto message = [](RunConfig c) { return option_error([&] { validate(c); }); };
    RunConfig c;
    c.eval_every = 0;
    CHECK(message(c) ==
          std::pair<std::string, std::string>{"eval_every", "eval_every = 0: must be at least 1"});
    c = {};
    c.recompute = "some";
    CHECK(message(c).second == "recompute = 'some': expected none, aggregation or all");
    c = {};
    c.ways = 2;
    CHECK(message(c).second == "ways = 2: needs parallel = pipeline");
    c = {};
    c.parallel = "pipeline";
    c.ways = 0;
    CHECK(message(c).second == "ways = 0: must be at least 1");
    c = {};
    c.parallel = "pipeline";
    c.profile = true;
    CHECK(message(c).first == "profile");
    c = {};
    c.resume = true;
    CHECK(message(c).second == "resume = true: needs checkpoint_dir");
    c = {};
    c.trace_epochs = "2";
    CHECK(message(c).second == "trace_epochs = '2': needs trace (the file to write)");
    c = {};
    c.trace = "t.json";
    c.epochs = 5;
    for (const char* bad : {"0", "two", "3:", "2:x", "-1"}) {
        c.trace_epochs = bad;
        CHECK(message(c).second == "trace_epochs = '" + std::string(bad) +
                                       "': expected an epoch N or a range N:M of whole numbers "
                                       "from 1");
    }
    c.trace_epochs = "4:3";
    CHECK(message(c).second ==
          "trace_epochs = '4:3': must lie within the run's epochs 1..5, first to last");
    c.trace_epochs = "5:6";
    CHECK(message(c).first == "trace_epochs");
    c = {};
    c.plan = "auto";
    c.recompute = "all";
    CHECK(message(c).second ==
          "recompute = 'all': cannot be set with a plan (the plan chooses it)");
    c = {};
    c.select_by = "test_acc";
    CHECK(message(c).second == "select_by = 'test_acc': expected val_acc, val_loss or val_auc");
    c = {};
    c.lr = -1.0f;
    CHECK(message(c).second == "lr = -1: must be a positive number");
    c = {};
    c.comm = "nccl";
    CHECK(message(c).second == "comm = 'nccl': needs device = cuda");
    c = {};
    c.halo_precision = "fp8";
    CHECK(message(c).second == "halo_precision = 'fp8': expected fp32, bf16 or int8");
    c = {};
    c.precision_margin = std::nan("");
    CHECK(message(c).first == "precision_margin");
    c = {};
    c.guard_bound = 0.0;
    CHECK(message(c).second ==
          "guard_bound = 0: must be a positive number (1: the gradient's error as large as the "
          "gradient)");
    c = {};
    c.feature_slices = 0;
    CHECK(message(c).second == "feature_slices = 0: must be at least 1");
    c = {};
    c.feature_slices = 2;
    c.parallel = "pipeline";
    c.ways = 2;
    CHECK_NOTHROW(validate(c));  // S x W x F (docs/pipeline.md)
    CHECK(resolve_layout(c, 8).stages == 2);
    c.stages = 2;
    CHECK_THROWS_WITH(resolve_layout(c, 4),
                      Contains("stages = 2: stages x ways x feature_slices = 2 x 2 x 2 = 8 ranks, "
                               "but the job has 4 (run it on 8 ranks)"));
    c.stages = 0;
    c.ways = 1;
    CHECK_NOTHROW(validate(c));  // S x F (docs/pipeline.md)
    CHECK(resolve_layout(c, 4).stages == 2);
    c = {};
    c.feature_slices = 2;
    c.device = "cuda";
    CHECK(message(c).second ==
          "feature_slices = 2: needs device = cpu (the grid's layout switches run on host memory)");
    c = {};
    c.feature_slices = 2;
    c.plan = "auto";
    CHECK(message(c).first == "feature_slices");
    CHECK_NOTHROW(validate(RunConfig{}));
}

TEST_CASE("run configuration: feature_slices must divide the ranks", "[run_config]") {
    RunConfig c;
    c.feature_slices = 3;
    CHECK_THROWS_WITH(
        resolve_layout(c, 4),
        Catch::Matchers::StartsWith("feature_slices = 3: must divide the number of ranks (4)"));
    c.feature_slices = 2;
    CHECK(resolve_layout(c, 4).feature_slices == 2);
}

TEST_CASE("run configuration: the recipe fills what is unset, and only that", "[run_config]") {
    RunConfig c;
    c.model = find_model("gcnii").recipe.spec;
    c.seed = 9;
    c.epochs = 5;
    const RunConfig r = resolve_recipe(c);
    const Recipe& recipe = find_model("gcnii").recipe;
    CHECK(*r.epochs == 5);
    CHECK(*r.lr == recipe.lr);
    CHECK(*r.select_by == recipe.select_by);
    CHECK(*r.patience == recipe.patience);
    CHECK(*r.row_normalize_features == recipe.row_normalize);
    CHECK(r.model.seed == 9);
}

TEST_CASE("run configuration: the layer pipeline's defaults follow the ranks", "[run_config]") {
    RunConfig c;
    c.parallel = "pipeline";
    RunConfig r = resolve_layout(c, 4);
    CHECK(r.stages == 4);
    CHECK(r.chunks == 16);
    CHECK(r.partition_method == "ptscotch");
    c.ways = 2;
    r = resolve_layout(c, 4);
    CHECK(r.stages == 2);
    CHECK(r.chunks == 16);
    c.chunks = 5;
    CHECK_THROWS_WITH(resolve_layout(c, 4),
                      Contains("chunks = 5: every way needs the same number of chunks"));
    c.chunks = 0;
    c.stages = 3;
    CHECK_THROWS_WITH(resolve_layout(c, 4),
                      Contains("stages x ways = 3 x 2 = 6 ranks, but the job has 4"));
    CHECK(resolve_layout(RunConfig{}, 4).stages == 0);  // graph parallelism: untouched
}

TEST_CASE("run configuration: the training identity is the one checkpoints stored",
          "[run_config]") {
    RunConfig c;
    c.seed = 1;
    const RunConfig gcn = resolve_recipe(c);
    // As written by strata train before the run configuration existed (format 4 checkpoints).
    CHECK(training_identity(gcn) ==
          "adam lr 0.00999999978, seed 1, early-stop 0, patience 0, eval-every 1, select-by "
          "val_acc, row-normalize-features 0");
    c.parallel = "pipeline";
    c.split_index = 2;
    const RunConfig pipeline = resolve_layout(resolve_recipe(c), 2);
    CHECK(training_identity(pipeline) ==
          "adam lr 0.00999999978, seed 1, early-stop 0, patience 0, eval-every 1, select-by "
          "val_acc, row-normalize-features 0, split 2, parallel pipeline, stages 2, ways 1, "
          "chunks 8, chunk shuffle on, grad zero+scale on, snapshot period 23, guard on");
    // A guard bound other than the default is named (runs before issue 31 keep theirs).
    RunConfig bound = pipeline;
    bound.guard_bound = 0.25;
    CHECK_THAT(training_identity(bound), Catch::EndsWith("guard on, guard bound 0.25"));
    // Compressed halos change the results: named (fp32 keeps the identity above).
    RunConfig halo = gcn;
    halo.halo_precision = "int8";
    CHECK(training_identity(halo) ==
          "adam lr 0.00999999978, seed 1, early-stop 0, patience 0, eval-every 1, select-by "
          "val_acc, row-normalize-features 0, halo precision int8, precision margin 0.02");
}

TEST_CASE("run configuration: a checkpoint keeps the run, not the invocation", "[run_config]") {
    RunConfig full;
    full.metrics = "full.jsonl";
    full.checkpoint_dir = "full";
    full.threads = 2;
    RunConfig resumed = full;
    resumed.metrics = "part.jsonl";
    resumed.checkpoint_dir = "part";
    resumed.resume = true;
    resumed.checkpoint_every = 4;
    resumed.threads = 1;
    resumed.comm_timeout = 60;
    resumed.trace = "t.json";
    resumed.trace_epochs = "3";
    CHECK(config_to_json(run_definition(full)) == config_to_json(run_definition(resumed)));
    resumed.seed = 2;  // the trajectory changes: so does the definition
    CHECK(config_to_json(run_definition(full)) != config_to_json(run_definition(resumed)));
}
