// The trace of a run (run options `trace`, `trace_epochs`; `strata train --trace FILE`): every
// rank records the spans of the traced epochs (src/base/trace.hpp: each schedule step named by its
// op, the exchange's gather, pack, unpack and every MPI wait, the inner and halo SpMMs, the
// optimizer, evaluation, the accuracy guard); after the last one they are gathered to rank 0,
// which writes one Chrome trace file (JSON, chrome://tracing or https://ui.perfetto.dev): one
// process per rank ("rank R"), times in microseconds from a barrier before the first traced
// epoch. Written whole at the end (never partial); an existing file is refused unless overwrite.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "src/base/trace.hpp"
#include "src/comm/communicator.hpp"
#include "training/fit.hpp"

namespace strata {

/// The epochs a trace records, first..last (inclusive, 1-based).
struct TraceEpochs {
    std::int64_t first = 0;
    std::int64_t last = 0;
};

/// `trace_epochs` of a run of `epochs` epochs: "N" or "N:M" (1 <= N <= M <= epochs); "" is the
/// second epoch (the first warms up), or the first of a one-epoch run. Throws
/// strata::OptionError naming trace_epochs.
[[nodiscard]] TraceEpochs parse_trace_epochs(const std::string& text, std::int64_t epochs);

/// One rank's events as Chrome trace events: the objects, comma-separated, without brackets
/// (a process name and sort index, then one complete event per span).
[[nodiscard]] std::string chrome_events(int rank, std::span<const trace::Event> events);

/// Starts the trace before epoch `first` (after a barrier, so that every rank's time 0 is the
/// same moment) and writes it after epoch `last`, or after an earlier epoch that ends the run.
/// Collective over `comm`: every rank must run it.
class TraceHook final : public FitHook {
public:
    TraceHook(Communicator& comm, std::string path, bool overwrite, TraceEpochs epochs);
    TraceHook(const TraceHook&) = delete;
    TraceHook& operator=(const TraceHook&) = delete;
    ~TraceHook() override;  ///< stops a trace still recording (a run that threw)

    void begin_epoch(std::int64_t epoch) override;
    void end_epoch(const EpochStats& stats, FitState& state) override;

private:
    Communicator& comm_;
    std::string path_;
    bool overwrite_;
    TraceEpochs epochs_;
    bool recording_ = false;
};

}  // namespace strata
