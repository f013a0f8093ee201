"""Einstein summation and the outer product (mm and bmm are MatMul with their shapes checked)."""

from __future__ import annotations

from .. import backend
from ..function import Function
from ..tensor import Tensor


class Einsum(Function):
    """z = einsum(equation, x1, x2, ...);  dL/dxi = einsum of gz with the other operands, back
    to xi's subscripts  (e.g. 'ij,jk->ik': dL/dx1 = einsum('ik,jk->ij', gz, x2) = gz @ x2^T)"""

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
