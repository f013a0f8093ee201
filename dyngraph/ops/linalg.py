"""Einstein summation and the outer product (mm and bmm are MatMul with their shapes checked)."""

from __future__ import annotations

import math

from .. import backend
from ..function import Function
from ..meta import EQUATION, Meta, Promotion, count
from ..tensor import Tensor


class Einsum(Function):
    """z = einsum(equation, x1, x2, ...);  dL/dxi = einsum of gz with the other operands, back
    to xi's subscripts  (e.g. 'ij,jk->ik': dL/dx1 = einsum('ik,jk->ij', gz, x2) = gz @ x2^T)"""

    option_types = {"equation": EQUATION}

    @staticmethod
    def forward(ctx, *operands, equation):
        inputs, output = parse_equation(equation, [x.ndim for x in operands])
        ctx.inputs, ctx.output = inputs, output
        ctx.sizes = {}
        for subscripts, x in zip(inputs, operands):
            for letter, n in zip(subscripts, x.shape):
                if ctx.sizes.setdefault(letter, n) != n:
                    raise ValueError(
                        f"einsum(): subscript {letter} has size {n} for an operand where it was "
                        f"size {ctx.sizes[letter]} before"
                    )
        ctx.save_for_backward(*operands)
        return ctx.xp.einsum(f"{','.join(inputs)}->{output}", *operands)

    @staticmethod
    def backward(ctx, gz):
        operands = ctx.saved_tensors
        grads = []
        for i, subscripts in enumerate(ctx.inputs):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [(s, x) for j, (s, x) in enumerate(zip(ctx.inputs, operands)) if j != i]
            grads.append(_einsum_grad(ctx.xp, gz, ctx.output, others, subscripts, ctx.sizes))
        return tuple(grads)

    @classmethod
    def meta(cls, shapes, dtypes, equation):
        # numpy's einsum visits every combination of the equation's letters, once per operand
        # after the first: "ab,cd->" over two 3000 x 3000 inputs is 3000**4 multiply-adds
        sizes, output = einsum_sizes(equation, shapes)
        elements = math.prod(sizes[letter] for letter in output) + sum(map(count, shapes))
        work = math.prod(sizes.values()) * max(len(shapes) - 1, 1)
        return Meta(elements, None, cls.promotion.dtype(dtypes), max(work, elements))


def einsum_sizes(equation, shapes):
    """The size of each letter of an einsum equation on operands of these shapes, and the
    output's letters."""
    inputs, output = parse_equation(equation, [len(s) for s in shapes])
    sizes = {}
    for subscripts, shape in zip(inputs, shapes):
        for letter, n in zip(subscripts, shape):
            if sizes.setdefault(letter, n) != n:
                raise ValueError(f"einsum {equation!r}: {letter} has sizes {sizes[letter]} and {n}")
    return sizes, output


