// allocation_limit_bytes and check_allocation (src/base/memory_limit.hpp).
#include "src/base/memory_limit.hpp"

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "src/base/error.hpp"

#include <unistd.h>

namespace strata {
namespace {

std::uint64_t from_environment() {
    const char* value = std::getenv("STRATA_MEMORY_LIMIT_BYTES");
    if (value == nullptr || *value == '\0') {
        return 0;
    }
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(value, &end, 10);
    STRATA_CHECK(end != value && *end == '\0' && bytes > 0, "STRATA_MEMORY_LIMIT_BYTES='", value,
                 "': expected a positive number of bytes");
    return bytes;
}

std::string gigabytes(std::uint64_t bytes) {
    char text[32];
    const auto value = static_cast<double>(bytes);
    if (value >= 1e9) {
        std::snprintf(text, sizeof(text), "%.1f GB", value / 1e9);
    } else {
        std::snprintf(text, sizeof(text), "%.1f MB", value / 1e6);
    }
    return text;
}

}  // namespace

std::uint64_t allocation_limit_bytes() {
    if (const std::uint64_t bytes = from_environment()) {
        return bytes;
    }
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0
               ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
               : std::numeric_limits<std::uint64_t>::max();
}

void check_allocation(std::uint64_t bytes, const std::string& what) {
    const std::uint64_t limit = allocation_limit_bytes();
    STRATA_CHECK(bytes <= limit, what, " need ",
                 bytes == std::numeric_limits<std::uint64_t>::max()
                     ? std::string("more than 2^64 bytes")
                     : gigabytes(bytes),
                 ", more than ",
                 from_environment() != 0 ? "STRATA_MEMORY_LIMIT_BYTES (" + gigabytes(limit) + ")"
                                         : "this machine's memory (" + gigabytes(limit) + ")");
}

std::uint64_t saturating_bytes(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    if (a != 0 && b > max / a) {
        return max;
    }
    const std::uint64_t ab = a * b;
    return ab != 0 && c > max / ab ? max : ab * c;
}

}  // namespace strata
