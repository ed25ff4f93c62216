// HDF5 helpers private to datasets/ (never included outside it): RAII hid_t holders, the
// STRATA_H5_CHECK macro, element-type traits, and the parallel compressed-chunk writer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <hdf5.h>

#include "src/base/error.hpp"
#include "src/base/unique.hpp"

namespace strata::h5 {

using H5Fid = Unique<hid_t, H5Fclose, H5I_INVALID_HID>;
using H5Did = Unique<hid_t, H5Dclose, H5I_INVALID_HID>;
using H5Sid = Unique<hid_t, H5Sclose, H5I_INVALID_HID>;
using H5Tid = Unique<hid_t, H5Tclose, H5I_INVALID_HID>;
using H5Pid = Unique<hid_t, H5Pclose, H5I_INVALID_HID>;
using H5Aid = Unique<hid_t, H5Aclose, H5I_INVALID_HID>;
using H5Gid = Unique<hid_t, H5Gclose, H5I_INVALID_HID>;

/// Turns off HDF5's exit-time clean-up (once per process, before any other HDF5 call) and its
/// automatic error printing (once per calling thread: thread-safe HDF5 keeps one error stack
/// per thread): errors are reported through strata::Error instead.
void silence_hdf5();

/// HDF5's own description of the last failure (outermost and innermost entries of its error
/// stack) as " (HDF5: ...)", or "" when the stack is empty; clears the stack.
std::string hdf5_message();

/// Throws "<file>: <object>: <what failed> (HDF5: ...)" when `status` is negative.
template <class Status>
Status check(Status status, const std::string& file, const std::string& object, const char* what,
             const char* src_file, int src_line) {
    if (status < 0) [[unlikely]] {
        std::string message = file;
        if (!object.empty()) {
            message += ": " + object;
        }
        detail::throw_error(message + ": " + what + hdf5_message(), src_file, src_line);
    }
    return status;
}

/// The element types H5File supports: memory type and a human name for messages.
template <class T>
struct H5Type;
template <>
struct H5Type<std::int64_t> {
    static hid_t native() { return H5T_NATIVE_INT64; }
    static constexpr const char* name = "int64";
};
template <>
struct H5Type<std::int32_t> {
    static hid_t native() { return H5T_NATIVE_INT32; }
    static constexpr const char* name = "int32";
};
template <>
struct H5Type<std::uint8_t> {
    static hid_t native() { return H5T_NATIVE_UINT8; }
    static constexpr const char* name = "uint8";
};
template <>
struct H5Type<float> {
    static hid_t native() { return H5T_NATIVE_FLOAT; }
    static constexpr const char* name = "float32";
};
template <>
struct H5Type<double> {
    static hid_t native() { return H5T_NATIVE_DOUBLE; }
    static constexpr const char* name = "float64";
};

/// "int64", "float32", "string", ... for a stored type (messages only).
std::string type_name(hid_t type);

/// Writes a chunked dataset created with the shuffle + deflate(1) filters, compressing chunks
/// in parallel (OpenMP) and storing them with H5Dwrite_chunk: HDF5 itself compresses on one
/// thread, which dominated the write time of large feature matrices. Chunks are `chunk[0]`
/// whole rows, or for a rank-2 dataset with chunk[1] < dims[1], `chunk[0]` rows x `chunk[1]`
/// columns (column blocks); edge chunks are padded with zeros to the full chunk size, as HDF5
/// stores them. The bytes are what HDF5's own filters produce, so any reader decodes them.
/// `data` holds dims[0] rows in the dataset's (native, little-endian) element type.
void write_compressed_chunks(hid_t dataset, const unsigned char* data,
                             const std::vector<hsize_t>& dims, const std::vector<hsize_t>& chunk,
                             std::size_t element_size, const std::string& file,
                             const std::string& dataset_path);

}  // namespace strata::h5

/// Checks an HDF5 call returning herr_t/hid_t/htri_t; `object` is the dataset/attribute path.
#define STRATA_H5_CHECK(expr, file, object, what) \
    ::strata::h5::check((expr), (file), (object), (what), __FILE__, __LINE__)
