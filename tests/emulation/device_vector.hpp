// DeviceVector<T>: a named buffer of the emulated device memory (the name is what a bounds fault
// reports), filled from the host and read back; the emulation's stand-in for a cudaMalloc'd
// array in the tests of tests/emulation.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "tests/emulation/emulator.hpp"

namespace strata::test {

template <class T>
class DeviceVector {
public:
    /// n elements, uninitialized (every byte 0xff: NaN floats, -1 integers).
    DeviceVector(std::string name, std::size_t n)
        : n_(n), data_(static_cast<T*>(emu::device_malloc(n * sizeof(T), std::move(name)))) {}
    /// A copy of `values`.
    DeviceVector(std::string name, std::span<const T> values)
        : DeviceVector(std::move(name), values.size()) {
        if (!values.empty()) {
            std::memcpy(static_cast<void*>(data_), values.data(), values.size() * sizeof(T));
        }
    }
    DeviceVector(std::string name, const std::vector<T>& values)
        : DeviceVector(std::move(name), std::span<const T>(values)) {}
    DeviceVector(const DeviceVector&) = delete;
    DeviceVector& operator=(const DeviceVector&) = delete;
    ~DeviceVector() { emu::device_free(data_); }

    [[nodiscard]] T* data() const { return data_; }
    [[nodiscard]] std::size_t size() const { return n_; }
    [[nodiscard]] std::vector<T> download() const { return std::vector<T>(data_, data_ + n_); }

private:
    std::size_t n_;
    T* data_;
};

}  // namespace strata::test
