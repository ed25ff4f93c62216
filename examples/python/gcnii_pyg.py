"""A PyG user's GCNII on Cora: the Data from the bundled Cora (downloads are unreachable here;
with internet, `Planetoid("data", "Cora")[0]` is the same graph), trained full-graph by Strata.
    .venv/bin/python examples/python/gcnii_pyg.py            (add mpirun -np 2 for 2 ranks)"""
import strata

data = strata.datasets.cora().to_pyg()          # a torch_geometric.data.Data
graph = strata.Graph.from_pyg(data)             # one O(E) copy: edges sorted by destination
trainer = strata.Trainer(graph, model="gcnii", layers=16, epochs=200, seed=1)  # GCNII recipe
result = trainer.fit(callback=strata.callbacks.Print(every=50))
pred = trainer.predict().gather()               # rank 0: every vertex, in vertex order
if strata.rank() == 0:
    print(f"best epoch {result.best_epoch}: test accuracy {result.test_acc:.4f}; "
          f"logits {pred.logits.shape}")
