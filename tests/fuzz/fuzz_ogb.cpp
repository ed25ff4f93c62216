// libFuzzer harness: convert_ogb (datasets/ogb_convert.hpp). The input is cut at "\n--8<--\n"
// into raw/num-node-list, raw/num-edge-list, raw/edge, raw/node-feat, raw/node-label and
// split/s/{train,valid,test}, each written gzip-compressed (.csv.gz): the CSV parsing and the
// counts' validation, not zlib itself.
#include "datasets/gzip_lines.hpp"
#include "datasets/ogb_convert.hpp"
#include "tests/fuzz/fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace strata::fuzz;
    reset_scratch();
    const std::vector<Piece> pieces = split_input(data, size, 8);
    const char* names[] = {"raw/num-node-list", "raw/num-edge-list", "raw/edge",
                           "raw/node-feat",     "raw/node-label",    "split/s/train",
                           "split/s/valid",     "split/s/test"};
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (pieces[i].present) {
            const auto path = scratch() / (std::string(names[i]) + ".csv.gz");
            std::filesystem::create_directories(path.parent_path());
            strata::write_gzip_file(path.string(), pieces[i].bytes);
        }
    }
    return expect_ok_or_error([&] {
        (void)strata::convert_ogb(scratch().string(), strata::OgbConvertOptions{.name = "f"});
    });
}
