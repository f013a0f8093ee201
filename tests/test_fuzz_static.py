"""Fuzzing the static-graph loader (issue 30): a few hundred generated malformed and hostile graph
and weights files, from a fixed seed. Each must be either loaded and run, or refused with a clear
ValueError or TypeError (a run may also stop with the op's own clear error, or the loaded graph's
memory budget), each within a time and memory bound: never a KeyError, a RecursionError, numpy's
raw MemoryError, a hang or a pickle.

The counts (files tried, refused at load, loaded and run, stopped while running) are printed
(``pytest -s``) and checked against the number of files made."""

from __future__ import annotations

import copy
import io
import json
import pickle
import random
import time
import tracemalloc
import warnings
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import dyngraph as dg
from dyngraph.trace import MemoryBudgetError

SEED = 30
SECONDS_PER_FILE = 2.0
BYTES_PER_FILE = 256 * 2**20  # traced Python allocations (numpy's included) while loading+running

# ----------------------------------------------------------------------------- the seed graphs


def seed_graphs(folder: Path) -> list[Path]:
    """A few valid graphs covering options of every kind, weights, several outputs."""
    rng = np.random.default_rng(SEED)
    W = dg.tensor(rng.standard_normal((4, 3)).astype(np.float32), name="W")
    b = dg.tensor(np.zeros(3, dtype=np.float32), name="b")

    def mlp(x):
        return (x @ W + b).relu().sum(axis=1)

    def shapes(x):
        y = x.repeat(2, 1).reshape(6, 2).permute(1, 0)[:, [0, 2]]
        return y.expand(3, 2, 2).exp().mean(axis=(0, 2), keepdim=True), x.max()

    def mixed(x, y):
        return dg.cat([x, y], dim=0).clamp(-1.0, 1.0).softmax(dim=-1) * 2.0

    x = dg.tensor(rng.standard_normal((2, 4)).astype(np.float32))
    y = dg.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    return [
        dg.trace(mlp, x).save(folder / "mlp.json"),
        dg.trace(shapes, dg.tensor(rng.standard_normal((2, 3)).astype(np.float32)))
        .save(folder / "shapes.json"),
        dg.trace(mixed, x, y).save(folder / "mixed.json"),
    ]


# ----------------------------------------------------------------------------- mutations


HOSTILE_STRINGS = [
    "__import__('os').system('echo pwned')", "../../etc/passwd", "/dev/zero", "Exp\x00",
    "\ud800", "𝔼xp", "x" * 10_000, "__proto__", "constructor", "Function", "Tensor",
    "<script>alert(1)</script>", "", "Exp ", "exp",
]
SWAPS = [True, False, 1, -1, 0, 1.5, -1e300, 2**62, -(2**62), "x", None, [], {}, [[[]]],
         {"tuple": [1, 2]}, {"slice": [None, None, 0]}, {"array": [1], "dtype": "float32"},
         {"dtype": "object"}, {"float": "nan"}, {"scalar": "inf", "dtype": "int8"}]
HUGE_SHAPES = [[2**31], [2**20, 2**20], [2**31, 2**31, 2**31], [-1], [10**18], [0], [1] * 40]


