// GzipLineReader on gzopen/gzread: zlib does the buffering of compressed input; we keep one
// chunk of decompressed bytes and cut it at '\n'.
#include "datasets/gzip_lines.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <zlib.h>

#include "src/base/error.hpp"

namespace strata {

namespace detail {
void close_gzip(gzFile_s* file) noexcept {
    gzclose(file);
}
}  // namespace detail

namespace {

constexpr std::size_t chunk_bytes = std::size_t{1} << 20;

/// zlib's message without the "path: " it puts in front.
std::string gzip_message(gzFile file, const std::string& path) {
    int code = Z_OK;
    const char* text = gzerror(file, &code);
    if (code == Z_ERRNO) {
        return std::strerror(errno);
    }
    std::string message =
        text != nullptr && *text != '\0' ? text : "zlib error " + std::to_string(code);
    if (message.rfind(path + ": ", 0) == 0) {
        message.erase(0, path.size() + 2);
    }
    return message;
}

}  // namespace

GzipLineReader::GzipLineReader(std::string path)
    : path_(std::move(path)), file_(gzopen(path_.c_str(), "rb")), buffer_(chunk_bytes) {
    STRATA_CHECK(file_, path_, ": cannot open for reading (", std::strerror(errno), ")");
    gzbuffer(file_.get(), 256 * 1024);
    // gzread would pass a non-gzip file through unchanged; gzdirect looks at the header.
    STRATA_CHECK(gzdirect(file_.get()) == 0, path_, ": not gzip data (expected a .gz file)");
}

std::string GzipLineReader::where() const {
    return path_ + ":" + std::to_string(line_number_);
}

bool GzipLineReader::refill() {
    if (eof_) {
        return false;
    }
    const std::size_t pending = end_ - begin_;
    if (begin_ > 0) {
        std::memmove(buffer_.data(), buffer_.data() + begin_, pending);
    }
    begin_ = 0;
    end_ = pending;
    if (end_ == buffer_.size()) {
        buffer_.resize(2 * buffer_.size());  // one line longer than the buffer
    }
    const std::size_t room =
        std::min<std::size_t>(buffer_.size() - end_, std::numeric_limits<int>::max());
    const int got = gzread(file_.get(), buffer_.data() + end_, static_cast<unsigned>(room));
    STRATA_CHECK(got >= 0, path_, ":", line_number_ + 1, ": gzip data is corrupt (",
                 gzip_message(file_.get(), path_), ")");
    if (got == 0) {
        int code = Z_OK;
        gzerror(file_.get(), &code);
        // Z_BUF_ERROR at the end: the input stopped in the middle of a gzip member, because
        // the file was cut short or because damage made deflate lose track of its blocks.
        STRATA_CHECK(code != Z_BUF_ERROR, path_, ":", line_number_ + 1,
                     ": gzip data ends unexpectedly (truncated or corrupt file)");
        STRATA_CHECK(code == Z_OK, path_, ":", line_number_ + 1, ": gzip data is corrupt (",
                     gzip_message(file_.get(), path_), ")");
        eof_ = true;
        return false;
    }
    end_ += static_cast<std::size_t>(got);
    return true;
}

bool GzipLineReader::next(std::string_view& line) {
    std::size_t scanned = begin_;
    for (;;) {
        const void* found = std::memchr(buffer_.data() + scanned, '\n', end_ - scanned);
        if (found != nullptr) {
            const auto stop =
                static_cast<std::size_t>(static_cast<const char*>(found) - buffer_.data());
            std::size_t length = stop - begin_;
            if (length > 0 && buffer_[stop - 1] == '\r') {
                --length;
            }
            line = std::string_view(buffer_.data() + begin_, length);
            begin_ = stop + 1;
            ++line_number_;
            return true;
        }
        const std::size_t pending = end_ - begin_;
        if (!refill()) {
            if (end_ == begin_) {
                return false;
            }
            std::size_t length = end_ - begin_;  // a last line without '\n'
            if (buffer_[begin_ + length - 1] == '\r') {
                --length;
            }
            line = std::string_view(buffer_.data() + begin_, length);
            begin_ = end_;
            ++line_number_;
            return true;
        }
        scanned = pending;  // refill moved the unread bytes to the front
    }
}

void GzipLineReader::skip_rest() {
    do {
        line_number_ += std::count(buffer_.data() + begin_, buffer_.data() + end_, '\n');
        begin_ = end_;
    } while (refill());
}

void write_gzip_file(const std::string& path, std::string_view text) {
    Unique<gzFile_s*, detail::close_gzip> file(gzopen(path.c_str(), "wb6"));
    STRATA_CHECK(file, path, ": cannot open for writing (", std::strerror(errno), ")");
    std::size_t done = 0;
    while (done < text.size()) {
        const auto part =
            static_cast<unsigned>(std::min<std::size_t>(text.size() - done, std::size_t{1} << 30));
        const int wrote = gzwrite(file.get(), text.data() + done, part);
        STRATA_CHECK(wrote > 0, path, ": write failed (", gzip_message(file.get(), path), ")");
        done += static_cast<std::size_t>(wrote);
    }
    // gzclose flushes the last deflate block and the trailer: its result is the write's.
    STRATA_CHECK(gzclose(file.release()) == Z_OK, path, ": write failed on close");
}

}  // namespace strata
