// NpyWriter: one NumPy .npy file, format version 1.0, written atomically (AtomicOutput): the
// magic "\x93NUMPY", version 1.0, a little-endian uint16 header length, the header dict
// {'descr': ..., 'fortran_order': False, 'shape': (...), } padded with spaces to a multiple of
// 64 bytes and ended by '\n', then the elements in C order, little-endian.
#pragma once

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"

namespace strata::bench {

static_assert(std::endian::native == std::endian::little, "NpyWriter writes host byte order");

/// NumPy's type string of T: <i8, <i4, <f4, and |b1 for bool stored as one 0/1 byte.
template <class T>
constexpr const char* npy_descr() {
    if constexpr (std::is_same_v<T, std::int64_t>) {
        return "<i8";
    } else if constexpr (std::is_same_v<T, std::int32_t>) {
        return "<i4";
    } else if constexpr (std::is_same_v<T, float>) {
        return "<f4";
    } else {
        static_assert(std::is_same_v<T, bool>, "no .npy type for T");
        return "|b1";
    }
}

/// Writes an array of `shape` whose elements arrive through append() (in C order, in as many
/// pieces as convenient); commit() checks the count and renames the file into place.
template <class T>
class NpyWriter {
public:
    NpyWriter(const std::filesystem::path& path, std::vector<std::int64_t> shape)
        : output_(path, /*overwrite=*/true), stream_(output_.temp_path(), std::ios::binary) {
        STRATA_CHECK(stream_.good(), output_.temp_path().string(), ": cannot open for writing");
        std::string dims;
        expected_ = 1;
        for (const std::int64_t d : shape) {
            dims += std::to_string(d) + ", ";
            expected_ *= d;
        }
        if (shape.size() > 1) {
            dims.resize(dims.size() - 2);  // "(N, F)"; a 1-d shape keeps its comma: "(N,)"
        } else if (shape.size() == 1) {
            dims.pop_back();
        }
        std::string header = std::string("{'descr': '") + npy_descr<T>() +
                             "', 'fortran_order': False, 'shape': (" + dims + "), }";
        const std::size_t preamble = 10;  // magic (6) + version (2) + header length (2)
        header.append(63 - (preamble + header.size()) % 64, ' ');
        header.push_back('\n');
        const auto length = static_cast<std::uint16_t>(header.size());
        stream_.write("\x93NUMPY\x01\x00", 8);
        const char length_bytes[2] = {static_cast<char>(length & 0xff),
                                      static_cast<char>(length >> 8)};
        stream_.write(length_bytes, 2);
        stream_.write(header.data(), static_cast<std::streamsize>(header.size()));
    }

    /// The next elements (bool arrays take uint8 0/1 values).
    template <class U>
    void append(std::span<const U> values) {
        static_assert(sizeof(U) == sizeof(T), "append the stored element type");
        stream_.write(reinterpret_cast<const char*>(values.data()),
                      static_cast<std::streamsize>(values.size_bytes()));
        written_ += static_cast<std::int64_t>(values.size());
    }

    void commit() {
        STRATA_CHECK(written_ == expected_, output_.final_path().string(), ": wrote ", written_,
                     " elements, the shape holds ", expected_);
        stream_.close();
        STRATA_CHECK(!stream_.fail(), output_.temp_path().string(), ": write failed (disk full?)");
        output_.commit();
    }

private:
    AtomicOutput output_;
    std::ofstream stream_;
    std::int64_t expected_ = 0;
    std::int64_t written_ = 0;
};

}  // namespace strata::bench
