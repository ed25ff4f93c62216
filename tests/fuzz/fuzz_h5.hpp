// HDF5 mutations for the structure-aware harnesses (fuzz_graph_h5, fuzz_part): each object of
// a valid file is written as it was, dropped, refilled from the input, given another element
// type, or given another shape, as the FuzzedDataProvider says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "datasets/h5_file.hpp"

#include <fuzzer/FuzzedDataProvider.h>

namespace strata::fuzz {

/// A shape for `size` elements as the input says: the given one, flat, or arbitrary.
inline strata::H5Shape mutate_shape(FuzzedDataProvider& in, strata::H5Shape shape,
                                    std::size_t& size) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            return shape;
        case 1:
            return {static_cast<std::int64_t>(size)};
        default: {  // any rank 1..3, any small extents: the data is resized to match
            strata::H5Shape out(static_cast<std::size_t>(in.ConsumeIntegralInRange<int>(1, 3)));
            size = 1;
            for (auto& extent : out) {
                extent = in.ConsumeIntegralInRange<std::int64_t>(0, 40);
                size *= static_cast<std::size_t>(extent);
            }
            return out;
        }
    }
}

/// Writes `values` (the valid contents) at `path`, or a mutation of it, or nothing. Returns
/// the values written, as read back as T (nullopt when dropped), e.g. for a checksum.
template <class T>
std::optional<std::vector<T>> put(FuzzedDataProvider& in, strata::H5File& file, const char* path,
                                  std::vector<T> values, strata::H5Shape shape) {
    const int action = in.ConsumeIntegralInRange<int>(0, 4);
    if (action == 1) {
        return std::nullopt;  // dropped
    }
    std::size_t size = values.size();
    if (action >= 2) {
        shape = mutate_shape(in, shape, size);
        values.resize(size);
        for (T& v : values) {  // the input's bytes, as far as they go
            if (in.remaining_bytes() == 0) {
                break;
            }
            if constexpr (std::is_floating_point_v<T>) {
                v = in.ConsumeFloatingPoint<T>();
            } else {
                v = in.ConsumeIntegral<T>();
            }
        }
    }
    if (action == 4) {  // another element type of the same values
        std::vector<double> other(values.begin(), values.end());
        file.write<double>(path, other, shape);
        return values;
    }
    file.write<T>(path, values, shape);
    return values;
}

inline void put_string_attribute(FuzzedDataProvider& in, strata::H5File& file, const char* name,
                                 const std::string& value) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            file.write_attribute("/", name, value);
            break;
        case 1:
            break;
        case 2:
            file.write_attribute("/", name, in.ConsumeRandomLengthString(16));
            break;
        default:
            file.write_attribute("/", name, in.ConsumeIntegral<std::int64_t>());
    }
}

inline void put_int_attribute(FuzzedDataProvider& in, strata::H5File& file, const char* name,
                              std::int64_t value) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            file.write_attribute("/", name, value);
            break;
        case 1:
            break;
        case 2:
            file.write_attribute("/", name, in.ConsumeIntegral<std::int64_t>());
            break;
        default:
            file.write_attribute("/", name, in.ConsumeRandomLengthString(8));
    }
}

}  // namespace strata::fuzz
