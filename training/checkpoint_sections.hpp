// The typed sections of a checkpoint file (internal to training/checkpoint.cpp): checksummed
// arrays, the best-epoch record, and the /pipeline section — every rank's PipelineHistory and
// the accuracy guard's GuardState — written as format 5 and read back from formats 4 (float
// encoded) and 5. docs/checkpoints.md describes the layout.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "datasets/h5_file.hpp"
#include "src/base/error.hpp"
#include "training/checkpoint.hpp"

namespace strata::checkpoint_detail {

/// FNV-1a 64 of the values' bytes (checkpoint_checksum).
template <class T>
[[nodiscard]] std::string checksum(std::span<const T> values) {
    return checkpoint_checksum(std::as_bytes(values));
}

/// A dataset of `shape` with its checksum attribute.
template <class T>
void write_with_checksum(H5File& file, const std::string& dataset, std::span<const T> values,
                         const H5Shape& shape) {
    file.write<T>(dataset, values, shape);
    file.write_attribute(dataset, "checksum", checksum(values));
}
template <class T>
void write_with_checksum(H5File& file, const std::string& dataset, const std::vector<T>& values) {
    write_with_checksum(file, dataset, std::span<const T>(values),
                        {static_cast<std::int64_t>(values.size())});
}

/// Reads a dataset of rank `rank` and verifies it against its checksum attribute.
template <class T>
[[nodiscard]] std::vector<T> read_verified(const H5File& file, const std::string& dataset,
                                           H5Shape* shape = nullptr, int rank = 1) {
    H5Shape got;
    std::vector<T> values = file.read<T>(dataset, &got, rank);
    const std::string stored = file.read_string_attribute(dataset, "checksum");
    const std::string actual = checksum(std::span<const T>(values));
    STRATA_CHECK(stored == actual, file.path(), ": ", dataset, ": checksum mismatch (stored ",
                 stored, ", data gives ", actual, "): the file is corrupt");
    if (shape != nullptr) {
        *shape = got;
    }
    return values;
}

/// Format 5's best-epoch record, group `group`: dataset `figures` (float64: loss, train, val
/// and test accuracy, val loss, exact training loss, val and test ROC-AUC) and the group's
/// attributes `epoch` and `binary` (int64).
void write_record(H5File& file, const std::string& group, const EpochStats& stats);
[[nodiscard]] EpochStats read_record(const H5File& file, const std::string& group);
/// Formats 2 to 4: dataset `dataset` of float64 [6] (epoch, loss, train, val, test accuracy,
/// val loss).
[[nodiscard]] EpochStats read_record_v4(const H5File& file, const std::string& dataset);

/// The /pipeline section: written only for layer-pipeline runs (histories or a guard state).
void write_pipeline_section(H5File& file, const Checkpoint& checkpoint);
void read_pipeline_section(const H5File& file, std::int64_t version, Checkpoint& checkpoint);

}  // namespace strata::checkpoint_detail
