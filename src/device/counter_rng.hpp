// Counter-based random numbers shared by the CPU and CUDA backends: a value is a pure
// function of its key and counter, so masks do not depend on threads, ranks or device.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define STRATA_HOST_DEVICE __host__ __device__
#else
#define STRATA_HOST_DEVICE
#endif

namespace strata {

/// SplitMix64 finalizer (Steele, Lea & Flood 2014): a bijective 64-bit mixer.
STRATA_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// Stream key of one dropout call: (seed, epoch, layer) -> 64 bits.
STRATA_HOST_DEVICE inline std::uint64_t dropout_stream(std::uint64_t seed, std::uint64_t epoch,
                                                       std::uint64_t layer) {
    return mix64(mix64(mix64(seed) ^ epoch) ^ (layer * 0xd1b54a32d192ed03ULL));
}

/// Stream key of one halo exchange's stochastic rounding (src/comm/halo_packing.hpp): (seed,
/// epoch, the model node that exchanges, which of its exchanges) -> 64 bits. Apart from
/// dropout's streams: the top bit of the last word is set.
STRATA_HOST_DEVICE inline std::uint64_t halo_rounding_stream(std::uint64_t seed,
                                                             std::uint64_t epoch,
                                                             std::uint64_t node,
                                                             std::uint64_t part) {
    return mix64(dropout_stream(seed, epoch, node) ^ mix64(part | (1ULL << 63)));
}

/// lowbias32 (Wellons 2018): a bijective 32-bit mixer, 2 multiplies, vectorizable (SSE4.1/AVX2
/// vpmulld), unlike a 64-bit multiply.
STRATA_HOST_DEVICE inline std::uint32_t mix32(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    return x ^ (x >> 16);
}

/// The per-row key of a stream: 64 bits from (stream, global row id), computed once per row.
STRATA_HOST_DEVICE inline std::uint64_t counter_row_key(std::uint64_t stream, std::int64_t row) {
    return mix64(stream ^ mix64(static_cast<std::uint64_t>(row)));
}

/// Uniform 32-bit value of column `col` in a row keyed `row_key`: one 32-bit mixing round of
/// the column (spread by the golden ratio) combined with both halves of the key, so that rows
/// whose keys share one half still get unrelated values.
STRATA_HOST_DEVICE inline std::uint32_t counter_at(std::uint64_t row_key, std::uint32_t col) {
    const auto lo = static_cast<std::uint32_t>(row_key);
    const auto hi = static_cast<std::uint32_t>(row_key >> 32);
    return mix32((lo ^ (col * 0x9e3779b9U)) + hi);
}

/// Uniform 32-bit value for (stream, global row id, column).
STRATA_HOST_DEVICE inline std::uint32_t counter_u32(std::uint64_t stream, std::int64_t row,
                                                    std::int64_t col) {
    return counter_at(counter_row_key(stream, row), static_cast<std::uint32_t>(col));
}

/// Keep threshold: an entry is kept iff counter_u32(...) >= dropout_threshold(rate).
STRATA_HOST_DEVICE inline std::uint32_t dropout_threshold(float rate) {
    const double t = static_cast<double>(rate) * 4294967296.0;
    return t >= 4294967295.0 ? 0xffffffffU : static_cast<std::uint32_t>(t);
}

}  // namespace strata
