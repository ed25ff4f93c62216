// RunReport: what `strata train` prints on rank 0 (a header, one line per epoch, the final
// `test_accuracy=` line) and the optional JSONL metrics file (rewritten atomically at every
// checkpoint and at the end; on --resume the lines up to the checkpoint's epoch are kept).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/nn/trainer.hpp"

namespace strata::app {

class RunReport {
public:
    /// Only the root rank reports. `quiet`: only the final lines. `metrics_path`: JSONL file
    /// (empty: none); its directory must exist and be writable (checked here).
    RunReport(bool root, bool quiet, const std::string& metrics_path);
    /// The header: `device` as Backend::describe() says, `comm` e.g. "nccl".
    void start(const std::string& data, int ranks, const std::string& device,
               const std::string& comm, const std::string& model, std::uint64_t seed, int epochs,
               std::int64_t num_vertices);
    /// On --resume from a checkpoint of `epoch`: loads the existing metrics file's lines of
    /// epochs <= `epoch` (text unchanged; later ones are dropped) so that new lines are
    /// appended after them. Returns how many lines were kept (0 without a metrics file).
    std::int64_t resume_metrics(std::int64_t epoch);
    void epoch(const EpochStats& stats);
    /// A line on stdout of the root rank; `even_if_quiet` prints it under --quiet too.
    void note(const std::string& text, bool even_if_quiet = false);
    /// A "warning: ..." line on stderr of the root rank (also under --quiet).
    void warn(const std::string& text);
    /// Rewrites the metrics file with every line so far (temporary name + rename).
    void save_metrics();
    /// Saves the metrics file and prints the final lines (always, even when quiet, on the
    /// root rank).
    void finish(const EpochStats& best);

private:
    bool print_;
    bool root_;
    std::string metrics_path_;
    std::vector<std::string> metrics_lines_;
};

}  // namespace strata::app
