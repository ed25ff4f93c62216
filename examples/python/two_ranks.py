"""Two ranks, one Python process each:
    source scripts/env.sh   # as root: Open MPI's allow-run-as-root variables
    mpirun -np 2 .venv/bin/python examples/python/two_ranks.py
(name the venv's interpreter: a bare python3 may be another Python). Each rank reads its slice of
the .h5 and the ranks partition it (PT-Scotch); the metrics equal `mpirun -np 2 strata train
--data data/cora.h5 --seed 1` bit for bit."""
import strata

trainer = strata.Trainer(strata.datasets.path("cora.h5"), model="gcn", seed=1,
                         row_normalize_features=True)
result = trainer.fit(callback=strata.callbacks.Print(every=50))   # prints on rank 0
pred = trainer.predict()                                          # this rank's rows
print(f"rank {strata.rank()} of {strata.world_size()}: {pred.node_ids.size} rows predicted")
if strata.rank() == 0:
    print(f"test accuracy {result.test_acc:.4f}")
