// RunConfig <-> JSON through one table of options, the recipe, and the checks.
#include "training/run_config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "layers/model_zoo.hpp"
#include "partition/local_part.hpp"
#include "src/base/decimal.hpp"
#include "src/base/error.hpp"
#include "training/trace_file.hpp"

namespace strata {
namespace {

using json = nlohmann::json;

/// One option: its JSON key and how to read, write and copy it.
struct Field {
    std::string key;
    std::function<json(const RunConfig&)> get;
    std::function<void(RunConfig&, const json&, const std::string&)> set;
    std::function<void(const RunConfig&, RunConfig&)> copy;
};

template <class T>
T from_json_value(const json& v, const std::string& key, const std::string& what) {
    const auto fail = [&](const char* expected) {
        throw OptionError(key, what + ": " + key + " = " + v.dump() + ": " + expected, __FILE__,
                          __LINE__);
    };
    if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) {
            fail("must be true or false");
        }
        return v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) {
            fail("must be a string");
        }
        return v.get<std::string>();
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
        if (!v.is_number_unsigned()) {
            fail("must be a non-negative integer");
        }
        return v.get<std::uint64_t>();
    } else if constexpr (std::is_integral_v<T>) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < std::numeric_limits<T>::min() ||
            v.get<std::int64_t>() > std::numeric_limits<T>::max()) {
            fail("must be an integer");
        }
        return static_cast<T>(v.get<std::int64_t>());
    } else {
        if (!v.is_number()) {
            fail("must be a number");
        }
        return static_cast<T>(v.get<double>());
    }
}

template <class T>
json to_json_value(const T& value) {
    if constexpr (std::is_same_v<T, float>) {
        return json(shortest_decimal(value));
    } else {
        return json(value);
    }
}

template <class T>
Field field(const char* key, T RunConfig::*member) {
    return {key, [member](const RunConfig& c) { return to_json_value(c.*member); },
            [key, member](RunConfig& c, const json& v, const std::string& what) {
                c.*member = from_json_value<T>(v, key, what);
            },
            [member](const RunConfig& from, RunConfig& to) { to.*member = from.*member; }};
}

/// A recipe option: null when unset.
template <class T>
Field field(const char* key, std::optional<T> RunConfig::*member) {
    return {key,
            [member](const RunConfig& c) {
                return (c.*member).has_value() ? to_json_value(*(c.*member)) : json(nullptr);
            },
            [key, member](RunConfig& c, const json& v, const std::string& what) {
                if (v.is_null()) {
                    (c.*member).reset();
                } else {
                    c.*member = from_json_value<T>(v, key, what);
                }
            },
            [member](const RunConfig& from, RunConfig& to) { to.*member = from.*member; }};
}

