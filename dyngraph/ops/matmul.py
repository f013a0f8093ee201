"""Matrix multiplication: 1-D, 2-D and batched (leading dimensions broadcast)."""

from __future__ import annotations

from ..function import Function
from ..meta import Meta, Shape, count
from ..tensor import scalar_type_name


class MatMul(Function):
    """z = x @ y;  dL/dx = gz @ y^T,  dL/dy = x^T @ gz

    A 1-D x is treated as a row (1, k) and a 1-D y as a column (k, 1), as numpy does; batch
    dimensions broadcast, and the engine sums their gradients back to each input's shape.
    """

    @staticmethod
    def forward(ctx, x, y):
        if x.dtype != y.dtype:  # numpy would promote; PyTorch refuses, and so do we
            a, b = scalar_type_name(x.dtype), scalar_type_name(y.dtype)
            fix = f"x.to(dg.{y.dtype}) @ y" if y.dtype.kind == "f" else f"x @ y.to(dg.{x.dtype})"
            raise RuntimeError(
                f"expected m1 and m2 to have the same dtype, but got: {a} != {b}. Convert one "
                f"of them to the other's dtype first, e.g. {fix}"
            )
        ctx.save_for_backward(x, y)
        return x @ y

    @staticmethod
    def backward(ctx, gz):
        x, y = ctx.saved_tensors
        need_x, need_y = ctx.needs_input_grad
        if x.ndim == 2 and y.ndim == 2:  # the common case, written plainly
            return (gz @ y.T if need_x else None), (x.T @ gz if need_y else None)
        # Promote 1-D operands to matrices, and gz to match their product.
        x2 = x.reshape((1,) + x.shape) if x.ndim == 1 else x
        y2 = y.reshape(y.shape + (1,)) if y.ndim == 1 else y
        gz2 = gz.reshape(_product_shape(x2.shape, y2.shape))
        gx = gy = None
        if need_x:
            gx = gz2 @ y2.swapaxes(-1, -2)
            if x.ndim == 1:  # (..., 1, k) -> (..., k)
                gx = gx.reshape(gx.shape[:-2] + gx.shape[-1:])
        if need_y:
            gy = x2.swapaxes(-1, -2) @ gz2
            if y.ndim == 1:  # (..., k, 1) -> (..., k)
                gy = gy.reshape(gy.shape[:-1])
        return gx, gy

    @staticmethod
    def explain_failure(shapes):
        a, b = shapes
        if a is None or b is None or len(a) == 0 or len(b) == 0:
            return f"matmul needs two tensors with at least one dimension, got shapes {a} and {b}"
        inner_b = b[0] if len(b) == 1 else b[-2]
        if a[-1] != inner_b:
            where = "only" if len(b) == 1 else "second-to-last"
            return (
                f"matmul: shapes {a} and {b} are not aligned: the last dimension of the first "
                f"({a[-1]}) must equal the {where} dimension of the second ({inner_b})"
            )
        if all(p == q or 1 in (p, q) for p, q in zip(reversed(a[:-2]), reversed(b[:-2]))):
            return None  # the shapes are fine: the failure is another one (forward's message)
        return (
            f"matmul: the batch dimensions of shapes {a} and {b} ({a[:-2]} and {b[:-2]}) "
            "cannot be broadcast together"
        )

    @classmethod
    def meta(cls, shapes, dtypes):  # each output element: a sum of x's last size products
        out = matmul_shape(*shapes)
        inner = shapes[0][-1]
        return Meta(count(out), out, cls.promotion.dtype(dtypes), count(out) * max(inner, 1))


def _product_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """Shape of a @ b for matrices with broadcast batch dimensions."""
    batch_a, batch_b = a[:-2], b[:-2]
    n = max(len(batch_a), len(batch_b))
    batch_a = (1,) * (n - len(batch_a)) + batch_a
    batch_b = (1,) * (n - len(batch_b)) + batch_b
    batch = tuple(max(p, q) for p, q in zip(batch_a, batch_b))
    return batch + (a[-2], b[-1])


def matmul_shape(x: Shape, y: Shape) -> Shape:
    """The shape of x @ y, 1-D operands included (a row on the left, a column on the right)."""
    if not x or not y:
        raise ValueError("matmul needs inputs with at least one dim")
    x2 = (1,) + x if len(x) == 1 else x
    y2 = y + (1,) if len(y) == 1 else y
    if x2[-1] != y2[-2]:
        raise ValueError(f"matmul of {x} and {y}: inner sizes {x2[-1]} and {y2[-2]} differ")
    shape = _product_shape(x2, y2)
    if len(x) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(y) == 1:
        shape = shape[:-1]
    return tuple(shape)
