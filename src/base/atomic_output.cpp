// AtomicOutput: temporary name, fsync, rename (or exchange) into place, fsync the directory.
#include "src/base/atomic_output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>

#include "src/base/error.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace strata {
namespace {

/// A read-only descriptor closed on scope exit (close's result is checked by close_checked).
class Fd {
public:
    explicit Fd(const fs::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        STRATA_CHECK(fd_ >= 0, path.string(), ": cannot open to fsync: ", std::strerror(errno));
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd_ >= 0) {
            (void)::close(fd_);
        }
    }
    [[nodiscard]] int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }

private:
    int fd_;
};

fs::path parent_of(const fs::path& path) {
    fs::path parent = path.parent_path();
    return parent.empty() ? fs::path(".") : parent;
}

/// "<parent>/.<name>.<tag>.<pid>".
fs::path sibling(const fs::path& path, const char* tag) {
    // Appended piecewise: GCC 12 -O3 reports a false -Wrestrict on a chained operator+.
    std::string name = ".";
    name.append(path.filename().string()).append(".").append(tag).append(".");
    name.append(std::to_string(getpid()));
    return parent_of(path) / name;
}

bool exchange_unsupported(int error) {
    return error == EINVAL || error == ENOSYS || error == ENOTSUP || error == EOPNOTSUPP;
}

}  // namespace

void fsync_path(const fs::path& path) {
    Fd fd(path);
    STRATA_CHECK(::fsync(fd.get()) == 0, path.string(), ": fsync failed: ", std::strerror(errno));
    STRATA_CHECK(::close(fd.release()) == 0, path.string(),
                 ": close failed: ", std::strerror(errno));
}

void fsync_tree(const fs::path& dir) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        const fs::file_status status = it->symlink_status(ec);
        if (!ec && (fs::is_regular_file(status) || fs::is_directory(status))) {
            fsync_path(it->path());
        }
    }
    STRATA_CHECK(!ec, dir.string(), ": cannot list the directory to fsync it: ", ec.message());
    fsync_path(dir);
}

bool rename_exchange_enabled() {
    const char* off = std::getenv("STRATA_NO_RENAME_EXCHANGE");
    return off == nullptr || *off == '\0';
}

AtomicOutput::AtomicOutput(fs::path final_path, bool overwrite)
    : final_(std::move(final_path)), overwrite_(overwrite) {
    STRATA_CHECK(!final_.empty(), "output path is empty");
    std::error_code ec;
    STRATA_CHECK(overwrite_ || !fs::exists(final_, ec), final_.string(),
                 ": output already exists (use --force to replace it)");
    const fs::path parent = parent_of(final_);
    STRATA_CHECK(fs::is_directory(parent, ec), final_.string(), ": parent directory ",
                 parent.string(), " does not exist");
    STRATA_CHECK(access(parent.c_str(), W_OK) == 0, final_.string(), ": parent directory ",
                 parent.string(), " is not writable");
    temp_ = sibling(final_, "tmp");
    fs::remove_all(temp_, ec);
}

AtomicOutput::~AtomicOutput() {
    if (!committed_) {
        std::error_code ec;
        fs::remove_all(temp_, ec);  // never throws
    }
}

void AtomicOutput::commit() {
    std::error_code ec;
    const bool directory = fs::is_directory(temp_, ec);
    STRATA_CHECK(directory || fs::is_regular_file(temp_, ec), final_.string(),
                 ": nothing was written to ", temp_.string());
    if (directory) {
        fsync_tree(temp_);
    } else {
        fsync_path(temp_);
    }
    const fs::path parent = parent_of(final_);
    const bool replace_directory = directory && fs::is_directory(final_, ec);
    STRATA_CHECK(overwrite_ || !fs::exists(final_, ec), final_.string(),
                 ": output already exists (use --force to replace it)");
    if (!replace_directory) {
        // rename(2) replaces a file (or an empty directory) atomically: the target is never
        // missing, and the old file is unlinked only once the new one is in place.
        STRATA_CHECK(std::rename(temp_.c_str(), final_.c_str()) == 0, final_.string(),
                     ": cannot rename ", temp_.string(), " into place: ", std::strerror(errno));
        committed_ = true;
        fsync_path(parent);
        return;
    }
    // A directory cannot be renamed over a non-empty one: exchange the two atomically.
    int error = EINVAL;
    if (rename_exchange_enabled()) {
        error = ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) == 0
                    ? 0
                    : errno;
    }
    if (error == 0) {
        committed_ = true;  // the old output now lies at the temporary name
        fsync_path(parent);
        fs::remove_all(temp_, ec);
        STRATA_CHECK(!ec, final_.string(), ": replaced, but the previous version at ",
                     temp_.string(), " cannot be removed: ", ec.message());
        return;
    }
    STRATA_CHECK(exchange_unsupported(error), final_.string(), ": cannot exchange ", temp_.string(),
                 " into place: ", std::strerror(error));
    // Fallback: old aside, new in place, old removed. A crash between the two renames leaves
    // no directory at the final path (the old one survives at ".<name>.old.<pid>"); a reader
    // never sees a partial one (docs/durability.md).
    const fs::path old = sibling(final_, "old");
    fs::remove_all(old, ec);
    STRATA_CHECK(std::rename(final_.c_str(), old.c_str()) == 0, final_.string(),
                 ": cannot move the previous output aside to ", old.string(), ": ",
                 std::strerror(errno));
    if (std::rename(temp_.c_str(), final_.c_str()) != 0) {
        const int failed = errno;
        (void)std::rename(old.c_str(), final_.c_str());  // put the previous output back
        STRATA_FAIL(final_.string(), ": cannot rename ", temp_.string(),
                    " into place: ", std::strerror(failed));
    }
    committed_ = true;
    fsync_path(parent);
    fs::remove_all(old, ec);
    STRATA_CHECK(!ec, final_.string(), ": replaced, but the previous version at ", old.string(),
                 " cannot be removed: ", ec.message());
}

}  // namespace strata
