"""PyTorch's spellings and small semantics (issue 13): dim= / keepdim= / unbiased= next to
axis= / keepdims= / correction=, dtype names and conversions, max/min with a dim, argmax,
type promotion, and the small traps (x ** 0 at 0, out-of-range dims, float dims). Each is
checked against PyTorch when it is importable."""

import numpy as np
import pytest

import dyngraph as dg


def _torch():
    return pytest.importorskip("torch", reason="compares with PyTorch")


X = np.array([[1.0, 5.0, 2.0], [4.0, 0.5, 4.0]], dtype=np.float32)


# ---------------------------------------------------------------------------- two spellings

SPELLINGS = [
    ("sum", {"dim": 1}, {"axis": 1}),
    ("sum", {"dim": (0, 1), "keepdim": True}, {"axis": (0, 1), "keepdims": True}),
    ("mean", {"dim": -1, "keepdim": True}, {"axis": -1, "keepdims": True}),
    ("logsumexp", {"dim": 0}, {"axis": 0}),
    ("var", {"dim": 1, "unbiased": False}, {"axis": 1, "correction": 0}),
    ("var", {"dim": 0, "keepdim": True}, {"axis": 0, "keepdims": True}),
    ("softmax", {"dim": 0}, {"axis": 0}),
    ("log_softmax", {"dim": 1}, {"axis": 1}),
    ("squeeze", {"dim": 0}, {"axis": 0}),
    ("unsqueeze", {"dim": -1}, {"axis": -1}),
]


@pytest.mark.parametrize("name, torch_kw, numpy_kw", SPELLINGS,
                         ids=[f"{n}-{sorted(k)}" for n, k, _ in SPELLINGS])
def test_both_spellings_agree_with_each_other_and_with_torch(name, torch_kw, numpy_kw):
    x = dg.tensor(X)
    mine = getattr(x, name)(**torch_kw)
    np.testing.assert_allclose(mine.numpy(), getattr(x, name)(**numpy_kw).numpy(), rtol=1e-6)
    torch = _torch()
    theirs = getattr(torch.tensor(X), name)(**torch_kw)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5)


@pytest.mark.parametrize("call", [
    lambda x: x.sum(dim=1, axis=1),
    lambda x: x.mean(0, keepdim=True, keepdims=True),
    lambda x: x.softmax(dim=0, axis=0),
    lambda x: x.var(0, unbiased=True, correction=1),
    lambda x: dg.cat([x, x], dim=0, axis=0),
])
def test_both_spellings_at_once_is_a_type_error(call):
    with pytest.raises(TypeError, match="both"):
        call(dg.tensor(X))


def test_cat_stack_and_functions_take_dim():
    a, b = dg.tensor(X), dg.tensor(X)
    assert dg.cat([a, b], dim=1).shape == (2, 6) == dg.cat([a, b], axis=1).shape
    assert dg.stack([a, b], dim=-1).shape == (2, 3, 2)
    assert dg.sum(a, dim=0).shape == (3,) and dg.mean(a, 1, True).shape == (2, 1)
    assert dg.softmax(a, dim=0).shape == (2, 3)
    with pytest.raises(IndexError, match=r"\[-3, 2\], but got 3"):
        dg.stack([a, b], dim=3)


def test_flatten_squeeze_unsqueeze_transpose_follow_torch():
    torch = _torch()
    x, t = dg.tensor(np.zeros((2, 1, 3))), torch.zeros(2, 1, 3)
    for name, args in [("flatten", (0, 1)), ("flatten", (1,)), ("squeeze", ()), ("squeeze", (1,)),
                       ("squeeze", (0,)), ("unsqueeze", (3,)), ("unsqueeze", (-4,)),
                       ("transpose", (0, 2))]:
        assert getattr(x, name)(*args).shape == tuple(getattr(t, name)(*args).shape), name


# ---------------------------------------------------------------------------- max, min, argmax


