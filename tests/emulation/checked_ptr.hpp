// checked_ptr<T>: what global_ptr<T> (src/device/cuda/global_ptr.hpp) is in the emulated build.
// A pointer into one buffer of the emulated device memory that knows the buffer (found in the
// allocator's registry when it is made from a raw pointer, carried through arithmetic), so that
// every access through [], * or -> is checked against the buffer's extent; an access outside it
// is recorded as the launch's fault (naming the kernel, the buffer and the index) and goes to a
// scratch element instead. Pointer arithmetic itself is not checked (one past the end is fine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tests/emulation/emulator.hpp"

namespace strata::emu {

template <class T>
class checked_ptr {
public:
    using element_type = T;

    checked_ptr() = default;
    // NOLINTNEXTLINE(google-explicit-constructor): a raw device pointer converts, as in CUDA
    checked_ptr(std::nullptr_t) {}
    // NOLINTNEXTLINE(google-explicit-constructor): a raw device pointer converts, as in CUDA
    checked_ptr(T* p) : p_(p), buffer_(p != nullptr ? require_allocation(p) : nullptr) {}
    template <class U>
    requires std::is_convertible_v<U*, T*>
    // NOLINTNEXTLINE(google-explicit-constructor): float* -> const float*, as raw pointers
    checked_ptr(const checked_ptr<U>& other) : p_(other.get()), buffer_(other.buffer()) {}

    T& operator[](std::int64_t i) const { return at(i); }
    T& operator*() const { return at(0); }
    T* operator->() const { return &at(0); }

    checked_ptr operator+(std::int64_t i) const { return {p_ + i, buffer_}; }
    checked_ptr operator-(std::int64_t i) const { return {p_ - i, buffer_}; }
    checked_ptr& operator+=(std::int64_t i) {
        p_ += i;
        return *this;
    }
    checked_ptr& operator++() {
        ++p_;
        return *this;
    }
    friend checked_ptr operator+(std::int64_t i, const checked_ptr& p) { return p + i; }

    friend bool operator==(const checked_ptr& a, std::nullptr_t) { return a.p_ == nullptr; }
    friend bool operator==(const checked_ptr& a, const checked_ptr& b) { return a.p_ == b.p_; }
    explicit operator bool() const { return p_ != nullptr; }

    /// The raw address (for the emulated cudaMemsetAsync and conversions).
    [[nodiscard]] T* get() const { return p_; }
    [[nodiscard]] const Allocation* buffer() const { return buffer_; }

private:
    checked_ptr(T* p, const Allocation* buffer) : p_(p), buffer_(buffer) {}

    T& at(std::int64_t i) const {
        if (buffer_ != nullptr) {
            const auto offset =
                static_cast<std::ptrdiff_t>(reinterpret_cast<std::uintptr_t>(p_) - buffer_->base) +
                static_cast<std::ptrdiff_t>(i) * static_cast<std::ptrdiff_t>(sizeof(T));
            if (offset >= 0 && static_cast<std::size_t>(offset) + sizeof(T) <= buffer_->bytes) {
                return p_[i];
            }
            detail::out_of_bounds(buffer_, offset, sizeof(T));
        } else {
            detail::out_of_bounds(nullptr, 0, sizeof(T));
        }
        return *static_cast<T*>(detail::scratch());
    }

    T* p_ = nullptr;
    const Allocation* buffer_ = nullptr;
};

}  // namespace strata::emu
