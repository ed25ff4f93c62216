// Checkpoint files (HDF5 through H5File), identity checks, broadcast, and the checkpoint
// directory (listing, pruning, falling back past a corrupt newest file).
#include "training/checkpoint.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <regex>
#include <span>
#include <system_error>
#include <type_traits>

#include "datasets/h5_file.hpp"
#include "layers/gcn_model.hpp"
#include "partition/local_part.hpp"
#include "partition/partition_report.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/base/integral_value.hpp"

namespace fs = std::filesystem;

namespace strata {
namespace {

template <class T>
std::string checksum(std::span<const T> values) {
    return checkpoint_checksum(std::as_bytes(values));
}

/// Best-epoch fields stored in /progress/best, in this order.
constexpr std::size_t best_fields = 6;

std::array<double, best_fields> pack_best(const EpochStats& s) {
    return {static_cast<double>(s.epoch), s.loss, s.train_acc, s.val_acc, s.test_acc, s.val_loss};
}

EpochStats unpack_best(std::span<const double> v, const std::string& file) {
    EpochStats s;
    const std::optional<std::int64_t> epoch = integral_value(v[0], 0, std::int64_t{1} << 53);
    STRATA_CHECK(epoch.has_value(), file, ": /progress/best: epoch ", v[0],
                 " is not a whole number of epochs");
    s.epoch = *epoch;
    s.loss = v[1];
    s.evaluated = true;
    s.train_acc = v[2];
    s.val_acc = v[3];
    s.test_acc = v[4];
    s.val_loss = v[5];
    return s;
}

template <class T>
std::span<const T> as_span(const std::vector<T>& v) {
    return {v.data(), v.size()};
}

/// Reads a 1-D dataset and verifies it against the checksum attribute stored next to it.
template <class T>
std::vector<T> read_verified(const H5File& file, const std::string& dataset) {
    H5Shape shape;
    std::vector<T> values = file.read<T>(dataset, &shape, 1);
    const std::string stored = file.read_string_attribute(dataset, "checksum");
    const std::string actual = checksum(as_span(values));
    STRATA_CHECK(stored == actual, file.path(), ": ", dataset, ": checksum mismatch (stored ",
                 stored, ", data gives ", actual, "): the file is corrupt");
    return values;
}

template <class T>
void write_with_checksum(H5File& file, const std::string& dataset, const std::vector<T>& values) {
    file.write<T>(dataset, as_span(values), {static_cast<std::int64_t>(values.size())});
    file.write_attribute(dataset, "checksum", checksum(as_span(values)));
}

/// "/pipeline/history_rank_00003": rank 3's PipelineExecutor::history().
std::string history_dataset(std::size_t rank) {
    std::array<char, 48> name{};
    std::snprintf(name.data(), name.size(), "/pipeline/history_rank_%05zu", rank);
    return name.data();
}

/// The /pipeline section (format 4): written only for layer-pipeline runs, so a graph-parallel
/// checkpoint has exactly format 3's datasets.
void write_pipeline_section(H5File& file, const Checkpoint& c) {
    for (std::size_t r = 0; r < c.pipeline_history.size(); ++r) {
        write_with_checksum(file, history_dataset(r), c.pipeline_history[r]);
    }
    if (c.guard) {
        write_with_checksum(file, "/pipeline/guard_figures", c.guard->figures);
        write_with_checksum(file, "/pipeline/guard_parameters", c.guard->parameters);
        write_with_checksum(file, "/pipeline/guard_optimizer", c.guard->optimizer);
    }
    if (!c.pipeline_history.empty() || c.guard) {
        file.write_attribute("/pipeline", "ranks",
                             static_cast<std::int64_t>(c.pipeline_history.size()));
    }
}

void read_pipeline_section(const H5File& file, Checkpoint& c) {
    if (!file.exists("/pipeline")) {
        return;
    }
    const std::int64_t ranks = file.read_int_attribute("/pipeline", "ranks");
    STRATA_CHECK(ranks >= 0 && ranks <= (std::int64_t{1} << 20), file.path(),
                 ": /pipeline ranks = ", ranks);
    for (std::int64_t r = 0; r < ranks; ++r) {
        c.pipeline_history.push_back(read_verified<float>(file, history_dataset(r)));
    }
    if (file.exists("/pipeline/guard_figures")) {
        c.guard =
            GuardCheckpoint{.figures = read_verified<double>(file, "/pipeline/guard_figures"),
                            .parameters = read_verified<float>(file, "/pipeline/guard_parameters"),
                            .optimizer = read_verified<float>(file, "/pipeline/guard_optimizer")};
    }
}

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
            const auto best = pack_best(*c.best);
            write_with_checksum(file, "/progress/best",
                                std::vector<double>(best.begin(), best.end()));
        }
        write_pipeline_section(file, c);
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
        const std::vector<double> best = read_verified<double>(file, "/progress/best");
        STRATA_CHECK(best.size() == best_fields, name, ": /progress/best has ", best.size(),
                     " values, expected ", best_fields);
        c.best = unpack_best(best, name);
    }
    if (version >= 4) {
        read_pipeline_section(file, c);
    }
    return c;
}