def test_max_with_a_dim_returns_values_and_indices():
    x = dg.tensor(X, requires_grad=True)
    _, idx = x.max(1)
    assert idx.tolist() == [1, 0] and idx.dtype == np.int64
    values, indices = x.min(dim=0, keepdim=True)
    assert values.tolist() == [[1.0, 0.5, 2.0]] and indices.tolist() == [[0, 1, 0]]
    assert x.max(1).values.requires_grad and not x.max(1).indices.requires_grad
    assert x.max().item() == 5.0  # no dim: one Tensor
    assert x.max(dg.tensor(3.0)).tolist() == [[3.0, 5.0, 3.0], [4.0, 3.0, 4.0]]
    torch = _torch()
    theirs = torch.tensor(X).max(1)
    assert idx.tolist() == theirs.indices.tolist()
    assert x.max(dim=1).values.tolist() == theirs.values.tolist()


def test_argmax_and_argmin_match_torch():
    x = dg.tensor(X)
    torch = _torch()
    t = torch.tensor(X)
    for name in ("argmax", "argmin"):
        for kwargs in ({}, {"dim": 0}, {"dim": 1, "keepdim": True}, {"dim": -1}):
            mine, theirs = getattr(x, name)(**kwargs), getattr(t, name)(**kwargs)
            assert mine.tolist() == theirs.tolist() and mine.dtype == np.int64, (name, kwargs)
    assert dg.argmax(x, 1).tolist() == [1, 0]


# ---------------------------------------------------------------------------- dtypes


def test_dtype_names_are_pytorchs():
    assert dg.float == dg.float32 == np.float32 and dg.double == dg.float64 == np.float64
    assert dg.long == dg.int64 == np.int64 and dg.int == dg.int32 == np.int32
    assert dg.bool == np.bool_
    assert dg.zeros(2, dtype=dg.int).dtype == np.int32  # torch.int is int32


def test_dtype_methods_and_to():
    x = dg.tensor([1.5, -2.0, 0.0])
    assert x.long().tolist() == [1, -2, 0] and x.long().dtype == np.int64
    assert x.int().dtype == np.int32 and x.bool().tolist() == [True, True, False]
    assert x.double().dtype == np.float64 and x.double().float().dtype == np.float32
    assert x.to(dg.float64).dtype == np.float64 and x.to("cpu", dg.long).dtype == np.int64
    assert x.to(dtype=dg.double).dtype == np.float64 and x.to(dg.tensor([1])).dtype == np.int64
    assert x.to(dg.float32) is x
    w = dg.tensor([1.0, 2.0], requires_grad=True)
    w.double().sum().backward()
    assert w.grad.dtype == np.float32 and w.grad.tolist() == [1.0, 1.0]


def test_numel_nelement_clone_log10_log2():
    x = dg.tensor([[1.0, 10.0, 100.0]], requires_grad=True)
    assert x.numel() == x.nelement() == 3
    c = x.clone()
    assert c.array is not x.array and c.requires_grad and c.grad_fn is not None
    (c.log10() + c.log2()).sum().backward()
    expected = 1 / (x.detach().numpy() * np.log(10)) + 1 / (x.detach().numpy() * np.log(2))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(dg.log10(x).detach().numpy(), [[0.0, 1.0, 2.0]], atol=1e-6)
    x64 = (dg.rand(3, dtype=dg.float64) + 0.5).requires_grad_()
    assert dg.gradcheck(lambda t: t.log2().sum(), (x64,))


def test_log10_log2_clone_match_torch():
    torch = _torch()
    values = np.array([0.5, 2.0, 7.0])
    for name in ("log10", "log2", "clone"):
        x = dg.tensor(values, requires_grad=True)
        t = torch.tensor(values, requires_grad=True)
        (getattr(x, name)() * 3).sum().backward()
        (getattr(t, name)() * 3).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


PROMOTIONS = [
    (lambda: dg.tensor([1, 2]) * dg.tensor([1.0, 2.0]), "int tensor * float32 tensor"),
    (lambda: dg.tensor([1, 2]) * 2.5, "int tensor * python float"),
    (lambda: dg.tensor([1.0, 2.0]) * 2.5, "float32 tensor * python float"),
    (lambda: dg.tensor([1.0, 2.0]) * np.float64(2.5), "float32 tensor * numpy float64 scalar"),
    (lambda: dg.tensor([1, 2]) / dg.tensor([2, 2]), "int / int"),
    (lambda: dg.tensor([1, 2]).exp(), "exp of an int tensor"),
]


@pytest.mark.parametrize("make, what", PROMOTIONS, ids=[w for _, w in PROMOTIONS])
def test_type_promotion_follows_pytorch(make, what):
    assert make().dtype == np.float32, what


