// Checkpoint files (HDF5 through H5File; the typed sections in checkpoint_sections.cpp),
// identity checks, broadcast, and the checkpoint directory (listing, pruning, falling back past a
// corrupt newest file).
#include "training/checkpoint.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <optional>
#include <regex>
#include <span>
#include <system_error>

#include "datasets/h5_file.hpp"
#include "layers/gcn_model.hpp"
#include "partition/local_part.hpp"
#include "partition/partition_report.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "training/checkpoint_pack.hpp"
#include "training/checkpoint_sections.hpp"

namespace fs = std::filesystem;

namespace strata {
namespace {

using checkpoint_detail::read_verified;
using checkpoint_detail::write_with_checksum;

const std::regex& checkpoint_name() {
    static const std::regex re(R"(ckpt-([0-9]+)\.h5)");
    return re;
}

const std::regex& temporary_name() {
    static const std::regex re(R"(\.ckpt-[0-9]+\.h5\.tmp\.[0-9]+)");
    return re;
}

}  // namespace

std::string checkpoint_checksum(std::span<const std::byte> bytes) {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (const std::byte b : bytes) {
        hash ^= static_cast<std::uint64_t>(b);
        hash *= 0x100000001b3ULL;
    }
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "fnv1a64:%016llx",
                  static_cast<unsigned long long>(hash));
    return text.data();
}

std::string model_identity(const ModelSpec& model, bool row_normalize) {
    return describe(model) + (row_normalize ? ", row-normalized features" : "");
}

std::string data_identity(const std::string& data_path) {
    std::error_code ec;
    if (fs::is_directory(data_path, ec)) {
        const PartitionReport report = read_partition_report(data_path);
        if (!report.info.source_checksum.empty()) {
            return report.info.source_checksum;
        }
        return "partition " + report.partition_id;
    }
    return source_identity(data_path);
}

std::string partition_identity(const std::string& data_path, int num_parts,
                               const std::string& method, std::uint64_t seed) {
    const std::string parts = std::to_string(num_parts) + (num_parts == 1 ? " part" : " parts");
    std::error_code ec;
    if (fs::is_directory(data_path, ec)) {
        const PartitionReport report = read_partition_report(data_path);
        return "partition directory " + report.partition_id + ", " + parts;
    }
    if (num_parts == 1) {
        return "in memory, " + parts;
    }
    return "in memory, " + method + ", seed " + std::to_string(seed) + ", " + parts;
}

void write_checkpoint(const fs::path& path, const Checkpoint& c) {
    STRATA_CHECK(c.epoch >= 1, path.string(), ": refusing to write a checkpoint of epoch ",
                 c.epoch);
    AtomicOutput out(path, /*overwrite=*/true);
    {
        H5File file = H5File::create(out.temp_path().string());
        file.write_attribute("/", "strata_format", std::string("checkpoint"));
        file.write_attribute("/", "strata_format_version", checkpoint_format_version);
        file.write_attribute("/", "epoch", c.epoch);
        file.write_attribute("/", "early_stopped", std::int64_t{c.early_stopped ? 1 : 0});
        file.write_attribute("/", "dataset_path", c.dataset_path);
        file.write_attribute("/", "config", c.config);
        if (!c.halo_precision_switched.empty()) {
            file.write_attribute("/", "halo_precision_switched", c.halo_precision_switched);
        }
        file.write_attribute("/", "model_spec", spec_to_json(c.model));
        file.write_attribute("/", "seed", std::to_string(c.model.seed));
        file.write_attribute("/", "row_normalize_features", std::int64_t{c.row_normalize ? 1 : 0});
        file.write_attribute("/", "partition_method", c.partition_method);
        file.write_attribute("/", "model", c.identity.model);
        file.write_attribute("/", "parameters", c.identity.parameters);
        file.write_attribute("/", "dataset", c.identity.dataset);
        file.write_attribute("/", "partition", c.identity.partition);
        file.write_attribute("/", "training", c.identity.training);
        file.write_attribute("/", "select_by", std::string(to_string(c.selection)));
        write_with_checksum(file, "/model/params", c.params);
        write_with_checksum(file, "/optimizer/state", c.optimizer_state);
        write_with_checksum(file, "/best/params", c.best_params);
        std::vector<std::int64_t> epochs;
        std::vector<double> val_losses;
        std::vector<double> val_accs;
        for (const EvalRecord& r : c.history) {
            epochs.push_back(r.epoch);
            val_losses.push_back(r.val_loss);
            val_accs.push_back(r.val_acc);
        }
        write_with_checksum(file, "/progress/eval_epochs", epochs);
        write_with_checksum(file, "/progress/val_losses", val_losses);
        write_with_checksum(file, "/progress/val_accs", val_accs);
        if (c.best) {
            checkpoint_detail::write_record(file, "/progress/best", *c.best);
        }
        checkpoint_detail::write_pipeline_section(file, c);
        file.close();  // checked: a full disk fails here, naming the file
    }
    out.commit();
}

