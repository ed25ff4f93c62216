// strata-testing: the strata program plus fault-injection hooks, for the tests only (the
// production `strata` has none). Environment, each "RANK:EPOCH" or a number:
//   STRATA_INJECT_FAILURE=R:E   rank R throws at the start of epoch E (the job must abort)
//   STRATA_INJECT_SIGNAL=R:E    rank R raises SIGTERM after epoch E (a graceful, agreed stop)
//   STRATA_INJECT_STALL=R:E     rank R stops responding (sleeps an hour) at the start of epoch E
//                               (the others' --comm-timeout must end the job)
//   STRATA_EPOCH_SLEEP_MS=N     every rank sleeps N ms after each epoch (same arithmetic,
//                               slower: tests that signal or kill a running job)
//   STRATA_METIS_SLEEP_MS=N     every METIS_PartGraphKway call prints "strata-testing: METIS
//                               starts" to stdout, then sleeps N ms before partitioning (a long
//                               lone phase while the ranks load: serial METIS on rank 0)
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <metis.h>

#include "apps/commands/command.hpp"
#include "src/base/error.hpp"

#include <dlfcn.h>

// The test build's METIS_PartGraphKway: it takes precedence over libmetis's for the statically
// linked strata libraries, and calls libmetis's (the next definition) after the injected sleep.
extern "C" int METIS_PartGraphKway(idx_t* nvtxs, idx_t* ncon, idx_t* xadj, idx_t* adjncy,
                                   idx_t* vwgt, idx_t* vsize, idx_t* adjwgt, idx_t* nparts,
                                   real_t* tpwgts, real_t* ubvec, idx_t* options, idx_t* objval,
                                   idx_t* part) {
    using Kway = int (*)(idx_t*, idx_t*, idx_t*, idx_t*, idx_t*, idx_t*, idx_t*, idx_t*, real_t*,
                         real_t*, idx_t*, idx_t*, idx_t*);
    static const auto metis = reinterpret_cast<Kway>(dlsym(RTLD_NEXT, "METIS_PartGraphKway"));
    if (const char* ms = std::getenv("STRATA_METIS_SLEEP_MS")) {
        std::printf("strata-testing: METIS starts\n");
        std::fflush(stdout);
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
    }
    return metis(nvtxs, ncon, xadj, adjncy, vwgt, vsize, adjwgt, nparts, tpwgts, ubvec, options,
                 objval, part);
}

namespace {

/// "RANK:EPOCH" from the environment variable `name`, or {-1, -1} when unset.
std::pair<int, std::int64_t> rank_epoch(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') {
        return {-1, -1};
    }
    const std::string spec(value);
    const auto colon = spec.find(':');
    STRATA_CHECK(colon != std::string::npos, name, ": expected RANK:EPOCH, got '", spec, "'");
    return {std::atoi(spec.substr(0, colon).c_str()), std::atoll(spec.substr(colon + 1).c_str())};
}

class FaultInjection final : public strata::FitHook {
public:
    explicit FaultInjection(int rank)
        : rank_(rank),
          failure_(rank_epoch("STRATA_INJECT_FAILURE")),
          signal_(rank_epoch("STRATA_INJECT_SIGNAL")),
          stall_(rank_epoch("STRATA_INJECT_STALL")) {
        if (const char* ms = std::getenv("STRATA_EPOCH_SLEEP_MS")) {
            sleep_ms_ = std::atoi(ms);
        }
    }
    void begin_epoch(std::int64_t epoch) override {
        STRATA_CHECK(!(failure_.first == rank_ && failure_.second == epoch),
                     "injected failure on rank ", rank_, " at epoch ", epoch,
                     " (STRATA_INJECT_FAILURE)");
        if (stall_.first == rank_ && stall_.second == epoch) {
            std::this_thread::sleep_for(std::chrono::hours(1));
        }
    }
    void end_epoch(const strata::EpochStats& stats, strata::FitState&) override {
        if (sleep_ms_ > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
        }
        if (signal_.first == rank_ && signal_.second == stats.epoch) {
            std::raise(SIGTERM);
        }
    }

private:
    int rank_;
    std::pair<int, std::int64_t> failure_;
    std::pair<int, std::int64_t> signal_;
    std::pair<int, std::int64_t> stall_;
    int sleep_ms_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    using namespace strata::app;
    const TrainExtensions faults{[](int rank) {
        std::vector<std::unique_ptr<strata::FitHook>> hooks;
        hooks.push_back(std::make_unique<FaultInjection>(rank));
        return hooks;
    }};
    return strata_main(argc, argv, all_commands(faults));
}