def _einsum_grad(xp, gz, output, others, subscripts, sizes):
    """dL/dx for an operand x with ``subscripts``: contract gz with the other operands onto x's
    letters. A letter only x has (summed inside x alone) comes back by broadcasting; a letter x
    repeats (a diagonal, 'ii') comes back through an identity matrix."""
    present = set(output).union(*[set(s) for s, _ in others])
    unique = "".join(dict.fromkeys(subscripts))
    reachable = "".join(letter for letter in unique if letter in present)
    terms = [output] + [s for s, _ in others]
    g = xp.einsum(f"{','.join(terms)}->{reachable}", gz, *[x for _, x in others])
    if reachable != unique:  # letters summed inside x alone: broadcast back along them
        shape = [sizes[letter] if letter in reachable else 1 for letter in unique]
        g = xp.broadcast_to(g.reshape(shape), [sizes[letter] for letter in unique])
    if unique == subscripts:
        return g
    # x repeats a letter: spread g over the diagonal with an identity matrix per repeat
    spare = iter(letter for letter in _LETTERS if letter not in sizes)
    eye = backend.get_array_module(g.array if isinstance(g, Tensor) else g).eye  # constants
    target, eyes, eye_terms = "", [], []
    for letter in subscripts:
        if letter in target:
            fresh = next(spare)
            eyes.append(eye(sizes[letter], dtype=g.dtype))
            eye_terms.append(letter + fresh)
            letter = fresh
        target += letter
    return xp.einsum(f"{','.join([unique] + eye_terms)}->{target}", g, *eyes)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def parse_equation(equation, ndims):
    """The subscripts of each operand and of the output, with '...' spelled out in letters and
    the implicit output ('ij,jk' means 'ij,jk->ik') made explicit."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise ValueError(
            f"einsum(): the equation {equation!r} has {len(inputs)} operand(s) but "
            f"{len(ndims)} tensor(s) were given"
        )
    used = set(equation)
    spare = [letter for letter in _LETTERS if letter not in used]
    ellipsis_ndim = max(
        [n - len(s.replace("...", "")) for s, n in zip(inputs, ndims) if "..." in s], default=0
    )
    dots = "".join(spare[:ellipsis_ndim])
    explicit = []
    for s, n in zip(inputs, ndims):
        if "..." in s:
            s = s.replace("...", dots[ellipsis_ndim - (n - len(s.replace("...", ""))):])
        if len(s) != n or not all(letter in _LETTERS for letter in s):
            raise ValueError(
                f"einsum(): subscripts {s!r} do not fit an operand with {n} dimension(s)"
            )
        explicit.append(s)
    if arrow:
        output = rhs.replace("...", dots)
    else:
        letters = "".join(explicit)
        output = dots + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1 and c not in dots)
        )
    return explicit, output


class Outer(Function):
    """z_ij = x_i y_j;  dL/dx = gz @ y,  dL/dy = gz^T @ x"""

    @staticmethod
    def forward(ctx, x, y):
        if x.ndim != 1 or y.ndim != 1:
            raise RuntimeError(
                f"outer: expected two 1-D tensors, got shapes {tuple(x.shape)} and "
                f"{tuple(y.shape)}"
            )
        ctx.save_for_backward(x, y)
        return x.reshape((-1, 1)) * y.reshape((1, -1))

    @staticmethod
    def backward(ctx, gz):
        x, y = ctx.saved_tensors
        need_x, need_y = ctx.needs_input_grad
        return (gz @ y if need_x else None), (gz.T @ x if need_y else None)

    @classmethod
    def meta(cls, shapes, dtypes):
        out = (count(shapes[0]), count(shapes[1]))
        return Meta(count(out), out, cls.promotion.dtype(dtypes), count(out))


# NOTE [det through the inverse]: Jacobi's formula, d det(X) = det(X) tr(X^-1 dX), gives
# dL/dX = gz det(X) X^-T. With create_graph=True ``_inverse`` records the op Inverse, so the
# gradient is a graph of recorded ops and det is differentiable twice, as PyTorch's. The inverse
# exists only where det(X) != 0: PyTorch falls back to an SVD for singular matrices; here a
# singular matrix has no gradient and numpy's LinAlgError says "Singular matrix".


class Det(Function):
    """z = det(X) over the last two dimensions;  dL/dX = gz * z * X^-T  (Jacobi's formula)"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT

    @staticmethod
    def forward(ctx, x):
        _check_square("det", x)
        z = ctx.xp.linalg.det(x)
        ctx.save_for_backward(x, z)
        return z

    @staticmethod
    def backward(ctx, gz):
        x, z = ctx.saved_tensors
        scale = (gz * z).reshape(tuple(z.shape) + (1, 1))
        return scale * _inverse(ctx.xp, x).swapaxes(-1, -2)

    @classmethod
    def meta(cls, shapes, dtypes):  # one number per matrix
        x = shapes[0]
        return Meta(count(x), x[:-2], cls.promotion.dtype(dtypes), count(x) * max(x[-1:] or (1,)))


class Inverse(Function):
    """Z = X^-1 over the last two dimensions;  dL/dX = -Z^T gZ Z^T  (from d(X Z) = 0)"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT

    @staticmethod
    def forward(ctx, x):
        _check_square("inverse", x)
        z = ctx.xp.linalg.inv(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, gz):
        (z,) = ctx.saved_tensors
        zt = z.swapaxes(-1, -2)
        return -(zt @ gz @ zt)

    @classmethod
    def meta(cls, shapes, dtypes):  # one matrix per matrix
        x = shapes[0]
        return Meta(count(x), x, cls.promotion.dtype(dtypes), count(x) * max(x[-1:] or (1,)))


def _inverse(xp, x):
    """X^-1 for Det's backward: on arrays numpy's inv; given a Tensor (a backward with
    create_graph=True), the recorded op Inverse, so that det's gradient can be differentiated."""
    if isinstance(x, Tensor):
        return Inverse.apply(x)
    return xp.linalg.inv(x)


def _check_square(name, x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise RuntimeError(
            f"{name}: expected a batch of square matrices (shape (*, n, n)), got shape "
            f"{tuple(x.shape)}"
        )