Checkpoint read_checkpoint(const fs::path& path) {
    const H5File file = H5File::open(path.string());
    const std::string name = path.string();
    const std::string format = file.read_string_attribute("/", "strata_format");
    STRATA_CHECK(format == "checkpoint", name, ": strata_format is '", format,
                 "', expected 'checkpoint'");
    const std::int64_t version = file.read_int_attribute("/", "strata_format_version");
    STRATA_CHECK(version != 1, name,
                 ": checkpoint format version 1, written by an older strata, holds only the last "
                 "epoch's weights; this strata reads version ",
                 checkpoint_format_version,
                 ", which also keeps the best-validation weights that `strata predict` serves: "
                 "train again with this strata (a new --checkpoint-dir)");
    STRATA_CHECK(version >= 2 && version <= checkpoint_format_version, name,
                 ": strata_format_version ", version,
                 " is not supported (this strata reads versions 2 to ", checkpoint_format_version,
                 "; it was written by a newer strata)");
    Checkpoint c;
    c.epoch = file.read_int_attribute("/", "epoch");
    STRATA_CHECK(c.epoch >= 1, name, ": epoch ", c.epoch, " (expected >= 1)");
    c.early_stopped = file.read_int_attribute("/", "early_stopped") != 0;
    c.dataset_path = file.read_string_attribute("/", "dataset_path");
    if (version >= 5) {
        c.config = file.read_string_attribute("/", "config");
        if (file.has_attribute("/", "halo_precision_switched")) {
            c.halo_precision_switched = file.read_string_attribute("/", "halo_precision_switched");
            STRATA_CHECK(c.halo_precision_switched == "fp32", name,
                         ": attribute halo_precision_switched = '", c.halo_precision_switched,
                         "' (expected fp32)");
        }
    }
    if (version == 2) {  // GCN options as attributes
        const std::string model_type = file.read_string_attribute("/", "model_type");
        STRATA_CHECK(model_type == "gcn", name, ": model_type '", model_type,
                     "' is not supported (gcn)");
        GcnOptions gcn;
        const auto int_attribute = [&](const char* attribute) {
            const std::int64_t v = file.read_int_attribute("/", attribute);
            STRATA_CHECK(
                v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max(), name,
                ": ", attribute, " = ", v, " is out of range");
            return static_cast<int>(v);
        };
        gcn.layers = int_attribute("gcn_layers");
        gcn.hidden = int_attribute("gcn_hidden");
        gcn.dropout = static_cast<float>(file.read_double_attribute("/", "gcn_dropout"));
        gcn.weight_decay = static_cast<float>(file.read_double_attribute("/", "gcn_weight_decay"));
        gcn.decay_all_layers = file.read_int_attribute("/", "gcn_decay_all_layers") != 0;
        gcn.bias = file.read_int_attribute("/", "gcn_bias") != 0;
        c.model = gcn_spec(gcn);
        validate(c.model, name);
    } else {
        c.model =
            spec_from_json(file.read_string_attribute("/", "model_spec"), name + ": model_spec");
    }
    const std::string seed = file.read_string_attribute("/", "seed");
    try {
        c.model.seed = std::stoull(seed);
    } catch (const std::exception&) {
        STRATA_FAIL(name, ": seed '", seed, "' is not an unsigned integer");
    }
    c.row_normalize = file.read_int_attribute("/", "row_normalize_features") != 0;
    c.partition_method = file.read_string_attribute("/", "partition_method");
    c.identity.model = file.read_string_attribute("/", "model");
    c.identity.parameters = file.read_string_attribute("/", "parameters");
    c.identity.dataset = file.read_string_attribute("/", "dataset");
    c.identity.partition = file.read_string_attribute("/", "partition");
    c.identity.training = file.read_string_attribute("/", "training");
    const std::string select_by = file.read_string_attribute("/", "select_by");
    STRATA_CHECK(select_by == "val_acc" || select_by == "val_loss" || select_by == "val_auc", name,
                 ": select_by is '", select_by, "', expected val_acc, val_loss or val_auc");
    c.selection = parse_selection(select_by);
    c.params = read_verified<float>(file, "/model/params");
    c.optimizer_state = read_verified<float>(file, "/optimizer/state");
    c.best_params = read_verified<float>(file, "/best/params");
    STRATA_CHECK(c.best_params.size() == c.params.size(), name, ": /best/params has ",
                 c.best_params.size(), " values but /model/params has ", c.params.size());
    const auto epochs = read_verified<std::int64_t>(file, "/progress/eval_epochs");
    const auto val_losses = read_verified<double>(file, "/progress/val_losses");
    const auto val_accs = read_verified<double>(file, "/progress/val_accs");
    STRATA_CHECK(epochs.size() == val_losses.size() && epochs.size() == val_accs.size(), name,
                 ": /progress/eval_epochs, val_losses and val_accs have ", epochs.size(), ", ",
                 val_losses.size(), " and ", val_accs.size(), " entries");
    for (std::size_t i = 0; i < epochs.size(); ++i) {
        c.history.push_back({epochs[i], val_losses[i], val_accs[i]});
    }
    if (file.exists("/progress/best")) {
        c.best = version >= 5 ? checkpoint_detail::read_record(file, "/progress/best")
                              : checkpoint_detail::read_record_v4(file, "/progress/best");
    }
    if (version >= 4) {
        checkpoint_detail::read_pipeline_section(file, version, c);
    }
    return c;
}