def paths_of(value, path=()):
    """Every position in a JSON document, as a tuple of keys and indices."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_of(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from paths_of(item, (*path, i))


def replaced(document, path, value):
    changed = copy.deepcopy(document)
    if not path:
        return value
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


def deleted(document, path):
    changed = copy.deepcopy(document)
    target = changed
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return changed


def json_cases(document: dict, text: str, rng: random.Random) -> list[tuple[str, str | bytes]]:
    """(kind, file content) for the graph file, the weights kept as they are."""
    cases: list[tuple[str, str | bytes]] = []
    paths = list(paths_of(document))[1:]
    for path in rng.sample(paths, min(len(paths), 45)):  # a type swap at many fields
        for value in rng.sample(SWAPS, 3):
            cases.append(("type swap", json.dumps(replaced(document, path, value))))
    for path in rng.sample(paths, min(len(paths), 12)):
        cases.append(("missing field", json.dumps(deleted(document, path))))
    for cut in sorted(rng.sample(range(1, len(text)), 12)):
        cases.append(("truncated", text[:cut]))
    for i, step in enumerate(document["steps"]):
        for shape in rng.sample(HUGE_SHAPES, 2):
            cases.append(("huge shape", json.dumps(replaced(document, ("steps", i, "shape"),
                                                            shape))))
        for name in step["options"]:
            for value in ({"tuple": [2**20, 2**20]}, {"tuple": [2**40]}, 2**40, -(2**40)):
                cases.append(("huge option", json.dumps(
                    replaced(document, ("steps", i, "options", name), value))))
    for i in range(len(document["inputs"])):
        cases.append(("huge input", json.dumps(
            replaced(document, ("inputs", i, "shape"), rng.choice(HUGE_SHAPES)))))
    for name in rng.sample(HOSTILE_STRINGS, 8):
        cases.append(("hostile op", json.dumps(replaced(document, ("steps", 0, "op"), name))))
        cases.append(("hostile option", json.dumps(
            replaced(document, ("steps", 0, "options", name[:40] or "?"), 1))))
    for depth in (31, 40, 5000):  # written as text: json.dumps itself recurses
        marked = json.dumps(replaced(document, ("steps", 0, "options", "axis"), "DEEP"))
        cases.append(("deep nesting", marked.replace('"DEEP"', "[" * depth + "0" + "]" * depth)))
    cases.append(("deep text", "[" * 100_000))
    cases.append(("bools for ints", json.dumps(
        replaced(document, ("outputs", 0), {"step": True}))))
    cases.append(("newer schema", json.dumps(dict(document, schema_version=2, extra=1))))
    cases.append(("not UTF-8", text.encode("utf-8")[:20] + b"\xff\xfe" + b"}"))
    cases.append(("a pickle", pickle.dumps(document)))
    cases.append(("duplicate keys", text.replace('"format"', '"steps": [], "format"', 1)))
    cases.append(("NaN", text.replace("false", "NaN").replace("true", "NaN")))
    return cases


def npy_member(header: dict, data: bytes) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue() + data


def zipped(members: dict[str, bytes], compress: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compress) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def weights_cases(npz: bytes, rng: random.Random) -> list[tuple[str, bytes]]:
    """(kind, weights file content) for the MLP graph (captured W (4, 3), b (3,) float32)."""
    good_b = npy_member({"descr": "<f4", "fortran_order": False, "shape": (3,)}, b"\0" * 12)
    cases = [("weights truncated", npz[:cut]) for cut in sorted(rng.sample(range(len(npz)), 12))]
    cases += [("weights flipped byte", bytes(
        byte ^ 0xFF if i == spot else byte for i, byte in enumerate(npz)))
        for spot in rng.sample(range(len(npz)), 8)]
    cases.append(("weights empty", b""))
    cases.append(("weights random", rng.randbytes(500)))
    cases.append(("weights pickle", pickle.dumps({"captured_0": np.zeros(1)})))
    for shape in [(2**40,), (4, 2**40), (3, 4), (), (12,), (-1, 3)]:
        header = {"descr": "<f4", "fortran_order": False, "shape": shape}
        cases.append(("weights header shape", zipped(
            {"captured_0.npy": npy_member(header, b"\0" * 48), "captured_1.npy": good_b})))
    for descr in ["<f8", ">f4", "|O", "<U3", "|V4", "<i4", "|b1"]:
        header = {"descr": descr, "fortran_order": False, "shape": (4, 3)}
        cases.append(("weights header dtype", zipped(
            {"captured_0.npy": npy_member(header, b"\0" * 48), "captured_1.npy": good_b})))
    header = {"descr": "<f4", "fortran_order": False, "shape": (4, 3)}
    for size in (0, 47, 49, 10_000):
        cases.append(("weights data size", zipped(
            {"captured_0.npy": npy_member(header, b"\0" * size), "captured_1.npy": good_b})))
    cases.append(("weights extra member", zipped(
        {"captured_0.npy": npy_member(header, b"\0" * 48), "captured_1.npy": good_b,
         "../evil.npy": good_b})))
    cases.append(("weights missing member", zipped({"captured_1.npy": good_b})))
    cases.append(("weights duplicate member", zipped(
        {"captured_0.npy": npy_member(header, b"\0" * 48), "captured_1.npy": good_b})
        + b""))
    cases.append(("weights compressed", zipped(
        {"captured_0.npy": npy_member(header, b"\0" * 48), "captured_1.npy": good_b},
        zipfile.ZIP_DEFLATED)))
    cases.append(("weights bad magic", zipped(
        {"captured_0.npy": b"\x93NUMPY\x09\x00" + b"\0" * 100, "captured_1.npy": good_b})))
    cases.append(("weights pickled member", zipped(
        {"captured_0.npy": pickle.dumps(np.zeros((4, 3))), "captured_1.npy": good_b})))
    return cases


# ----------------------------------------------------------------------------- running one case


CLEAR_LOAD_ERRORS = (ValueError, TypeError)
CLEAR_RUN_ERRORS = (ValueError, TypeError, RuntimeError, IndexError, MemoryBudgetError)


def try_one(json_path: Path) -> str:
    """'refused', 'loaded' (and ran) or 'stopped' (loaded, refused while running); anything
    else fails the test with the case's kind."""
    try:
        graph = dg.load_static(json_path)
    except CLEAR_LOAD_ERRORS as exc:
        message = str(exc)
        names_where = ("$" in message or json_path.stem in message  # a JSON path, or the file
                       or "not a dyngraph static graph" in message or "newer dyngraph" in message)
        assert names_where, f"the refusal does not say where: {message}"
        return "refused"
    inputs = [dg.zeros(*shape, dtype=str(dtype)) for shape, dtype in graph._inputs]
    try:
        with dg.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy's overflow in a fuzzed clamp
            graph(*inputs)
    except CLEAR_RUN_ERRORS as exc:
        assert "step" in str(exc), f"the error does not name the step: {exc}"
        return "stopped"
    return "loaded"


