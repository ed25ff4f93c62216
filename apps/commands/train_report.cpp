// RunReport: human lines and JSONL metrics.
#include "apps/commands/train_report.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"

namespace strata::app {

RunReport::RunReport(bool root, bool quiet, const std::string& metrics_path)
    : print_(root && !quiet), root_(root) {
    if (root && !metrics_path.empty()) {
        metrics_path_ = metrics_path;
        const AtomicOutput probe(metrics_path_, /*overwrite=*/true);  // fails fast if unwritable
    }
}

void RunReport::start(const std::string& data, int ranks, const std::string& device,
                      const std::string& comm, const std::string& model, std::uint64_t seed,
                      int epochs, std::int64_t num_vertices) {
    if (print_) {
        std::printf(
            "strata train: data=%s vertices=%lld ranks=%d seed=%llu epochs=%d\n"
            "device (rank 0): %s; comm: %s\nmodel: %s\n",
            data.c_str(), static_cast<long long>(num_vertices), ranks,
            static_cast<unsigned long long>(seed), epochs, device.c_str(), comm.c_str(),
            model.c_str());
        std::fflush(stdout);
    }
}

std::int64_t RunReport::resume_metrics(std::int64_t epoch) {
    metrics_lines_.clear();
    std::error_code ec;
    if (metrics_path_.empty() || !std::filesystem::exists(metrics_path_, ec)) {
        return 0;
    }
    std::ifstream in(metrics_path_);
    STRATA_CHECK(in.good(), metrics_path_, ": cannot open for reading");
    std::string line;
    while (std::getline(in, line)) {
        const nlohmann::json parsed =
            nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("epoch") ||
            !parsed["epoch"].is_number_integer()) {
            continue;  // e.g. a line cut short by a crash
        }
        if (parsed["epoch"].get<std::int64_t>() <= epoch) {
            metrics_lines_.push_back(line);
        }
    }
    return static_cast<std::int64_t>(metrics_lines_.size());
}

void RunReport::epoch(const EpochStats& s) {
    if (print_) {
        std::printf(
            "epoch %4lld  loss %.4f  train %.4f  val %.4f  test %.4f  time %.1f ms "
            "(wait %.1f ms)  halo %.2f MB\n",
            static_cast<long long>(s.epoch), s.loss, s.train_acc, s.val_acc, s.test_acc,
            s.epoch_s * 1e3, s.wait_s * 1e3, static_cast<double>(s.halo_bytes) / 1e6);
        std::fflush(stdout);
    }
    if (!metrics_path_.empty()) {
        const nlohmann::json line = {{"epoch", s.epoch},
                                     {"loss", s.loss},
                                     {"train_acc", s.train_acc},
                                     {"val_acc", s.val_acc},
                                     {"test_acc", s.test_acc},
                                     {"val_loss", s.val_loss},
                                     {"epoch_s", s.epoch_s},
                                     {"train_s", s.train_s},
                                     {"eval_s", s.eval_s},
                                     {"compute_s", s.compute_s},
                                     {"wait_s", s.wait_s},
                                     {"halo_bytes", s.halo_bytes},
                                     {"allreduce_bytes", s.allreduce_bytes},
                                     {"peak_rss_bytes", s.peak_rss_bytes}};
        metrics_lines_.push_back(line.dump());
    }
}

void RunReport::note(const std::string& text, bool even_if_quiet) {
    if (print_ || (root_ && even_if_quiet)) {
        std::printf("%s\n", text.c_str());
        std::fflush(stdout);
    }
}

void RunReport::warn(const std::string& text) {
    if (root_) {
        std::fprintf(stderr, "warning: %s\n", text.c_str());
        std::fflush(stderr);
    }
}

void RunReport::save_metrics() {
    if (metrics_path_.empty()) {
        return;
    }
    AtomicOutput out(metrics_path_, /*overwrite=*/true);
    {
        std::ofstream stream(out.temp_path());
        STRATA_CHECK(stream.good(), metrics_path_, ": cannot open for writing");
        for (const std::string& line : metrics_lines_) {
            stream << line << '\n';
        }
        stream.close();
        STRATA_CHECK(stream.good(), metrics_path_, ": write failed");
    }
    out.commit();
}

void RunReport::finish(const EpochStats& best) {
    save_metrics();
    if (root_) {
        std::printf("best epoch %lld: val_accuracy=%.4f\ntest_accuracy=%.4f\n",
                    static_cast<long long>(best.epoch), best.val_acc, best.test_acc);
        std::fflush(stdout);
    }
}

}  // namespace strata::app
