"""Per-rank slices: each rank gives only its own rows (here cut from the bundled Cora; in a real
job each rank would read its rows from its own source), and no rank holds the whole graph:
    source scripts/env.sh   # as root
    mpirun -np 2 .venv/bin/python examples/python/slices.py
The ranks partition the slices with PT-Scotch and exchange rows as for a .h5 (docs/python.md)."""
from mpi4py import MPI

import strata

comm = MPI.COMM_WORLD
cora = strata.datasets.cora()  # only to cut this rank's rows from
n, r, k = cora.num_nodes, comm.Get_rank(), comm.Get_size()
mine = cora.slice(n * r // k, n * (r + 1) // k)  # rows [first, last) with their in-edges
del cora
trainer = strata.Trainer(mine, model="gcn", seed=1, row_normalize_features=True,
                         partition_method="ptscotch", comm=comm)
result = trainer.fit(callback=strata.callbacks.Print(every=50))
if r == 0:
    print(f"{mine}: test accuracy {result.test_acc:.4f}")
