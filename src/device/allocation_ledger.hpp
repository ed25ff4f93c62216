// AllocationLedger: what a backend has handed out and not got back (Backend::memory_stats),
// shared by the CPU and CUDA backends. Thread-safe; allocation is rare (plan once).
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "src/device/backend.hpp"

namespace strata {

class AllocationLedger {
public:
    /// `ptr` (not null) of `bytes` was allocated. Throws std::bad_alloc if the ledger cannot
    /// grow (the caller then frees `ptr`).
    void add(void* ptr, std::size_t bytes);
    /// `ptr` is about to be freed; unknown pointers are ignored. Never throws.
    void remove(void* ptr) noexcept;
    [[nodiscard]] MemoryStats stats() const;

private:
    mutable std::mutex mutex_;
    std::unordered_map<void*, std::size_t> sizes_;
    MemoryStats stats_;
};

}  // namespace strata
