// H5File over the HDF5 C API (serial 1.10): typed whole-dataset and row-range reads that refuse
// a stored type other than the requested one, writes (chunked + compressed on request), and
// attributes. The HDF5 plumbing lives in h5_detail.{hpp,cpp}.
#include "datasets/h5_file.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "datasets/h5_detail.hpp"
#include "src/base/error.hpp"

namespace strata {

using namespace h5;  // NOLINT(google-build-using-namespace): this file is the H5File facade

namespace {

std::int64_t element_count(const H5Shape& shape) {
    return std::accumulate(shape.begin(), shape.end(), std::int64_t{1},
                           [](std::int64_t a, std::int64_t b) { return a * b; });
}

std::string shape_string(const H5Shape& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        s += (i > 0 ? ", " : "") + std::to_string(shape[i]);
    }
    return s + "]";
}

}  // namespace

struct H5File::Impl {
    std::string path;
    H5Fid file;
    mutable std::int64_t bytes_read = 0;  ///< array bytes returned by the reads

    H5Did open_dataset(const std::string& dataset_path) const {
        STRATA_CHECK(exists_path(dataset_path), path, ": ", dataset_path, ": dataset not found");
        return H5Did(STRATA_H5_CHECK(H5Dopen2(file.get(), dataset_path.c_str(), H5P_DEFAULT), path,
                                     dataset_path, "cannot open dataset"));
    }

    H5Shape dataset_shape(hid_t dataset, const std::string& dataset_path) const {
        H5Sid space(
            STRATA_H5_CHECK(H5Dget_space(dataset), path, dataset_path, "cannot get dataspace"));
        const int rank = STRATA_H5_CHECK(H5Sget_simple_extent_ndims(space.get()), path,
                                         dataset_path, "cannot get rank");
        std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
        STRATA_H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), path,
                        dataset_path, "cannot get dimensions");
        return H5Shape(dims.begin(), dims.end());
    }

    /// Link-by-link existence test: H5Lexists fails when an intermediate group is missing.
    bool exists_path(const std::string& object_path) const {
        if (object_path.empty() || object_path == "/") {
            return true;
        }
        std::size_t pos = 0;
        while (pos != std::string::npos) {
            pos = object_path.find('/', pos + 1);
            const std::string prefix = object_path.substr(0, pos);
            if (prefix.empty() || prefix == "/") {
                continue;
            }
            if (H5Lexists(file.get(), prefix.c_str(), H5P_DEFAULT) <= 0) {
                H5Eclear2(H5E_DEFAULT);
                return false;
            }
        }
        return true;
    }

    template <class T>
    void check_stored_type(hid_t dataset, const std::string& dataset_path) const {
        H5Tid stored(
            STRATA_H5_CHECK(H5Dget_type(dataset), path, dataset_path, "cannot get datatype"));
        const hid_t want = H5Type<T>::native();
        const bool same =
            H5Tget_class(stored.get()) == H5Tget_class(want) &&
            H5Tget_size(stored.get()) == H5Tget_size(want) &&
            (H5Tget_class(want) != H5T_INTEGER || H5Tget_sign(stored.get()) == H5Tget_sign(want));
        STRATA_CHECK(same, path, ": ", dataset_path, ": expected ", H5Type<T>::name, ", found ",
                     type_name(stored.get()));
    }

    H5Aid open_attribute(const std::string& object_path, const std::string& name) const {
        STRATA_CHECK(exists_path(object_path), path, ": ", object_path, ": object not found");
        const htri_t has =
            H5Aexists_by_name(file.get(), object_path.c_str(), name.c_str(), H5P_DEFAULT);
        STRATA_H5_CHECK(has, path, object_path + "@" + name, "cannot look up attribute");
        STRATA_CHECK(has > 0, path, ": ", object_path, ": missing attribute '", name, "'");
        return H5Aid(STRATA_H5_CHECK(H5Aopen_by_name(file.get(), object_path.c_str(), name.c_str(),
                                                     H5P_DEFAULT, H5P_DEFAULT),
                                     path, object_path + "@" + name, "cannot open attribute"));
    }

    /// Creates the missing groups above `object_path` ("/a/b" for "/a/b/c"), without
    /// modification times (as for datasets).
    void create_parent_groups(const std::string& object_path) {
        for (std::size_t pos = object_path.find('/', 1); pos != std::string::npos;
             pos = object_path.find('/', pos + 1)) {
            const std::string group = object_path.substr(0, pos);
            if (exists_path(group)) {
                continue;
            }
            H5Pid props(
                STRATA_H5_CHECK(H5Pcreate(H5P_GROUP_CREATE), path, group, "H5Pcreate failed"));
            STRATA_H5_CHECK(H5Pset_obj_track_times(props.get(), 0), path, group,
                            "cannot disable time tracking");
            H5Gid created(STRATA_H5_CHECK(
                H5Gcreate2(file.get(), group.c_str(), H5P_DEFAULT, props.get(), H5P_DEFAULT), path,
                group, "cannot create group"));
        }
    }

    /// Creates (replacing an existing one) attribute `name` of scalar type `type`.
    H5Aid create_attribute(const std::string& object_path, const std::string& name, hid_t type) {
        const std::string where = object_path + "@" + name;
        STRATA_CHECK(exists_path(object_path), path, ": ", object_path, ": object not found");
        const htri_t has =
            H5Aexists_by_name(file.get(), object_path.c_str(), name.c_str(), H5P_DEFAULT);
        STRATA_H5_CHECK(has, path, where, "cannot look up attribute");
        if (has > 0) {
            STRATA_H5_CHECK(
                H5Adelete_by_name(file.get(), object_path.c_str(), name.c_str(), H5P_DEFAULT), path,
                where, "cannot replace attribute");
        }
        H5Sid space(STRATA_H5_CHECK(H5Screate(H5S_SCALAR), path, where, "cannot create space"));
        return H5Aid(
            STRATA_H5_CHECK(H5Acreate_by_name(file.get(), object_path.c_str(), name.c_str(), type,
                                              space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                            path, where, "cannot create attribute"));
    }
};

