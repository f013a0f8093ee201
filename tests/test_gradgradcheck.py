"""Every op differentiable twice (issue 37, item 2): second derivatives over the whole op table.

With ``create_graph=True`` each backward is built from recorded ops, so the first gradient is
itself a graph: Hessian-vector products, gradient penalties, MAML and PINNs need it. For every
case of the op table (tests/op_table.py: the ops, the losses and the functional layers):

- ``dg.autograd.gradgradcheck`` in float64: the gradients of the first gradient (with respect to
  the inputs and to the output's gradient) agree with finite differences of it;
- against PyTorch: the same second-order product, ``d/dx (g(x, v) . u)`` with
  ``g = d(out . v)/dx``, from both libraries. Where PyTorch refuses to differentiate an op twice,
  dyngraph must refuse too, with an error that names the op and says so.

The quick part (``make quick``) runs one case per op (the first case of the table that calls
it); every other case is marked slow.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_table import ALL_CASES, dg_inputs

import dyngraph as dg

GRADGRADCHECK = {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3}
FLOAT64 = {"rtol": 1e-7, "atol": 1e-9}


def _ops_of(case) -> tuple[str, ...]:
    """The names of the ops a case records (its nodes' classes), in order of first use."""
    inputs = dg_inputs(case, case.arrays(), "cpu", np.float64)
    seen: dict[str, None] = {}
    stack = [case.dg(*inputs).grad_fn]
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, dg.Tensor):
            continue
        seen.setdefault(node.name)
        stack.extend(node.parents)
    return tuple(seen)


def _quick_and_slow(cases):
    """One case per op quick (the first that records an op no earlier case recorded), the rest
    marked slow."""
    covered: set[str] = set()
    params = []
    for case in cases:
        ops = set(_ops_of(case))
        marks = () if not ops <= covered else (pytest.mark.slow,)
        covered |= ops
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


CASES = _quick_and_slow(ALL_CASES)


def _differentiable(case, inputs):
    return [t for spec, t in zip(case.inputs, inputs) if spec.differentiable]


@pytest.mark.parametrize("case", CASES)
def test_second_derivatives_match_finite_differences(case):
    inputs = dg_inputs(case, case.arrays(), "cpu", np.float64)
    assert dg.autograd.gradgradcheck(case.dg, inputs, **GRADGRADCHECK)


def _second_order_product(lib, out, inputs, v, u):
    """d/dx (g . u) for g = d(out . v)/dx: a Hessian-vector product (for a scalar out)."""
    grads = lib.autograd.grad(out, inputs, v, create_graph=True, allow_unused=True)
    total = None
    for g, w in zip(grads, u):
        if g is None or not g.requires_grad:
            continue  # a first gradient that does not depend on x: its derivative is 0
        term = (g * w).sum()
        total = term if total is None else total + term
    if total is None:
        return [None] * len(inputs)
    return lib.autograd.grad(total, inputs, allow_unused=True)


@pytest.mark.torch
@pytest.mark.parametrize("case", [c for c in CASES if c.values[0].torch is not None])
def test_second_derivatives_match_torch(case):
    torch = pytest.importorskip("torch", reason="PyTorch is the reference for this comparison")
    arrays = case.arrays()
    dg_in = dg_inputs(case, arrays, "cpu", np.float64)
    torch_in = [
        torch.from_numpy(np.array(a, dtype=np.float64)).requires_grad_(True)
        if spec.differentiable else torch.from_numpy(np.array(a))
        for spec, a in zip(case.inputs, arrays)
    ]
    dg_diff, torch_diff = _differentiable(case, dg_in), _differentiable(case, torch_in)
    rng = np.random.default_rng(11)
    out = case.dg(*dg_in)
    v = rng.standard_normal(out.shape)
    u = [rng.standard_normal(x.shape) for x in dg_diff]

    try:
        expected = _second_order_product(
            torch, case.torch(*torch_in), torch_diff, torch.from_numpy(v),
            [torch.from_numpy(w) for w in u])
    except RuntimeError as refusal:  # PyTorch does not differentiate this op twice
        with pytest.raises(RuntimeError, match="twice") as raised:
            _second_order_product(dg, out, dg_diff, dg.tensor(v), [dg.tensor(w) for w in u])
        assert str(refusal) and any(op in str(raised.value) for op in _ops_of(case))
        return
    found = _second_order_product(dg, out, dg_diff, dg.tensor(v), [dg.tensor(w) for w in u])
    for position, (x, mine, theirs) in enumerate(zip(dg_diff, found, expected)):
        # None: no path from x to the first gradient (a piecewise-linear op): the derivative
        # is zero, which PyTorch may give as a tensor of zeros (a ZeroTensor: force=True)
        mine = np.zeros(x.shape) if mine is None else mine.detach().numpy()
        theirs = np.zeros(x.shape) if theirs is None else theirs.detach().numpy(force=True)
        np.testing.assert_allclose(mine, theirs, **FLOAT64,
                                   err_msg=f"second derivative for input {position}")


# ---------------------------------------------------------------------------- the checker itself


class _CubeSavingItsSquare(dg.Function):
    """z = x^3 with dz/dx = 3 x^2 from an array forward made: with create_graph that array is a
    constant of the graph, so the second derivative comes out 0 instead of 6x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x * x)
        return x * x * x

    @staticmethod
    def backward(ctx, gz):
        (square,) = ctx.saved_tensors
        return 3 * gz * square


def test_gradgradcheck_finds_a_wrong_second_derivative():
    x = dg.tensor([0.5, -1.5, 2.0], dtype=dg.float64, requires_grad=True)
    assert dg.gradcheck(_CubeSavingItsSquare.apply, (x,))  # the first derivative is right
    assert not dg.autograd.gradgradcheck(_CubeSavingItsSquare.apply, (x,), raise_exception=False)
    with pytest.raises(dg.GradcheckError, match="Jacobian mismatch"):
        dg.gradgradcheck(_CubeSavingItsSquare.apply, (x,))


def test_gradgradcheck_differentiates_the_output_gradient_too():
    x = dg.tensor([0.5, -1.5], dtype=dg.float64, requires_grad=True)
    v = dg.tensor([2.0, 3.0], dtype=dg.float64, requires_grad=True)
    (g,) = dg.autograd.grad(x * x, x, v, create_graph=True)  # g = 2 x v
    (gv,) = dg.autograd.grad(g.sum(), v)
    np.testing.assert_allclose(gv.numpy(), 2 * x.detach().numpy())
    assert dg.autograd.gradgradcheck(lambda t: t * t, (x,), (v,))


class _CumulativeProduct(dg.Function):
    """A built-in-style op whose backward uses an array function the recorded module lacks."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.cumprod(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        z = ctx.xp.cumprod(x)
        return ctx.xp.flip(ctx.xp.cumsum(ctx.xp.flip(gz * z, 0), 0), 0) / x


def test_a_backward_that_cannot_be_recorded_says_so_naming_the_op():
    x = dg.tensor([0.5, 1.5, 2.0], dtype=dg.float64, requires_grad=True)
    assert dg.gradcheck(_CumulativeProduct.apply, (x,))
    with pytest.raises(NotImplementedError, match="_CumulativeProduct: .* differentiated twice"):
        dg.autograd.grad(_CumulativeProduct.apply(x).sum(), x, create_graph=True)
