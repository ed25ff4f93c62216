// AtomicOutput: temporary name + rename.
#include "src/base/atomic_output.hpp"

#include <system_error>

#include "src/base/error.hpp"

#include <unistd.h>

namespace fs = std::filesystem;

namespace strata {

AtomicOutput::AtomicOutput(fs::path final_path, bool overwrite)
    : final_(std::move(final_path)), overwrite_(overwrite) {
    STRATA_CHECK(!final_.empty(), "output path is empty");
    std::error_code ec;
    STRATA_CHECK(overwrite_ || !fs::exists(final_, ec), final_.string(),
                 ": output already exists (use --force to replace it)");
    fs::path parent = final_.parent_path();
    if (parent.empty()) {
        parent = ".";
    }
    STRATA_CHECK(fs::is_directory(parent, ec), final_.string(), ": parent directory ",
                 parent.string(), " does not exist");
    STRATA_CHECK(access(parent.c_str(), W_OK) == 0, final_.string(), ": parent directory ",
                 parent.string(), " is not writable");
    // Appended piecewise: GCC 12 -O3 reports a false -Wrestrict on a chained operator+.
    std::string name = ".";
    name.append(final_.filename().string()).append(".tmp.").append(std::to_string(getpid()));
    temp_ = parent / name;
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
    if (overwrite_ && fs::exists(final_, ec)) {
        fs::remove_all(final_, ec);
        STRATA_CHECK(!ec, final_.string(), ": cannot replace existing output: ", ec.message());
    }
    fs::rename(temp_, final_, ec);
    STRATA_CHECK(!ec, final_.string(), ": cannot rename ", temp_.string(),
                 " into place: ", ec.message());
    committed_ = true;
}

}  // namespace strata