H5File::H5File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
H5File::H5File(H5File&&) noexcept = default;
H5File& H5File::operator=(H5File&&) noexcept = default;
H5File::~H5File() = default;

H5File H5File::create(const std::string& path) {
    silence_hdf5();
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->file =
        H5Fid(STRATA_H5_CHECK(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                              path, "", "cannot create HDF5 file"));
    return H5File(std::move(impl));
}

void H5File::close() {
    if (!impl_ || !impl_->file) {
        return;
    }
    const std::string& path = impl_->path;
    // Flush first: a write error (disk full, EIO) surfaces here or at close, never silently.
    const herr_t flushed = H5Fflush(impl_->file.get(), H5F_SCOPE_GLOBAL);
    if (flushed < 0) {
        const std::string why = hdf5_message();
        impl_->file.reset();  // closed anyway; the caller discards the file
        STRATA_FAIL(path, ": cannot write the file: flush failed", why);
    }
    const herr_t closed = H5Fclose(impl_->file.release());
    STRATA_CHECK(closed >= 0, path, ": closing the file failed", hdf5_message());
}

H5File H5File::open(const std::string& path) {
    silence_hdf5();
    std::error_code ec;
    STRATA_CHECK(std::filesystem::exists(path, ec), path, ": no such file");
    STRATA_CHECK(!std::filesystem::is_directory(path, ec), path,
                 ": is a directory, not an HDF5 file");
    const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
    if (is_hdf5 <= 0) {
        const std::string why = hdf5_message();
        STRATA_FAIL(path, ": not an HDF5 file", why);
    }
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->file = H5Fid(STRATA_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "",
                                       "cannot open HDF5 file (truncated or corrupt?)"));
    return H5File(std::move(impl));
}

const std::string& H5File::path() const {
    return impl_->path;
}

bool H5File::exists(const std::string& object_path) const {
    return impl_->exists_path(object_path);
}

