// HDF5 helpers: silencing and collecting HDF5's error stack, type names, and the parallel
// shuffle + deflate chunk writer.
#include "datasets/h5_detail.hpp"

#include <algorithm>
#include <mutex>

#include <zlib.h>

namespace strata::h5 {
namespace {

herr_t collect_message(unsigned /*depth*/, const H5E_error2_t* err, void* data) {
    auto* parts = static_cast<std::vector<std::string>*>(data);
    if (err->desc != nullptr && err->desc[0] != '\0') {
        std::string desc = err->desc;
        std::replace(desc.begin(), desc.end(), '\n', ' ');  // errors are one line
        parts->push_back(std::move(desc));
    }
    return 0;
}

}  // namespace

void silence_hdf5() {
    static std::once_flag once;
    std::call_once(once, [] {
        // No HDF5 clean-up at exit: every file is closed by its H5File, and after a failed
        // close (a full disk) HDF5 1.10's exit-time clean-up dereferences the half-closed file
        // and crashes (SIGSEGV in H5F__close_cb), turning a clear error into a core dump.
        // Must precede every other HDF5 call (it only takes effect before initialization).
        (void)H5dont_atexit();
    });
    // Debian's HDF5 is built thread-safe, where each thread has its own error stack and its
    // own automatic printing: silence every thread that opens a file (`strata partition`
    // hashes the source on a second thread while the main one writes the parts).
    thread_local bool silenced = false;
    if (!silenced) {
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        silenced = true;
    }
}

std::string hdf5_message() {
    std::vector<std::string> parts;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_message, &parts);
    H5Eclear2(H5E_DEFAULT);
    if (parts.empty()) {
        return {};
    }
    // A failed system call's entry is long ("file write failed: time = ..., filename = ...,
    // errno = 28, error message = 'No space left on device', buf = ..."): keep its reason.
    std::string& inner = parts.back();
    const std::string tag = "error message = '";
    if (const auto at = inner.find(tag); at != std::string::npos) {
        const auto start = at + tag.size();
        const auto colon = inner.find(':');
        inner =
            inner.substr(0, colon) + ": " + inner.substr(start, inner.find('\'', start) - start);
    }
    if (parts.size() == 1 || parts.front() == parts.back()) {
        return " (HDF5: " + parts.front() + ")";
    }
    return " (HDF5: " + parts.front() + ": " + parts.back() + ")";
}

std::string type_name(hid_t type) {
    const H5T_class_t cls = H5Tget_class(type);
    const std::size_t bytes = H5Tget_size(type);
    const std::string bits = std::to_string(8 * bytes);
    switch (cls) {
        case H5T_INTEGER:
            return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + bits;
        case H5T_FLOAT:
            return "float" + bits;
        case H5T_STRING:
            return "string";
        case H5T_COMPOUND:
            return "compound";
        case H5T_ENUM:
            return "enum";
        default:
            return "an unsupported type (class " + std::to_string(static_cast<int>(cls)) + ")";
    }
}

void write_compressed_chunks(hid_t dataset, const unsigned char* data,
                             const std::vector<hsize_t>& dims, const std::vector<hsize_t>& chunk,
                             std::size_t element_size, const std::string& file,
                             const std::string& dataset_path) {
    hsize_t row_elements = 1;
    for (std::size_t i = 1; i < dims.size(); ++i) {
        row_elements *= dims[i];
    }
    // Column blocks: a rank-2 chunk narrower than the rows (chunk[1] < dims[1]).
    const bool blocked = dims.size() == 2 && chunk[1] < dims[1];
    const hsize_t block_elements = blocked ? chunk[1] : row_elements;
    const hsize_t column_blocks = (row_elements + block_elements - 1) / block_elements;
    const std::size_t elements = static_cast<std::size_t>(chunk[0] * block_elements);
    const std::size_t chunk_bytes = elements * element_size;
    const hsize_t row_chunks = (dims[0] + chunk[0] - 1) / chunk[0];
    const hsize_t num_chunks = row_chunks * column_blocks;
    constexpr hsize_t batch = 16;  // chunks compressed together: ~16 MiB of input
    std::vector<std::vector<unsigned char>> packed(batch);
    std::vector<uLongf> packed_bytes(batch);
    for (hsize_t first = 0; first < num_chunks; first += batch) {
        const auto count = static_cast<std::int64_t>(std::min(batch, num_chunks - first));
        int failures = 0;
#pragma omp parallel reduction(+ : failures)
        {
            std::vector<unsigned char> block(chunk_bytes);
            std::vector<unsigned char> shuffled(chunk_bytes);
#pragma omp for schedule(dynamic, 1)
            for (std::int64_t k = 0; k < count; ++k) {
                const hsize_t at_chunk = first + static_cast<hsize_t>(k);
                const hsize_t row0 = at_chunk / column_blocks * chunk[0];
                const hsize_t col0 = at_chunk % column_blocks * block_elements;
                // The chunk's rows x columns, row-major, zero-padded past the dataset's edges
                // (HDF5 stores edge chunks at full size).
                const hsize_t rows = std::min(chunk[0], dims[0] - row0);
                const hsize_t cols = std::min(block_elements, row_elements - col0);
                std::fill(block.begin(), block.end(), static_cast<unsigned char>(0));
                for (hsize_t r = 0; r < rows; ++r) {
                    const unsigned char* src =
                        data + ((row0 + r) * row_elements + col0) * element_size;
                    std::copy(src, src + cols * element_size,
                              block.begin() +
                                  static_cast<std::ptrdiff_t>(r * block_elements * element_size));
                }
                // HDF5's shuffle filter: byte j of element i goes to j * elements + i.
                for (std::size_t i = 0; i < elements; ++i) {
                    for (std::size_t j = 0; j < element_size; ++j) {
                        shuffled[j * elements + i] = block[i * element_size + j];
                    }
                }
                auto& out = packed[static_cast<std::size_t>(k)];
                auto& out_bytes = packed_bytes[static_cast<std::size_t>(k)];
                out.resize(compressBound(static_cast<uLong>(chunk_bytes)));
                out_bytes = static_cast<uLongf>(out.size());
                failures += compress2(out.data(), &out_bytes, shuffled.data(),
                                      static_cast<uLong>(chunk_bytes), 1) == Z_OK
                                ? 0
                                : 1;
            }
        }
        STRATA_CHECK(failures == 0, file, ": ", dataset_path, ": zlib compression failed");
        for (std::int64_t k = 0; k < count; ++k) {
            const hsize_t at_chunk = first + static_cast<hsize_t>(k);
            std::vector<hsize_t> offset(dims.size(), 0);
            offset[0] = at_chunk / column_blocks * chunk[0];
            if (blocked) {
                offset[1] = at_chunk % column_blocks * block_elements;
            }
            STRATA_H5_CHECK(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, offset.data(),
                                           packed_bytes[static_cast<std::size_t>(k)],
                                           packed[static_cast<std::size_t>(k)].data()),
                            file, dataset_path, "cannot write chunk");
        }
    }
}

}  // namespace strata::h5
