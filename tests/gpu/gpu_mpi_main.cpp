// Catch2 runner of the multi-rank GPU tests: every rank runs every test; the exit code is the
// worst over ranks. Ranks need one GPU each (NCCL refuses two ranks on one device): with no
// usable device all ranks skip together (exit 77; a failure under STRATA_GPU_REQUIRED=1), and
// with fewer devices than ranks they always skip.
#define CATCH_CONFIG_RUNNER
#include <cstring>
#include <string>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <catch2/catch.hpp>

#include "tests/gpu/gpu_skip.hpp"

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bool listing = false;
    for (int i = 1; i < argc; ++i) {
        listing = listing || std::strncmp(argv[i], "--list", 6) == 0;
    }
    int count = 0;
    const cudaError_t status = listing ? cudaSuccess : cudaGetDeviceCount(&count);
    int usable = listing || (status == cudaSuccess && count >= size) ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (usable == 0) {
        const std::string why = status != cudaSuccess ? std::string(cudaGetErrorString(status))
                                                      : std::to_string(count) + " devices for " +
                                                            std::to_string(size) +
                                                            " ranks (NCCL needs one GPU per rank)";
        int code = 0;
        if (rank == 0) {
            // Too few GPUs for this rank count is a skip even where a GPU is required.
            code = strata::test::no_gpu(why.c_str(), status == cudaSuccess && count > 0);
        }
        MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Finalize();
        return code;
    }
    const int failed = Catch::Session().run(argc, argv);
    int worst = 0;
    MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst == 0 ? 0 : 1;
}
