"""Issue 37: PyTorch's functions composed from differentiable ops (tensor.py's "issue 37: more
math", functions.py, nn/functional.py's margin and likelihood losses) are differentiable twice:
``dg.gradcheck`` and ``dg.gradgradcheck`` in float64 against finite differences. (Their values,
dtypes, errors and first gradients are compared with torch's in the differential sweep,
tests/differential.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import dyngraph as dg

F = dg.nn.functional


def _leaf(rng, *shape, positive=False):
    values = rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)
    return dg.tensor(values, dtype=dg.float64, requires_grad=True)


def _targets(*values):
    return dg.tensor(list(values), dtype=dg.float64)


# name: (function, input shapes; a shape in a tuple with "positive" is drawn from [0.5, 2])
CASES = {
    "hypot": (dg.hypot, [(2, 3), (3,)]),
    "logaddexp": (dg.logaddexp, [(2, 3), (3,)]),
    "xlogy": (dg.xlogy, [(2, 3), ("positive", 3)]),
    "sinc": (dg.sinc, [(2, 3)]),
    "fmod": (dg.fmod, [(2, 3), ("positive", 3)]),
    "copysign": (dg.copysign, [(2, 3), (3,)]),
    "frac": (dg.frac, [(2, 3)]),
    "addmm": (lambda b, x, y: dg.addmm(b, x, y, beta=0.5, alpha=2.0), [(2,), (2, 3), (3, 2)]),
    "baddbmm": (dg.baddbmm, [(2, 2, 2), (2, 2, 3), (2, 3, 2)]),
    "nansum": (lambda x: dg.nansum(x, 1), [(2, 3)]),
    "kron": (dg.kron, [(2, 2), (2, 3)]),
    "rot90": (lambda x: dg.rot90(x, 3, (1, 0)), [(2, 3)]),
    "logcumsumexp": (lambda x: dg.logcumsumexp(x, 1), [(2, 4)]),
    "take_along_dim": (lambda x: dg.take_along_dim(x, dg.tensor([[0], [2]]), 1), [(1, 3)]),
    "cartesian_prod": (dg.cartesian_prod, [(2,), (3,)]),
    "combinations": (lambda x: dg.combinations(x, 2, with_replacement=True), [(3,)]),
    "tensordot": (lambda a, b: dg.tensordot(a, b, ([1, 2], [1, 0])), [(2, 3, 4), (4, 3, 2)]),
    "block_diag": (dg.block_diag, [(2, 2), (2,), ()]),
    "trapezoid": (lambda y, x: dg.trapezoid(y, x), [(2, 4), (4,)]),
    "nanmean": (lambda x: dg.nanmean(x, 0), [(2, 3)]),
    "margin_ranking_loss": (lambda a, b: F.margin_ranking_loss(
        a, b, _targets(1, -1, 1), margin=5.0), [(3,), (3,)]),
    "hinge_embedding_loss": (lambda x: F.hinge_embedding_loss(x, _targets(1, -1, 1), margin=5.0),
                             [(3,)]),
    "triplet_margin_loss": (lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=10.0, swap=True),
                            [(4, 3), (4, 3), (4, 3)]),
    "poisson_nll_loss": (lambda x: F.poisson_nll_loss(x, _targets(0, 3, 1), full=True), [(3,)]),
    "gaussian_nll_loss": (lambda x, v: F.gaussian_nll_loss(x, _targets(0, 3, 1), v),
                          [(3,), ("positive", 3)]),
    "cosine_embedding_loss": (lambda a, b: F.cosine_embedding_loss(a, b, _targets(1, -1),
                                                                   margin=-2.0),
                              [(2, 3), (2, 3)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_first_and_second_derivatives_match_finite_differences(name):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(len(name))
    inputs = [_leaf(rng, *s[1:], positive=True) if s and s[0] == "positive"
              else _leaf(rng, *s) for s in shapes]
    assert dg.gradcheck(fn, inputs)
    assert dg.gradgradcheck(fn, inputs)


# the order statistics: values picked from the sorted tensor (distinct values: no ties)
ORDER_STATISTICS = {
    "median": lambda x: x.median(),
    "median-dim": lambda x: x.median(1).values,
    "kthvalue": lambda x: x.kthvalue(2, 0).values,
    "mode": lambda x: x.mode(1).values,
    "quantile": lambda x: x.quantile(dg.tensor([0.3, 0.8], dtype=dg.float64), dim=1),
    "quantile-midpoint": lambda x: x.quantile(0.5, interpolation="midpoint"),
    "msort": lambda x: x.msort(),
    "cummax": lambda x: x.cummax(1).values,
    "cummin": lambda x: x.cummin(0).values,
}


@pytest.mark.parametrize("name", list(ORDER_STATISTICS))
def test_order_statistics_are_differentiable_twice(name):
    n = 12
    x = dg.tensor(((np.random.default_rng(len(name)).permutation(n) - n / 2) * 0.3)
                  .reshape(3, 4), dtype=dg.float64, requires_grad=True)
    assert dg.gradcheck(ORDER_STATISTICS[name], (x,))
    assert dg.gradgradcheck(ORDER_STATISTICS[name], (x,))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_is_differentiable_twice(reduce, include_self):
    rng = np.random.default_rng(7)
    x = dg.tensor(rng.choice([-1.0, 1.0], (2, 4)) * rng.uniform(0.5, 2.0, (2, 4)),
                  dtype=dg.float64, requires_grad=True)
    src = dg.tensor(rng.choice([-1.0, 1.0], (2, 3)) * rng.uniform(0.5, 2.0, (2, 3)),
                    dtype=dg.float64, requires_grad=True)
    index = dg.tensor([[0, 0, 3], [2, 2, 2]])

    def fn(x, src):
        return x.scatter_reduce(1, index, src, reduce, include_self=include_self)

    assert dg.gradcheck(fn, (x, src))
    assert dg.gradgradcheck(fn, (x, src))


def test_index_copy_and_index_add_are_differentiable_twice():
    rng = np.random.default_rng(3)
    x = dg.tensor(rng.standard_normal((4, 2)), dtype=dg.float64, requires_grad=True)
    source = dg.tensor(rng.standard_normal((2, 2)), dtype=dg.float64, requires_grad=True)
    index = dg.tensor([3, 0])
    for fn in (lambda x, s: x.index_copy(0, index, s),
               lambda x, s: x.index_add(0, index, s, alpha=0.5)):
        assert dg.gradcheck(fn, (x, source))
        assert dg.gradgradcheck(fn, (x, source))
