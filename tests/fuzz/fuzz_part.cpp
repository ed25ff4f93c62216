// libFuzzer harness: read_part (partition/local_part.hpp) on a valid 3-part partition directory
// of a 60-vertex graph with a chunk map, whose part 1 the input mutates object by object
// (fuzz_h5.hpp: every root attribute and dataset kept, dropped, refilled, retyped or
// reshaped) — or, when the first byte is odd, whose partition.json it replaces by the rest of
// the input (the JSON parser and the report's checks).
#include "datasets/adjacency.hpp"
#include "datasets/generate.hpp"
#include "partition/chunking.hpp"
#include "partition/local_part.hpp"
#include "tests/fuzz/fuzz_files.hpp"
#include "tests/fuzz/fuzz_h5.hpp"

namespace {

namespace fs = std::filesystem;
using strata::H5File;
using strata::H5Shape;

struct Object {
    std::string path;
    char type;  ///< 'l' int64, 'i' int32, 'f' float, 'd' double, 'b' uint8
    H5Shape shape;
    std::vector<std::int64_t> l;
    std::vector<std::int32_t> i;
    std::vector<float> f;
    std::vector<double> d;
    std::vector<std::uint8_t> b;
};

struct Pristine {
    fs::path dir;
    std::string json;
    std::vector<std::pair<std::string, std::string>> strings;
    std::vector<std::pair<std::string, std::int64_t>> ints;
    std::vector<Object> objects;
};

const Pristine& pristine() {
    static const Pristine p = [] {
        Pristine out;
        out.dir = strata::fuzz::scratch() / "p";
        const strata::GraphDataset g = strata::generate_graph(strata::GenerateOptions{
            .num_vertices = 60, .avg_degree = 4.0, .num_features = 3, .num_classes = 3, .seed = 2});
        const strata::Partition parts = strata::partition_block(60, 3);
        const strata::Partition chunks =
            strata::chunk_within_parts(g, parts, strata::ChunkOptions{.chunks = 6, .seed = 1});
        strata::PartitionInfo info;
        info.method = "block";
        (void)strata::write_partition(g, strata::adjacency_matrix(g), parts, info, out.dir.string(),
                                      true, &chunks);
        std::ifstream json(out.dir / "partition.json");
        out.json.assign(std::istreambuf_iterator<char>(json), {});
        const H5File file = H5File::open((out.dir / "part-00001.h5").string());
        for (const char* name : {"strata_format", "partition_id"}) {
            out.strings.emplace_back(name, file.read_string_attribute("/", name));
        }
        for (const char* name : {"strata_format_version", "part", "num_parts",
                                 "num_global_vertices", "first_owned", "num_owned", "num_halo",
                                 "num_classes", "global_train", "global_val", "global_test"}) {
            out.ints.emplace_back(name, file.read_int_attribute("/", name));
        }
        const std::pair<const char*, char> datasets[] = {
            {"/owned/original_ids", 'l'},    {"/owned/chunk", 'i'},
            {"/adjacency/row_ptr", 'l'},     {"/adjacency/col_idx", 'i'},
            {"/adjacency/values", 'f'},      {"/halo/original_ids", 'l'},
            {"/halo/global_ids", 'l'},       {"/degrees/owned", 'd'},
            {"/degrees/halo", 'd'},          {"/exchange/peers", 'i'},
            {"/exchange/send_offsets", 'i'}, {"/exchange/recv_offsets", 'i'},
            {"/exchange/send_rows", 'i'},    {"/node/features", 'f'},
            {"/node/labels", 'l'},           {"/node/train_mask", 'b'},
            {"/node/val_mask", 'b'},         {"/node/test_mask", 'b'}};
        for (const auto& [path, type] : datasets) {
            Object o{.path = path, .type = type};
            switch (type) {
                case 'l':
                    o.l = file.read<std::int64_t>(path, &o.shape);
                    break;
                case 'i':
                    o.i = file.read<std::int32_t>(path, &o.shape);
                    break;
                case 'f':
                    o.f = file.read<float>(path, &o.shape);
                    break;
                case 'd':
                    o.d = file.read<double>(path, &o.shape);
                    break;
                default:
                    o.b = file.read<std::uint8_t>(path, &o.shape);
            }
            out.objects.push_back(std::move(o));
        }
        return out;
    }();
    return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace strata::fuzz;
    const Pristine& p = pristine();
    const std::string part = (p.dir / "part-00001.h5").string();
    const bool replace_json = size > 0 && (data[0] & 1) != 0;
    FuzzedDataProvider in(replace_json ? nullptr : data, replace_json ? 0 : size);
    try {  // a mutation HDF5 cannot store is not a finding
        H5File file = H5File::create(part);
        if (replace_json) {
            write_file(p.dir / "partition.json",  // the part file stays valid
                       std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
        } else {
            write_file(p.dir / "partition.json", p.json);
        }
        for (const auto& [name, value] : p.strings) {
            put_string_attribute(in, file, name.c_str(), value);
        }
        for (const auto& [name, value] : p.ints) {
            put_int_attribute(in, file, name.c_str(), value);
        }
        for (const Object& o : p.objects) {
            switch (o.type) {
                case 'l':
                    put(in, file, o.path.c_str(), o.l, o.shape);
                    break;
                case 'i':
                    put(in, file, o.path.c_str(), o.i, o.shape);
                    break;
                case 'f':
                    put(in, file, o.path.c_str(), o.f, o.shape);
                    break;
                case 'd':
                    put(in, file, o.path.c_str(), o.d, o.shape);
                    break;
                default:
                    put(in, file, o.path.c_str(), o.b, o.shape);
            }
        }
    } catch (const strata::Error&) {
        return 0;
    }
    return expect_ok_or_error([&] { (void)strata::read_part(p.dir.string(), 1, 3); });
}
