// libFuzzer harness: convert_text (datasets/text_convert.hpp). The input is cut at
// "\n--8<--\n" into edges.txt, labels.txt, the features (features.mtx when the piece starts
// with '%', else features.txt), train.txt, val.txt and test.txt.
#include "datasets/text_convert.hpp"
#include "tests/fuzz/fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace strata::fuzz;
    reset_scratch();
    const std::vector<Piece> pieces = split_input(data, size, 6);
    const char* names[] = {"edges.txt", "labels.txt", "features",
                           "train.txt", "val.txt",    "test.txt"};
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (!pieces[i].present) {
            continue;
        }
        std::string name = names[i];
        if (name == "features") {
            name = !pieces[i].bytes.empty() && pieces[i].bytes[0] == '%' ? "features.mtx"
                                                                         : "features.txt";
        }
        write_file(scratch() / name, pieces[i].bytes);
    }
    return expect_ok_or_error([&] {
        (void)strata::convert_text(scratch().string(), strata::TextConvertOptions{.name = "f"});
    });
}
