// libFuzzer harness: read_checkpoint (training/checkpoint.hpp) on well-formed HDF5 checkpoint
// files whose contents the input mutates, then build_model on the model it stored (what
// `strata predict` and --resume do next). Each root attribute and array of a valid checkpoint
// of format 2, 3 or 4 (with the /pipeline section) is kept, dropped, given other values,
// another type or shape; the checksum beside each array is usually recomputed for what was
// written (so that the validation behind it is reached), else dropped or garbage. The model's
// JSON is kept, garbage, or the valid text with a few bytes changed.
#include <string>
#include <vector>

#include "layers/model_spec.hpp"
#include "layers/model_zoo.hpp"
#include "tests/fuzz/fuzz_files.hpp"
#include "tests/fuzz/fuzz_h5.hpp"
#include "training/checkpoint.hpp"

namespace {

using strata::H5File;

/// An array and its checksum attribute, each as the input says.
template <class T>
void put_checked(FuzzedDataProvider& in, H5File& file, const char* path, std::vector<T> values) {
    const auto size = static_cast<std::int64_t>(values.size());
    const auto written = strata::fuzz::put(in, file, path, std::move(values), {size});
    if (!written) {
        return;
    }
    switch (in.ConsumeIntegralInRange<int>(0, 5)) {
        case 4:
            file.write_attribute(path, "checksum", in.ConsumeRandomLengthString(24));
            break;
        case 5:
            break;  // dropped
        default:
            file.write_attribute(path, "checksum",
                                 strata::checkpoint_checksum(std::as_bytes(
                                     std::span<const T>(written->data(), written->size()))));
    }
}

/// The model's JSON: valid, garbage, or valid with up to 4 bytes replaced.
void put_model_spec(FuzzedDataProvider& in, H5File& file, std::string json) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            break;
        case 1:
            return;  // dropped
        case 2:
            json = in.ConsumeRandomLengthString(128);
            break;
        default:
            for (int i = in.ConsumeIntegralInRange<int>(1, 4); i > 0 && !json.empty(); --i) {
                const auto at = in.ConsumeIntegralInRange<std::size_t>(0, json.size() - 1);
                json[at] = in.ConsumeIntegral<char>();
            }
    }
    file.write_attribute("/", "model_spec", json);
}

std::vector<float> ramp(std::size_t n, float scale) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = scale * static_cast<float>(i);
    }
    return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace strata::fuzz;
    FuzzedDataProvider in(data, size);
    const std::string path = (scratch() / "ckpt-000005.h5").string();
    strata::ModelSpec spec;  // gcn, 2 layers, hidden 16: 3*16+16+16*3+3 = 115 parameters
    const std::int64_t version = in.ConsumeIntegralInRange<std::int64_t>(2, 4);
    const std::size_t num_params = 115;
    try {  // a mutation HDF5 cannot store is not a finding
        H5File file = H5File::create(path);
        put_string_attribute(in, file, "strata_format", "checkpoint");
        put_int_attribute(in, file, "strata_format_version", version);
        put_int_attribute(in, file, "epoch", 5);
        put_int_attribute(in, file, "early_stopped", 0);
        put_string_attribute(in, file, "dataset_path", "data/g.h5");
        if (version == 2) {
            put_string_attribute(in, file, "model_type", "gcn");
            put_int_attribute(in, file, "gcn_layers", spec.layers);
            put_int_attribute(in, file, "gcn_hidden", spec.hidden);
            file.write_attribute("/", "gcn_dropout",
                                 in.ConsumeBool() ? in.ConsumeFloatingPoint<double>() : 0.5);
            file.write_attribute("/", "gcn_weight_decay", 5e-4);
            put_int_attribute(in, file, "gcn_decay_all_layers", 0);
            put_int_attribute(in, file, "gcn_bias", 1);
        } else {
            put_model_spec(in, file, strata::spec_to_json(spec));
        }
        put_string_attribute(in, file, "seed", "7");
        put_int_attribute(in, file, "row_normalize_features", 0);
        put_string_attribute(in, file, "partition_method", "metis");
        for (const char* field : {"model", "parameters", "dataset", "partition", "training"}) {
            put_string_attribute(in, file, field, field);
        }
        put_string_attribute(in, file, "select_by", "val_acc");
        put_checked(in, file, "/model/params", ramp(num_params, 0.01f));
        put_checked(in, file, "/optimizer/state", ramp(2 * num_params + 1, 0.001f));
        put_checked(in, file, "/best/params", ramp(num_params, 0.02f));
        put_checked(in, file, "/progress/eval_epochs", std::vector<std::int64_t>{1, 2, 3, 4, 5});
        put_checked(in, file, "/progress/val_losses", std::vector<double>{1.9, 1.7, 1.5, 1.4, 1.3});
        put_checked(in, file, "/progress/val_accs", std::vector<double>{.3, .4, .5, .6, .62});
        put_checked(in, file, "/progress/best", std::vector<double>{5, 1.2, .9, .62, .6, 1.3});
        if (version == 4 && in.ConsumeBool()) {  // a layer-pipeline run of 2 ranks, guard on
            put_checked(in, file, "/pipeline/history_rank_00000", ramp(12, 0.5f));
            put_checked(in, file, "/pipeline/history_rank_00001", ramp(8, 0.25f));
            put_checked(in, file, "/pipeline/guard_figures", std::vector<double>{1, 0, 0.5});
            put_checked(in, file, "/pipeline/guard_parameters", ramp(num_params, 0.03f));
            put_checked(in, file, "/pipeline/guard_optimizer", ramp(2 * num_params + 1, 0.f));
            file.write_attribute("/pipeline", "ranks",
                                 in.ConsumeIntegralInRange<std::int64_t>(-1, 3));
        }
        file.close();
    } catch (const strata::Error&) {
        return 0;
    }
    return expect_ok_or_error([&] {
        const strata::Checkpoint c = strata::read_checkpoint(path);
        (void)strata::describe(c.model);
        (void)strata::build_model(c.model, 3, 3);
    });
}