const std::vector<Field>& fields() {
    static const std::vector<Field> table{
        field("data", &RunConfig::data),
        field("split_index", &RunConfig::split_index),
        field("partition_method", &RunConfig::partition_method),
        field("local_order", &RunConfig::local_order),
        field("sparse_features", &RunConfig::sparse_features),
        field("row_normalize_features", &RunConfig::row_normalize_features),
        Field{"model", [](const RunConfig& c) { return json::parse(spec_to_json(c.model)); },
              [](RunConfig& c, const json& v, const std::string& what) {
                  if (!v.is_object()) {
                      throw OptionError("model",
                                        what + ": model = " + v.dump() +
                                            ": must be an object such as "
                                            "{\"model\": \"gcn\", \"hidden\": 16}",
                                        __FILE__, __LINE__);
                  }
                  const std::uint64_t seed = c.model.seed;
                  c.model = spec_from_json(v.dump(), what + ": model");
                  c.model.seed = seed;
              },
              [](const RunConfig& from, RunConfig& to) {
                  const std::uint64_t seed = to.model.seed;
                  to.model = from.model;
                  to.model.seed = seed;
              }},
        field("epochs", &RunConfig::epochs),
        field("lr", &RunConfig::lr),
        field("weight_decay_mode", &RunConfig::weight_decay_mode),
        field("seed", &RunConfig::seed),
        field("eval_every", &RunConfig::eval_every),
        field("select_by", &RunConfig::select_by),
        field("early_stop", &RunConfig::early_stop),
        field("patience", &RunConfig::patience),
        field("parallel", &RunConfig::parallel),
        field("recompute", &RunConfig::recompute),
        field("overlap", &RunConfig::overlap),
        field("halo_precision", &RunConfig::halo_precision),
        field("halo_rounding", &RunConfig::halo_rounding),
        field("precision_margin", &RunConfig::precision_margin),
        field("profile", &RunConfig::profile),
        field("stages", &RunConfig::stages),
        field("ways", &RunConfig::ways),
        field("chunks", &RunConfig::chunks),
        field("chunk_shuffle", &RunConfig::chunk_shuffle),
        field("grad_zero_scale", &RunConfig::grad_zero_scale),
        field("snapshot_period", &RunConfig::snapshot_period),
        field("guard", &RunConfig::guard),
        field("guard_window", &RunConfig::guard_window),
        field("guard_bound", &RunConfig::guard_bound),
        field("feature_slices", &RunConfig::feature_slices),
        field("column_blocks", &RunConfig::column_blocks),
        field("plan", &RunConfig::plan),
        field("machine", &RunConfig::machine),
        field("device", &RunConfig::device),
        field("comm", &RunConfig::comm),
        field("threads", &RunConfig::threads),
        field("comm_timeout", &RunConfig::comm_timeout),
        field("metrics", &RunConfig::metrics),
        field("overwrite", &RunConfig::overwrite),
        field("trace", &RunConfig::trace),
        field("trace_epochs", &RunConfig::trace_epochs),
        field("checkpoint_dir", &RunConfig::checkpoint_dir),
        field("checkpoint_every", &RunConfig::checkpoint_every),
        field("resume", &RunConfig::resume),
    };
    return table;
}

const Field* find_field(const std::string& key) {
    for (const Field& f : fields()) {
        if (f.key == key) {
            return &f;
        }
    }
    return nullptr;
}

std::string quoted(const std::string& text) {
    return "'" + text + "'";
}

/// `value` must be one of `names`: "recompute = 'some': expected none, aggregation or all".
void check_name(const char* option, const std::string& value,
                std::initializer_list<const char*> names) {
    std::string expected;
    std::size_t i = 0;
    for (const char* name : names) {
        if (value == name) {
            return;
        }
        expected += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(name);
        ++i;
    }
    STRATA_CHECK_OPTION(false, option, quoted(value), "expected ", expected);
}

void at_least(const char* option, double value, double least) {
    STRATA_CHECK_OPTION(std::isfinite(value) && value >= least, option, value, "must be at least ",
                        least);
}

}  // namespace

const std::vector<std::string>& run_options() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (const Field& f : fields()) {
            k.push_back(f.key);
        }
        return k;
    }();
    return keys;
}

std::string config_to_json(const RunConfig& config) {
    json out = json::object();
    for (const Field& f : fields()) {
        out[f.key] = f.get(config);
    }
    return out.dump();
}

RunConfig config_from_json(const std::string& text, const std::string& what) {
    json in;
    try {
        in = json::parse(text);
    } catch (const json::exception& e) {
        STRATA_FAIL(what, ": not valid JSON (", e.what(), ")");
    }
    STRATA_CHECK(in.is_object(), what, ": expected a JSON object of run options, got ", in.dump());
    RunConfig config;
    for (const auto& [key, value] : in.items()) {
        const Field* f = find_field(key);
        if (f == nullptr) {
            throw OptionError(key, what + ": unknown option '" + key + "'", __FILE__, __LINE__);
        }
        f->set(config, value, what);
    }
    config.model.seed = config.seed;
    return config;
}

void copy_option(const std::string& key, const RunConfig& from, RunConfig& to) {
    const Field* f = find_field(key);
    STRATA_CHECK(f != nullptr, "run configuration: unknown option '", key, "'");
    f->copy(from, to);
}