void check_identity(const Checkpoint& checkpoint, const CheckpointIdentity& current,
                    IdentityCheck which, const std::string& what) {
    // The training identity of a layer-pipeline run names its layout ("parallel pipeline,
    // stages S, ..."): say plainly when a run of the other kind would resume it.
    const auto parallel = [](const std::string& training) {
        return training.find("parallel pipeline") == std::string::npos ? "parallel = graph"
                                                                       : "parallel = pipeline";
    };
    const std::string stored = parallel(checkpoint.identity.training);
    const std::string now = parallel(current.training);
    STRATA_CHECK(which == IdentityCheck::model_and_dataset || stored == now, what,
                 ": this checkpoint was written by a ", stored, " run but this run has ", now,
                 " (resume with the same layout, or use another checkpoint_dir)");
    // The dataset first: another dataset explains any other difference (its widths change the
    // parameters' shapes).
    STRATA_CHECK(checkpoint.identity.dataset == current.dataset, what,
                 ": this checkpoint was trained on another dataset ('", checkpoint.identity.dataset,
                 "'; this run's data is '", current.dataset,
                 "'): use the data it was trained on, or another checkpoint_dir");
    struct Field {
        const char* what;  ///< "belongs to a different model"
        const std::string& stored;
        const std::string& now;
        bool always;
    };
    const std::array<Field, 4> fields{{
        {"belongs to a different model", checkpoint.identity.model, current.model, true},
        {"has other parameters", checkpoint.identity.parameters, current.parameters, true},
        {"belongs to a different partition", checkpoint.identity.partition, current.partition,
         false},
        {"was written with other training options", checkpoint.identity.training, current.training,
         false},
    }};
    // Graph parallelism: the weights and optimizer state are replicated and dropout is keyed
    // by original vertex ids, so the state does not depend on the split (elastic resume).
    const bool elastic = stored == "parallel = graph";
    for (const Field& f : fields) {
        if (!f.always && which == IdentityCheck::model_and_dataset) {
            continue;
        }
        if (elastic && &f.stored == &checkpoint.identity.partition) {
            continue;
        }
        STRATA_CHECK(f.stored == f.now, what, ": this checkpoint ", f.what,
                     ": it was written for '", f.stored, "' but this run has '", f.now, "' (",
                     &f.stored == &checkpoint.identity.partition
                         ? "a layer-pipeline run keeps each stage's state on its ranks: resume it "
                           "with the same ranks and partition, or use another checkpoint_dir"
                         : "use the same options and data, or another checkpoint_dir",
                     ")");
    }
}

