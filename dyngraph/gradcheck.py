"""gradcheck and gradgradcheck: compare autograd's gradients with finite differences.

For every input that requires grad and every element of it, the numerical derivative is the
central difference ``(f(x + eps) - f(x - eps)) / (2 eps)``; the analytical one is a row of the
Jacobian from autograd. They must agree within ``atol + rtol * |numerical|``. Run it in float64:
with float32 the rounding error of the difference swamps eps = 1e-6.

``gradgradcheck`` checks second derivatives the same way, as PyTorch's does: the first gradient,
computed with ``create_graph=True``, is itself a function of the inputs and of the output's
gradient, and ``gradcheck`` compares *its* gradients with finite differences of it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import autograd, backend
from .tensor import Tensor


class GradcheckError(RuntimeError):
    """Autograd's gradient disagrees with the finite-difference one."""


def gradcheck(
    fn: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """True when ``fn``'s gradients match finite differences for every input requiring grad.

    >>> x = dg.randn(3, dtype=dg.float64, requires_grad=True)
    >>> dg.gradcheck(lambda t: (t * t).sum(), (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient "
            "(create it with requires_grad=True)"
        )
    for i in checked:
        if inputs[i].dtype != np.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point "
                f"tensor ({inputs[i].dtype}): finite differences will be inaccurate. Use "
                "dtype=dg.float64.",
                UserWarning,
                stacklevel=2,
            )

    outputs = _as_outputs(fn(*inputs))
    for o, out in enumerate(outputs):
        for i in checked:
            analytical = _analytical_jacobian(out, inputs[i])
            numerical = _numerical_jacobian(fn, inputs, o, inputs[i], eps)
            if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                worst = float(np.max(np.abs(analytical - numerical)))
                raise GradcheckError(
                    f"Jacobian mismatch for output {o} with respect to input {i} "
                    f"(max difference {worst:.3g}),\nnumerical:\n{numerical}\n"
                    f"analytical:\n{analytical}\n"
                )
    return True


def gradgradcheck(
    fn: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Tensor | Sequence[Tensor] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """True when the gradients of ``fn``'s gradients match finite differences (PyTorch's
    ``torch.autograd.gradgradcheck``): second derivatives, for every input requiring grad.

    The function checked is ``(inputs, grad_outputs) -> autograd.grad(fn(inputs), inputs,
    grad_outputs, create_graph=True)``: it is differentiated with respect to the inputs (the
    second derivatives proper) and to ``grad_outputs`` (the backward's own linear map). Without
    ``grad_outputs``, random ones are made (float64, requiring grad, seeded: the same each run).

    >>> x = dg.randn(3, dtype=dg.float64, requires_grad=True)
    >>> dg.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outputs = _as_outputs(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            Tensor(backend.to_device(rng.standard_normal(out.shape), out.device),
                   requires_grad=True)
            for out in outputs
        )
    else:
        grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"gradgradcheck: got {len(grad_outputs)} grad_outputs for "
                         f"{len(outputs)} outputs of fn")
    count = len(inputs)

    def first_gradients(*args: Any) -> tuple[Tensor, ...]:
        xs, seeds = args[:count], args[count:]
        differentiable = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
        grads = autograd.grad(_as_outputs(fn(*xs)), differentiable, list(seeds),
                              create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_gradients, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


def _as_outputs(result: Any) -> tuple[Tensor, ...]:
    outputs = (result,) if isinstance(result, Tensor) else tuple(result)
    for out in outputs:
        if not isinstance(out, Tensor):
            raise TypeError(f"gradcheck: fn must return Tensors, got {type(out).__name__}")
    return outputs


def _analytical_jacobian(out: Tensor, inp: Tensor) -> np.ndarray:
    """Rows d out.flat[j] / d inp, one backward per output element."""
    jacobian = np.zeros((out.array.size, inp.array.size))
    if not out.requires_grad:
        return jacobian
    xp = backend.get_array_module(out.array)
    for j in range(out.array.size):
        seed = xp.zeros(out.array.size, dtype=out.dtype)
        seed[j] = 1
        (g,) = autograd.grad(out, inp, seed.reshape(out.shape), retain_graph=True,
                             allow_unused=True)
        if g is not None:
            jacobian[j] = backend.to_numpy(g.array).reshape(-1)
    return jacobian


def _numerical_jacobian(
    fn: Callable[..., Any], inputs: tuple, o: int, inp: Tensor, eps: float
) -> np.ndarray:
    """Columns (f(x + eps e_k) - f(x - eps e_k)) / 2 eps, perturbing inp's data in place."""
    data = inp.array
    columns = []
    for k in range(data.size):  # NOTE: fn may itself differentiate (a gradient of a gradient)
        index = np.unravel_index(k, data.shape)
        original = data[index].copy()
        data[index] = original + eps
        plus = backend.to_numpy(_as_outputs(fn(*inputs))[o].array).astype(np.float64)
        data[index] = original - eps
        minus = backend.to_numpy(_as_outputs(fn(*inputs))[o].array).astype(np.float64)
        data[index] = original
        columns.append(((plus - minus) / (2 * eps)).reshape(-1))
    if not columns:
        return np.zeros((0, 0))
    return np.stack(columns, axis=1)