RunConfig resolve_recipe(RunConfig config) {
    const Recipe& recipe = find_model(config.model.model).recipe;
    config.epochs = config.epochs.value_or(recipe.epochs);
    config.lr = config.lr.value_or(recipe.lr);
    config.select_by = config.select_by.value_or(recipe.select_by);
    config.patience = config.patience.value_or(recipe.patience);
    if (!config.row_normalize_features) {
        config.row_normalize_features = recipe.row_normalize;
        config.row_normalize_by_recipe = recipe.row_normalize;
    }
    config.model.seed = config.seed;
    return config;
}

void validate(const RunConfig& c) {
    at_least("split_index", c.split_index, 0);
    check_name("partition_method", c.partition_method,
               {"auto", "ptscotch", "metis", "random", "block"});
    check_name("local_order", c.local_order, {"none", "rcm", "metis"});
    check_name("sparse_features", c.sparse_features, {"auto", "on", "off"});
    validate(c.model, "model");
    if (c.epochs) {
        at_least("epochs", *c.epochs, 1);
        if (!c.trace.empty()) {
            (void)parse_trace_epochs(c.trace_epochs, *c.epochs);
        }
    }
    if (c.lr) {
        STRATA_CHECK_OPTION(std::isfinite(*c.lr) && *c.lr > 0.0f, "lr", *c.lr,
                            "must be a positive number");
    }
    check_name("weight_decay_mode", c.weight_decay_mode, {"l2", "decoupled"});
    at_least("eval_every", c.eval_every, 1);
    if (c.select_by) {
        check_name("select_by", *c.select_by, {"val_acc", "val_loss", "val_auc"});
    }
    at_least("early_stop", c.early_stop, 0);
    if (c.patience) {
        at_least("patience", *c.patience, 0);
    }
    check_name("parallel", c.parallel, {"graph", "pipeline"});
    check_name("recompute", c.recompute, {"none", "aggregation", "all"});
    at_least("stages", c.stages, 0);
    at_least("ways", c.ways, 1);
    at_least("chunks", c.chunks, 0);
    at_least("snapshot_period", c.snapshot_period, 0);
    at_least("guard_window", c.guard_window, 0);
    STRATA_CHECK_OPTION(std::isfinite(c.guard_bound) && c.guard_bound > 0.0, "guard_bound",
                        c.guard_bound,
                        "must be a positive number (1: the gradient's error as large as the "
                        "gradient)");
    check_name("halo_precision", c.halo_precision, {"fp32", "bf16", "int8"});
    check_name("halo_rounding", c.halo_rounding, {"nearest", "stochastic"});
    STRATA_CHECK_OPTION(std::isfinite(c.precision_margin), "precision_margin", c.precision_margin,
                        "must be a finite number (a fraction: 0.02 is two points)");
    at_least("feature_slices", c.feature_slices, 1);
    at_least("column_blocks", c.column_blocks, 1);
    check_name("device", c.device, {"cpu", "cuda"});
    check_name("comm", c.comm, {"auto", "mpi", "nccl"});
    STRATA_CHECK_OPTION(c.comm != "nccl" || c.device == "cuda", "comm", "'nccl'",
                        "needs device = cuda");
    at_least("threads", c.threads, 0);
    at_least("comm_timeout", c.comm_timeout, 0);
    at_least("checkpoint_every", c.checkpoint_every, 0);
    STRATA_CHECK_OPTION(!c.resume || !c.checkpoint_dir.empty(), "resume", "true",
                        "needs checkpoint_dir");

    const RunConfig defaults;
    if (!c.plan.empty()) {
        const char* chosen = "cannot be set with a plan (the plan chooses it)";
        STRATA_CHECK_OPTION(c.parallel == defaults.parallel, "parallel", quoted(c.parallel),
                            chosen);
        STRATA_CHECK_OPTION(c.recompute == defaults.recompute, "recompute", quoted(c.recompute),
                            chosen);
        STRATA_CHECK_OPTION(c.stages == defaults.stages, "stages", c.stages, chosen);
        STRATA_CHECK_OPTION(c.ways == defaults.ways, "ways", c.ways, chosen);
        STRATA_CHECK_OPTION(c.chunks == defaults.chunks, "chunks", c.chunks, chosen);
        STRATA_CHECK_OPTION(c.feature_slices == defaults.feature_slices, "feature_slices",
                            c.feature_slices, chosen);
        STRATA_CHECK_OPTION(c.column_blocks == defaults.column_blocks, "column_blocks",
                            c.column_blocks, chosen);
    }
    if (c.parallel != "pipeline") {
        STRATA_CHECK_OPTION(c.stages == defaults.stages, "stages", c.stages,
                            "needs parallel = pipeline");
        STRATA_CHECK_OPTION(c.ways == defaults.ways, "ways", c.ways, "needs parallel = pipeline");
        STRATA_CHECK_OPTION(c.chunks == defaults.chunks, "chunks", c.chunks,
                            "needs parallel = pipeline");
    }
    STRATA_CHECK_OPTION(c.trace_epochs.empty() || !c.trace.empty(), "trace_epochs",
                        quoted(c.trace_epochs), "needs trace (the file to write)");
    STRATA_CHECK_OPTION(!c.profile || c.parallel != "pipeline", "profile", "true",
                        "times graph parallelism's training step; the layer pipeline reports its "
                        "bubble and stage waits in the metrics instead");
    STRATA_CHECK_OPTION(c.machine.empty() || c.plan == "auto", "machine", quoted(c.machine),
                        "needs plan = auto");
    if (c.halo_precision != defaults.halo_precision) {
        STRATA_CHECK_OPTION(c.device == "cpu", "halo_precision", quoted(c.halo_precision),
                            "packs halo rows on the host: not supported with device = ", c.device,
                            " yet (use fp32)");
    }
    if (c.halo_rounding != defaults.halo_rounding) {
        STRATA_CHECK_OPTION(c.halo_precision != "fp32", "halo_rounding", quoted(c.halo_rounding),
                            "rounds compressed halos: needs halo_precision = bf16 or int8");
        STRATA_CHECK_OPTION(c.parallel != "pipeline", "halo_rounding", quoted(c.halo_rounding),
                            "is for graph parallelism: the layer pipeline's stage transfers and "
                            "mirrors round to nearest (use nearest)");
    }
    if (c.feature_slices > 1) {
        STRATA_CHECK_OPTION(c.device == "cpu", "feature_slices", c.feature_slices,
                            "needs device = cpu (the grid's layout switches run on host memory)");
    }
    if (c.column_blocks != defaults.column_blocks) {
        STRATA_CHECK_OPTION(c.feature_slices > 1 && c.parallel != "pipeline", "column_blocks",
                            c.column_blocks,
                            "needs the grid of graph parallelism (feature_slices > 1, parallel = "
                            "graph)");
        STRATA_CHECK_OPTION(c.halo_precision != "int8", "column_blocks", c.column_blocks,
                            "with halo_precision = int8 would scale each block's rows apart "
                            "(other bytes, other values); use fp32 or bf16, or column_blocks = 1");
    }
}