def test_fuzzed_static_graph_files_are_loaded_or_clearly_refused(tmp_path):
    rng = random.Random(SEED)
    folder = tmp_path / "seeds"
    folder.mkdir()
    seeds = seed_graphs(folder)
    cases: list[tuple[str, Path, str | bytes, bytes | None]] = []
    for seed in seeds:
        text = seed.read_text()
        for kind, content in json_cases(json.loads(text), text, rng):
            cases.append((kind, seed, content, None))
    mlp = seeds[0]
    for kind, weights in weights_cases(mlp.with_suffix(".npz").read_bytes(), rng):
        cases.append((kind, mlp, mlp.read_text(), weights))

    counts: Counter = Counter()
    kinds: Counter = Counter()
    started_all = time.perf_counter()
    for n, (kind, seed, content, weights) in enumerate(cases):
        path = tmp_path / f"case{n}.json"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
        path.with_suffix(".npz").write_bytes(
            weights if weights is not None else seed.with_suffix(".npz").read_bytes())
        started = time.perf_counter()
        tracemalloc.start()
        try:
            outcome = try_one(path)
            peak = tracemalloc.get_traced_memory()[1]
        except BaseException as exc:
            raise AssertionError(
                f"case {n} ({kind}) raised {type(exc).__name__}: {exc}"[:500]) from exc
        finally:
            tracemalloc.stop()
        elapsed = time.perf_counter() - started
        assert elapsed < SECONDS_PER_FILE, f"case {n} ({kind}) took {elapsed:.1f} s"
        assert peak < BYTES_PER_FILE, f"case {n} ({kind}) peaked at {peak} bytes"
        counts[outcome] += 1
        kinds[kind, outcome] += 1
        path.unlink()
        path.with_suffix(".npz").unlink()
    total = time.perf_counter() - started_all

    print(f"\nstatic-graph fuzz: {len(cases)} files tried, {counts['refused']} refused at load, "
          f"{counts['loaded']} loaded and run, {counts['stopped']} loaded and stopped while "
          f"running with a clear error ({total:.1f} s)")
    for (kind, outcome), count in sorted(kinds.items()):
        print(f"  {kind:28} {outcome:8} {count}")
    assert sum(counts.values()) == len(cases) >= 300
    assert counts["refused"] > len(cases) // 2  # most mutations must be caught at load
    assert counts["loaded"] > 0  # and harmless ones still load and run


@pytest.mark.parametrize("kind", ["newer schema", "hostile op"])
def test_a_few_fuzzed_cases_give_the_expected_message(tmp_path, kind):
    """Spot checks that the fuzz's refusals say what is wrong (not only that they are
    ValueErrors)."""
    seed = seed_graphs(tmp_path)[0]
    text = seed.read_text()
    document = json.loads(text)
    if kind == "newer schema":
        seed.write_text(json.dumps(dict(document, schema_version=2, extra=1)))
        message = r"newer dyngraph \(schema 2, this one reads up to 1\)"
    else:
        seed.write_text(json.dumps(replaced(document, ("steps", 0, "op"), "__import__")))
        message = r"\$\.steps\[0\]\.op: '__import__' is not one of dyngraph's ops"
    with pytest.raises(ValueError, match=message):
        dg.load_static(seed)
