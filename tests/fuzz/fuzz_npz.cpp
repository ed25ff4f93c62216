// libFuzzer harness: convert_npz (datasets/npz_convert.hpp) on a raw-byte file — libzip's
// archive reader, our .npy parser and the two layouts' validation.
#include "datasets/npz_convert.hpp"
#include "tests/fuzz/fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace strata::fuzz;
    reset_scratch();
    const auto path = scratch() / "graph.npz";
    write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
    return expect_ok_or_error([&] { (void)strata::convert_npz(path.string()); });
}