RunConfig resolve_layout(RunConfig c, int ranks) {
    if (c.partition_method == "auto") {
        c.partition_method = "ptscotch";
    }
    STRATA_CHECK_OPTION(c.feature_slices < 1 || ranks % c.feature_slices == 0, "feature_slices",
                        c.feature_slices, "must divide the number of ranks (", ranks, ")");
    if (c.parallel != "pipeline") {
        return c;
    }
    const int slices = std::max(1, c.feature_slices);
    c.stages = c.stages == 0 ? std::max(1, ranks / (c.ways * slices)) : c.stages;
    std::error_code ec;
    if (c.chunks == 0 && !c.data.empty() && std::filesystem::is_directory(c.data, ec)) {
        // The partition's chunk map (0 if it has none: load_chunked_part names the fix).
        const PartitionReport stored = read_partition_report(c.data);
        c.chunks = stored.chunks_per_part * stored.num_parts;
    }
    c.chunks = c.chunks == 0 ? 4 * c.stages * c.ways : c.chunks;
    STRATA_CHECK_OPTION(c.chunks % c.ways == 0, "chunks", c.chunks,
                        "every way needs the same number of chunks (a multiple of ways = ", c.ways,
                        ")");
    if (slices > 1 && c.ways > 1) {
        const int needed = c.stages * c.ways * slices;
        STRATA_CHECK_OPTION(needed == ranks, "stages", c.stages,
                            "stages x ways x feature_slices = ", c.stages, " x ", c.ways, " x ",
                            slices, " = ", needed, " ranks, but the job has ", ranks,
                            " (run it on ", needed, " ranks)");
        return c;
    }
    if (slices > 1) {
        STRATA_CHECK_OPTION(c.stages * slices == ranks, "stages", c.stages,
                            "stages x feature_slices = ", c.stages, " x ", slices, " = ",
                            c.stages * slices, " ranks, but the job has ", ranks, " (run it on ",
                            c.stages * slices, " ranks)");
        return c;
    }
    STRATA_CHECK_OPTION(c.stages * c.ways == ranks, "stages", c.stages,
                        "stages x ways = ", c.stages, " x ", c.ways, " = ", c.stages * c.ways,
                        " ranks, but the job has ", ranks, " (run it on ", c.stages * c.ways,
                        " ranks)");
    return c;
}

