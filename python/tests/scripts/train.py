"""Trains GCN on the bundled Cora from Python (run under mpirun -np K): argv = metrics file,
source (graph | path), epochs. What test_distributed.py compares with `strata train`."""
import sys

import strata

metrics, source, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = strata.datasets.cora() if source == "graph" else strata.datasets._repo_data() + "/cora.h5"
t = strata.Trainer(data, model="gcn", seed=1, threads=1, epochs=epochs, metrics=metrics)
t.fit()
p = t.predict().gather()
if strata.rank() == 0:
    assert p.node_ids.tolist() == list(range(2708)), "gathered rows are not in vertex order"
    print(f"gathered {p.logits.shape[0]} rows, test accuracy {p.accuracy('test'):.4f}")