def test_type_promotion_keeps_float64_and_ints():
    assert (dg.tensor([1, 2]) * dg.tensor([1.0], dtype=dg.float64)).dtype == np.float64
    assert (dg.tensor([1, 2]) * 2).dtype == np.int64
    assert dg.tensor([1.0]).double().dtype == np.float64


def test_type_promotion_agrees_with_torch():
    torch = _torch()
    pairs = [(np.array([1, 2]), np.array([1.0, 2.0], dtype=np.float32)),
             (np.array([1, 2], dtype=np.int32), 2.5), (np.array([1.0], dtype=np.float32), 2.5)]
    for a, b in pairs:
        tb = torch.tensor(b) if isinstance(b, np.ndarray) else b
        theirs = (torch.tensor(a) * tb).dtype
        mine = (dg.tensor(a) * (dg.tensor(b) if isinstance(b, np.ndarray) else b)).dtype
        assert str(theirs) == f"torch.{mine}"


def test_requires_grad_must_be_a_bool():
    for make in (lambda: dg.ones(2, requires_grad=1), lambda: dg.tensor([1.0], requires_grad="y"),
                 lambda: dg.zeros(2).requires_grad_(1)):
        with pytest.raises(TypeError, match="requires_grad must be a bool"):
            make()
    x = dg.zeros(2)
    with pytest.raises(TypeError, match="requires_grad must be a bool"):
        x.requires_grad = 1
    x.requires_grad = np.bool_(True)
    assert x.requires_grad is True


# ---------------------------------------------------------------------------- small traps


@pytest.mark.parametrize("exponent", [0, 0.0, "tensor"])
def test_power_zero_has_gradient_zero_at_zero(exponent):
    x = dg.tensor([0.0, 1.0, -2.0], requires_grad=True)
    y = dg.tensor(0.0) if exponent == "tensor" else exponent
    (x**y).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]  # not NaN at 0 (0 * 0 ** -1)
    torch = _torch()
    t = torch.tensor([0.0, 1.0, -2.0], requires_grad=True)
    (t ** (torch.tensor(0.0) if exponent == "tensor" else exponent)).sum().backward()
    assert t.grad.tolist() == x.grad.tolist()


def test_power_gradient_elsewhere_is_unchanged():
    x = dg.tensor([0.0, 2.0], requires_grad=True)
    (x ** dg.tensor([0.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 12.0]
    x64 = (dg.rand(3, dtype=dg.float64) + 0.5).requires_grad_()
    assert dg.gradcheck(lambda t: (t**3.0).sum(), (x64,))


@pytest.mark.parametrize("call, message", [
    (lambda x: x.squeeze(3), r"\[-2, 1\], but got 3"),
    (lambda x: x.flatten(0, 5), r"\[-2, 1\], but got 5"),
    (lambda x: x.sum(dim=2), r"\[-2, 1\], but got 2"),
    (lambda x: x.softmax(-3), r"\[-2, 1\], but got -3"),
    (lambda x: x.unsqueeze(3), r"\[-3, 2\], but got 3"),
    (lambda x: x.transpose(0, 2), r"\[-2, 1\], but got 2"),
    (lambda x: x.max(2), r"\[-2, 1\], but got 2"),
    (lambda x: x.argmax(5), r"\[-2, 1\], but got 5"),
    (lambda x: dg.cat([x, x], dim=2), r"\[-2, 1\], but got 2"),
])
def test_out_of_range_dims_raise_pytorchs_index_error(call, message):
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                       + message):
        call(dg.zeros(2, 3))


def test_pytorch_says_the_same():
    torch = _torch()
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                       r"of \[-2, 1\], but got 3\)"):
        torch.zeros(2, 3).squeeze(3)
    with pytest.raises(IndexError, match=r"\[-2, 1\], but got 5"):
        torch.zeros(2, 3).flatten(0, 5)


def test_a_float_dim_is_a_clear_type_error():
    with pytest.raises(TypeError, match=r"sum\(\): argument 'dim' must be an int.*float 1\.5"):
        dg.zeros(2, 3).sum(axis=1.5)
    with pytest.raises(TypeError, match="argument 'dim'"):
        dg.zeros(2, 3).softmax(0.0)


def test_repeated_dims_are_refused():
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times"):
        dg.zeros(2, 3).sum(dim=(1, -1))