H5Shape H5File::shape(const std::string& dataset_path) const {
    H5Did dataset = impl_->open_dataset(dataset_path);
    return impl_->dataset_shape(dataset.get(), dataset_path);
}

template <class T>
void H5File::write(const std::string& dataset_path, std::span<const T> data, const H5Shape& shape,
                   bool compress, std::int64_t column_block) {
    const std::string& file = impl_->path;
    STRATA_CHECK(element_count(shape) == static_cast<std::int64_t>(data.size()), file, ": ",
                 dataset_path, ": shape ", shape_string(shape), " does not match ", data.size(),
                 " elements");
    STRATA_CHECK(!impl_->exists_path(dataset_path), file, ": ", dataset_path,
                 ": dataset already exists");
    const std::vector<hsize_t> dims(shape.begin(), shape.end());
    H5Sid space(STRATA_H5_CHECK(
        dims.empty() ? H5Screate(H5S_SCALAR)
                     : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
        file, dataset_path, "cannot create dataspace"));
    impl_->create_parent_groups(dataset_path);
    H5Pid create_props(
        STRATA_H5_CHECK(H5Pcreate(H5P_DATASET_CREATE), file, dataset_path, "H5Pcreate failed"));
    // No modification times in object headers: the same data gives a byte-identical file.
    STRATA_H5_CHECK(H5Pset_obj_track_times(create_props.get(), 0), file, dataset_path,
                    "cannot disable time tracking");
    const bool any_empty = std::find(dims.begin(), dims.end(), hsize_t{0}) != dims.end();
    std::vector<hsize_t> chunked;  // chunk dims when compressed
    if (compress && !dims.empty() && !any_empty) {
        // Chunks of whole rows (or of `column_block` columns), about 1 MiB each: large enough
        // for deflate, small enough to keep HDF5's chunk buffers negligible next to the data.
        std::vector<hsize_t> chunk = dims;
        if (column_block > 0 && dims.size() == 2) {
            chunk[1] = std::min<hsize_t>(dims[1], static_cast<hsize_t>(column_block));
        }
        hsize_t row_elements = 1;
        for (std::size_t i = 1; i < dims.size(); ++i) {
            row_elements *= chunk[i];
        }
        const hsize_t row_bytes = row_elements * sizeof(T);
        chunk[0] =
            std::clamp<hsize_t>((hsize_t{1} << 20) / std::max<hsize_t>(row_bytes, 1), 1, dims[0]);
        STRATA_H5_CHECK(
            H5Pset_chunk(create_props.get(), static_cast<int>(chunk.size()), chunk.data()), file,
            dataset_path, "cannot set chunking");
        STRATA_H5_CHECK(H5Pset_shuffle(create_props.get()), file, dataset_path,
                        "cannot set shuffle filter");
        STRATA_H5_CHECK(H5Pset_deflate(create_props.get(), 1), file, dataset_path,
                        "cannot set deflate filter");
        chunked = chunk;
    }
    H5Did dataset(
        STRATA_H5_CHECK(H5Dcreate2(impl_->file.get(), dataset_path.c_str(), H5Type<T>::native(),
                                   space.get(), H5P_DEFAULT, create_props.get(), H5P_DEFAULT),
                        file, dataset_path, "cannot create dataset"));
    if (!chunked.empty()) {
        // Stored little-endian like the native type on the x86-64/aarch64 machines we run on.
        write_compressed_chunks(dataset.get(), reinterpret_cast<const unsigned char*>(data.data()),
                                dims, chunked, sizeof(T), file, dataset_path);
    } else if (!data.empty()) {
        STRATA_H5_CHECK(H5Dwrite(dataset.get(), H5Type<T>::native(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                 data.data()),
                        file, dataset_path, "cannot write dataset");
    }
}

template <class T>
std::vector<T> H5File::read(const std::string& dataset_path, H5Shape* shape_out,
                            int expected_rank) const {
    const std::string& file = impl_->path;
    H5Did dataset = impl_->open_dataset(dataset_path);
    impl_->check_stored_type<T>(dataset.get(), dataset_path);
    const H5Shape shape = impl_->dataset_shape(dataset.get(), dataset_path);
    STRATA_CHECK(expected_rank < 0 || static_cast<int>(shape.size()) == expected_rank, file, ": ",
                 dataset_path, ": expected rank ", expected_rank, ", found rank ", shape.size(),
                 " (shape ", shape_string(shape), ")");
    std::vector<T> values(static_cast<std::size_t>(element_count(shape)));
    if (!values.empty()) {
        STRATA_H5_CHECK(H5Dread(dataset.get(), H5Type<T>::native(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                values.data()),
                        file, dataset_path, "cannot read dataset");
        impl_->bytes_read += static_cast<std::int64_t>(values.size() * sizeof(T));
    }
    if (shape_out != nullptr) {
        *shape_out = shape;
    }
    return values;
}

template <class T>
std::vector<T> H5File::read_rows(const std::string& dataset_path, std::int64_t first,
                                 std::int64_t count) const {
    const H5Shape shape = this->shape(dataset_path);
    STRATA_CHECK(!shape.empty(), impl_->path, ": ", dataset_path, ": cannot read rows of a scalar");
    STRATA_CHECK(first >= 0 && count >= 0 && first + count <= shape[0], impl_->path, ": ",
                 dataset_path, ": rows [", first, ", ", first + count, ") out of range [0, ",
                 shape[0], ")");
    H5Shape start(shape.size(), 0);
    H5Shape block = shape;
    start[0] = first;
    block[0] = count;
    return read_block<T>(dataset_path, start, block);
}

template <class T>
std::vector<T> H5File::read_block(const std::string& dataset_path, const H5Shape& start,
                                  const H5Shape& count) const {
    const std::string& file = impl_->path;
    H5Did dataset = impl_->open_dataset(dataset_path);
    impl_->check_stored_type<T>(dataset.get(), dataset_path);
    const H5Shape shape = impl_->dataset_shape(dataset.get(), dataset_path);
    bool inside = start.size() == shape.size() && count.size() == shape.size();
    for (std::size_t d = 0; inside && d < shape.size(); ++d) {
        inside = start[d] >= 0 && count[d] >= 0 && start[d] + count[d] <= shape[d];
    }
    STRATA_CHECK(inside, file, ": ", dataset_path, ": block at ", shape_string(start), " of ",
                 shape_string(count), " out of range of shape ", shape_string(shape));
    std::vector<T> values(static_cast<std::size_t>(element_count(count)));
    if (values.empty()) {
        return values;
    }
    const std::vector<hsize_t> offsets(start.begin(), start.end());
    const std::vector<hsize_t> dims(count.begin(), count.end());
    H5Sid file_space(
        STRATA_H5_CHECK(H5Dget_space(dataset.get()), file, dataset_path, "cannot get dataspace"));
    STRATA_H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, offsets.data(), nullptr,
                                        dims.data(), nullptr),
                    file, dataset_path, "cannot select block");
    H5Sid memory_space(
        STRATA_H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), file,
                        dataset_path, "cannot create dataspace"));
    STRATA_H5_CHECK(H5Dread(dataset.get(), H5Type<T>::native(), memory_space.get(),
                            file_space.get(), H5P_DEFAULT, values.data()),
                    file, dataset_path, "cannot read block");
    impl_->bytes_read += static_cast<std::int64_t>(values.size() * sizeof(T));
    return values;
}

