// NpzFile: a NumPy .npz archive (a zip of .npy members, stored or deflate-compressed) read
// through libzip, with the .npy header parsed here. libzip is included only in npz_file.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata {

/// Element types of the .npy members Strata reads ('descr' of the header, little-endian).
enum class NpyType { f4, f8, i4, i8, b1, u1 };

/// One array: shape (outermost first; empty = a scalar) and its raw little-endian bytes in C
/// order (a Fortran-order member is rearranged when it is read). `what` ("x.npz: node_labels")
/// prefixes every message about it.
struct NpyArray {
    std::string what;
    NpyType type = NpyType::f4;
    std::vector<std::int64_t> shape{};
    std::vector<unsigned char> bytes{};

    [[nodiscard]] std::int64_t size() const;
    /// "[2708, 1433]".
    [[nodiscard]] std::string shape_string() const;
    /// Throws "what: expected rank R, found shape [...]" unless shape.size() == rank.
    void check_rank(std::size_t rank) const;
    /// Values converted to float32 (from f4 or f8; f8 values are rounded). Throws for integer
    /// or boolean arrays, and for a value that is not finite or overflows float32.
    [[nodiscard]] std::vector<float> to_float() const;
    /// Values of an integer array (i4, i8, u1) widened to int64; throws for others.
    [[nodiscard]] std::vector<std::int64_t> to_int64() const;
    /// A 0/1 mask from b1 or u1 (or an integer array whose values are 0 or 1); throws for
    /// float arrays and for any other value.
    [[nodiscard]] std::vector<std::uint8_t> to_mask() const;
};

/// Parses one .npy file held in memory (format versions 1.0, 2.0 and 3.0). Supported 'descr':
/// <f4 <f8 <i4 <i8 |b1 |u1; fortran_order True or False (either order, of any rank, comes back
/// in C order: numpy writes True for a transposed array). Throws strata::Error naming `what`
/// and the offending header field (e.g. "x.npz: edges: unsupported dtype '>i8' (supported:
/// <f4, <f8, <i4, <i8, |b1, |u1)").
[[nodiscard]] NpyArray parse_npy(const std::vector<unsigned char>& data, const std::string& what);

class NpzFile {
public:
    /// Opens `path` (checks the zip's consistency). Throws "path: not a zip archive (...)" etc.
    explicit NpzFile(const std::string& path);
    NpzFile(NpzFile&&) noexcept;
    NpzFile& operator=(NpzFile&&) noexcept;
    ~NpzFile();

    [[nodiscard]] const std::string& path() const;
    /// The array names: member names without the ".npy" suffix, in archive order.
    [[nodiscard]] const std::vector<std::string>& keys() const;
    [[nodiscard]] bool has(const std::string& key) const;
    /// Reads and parses `key`.npy; throws "path: missing key 'key' (keys: a, b, c)" when absent,
    /// and names the member on a decompression or CRC failure.
    [[nodiscard]] NpyArray read(const std::string& key) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace strata
