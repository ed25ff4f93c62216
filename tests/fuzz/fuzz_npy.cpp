// libFuzzer harness: parse_npy (datasets/npz_file.hpp) on raw bytes — the .npy header parser we
// wrote (magic, version, header length, the dict's descr/fortran_order/shape) and the payload
// size checks.
#include "datasets/npz_file.hpp"
#include "tests/fuzz/fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::vector<unsigned char> bytes(data, data + size);
    return strata::fuzz::expect_ok_or_error([&] { (void)strata::parse_npy(bytes, "fuzz.npy"); });
}