std::int64_t H5File::bytes_read() const {
    return impl_->bytes_read;
}

void H5File::write_attribute(const std::string& object_path, const std::string& name,
                             const std::string& value) {
    const std::string where = object_path + "@" + name;
    // Fixed-length, NUL-terminated ASCII (size >= 1 even for an empty string).
    H5Tid type(STRATA_H5_CHECK(H5Tcopy(H5T_C_S1), impl_->path, where, "H5Tcopy failed"));
    STRATA_H5_CHECK(H5Tset_size(type.get(), value.size() + 1), impl_->path, where,
                    "cannot size string type");
    STRATA_H5_CHECK(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), impl_->path, where,
                    "cannot set string padding");
    H5Aid attribute = impl_->create_attribute(object_path, name, type.get());
    STRATA_H5_CHECK(H5Awrite(attribute.get(), type.get(), value.c_str()), impl_->path, where,
                    "cannot write attribute");
}

void H5File::write_attribute(const std::string& object_path, const std::string& name,
                             std::int64_t value) {
    H5Aid attribute = impl_->create_attribute(object_path, name, H5T_STD_I64LE);
    STRATA_H5_CHECK(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), impl_->path,
                    object_path + "@" + name, "cannot write attribute");
}

void H5File::write_attribute(const std::string& object_path, const std::string& name,
                             double value) {
    H5Aid attribute = impl_->create_attribute(object_path, name, H5T_IEEE_F64LE);
    STRATA_H5_CHECK(H5Awrite(attribute.get(), H5T_NATIVE_DOUBLE, &value), impl_->path,
                    object_path + "@" + name, "cannot write attribute");
}