RunConfig run_definition(RunConfig c) {
    const RunConfig defaults;
    c.metrics = defaults.metrics;
    c.overwrite = defaults.overwrite;
    c.trace = defaults.trace;
    c.trace_epochs = defaults.trace_epochs;
    c.checkpoint_dir = defaults.checkpoint_dir;
    c.checkpoint_every = defaults.checkpoint_every;
    c.resume = defaults.resume;
    c.device = defaults.device;
    c.comm = defaults.comm;
    c.threads = defaults.threads;
    c.comm_timeout = defaults.comm_timeout;
    c.profile = defaults.profile;
    c.plan = defaults.plan;
    c.machine = defaults.machine;
    return c;
}

std::string training_identity(const RunConfig& c) {
    std::array<char, 300> text{};
    std::snprintf(text.data(), text.size(),
                  "adam%s lr %.9g, seed %llu, early-stop %d, patience %d, eval-every %d, "
                  "select-by %s, row-normalize-features %d%s",
                  c.weight_decay_mode == "decoupled" ? "w" : "", static_cast<double>(*c.lr),
                  static_cast<unsigned long long>(c.seed), c.early_stop, *c.patience, c.eval_every,
                  c.select_by->c_str(), *c.row_normalize_features ? 1 : 0,
                  c.split_index == 0 ? "" : (", split " + std::to_string(c.split_index)).c_str());
    std::string identity = text.data();
    if (c.halo_precision != "fp32") {  // fp32 runs keep the identity they always had
        std::array<char, 80> halo{};
        std::snprintf(halo.data(), halo.size(), ", halo precision %s, precision margin %.9g",
                      c.halo_precision.c_str(), c.precision_margin);
        identity += halo.data();
        if (c.halo_rounding != "nearest") {  // runs before it keep their identity
            identity += ", halo rounding " + c.halo_rounding;
        }
    }
    if (c.parallel == "pipeline") {
        // A named default, not RunConfig{}'s: GCC 12 at -O3 warns on the whole temporary.
        static const int default_guard_window = RunConfig{}.guard_window;
        static const double default_guard_bound = RunConfig{}.guard_bound;
        const auto on_off = [](bool on) { return on ? "on" : "off"; };
        identity += ", parallel pipeline, stages " + std::to_string(c.stages) + ", ways " +
                    std::to_string(c.ways) + ", chunks " + std::to_string(c.chunks) +
                    ", chunk shuffle " + on_off(c.chunk_shuffle) + ", grad zero+scale " +
                    on_off(c.grad_zero_scale) + ", snapshot period " +
                    std::to_string(c.snapshot_period) + ", guard " + on_off(c.guard) +
                    (c.guard_window == default_guard_window
                         ? ""
                         : ", guard window " + std::to_string(c.guard_window));
        if (c.guard_bound != default_guard_bound) {  // runs before issue 31 keep their identity
            std::array<char, 40> bound{};
            std::snprintf(bound.data(), bound.size(), ", guard bound %.9g", c.guard_bound);
            identity += bound.data();
        }
    }
    return identity;
}

}  // namespace strata
