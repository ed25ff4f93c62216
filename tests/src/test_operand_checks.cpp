// The Backend's checked entry points (src/device/backend.hpp): a bad operand is rejected with
// its one-line message before any backend sees the call — on the CPU backend, and on a backend
// whose implementations only record that they were reached (so a new backend needs no checks of
// its own) — and good calls reach the implementation.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/src/bad_operand_calls.hpp"

namespace strata {
namespace {

/// Swallows an implementation's arguments.
template <typename... T>
void ignore(const T&... /*arguments*/) {}

/// Host memory, and operations that record their name and do nothing else (no checks).
class RecordingBackend final : public Backend {
public:
    std::vector<std::string> reached;

    [[nodiscard]] DeviceKind kind() const override { return DeviceKind::cpu; }
    [[nodiscard]] std::string describe() const override { return "recording"; }
    [[nodiscard]] void* allocate(std::size_t bytes) override { return std::malloc(bytes); }
    void deallocate(void* ptr) noexcept override { std::free(ptr); }
    [[nodiscard]] void* allocate_host(std::size_t bytes) override { return std::malloc(bytes); }
    void deallocate_host(void* ptr) noexcept override { std::free(ptr); }
    void upload(void* dst, const void* src, std::size_t bytes) override {
        std::memcpy(dst, src, bytes);
    }
    void download(void* dst, const void* src, std::size_t bytes) override {
        std::memcpy(dst, src, bytes);
    }
    void copy(void* dst, const void* src, std::size_t bytes) override {
        std::memcpy(dst, src, bytes);
    }
    void synchronize() override {}
    [[nodiscard]] MemoryStats memory_stats() const override { return {}; }

private:
#define STRATA_BACKEND_OPERATION(result, name, parameters, arguments) \
    result name##_impl parameters override {                          \
        ignore arguments;                                             \
        reached.emplace_back(#name);                                  \
        return result();                                              \
    }
#include "src/device/backend_operations.hpp"
#undef STRATA_BACKEND_OPERATION
};

}  // namespace

TEST_CASE("a bad operand is rejected with one line before the CPU backend runs", "[device]") {
    const auto cpu = make_cpu_backend(1);
    const std::vector<test::BadCall> calls = test::bad_operand_calls();
    REQUIRE(calls.size() >= 9);
    for (const test::BadCall& call : calls) {
        INFO(call.operation);
        CHECK(test::message_of(call, *cpu) == call.message);
    }
}

TEST_CASE("a backend's implementations see only calls that passed the checks", "[device]") {
    RecordingBackend recording;
    for (const test::BadCall& call : test::bad_operand_calls()) {
        INFO(call.operation);
        CHECK(test::message_of(call, recording) == call.message);
    }
    CHECK(recording.reached.empty());

    Buffer<float> p(recording, 4);
    Buffer<float> g(recording, 4);
    recording.adam(p.span(), g.span(), p.span(), p.span(), AdamStep{});
    DenseMatrix y(recording, 2, 3);
    recording.fill(y.view(), 1.0f);
    recording.spmm(CsrMatrix::upload(recording, test::bad_call_csr()),
                   DenseMatrix(recording, 4, 2).view(), DenseMatrix(recording, 3, 2).view(), 0.0f);

    CHECK(recording.reached == std::vector<std::string>{"adam", "fill", "spmm"});
}

}  // namespace strata
