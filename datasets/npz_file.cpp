// NpzFile over libzip (zip_open with ZIP_CHECKCONS; members read whole, CRC-checked by libzip)
// and the .npy header parser: magic "\x93NUMPY", version, header length, then a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (N, F), }. A Fortran-order payload
// (numpy's for a transposed array) is rearranged into C order as it is copied out.
#include "datasets/npz_file.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "src/base/error.hpp"
#include "src/base/unique.hpp"

#include <zip.h>

namespace strata {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader copies little-endian bytes as they are");

using ZipArchive = Unique<zip_t*, zip_discard, nullptr>;
using ZipMember = Unique<zip_file_t*, zip_fclose, nullptr>;

std::string zip_code_message(int code) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    return message;
}

std::size_t item_size(NpyType t) {
    switch (t) {
        case NpyType::f8:
        case NpyType::i8:
            return 8;
        case NpyType::f4:
        case NpyType::i4:
            return 4;
        case NpyType::b1:
        case NpyType::u1:
            return 1;
    }
    return 0;
}

const char* type_name(NpyType t) {
    switch (t) {
        case NpyType::f4:
            return "<f4";
        case NpyType::f8:
            return "<f8";
        case NpyType::i4:
            return "<i4";
        case NpyType::i8:
            return "<i8";
        case NpyType::b1:
            return "|b1";
        case NpyType::u1:
            return "|u1";
    }
    return "?";
}

/// The text after `'key':` in the header dict (leading spaces skipped).
std::string_view header_value(std::string_view header, const char* key, const std::string& what) {
    const std::string quoted = std::string("'") + key + "':";
    const std::size_t at = header.find(quoted);
    STRATA_CHECK(at != std::string_view::npos, what, ": .npy header has no '", key, "' (header ",
                 header, ")");
    std::string_view rest = header.substr(at + quoted.size());
    while (!rest.empty() && rest.front() == ' ') {
        rest.remove_prefix(1);
    }
    return rest;
}

NpyType parse_descr(std::string_view header, const std::string& what) {
    std::string_view v = header_value(header, "descr", what);
    STRATA_CHECK(!v.empty() && (v.front() == '\'' || v.front() == '"'), what,
                 ": .npy header: 'descr' is not a simple type string (structured dtypes are not "
                 "supported)");
    const char quote = v.front();
    const std::size_t end = v.find(quote, 1);
    STRATA_CHECK(end != std::string_view::npos, what, ": .npy header: unterminated 'descr'");
    const std::string_view descr = v.substr(1, end - 1);
    for (NpyType t :
         {NpyType::f4, NpyType::f8, NpyType::i4, NpyType::i8, NpyType::b1, NpyType::u1}) {
        if (descr == type_name(t)) {
            return t;
        }
    }
    STRATA_FAIL(what, ": unsupported dtype '", descr,
                "' (supported: <f4, <f8, <i4, <i8, |b1, |u1; little-endian)");
}

std::vector<std::int64_t> parse_shape(std::string_view header, const std::string& what) {
    std::string_view v = header_value(header, "shape", what);
    STRATA_CHECK(!v.empty() && v.front() == '(', what, ": .npy header: 'shape' is not a tuple");
    const std::size_t end = v.find(')');
    STRATA_CHECK(end != std::string_view::npos, what, ": .npy header: unterminated 'shape'");
    std::vector<std::int64_t> shape;
    std::int64_t value = -1;
    for (char c : v.substr(1, end - 1)) {
        if (c >= '0' && c <= '9') {
            value = (value < 0 ? 0 : value);
            STRATA_CHECK(value <= (std::numeric_limits<std::int64_t>::max() - 9) / 10, what,
                         ": .npy header: shape dimension too large");
            value = value * 10 + (c - '0');
        } else if (c == ',') {
            STRATA_CHECK(value >= 0, what, ": .npy header: malformed 'shape'");
            shape.push_back(value);
            value = -1;
        } else if (c != ' ' && c != 'L') {
            STRATA_FAIL(what, ": .npy header: malformed 'shape' (character '", c, "')");
        }
    }
    if (value >= 0) {
        shape.push_back(value);
    }
    return shape;
}

