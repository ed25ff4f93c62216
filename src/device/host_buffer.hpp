// HostBuffer<T>: move-only owner of `size` elements of a backend's staging host memory
// (Backend::allocate_host: page-locked on CUDA).
#pragma once

#include <cstddef>
#include <span>
#include <utility>

#include "src/device/backend.hpp"

namespace strata {

/// The backend must outlive the buffer. Contents are uninitialised.
template <class T>
class HostBuffer {
public:
    HostBuffer() = default;
    HostBuffer(Backend& backend, std::size_t size)
        : backend_(&backend),
          data_(static_cast<T*>(backend.allocate_host(size * sizeof(T)))),
          size_(size) {}
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    HostBuffer(HostBuffer&& other) noexcept
        : backend_(other.backend_),
          data_(std::exchange(other.data_, nullptr)),
          size_(std::exchange(other.size_, 0)) {}
    HostBuffer& operator=(HostBuffer&& other) noexcept {
        if (this != &other) {
            release();
            backend_ = other.backend_;
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    ~HostBuffer() { release(); }

    T* data() { return data_; }
    [[nodiscard]] std::size_t size() const { return size_; }
    std::span<T> span() { return {data_, size_}; }

private:
    void release() noexcept {
        if (data_ != nullptr) {
            backend_->deallocate_host(data_);
            data_ = nullptr;
        }
    }

    Backend* backend_ = nullptr;
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace strata