void check_identity(const Checkpoint& checkpoint, const CheckpointIdentity& current,
                    IdentityCheck which, const std::string& what) {
    // The training identity of a layer-pipeline run names its layout ("parallel pipeline,
    // stages S, ..."): say plainly when a run of the other kind would resume it.
    const auto parallel = [](const std::string& training) {
        return training.find("parallel pipeline") == std::string::npos ? "--parallel graph"
                                                                       : "--parallel pipeline";
    };
    const std::string stored = parallel(checkpoint.identity.training);
    const std::string now = parallel(current.training);
    STRATA_CHECK(which == IdentityCheck::model_and_dataset || stored == now, what,
                 ": this checkpoint was written by a ", stored, " run but this run is ", now,
                 " (resume with the same --parallel and layout, or use another --checkpoint-dir)");
    struct Field {
        const char* name;
        const std::string& stored;
        const std::string& now;
        bool always;
    };
    const std::array<Field, 5> fields{{
        {"model", checkpoint.identity.model, current.model, true},
        {"parameters", checkpoint.identity.parameters, current.parameters, true},
        {"dataset", checkpoint.identity.dataset, current.dataset, true},
        {"partition", checkpoint.identity.partition, current.partition, false},
        {"training options", checkpoint.identity.training, current.training, false},
    }};
    // Graph parallelism: the weights and optimizer state are replicated and dropout is keyed
    // by original vertex ids, so the state does not depend on the split (elastic resume).
    const bool elastic = stored == "--parallel graph";
    for (const Field& f : fields) {
        if (!f.always && which == IdentityCheck::model_and_dataset) {
            continue;
        }
        if (elastic && &f.stored == &checkpoint.identity.partition) {
            continue;
        }
        STRATA_CHECK(f.stored == f.now, what, ": this checkpoint belongs to a different ", f.name,
                     ": it was written for '", f.stored, "' but this run has '", f.now, "' (",
                     &f.stored == &checkpoint.identity.partition
                         ? "a --parallel pipeline run keeps each stage's state on its ranks: "
                           "resume it with the same ranks and partition, or use another "
                           "--checkpoint-dir"
                         : "use the same options and data, or another --checkpoint-dir",
                     ")");
    }
}

