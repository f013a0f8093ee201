"""A traced graph from someone else (issue 30, the static-graph side): sizes checked against the
declared shapes and a memory budget before anything runs, option types checked at load, weights
read with their headers checked, symmetric save/load limits, newer schemas named as such, and the
small engine errors (negative sizes, huge integers, a constant output) made clear."""

from __future__ import annotations

import json
import os
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import static_io


def randn(*shape, seed=0):
    return dg.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def rewrite(path: Path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def step_of(document: dict, op: str) -> dict:
    return next(step for step in document["steps"] if step["op"] == op)


# ----------------------------------------------------------------------------- sizes and memory


def test_repeat_sizes_that_disagree_with_the_declared_shape_are_refused_at_load(tmp_path):
    path = dg.trace(lambda x: x.repeat(2, 1).exp(), randn(2, 3)).save(tmp_path / "r.json")
    rewrite(path, lambda d: step_of(d, "Repeat")["options"].update(
        sizes={"tuple": [2**20, 2**20]}))
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"\$\.steps\[0\] \(Repeat\)\.shape: the step makes "
                                         r"shape \(2097152, 3145728\).*declares \(4, 3\)"):
        dg.load_static(path)
    assert time.perf_counter() - started < 2


def test_a_declared_shape_over_the_memory_budget_is_refused_at_load(tmp_path):
    path = dg.trace(lambda x: x.repeat(2, 1).exp(), randn(2, 3)).save(tmp_path / "r.json")

    def huge(document):
        step_of(document, "Repeat")["options"]["sizes"] = {"tuple": [2**14, 2**14]}
        for step in document["steps"]:
            step["shape"] = [2**15, 3 * 2**14]
    rewrite(path, huge)
    with pytest.raises(ValueError, match=r"\$\.steps\[0\] \(Repeat\): running the graph up to "
                                         r"this step needs \d+ bytes, over the \d+-byte memory "
                                         r"budget"):
        dg.load_static(path)


def test_expand_then_exp_is_checked_against_the_declared_shape(tmp_path):
    path = dg.trace(lambda x: x.expand(3, 4).exp(), randn(1, 4)).save(tmp_path / "e.json")
    rewrite(path, lambda d: step_of(d, "Expand")["options"].update(
        shape={"tuple": [2**30, 4]}))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\] \(Expand\)\.shape: the step makes "
                                         r"shape \(1073741824, 4\).*declares \(3, 4\)"):
        dg.load_static(path)
    rewrite(path, lambda d: step_of(d, "Expand")["options"].update(shape={"tuple": [5, 4, 2]}))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\] \(Expand\): its options do not fit "
                                         r"its inputs' declared shapes \[\(1, 4\)\]"):
        dg.load_static(path)


def test_a_broadcast_that_outgrows_the_budget_is_refused(tmp_path):
    """(n, 1) + (1, n) makes n * n elements: declared, that is over the budget at load."""
    path = dg.trace(lambda x, y: (x + y).sum(), randn(3, 1), randn(1, 3)).save(tmp_path / "b")
    n = 2**15
    rewrite(path, lambda d: d.update(inputs=[{"shape": [n, 1], "dtype": "float32"},
                                             {"shape": [1, n], "dtype": "float32"}],
                                     steps=[dict(s, shape=[n, n] if s["op"] == "Add" else [])
                                            for s in d["steps"]]))
    with pytest.raises(ValueError, match=r"\(Add\): running the graph up to this step needs"):
        dg.load_static(path)


def test_each_step_is_checked_against_the_budget_before_it_runs(tmp_path, monkeypatch):
    """Inputs bigger than the traced ones are allowed (a batch of 7 for a trace of 2), so a
    loaded graph also checks each step's sizes on the real inputs before running it."""
    path = dg.trace(lambda x, y: dg.outer(x, y).sum(), randn(3), randn(3)).save(tmp_path / "o")
    monkeypatch.setattr(static_io, "MAX_RUN_BYTES", 1_000_000)
    graph = dg.load_static(path)
    np.testing.assert_allclose(graph(randn(100), randn(100)).item(),
                               dg.outer(randn(100), randn(100)).sum().item(), rtol=1e-4)
    for grad in (False, True):  # the fast replay and the recorded one; 8 bytes a number
        x = dg.tensor(randn(1000).numpy(), requires_grad=grad)
        with pytest.raises(MemoryError, match=r"replaying step 0 \(Outer, traced with output "
                                              r"shape \(3, 3\)\) was refused: it would allocate "
                                              r"about 8000000 bytes.*1000000-byte memory budget"):
            graph(x, randn(1000))


