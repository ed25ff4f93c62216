// Unique<T, Destroy, Null>: one move-only RAII holder for every C handle (CUDA, HDF5, ...).
#pragma once

#include <utility>

namespace strata {

template <class T, auto Destroy, T Null = T{}>
class Unique {
public:
    Unique() = default;
    explicit Unique(T handle) : handle_(handle) {}
    Unique(const Unique&) = delete;
    Unique& operator=(const Unique&) = delete;
    Unique(Unique&& other) noexcept : handle_(std::exchange(other.handle_, Null)) {}
    Unique& operator=(Unique&& other) noexcept {
        reset(std::exchange(other.handle_, Null));
        return *this;
    }
    ~Unique() { reset(); }

    T get() const { return handle_; }
    explicit operator bool() const { return handle_ != Null; }
    /// Releases ownership without destroying.
    T release() noexcept { return std::exchange(handle_, Null); }
    void reset(T handle = Null) noexcept {
        if (handle_ != Null) {
            Destroy(handle_);
        }
        handle_ = handle;
    }

private:
    T handle_ = Null;
};

}  // namespace strata