namespace {

/// Flat bytes of a checkpoint, for the broadcast (the same fields as the file).
class Packer {
public:
    template <class T>
    void put(const T& value) requires std::is_trivially_copyable_v<T> {
        const auto* p = reinterpret_cast<const std::byte*>(&value);
        bytes_.insert(bytes_.end(), p, p + sizeof(T));
    }
    template <class T>
    void put(const std::vector<T>& values) {
        put(values.size());
        const auto raw = std::as_bytes(std::span<const T>(values));
        bytes_.insert(bytes_.end(), raw.begin(), raw.end());
    }
    void put(const std::string& text) { put(std::vector<char>(text.begin(), text.end())); }
    std::vector<std::byte>& bytes() { return bytes_; }

private:
    std::vector<std::byte> bytes_;
};

class Unpacker {
public:
    explicit Unpacker(std::span<const std::byte> bytes) : bytes_(bytes) {}
    template <class T>
    void get(T& value) requires std::is_trivially_copyable_v<T> {
        STRATA_CHECK(pos_ + sizeof(T) <= bytes_.size(), "broadcast checkpoint: short message");
        std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
    }
    template <class T>
    void get(std::vector<T>& values) {
        std::size_t n = 0;
        get(n);
        STRATA_CHECK(pos_ + n * sizeof(T) <= bytes_.size(), "broadcast checkpoint: short message");
        values.resize(n);
        std::memcpy(values.data(), bytes_.data() + pos_, n * sizeof(T));
        pos_ += n * sizeof(T);
    }
    void get(std::string& text) {
        std::vector<char> chars;
        get(chars);
        text.assign(chars.begin(), chars.end());
    }

private:
    std::span<const std::byte> bytes_;
    std::size_t pos_ = 0;
};

template <class Archive, class C>
void fields(Archive& a, C& c) {
    a(c.identity.model, c.identity.parameters, c.identity.dataset, c.identity.partition,
      c.identity.training, c.model.seed, c.row_normalize, c.partition_method, c.dataset_path,
      c.epoch, c.early_stopped, c.params, c.optimizer_state, c.selection, c.best_params, c.history);
}

}  // namespace

void broadcast_checkpoint(Checkpoint& c, Communicator& comm, int root) {
    std::vector<std::byte> bytes;
    std::vector<std::int64_t> history_sizes;
    if (comm.rank() == root) {
        Packer packer;
        auto put = [&](const auto&... values) { (packer.put(values), ...); };
        fields(put, c);
        packer.put(spec_to_json(c.model));
        packer.put(c.best.has_value());
        if (c.best) {
            packer.put(pack_best(*c.best));
        }
        packer.put(c.guard.has_value());
        if (c.guard) {
            packer.put(c.guard->figures);
            packer.put(c.guard->parameters);
            packer.put(c.guard->optimizer);
        }
        for (const auto& h : c.pipeline_history) {
            history_sizes.push_back(static_cast<std::int64_t>(h.size()));
        }
        packer.put(history_sizes);
        bytes = std::move(packer.bytes());
    }
    std::array<std::int64_t, 1> size{static_cast<std::int64_t>(bytes.size())};
    comm.broadcast(std::as_writable_bytes(std::span<std::int64_t>(size)), root);
    bytes.resize(static_cast<std::size_t>(size[0]));
    comm.broadcast(bytes, root);
    if (comm.rank() != root) {
        Unpacker unpacker(bytes);
        auto get = [&](auto&... values) { (unpacker.get(values), ...); };
        fields(get, c);
        std::string model;
        unpacker.get(model);
        const std::uint64_t seed = c.model.seed;
        c.model = spec_from_json(model, "broadcast checkpoint");
        c.model.seed = seed;
        bool has_best = false;
        unpacker.get(has_best);
        c.best.reset();
        if (has_best) {
            std::array<double, best_fields> packed{};
            unpacker.get(packed);
            c.best = unpack_best(packed, "broadcast checkpoint");
        }
        bool has_guard = false;
        unpacker.get(has_guard);
        c.guard.reset();
        if (has_guard) {
            c.guard.emplace();
            unpacker.get(c.guard->figures);
            unpacker.get(c.guard->parameters);
            unpacker.get(c.guard->optimizer);
        }
        unpacker.get(history_sizes);
        c.pipeline_history.assign(history_sizes.size(), {});
    }
    // Rank r's pipeline history is for rank r only: one broadcast per rank (the Communicator
    // has no point-to-point call on host memory), kept by rank r, dropped by the others.
    const std::size_t ranks = std::min(history_sizes.size(), static_cast<std::size_t>(comm.size()));
    std::vector<float> scratch;
    for (std::size_t r = 0; r < ranks; ++r) {
        if (static_cast<int>(r) == root) {
            continue;
        }
        std::vector<float>& blob = comm.rank() == root || comm.rank() == static_cast<int>(r)
                                       ? c.pipeline_history[r]
                                       : scratch;
        blob.resize(static_cast<std::size_t>(history_sizes[r]));
        comm.broadcast(std::as_writable_bytes(std::span<float>(blob)), root);
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