def test_a_step_declaring_another_shape_than_its_op_states_is_refused_at_load(tmp_path):
    path = dg.trace(lambda x: x.exp().sum(axis=0), randn(3, 2)).save(tmp_path / "s")
    rewrite(path, lambda d: d["steps"][0].update(shape=[3, 5]))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\] \(Exp\)\.shape: the step makes shape "
                                         r"\(3, 2\) from inputs of shapes \[\(3, 2\)\] and its "
                                         r"options, but declares \(3, 5\)"):
        dg.load_static(path)
    rewrite(path, lambda d: d["steps"][0].update(shape=[3, 2]))
    rewrite(path, lambda d: d["steps"][1].update(shape=[3]))  # (Sum's: (2,) made of (3, 2))
    with pytest.raises(ValueError, match=r"steps\[1\] \(Sum\)\.shape: the step makes shape \(2,\)"):
        dg.load_static(path)


def test_a_step_that_makes_another_shape_than_declared_is_stopped(tmp_path):
    """The backstop, for an op that states no exact shape (Index: it only bounds what its key
    selects): on inputs of the declared shapes, the shape made is checked after the step."""
    path = dg.trace(lambda x: x.exp()[1:], randn(3, 2)).save(tmp_path / "s")
    rewrite(path, lambda d: d["steps"][1].update(shape=[3, 5]))
    graph = dg.load_static(path)
    for x in (randn(3, 2), dg.tensor(randn(3, 2).numpy(), requires_grad=True)):
        with pytest.raises(ValueError, match=r"replaying step 1 \(Index\) stopped: it made "
                                             r"shape \(2, 2\) from inputs of the declared shapes, "
                                             r"but the graph file declares \(3, 5\)"):
            graph(x)
    assert graph(randn(4, 2)).shape == (3, 2)  # other input sizes: each step's size is not known


def test_an_index_with_arrays_is_bounded_before_it_runs(tmp_path):
    path = dg.trace(lambda x: x[[0, 1, 1]], randn(3, 4)).save(tmp_path / "i")
    big = list(range(3)) * 100_000  # 300,000 indices into each of two dims: 9e10 elements
    rewrite(path, lambda d: d["steps"][0]["options"].update(
        key={"tuple": [{"array": big, "dtype": "int64"},
                       {"array": [[0]] * 300_000, "dtype": "int64"}]}))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\] \(Index\): running the graph up to "
                                         r"this step needs"):
        dg.load_static(path)


# ----------------------------------------------------------------------------- option types


@pytest.mark.parametrize("value, message", [
    (True, r"options\.axis: expected null, an integer axis or a list of them, got True"),
    (1.0, r"options\.axis: expected null, an integer axis or a list of them, got 1\.0"),
    (5, r"options\.axis: 5 is out of range for an input of shape \(2, 3\) \(expected -2 to 1\)"),
    ({"tuple": [0, "a"]}, r"options\.axis: expected null, an integer axis"),
])
def test_axis_options_are_checked_by_type_and_range(tmp_path, value, message):
    path = dg.trace(lambda x: x.sum(axis=1), randn(2, 3)).save(tmp_path / "sum.json")
    rewrite(path, lambda d: d["steps"][0]["options"].update(axis=value))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\]\." + message):
        dg.load_static(path)


@pytest.mark.parametrize("sizes, message", [
    ({"tuple": [2, True]}, "a list of non-negative integer sizes, got"),
    ({"tuple": [2, -1]}, "a list of non-negative integer sizes, got"),
    ({"tuple": [2.0, 1]}, "a list of non-negative integer sizes, got"),
    (2, "a list of non-negative integer sizes, got 2"),
])
def test_repeat_sizes_are_non_negative_integers(tmp_path, sizes, message):
    path = dg.trace(lambda x: x.repeat(2, 1), randn(2, 3)).save(tmp_path / "r.json")
    rewrite(path, lambda d: d["steps"][0]["options"].update(sizes=sizes))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\]\.options\.sizes: expected " + message):
        dg.load_static(path)


