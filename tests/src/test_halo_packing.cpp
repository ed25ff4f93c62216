// Halo packing (src/comm/halo_packing.hpp): record sizes, bf16 round to nearest even within
// 2^-8 relative, int8 within half a scale step per value, zero rows, non-finite values, and the
// size checks' messages.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/comm/halo_packing.hpp"

using namespace strata;
using Catch::Matchers::Contains;

namespace {

/// rows x width values spanning several orders of magnitude and both signs.
std::vector<float> sample(index_t rows, index_t width) {
    std::vector<float> x(static_cast<std::size_t>(rows * width));
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float magnitude =
            std::ldexp(1.0f + 0.37f * static_cast<float>(i % 11), static_cast<int>(i % 17) - 8);
        x[i] = (i % 3 == 0 ? -1.0f : 1.0f) * magnitude;
    }
    return x;
}

std::vector<float> round_trip(HaloPrecision precision, const std::vector<float>& x, index_t rows,
                              index_t width) {
    std::vector<std::byte> packed(static_cast<std::size_t>(rows) *
                                  packed_row_bytes(precision, width));
    pack_rows(precision, {x.data(), rows, width}, packed);
    std::vector<float> back(x.size(), -7.0f);
    unpack_rows(precision, packed, {back.data(), rows, width});
    return back;
}

}  // namespace

TEST_CASE("halo packing: record bytes per precision, names round-trip", "[halo_packing]") {
    CHECK(packed_row_bytes(HaloPrecision::fp32, 7) == 28);
    CHECK(packed_row_bytes(HaloPrecision::bf16, 7) == 14);
    CHECK(packed_row_bytes(HaloPrecision::int8, 7) == 11);  // 4-byte scale + 7 values
    for (const char* name : {"fp32", "bf16", "int8"}) {
        CHECK(std::string(to_string(*parse_halo_precision(name))) == name);
    }
    CHECK_FALSE(parse_halo_precision("fp16"));
}

