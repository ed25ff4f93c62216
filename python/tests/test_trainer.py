"""strata.Trainer on one rank: the same session as `strata train` (bit for bit), callbacks,
early stop, errors, predictions equal to `strata predict`'s."""

import json
import os

import h5py
import numpy as np
import pytest

import strata
from support import CORA, cli, records, run, same_config, stable

EPOCHS = 12


@pytest.fixture(scope="module")
def cora():
    return strata.datasets.cora()


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """`strata train` on Cora, 1 thread, with checkpoints."""
    d = tmp_path_factory.mktemp("cli")
    run([cli(), "train", "--data", CORA, "--seed", "1", "--threads", "1", "--epochs", str(EPOCHS),
         "--metrics", str(d / "m.jsonl"), "--checkpoint-dir", str(d / "ck"), "--quiet"])
    return d


@pytest.mark.parametrize("source", ["graph", "path"])
def test_fit_equals_strata_train_bit_for_bit(cora, cli_run, tmp_path, source):
    data = cora if source == "graph" else CORA
    seen = []
    t = strata.Trainer(data, model="gcn", seed=1, threads=1, epochs=EPOCHS,
                       metrics=str(tmp_path / "m.jsonl"))
    result = t.fit(callback=seen.append)
    ours, theirs = records(tmp_path / "m.jsonl"), records(cli_run / "m.jsonl")
    assert len(ours) == len(theirs) == EPOCHS
    same_config(ours[0]["config"], theirs[0]["config"])
    assert [stable(r) for r in ours] == [stable(r) for r in theirs]
    # The callback saw the records the file holds (the file's first adds the configuration).
    assert [stable(r) for r in seen] == [stable(r) for r in ours]
    assert result.history == seen
    assert result.best_epoch == max(ours, key=lambda r: (r["val_acc"], -r["epoch"]))["epoch"]


def test_callback_stops_every_rank_with_its_reason(cora):
    t = strata.Trainer(cora, seed=1, threads=1, epochs=50)
    result = t.fit(callback=lambda r: "enough" if r["epoch"] == 3 else None)
    assert (result.epoch, result.stop_reason) == (3, "enough")
    t = strata.Trainer(cora, seed=1, threads=1, epochs=50)
    assert t.fit(callback=strata.callbacks.StopAt("val_acc", 0.5)).epoch < 50


def test_trace_option_writes_the_timeline(cora, tmp_path):
    t = strata.Trainer(cora, seed=1, threads=1, epochs=3, trace=str(tmp_path / "t.json"),
                       trace_epochs="2:3")
    t.fit()
    trace = json.loads((tmp_path / "t.json").read_text())
    steps = [e["args"]["value"] for e in trace["traceEvents"] if e["name"] == "training step"]
    assert steps == [2, 3]
    assert {"gemm", "aggregation", "step"} <= {e.get("cat") for e in trace["traceEvents"]}


def test_callback_exception_is_raised_by_fit(cora):
    t = strata.Trainer(cora, seed=1, threads=1, epochs=50)

    def boom(record):
        if record["epoch"] == 2:
            raise ValueError("from the callback")

    with pytest.raises(ValueError, match="from the callback"):
        t.fit(callback=boom)


@pytest.mark.parametrize("options, message", [
    (dict(ways=0), "ways = 0: must be at least 1"),
    (dict(eval_every=0), "eval_every = 0: must be at least 1"),
    (dict(parallel="pipe"), "parallel = 'pipe': expected graph or pipeline"),
    (dict(epochs="x"), 'Trainer: epochs = "x": must be an integer'),
    (dict(wayz=1), "wayz = 1: not an option"),
])
def test_invalid_options_raise_option_error(cora, options, message):
    with pytest.raises(strata.OptionError) as e:
        strata.Trainer(cora, **options)
    assert str(e.value).startswith(message)
    assert isinstance(e.value, strata.Error) and isinstance(e.value, ValueError)


def test_bad_file_raises_the_reader_message(tmp_path):
    (tmp_path / "bad.h5").write_text("not hdf5")
    with pytest.raises(strata.Error, match="bad.h5"):
        strata.Trainer(str(tmp_path / "bad.h5"))


def test_model_options_and_recipes(cora):
    t = strata.Trainer(cora, model="gcnii", layers=4, hidden=16, lambda_=0.4, epochs=2,
                       threads=1)
    c = t.config
    assert c["model"]["model"] == "gcnii" and c["model"]["layers"] == 4
    assert c["model"]["lambda"] == pytest.approx(0.4)
    assert c["lr"] == 0.01 and c["row_normalize_features"] is True  # gcnii's recipe
    t.fit()
    t = strata.Trainer(cora, model={"model": "appnp", "hops": 3}, epochs=2, threads=1)
    assert t.config["model"]["hops"] == 3


def test_predict_equals_strata_predict(cora, cli_run, tmp_path):
    run([cli(), "predict", "--data", CORA, "--checkpoint", str(cli_run / "ck"), "--out",
         str(tmp_path / "p.h5"), "--embeddings", "--threads", "1"])
    with h5py.File(tmp_path / "p.h5") as f:
        logits, emb, pred = f["/logits"][:], f["/embeddings"][:], f["/predictions"][:]
    t = strata.Trainer(cora, seed=1, threads=1, epochs=EPOCHS)
    t.fit()
    p = t.predict(embeddings=True).gather()
    assert p.node_ids.tolist() == list(range(2708))
    assert np.array_equal(p.logits, logits) and np.array_equal(p.embeddings, emb)
    assert np.array_equal(p.pred, pred)
    # From the CLI's checkpoint through the Trainer: the same.
    q = t.predict(checkpoint=str(cli_run / "ck" / sorted(os.listdir(cli_run / "ck"))[-1]))
    assert np.array_equal(q.in_vertex_order().logits, logits)