def test_other_options_are_checked_by_type(tmp_path):
    path = dg.trace(lambda x: x.sum(axis=1, keepdim=True), randn(2, 3)).save(tmp_path / "k")
    rewrite(path, lambda d: d["steps"][0]["options"].update(keepdims=1))
    with pytest.raises(ValueError, match=r"options\.keepdims: expected true or false, got 1"):
        dg.load_static(path)
    target = dg.tensor([0, 2])
    path = dg.trace(lambda x: dg.nn.functional.cross_entropy(x, target),
                    randn(2, 3)).save(tmp_path / "ce")
    rewrite(path, lambda d: step_of(d, "CrossEntropy")["options"].update(reduction="all"))
    with pytest.raises(ValueError, match=r"options\.reduction: expected \"mean\", \"sum\" or "
                                         r"\"none\", got 'all'"):
        dg.load_static(path)


def test_an_option_that_is_also_an_input_is_refused(tmp_path):
    path = dg.trace(lambda x: x.exp(), randn(2)).save(tmp_path / "e")
    rewrite(path, lambda d: d["steps"][0]["options"].update(x=1))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\]\.options\.x: Exp already gets x as one "
                                         r"of its args"):
        dg.load_static(path)


# ----------------------------------------------------------------------------- the weights file


def write_npy_member(path: Path, name: str, header: dict, data: bytes) -> None:
    """A .npz holding one member whose .npy header says whatever ``header`` says."""
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(name, buffer.getvalue() + data)


@pytest.fixture
def weighted(tmp_path):
    W = dg.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), name="W")
    return dg.trace(lambda x: x @ W, randn(4, 2)).save(tmp_path / "w.json")


def test_a_weights_header_claiming_a_huge_shape_is_refused_before_allocating(weighted):
    header = {"descr": "<f4", "fortran_order": False, "shape": (2**40,)}
    write_npy_member(weighted.with_suffix(".npz"), "captured_0.npy", header, b"\0" * 24)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"\$\.captured\[0\]: the graph declares shape "
                                             r"\(2, 3\) float32 but the weights file holds "
                                             r"\(1099511627776,\) float32"):
            dg.load_static(weighted)
        assert tracemalloc.get_traced_memory()[1] < 50 * 2**20
    finally:
        tracemalloc.stop()


def test_a_weights_member_whose_size_disagrees_with_its_header_is_refused(weighted):
    header = {"descr": "<f4", "fortran_order": False, "shape": (2, 3)}
    write_npy_member(weighted.with_suffix(".npz"), "captured_0.npy", header, b"\0" * 8)
    with pytest.raises(ValueError, match=r"\$\.captured\[0\]: the weights member captured_0\.npy "
                                         r"stores \d+ bytes, but a \(2, 3\) float32 array takes "
                                         r"24 after its header"):
        dg.load_static(weighted)


def test_a_weights_member_of_another_dtype_or_objects_is_refused(weighted):
    header = {"descr": "<f8", "fortran_order": False, "shape": (2, 3)}
    write_npy_member(weighted.with_suffix(".npz"), "captured_0.npy", header, b"\0" * 48)
    with pytest.raises(ValueError, match=r"declares shape \(2, 3\) float32 but the weights file "
                                         r"holds \(2, 3\) float64"):
        dg.load_static(weighted)
    header = {"descr": "|O", "fortran_order": False, "shape": (2, 3)}
    write_npy_member(weighted.with_suffix(".npz"), "captured_0.npy", header, b"\0" * 48)
    with pytest.raises(ValueError, match="holds Python objects.*allow_pickle"):
        dg.load_static(weighted)