TEST_CASE("halo packing: bf16 rounds to nearest even, within 2^-8 relative", "[halo_packing]") {
    CHECK(to_bf16(1.0f) == 0x3F80);
    // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
    CHECK(to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
    // 1 + 3 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: ties to even (1 + 2^-6).
    CHECK(to_bf16(1.0f + 3.0f * std::ldexp(1.0f, -8)) == 0x3F82);
    CHECK(to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3F81);  // above half
    CHECK(from_bf16(to_bf16(-2.5f)) == -2.5f);
    const index_t rows = 9;
    const index_t width = 13;  // odd: records need no padding
    const std::vector<float> x = sample(rows, width);
    const std::vector<float> back = round_trip(HaloPrecision::bf16, x, rows, width);
    for (std::size_t i = 0; i < x.size(); ++i) {
        CHECK(std::fabs(back[i] - x[i]) <= std::ldexp(std::fabs(x[i]), -8));
    }
}

TEST_CASE("halo packing: int8 with a per-row scale, within half a step", "[halo_packing]") {
    const index_t rows = 6;
    const index_t width = 10;
    std::vector<float> x = sample(rows, width);
    for (index_t c = 0; c < width; ++c) {
        x[static_cast<std::size_t>(2 * width + c)] = 0.0f;  // row 2 all zero
    }
    const std::vector<float> back = round_trip(HaloPrecision::int8, x, rows, width);
    for (index_t r = 0; r < rows; ++r) {
        float largest = 0.0f;
        for (index_t c = 0; c < width; ++c) {
            largest = std::max(largest, std::fabs(x[static_cast<std::size_t>(r * width + c)]));
        }
        const float scale = largest / 127.0f;
        for (index_t c = 0; c < width; ++c) {
            const auto i = static_cast<std::size_t>(r * width + c);
            // Half a step, plus the float rounding of x / s and of q s (a few ulps of x).
            CHECK(std::fabs(back[i] - x[i]) <= 0.5f * scale * (1.0f + 1e-5f) + 1e-6f * largest);
        }
    }
    for (index_t c = 0; c < width; ++c) {
        CHECK(back[static_cast<std::size_t>(2 * width + c)] == 0.0f);  // zero row: exactly zero
    }
    // Values on the grid of their row's scale come back exactly: k 2^-7 with max |k| = 127.
    std::vector<float> grid{127.0f, -3.0f, 0.0f, 64.0f, -127.0f, 1.0f};
    for (float& v : grid) {
        v = std::ldexp(v, -7);
    }
    CHECK(round_trip(HaloPrecision::int8, grid, 1, 6) == grid);
    CHECK(round_trip(HaloPrecision::bf16, grid, 1, 6) == grid);
}

TEST_CASE("halo packing: non-finite values (bf16 keeps them, an int8 row becomes NaN)",
          "[halo_packing]") {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> x{1.0f,
                               -inf,
                               2.0f,
                               /* row 2 */ nan,
                               0.5f,
                               0.25f,
                               /* row 3, on its grid */ 127.0f / 128,
                               -64.0f / 128,
                               1.0f / 128};
    const std::vector<float> bf = round_trip(HaloPrecision::bf16, x, 3, 3);
    CHECK(bf[1] == -inf);
    CHECK(std::isnan(bf[3]));
    CHECK(bf[4] == 0.5f);
    CHECK(from_bf16(to_bf16(3.4e38f)) == inf);  // beyond bf16's largest finite value
    const std::vector<float> q = round_trip(HaloPrecision::int8, x, 3, 3);
    for (std::size_t i = 0; i < 6; ++i) {
        CHECK(std::isnan(q[i]));  // rows 1 and 2: no finite scale
    }
    CHECK(q[6] == x[6]);  // row 3 untouched by its neighbours (its values are on its grid)
    CHECK(q[8] == x[8]);
}

TEST_CASE("halo packing: short buffers and fp32 are refused with the sizes", "[halo_packing]") {
    std::vector<float> x(8, 1.0f);
    std::vector<std::byte> small(10);
    CHECK_THROWS_WITH(pack_rows(HaloPrecision::int8, {x.data(), 2, 4}, small),
                      Contains("pack_rows: 10 bytes for 2 rows of 4 int8 values (16 bytes)"));
    CHECK_THROWS_WITH(unpack_rows(HaloPrecision::bf16, small, {x.data(), 2, 4}),
                      Contains("unpack_rows: 10 bytes for 2 rows of 4 bf16 values (16 bytes)"));
    CHECK_THROWS_WITH(pack_rows(HaloPrecision::fp32, {x.data(), 2, 4}, small),
                      Contains("fp32 rows are sent as they are"));
}

namespace {

/// The formats as src/comm/halo_packing.hpp states them, one value at a time with the C library's
/// rounding (std::nearbyint, std::isnan): what the blocked, vectorized kernels must equal byte
/// for byte.
std::vector<std::byte> reference_records(HaloPrecision precision, const std::vector<float>& x,
                                         index_t rows, index_t width) {
    std::vector<std::byte> out(static_cast<std::size_t>(rows) * packed_row_bytes(precision, width));
    for (index_t r = 0; r < rows; ++r) {
        const float* v = x.data() + static_cast<std::size_t>(r * width);
        std::byte* to =
            out.data() + static_cast<std::size_t>(r) * packed_row_bytes(precision, width);
        if (precision == HaloPrecision::bf16) {
            for (index_t j = 0; j < width; ++j) {
                const auto bits = std::bit_cast<std::uint32_t>(v[j]);
                const auto half = static_cast<std::uint16_t>(
                    std::isnan(v[j]) ? (bits >> 16) | 0x40u
                                     : (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
                std::memcpy(to + 2 * j, &half, 2);
            }
            continue;
        }
        float largest = 0.0f;
        bool finite = true;
        for (index_t j = 0; j < width; ++j) {
            finite = finite && std::isfinite(v[j]);
            largest = std::max(largest, std::fabs(v[j]));
        }
        const float scale = finite ? largest / 127.0f : std::numeric_limits<float>::quiet_NaN();
        std::memcpy(to, &scale, 4);
        for (index_t j = 0; j < width; ++j) {
            const auto level = !finite || scale == 0.0f
                                   ? 0.0f
                                   : std::clamp(std::nearbyint(v[j] / scale), -127.0f, 127.0f);
            to[4 + j] = static_cast<std::byte>(static_cast<std::int8_t>(level));
        }
    }
    return out;
}

}  // namespace

TEST_CASE("halo packing: the kernels equal a value-at-a-time reference byte for byte",
          "[halo_packing]") {
    // Widths around the kernels' 64-value blocks and vector lengths; rows with exact ties
    // (k + 0.5 steps of the scale), negative zeros, a zero row, a row whose scale underflows,
    // and rows holding inf and NaN.
    for (const index_t width : {1, 7, 8, 63, 64, 65, 130, 300}) {
        const index_t rows = 8;
        std::vector<float> x = sample(rows, width);
        for (index_t j = 0; j < width; ++j) {
            const auto at = [&](index_t r) -> float& {
                return x[static_cast<std::size_t>(r * width + j)];
            };
            // scale exactly 1 (largest 127): every other value k + 0.5 is a tie
            at(1) = j == 0 ? 127.0f : static_cast<float>(j % 252) - 126.0f + 0.5f;
            at(2) = j % 2 == 0 ? -0.0f : 0.0f;
            at(3) = std::numeric_limits<float>::denorm_min() * static_cast<float>(j % 3);
            at(4) = j == width / 2 ? std::numeric_limits<float>::infinity() : at(4);
            at(5) = j == width - 1 ? std::numeric_limits<float>::quiet_NaN() : at(5);
            at(6) = -std::ldexp(1.0f + static_cast<float>(j % 256) / 256.0f, 7);  // bf16 ties
        }
        for (const HaloPrecision p : {HaloPrecision::bf16, HaloPrecision::int8}) {
            CAPTURE(width, to_string(p));
            std::vector<std::byte> packed(static_cast<std::size_t>(rows) *
                                          packed_row_bytes(p, width));
            pack_rows(p, {x.data(), rows, width}, packed);
            CHECK(packed == reference_records(p, x, rows, width));
        }
    }
}

TEST_CASE("halo packing: rows packed by index are the records of the gathered rows",
          "[halo_packing]") {
    // The forward exchange packs a part's boundary rows straight from the activations: the same
    // bytes as gathering them first, repeated and out-of-order rows included.
    const index_t rows = 40;
    const index_t width = 70;  // one full block of 64 values and a tail
    const std::vector<float> x = sample(rows, width);
    const std::vector<index_t> pick = {39, 0, 7, 7, 22, 1, 38};
    std::vector<float> gathered;
    for (const index_t r : pick) {
        const auto* row = x.data() + static_cast<std::size_t>(r * width);
        gathered.insert(gathered.end(), row, row + width);
    }
    const auto count = static_cast<index_t>(pick.size());
    for (const HaloPrecision precision : {HaloPrecision::bf16, HaloPrecision::int8}) {
        const std::size_t bytes = pick.size() * packed_row_bytes(precision, width);
        std::vector<std::byte> direct(bytes);
        pack_rows(precision, {x.data(), rows, width}, pick, direct);
        std::vector<std::byte> staged(bytes);
        pack_rows(precision, {gathered.data(), count, width}, staged);
        CHECK(direct == staged);
        CHECK(direct == reference_records(precision, gathered, count, width));
    }
    std::vector<std::byte> out(8 * packed_row_bytes(HaloPrecision::bf16, width));
    const std::vector<index_t> outside = {3, 40};
    CHECK_THROWS_WITH(pack_rows(HaloPrecision::bf16, {x.data(), rows, width}, outside, out),
                      Contains("pack_rows: row 40 of a 40-row matrix"));
}

TEST_CASE(
    "halo packing: stochastic rounding is unbiased, stays between the two neighbours "
    "and is keyed by (stream, vertex, column)",
    "[halo_packing]") {
    // One row of values between representable ones, packed under 4096 streams: each value
    // decodes to one of its two representable neighbours, their mean to the value itself within
    // the sampling error (6 standard errors); representable values never move. The same key
    // gives the same bytes, whoever packs the row and where it sits among the records.
    const index_t width = 70;
    std::vector<float> x(static_cast<std::size_t>(width));
    for (index_t j = 0; j < width; ++j) {
        x[static_cast<std::size_t>(j)] =
            (j % 2 == 0 ? 1.0f : -1.0f) * (0.3f + 0.0137f * static_cast<float>(j));
    }
    x[5] = 1.0f;  // exact in bf16
    x[6] = 0.0f;  // exact in both
    const std::vector<global_id> id = {12345};
    for (const HaloPrecision p : {HaloPrecision::bf16, HaloPrecision::int8}) {
        INFO(to_string(p));
        // The neighbours lo <= x <= hi as unpack decodes them.
        float scale = 0.0f;
        for (const float v : x) {
            scale = std::max(scale, std::fabs(v));
        }
        scale /= 127.0f;
        std::vector<float> lo(x.size());
        std::vector<float> hi(x.size());
        for (std::size_t j = 0; j < x.size(); ++j) {
            if (p == HaloPrecision::bf16) {
                const std::uint16_t t =
                    static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(x[j]) >> 16);
                const float a = from_bf16(t);
                const float b = a == x[j] ? a : from_bf16(static_cast<std::uint16_t>(t + 1));
                lo[j] = std::min(a, b);
                hi[j] = std::max(a, b);
            } else {
                const float q = std::floor(x[j] / scale);
                lo[j] = q * scale;
                hi[j] = lo[j] == x[j] ? lo[j] : (q + 1.0f) * scale;
            }
        }
        const std::size_t record = packed_row_bytes(p, width);
        constexpr int draws = 4096;
        std::vector<double> sum(x.size(), 0.0);
        std::vector<int> at_hi(x.size(), 0);
        bool between = true;
        for (int s = 0; s < draws; ++s) {
            const HaloRounding rounding{.stream = static_cast<std::uint64_t>(s) * 977, .ids = id};
            std::vector<std::byte> packed(record);
            pack_rows(p, {x.data(), 1, width}, packed, &rounding);
            std::vector<float> back(x.size());
            unpack_rows(p, packed, {back.data(), 1, width});
            for (std::size_t j = 0; j < x.size(); ++j) {
                sum[j] += back[j];
                between = between && (back[j] == lo[j] || back[j] == hi[j]);
                at_hi[j] += back[j] == hi[j] && hi[j] != lo[j] ? 1 : 0;
            }
        }
        CHECK(between);
        double worst = 0.0;  // |mean - x| in units of the gap; one standard error <= 1/128
        int both_ways = 0;
        for (std::size_t j = 0; j < x.size(); ++j) {
            const double gap = static_cast<double>(hi[j]) - static_cast<double>(lo[j]);
            if (gap > 0.0) {
                worst = std::max(worst, std::fabs(sum[j] / draws - x[j]) / gap);
                both_ways += at_hi[j] > 0 && at_hi[j] < draws ? 1 : 0;
            } else {
                CHECK(sum[j] / draws == x[j]);
            }
        }
        CHECK(worst < 0.05);
        CHECK(both_ways > width / 2);
        if (p == HaloPrecision::bf16) {
            CHECK(at_hi[5] == 0);
        }
        CHECK(at_hi[6] == 0);

        // Keyed by vertex and column, not by position: a row packed alone, among others, by
        // index or at a column offset keys the same values by the same (vertex, column).
        std::vector<float> two(x);
        two.insert(two.end(), x.begin(), x.end());
        const std::vector<global_id> ids = {777, 12345};
        const HaloRounding both{.stream = 99, .ids = ids};
        std::vector<std::byte> packed2(2 * record);
        pack_rows(p, {two.data(), 2, width}, packed2, &both);
        const HaloRounding alone{.stream = 99, .ids = id};
        std::vector<std::byte> packed1(record);
        pack_rows(p, {x.data(), 1, width}, packed1, &alone);
        CHECK(std::equal(packed1.begin(), packed1.end(), packed2.begin() + record));
        CHECK(!std::equal(packed1.begin(), packed1.end(), packed2.begin()));  // vertex 777
        const std::vector<index_t> second = {1};
        std::vector<std::byte> by_index(record);
        pack_rows(p, {two.data(), 2, width}, second, by_index, &alone);
        CHECK(by_index == packed1);
        // Columns 35.. of the row, packed as a slice starting at column 35: the same values.
        if (p == HaloPrecision::bf16) {  // int8's scale is per packed row
            const index_t half = width / 2;
            std::vector<float> right(x.begin() + half, x.end());
            const HaloRounding slice{.stream = 99, .ids = id, .first_column = half};
            std::vector<std::byte> packed_right(packed_row_bytes(p, width - half));
            pack_rows(p, {right.data(), 1, width - half}, packed_right, &slice);
            CHECK(std::equal(packed_right.begin(), packed_right.end(),
                             packed1.begin() + 2 * static_cast<std::size_t>(half)));
        }
        const std::vector<global_id> too_few;
        const HaloRounding none{.stream = 1, .ids = too_few};
        CHECK_THROWS_WITH(pack_rows(p, {x.data(), 1, width}, packed1, &none),
                          Contains("0 vertex ids for stochastic rounding of 1 rows"));
    }
    CHECK(std::string(to_string(HaloRoundingMode::stochastic)) == "stochastic");
    CHECK(parse_halo_rounding("nearest") == HaloRoundingMode::nearest);
    CHECK(!parse_halo_rounding("random").has_value());
}
