// Buffer<T>: move-only owner of `size` elements allocated by a Backend.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "src/device/backend.hpp"

namespace strata {

/// The backend must outlive every buffer it allocated. Deep copies are explicit (clone()).
template <class T>
class Buffer {
public:
    Buffer() = default;
    Buffer(Backend& backend, std::size_t size) : backend_(&backend), size_(size) {
        if (size_ > 0) {
            data_ = static_cast<T*>(backend.allocate(size_ * sizeof(T)));
        }
    }
    /// Allocates and uploads `host`.
    Buffer(Backend& backend, std::span<const T> host) : Buffer(backend, host.size()) {
        if (size_ > 0) {
            backend.upload(data_, host.data(), size_ * sizeof(T));
        }
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& other) noexcept
        : backend_(other.backend_),
          data_(std::exchange(other.data_, nullptr)),
          size_(std::exchange(other.size_, 0)) {}
    Buffer& operator=(Buffer&& other) noexcept {
        if (this != &other) {
            release();
            backend_ = other.backend_;
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    ~Buffer() { release(); }

    [[nodiscard]] Buffer clone() const {
        Buffer copy(*backend_, size_);
        if (size_ > 0) {
            backend_->copy(copy.data_, data_, size_ * sizeof(T));
        }
        return copy;
    }
    [[nodiscard]] std::vector<T> download() const {
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
            backend_->deallocate(data_);
            data_ = nullptr;
        }
    }

    Backend* backend_ = nullptr;
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace strata
