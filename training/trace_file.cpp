// The run's trace: epochs parsed, events as Chrome JSON, gathered to rank 0 and written whole.
#include "training/trace_file.hpp"

#include <charconv>
#include <fstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

/// The whole positive number `text` spells, else 0.
std::int64_t positive(std::string_view text) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() && value > 0 ? value : 0;
}

}  // namespace

TraceEpochs parse_trace_epochs(const std::string& text, std::int64_t epochs) {
    if (text.empty()) {
        const std::int64_t e = epochs >= 2 ? 2 : 1;
        return {e, e};
    }
    const std::size_t colon = text.find(':');
    const std::string_view all(text);
    const std::int64_t first = positive(all.substr(0, colon));
    const std::int64_t last = colon == std::string::npos ? first : positive(all.substr(colon + 1));
    STRATA_CHECK_OPTION(first > 0 && last > 0, "trace_epochs", "'" + text + "'",
                        "expected an epoch N or a range N:M of whole numbers from 1");
    STRATA_CHECK_OPTION(first <= last && last <= epochs, "trace_epochs", "'" + text + "'",
                        "must lie within the run's epochs 1..", epochs, ", first to last");
    return {first, last};
}

std::string chrome_events(int rank, std::span<const trace::Event> events) {
    using nlohmann::json;
    std::string out = json{{"name", "process_name"},
                           {"ph", "M"},
                           {"pid", rank},
                           {"args", {{"name", "rank " + std::to_string(rank)}}}}
                          .dump();
    out += ',';
    out += json{{"name", "process_sort_index"},
                {"ph", "M"},
                {"pid", rank},
                {"args", {{"sort_index", rank}}}}
               .dump();
    for (const trace::Event& e : events) {
        json event{{"name", e.name},
                   {"cat", e.category},
                   {"ph", "X"},
                   {"ts", e.begin_s * 1e6},
                   {"dur", (e.end_s - e.begin_s) * 1e6},
                   {"pid", rank},
                   {"tid", 0}};
        if (e.value >= 0) {
            event["args"] = {{"value", e.value}};
        }
        out += ',';
        out += event.dump();
    }
    return out;
}

TraceHook::TraceHook(Communicator& comm, std::string path, bool overwrite, TraceEpochs epochs)
    : comm_(comm), path_(std::move(path)), overwrite_(overwrite), epochs_(epochs) {}

TraceHook::~TraceHook() {
    if (recording_) {
        trace::stop();
        (void)trace::take();
    }
}

void TraceHook::begin_epoch(std::int64_t epoch) {
    if (epoch == epochs_.first) {
        comm_.barrier();  // one time 0 for every rank
        trace::start();
        recording_ = true;
    }
}

void TraceHook::end_epoch(const EpochStats& stats, FitState& state) {
    if (!recording_ || (stats.epoch < epochs_.last && !state.stopping() && !state.last_epoch())) {
        return;
    }
    trace::stop();
    recording_ = false;
    const std::vector<trace::Event> events = trace::take();
    std::string mine = chrome_events(comm_.rank(), events);
    if (comm_.rank() != 0) {
        mine.insert(mine.begin(), ',');  // rank 0's text starts the list
    }
    const std::vector<std::byte> all =
        comm_.gather({reinterpret_cast<const std::byte*>(mine.data()), mine.size()}, /*root=*/0);
    if (comm_.rank() != 0) {
        return;
    }
    AtomicOutput out(path_, overwrite_);
    {
        std::ofstream stream(out.temp_path(), std::ios::binary);
        STRATA_CHECK(stream.good(), path_, ": cannot open for writing");
        stream << R"({"displayTimeUnit":"ms","otherData":{"epochs":")" << epochs_.first << ".."
               << stats.epoch << R"("},"traceEvents":[)";
        stream.write(reinterpret_cast<const char*>(all.data()),
                     static_cast<std::streamsize>(all.size()));
        stream << "]}\n";
        stream.close();
        STRATA_CHECK(stream.good(), path_, ": write failed (disk full?)");
    }
    out.commit();
}

}  // namespace strata