/// Copies the `count` elements of `Item` bytes stored in Fortran order (first index fastest) over
/// `shape` into `out` in C order (last index fastest): `to` walks C order, `from` follows with
/// the Fortran strides. Dimensions of extent 1 are dropped first (they change neither layout),
/// so that the odometer's carry costs O(1) per element whatever the header's rank.
template <std::size_t Item>
void fortran_to_c(const unsigned char* in, unsigned char* out,
                  const std::vector<std::int64_t>& shape, std::size_t count) {
    struct Dim {
        std::size_t extent;  // elements along this dimension
        std::size_t stride;  // Fortran stride, in elements
        std::size_t index;   // the odometer's position along it
    };
    std::vector<Dim> dims;
    std::size_t s = 1;
    for (const std::int64_t d : shape) {
        if (d != 1) {
            const auto extent = static_cast<std::size_t>(d);
            dims.push_back({extent, s, 0});
            s *= extent;
        }
    }
    std::size_t from = 0;
    for (std::size_t to = 0; to < count; ++to) {
        std::memcpy(out + to * Item, in + from * Item, Item);
        for (auto d = dims.rbegin(); d != dims.rend(); ++d) {  // the next C-order index, last first
            if (++d->index < d->extent) {
                from += d->stride;
                break;
            }
            from -= d->stride * (d->extent - 1);
            d->index = 0;
        }
    }
}

/// `fortran_order` of the header: true for True, false for False.
bool parse_fortran_order(std::string_view header, const std::string& what) {
    const std::string_view v = header_value(header, "fortran_order", what);
    if (v.substr(0, 4) == "True") {
        return true;
    }
    STRATA_CHECK(v.substr(0, 5) == "False", what,
                 ": .npy header: 'fortran_order' is neither True nor False");
    return false;
}

}  // namespace

std::int64_t NpyArray::size() const {
    std::int64_t n = 1;
    for (std::int64_t d : shape) {
        n *= d;
    }
    return n;
}

std::string NpyArray::shape_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        s += (i > 0 ? ", " : "") + std::to_string(shape[i]);
    }
    return s + "]";
}

void NpyArray::check_rank(std::size_t rank) const {
    STRATA_CHECK(shape.size() == rank, what, ": expected ", rank, " dimension",
                 rank == 1 ? "" : "s", ", found shape ", shape_string());
}

std::vector<float> NpyArray::to_float() const {
    STRATA_CHECK(type == NpyType::f4 || type == NpyType::f8, what, ": dtype ", type_name(type),
                 " is not a float type (expected <f4 or <f8)");
    const auto n = static_cast<std::size_t>(size());
    std::vector<float> out(n);
    if (type == NpyType::f4) {
        std::memcpy(out.data(), bytes.data(), n * sizeof(float));
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            double d = 0;
            std::memcpy(&d, bytes.data() + i * sizeof(double), sizeof(double));
            STRATA_CHECK(!std::isfinite(d) || std::fabs(d) <= std::numeric_limits<float>::max(),
                         what, ": value ", d, " at index ", i, " overflows float32");
            out[i] = static_cast<float>(d);
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        STRATA_CHECK(std::isfinite(out[i]), what, ": non-finite value ", out[i], " at index ", i);
    }
    return out;
}

std::vector<std::int64_t> NpyArray::to_int64() const {
    const auto n = static_cast<std::size_t>(size());
    std::vector<std::int64_t> out(n);
    switch (type) {
        case NpyType::i8:
            std::memcpy(out.data(), bytes.data(), n * sizeof(std::int64_t));
            break;
        case NpyType::i4:
            for (std::size_t i = 0; i < n; ++i) {
                std::int32_t v = 0;
                std::memcpy(&v, bytes.data() + i * sizeof(v), sizeof(v));
                out[i] = v;
            }
            break;
        case NpyType::u1:
            std::copy(bytes.begin(), bytes.end(), out.begin());
            break;
        default:
            STRATA_FAIL(what, ": dtype ", type_name(type),
                        " is not an integer type (expected <i4, <i8 or |u1)");
    }
    return out;
}

