// all_ranks(ok): agree on a test outcome over MPI_COMM_WORLD before asserting (no deadlocks).
#pragma once

#include <mpi.h>

namespace strata::test {

inline bool all_ranks(bool ok) {
    int local = ok ? 1 : 0;
    int global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return global != 0;
}

}  // namespace strata::test