namespace {

/// The fields every rank gets, in the order of the message.
template <class Archive, class C>
void fields(Archive& a, C& c) {
    a(c.identity.model, c.identity.parameters, c.identity.dataset, c.identity.partition,
      c.identity.training, c.model.seed, c.row_normalize, c.partition_method, c.dataset_path,
      c.config, c.epoch, c.early_stopped, c.params, c.optimizer_state, c.selection, c.best_params,
      c.history, c.halo_precision_switched);
}

}  // namespace

void broadcast_checkpoint(Checkpoint& c, Communicator& comm, int root) {
    std::vector<std::byte> bytes;
    std::vector<std::vector<std::byte>> histories;  // the root's, packed
    std::vector<std::int64_t> history_sizes;
    if (comm.rank() == root) {
        Packer packer;
        auto put_all = [&](const auto&... values) { (packer.put(values), ...); };
        fields(put_all, c);
        packer.put(spec_to_json(c.model));
        packer.put(c.best.has_value());
        if (c.best) {
            put(packer, *c.best);
        }
        packer.put(c.guard.has_value());
        if (c.guard) {
            put(packer, *c.guard);
        }
        for (const PipelineHistory& h : c.pipeline_history) {
            Packer one;
            put(one, h);
            history_sizes.push_back(static_cast<std::int64_t>(one.bytes().size()));
            histories.push_back(std::move(one.bytes()));
        }
        packer.put(history_sizes);
        bytes = std::move(packer.bytes());
    }
    std::array<std::int64_t, 1> size{static_cast<std::int64_t>(bytes.size())};
    comm.broadcast(std::as_writable_bytes(std::span<std::int64_t>(size)), root);
    bytes.resize(static_cast<std::size_t>(size[0]));
    comm.broadcast(bytes, root);
    if (comm.rank() != root) {
        Unpacker unpacker(bytes, "broadcast checkpoint");
        auto get_all = [&](auto&... values) { (unpacker.get(values), ...); };
        fields(get_all, c);
        std::string model;
        unpacker.get(model);
        const std::uint64_t seed = c.model.seed;
        c.model = spec_from_json(model, "broadcast checkpoint");
        c.model.seed = seed;
        bool has_best = false;
        unpacker.get(has_best);
        c.best.reset();
        if (has_best) {
            c.best.emplace();
            get(unpacker, *c.best);
        }
        bool has_guard = false;
        unpacker.get(has_guard);
        c.guard.reset();
        if (has_guard) {
            c.guard.emplace();
            get(unpacker, *c.guard);
        }
        unpacker.get(history_sizes);
        c.pipeline_history.assign(history_sizes.size(), {});
    }
    // Rank r's pipeline history is for rank r only: one broadcast per rank (the Communicator
    // has no point-to-point call on host memory), kept by rank r, dropped by the others.
    const std::size_t ranks = std::min(history_sizes.size(), static_cast<std::size_t>(comm.size()));
    for (std::size_t r = 0; r < ranks; ++r) {
        if (static_cast<int>(r) == root) {
            continue;
        }
        std::vector<std::byte> blob = comm.rank() == root ? histories[r] : std::vector<std::byte>();
        blob.resize(static_cast<std::size_t>(history_sizes[r]));
        comm.broadcast(blob, root);
        if (comm.rank() == static_cast<int>(r)) {
            Unpacker unpacker(blob, "broadcast checkpoint: pipeline history");
            get(unpacker, c.pipeline_history[r]);
        }
    }
}

