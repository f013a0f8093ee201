"""StaticGraph.save / dg.load_static: JSON + .npz, no pickle, validated on load.

A saved graph runs in a fresh process that never imported the model's code; every validation
rule rejects a bad file with a ValueError naming the JSON path of the bad entry.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dyngraph as dg
import dyngraph.nn.functional as F
import dyngraph.static_io as static_io

ROOT = Path(__file__).resolve().parents[1]

TARGET = dg.tensor(np.array([0, 2, 1, 3], dtype=np.int64))
MASK = np.array([[True, False, True, False, True, False]] * 4)


def make_mlp(seed: int = 0):
    rng = np.random.default_rng(seed)
    w1 = dg.tensor(rng.standard_normal((4, 8)), dtype=dg.float32, name="W1")
    b1 = dg.tensor(rng.standard_normal(8), dtype=dg.float32, name="b1")
    w2 = dg.tensor(rng.standard_normal((8, 3)), dtype=dg.float32, name="W2")

    def mlp(x):
        return (x @ w1 + b1).relu() @ w2

    return mlp


def rich(x):
    """Ops with every kind of option: shapes, axes, slices, None, Ellipsis, index arrays,
    boolean masks, dtypes, strings, infinity, and a captured integer tensor."""
    a = x.reshape(2, 12).permute(1, 0)[1:10:2, None, ...]  # (5, 1, 2)
    c = x[np.array([0, 2, 2]), 1:].sum(axis=(0, 1), keepdims=True)
    e = a.to(dg.float64).mean().to(dg.float32)
    f = x.clamp(min=-0.5, max=float("inf"))
    g = dg.cat([f, f.exp()], axis=1).log_softmax(axis=-1)
    loss = F.cross_entropy(g, TARGET, reduction="sum")
    return loss + c.sum() + e + x[MASK].sum()


def randn(*shape, seed=1):
    return dg.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


@pytest.fixture
def saved(tmp_path):
    """A saved MLP graph: (json path, the eager function)."""
    mlp = make_mlp()
    path = dg.trace(mlp, randn(2, 4)).save(tmp_path / "mlp.json")
    return path, mlp


def rewrite(path: Path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


# ----------------------------------------------------------------------------- round trips


def test_round_trip_in_process(saved):
    path, mlp = saved
    assert path.exists() and path.with_suffix(".npz").exists()
    graph = dg.load_static(path)
    x = randn(7, 4, seed=3)
    np.testing.assert_allclose(graph(x).numpy(), mlp(x).numpy(), rtol=1e-6)
    assert repr(graph) == "StaticGraph(4 ops, inputs=[(2, 4) float32], outputs=[(2, 3) float32])"
    assert [t.name for t in graph.captured] == ["W1", "b1", "W2"]


def test_save_adds_the_suffix(tmp_path):
    path = dg.trace(lambda x: x * 2, randn(3)).save(tmp_path / "double")
    assert path == tmp_path / "double.json"
    np.testing.assert_allclose(dg.load_static(tmp_path / "double")(randn(3)).numpy(),
                               (randn(3) * 2).numpy())


def test_every_kind_of_option_round_trips(tmp_path):
    x = randn(4, 6)
    graph = dg.trace(rich, x)
    loaded = dg.load_static(graph.save(tmp_path / "rich.json"))
    for seed in (1, 2):
        x = randn(4, 6, seed=seed)
        np.testing.assert_allclose(loaded(x).numpy(), rich(x).numpy(), rtol=1e-5)
    document = json.loads((tmp_path / "rich.json").read_text())
    encoded = json.dumps(document["steps"])
    for tag in ('"tuple"', '"slice"', '"ellipsis"', '"array"', '"dtype": "float64"',
                '"float": "inf"', '"sum"'):
        assert tag in encoded


def test_loaded_graph_supports_backward(saved):
    path, mlp = saved
    graph = dg.load_static(path)
    x = dg.tensor(randn(3, 4).numpy(), requires_grad=True)
    graph(x).sum().backward()
    x_eager = dg.tensor(randn(3, 4).numpy(), requires_grad=True)
    mlp(x_eager).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x_eager.grad.numpy(), rtol=1e-6)


def test_runs_in_a_fresh_process_without_the_model_code(saved, tmp_path):
    path, mlp = saved
    x = randn(5, 4, seed=11)
    np.save(tmp_path / "x.npy", x.numpy())
    code = textwrap.dedent(
        f"""
        import json, sys
        import numpy as np
        import dyngraph as dg
        graph = dg.load_static({str(path)!r})
        y = graph(dg.tensor(np.load({str(tmp_path / "x.npy")!r})))
        modules = sorted(m for m in sys.modules if m.startswith(("tests", "test_")))
        print(json.dumps({{"y": y.numpy().tolist(), "modules": modules}}))
        """
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["modules"] == []
    np.testing.assert_allclose(np.array(found["y"]), mlp(x).numpy(), rtol=1e-6)


def test_runs_on_each_backend(saved, backend):
    path, mlp = saved
    graph = dg.load_static(path, device=backend.device)
    x = randn(3, 4, seed=5)
    y = graph(backend.tensor(x.numpy()))
    assert y.device == backend.device
    np.testing.assert_allclose(y.numpy(), mlp(x).numpy(), rtol=1e-5)


def test_input_on_another_device_than_the_weights_is_explained(saved):
    if not dg.cuda.is_available():
        pytest.skip("CuPy with a CUDA GPU is not available on this machine")
    path, _ = saved
    graph = dg.load_static(path, device="cpu")
    with dg.no_grad(), pytest.raises(RuntimeError, match="load the graph with"):
        graph(randn(3, 4).to("cuda"))


def test_custom_ops_cannot_be_saved(tmp_path):
    class Twice(dg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, gz):
            return gz * 2

    graph = dg.trace(lambda x: Twice.apply(x), randn(3))
    np.testing.assert_allclose(graph(randn(3)).numpy(), randn(3).numpy() * 2)
    with pytest.raises(ValueError, match="not one of dyngraph's built-in ops"):
        graph.save(tmp_path / "custom.json")


# ----------------------------------------------------------------------------- validation


def _set(path: list, value):
    def change(document):
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _delete(key):
    return lambda document: document.pop(key)


INVALID = [
    ("unknown top field", _set(["extra"], 1), r"\$\.extra: unknown field"),
    ("missing field", _delete("steps"), r"\$\.steps: missing"),
    ("wrong format", _set(["format"], "onnx"), "not a dyngraph static graph"),
    ("schema version", _set(["schema_version"], 99),
     r"written by a newer dyngraph \(schema 99, this one reads up to 1\): upgrade dyngraph"),
    ("unknown op", _set(["steps", 0, "op"], "os.system"),
     r"\$\.steps\[0\]\.op: 'os\.system' is not one of dyngraph's ops"),
    ("base class op", _set(["steps", 0, "op"], "Function"), r"\$\.steps\[0\]\.op"),
    ("unknown step field", _set(["steps", 1, "code"], "print(1)"),
     r"\$\.steps\[1\]\.code: unknown field"),
    ("unknown option", _set(["steps", 0, "options", "evil"], 1),
     r"\$\.steps\[0\]\.options\.evil: MatMul takes no such option"),
    ("forward reference", _set(["steps", 0, "args", 0], {"step": 3}),
     r"\$\.steps\[0\]\.args\[0\]\.step: 3 does not refer to an earlier step"),
    ("self reference", _set(["steps", 1, "args", 0], {"step": 1}),
     r"\$\.steps\[1\]\.args\[0\]\.step: 1 does not refer to an earlier step"),
    ("missing output step", _set(["outputs", 0], {"step": 99}), r"\$\.outputs\[0\]\.step: 99"),
    ("missing input", _set(["steps", 0, "args", 0], {"input": 5}),
     r"\$\.steps\[0\]\.args\[0\]\.input: 5"),
    ("missing capture", _set(["steps", 0, "args", 1], {"captured": 3}),
     r"\$\.steps\[0\]\.args\[1\]\.captured: 3"),
    ("bool as index", _set(["steps", 1, "args", 0], {"step": True}),
     r"\$\.steps\[1\]\.args\[0\]\.step: True"),
    ("unknown ref kind", _set(["steps", 0, "args", 0], {"module": "os"}),
     r"\$\.steps\[0\]\.args\[0\]\.module: unknown field"),
    ("two ref kinds", _set(["steps", 0, "args", 0], {"input": 0, "step": 0}),
     r"\$\.steps\[0\]\.args\[0\]: a reference names exactly one"),
    ("absurd shape", _set(["steps", 0, "shape"], [1_000_000, 1_000_000]),
     r"\$\.steps\[0\]\.shape: .* over the limit"),
    ("negative size", _set(["inputs", 0, "shape"], [-1, 4]),
     r"\$\.inputs\[0\]\.shape: -1 is not a valid size"),
    ("too many dims", _set(["inputs", 0, "shape"], [1] * 40), r"\$\.inputs\[0\]\.shape"),
    ("object dtype", _set(["inputs", 0, "dtype"], "object"), r"\$\.inputs\[0\]\.dtype: 'object'"),
    ("captured kind", _set(["captured", 0, "kind"], "module"), r"\$\.captured\[0\]\.kind"),
    ("captured name", _set(["captured", 0, "name"], "x" * 500), r"\$\.captured\[0\]\.name"),
    ("unknown constant tag", _set(["steps", 1, "args", 1], {"constant": {"pickle": "gASV"}}),
     r"\$\.steps\[1\]\.args\[1\]\.constant\.pickle: not a value"),
    ("tag with extra key", _set(["steps", 1, "args", 1], {"constant": {"tuple": [], "x": 1}}),
     r"\$\.steps\[1\]\.args\[1\]\.constant\.x: not a value"),
    ("single output flag", _set(["single_output"], "yes"), r"\$\.single_output"),
    ("input entry", _set(["inputs", 0], 5), r"\$\.inputs\[0\]: expected an object"),
    ("not an object", lambda d: d["steps"].__setitem__(0, [1, 2]),
     r"\$\.steps\[0\]: expected an object"),
    ("declared weight shape", _set(["captured", 0, "shape"], [4, 9]),
     r"\$\.steps\[0\] \(MatMul\)\.shape: the step makes shape \(2, 9\)"),
]


@pytest.mark.parametrize("change, message", [case[1:] for case in INVALID],
                         ids=[case[0] for case in INVALID])
def test_invalid_graph_is_rejected_with_its_json_path(saved, change, message):
    path, _ = saved
    rewrite(path, change)
    with pytest.raises(ValueError, match=message):
        dg.load_static(path)


def test_invalid_option_values_are_rejected(tmp_path):
    path = dg.trace(lambda x: x.sum(axis=1), randn(2, 3)).save(tmp_path / "sum.json")
    rewrite(path, _set(["steps", 0, "options", "axis"], {"slice": ["0", None, None]}))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\]\.options\.axis\.slice"):
        dg.load_static(path)
    rewrite(path, _set(["steps", 0, "options", "axis"], {"array": [[1], 2], "dtype": "int64"}))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\]\.options\.axis\.array"):
        dg.load_static(path)
    rewrite(path, _set(["steps", 0, "options", "axis"], {"array": ["a"], "dtype": "int64"}))
    with pytest.raises(ValueError, match=r"options\.axis\.array: index arrays hold integers"):
        dg.load_static(path)
    rewrite(path, _set(["steps", 0, "options", "axis"], "s" * 100))
    with pytest.raises(ValueError, match=r"options\.axis: string longer than"):
        dg.load_static(path)


def test_deep_nesting_is_rejected_before_parsing(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 10_000 + "]" * 10_000)  # json.loads would hit the recursion limit
    path.with_suffix(".npz").write_bytes(b"")
    with pytest.raises(ValueError, match="nesting deeper than 32 levels"):
        dg.load_static(path)
    # brackets inside strings do not count
    ok = tmp_path / "strings.json"
    ok.write_text(json.dumps({"format": "x", "s": "[" * 100}))
    with pytest.raises(ValueError, match="no \"format\""):
        dg.load_static(ok)


def test_file_size_is_checked_before_reading(saved, monkeypatch):
    path, _ = saved
    monkeypatch.setattr(static_io, "MAX_JSON_BYTES", 100)
    path.write_text("not even JSON " * 50)  # the size error comes first
    with pytest.raises(ValueError, match="the 100-byte limit"):
        dg.load_static(path)


def test_weights_size_is_checked(saved, monkeypatch):
    path, _ = saved
    monkeypatch.setattr(static_io, "MAX_WEIGHT_BYTES", 64)
    with pytest.raises(ValueError, match="over the 64-byte limit"):
        dg.load_static(path)


def test_invalid_json_and_wrong_top_level(saved):
    path, _ = saved
    path.write_text("{broken")
    with pytest.raises(ValueError, match="invalid JSON"):
        dg.load_static(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a dyngraph static graph"):
        dg.load_static(path)


# ----------------------------------------------------------------------------- no pickle


@pytest.fixture
def no_unpickling(monkeypatch):
    """Fail loudly if anything tries to unpickle."""

    def refuse(*args, **kwargs):
        raise AssertionError("something tried to unpickle")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)


def test_a_pickle_in_place_of_the_weights_is_refused(saved, no_unpickling):
    path, _ = saved
    weights = {f"captured_{j}": np.zeros(1) for j in range(3)}
    path.with_suffix(".npz").write_bytes(pickle.dumps(weights))
    with pytest.raises(ValueError, match="not a dyngraph static graph"):
        dg.load_static(path)


def test_an_object_array_in_the_weights_is_refused(saved, no_unpickling):
    path, _ = saved
    with np.load(path.with_suffix(".npz")) as npz:
        arrays = dict(npz)
    arrays["captured_0"] = np.array([{"evil": 1}, None], dtype=object)
    np.savez(path.with_suffix(".npz"), **arrays)  # numpy pickles object arrays inside
    with pytest.raises(ValueError, match="not a dyngraph static graph.*allow_pickle"):
        dg.load_static(path)


def test_unexpected_or_missing_weights_are_refused(saved):
    path, _ = saved
    with np.load(path.with_suffix(".npz")) as npz:
        arrays = dict(npz)
    np.savez(path.with_suffix(".npz"), **arrays, extra=np.zeros(2))
    with pytest.raises(ValueError, match="not a dyngraph static graph: it holds"):
        dg.load_static(path)
    del arrays["captured_2"]
    np.savez(path.with_suffix(".npz"), **arrays)
    with pytest.raises(ValueError, match="not a dyngraph static graph: it holds"):
        dg.load_static(path)