bool H5File::has_attribute(const std::string& object_path, const std::string& name) const {
    if (!impl_->exists_path(object_path)) {
        return false;
    }
    const htri_t has =
        H5Aexists_by_name(impl_->file.get(), object_path.c_str(), name.c_str(), H5P_DEFAULT);
    STRATA_H5_CHECK(has, impl_->path, object_path + "@" + name, "cannot look up attribute");
    return has > 0;
}

std::string H5File::read_string_attribute(const std::string& object_path,
                                          const std::string& name) const {
    const std::string where = object_path + "@" + name;
    const std::string& file = impl_->path;
    H5Aid attribute = impl_->open_attribute(object_path, name);
    H5Tid stored(STRATA_H5_CHECK(H5Aget_type(attribute.get()), file, where, "cannot get type"));
    STRATA_CHECK(H5Tget_class(stored.get()) == H5T_STRING, file, ": ", object_path, ": attribute '",
                 name, "': expected a string, found ", type_name(stored.get()));
    H5Sid space(
        STRATA_H5_CHECK(H5Aget_space(attribute.get()), file, where, "cannot get dataspace"));
    STRATA_CHECK(H5Sget_simple_extent_npoints(space.get()) == 1, file, ": ", object_path,
                 ": attribute '", name, "': expected a single string");
    if (H5Tis_variable_str(stored.get()) > 0) {  // as written by h5py for a Python str
        H5Tid memory(STRATA_H5_CHECK(H5Tcopy(H5T_C_S1), file, where, "H5Tcopy failed"));
        STRATA_H5_CHECK(H5Tset_size(memory.get(), H5T_VARIABLE), file, where,
                        "cannot size string type");
        STRATA_H5_CHECK(H5Tset_cset(memory.get(), H5Tget_cset(stored.get())), file, where,
                        "cannot set character set");
        char* text = nullptr;
        STRATA_H5_CHECK(H5Aread(attribute.get(), memory.get(), &text), file, where,
                        "cannot read attribute");
        std::string value = text != nullptr ? text : "";
        H5free_memory(text);
        return value;
    }
    const std::size_t size = H5Tget_size(stored.get());
    std::string buffer(size, '\0');
    STRATA_H5_CHECK(H5Aread(attribute.get(), stored.get(), buffer.data()), file, where,
                    "cannot read attribute");
    return buffer.substr(0, buffer.find('\0'));  // NULLTERM or NULLPAD
}

std::int64_t H5File::read_int_attribute(const std::string& object_path,
                                        const std::string& name) const {
    const std::string where = object_path + "@" + name;
    const std::string& file = impl_->path;
    H5Aid attribute = impl_->open_attribute(object_path, name);
    H5Tid stored(STRATA_H5_CHECK(H5Aget_type(attribute.get()), file, where, "cannot get type"));
    STRATA_CHECK(H5Tget_class(stored.get()) == H5T_INTEGER, file, ": ", object_path,
                 ": attribute '", name, "': expected an integer, found ", type_name(stored.get()));
    H5Sid space(
        STRATA_H5_CHECK(H5Aget_space(attribute.get()), file, where, "cannot get dataspace"));
    STRATA_CHECK(H5Sget_simple_extent_npoints(space.get()) == 1, file, ": ", object_path,
                 ": attribute '", name, "': expected a single value");
    std::int64_t value = 0;
    STRATA_H5_CHECK(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), file, where,
                    "cannot read attribute");
    return value;
}

