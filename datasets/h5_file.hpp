// H5File: the project's only door to HDF5 (C API hidden in datasets/): typed whole-dataset
// reads and writes, attributes, and errors that name the file and the dataset path.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace strata {

/// Shape of a dataset, outermost dimension first.
using H5Shape = std::vector<std::int64_t>;

/// An open HDF5 file. Move-only; closes on destruction. Every failure throws strata::Error
/// whose message names the file, the dataset or attribute path and HDF5's own message.
/// Supported element types: std::int64_t, std::int32_t, std::uint8_t, float, double.
class H5File {
public:
    /// Creates (truncates) `path` for writing. Writers call this on a temporary name and
    /// rename it into place when complete (AtomicOutput, src/base/atomic_output.hpp).
    [[nodiscard]] static H5File create(const std::string& path);
    /// Opens an existing file read-only; a non-HDF5 or truncated file is a clear error.
    [[nodiscard]] static H5File open(const std::string& path);

    H5File(H5File&&) noexcept;
    H5File& operator=(H5File&&) noexcept;
    /// Closes without checking (a fallback on the error path): writers call close().
    ~H5File();

    /// Flushes and closes the file, checking both (a full disk or an I/O error surfaces here):
    /// throws strata::Error naming the file. Idempotent; no other call is allowed after it.
    void close();

    [[nodiscard]] const std::string& path() const;
    [[nodiscard]] bool exists(const std::string& object_path) const;
    /// Shape of dataset `dataset_path`; throws if missing.
    [[nodiscard]] H5Shape shape(const std::string& dataset_path) const;

    /// Writes a dataset of `shape` (product must equal data.size()); creates parent groups.
    /// `compress`: chunked + deflate (for large feature matrices): chunks of whole rows, about
    /// 1 MiB each, or with `column_block` > 0 (rank 2 only) of that many columns (all when
    /// fewer) and rows filling about 1 MiB, so that a read of a column range decompresses only
    /// the blocks it touches.
    template <class T>
    void write(const std::string& dataset_path, std::span<const T> data, const H5Shape& shape,
               bool compress = false, std::int64_t column_block = 0);
    /// Reads a whole dataset; checks that its stored element type is exactly T (no silent
    /// conversion) and, when `expected_rank` >= 0, its rank.
    template <class T>
    [[nodiscard]] std::vector<T> read(const std::string& dataset_path, H5Shape* shape_out = nullptr,
                                      int expected_rank = -1) const;
    /// Reads rows [first, first+count) of a dataset's first dimension (all other dims whole).
    template <class T>
    [[nodiscard]] std::vector<T> read_rows(const std::string& dataset_path, std::int64_t first,
                                           std::int64_t count) const;
    /// Reads the hyperslab [start[d], start[d] + count[d]) of every dimension d (one entry per
    /// dimension of the dataset), row-major. Same type check as read(); a block outside the
    /// dataset throws, naming the file, the path, the block and the shape.
    template <class T>
    [[nodiscard]] std::vector<T> read_block(const std::string& dataset_path, const H5Shape& start,
                                            const H5Shape& count) const;

    /// Bytes of array data this H5File has returned from read, read_rows and read_block since it
    /// was opened (elements x element size; attributes and HDF5's metadata not counted). For
    /// compressed datasets HDF5 decompresses whole chunks: the file bytes touched can exceed
    /// this by up to one chunk (about 1 MiB) at each end of a block.
    [[nodiscard]] std::int64_t bytes_read() const;

    void write_attribute(const std::string& object_path, const std::string& name,
                         const std::string& value);
    void write_attribute(const std::string& object_path, const std::string& name,
                         std::int64_t value);
    void write_attribute(const std::string& object_path, const std::string& name, double value);
    [[nodiscard]] bool has_attribute(const std::string& object_path, const std::string& name) const;
    [[nodiscard]] std::string read_string_attribute(const std::string& object_path,
                                                    const std::string& name) const;
    [[nodiscard]] std::int64_t read_int_attribute(const std::string& object_path,
                                                  const std::string& name) const;
    [[nodiscard]] double read_double_attribute(const std::string& object_path,
                                               const std::string& name) const;

private:
    struct Impl;
    explicit H5File(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace strata