def test_weights_read_back_exactly_in_either_order(weighted):
    graph = dg.load_static(weighted)
    np.testing.assert_array_equal(graph.captured[0].numpy(), np.arange(6).reshape(2, 3))
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3) * 2)
    np.savez(weighted.with_suffix(".npz"), captured_0=fortran)
    np.testing.assert_array_equal(dg.load_static(weighted).captured[0].numpy(), fortran)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_a_fifo_or_a_directory_as_the_weights_is_refused_without_blocking(weighted):
    npz = weighted.with_suffix(".npz")
    npz.unlink()
    os.mkfifo(npz)
    with pytest.raises(ValueError, match="not a regular file"):
        dg.load_static(weighted)
    npz.unlink()
    npz.mkdir()
    with pytest.raises(ValueError, match="not a regular file"):
        dg.load_static(weighted)


# ----------------------------------------------------------------------------- symmetric limits


def test_a_100000_step_trace_saves_and_loads_back(tmp_path):
    def count_up(x):
        for _ in range(static_io.MAX_STEPS):
            x = x + 1.0
        return x

    x = dg.tensor([0.0, 1.0])
    path = dg.trace(count_up, x).save(tmp_path / "long")
    size = path.stat().st_size
    assert size <= static_io.MAX_JSON_BYTES
    assert size < static_io.MAX_STEPS * static_io.MAX_STEP_BYTES
    graph = dg.load_static(path)
    assert len(graph) == static_io.MAX_STEPS
    np.testing.assert_allclose(graph(x).numpy(), [100_000.0, 100_001.0])


def test_the_byte_limit_follows_from_the_step_limit():
    assert static_io.MAX_JSON_BYTES >= static_io.MAX_STEPS * static_io.MAX_STEP_BYTES


def test_save_refuses_what_load_would_refuse(tmp_path):
    W = dg.randn(3, name="w" * 100)  # a name over the loader's 64-character limit
    with pytest.raises(ValueError, match=r"this graph cannot be saved, as load_static could not "
                                         r"read it back: \$\.captured\[0\]\.name"):
        dg.trace(lambda x: x * W, randn(3)).save(tmp_path / "long_name")
    assert not (tmp_path / "long_name.json").exists()


@pytest.mark.parametrize("version, message", [
    (True, r"\$\.schema_version: expected a positive integer, got True"),
    ("1", r"\$\.schema_version: expected a positive integer, got '1'"),
    (0, r"\$\.schema_version: expected a positive integer, got 0"),
    (2, r"this graph was written by a newer dyngraph \(schema 2, this one reads up to 1\): "
        r"upgrade dyngraph"),
])
def test_the_schema_version_is_an_integer_and_a_newer_one_is_named(tmp_path, version, message):
    path = dg.trace(lambda x: x * 2, randn(3)).save(tmp_path / "v")
    rewrite(path, lambda d: d.update(schema_version=version))
    with pytest.raises(ValueError, match=message):
        dg.load_static(path)


def test_a_newer_file_with_an_added_field_is_reported_as_newer(tmp_path):
    path = dg.trace(lambda x: x * 2, randn(3)).save(tmp_path / "v")
    rewrite(path, lambda d: d.update(schema_version=3, signature="sha256:..."))
    with pytest.raises(ValueError, match=r"newer dyngraph \(schema 3"):
        dg.load_static(path)
    rewrite(path, lambda d: d.update(schema_version=1))  # the same field in this version
    with pytest.raises(ValueError, match=r"\$\.signature: unknown field"):
        dg.load_static(path)


def test_loading_uses_memory_in_proportion_to_the_file(tmp_path):
    path = dg.trace(lambda x: (x * 2).exp().sum(), randn(3)).save(tmp_path / "small")
    assert path.stat().st_size < 4000
    tracemalloc.start()
    try:
        dg.load_static(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20, f"loading a {path.stat().st_size}-byte graph peaked at {peak} bytes"


def test_a_loaded_graph_carries_no_file_name_to_open(tmp_path):
    """A graph file has no source paths: a field naming one is refused as unknown, and a loaded
    graph has no source lines of its own (the trace's data reads stay in the tracing process)."""
    with pytest.warns(dg.TracerWarning):
        traced = dg.trace(lambda x: x.exp() * float(x.sum()), randn(3))
    assert traced.data_reads  # the tracing process knows the line...
    path = traced.save(tmp_path / "s")
    assert "test_static_safety" not in path.read_text()  # ...the file does not
    assert dg.load_static(path).data_reads == []
    rewrite(path, lambda d: d["steps"][0].update(file="/etc/passwd", line=1))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\]\.(file|line): unknown field"):
        dg.load_static(path)


