// RunReport: human lines.
#include "apps/commands/train_report.hpp"

#include <cstdio>

namespace strata::app {

RunReport::RunReport(bool root, bool quiet) : print_(root && !quiet), root_(root) {}

void RunReport::started(const RunSummary& s) {
    if (!print_) {
        return;
    }
    std::printf(
        "strata train: data=%s vertices=%lld ranks=%d seed=%llu epochs=%d\n"
        "device (rank 0): %s; comm: %s\nmodel: %s\n",
        s.data.c_str(), static_cast<long long>(s.vertices), s.ranks,
        static_cast<unsigned long long>(s.seed), s.epochs, s.device.c_str(), s.comm.c_str(),
        s.model.c_str());
    const MemoryPlanSummary& memory = s.memory;
    std::printf("memory plan: %.0f bytes/vertex, %.1f MB per rank (largest rank), recompute %s:",
                memory.bytes_per_vertex, static_cast<double>(memory.total_bytes) / 1e6,
                s.recompute.c_str());
    const char* sep = " ";
    for (const MemoryLine& line : memory.lines) {
        std::printf("%s%s %.1f MB", sep, line.what.c_str(), static_cast<double>(line.bytes) / 1e6);
        sep = ", ";
    }
    std::printf(" (rank 0); process baseline %.1f MB\n",
                static_cast<double>(memory.baseline_rss_bytes) / 1e6);
    for (const std::string& line : s.notes) {
        std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
}

void RunReport::epoch(const EpochStats& s) {
    if (print_) {
        if (s.evaluated) {
            std::printf("epoch %4lld  loss %.4f  train %.4f  val %.4f  test %.4f",
                        static_cast<long long>(s.epoch), s.loss, s.train_acc, s.val_acc,
                        s.test_acc);
            if (s.binary) {
                std::printf("  auc val %.4f test %.4f", s.val_auc, s.test_auc);
            }
        } else {
            std::printf("epoch %4lld  loss %.4f  (not evaluated)", static_cast<long long>(s.epoch),
                        s.loss);
        }
        std::printf("  time %.1f ms (wait %.1f ms)  halo %.2f MB", s.epoch_s * 1e3, s.wait_s * 1e3,
                    static_cast<double>(s.halo_bytes) / 1e6);
        if (s.recompute_halo_bytes > 0) {
            std::printf(" (+%.2f MB recomputing)",
                        static_cast<double>(s.recompute_halo_bytes) / 1e6);
        }
        if (s.a2a_bytes + s.recompute_a2a_bytes > 0) {  // the G x F grid's layout switches
            std::printf("  a2a %.2f MB", static_cast<double>(s.a2a_bytes) / 1e6);
            if (s.recompute_a2a_bytes > 0) {
                std::printf(" (+%.2f MB recomputing)",
                            static_cast<double>(s.recompute_a2a_bytes) / 1e6);
            }
        }
        if (s.bytes_inter_node > 0) {  // ranks on several nodes: what crossed them
            std::printf("  inter-node %.2f MB (intra %.2f MB)",
                        static_cast<double>(s.bytes_inter_node) / 1e6,
                        static_cast<double>(s.bytes_intra_node) / 1e6);
        }
        std::printf("\n");
        std::fflush(stdout);
    }
    if (s.phases && root_) {
        const PhaseTimes& p = *s.phases;
        std::printf(
            "  profile: gemm %.1f ms, aggregation %.1f ms, attention %.1f ms, elementwise "
            "%.1f ms, loss %.1f ms, optimizer %.1f ms, exposed wait %.1f ms, other %.1f ms\n",
            p.gemm * 1e3, p.aggregation * 1e3, p.attention * 1e3, p.elementwise * 1e3, p.loss * 1e3,
            p.optimizer * 1e3, p.exposed_wait * 1e3, p.other * 1e3);
        std::fflush(stdout);
    }
}

void RunReport::note(const std::string& text, bool important) {
    if (print_ || (root_ && important)) {
        std::printf("%s\n", text.c_str());
        std::fflush(stdout);
    }
}

void RunReport::warning(const std::string& text) {
    if (root_) {
        std::fprintf(stderr, "warning: %s\n", text.c_str());
        std::fflush(stderr);
    }
}

void RunReport::finished(const RunResult& result) {
    if (!root_) {
        return;
    }
    if (result.stop_signal != 0) {
        const std::string where =
            result.checkpoint.empty()
                ? std::string("no --checkpoint-dir, so this progress is lost")
                : "checkpoint " + result.checkpoint + " written; rerun with --resume to continue";
        std::printf("strata train: %s: %s\n", result.stop_reason.c_str(), where.c_str());
        std::fflush(stdout);
        return;
    }
    if (result.already_complete) {
        std::printf("training is already complete (%s at epoch %lld); nothing to do\n",
                    result.early_stopped ? "early stop" : "all epochs",
                    static_cast<long long>(result.epoch));
    }
    if (result.best) {
        const EpochStats& best = *result.best;
        const char* by = to_string(result.selection);
        std::printf(
            "best epoch %lld (by %s): val_accuracy=%.4f val_loss=%.4f\ntest_accuracy=%.4f\n",
            static_cast<long long>(best.epoch), by, best.val_acc, best.val_loss, best.test_acc);
        if (best.binary) {
            std::printf("best epoch %lld (by %s): val_auc=%.4f test_auc=%.4f\n",
                        static_cast<long long>(best.epoch), by, best.val_auc, best.test_auc);
        }
    }
    std::fflush(stdout);
}

}  // namespace strata::app
