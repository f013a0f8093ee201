"""Errors found before computing: clear messages naming shapes and devices, dtype promotion as
in numpy, and a failed op leaves no trace (no node, no event)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import backend
from dyngraph.extras import install_command
from dyngraph.ops import Add, MatMul, Mul

# ----------------------------------------------------------------------------- shapes


def test_broadcast_mismatch_names_both_shapes():
    a = dg.ones(2, 3)
    b = dg.ones(4)
    with pytest.raises(RuntimeError) as info:
        a + b
    message = str(info.value)
    assert "(2, 3)" in message
    assert "(4,)" in message
    assert "broadcast" in message


def test_an_explained_forward_error_hides_numpy_s_own_but_keeps_it_as_context():
    """``raise ... from None``: the learner reads dyngraph's explanation, not numpy's traceback
    first; numpy's error is still there (``__context__``) for whoever looks."""
    with pytest.raises(RuntimeError, match="cannot be broadcast together") as info:
        dg.ones(2, 3, requires_grad=True) + dg.ones(4, 5)
    error = info.value
    assert error.__cause__ is None and error.__suppress_context__
    assert type(error.__context__) is ValueError


def test_broadcast_mismatch_of_tensors_requiring_grad_names_both_shapes():
    a = dg.ones(2, 3, requires_grad=True)
    b = dg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        a * b
    assert "(2, 3)" in str(info.value)
    assert "(2,)" in str(info.value)


def test_matmul_mismatch_names_both_shapes():
    a = dg.ones(2, 3, requires_grad=True)
    b = dg.ones(4, 5)
    with pytest.raises(RuntimeError) as info:
        a @ b
    message = str(info.value)
    assert "(2, 3)" in message
    assert "(4, 5)" in message


def test_ragged_data_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="could not make a tensor"):
        dg.tensor([[1.0, 2.0], [3.0]])


# ----------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (np.int32, np.float64),
        (np.float32, np.float64),
        (np.int32, np.int64),
        (np.int64, np.float32),
        (np.float32, np.float32),
        (np.bool_, np.float32),
    ],
)
def test_dtypes_follow_pytorch_promotion(left, right):
    a = dg.ones(2, dtype=left)
    b = dg.ones(2, dtype=right)
    expected = (np.ones(2, dtype=left) + np.ones(2, dtype=right)).dtype
    floats = [np.dtype(d) for d in (left, right) if np.dtype(d).kind == "f"]
    if len(floats) == 1:  # an integer meets a float: PyTorch keeps the float's dtype
        expected = floats[0]
    assert (a + b).dtype == expected
    assert (a * b).dtype == expected


def test_python_scalars_do_not_upcast_float32():
    x = dg.tensor([1.0, 2.0])
    assert (x + 1.5).dtype == np.float32
    assert (2 * x).dtype == np.float32
    assert (dg.tensor([1, 2]) + 1.5).dtype == np.float32  # PyTorch's default float, not float64


# ----------------------------------------------------------------------------- no trace


def _live(op_class):
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is op_class)


@pytest.mark.parametrize(
    ("op_class", "compute"),
    [
        (Add, lambda a, b, c: a + b),
        (MatMul, lambda a, b, c: a @ c),
    ],
    ids=["broadcast", "matmul"],
)
def test_a_failed_op_creates_no_node_and_emits_no_event(op_class, compute):
    a = dg.ones(2, 3, requires_grad=True)  # made before subscribing: the first use announces it
    b = dg.ones(4, requires_grad=True)
    c = dg.ones(4, 5, requires_grad=True)
    before = _live(op_class)
    log = []
    with dg.events.subscribe(log.append):
        try:
            compute(a, b, c)
        except RuntimeError:
            pass
        else:
            pytest.fail("the op should have raised")
        assert log == []  # no node_created, not even for the inputs or a constant
        ok = a + 1.0  # the engine carries on; ids keep counting from where they were
    assert [e.kind for e in log] == ["node_created"] * 3
    assert _live(op_class) == before + (1 if op_class is Add else 0)  # only `ok`'s node
    assert a.grad_fn is None and a.version == 0
    assert ok.grad_fn is not None


def test_a_failed_op_with_no_subscriber_leaves_inputs_untouched():
    a = dg.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError):
        a * dg.ones(5)
    assert a.is_leaf and a.grad is None and a.version == 0


# ----------------------------------------------------------------------------- devices


@pytest.mark.skipif(dg.cuda.is_available(), reason="a CUDA GPU with CuPy is present here")
@pytest.mark.parametrize(
    "make",
    [
        lambda: dg.tensor([1.0], device="cuda"),
        lambda: dg.zeros(2, device="cuda"),
        lambda: dg.tensor([1.0]).to("cuda"),
        lambda: dg.tensor([1.0]).cuda(),
    ],
    ids=["tensor", "zeros", "to", "cuda"],
)
def test_cuda_without_cupy_raises_with_the_install_hint(make):
    with pytest.raises(RuntimeError) as info:
        make()
    assert install_command("gpu") in str(info.value)


def test_unknown_device_is_refused():
    with pytest.raises(ValueError, match="unknown device"):
        dg.tensor([1.0], device="tpu")


class FakeCudaArray(np.ndarray):
    """A numpy array that backend.device_of (monkeypatched) reports as living on 'cuda'. (No test
    checks the fake itself: the tests below fail unless the engine sees it as cuda.)"""


@pytest.fixture
def fake_cuda(monkeypatch):
    real_device_of = backend.device_of

    def device_of(array):
        return "cuda" if isinstance(array, FakeCudaArray) else real_device_of(array)

    monkeypatch.setattr(backend, "device_of", device_of)
    return lambda values: dg.Tensor(
        np.asarray(values, dtype=np.float32).view(FakeCudaArray), requires_grad=True
    )


@pytest.mark.parametrize("cpu_first", [True, False], ids=["cpu_first", "cuda_first"])
def test_device_mismatch_names_both_devices_and_emits_nothing(fake_cuda, cpu_first):
    on_gpu = fake_cuda([1.0, 2.0])
    on_cpu = dg.tensor([3.0, 4.0], requires_grad=True)
    before = _live(Mul)
    log = []
    with dg.events.subscribe(log.append), pytest.raises(RuntimeError) as info:
        if cpu_first:
            on_cpu * on_gpu
        else:
            on_gpu * on_cpu
    message = str(info.value)
    assert "cpu" in message
    assert "cuda" in message
    assert ".to(" in message
    assert "Mul" in message
    assert log == []
    del info
    assert _live(Mul) == before


def test_device_mismatch_with_a_raw_array_constant(fake_cuda):
    on_gpu = fake_cuda([1.0, 2.0])
    with pytest.raises(RuntimeError) as info:
        on_gpu + np.ones(2, dtype=np.float32)
    assert "cpu" in str(info.value) and "cuda" in str(info.value)
    assert ".to(" in str(info.value)