# ----------------------------------------------------------------------------- constant outputs


def test_an_output_that_is_a_constant_runs(tmp_path):
    path = dg.trace(lambda x: x * 2, randn(3)).save(tmp_path / "c")
    rewrite(path, lambda d: d.update(outputs=[{"constant": 1.5}, {"step": 0}],
                                     single_output=False))
    graph = dg.load_static(path)
    assert repr(graph) == ("StaticGraph(1 ops, inputs=[(3,) float32], outputs=[() float32, "
                           "(3,) float32])")
    for x in (randn(3), dg.tensor(randn(3).numpy(), requires_grad=True)):
        constant, doubled = graph(x)
        assert constant.item() == 1.5 and constant.dtype == np.float32
        np.testing.assert_allclose(doubled.detach().numpy(), x.detach().numpy() * 2)
    rewrite(path, lambda d: d.update(outputs=[{"constant": {"slice": [0, 1, None]}}],
                                     single_output=True))
    with pytest.raises(ValueError, match=r"\$\.outputs\[0\]\.constant: an output constant must "
                                         r"be a number"):
        dg.load_static(path)


def test_a_traced_function_whose_output_does_not_depend_on_the_input(tmp_path):
    W = dg.randn(3, name="W")
    with pytest.warns(dg.TracerWarning):
        graph = dg.trace(lambda x: dg.tensor(1.0), randn(3))
    assert graph(randn(3)).item() == 1.0
    for fn in (lambda x: W * 2, lambda x: W):
        graph = dg.load_static(dg.trace(fn, randn(3)).save(tmp_path / "w"))
        np.testing.assert_allclose(graph(randn(3)).numpy(), fn(None).numpy())


# ----------------------------------------------------------------------------- engine errors


def test_a_negative_size_names_the_argument():
    for make in (dg.randn, dg.zeros, dg.ones, dg.rand):
        with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative "
                                               r"dimension -1: \[-1\]"):
            make(-1)


def test_huge_integers_raise_overflow_errors_as_torch_does():
    torch = pytest.importorskip("torch", reason="compared with PyTorch's error classes")
    small = dg.tensor(np.array([1], dtype=np.int8))
    cases = [
        (lambda: small + 10**30, lambda: torch.tensor([1], dtype=torch.int8) + 10**30),
        (lambda: small * 10**30, lambda: torch.tensor([1], dtype=torch.int8) * 10**30),
        (lambda: small.fill_(10**30), lambda: torch.tensor([1], dtype=torch.int8).fill_(10**30)),
        (lambda: dg.full((2,), 10**30), lambda: torch.full((2,), 10**30)),
    ]
    for ours, theirs in cases:
        with pytest.raises(Exception) as torch_error:
            theirs()
        with pytest.raises(type(torch_error.value)) as our_error:
            ours()
        assert "Python int" in str(our_error.value) or "too big" in str(our_error.value) or (
            "does not fit" in str(our_error.value))
    with pytest.raises(OverflowError, match="the integer 1000000000000000000000000000000 is too "
                                            "big to convert"):
        dg.tensor(10**30)
    with pytest.raises(RuntimeError, match="value 1099511627776 cannot be converted to type "
                                           "int32 without overflow"):
        dg.full((2,), 2**40, dtype="int32")


# ----------------------------------------------------------------------------- work, dtypes, zip