def test_predictions_own_the_buffer_the_predictor_wrote(cora):
    t = strata.Trainer(cora, seed=1, threads=1, epochs=2)
    t.fit()
    p = t.predict()
    assert p.logits.dtype == np.float32 and p.logits.shape == (2708, 7)
    assert not p.logits.flags.owndata  # a view of the C++ buffer, owned by a capsule
    base = p.logits.__array_interface__["data"][0]
    logits = p.logits
    del p
    assert logits.__array_interface__["data"][0] == base and np.isfinite(logits).all()


def test_gcn_on_a_pyg_data_reaches_080(cora):
    pytest.importorskip("torch_geometric")
    data = cora.to_pyg()
    t = strata.Trainer(strata.Graph.from_pyg(data), model="gcn", seed=1, threads=2,
                       row_normalize_features=True)  # README's command
    assert t.fit().test_acc >= 0.80


def test_partition_then_train_on_the_directory(cora, tmp_path):
    report = strata.partition(cora, 1, tmp_path / "cora.1")
    assert report["num_parts"] == 1
    t = strata.Trainer(str(tmp_path / "cora.1"), seed=1, threads=1, epochs=2)
    assert t.fit().epoch == 2
    with pytest.raises(strata.Error, match="exists"):
        strata.partition(cora, 1, tmp_path / "cora.1")


def test_plan_returns_the_planner_json(cora):
    p = strata.plan(CORA, ranks=[1, 2], layers=2, hidden=16)
    assert isinstance(p, dict) and p


@pytest.mark.parametrize("model", ["gcn", "gcnii", "gcnii*", "resgcn+", "appnp", "sage", "gin",
                                   "gat", "mlp"])
def test_every_zoo_model_trains_with_its_recipe(cora, model):
    t = strata.Trainer(cora, model=model, epochs=1, threads=1)
    assert t.config["model"]["model"] == model
    r = t.fit()
    assert r.epoch == 1 and r.best is not None and np.isfinite(r.best["loss"])


def test_checkpoints_and_resume_continue_the_run_exactly(cora, tmp_path):
    whole = strata.Trainer(cora, seed=1, threads=1, epochs=6).fit().history
    first = strata.Trainer(cora, seed=1, threads=1, epochs=4, checkpoint_dir=str(tmp_path / "ck"),
                           checkpoint_every=2).fit()
    assert first.checkpoint.endswith(".h5")
    rest = strata.Trainer(cora, seed=1, threads=1, epochs=6, checkpoint_dir=str(tmp_path / "ck"),
                          resume=True).fit().history
    assert [r["epoch"] for r in rest] == [5, 6]
    assert [stable(r) for r in rest] == [stable(r) for r in whole[4:]]


def test_fit_releases_the_gil(cora):
    import threading
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = strata.Trainer(cora, seed=1, threads=1, epochs=20)
    thread = threading.Thread(target=tick)
    thread.start()
    start = len(ticks)
    t.fit()  # no callback: Python runs only in the other thread
    during = len(ticks) - start
    done.set()
    thread.join()
    assert during > 20  # the other thread ran while fit() trained (about 1 ms per tick)


def test_comm_self_of_mpi4py_trains_as_the_world(cora):
    MPI = pytest.importorskip("mpi4py.MPI")
    base = strata.Trainer(cora, seed=1, threads=1, epochs=3).fit()
    t = strata.Trainer(cora, seed=1, threads=1, epochs=3, comm=MPI.COMM_SELF, comm_timeout=30)
    assert [x["loss"] for x in t.fit().history] == [x["loss"] for x in base.history]
    assert t.config["comm"] == "auto" and t.config["comm_timeout"] == 30
    assert t.predict().gather().node_ids.tolist() == list(range(cora.num_nodes))


def test_a_slice_of_every_row_trains_as_the_graph(cora):
    base = strata.Trainer(cora, seed=1, threads=1, epochs=3).fit()
    s = cora.slice(0, cora.num_nodes)
    assert (s.first, s.num_rows, s.num_local_edges) == (0, 2708, 10556)
    t = strata.Trainer(s, seed=1, threads=1, epochs=3)
    assert [x["loss"] for x in t.fit().history] == [x["loss"] for x in base.history]
    assert t.predict().node_ids.size == cora.num_nodes


def test_invalid_slices_raise_with_the_rank_and_the_field(cora):
    with pytest.raises(strata.Error, match=r"GraphSlice: source id 2708 is outside \[0, 2708\)"):
        strata.GraphSlice.from_arrays(0, 2708, [0, 1], [2708], np.zeros((1, 3), np.float32),
                                      [0], num_classes=7)
    s = strata.GraphSlice.from_arrays(5, 2708, [0, 1], [0], np.zeros((1, 3), np.float32), [0],
                                      num_classes=7)
    with pytest.raises(strata.Error, match=r"the slices in memory \(rank 0\): its rows start at "
                                           r"vertex 5, expected 0"):
        strata.Trainer(s, threads=1, epochs=1)
