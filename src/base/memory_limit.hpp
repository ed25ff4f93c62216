// check_allocation: a reader refuses, with one line, a size read from a file that would need more
// memory than the machine has — instead of being killed for it (or crashing in an allocator).
#pragma once

#include <cstdint>
#include <string>

namespace strata {

/// The most bytes one allocation sized by an input file may take: the machine's physical memory
/// (sysconf), or STRATA_MEMORY_LIMIT_BYTES when set to a positive integer (tests and the fuzz
/// harnesses lower it).
[[nodiscard]] std::uint64_t allocation_limit_bytes();

/// Throws strata::Error "<what> need(s) 17.6 GB, more than this machine's memory (23.5 GB)"
/// (or "... than STRATA_MEMORY_LIMIT_BYTES (1.1 GB)") when `bytes` exceeds the limit.
void check_allocation(std::uint64_t bytes, const std::string& what);

/// a * b * c without overflow: saturates at UINT64_MAX (which no limit admits).
[[nodiscard]] std::uint64_t saturating_bytes(std::uint64_t a, std::uint64_t b, std::uint64_t c = 1);

}  // namespace strata