double H5File::read_double_attribute(const std::string& object_path,
                                     const std::string& name) const {
    const std::string where = object_path + "@" + name;
    const std::string& file = impl_->path;
    H5Aid attribute = impl_->open_attribute(object_path, name);
    H5Tid stored(STRATA_H5_CHECK(H5Aget_type(attribute.get()), file, where, "cannot get type"));
    STRATA_CHECK(H5Tget_class(stored.get()) == H5T_FLOAT, file, ": ", object_path, ": attribute '",
                 name, "': expected a float, found ", type_name(stored.get()));
    H5Sid space(
        STRATA_H5_CHECK(H5Aget_space(attribute.get()), file, where, "cannot get dataspace"));
    STRATA_CHECK(H5Sget_simple_extent_npoints(space.get()) == 1, file, ": ", object_path,
                 ": attribute '", name, "': expected a single value");
    double value = 0.0;
    STRATA_H5_CHECK(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value), file, where,
                    "cannot read attribute");
    return value;
}

// Explicit instantiations: the element types listed in h5_file.hpp.
template void H5File::write<std::int64_t>(const std::string&, std::span<const std::int64_t>,
                                          const H5Shape&, bool, std::int64_t);
template void H5File::write<std::int32_t>(const std::string&, std::span<const std::int32_t>,
                                          const H5Shape&, bool, std::int64_t);
template void H5File::write<std::uint8_t>(const std::string&, std::span<const std::uint8_t>,
                                          const H5Shape&, bool, std::int64_t);
template void H5File::write<float>(const std::string&, std::span<const float>, const H5Shape&, bool,
                                   std::int64_t);
template void H5File::write<double>(const std::string&, std::span<const double>, const H5Shape&,
                                    bool, std::int64_t);
template std::vector<std::int64_t> H5File::read<std::int64_t>(const std::string&, H5Shape*,
                                                              int) const;
template std::vector<std::int32_t> H5File::read<std::int32_t>(const std::string&, H5Shape*,
                                                              int) const;
template std::vector<std::uint8_t> H5File::read<std::uint8_t>(const std::string&, H5Shape*,
                                                              int) const;
template std::vector<float> H5File::read<float>(const std::string&, H5Shape*, int) const;
template std::vector<double> H5File::read<double>(const std::string&, H5Shape*, int) const;
template std::vector<std::int64_t> H5File::read_rows<std::int64_t>(const std::string&, std::int64_t,
                                                                   std::int64_t) const;
template std::vector<std::int32_t> H5File::read_rows<std::int32_t>(const std::string&, std::int64_t,
                                                                   std::int64_t) const;
template std::vector<std::uint8_t> H5File::read_rows<std::uint8_t>(const std::string&, std::int64_t,
                                                                   std::int64_t) const;
template std::vector<float> H5File::read_rows<float>(const std::string&, std::int64_t,
                                                     std::int64_t) const;
template std::vector<double> H5File::read_rows<double>(const std::string&, std::int64_t,
                                                       std::int64_t) const;

template std::vector<std::int64_t> H5File::read_block<std::int64_t>(const std::string&,
                                                                    const H5Shape&,
                                                                    const H5Shape&) const;
template std::vector<std::int32_t> H5File::read_block<std::int32_t>(const std::string&,
                                                                    const H5Shape&,
                                                                    const H5Shape&) const;
template std::vector<std::uint8_t> H5File::read_block<std::uint8_t>(const std::string&,
                                                                    const H5Shape&,
                                                                    const H5Shape&) const;
template std::vector<float> H5File::read_block<float>(const std::string&, const H5Shape&,
                                                      const H5Shape&) const;
template std::vector<double> H5File::read_block<double>(const std::string&, const H5Shape&,
                                                        const H5Shape&) const;

}  // namespace strata