std::vector<std::uint8_t> NpyArray::to_mask() const {
    STRATA_CHECK(type != NpyType::f4 && type != NpyType::f8, what, ": dtype ", type_name(type),
                 " is not a mask type (expected |b1, |u1, <i4 or <i8 of 0/1)");
    const std::vector<std::int64_t> values =
        type == NpyType::b1 ? std::vector<std::int64_t>(bytes.begin(), bytes.end()) : to_int64();
    std::vector<std::uint8_t> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        STRATA_CHECK(values[i] == 0 || values[i] == 1, what, ": value ", values[i], " at index ", i,
                     " is not 0 or 1");
        out[i] = static_cast<std::uint8_t>(values[i]);
    }
    return out;
}

NpyArray parse_npy(const std::vector<unsigned char>& data, const std::string& what) {
    static constexpr unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    STRATA_CHECK(data.size() >= 10 && std::equal(magic, magic + 6, data.begin()), what,
                 ": not a .npy array (bad magic)");
    const int major = data[6];
    STRATA_CHECK(major >= 1 && major <= 3, what, ": .npy format version ", major, ".", int{data[7]},
                 " is not supported (1.0, 2.0, 3.0)");
    std::size_t header_len = 0;
    std::size_t start = 0;
    if (major == 1) {
        header_len = data[8] | (static_cast<std::size_t>(data[9]) << 8);
        start = 10;
    } else {
        STRATA_CHECK(data.size() >= 12, what, ": truncated .npy header");
        header_len = data[8] | (static_cast<std::size_t>(data[9]) << 8) |
                     (static_cast<std::size_t>(data[10]) << 16) |
                     (static_cast<std::size_t>(data[11]) << 24);
        start = 12;
    }
    STRATA_CHECK(start + header_len <= data.size(), what, ": truncated .npy header");
    const std::string_view header(reinterpret_cast<const char*>(data.data()) + start, header_len);

    NpyArray array;
    array.what = what;
    array.type = parse_descr(header, what);
    const bool fortran_order = parse_fortran_order(header, what);
    array.shape = parse_shape(header, what);
    std::int64_t elements = 1;  // the product checked, so that size() cannot overflow
    for (const std::int64_t d : array.shape) {
        STRATA_CHECK(
            !__builtin_mul_overflow(elements, d, &elements) && elements <= (std::int64_t{1} << 56),
            what, ": shape ", array.shape_string(), " has too many elements");
    }
    const std::size_t expected = static_cast<std::size_t>(elements) * item_size(array.type);
    const std::size_t found = data.size() - start - header_len;
    STRATA_CHECK(found == expected, what, ": has ", found, " data bytes, expected ", expected,
                 " for shape ", array.shape_string(), " of ", type_name(array.type));
    const unsigned char* payload = data.data() + start + header_len;
    if (!fortran_order || array.shape.size() < 2) {  // rank 0 and 1: both orders are one layout
        array.bytes.assign(payload, data.data() + data.size());
        return array;
    }
    array.bytes.resize(expected);
    const auto count = static_cast<std::size_t>(elements);
    switch (item_size(array.type)) {
        case 8:
            fortran_to_c<8>(payload, array.bytes.data(), array.shape, count);
            break;
        case 4:
            fortran_to_c<4>(payload, array.bytes.data(), array.shape, count);
            break;
        default:
            fortran_to_c<1>(payload, array.bytes.data(), array.shape, count);
            break;
    }
    return array;
}

struct NpzFile::Impl {
    std::string path;
    ZipArchive archive;
    std::vector<std::string> keys;
    std::vector<zip_uint64_t> index;  ///< member index of each key
};

