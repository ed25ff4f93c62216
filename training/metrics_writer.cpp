// MetricsWriter: append + flush per epoch; atomic rewrite once on resume.
#include "training/metrics_writer.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"

#include <unistd.h>

namespace strata {

std::string metrics_record(const EpochStats& s, const MetricsContext& context, bool first) {
    nlohmann::json line = {{"schema_version", metrics_schema_version},
                           {"epoch", s.epoch},
                           {"loss", s.loss},
                           {"evaluated", s.evaluated}};
    if (s.evaluated) {
        line["train_acc"] = s.train_acc;
        line["val_acc"] = s.val_acc;
        line["test_acc"] = s.test_acc;
        line["val_loss"] = s.val_loss;
        line["eval_train_loss"] = s.eval_train_loss;
        if (s.binary) {  // NaN (a set without both classes) is written as null
            line["val_auc"] = s.val_auc;
            line["test_auc"] = s.test_auc;
        }
    }
    line["epoch_s"] = s.epoch_s;
    line["train_s"] = s.train_s;
    line["eval_s"] = s.eval_s;
    line["compute_s"] = s.compute_s;
    line["wait_s"] = s.wait_s;
    line["max_wait_s"] = s.max_wait_s;
    line["halo_bytes"] = s.halo_bytes;
    line["recompute_halo_bytes"] = s.recompute_halo_bytes;
    line["a2a_bytes"] = s.a2a_bytes;
    line["recompute_a2a_bytes"] = s.recompute_a2a_bytes;
    line["allreduce_bytes"] = s.allreduce_bytes;
    line["bytes_intra_node"] = s.bytes_intra_node;
    line["bytes_inter_node"] = s.bytes_inter_node;
    line["peak_rss_bytes"] = s.peak_rss_bytes;
    line["planned_bytes"] = context.planned_bytes;
    line["planned_bytes_per_vertex"] = context.planned_bytes_per_vertex;
    line["baseline_rss_bytes"] = context.baseline_rss_bytes;
    line["split"] = context.split;
    line["threads"] = context.threads;
    line["overlap"] = context.overlap;
    line["features"] = context.features;
    line["features_density"] = context.features_density;
    if (s.pipeline) {
        line["stage_bytes"] = s.pipeline->stage_bytes;
        line["way_bytes"] = s.pipeline->way_bytes;
        line["bubble_s"] = s.pipeline->bubble_s;
        line["stage_wait_s"] = s.pipeline->stage_wait_s;
        line["chunks"] = s.pipeline->chunks;
        line["snapshot_period"] = s.pipeline->snapshot_period;
    }
    if (s.staleness_gap) {
        line["stale_train_loss"] = *s.stale_train_loss;
        line["fresh_train_loss"] = *s.fresh_train_loss;
        line["staleness_gap"] = *s.staleness_gap;
        line["raw_staleness_gap"] = s.raw_staleness_gap.value_or(*s.staleness_gap);
    }
    if (!s.guard.empty()) {
        line["guard"] = s.guard;
    }
    line["halo_precision"] = s.halo_precision.empty() ? context.halo_precision : s.halo_precision;
    if (s.fp32_val_acc) {
        line["fp32_val_acc"] = *s.fp32_val_acc;
    }
    if (!s.precision_guard.empty()) {
        line["precision_guard"] = s.precision_guard;
    }
    if (s.phases) {  // --profile
        const PhaseTimes& p = *s.phases;
        line["phases"] = {{"gemm_s", p.gemm},           {"aggregation_s", p.aggregation},
                          {"attention_s", p.attention}, {"elementwise_s", p.elementwise},
                          {"loss_s", p.loss},           {"exposed_wait_s", p.exposed_wait},
                          {"optimizer_s", p.optimizer}, {"other_s", p.other}};
    }
    if (first && !context.config.empty()) {
        line["config"] = nlohmann::json::parse(context.config);
    }
    return line.dump();
}

std::vector<std::string> read_metrics_records(const std::string& path) {
    std::vector<std::string> records;
    std::ifstream in(path);
    STRATA_CHECK(in.good(), path, ": cannot open for reading");
    std::string line;
    while (std::getline(in, line)) {
        const nlohmann::json parsed =
            nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!parsed.is_discarded() && parsed.is_object() && parsed.contains("epoch") &&
            parsed["epoch"].is_number_integer()) {
            records.push_back(line);
        }
    }
    return records;
}

MetricsWriter::MetricsWriter(std::string path, bool active, std::int64_t resume_epoch,
                             MetricsContext context)
    : context_(context) {
    if (!active || path.empty()) {
        return;
    }
    path_ = std::move(path);
    std::error_code ec;
    if (resume_epoch > 0 && std::filesystem::exists(path_, ec)) {
        std::vector<std::string> keep;
        for (std::string& record : read_metrics_records(path_)) {
            if (nlohmann::json::parse(record)["epoch"].get<std::int64_t>() <= resume_epoch) {
                keep.push_back(std::move(record));
            }
        }
        kept_ = static_cast<std::int64_t>(keep.size());
        AtomicOutput out(path_, /*overwrite=*/true);
        {
            std::ofstream stream(out.temp_path());
            STRATA_CHECK(stream.good(), path_, ": cannot open for writing");
            for (const std::string& record : keep) {
                stream << record << '\n';
            }
            stream.close();
            STRATA_CHECK(stream.good(), path_, ": write failed (disk full?)");
        }
        out.commit();
        file_ = std::fopen(path_.c_str(), "a");
    } else {
        file_ = std::fopen(path_.c_str(), "w");
    }
    STRATA_CHECK(file_ != nullptr, path_,
                 ": cannot open the metrics file for writing: ", std::strerror(errno));
    STRATA_CHECK(std::fseek(file_, 0, SEEK_END) == 0, path_, ": cannot seek");
    good_size_ = std::ftell(file_);
}

MetricsWriter::~MetricsWriter() {
    if (file_ != nullptr) {
        (void)std::fclose(file_);
    }
}

void MetricsWriter::end_epoch(const EpochStats& stats, FitState& state) {
    (void)state;
    if (file_ == nullptr) {
        return;
    }
    const std::string record = metrics_record(stats, context_, good_size_ == 0) + "\n";
    errno = 0;
    if (std::fwrite(record.data(), 1, record.size(), file_) == record.size() &&
        std::fflush(file_) == 0) {
        good_size_ += static_cast<long>(record.size());
        return;
    }
    const int error = errno;
    // No partial record: cut the file back to its last whole record, then give up on it.
    (void)::ftruncate(fileno(file_), good_size_);
    (void)std::fclose(file_);
    file_ = nullptr;
    STRATA_FAIL(path_, ": writing the metrics record of epoch ", stats.epoch,
                " failed: ", error != 0 ? std::strerror(error) : "short write",
                " (the file keeps the records before it)");
}

}  // namespace strata
