// .npy files built byte by byte for the parser's tests (tests/datasets/test_npz*.cpp): a version
// 1.0 header around any dict text, and the raw bytes of values.
#pragma once

#include <cstring>
#include <string>
#include <vector>

namespace strata::test {

/// A version-1.0 .npy: magic, version, header length, the header dict padded to a multiple of
/// 64 bytes with spaces and a newline (as numpy writes it), then `data` as it is.
inline std::vector<unsigned char> npy(const std::string& dict,
                                      const std::vector<unsigned char>& data) {
    std::string header = dict;
    while ((10 + header.size() + 1) % 64 != 0) {
        header += ' ';
    }
    header += '\n';
    std::vector<unsigned char> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    out.push_back(static_cast<unsigned char>(header.size() & 0xff));
    out.push_back(static_cast<unsigned char>(header.size() >> 8));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

/// The bytes of `values` as they lie in memory (little-endian here).
template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& values) {
    std::vector<unsigned char> out(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

}  // namespace strata::test
