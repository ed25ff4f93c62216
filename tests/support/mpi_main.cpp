// Catch2 runner for multi-rank tests: every rank runs every test; exit code = worst over ranks.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>

#include <catch2/catch.hpp>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const int failed = Catch::Session().run(argc, argv);
    int worst = 0;
    MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst == 0 ? 0 : 1;
}