fs::path CheckpointDir::path_for(std::int64_t epoch) const {
    std::array<char, 40> name{};
    std::snprintf(name.data(), name.size(), "ckpt-%06lld.h5", static_cast<long long>(epoch));
    return dir_ / name.data();
}

std::vector<std::pair<std::int64_t, fs::path>> CheckpointDir::list() const {
    std::vector<std::pair<std::int64_t, fs::path>> found;
    std::error_code ec;
    if (!fs::is_directory(dir_, ec)) {
        return found;
    }
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
        std::smatch match;
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file(ec) && std::regex_match(name, match, checkpoint_name())) {
            found.emplace_back(std::stoll(match[1].str()), entry.path());
        }
    }
    STRATA_CHECK(!ec, dir_.string(), ": cannot list the checkpoint directory: ", ec.message());
    std::sort(found.begin(), found.end());
    return found;
}

fs::path CheckpointDir::save(const Checkpoint& checkpoint, int keep) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    STRATA_CHECK(!ec, dir_.string(), ": cannot create the checkpoint directory: ", ec.message());
    const fs::path path = path_for(checkpoint.epoch);
    write_checkpoint(path, checkpoint);
    auto all = list();
    const auto excess = static_cast<std::ptrdiff_t>(all.size()) - std::max(keep, 1);
    for (std::ptrdiff_t i = 0; i < excess; ++i) {
        fs::remove(all[static_cast<std::size_t>(i)].second, ec);  // best effort
    }
    return path;
}

std::optional<CheckpointDir::Loaded> CheckpointDir::load_newest() const {
    const auto all = list();
    if (all.empty()) {
        return std::nullopt;
    }
    Loaded loaded;
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
        try {
            loaded.checkpoint = read_checkpoint(it->second);
            STRATA_CHECK(loaded.checkpoint.epoch == it->first, it->second.string(),
                         ": holds epoch ", loaded.checkpoint.epoch, ", not the ", it->first,
                         " of its name");
            loaded.path = it->second;
            return loaded;
        } catch (const Error& e) {
            loaded.skipped.push_back(it->second.filename().string() + ": " + e.message());
        }
    }
    std::string reasons;
    for (const auto& s : loaded.skipped) {
        reasons += "\n  " + s;
    }
    STRATA_FAIL(dir_.string(), ": no readable checkpoint among ", all.size(), " files:", reasons);
}

std::vector<fs::path> CheckpointDir::set_aside_newer_than(std::int64_t epoch) const {
    std::vector<fs::path> moved;
    for (const auto& [e, path] : list()) {
        if (e > epoch) {
            fs::path target = path;
            target += ".corrupt";
            std::error_code ec;
            fs::rename(path, target, ec);
            STRATA_CHECK(!ec, path.string(), ": cannot rename to ", target.string(), ": ",
                         ec.message());
            moved.push_back(target);
        }
    }
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
        if (std::regex_match(entry.path().filename().string(), temporary_name())) {
            std::error_code ignored;
            fs::remove(entry.path(), ignored);
        }
    }
    return moved;
}

}  // namespace strata