def test_an_einsum_asking_for_hours_of_work_is_refused_at_load_naming_the_step(tmp_path):
    """issue 39: 359 bytes of JSON, "ab,cd->" over two 3000 x 3000 inputs, looped 3000**4 times
    in numpy (hours, deaf to Ctrl-C): refused at load, in a moment."""
    path = dg.trace(lambda a, b: dg.einsum("ab,cd->", a, b), randn(2, 2), randn(2, 2)).save(
        tmp_path / "e")

    def huge(document):
        for entry in document["inputs"]:
            entry["shape"] = [3000, 3000]
    rewrite(path, huge)
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"\$\.steps\[0\] \(Einsum\): it would do about 8.1e\+13 "
                                         r"multiply-adds, over the 6.87e\+10 a step"):
        dg.load_static(path)
    assert time.perf_counter() - started < 2
    graph = dg.load_static(dg.trace(lambda a, b: dg.einsum("ab,cd->", a, b), randn(2, 2),
                                    randn(2, 2)).save(tmp_path / "small"))
    with pytest.raises(MemoryError, match=r"replaying step 0 \(Einsum.*multiply-adds"):
        graph(dg.zeros(3000, 3000), dg.zeros(3000, 3000))  # and at run time, before it runs


def test_a_step_declaring_another_dtype_than_its_op_makes_is_refused_at_load(tmp_path):
    """issue 39: a file declaring bool for a float64 step passed an 8 times smaller budget
    (12.3 GB under 4 GiB). The op states the dtype it makes from its inputs' (Mul.meta), so the
    file is refused at load, naming the step."""
    x = dg.tensor(np.ones(3), dtype=dg.float64)
    path = dg.trace(lambda v: (v * 2).exp(), x).save(tmp_path / "d")
    rewrite(path, lambda d: d["steps"][0].update(dtype="bool"))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\] \(Mul\)\.dtype: the step makes float64 "
                                         r"from inputs of dtypes float64 and 2, but declares "
                                         r"bool: the file is inconsistent"):
        dg.load_static(path)
    rewrite(path, lambda d: d["steps"][1].update(dtype="float32"))  # (Exp's, made of float64)
    rewrite(path, lambda d: d["steps"][0].update(dtype="float64"))
    with pytest.raises(ValueError, match=r"steps\[1\] \(Exp\)\.dtype: the step makes float64"):
        dg.load_static(path)


def test_a_step_whose_op_states_no_dtype_is_checked_after_it_runs(tmp_path, monkeypatch):
    """The backstop, for an op that does not state its dtype (Meta.dtype None): numbers count 8
    bytes at least, and on the traced inputs the dtype made is checked."""
    x = dg.tensor(np.ones(3), dtype=dg.float64)
    path = dg.trace(lambda v: v * 2, x).save(tmp_path / "d")
    rewrite(path, lambda d: d["steps"][0].update(dtype="bool"))
    states_nothing = dg.ops.Mul.meta.__func__
    monkeypatch.setattr(dg.ops.Mul, "meta", classmethod(
        lambda cls, shapes, dtypes, **options: states_nothing(cls, shapes, dtypes)._replace(
            dtype=None)))
    graph = dg.load_static(path)
    with pytest.raises(dg.InconsistentGraphError if hasattr(dg, "InconsistentGraphError")
                       else Exception, match=r"step 0 \(Mul\) stopped: it made float64 .* "
                                             r"declares bool: the file is inconsistent"):
        graph(x)
    as_float32 = graph(dg.ones(3))  # other dtypes than traced: run, not judged by the file
    assert as_float32.shape == (3,)


def test_a_compressed_weights_file_is_refused_with_the_fix(weighted):
    npz = weighted.with_suffix(".npz")
    with np.load(npz) as stored:
        arrays = dict(stored)
    np.savez_compressed(npz, **{name.removesuffix(".npy"): a for name, a in arrays.items()})
    with pytest.raises(ValueError, match=r"captured_0.npy is compressed.*np.savez, not "
                                         r"np.savez_compressed"):
        dg.load_static(weighted)


def test_a_string_as_an_op_argument_is_refused_at_load_naming_the_argument(tmp_path):
    path = dg.trace(lambda x: x * 2.0, randn(3)).save(tmp_path / "s")
    rewrite(path, lambda d: d["steps"][0]["args"][1].update(constant="abc"))
    with pytest.raises(ValueError, match=r"\$\.steps\[0\]\.args\[1\]\.constant: an op's constant "
                                         r"argument is a number or an array of numbers, got 'abc'"):
        dg.load_static(path)
