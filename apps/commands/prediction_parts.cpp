// write_prediction_parts: every rank writes its rows to its own part file in rank 0's temporary
// directory; rank 0 writes index.json after all parts agree they are written, then commits.
#include "apps/commands/prediction_parts.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>

#include <nlohmann/json.hpp>

#include "datasets/h5_file.hpp"
#include "src/base/error.hpp"
#include "src/comm/broadcast_string.hpp"

namespace fs = std::filesystem;

namespace strata::app {
namespace {

void write_part(const std::string& path, int rank, int num_parts, const PredictionsMeta& meta,
                const PredictionRows& rows) {
    const auto n = static_cast<std::int64_t>(rows.ids->size());
    H5File file = H5File::create(path);
    file.write_attribute("/", "strata_format", std::string("predictions_part"));
    file.write_attribute("/", "strata_format_version", prediction_parts_format_version);
    file.write_attribute("/", "part", std::int64_t{rank});
    file.write_attribute("/", "num_parts", std::int64_t{num_parts});
    file.write_attribute("/", "checkpoint", meta.checkpoint);
    file.write_attribute("/", "epoch", meta.epoch);
    file.write_attribute("/", "best_epoch", meta.best_epoch);
    file.write_attribute("/", "model", meta.model);
    file.write_attribute("/", "dataset", meta.dataset);
    file.write<std::int64_t>("/vertex_ids", *rows.ids, {n});
    file.write<std::int64_t>("/predictions", *rows.predictions, {n});
    file.write<float>("/logits", rows.logits->values, {n, rows.logits->cols}, true);
    if (rows.embeddings != nullptr) {
        file.write<float>("/embeddings", rows.embeddings->values, {n, rows.embeddings->cols}, true);
    }
    file.close();  // checked: a full disk fails here, naming the file
}

void write_index(const std::string& path, const PredictionsMeta& meta,
                 const std::vector<std::int64_t>& counts, global_id num_vertices,
                 const PredictionRows& rows) {
    nlohmann::json parts = nlohmann::json::array();
    for (std::size_t r = 0; r < counts.size(); ++r) {
        parts.push_back({{"file", prediction_part_name(static_cast<int>(r))}, {"rows", counts[r]}});
    }
    nlohmann::json columns = {{"logits", rows.logits->cols}};
    if (rows.embeddings != nullptr) {
        columns["embeddings"] = rows.embeddings->cols;
    }
    const nlohmann::json index = {{"strata_format", "predictions_index"},
                                  {"strata_format_version", prediction_parts_format_version},
                                  {"num_parts", counts.size()},
                                  {"total_rows", num_vertices},
                                  {"columns", columns},
                                  {"parts", parts},
                                  {"checkpoint", meta.checkpoint},
                                  {"epoch", meta.epoch},
                                  {"best_epoch", meta.best_epoch},
                                  {"model", meta.model},
                                  {"dataset", meta.dataset}};
    std::ofstream file(path);
    file << index.dump(2) << "\n";
    file.close();
    STRATA_CHECK(file.good(), path, ": write failed (disk full?)");
}

}  // namespace

std::string prediction_part_name(int rank) {
    std::array<char, 32> name{};
    std::snprintf(name.data(), name.size(), "part-%05d.h5", rank);
    return name.data();
}

void write_prediction_parts(Communicator& comm, std::unique_ptr<AtomicOutput>& out,
                            const std::string& out_path, const PredictionsMeta& meta,
                            const PredictionRows& rows, global_id num_vertices) {
    const bool root = comm.rank() == 0;
    STRATA_CHECK(!root || out != nullptr, out_path, ": rank 0 holds no output");
    std::string error;
    if (root) {
        std::error_code ec;
        fs::create_directory(out->temp_path(), ec);
        if (ec) {
            error = out->temp_path().string() + ": cannot create directory: " + ec.message();
        }
    }
    // An empty path tells the other ranks that rank 0 could not create the directory.
    std::string dir = root && error.empty() ? out->temp_path().string() : std::string();
    broadcast_string(comm, dir, 0);
    if (!dir.empty()) {
        try {
            write_part((fs::path(dir) / prediction_part_name(comm.rank())).string(), comm.rank(),
                       comm.size(), meta, rows);
        } catch (const Error& e) {
            error = e.message();
        } catch (const std::exception& e) {
            error = e.what();
        }
    }
    // Agree: if any rank failed, rank 0 removes the temporary (with every part written) before
    // anyone throws, so that no partial directory is left whichever rank's error ends the job.
    std::array<std::int64_t, 1> failures{error.empty() ? 0 : 1};
    comm.allreduce_sum(failures);
    if (failures[0] > 0) {
        std::array<std::int64_t, 1> failed_rank{error.empty() ? -1 : std::int64_t{comm.rank()}};
        comm.allreduce_max(failed_rank);
        if (root) {
            out.reset();
        }
        // Every rank throws the failing rank's own reason: whichever rank reports the job's one
        // error line (end_job), it names the part that could not be written and why.
        std::string reason = error;
        broadcast_string(comm, reason, static_cast<int>(failed_rank[0]));
        STRATA_FAIL(out_path, ": rank ", failed_rank[0],
                    failures[0] > 1 ? " and " + std::to_string(failures[0] - 1) + " other(s)"
                                    : std::string(),
                    " failed writing its part of the predictions (", reason,
                    "); nothing was written");
    }

    const std::int64_t mine = static_cast<std::int64_t>(rows.ids->size());
    const std::vector<std::byte> gathered =
        comm.gather(std::as_bytes(std::span<const std::int64_t>(&mine, 1)), 0);
    if (root) {
        std::vector<std::int64_t> counts(gathered.size() / sizeof(std::int64_t));
        std::memcpy(counts.data(), gathered.data(), counts.size() * sizeof(std::int64_t));
        std::int64_t total = 0;
        for (const std::int64_t c : counts) {
            total += c;
        }
        STRATA_CHECK(total == num_vertices, out_path, ": the parts hold ", total,
                     " rows, expected one per vertex (", num_vertices, ")");
        write_index((fs::path(dir) / "index.json").string(), meta, counts, num_vertices, rows);
        out->commit();
    }
    comm.barrier();
}

}  // namespace strata::app
