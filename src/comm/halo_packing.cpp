// Halo packing kernels: bf16 and int8 rows, one row per loop iteration (OpenMP over rows), each
// row in blocks the compiler vectorizes, AVX2 where the CPU has it (STRATA_SIMD_CLONES;
// bench/halo_packing times them against memcpy).
#include "src/comm/halo_packing.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

#include "src/base/error.hpp"
#include "src/device/counter_rng.hpp"
#include "src/device/cpu/simd_clones.hpp"

namespace strata {
namespace {

/// Rows at which the kernels start threads (below, one thread is faster).
constexpr std::size_t parallel_values = std::size_t{1} << 16;

void check_sizes(const char* what, HaloPrecision precision, index_t rows, index_t width,
                 std::size_t bytes) {
    STRATA_CHECK(precision != HaloPrecision::fp32, what, ": fp32 rows are sent as they are");
    const std::size_t needed = static_cast<std::size_t>(rows) * packed_row_bytes(precision, width);
    STRATA_CHECK(bytes >= needed, what, ": ", bytes, " bytes for ", rows, " rows of ", width, " ",
                 to_string(precision), " values (", needed, " bytes)");
}

/// Values per block of the kernels below: each block is converted in a register-friendly loop
/// without branches or calls (so the compiler vectorizes it), then copied to or from the packed
/// record with one memcpy (records are byte-aligned).
constexpr index_t block = 64;

/// bf16 bits of one value's fp32 bits: to_bf16 without a branch (same bits for every input).
std::uint16_t bf16_bits(std::uint32_t bits) {
    const std::uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
    const std::uint32_t quiet = (bits >> 16) | 0x40u;
    const bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
    return static_cast<std::uint16_t>(nan ? quiet : rounded);
}

STRATA_SIMD_CLONES void pack_bf16(const float* x, index_t width, std::byte* out) {
    std::uint16_t packed[block];
    for (index_t first = 0; first < width; first += block) {
        const index_t n = std::min(block, width - first);
        for (index_t j = 0; j < n; ++j) {
            packed[j] = bf16_bits(std::bit_cast<std::uint32_t>(x[first + j]));
        }
        std::memcpy(out + 2 * static_cast<std::size_t>(first), packed,
                    2 * static_cast<std::size_t>(n));
    }
}

/// pack_bf16 with stochastic rounding: value j's random bits counter_at(row_key, column + j).
/// The 16 random bits under the kept ones carry into them with probability (dropped bits) /
/// 2^16 (on the magnitude, so for either sign). NaN stays a quiet NaN; infinities stay.
STRATA_SIMD_CLONES void pack_bf16_stochastic(const float* x, index_t width, std::uint64_t row_key,
                                             std::uint32_t column, std::byte* out) {
    std::uint16_t packed[block];
    for (index_t first = 0; first < width; first += block) {
        const index_t n = std::min(block, width - first);
        for (index_t j = 0; j < n; ++j) {
            const std::uint32_t bits = std::bit_cast<std::uint32_t>(x[first + j]);
            const std::uint32_t u =
                counter_at(row_key, column + static_cast<std::uint32_t>(first + j)) >> 16;
            const bool special = (bits & 0x7FFFFFFFu) >= 0x7F800000u;  // inf or NaN
            const std::uint32_t rounded = (bits + (special ? 0u : u)) >> 16;
            const bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
            packed[j] = static_cast<std::uint16_t>(nan ? (bits >> 16) | 0x40u : rounded);
        }
        std::memcpy(out + 2 * static_cast<std::size_t>(first), packed,
                    2 * static_cast<std::size_t>(n));
    }
}

STRATA_SIMD_CLONES void unpack_bf16(const std::byte* in, index_t width, float* x) {
    std::uint16_t packed[block];
    for (index_t first = 0; first < width; first += block) {
        const index_t n = std::min(block, width - first);
        std::memcpy(packed, in + 2 * static_cast<std::size_t>(first),
                    2 * static_cast<std::size_t>(n));
        for (index_t j = 0; j < n; ++j) {
            x[first + j] = std::bit_cast<float>(static_cast<std::uint32_t>(packed[j]) << 16);
        }
    }
}

/// Round to nearest, ties to even, for |t| < 2^22: adding 1.5 x 2^23 leaves no fraction bits
/// (the sum lies in [2^23, 2^24), where the spacing is 1), and the default rounding mode rounds
/// the sum as std::nearbyint rounds t (1.5 x 2^23 is even). Without -ffast-math the compiler
/// keeps both operations, and unlike std::nearbyint this needs no SSE4.1 and no call.
float round_even(float t) {
    constexpr float magic = 12582912.0f;  // 1.5 x 2^23
    return (t + magic) - magic;
}

/// An int8 record's scale: writes max|x| / 127 (NaN for a row holding ±inf or NaN) at the
/// record's start and returns it, or, where there are no levels to compute (that NaN, a zero
/// row, one whose scale underflows), writes zero levels too and returns 0. Always inlined: its
/// callers are cloned for AVX2, and a clone compiles only what is inlined into it.
[[gnu::always_inline]] inline float int8_scale(const float* x, index_t width, std::byte* out) {
    // max |x| on the bits: for non-negative floats the integer order is the float order, and
    // a masked value at or above 0x7F800000 is an infinity or a NaN.
    std::uint32_t largest_bits = 0;
    for (index_t j = 0; j < width; ++j) {
        largest_bits = std::max(largest_bits, std::bit_cast<std::uint32_t>(x[j]) & 0x7FFFFFFFu);
    }
    const bool finite = largest_bits < 0x7F800000u;
    const float scale = !finite ? std::numeric_limits<float>::quiet_NaN()
                                : std::bit_cast<float>(largest_bits) / 127.0f;
    std::memcpy(out, &scale, sizeof(scale));
    if (!finite || scale == 0.0f) {
        auto* q = reinterpret_cast<std::int8_t*>(out + sizeof(scale));
        std::fill(q, q + width, std::int8_t{0});
        return 0.0f;
    }
    return scale;
}

STRATA_SIMD_CLONES void pack_int8(const float* x, index_t width, std::byte* out) {
    const float scale = int8_scale(x, width, out);
    if (scale == 0.0f) {
        return;
    }
    auto* q = reinterpret_cast<std::int8_t*>(out + sizeof(scale));
    std::int8_t levels[block];
    for (index_t first = 0; first < width; first += block) {
        const index_t n = std::min(block, width - first);
        for (index_t j = 0; j < n; ++j) {
            const float level = std::clamp(round_even(x[first + j] / scale), -127.0f, 127.0f);
            levels[j] = static_cast<std::int8_t>(static_cast<std::int32_t>(level));
        }
        std::memcpy(q + first, levels, static_cast<std::size_t>(n));
    }
}

/// pack_int8 with stochastic rounding: level = floor(x / s + u) for u uniform in [0, 1) from
/// counter_at(row_key, column + j) (24 bits), so E[level] = x / s; the scale as pack_int8's.
/// x / s + u + 128 lies in (0, 256): truncating it is the floor (and vectorizes, where a
/// compare-and-step floor did not).
STRATA_SIMD_CLONES void pack_int8_stochastic(const float* x, index_t width, std::uint64_t row_key,
                                             std::uint32_t column, std::byte* out) {
    const float scale = int8_scale(x, width, out);
    if (scale == 0.0f) {
        return;
    }
    auto* q = reinterpret_cast<std::int8_t*>(out + sizeof(scale));
    constexpr float unit = 1.0f / 16777216.0f;  // 2^-24
    std::int8_t levels[block];
    for (index_t first = 0; first < width; first += block) {
        const index_t n = std::min(block, width - first);
        for (index_t j = 0; j < n; ++j) {
            // 24 bits as a signed integer: int32 -> float vectorizes, uint32 -> float does not.
            const auto u = static_cast<std::int32_t>(
                counter_at(row_key, column + static_cast<std::uint32_t>(first + j)) >> 8);
            const float t = x[first + j] / scale + static_cast<float>(u) * unit + 128.0f;
            const std::int32_t level = static_cast<std::int32_t>(t) - 128;
            levels[j] = static_cast<std::int8_t>(std::min(std::max(level, -127), 127));
        }
        std::memcpy(q + first, levels, static_cast<std::size_t>(n));
    }
}

STRATA_SIMD_CLONES void unpack_int8(const std::byte* in, index_t width, float* x) {
    float scale = 0.0f;
    std::memcpy(&scale, in, sizeof(scale));
    const auto* q = reinterpret_cast<const std::int8_t*>(in + sizeof(scale));
    for (index_t j = 0; j < width; ++j) {
        x[j] = static_cast<float>(q[j]) * scale;
    }
}

/// Rows ahead whose cache lines pack_records prefetches.
constexpr index_t ahead = 2;

/// Record r of `out` from row source(r) of x, for r < count; stochastically with `rounding`.
template <class Source>
void pack_records(HaloPrecision precision, ConstMatrixView x, index_t count, Source source,
                  std::span<std::byte> out, const HaloRounding* rounding) {
    check_sizes("pack_rows", precision, count, x.cols, out.size());
    STRATA_CHECK(rounding == nullptr || rounding->ids.size() == static_cast<std::size_t>(count),
                 "pack_rows: ", rounding == nullptr ? 0 : rounding->ids.size(),
                 " vertex ids for stochastic rounding of ", count, " rows");
    const auto column =
        static_cast<std::uint32_t>(rounding == nullptr ? 0 : rounding->first_column);
    const std::size_t record = packed_row_bytes(precision, x.cols);
    const auto width = static_cast<std::size_t>(x.cols);
    const bool parallel = static_cast<std::size_t>(count) * width >= parallel_values;
#pragma omp parallel for schedule(static) if (parallel)
    for (index_t r = 0; r < count; ++r) {
        if (r + ahead < count) {  // scattered rows: keep their cache lines in flight
            const float* next = x.data + static_cast<std::size_t>(source(r + ahead)) * width;
            for (std::size_t j = 0; j < width; j += 16) {
                __builtin_prefetch(next + j);
            }
        }
        const float* from = x.data + static_cast<std::size_t>(source(r)) * width;
        std::byte* to = out.data() + static_cast<std::size_t>(r) * record;
        if (rounding != nullptr) {
            const std::uint64_t key =
                counter_row_key(rounding->stream, rounding->ids[static_cast<std::size_t>(r)]);
            if (precision == HaloPrecision::bf16) {
                pack_bf16_stochastic(from, x.cols, key, column, to);
            } else {
                pack_int8_stochastic(from, x.cols, key, column, to);
            }
        } else if (precision == HaloPrecision::bf16) {
            pack_bf16(from, x.cols, to);
        } else {
            pack_int8(from, x.cols, to);
        }
    }
}

}  // namespace

const char* to_string(HaloPrecision precision) {
    switch (precision) {
        case HaloPrecision::fp32:
            return "fp32";
        case HaloPrecision::bf16:
            return "bf16";
        case HaloPrecision::int8:
            return "int8";
    }
    return "?";
}

std::optional<HaloPrecision> parse_halo_precision(std::string_view text) {
    for (const HaloPrecision p : {HaloPrecision::fp32, HaloPrecision::bf16, HaloPrecision::int8}) {
        if (text == to_string(p)) {
            return p;
        }
    }
    return std::nullopt;
}

const char* to_string(HaloRoundingMode mode) {
    return mode == HaloRoundingMode::stochastic ? "stochastic" : "nearest";
}

std::optional<HaloRoundingMode> parse_halo_rounding(std::string_view text) {
    for (const HaloRoundingMode m : {HaloRoundingMode::nearest, HaloRoundingMode::stochastic}) {
        if (text == to_string(m)) {
            return m;
        }
    }
    return std::nullopt;
}

std::uint16_t to_bf16(float value) {
    return bf16_bits(std::bit_cast<std::uint32_t>(value));
}

float from_bf16(std::uint16_t bits) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

void pack_rows(HaloPrecision precision, ConstMatrixView rows, std::span<std::byte> out,
               const HaloRounding* rounding) {
    pack_records(
        precision, rows, rows.rows, [](index_t r) { return r; }, out, rounding);
}

void pack_rows(HaloPrecision precision, ConstMatrixView x, std::span<const index_t> rows,
               std::span<std::byte> out, const HaloRounding* rounding) {
    const auto count = static_cast<index_t>(rows.size());
    for (const index_t r : rows) {
        STRATA_CHECK(r >= 0 && r < x.rows, "pack_rows: row ", r, " of a ", x.rows, "-row matrix");
    }
    pack_records(
        precision, x, count, [rows](index_t r) { return rows[static_cast<std::size_t>(r)]; }, out,
        rounding);
}

void unpack_rows(HaloPrecision precision, std::span<const std::byte> in, MatrixView rows) {
    check_sizes("unpack_rows", precision, rows.rows, rows.cols, in.size());
    const std::size_t record = packed_row_bytes(precision, rows.cols);
    const auto width = static_cast<std::size_t>(rows.cols);
    const bool parallel = rows.size() >= parallel_values;
#pragma omp parallel for schedule(static) if (parallel)
    for (index_t r = 0; r < rows.rows; ++r) {
        float* x = rows.data + static_cast<std::size_t>(r) * width;
        const std::byte* from = in.data() + static_cast<std::size_t>(r) * record;
        if (precision == HaloPrecision::bf16) {
            unpack_bf16(from, rows.cols, x);
        } else {
            unpack_int8(from, rows.cols, x);
        }
    }
}

}  // namespace strata
