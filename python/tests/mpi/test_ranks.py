"""Run under `mpirun -np K .venv/bin/python -m pytest python/tests/mpi` (any K): every rank
runs every test. mpi4py, imported first, initialises MPI; strata uses it and leaves it to
mpi4py to finalise."""

import numpy as np
import pytest
from mpi4py import MPI  # first: mpi4py initialises MPI

import strata

comm = MPI.COMM_WORLD


@pytest.fixture(scope="module")
def cora():
    return strata.datasets.cora()


def test_strata_sees_the_world_mpi4py_initialised():
    assert (strata.rank(), strata.world_size()) == (comm.Get_rank(), comm.Get_size())


def test_every_rank_sees_the_same_records_and_result(cora):
    t = strata.Trainer(cora, seed=1, threads=1, epochs=4, comm_timeout=60)
    r = t.fit()
    mine = [(x["epoch"], x["loss"], x.get("val_acc")) for x in r.history]
    assert comm.allgather(mine) == [mine] * comm.Get_size()
    assert t.summary["ranks"] == comm.Get_size()


def test_each_rank_predicts_its_rows_and_gather_puts_them_in_vertex_order(cora):
    t = strata.Trainer(cora, seed=1, threads=1, epochs=3, comm_timeout=60)
    t.fit()
    p = t.predict(embeddings=True)
    ids = comm.allgather(p.node_ids)
    assert sorted(np.concatenate(ids).tolist()) == list(range(cora.num_nodes))
    all_rows = p.gather(root=0)
    if comm.Get_rank() == 0:
        assert all_rows.node_ids.tolist() == list(range(cora.num_nodes))
        assert all_rows.logits.shape == (cora.num_nodes, 7)
        assert all_rows.embeddings.shape == (cora.num_nodes, 16)
    else:
        assert all_rows is None


def test_a_stop_asked_on_the_last_rank_stops_every_rank(cora):
    last = comm.Get_size() - 1
    t = strata.Trainer(cora, seed=1, threads=1, epochs=50, comm_timeout=60)
    r = t.fit(callback=lambda x: "rank asked" if strata.rank() == last and x["epoch"] == 2
              else None)
    assert r.epoch == 2
    assert r.stop_reason == ("rank asked" if last == 0 else f"rank asked (rank {last})")


def test_sigint_on_one_rank_stops_every_rank_at_the_same_epoch(cora):
    import os
    import signal
    t = strata.Trainer(cora, seed=1, threads=1, epochs=50, comm_timeout=60)
    last = comm.Get_size() - 1

    def callback(x):
        if strata.rank() == last and x["epoch"] == 2:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        t.fit(callback=callback)
    assert comm.allgather(t.result.epoch) == [t.result.epoch] * comm.Get_size()
    assert t.result.epoch <= 3


def test_a_duplicate_of_the_world_trains_as_the_world(cora):
    base = strata.Trainer(cora, seed=1, threads=1, epochs=3, comm_timeout=60).fit()
    dup = comm.Dup()
    t = strata.Trainer(cora, seed=1, threads=1, epochs=3, comm_timeout=60, comm=dup)
    r = t.fit()
    assert [x["loss"] for x in r.history] == [x["loss"] for x in base.history]
    assert t.summary["ranks"] == comm.Get_size()
    p = t.predict().gather(root=0)
    assert (p is None) == (comm.Get_rank() != 0)
    dup.Free()


def test_a_sub_communicator_of_one_rank_trains_alone(cora):
    alone = comm.Split(color=comm.Get_rank(), key=0)  # every rank its own run
    t = strata.Trainer(cora, seed=1, threads=1, epochs=3, comm_timeout=60, comm=alone)
    r = t.fit()
    assert t.summary["ranks"] == 1 and t.summary["rank"] == 0
    assert comm.allgather([x["loss"] for x in r.history]) == \
        [[x["loss"] for x in r.history]] * comm.Get_size()
    p = t.predict().gather()
    assert p.node_ids.tolist() == list(range(cora.num_nodes))
    alone.Free()


def test_comm_null_is_refused(cora):
    with pytest.raises(strata.Error,
                       match=r"Trainer: comm is MPI_COMM_NULL \(this rank is not in the "
                             r"communicator\)"):
        strata.Trainer(cora, threads=1, epochs=1, comm=MPI.COMM_NULL)
    with pytest.raises(TypeError, match="comm must be an mpi4py communicator or a string"):
        strata.Trainer(cora, threads=1, epochs=1, comm=3)


def my_rows(n):
    size, rank = comm.Get_size(), comm.Get_rank()
    return n * rank // size, n * (rank + 1) // size


@pytest.mark.parametrize("method", ["block", "random"])
def test_per_rank_slices_train_as_the_whole_graph(cora, method):
    base = strata.Trainer(cora, seed=1, threads=1, epochs=3, partition_method=method,
                          comm_timeout=60).fit()
    s = cora.slice(*my_rows(cora.num_nodes))  # each rank only its rows
    t = strata.Trainer(s, seed=1, threads=1, epochs=3, partition_method=method, comm_timeout=60)
    assert [x["loss"] for x in t.fit().history] == [x["loss"] for x in base.history]
    p = t.predict().gather()
    if comm.Get_rank() == 0:
        assert p.node_ids.tolist() == list(range(cora.num_nodes))


def test_per_rank_slices_partitioned_by_ptscotch(cora):
    s = cora.slice(*my_rows(cora.num_nodes))
    t = strata.Trainer(s, seed=1, threads=1, epochs=2, partition_method="ptscotch",
                       comm_timeout=60)
    assert t.fit().epoch == 2
    assert t.summary["ranks"] == comm.Get_size()


def test_a_bad_slice_on_the_last_rank_fails_every_rank(cora):
    first, last = my_rows(cora.num_nodes)
    if comm.Get_rank() == comm.Get_size() - 1:
        last -= 1  # the rows end before the graph does
    s = cora.slice(first, last)
    with pytest.raises(strata.Error, match="the ranks' rows end at vertex 2707, but the graph "
                                           "has 2708 vertices"):
        strata.Trainer(s, threads=1, epochs=1, comm_timeout=60)


def test_the_grid_from_python_equals_one_rank_and_refuses_slices(cora):
    # feature_slices = 2 on 2 ranks: one graph part in two column slices (docs/layouts.md).
    base = strata.Trainer(cora, seed=1, threads=1, epochs=3, comm=MPI.COMM_SELF).fit()
    grid = strata.Trainer(cora, seed=1, threads=1, epochs=3, feature_slices=2,
                          comm_timeout=60).fit()
    for a, b in zip(base.history, grid.history):
        assert abs(a["loss"] - b["loss"]) <= 1e-5 * abs(a["loss"])
    s = cora.slice(*my_rows(cora.num_nodes))
    with pytest.raises(strata.Error, match="feature_slices = 2: needs a whole graph or a file, "
                                           "not per-rank slices"):
        strata.Trainer(s, threads=1, epochs=1, feature_slices=2, comm_timeout=60).fit()
