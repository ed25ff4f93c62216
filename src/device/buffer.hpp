// Buffer<T> / HostBuffer<T>: move-only owners of `size` elements allocated by a Backend, in its
// memory (Backend::allocate) or in its staging host memory (Backend::allocate_host: page-locked
// on CUDA).
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "src/device/backend.hpp"

namespace strata {

enum class MemorySpace {
    backend,  ///< the backend's own memory (device memory on a GPU)
    staging,  ///< host memory for transfers (page-locked on CUDA)
};

/// The backend must outlive every buffer it allocated. Deep copies are explicit (clone()).
/// Contents start uninitialised unless uploaded.
template <class T, MemorySpace Space>
class BasicBuffer {
public:
    BasicBuffer() = default;
    BasicBuffer(Backend& backend, std::size_t size) : backend_(&backend), size_(size) {
        if (size_ > 0) {
            data_ = static_cast<T*>(Space == MemorySpace::backend
                                        ? backend.allocate(size_ * sizeof(T))
                                        : backend.allocate_host(size_ * sizeof(T)));
        }
    }
    /// Allocates and uploads `host`.
    BasicBuffer(Backend& backend, std::span<const T> host) requires(Space == MemorySpace::backend)
        : BasicBuffer(backend, host.size()) {
        if (size_ > 0) {
            backend.upload(data_, host.data(), size_ * sizeof(T));
        }
    }
    BasicBuffer(const BasicBuffer&) = delete;
    BasicBuffer& operator=(const BasicBuffer&) = delete;
    BasicBuffer(BasicBuffer&& other) noexcept
        : backend_(other.backend_),
          data_(std::exchange(other.data_, nullptr)),
          size_(std::exchange(other.size_, 0)) {}
    BasicBuffer& operator=(BasicBuffer&& other) noexcept {
        if (this != &other) {
            release();
            backend_ = other.backend_;
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    ~BasicBuffer() { release(); }

    [[nodiscard]] BasicBuffer clone() const requires(Space == MemorySpace::backend) {
        BasicBuffer copy(*backend_, size_);
        if (size_ > 0) {
            backend_->copy(copy.data_, data_, size_ * sizeof(T));
        }
        return copy;
    }
    [[nodiscard]] std::vector<T> download() const requires(Space == MemorySpace::backend) {
        std::vector<T> host(size_);
        if (size_ > 0) {
            backend_->download(host.data(), data_, size_ * sizeof(T));
        }
        return host;
    }

    T* data() { return data_; }
    const T* data() const { return data_; }
    [[nodiscard]] std::size_t size() const { return size_; }
    std::span<T> span() { return {data_, size_}; }
    std::span<const T> span() const { return {data_, size_}; }
    Backend& backend() const { return *backend_; }

private:
    void release() noexcept {
        if (data_ != nullptr) {
            if constexpr (Space == MemorySpace::backend) {
                backend_->deallocate(data_);
            } else {
                backend_->deallocate_host(data_);
            }
            data_ = nullptr;
        }
    }

    Backend* backend_ = nullptr;
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

template <class T>
using Buffer = BasicBuffer<T, MemorySpace::backend>;
template <class T>
using HostBuffer = BasicBuffer<T, MemorySpace::staging>;

}  // namespace strata
