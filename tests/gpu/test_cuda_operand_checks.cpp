// The CUDA backend behind Backend's checked entry points: each bad operand of
// tests/src/bad_operand_calls.hpp is rejected on the GPU with the same one-line message as on
// the CPU (the checks run before either backend sees the call), nothing is queued on the device
// (it synchronises cleanly), and a good call afterwards still runs.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "src/tensor/dense_matrix.hpp"
#include "tests/gpu/gpu_test_util.hpp"
#include "tests/src/bad_operand_calls.hpp"

namespace strata {

TEST_CASE("CUDA rejects bad operands with the CPU's one-line message", "[gpu]") {
    test::Backends b;
    const std::vector<test::BadCall> calls = test::bad_operand_calls();
    REQUIRE(calls.size() >= 9);
    for (const test::BadCall& call : calls) {
        INFO(call.operation);
        const std::string cpu = test::message_of(call, *b.cpu);
        const std::string gpu = test::message_of(call, *b.gpu);

        CHECK(gpu == call.message);
        CHECK(gpu == cpu);
    }
    REQUIRE_NOTHROW(b.gpu->synchronize());
    DenseMatrix y(*b.gpu, 3, 2);
    b.gpu->fill(y.view(), 2.5f);
    CHECK(y.download().values == std::vector<float>(6, 2.5f));
}

}  // namespace strata
