// Halo packing kernels: bf16 and int8 rows, one row per loop iteration (OpenMP over rows).
#include "src/comm/halo_packing.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "src/base/error.hpp"

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

void pack_bf16(const float* x, index_t width, std::byte* out) {
    for (index_t j = 0; j < width; ++j) {
        const std::uint16_t bits = to_bf16(x[j]);
        std::memcpy(out + 2 * static_cast<std::size_t>(j), &bits, sizeof(bits));
    }
}

void unpack_bf16(const std::byte* in, index_t width, float* x) {
    for (index_t j = 0; j < width; ++j) {
        std::uint16_t bits = 0;
        std::memcpy(&bits, in + 2 * static_cast<std::size_t>(j), sizeof(bits));
        x[j] = from_bf16(bits);
    }
}

void pack_int8(const float* x, index_t width, std::byte* out) {
    float largest = 0.0f;
    bool finite = true;
    for (index_t j = 0; j < width; ++j) {
        finite = finite && std::isfinite(x[j]);
        largest = std::max(largest, std::fabs(x[j]));
    }
    const float scale = !finite ? std::numeric_limits<float>::quiet_NaN() : largest / 127.0f;
    std::memcpy(out, &scale, sizeof(scale));
    auto* q = reinterpret_cast<std::int8_t*>(out + sizeof(scale));
    if (!finite || scale == 0.0f) {  // also a zero row, and one whose scale underflows
        std::fill(q, q + width, std::int8_t{0});
        return;
    }
    for (index_t j = 0; j < width; ++j) {
        const float level = std::clamp(std::nearbyint(x[j] / scale), -127.0f, 127.0f);
        q[j] = static_cast<std::int8_t>(level);
    }
}

void unpack_int8(const std::byte* in, index_t width, float* x) {
    float scale = 0.0f;
    std::memcpy(&scale, in, sizeof(scale));
    const auto* q = reinterpret_cast<const std::int8_t*>(in + sizeof(scale));
    for (index_t j = 0; j < width; ++j) {
        x[j] = static_cast<float>(q[j]) * scale;
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

std::size_t packed_row_bytes(HaloPrecision precision, index_t width) {
    const auto w = static_cast<std::size_t>(width);
    switch (precision) {
        case HaloPrecision::fp32:
            return 4 * w;
        case HaloPrecision::bf16:
            return 2 * w;
        case HaloPrecision::int8:
            return 4 + w;
    }
    return 4 * w;
}

std::uint16_t to_bf16(float value) {
    const auto bits = std::bit_cast<std::uint32_t>(value);
    if (std::isnan(value)) {
        return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // quiet, sign kept
    }
    const std::uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
    return static_cast<std::uint16_t>(rounded >> 16);
}

float from_bf16(std::uint16_t bits) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

void pack_rows(HaloPrecision precision, ConstMatrixView rows, std::span<std::byte> out) {
    check_sizes("pack_rows", precision, rows.rows, rows.cols, out.size());
    const std::size_t record = packed_row_bytes(precision, rows.cols);
    const auto width = static_cast<std::size_t>(rows.cols);
    const bool parallel = rows.size() >= parallel_values;
#pragma omp parallel for schedule(static) if (parallel)
    for (index_t r = 0; r < rows.rows; ++r) {
        const float* x = rows.data + static_cast<std::size_t>(r) * width;
        std::byte* to = out.data() + static_cast<std::size_t>(r) * record;
        if (precision == HaloPrecision::bf16) {
            pack_bf16(x, rows.cols, to);
        } else {
            pack_int8(x, rows.cols, to);
        }
    }
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