NpzFile::NpzFile(const std::string& path) : impl_(std::make_unique<Impl>()) {
    impl_->path = path;
    int code = 0;
    impl_->archive = ZipArchive(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
    STRATA_CHECK(impl_->archive, path, ": cannot read as .npz: ", zip_code_message(code));
    const zip_int64_t members = zip_get_num_entries(impl_->archive.get(), 0);
    for (zip_int64_t i = 0; i < members; ++i) {
        const char* name = zip_get_name(impl_->archive.get(), static_cast<zip_uint64_t>(i), 0);
        STRATA_CHECK(name != nullptr, path, ": member ", i, ": ",
                     zip_error_strerror(zip_get_error(impl_->archive.get())));
        std::string key = name;
        if (key.size() > 4 && key.substr(key.size() - 4) == ".npy") {
            impl_->keys.push_back(key.substr(0, key.size() - 4));
            impl_->index.push_back(static_cast<zip_uint64_t>(i));
        }
    }
}

NpzFile::NpzFile(NpzFile&&) noexcept = default;
NpzFile& NpzFile::operator=(NpzFile&&) noexcept = default;
NpzFile::~NpzFile() = default;

const std::string& NpzFile::path() const {
    return impl_->path;
}

const std::vector<std::string>& NpzFile::keys() const {
    return impl_->keys;
}

bool NpzFile::has(const std::string& key) const {
    return std::find(impl_->keys.begin(), impl_->keys.end(), key) != impl_->keys.end();
}

NpyArray NpzFile::read(const std::string& key) const {
    const auto it = std::find(impl_->keys.begin(), impl_->keys.end(), key);
    if (it == impl_->keys.end()) {
        std::string listed;
        for (const std::string& k : impl_->keys) {
            listed += (listed.empty() ? "" : ", ") + k;
        }
        STRATA_FAIL(impl_->path, ": missing key '", key, "' (keys: ", listed, ")");
    }
    const std::string what = impl_->path + ": " + key;
    const zip_uint64_t index = impl_->index[static_cast<std::size_t>(it - impl_->keys.begin())];
    zip_stat_t stat;
    zip_stat_init(&stat);
    STRATA_CHECK(zip_stat_index(impl_->archive.get(), index, 0, &stat) == 0 &&
                     (stat.valid & ZIP_STAT_SIZE) != 0,
                 what, ": cannot stat the member: ",
                 zip_error_strerror(zip_get_error(impl_->archive.get())));
    const ZipMember member(zip_fopen_index(impl_->archive.get(), index, 0));
    STRATA_CHECK(member, what, ": cannot open the member: ",
                 zip_error_strerror(zip_get_error(impl_->archive.get())));
    std::vector<unsigned char> data(static_cast<std::size_t>(stat.size));
    std::size_t done = 0;
    while (done < data.size()) {
        const zip_int64_t got = zip_fread(member.get(), data.data() + done, data.size() - done);
        STRATA_CHECK(got >= 0, what, ": cannot decompress the member (",
                     zip_error_strerror(zip_file_get_error(member.get())),
                     "): corrupt or truncated .npz");
        STRATA_CHECK(got > 0, what, ": member ends after ", done, " of ", data.size(),
                     " bytes: corrupt or truncated .npz");
        done += static_cast<std::size_t>(got);
    }
    // Reading one byte more reaches the end of the stream, where libzip checks the CRC.
    unsigned char extra = 0;
    const zip_int64_t tail = zip_fread(member.get(), &extra, 1);
    STRATA_CHECK(tail == 0, what, ": ",
                 tail < 0 ? std::string("cannot decompress the member (") +
                                zip_error_strerror(zip_file_get_error(member.get())) + ")"
                          : std::string("member is longer than its recorded size"),
                 ": corrupt or truncated .npz");
    return parse_npy(data, what);
}

}  // namespace strata
