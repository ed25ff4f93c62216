// AllocationLedger: a size per live pointer and the running totals.
#include "src/device/allocation_ledger.hpp"

#include <algorithm>

namespace strata {

void AllocationLedger::add(void* ptr, std::size_t bytes) {
    const std::lock_guard lock(mutex_);
    sizes_.emplace(ptr, bytes);
    stats_.bytes_in_use += static_cast<std::int64_t>(bytes);
    stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.bytes_in_use);
    ++stats_.allocations;
}

void AllocationLedger::remove(void* ptr) noexcept {
    const std::lock_guard lock(mutex_);
    if (const auto it = sizes_.find(ptr); it != sizes_.end()) {
        stats_.bytes_in_use -= static_cast<std::int64_t>(it->second);
        --stats_.allocations;
        sizes_.erase(it);
    }
}

MemoryStats AllocationLedger::stats() const {
    const std::lock_guard lock(mutex_);
    return stats_;
}

}  // namespace strata
