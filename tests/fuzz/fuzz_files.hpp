// Shared pieces of the libFuzzer harnesses (tests/fuzz, docs/fuzzing.md): a private scratch
// directory per process, the input cut into files, and the one rule every harness checks — a
// reader either returns or throws strata::Error; anything else (a crash, another exception, a
// sanitizer report, a timeout, an allocation beyond -rss_limit_mb) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"

#include <unistd.h>

// Sizes read from an input may not ask for more than 512 MB (src/base/memory_limit.hpp): a
// reader must refuse such a file with its one-line error, well inside libFuzzer's -rss_limit_mb.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    setenv("STRATA_MEMORY_LIMIT_BYTES", "536870912", 1);
    return 0;
}

namespace strata::fuzz {

/// A directory of this process, emptied before each input.
inline const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        const auto path =
            std::filesystem::temp_directory_path() / ("strata_fuzz_" + std::to_string(getpid()));
        std::filesystem::create_directories(path);
        return path;
    }();
    return dir;
}

inline void reset_scratch() {
    for (const auto& entry : std::filesystem::directory_iterator(scratch())) {
        std::filesystem::remove_all(entry.path());
    }
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// The input cut at every "\n--8<--\n" into at most `parts` pieces (the last keeps the rest);
/// missing pieces are absent (nullopt-like: `present` false).
struct Piece {
    std::string_view bytes;
    bool present = false;
};
inline std::vector<Piece> split_input(const std::uint8_t* data, std::size_t size,
                                      std::size_t parts) {
    constexpr std::string_view cut = "\n--8<--\n";
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    std::vector<Piece> pieces(parts);
    for (std::size_t i = 0; i < parts; ++i) {
        const std::size_t at = i + 1 < parts ? rest.find(cut) : std::string_view::npos;
        pieces[i] = {rest.substr(0, at), true};
        if (at == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(at + cut.size());
    }
    return pieces;
}

/// Runs `read`; strata::Error is the expected way to refuse a bad input. With
/// STRATA_FUZZ_VERBOSE set, prints what happened (replaying one input: why it was refused).
template <class Read>
int expect_ok_or_error(Read read) {
    static const bool verbose = std::getenv("STRATA_FUZZ_VERBOSE") != nullptr;
    try {
        read();
        if (verbose) {
            std::fprintf(stderr, "fuzz: read\n");
        }
    } catch (const Error& e) {
        if (verbose) {
            std::fprintf(stderr, "fuzz: refused: %s\n", e.what());
        }
    }
    return 0;
}

}  // namespace strata::fuzz
