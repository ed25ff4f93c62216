// Catch2's main for test_cuda_emulation, plus the check that no kernel is left out: with
// STRATA_EMULATION_KERNELS set to src/device/cuda, every `__global__ void name(` of its .cu files
// must have been launched by the tests that ran (CTest's test_cuda_emulation.every_kernel runs
// them all in one process), or the run fails listing the kernels no test launched.
#define CATCH_CONFIG_RUNNER
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/emulation/emulator.hpp"

namespace {

/// The kernels no test launched ("file.cu:kernel", one per line), of the .cu files in `folder`.
std::string kernels_not_launched(const std::filesystem::path& folder, int& defined) {
    const std::regex global(R"(__global__\s+void\s+(\w+)\s*\()");
    std::string missing;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
        if (entry.path().extension() != ".cu") {
            continue;
        }
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        const std::string source = text.str();
        for (std::sregex_iterator it(source.begin(), source.end(), global), end; it != end; ++it) {
            ++defined;
            const std::string key = entry.path().filename().string() + ":" + (*it)[1].str();
            if (strata::emu::launched_kernels().count(key) == 0) {
                missing += "  " + key + "\n";
            }
        }
    }
    return missing;
}

}  // namespace

int main(int argc, char* argv[]) {
    const int failed = Catch::Session().run(argc, argv);
    const char* folder = std::getenv("STRATA_EMULATION_KERNELS");
    if (failed != 0 || folder == nullptr) {
        return failed;
    }
    int defined = 0;
    const std::string missing = kernels_not_launched(folder, defined);
    if (defined == 0 || !missing.empty()) {
        std::fprintf(stderr, "FAILED: of the %d kernels in %s, no test launched:\n%s", defined,
                     folder, missing.c_str());
        return 1;
    }
    std::printf("every kernel launched: %d kernels of %s\n", defined, folder);
    return 0;
}
