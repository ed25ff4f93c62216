// GzipLineReader: streams a gzip-compressed text file line by line through zlib in fixed-size
// chunks (the whole uncompressed file is never in memory), and write_gzip_file for fixtures.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/unique.hpp"

struct gzFile_s;  // zlib's handle type; zlib.h is included only in gzip_lines.cpp

namespace strata {

namespace detail {
void close_gzip(gzFile_s* file) noexcept;
}  // namespace detail

/// Reads "path" (gzip, possibly several concatenated members) one line at a time. Lines end at
/// '\n'; a trailing '\r' is removed; the last line may lack its '\n'. Memory is one chunk
/// (1 MiB) plus the longest line.
class GzipLineReader {
public:
    /// Opens `path`. Throws strata::Error if it cannot be opened or is not gzip data.
    explicit GzipLineReader(std::string path);

    /// Stores the next line in `line` (valid until the next call) and returns true, or returns
    /// false at the end of the file. Throws strata::Error "path:line: gzip data is corrupt (...)"
    /// or "... ends unexpectedly ..." when zlib reports an error, naming the first line not yet
    /// returned (zlib discards the chunk that failed, so the damage may lie up to 1 MiB on).
    bool next(std::string_view& line);

    /// Reads on to the end of the file, discarding lines, so that damage further on is reported:
    /// garbage that deflate decodes without complaint fails only the checksum at the end.
    /// Throws as next() does. Call it before reporting a parse error.
    void skip_rest();

    /// Number of the line last returned by next() (1-based; 0 before the first).
    [[nodiscard]] std::int64_t line_number() const { return line_number_; }
    /// "path:line" of the line last returned, for error messages.
    [[nodiscard]] std::string where() const;
    [[nodiscard]] const std::string& path() const { return path_; }

private:
    /// Moves the unread tail to the front and appends decompressed bytes; false at the end.
    bool refill();

    std::string path_;
    Unique<gzFile_s*, detail::close_gzip> file_;
    std::vector<char> buffer_;
    std::size_t begin_ = 0;  ///< first unread byte in buffer_
    std::size_t end_ = 0;    ///< one past the last decompressed byte
    bool eof_ = false;
    std::int64_t line_number_ = 0;
};

/// Writes `text` to `path` gzip-compressed (level 6), replacing any file there. Throws
/// strata::Error naming the path on any failure. Used by tests to build OGB-layout fixtures.
void write_gzip_file(const std::string& path, std::string_view text);

}  // namespace strata
