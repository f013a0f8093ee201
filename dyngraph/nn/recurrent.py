"""Recurrent cells: one time step of an RNN, a GRU and an LSTM.

A cell maps (input x_t, state h_{t-1}) to the new state h_t. An RNN over a sequence is a Python
loop over its steps, so the graph grows with the length of each input: the define-by-run story.

    cell = dg.nn.GRUCell(input_size=8, hidden_size=16)
    h = None
    for x_t in sequence:          # any length, decided at run time
        h = cell(x_t, h)

Parameter names, shapes and gate order are PyTorch's (``weight_ih`` is (gates * hidden_size,
input_size) with the gates stacked in PyTorch's order), so ``torch.nn.GRUCell`` weights load
with ``load_state_dict``. Every weight and bias is initialised from U(-k, k) with
k = 1 / sqrt(hidden_size). Inputs are (batch, input_size), or (input_size,) for one example.
"""

from __future__ import annotations

import math
from typing import Any

from .. import factories
from ..tensor import Tensor
from .layers import affine, uniform_parameter
from .module import Module


class _CellBase(Module):
    """Holds weight_ih (gates*H, I), weight_hh (gates*H, H), bias_ih, bias_hh (gates*H,)."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool, device: Any,
                 dtype: Any) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        k = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
        rows = self.gates * hidden_size
        self.weight_ih = uniform_parameter((rows, input_size), k, device, dtype)
        self.weight_hh = uniform_parameter((rows, hidden_size), k, device, dtype)
        self.bias_ih = uniform_parameter((rows,), k, device, dtype) if bias else None
        self.bias_hh = uniform_parameter((rows,), k, device, dtype) if bias else None

    def _batched(self, x: Tensor) -> Tensor:
        """Check the input's size and give it a batch dimension when it has none."""
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise ValueError(
                f"{type(self).__name__} expects input of shape (batch, {self.input_size}) or "
                f"({self.input_size},), got {tuple(x.shape)}"
            )
        return x if x.ndim == 2 else x.unsqueeze(0)

    def _state(self, state: Tensor | None, x: Tensor) -> Tensor:
        """The given state with a batch dimension, or zeros (the usual initial state)."""
        if state is None:
            return factories.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        state = state if state.ndim == 2 else state.unsqueeze(0)
        if state.shape != (x.shape[0], self.hidden_size):
            raise ValueError(
                f"{type(self).__name__} expects a state of shape ({x.shape[0]}, "
                f"{self.hidden_size}), got {tuple(state.shape)}"
            )
        return state

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias_ih is None:
            text += ", bias=False"
        return text


class RNNCell(_CellBase):
    """h' = tanh(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)   (the Elman RNN; ``nonlinearity="relu"``
    uses relu instead of tanh). ``h`` defaults to zeros.

    >>> cell = dg.nn.RNNCell(3, 5)
    >>> cell(dg.randn(2, 3)).shape
    (2, 5)
    """

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        batched = x.ndim == 2
        x = self._batched(x)
        h = self._state(h, x)
        pre = affine(x, self.weight_ih, self.bias_ih) + affine(h, self.weight_hh, self.bias_hh)
        h_new = pre.tanh() if self.nonlinearity == "tanh" else pre.relu()
        return h_new if batched else h_new.squeeze(0)

    def extra_repr(self) -> str:
        text = super().extra_repr()
        if self.nonlinearity != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text


class GRUCell(_CellBase):
    """The gated recurrent unit (Cho et al. 2014), gates stacked in PyTorch's order r, z, n:

        r  = sigmoid(x W_ir.T + b_ir + h W_hr.T + b_hr)        reset gate
        z  = sigmoid(x W_iz.T + b_iz + h W_hz.T + b_hz)        update gate
        n  = tanh(x W_in.T + b_in + r * (h W_hn.T + b_hn))     candidate state
        h' = (1 - z) * n + z * h

    >>> cell = dg.nn.GRUCell(3, 5)
    >>> cell(dg.randn(2, 3)).shape
    (2, 5)
    """

    gates = 3

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        batched = x.ndim == 2
        x = self._batched(x)
        h = self._state(h, x)
        H = self.hidden_size
        gi = affine(x, self.weight_ih, self.bias_ih)  # (batch, 3H): the input's part of r, z, n
        gh = affine(h, self.weight_hh, self.bias_hh)  # (batch, 3H): the state's part
        r = (gi[:, :H] + gh[:, :H]).sigmoid()
        z = (gi[:, H : 2 * H] + gh[:, H : 2 * H]).sigmoid()
        n = (gi[:, 2 * H :] + r * gh[:, 2 * H :]).tanh()
        h_new = (1 - z) * n + z * h
        return h_new if batched else h_new.squeeze(0)


class LSTMCell(_CellBase):
    """The long short-term memory cell (Hochreiter & Schmidhuber 1997), gates stacked in
    PyTorch's order i, f, g, o; the state is a pair (h, c):

        i  = sigmoid(x W_ii.T + b_ii + h W_hi.T + b_hi)        input gate
        f  = sigmoid(x W_if.T + b_if + h W_hf.T + b_hf)        forget gate
        g  = tanh(x W_ig.T + b_ig + h W_hg.T + b_hg)           candidate cell
        o  = sigmoid(x W_io.T + b_io + h W_ho.T + b_ho)        output gate
        c' = f * c + i * g
        h' = o * tanh(c')

    Returns ``(h', c')``; ``state`` defaults to zeros for both.

    >>> cell = dg.nn.LSTMCell(3, 5)
    >>> h, c = cell(dg.randn(2, 3))
    >>> h.shape, c.shape
    ((2, 5), (2, 5))
    """

    gates = 4

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor] | None = None) -> tuple[
        Tensor, Tensor
    ]:
        batched = x.ndim == 2
        x = self._batched(x)
        h, c = (None, None) if state is None else state
        h, c = self._state(h, x), self._state(c, x)
        H = self.hidden_size
        gates = affine(x, self.weight_ih, self.bias_ih) + affine(h, self.weight_hh, self.bias_hh)
        i = gates[:, :H].sigmoid()
        f = gates[:, H : 2 * H].sigmoid()
        g = gates[:, 2 * H : 3 * H].tanh()
        o = gates[:, 3 * H :].sigmoid()
        c_new = f * c + i * g
        h_new = o * c_new.tanh()
        if not batched:
            return h_new.squeeze(0), c_new.squeeze(0)
        return h_new, c_new
