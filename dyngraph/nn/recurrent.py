"""Recurrent cells (one time step of an RNN, a GRU, an LSTM) and the layers that run them
over whole sequences (``RNN``, ``GRU``, ``LSTM``).

A cell maps (input x_t, state h_{t-1}) to the new state h_t. An RNN over a sequence is a Python
loop over its steps, so the graph grows with the length of each input: the define-by-run story.

    cell = dg.nn.GRUCell(input_size=8, hidden_size=16)
    h = None
    for x_t in sequence:          # any length, decided at run time
        h = cell(x_t, h)

The layers write that loop for you, for ``num_layers`` stacked cells, one or two directions,
and batches of sequences of different lengths (``pack_padded_sequence``)::

    gru = dg.nn.GRU(input_size=8, hidden_size=16, num_layers=2, batch_first=True)
    output, h_n = gru(x)          # x: (batch, seq_len, 8)

Parameter names, shapes and gate order are PyTorch's (``weight_ih`` is (gates * hidden_size,
input_size) with the gates stacked in PyTorch's order), so ``torch.nn.GRUCell`` weights load
with ``load_state_dict``. Every weight and bias is initialised from U(-k, k) with
k = 1 / sqrt(hidden_size). Inputs are (batch, input_size), or (input_size,) for one example.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import factories
from ..functions import cat, stack
from ..tensor import Tensor
from . import functional as F
from .layers import affine, uniform_parameter
from .module import Module
from .utils.rnn import PackedSequence, _packed_data, _padded_sorted

# ---------------------------------------------------------------------------- one step
# The math of one time step, shared by the cells and the multi-step layers. ``gi`` is the
# input's part of the gates, x @ W_ih.T + b_ih (the layers compute it for every step at once).


def rnn_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None,
             nonlinearity: str = "tanh") -> Tensor:
    """h' = tanh(gi + h @ W_hh.T + b_hh)  (or relu)."""
    pre = gi + affine(h, w_hh, b_hh)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def gru_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    """The GRU update; gates r, z, n in PyTorch's order (see GRUCell)."""
    H = h.shape[-1]
    gh = affine(h, w_hh, b_hh)  # (batch, 3H): the state's part
    r = (gi[:, :H] + gh[:, :H]).sigmoid()
    z = (gi[:, H : 2 * H] + gh[:, H : 2 * H]).sigmoid()
    n = (gi[:, 2 * H :] + r * gh[:, 2 * H :]).tanh()
    return (1 - z) * n + z * h


def lstm_step(gi: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> tuple[
    Tensor, Tensor
]:
    """The LSTM update; gates i, f, g, o in PyTorch's order (see LSTMCell). Returns (h', c')."""
    H = h.shape[-1]
    gates = gi + affine(h, w_hh, b_hh)
    i = gates[:, :H].sigmoid()
    f = gates[:, H : 2 * H].sigmoid()
    g = gates[:, 2 * H : 3 * H].tanh()
    o = gates[:, 3 * H :].sigmoid()
    c_new = f * c + i * g
    return o * c_new.tanh(), c_new


# ---------------------------------------------------------------------------- cells


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
        gi = affine(x, self.weight_ih, self.bias_ih)
        h_new = rnn_step(gi, h, self.weight_hh, self.bias_hh, self.nonlinearity)
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
        gi = affine(x, self.weight_ih, self.bias_ih)  # (batch, 3H): the input's part of r, z, n
        h_new = gru_step(gi, h, self.weight_hh, self.bias_hh)
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
        gi = affine(x, self.weight_ih, self.bias_ih)
        h_new, c_new = lstm_step(gi, h, c, self.weight_hh, self.bias_hh)
        if not batched:
            return h_new.squeeze(0), c_new.squeeze(0)
        return h_new, c_new


# ---------------------------------------------------------------------------- layers


class _RNNBase(Module):
    """A whole sequence through ``num_layers`` stacked cells (PyTorch's ``nn.RNN`` family).

    Parameters per layer k (and direction, "_reverse" for the backward one when
    ``bidirectional``): ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
    ``bias_hh_l{k}``, shaped and named as PyTorch's, so state dicts load across.
    """

    gates = 1
    mode = "RNN"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"num_layers must be at least 1, got {num_layers}")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout must be between 0 and 1, got {dropout}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = dropout
        self.bidirectional = bidirectional
        directions = 2 if bidirectional else 1
        k = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
        rows = self.gates * hidden_size
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for suffix in ("", "_reverse")[:directions]:
                name = f"l{layer}{suffix}"
                setattr(self, f"weight_ih_{name}",
                        uniform_parameter((rows, layer_input), k, device, dtype))
                setattr(self, f"weight_hh_{name}",
                        uniform_parameter((rows, hidden_size), k, device, dtype))
                if bias:
                    setattr(self, f"bias_ih_{name}", uniform_parameter((rows,), k, device, dtype))
                    setattr(self, f"bias_hh_{name}", uniform_parameter((rows,), k, device, dtype))

    def _weights(self, name: str) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        return (getattr(self, f"weight_ih_{name}"), getattr(self, f"weight_hh_{name}"),
                getattr(self, f"bias_ih_{name}", None), getattr(self, f"bias_hh_{name}", None))

    def _step(self, gi: Tensor, state: Any, w_hh: Tensor, b_hh: Tensor | None) -> Any:
        raise NotImplementedError

    def forward(self, input: Tensor | PackedSequence, hx: Any = None) -> tuple[Any, Any]:
        """Returns ``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``).

        ``input`` is (T, B, input_size) ((B, T, input_size) with ``batch_first``; (T,
        input_size) for one sequence), or a ``PackedSequence`` from ``pack_padded_sequence``.
        ``output`` holds the last layer's state at every step, (T, B, D * hidden_size), D = 2
        when bidirectional; ``h_n`` the final state of every layer and direction,
        (num_layers * D, B, hidden_size). ``hx`` (same shape as ``h_n``) defaults to zeros.
        """
        packed = isinstance(input, PackedSequence)
        mask = None
        if packed:
            # NOTE [packed input] The layer runs the packed steps padded again, the batch in
            # its sorted order, and masks the padded steps (see _run_direction); then it packs
            # its output the same way. PyTorch computes step t on the first batch_sizes[t]
            # rows only: the same numbers, the same gradients.
            x = _padded_sorted(input)
            mask = _real_steps(input.batch_sizes, x)
            if hx is not None and input.sorted_indices is not None:
                hx = _map_state(hx, lambda t: t.index_select(1, input.sorted_indices))
        else:
            x = input
        unbatched = not packed and x.ndim == 2
        if unbatched:
            x = x.unsqueeze(1)
        elif self.batch_first and not packed:
            x = x.transpose(0, 1)
        if x.ndim != 3 or x.shape[-1] != self.input_size:
            raise ValueError(
                f"{type(self).__name__} expects input of shape (seq_len, batch, "
                f"{self.input_size}) (batch first when batch_first=True), got "
                f"{tuple(input.data.shape if packed else input.shape)}"
            )
        states = self._initial_states(hx, x, unbatched)
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                name = f"l{layer}" + ("_reverse" if direction else "")
                out, final = self._run_direction(x, states[layer * directions + direction],
                                                 self._weights(name), mask, reverse=direction == 1)
                outputs.append(out)
                finals.append(final)
            x = outputs[0] if directions == 1 else cat(outputs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        h_n = self._stack_finals(finals)
        if packed:
            if input.unsorted_indices is not None:  # h_n back in the caller's batch order
                h_n = _map_state(h_n, lambda t: t.index_select(1, input.unsorted_indices))
            output = PackedSequence(_packed_data(x, input.batch_sizes), input.batch_sizes,
                                    input.sorted_indices, input.unsorted_indices)
            return output, h_n
        if unbatched:
            x = x.squeeze(1)
            h_n = _map_state(h_n, lambda t: t.squeeze(1))
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, h_n

    def _run_direction(self, x: Tensor, state: Any, weights: tuple, mask: Tensor | None,
                       reverse: bool) -> tuple[Tensor, Any]:
        """One layer in one direction over all the steps: (outputs (T, B, H), final state)."""
        w_ih, w_hh, b_ih, b_hh = weights
        gi_all = affine(x, w_ih, b_ih)  # the input's part of the gates, every step at once
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outputs: list[Tensor | None] = [None] * x.shape[0]
        for t in steps:
            new = self._step(gi_all[t], state, w_hh, b_hh)
            if mask is None:
                state = new
                outputs[t] = _output_of(new)
            else:
                # On a padded step the state is carried over and the output is zero.
                m = mask[t]
                state = _map_pair(new, state, lambda a, b, m=m: m * a + (1 - m) * b)
                outputs[t] = _output_of(new) * m
        return stack(outputs, 0), state

    def _initial_states(self, hx: Any, x: Tensor, unbatched: bool) -> list[Any]:
        """hx (or zeros) split into one state per layer and direction."""
        directions = 2 if self.bidirectional else 1
        shape = (self.num_layers * directions, x.shape[1], self.hidden_size)
        if hx is None:
            zeros = factories.zeros(*shape, dtype=x.dtype, device=x.device)
            hx = (zeros, zeros) if self.mode == "LSTM" else zeros
        else:
            if unbatched:
                hx = _map_state(hx, lambda t: t.unsqueeze(1))
            for t in (hx if isinstance(hx, tuple) else (hx,)):
                if tuple(t.shape) != shape:
                    raise ValueError(
                        f"{type(self).__name__} expects an initial state of shape {shape}, "
                        f"got {tuple(t.shape)}"
                    )
        if self.mode == "LSTM":
            h0, c0 = hx
            return [(h0[i], c0[i]) for i in range(shape[0])]
        return [hx[i] for i in range(shape[0])]

    def _stack_finals(self, finals: list[Any]) -> Any:
        return stack(finals, 0)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


class RNN(_RNNBase):
    """A multi-layer Elman RNN over whole sequences: h_t = tanh(x_t W_ih.T + b_ih + h_{t-1}
    W_hh.T + b_hh) in every layer (``nonlinearity="relu"``: relu), each layer reading the
    outputs of the one below. Returns ``(output, h_n)``.

    >>> rnn = dg.nn.RNN(input_size=3, hidden_size=5, num_layers=2, batch_first=True)
    >>> output, h_n = rnn(dg.randn(4, 7, 3))      # 4 sequences of 7 steps
    >>> output.shape, h_n.shape
    ((4, 7, 5), (2, 4, 5))

    Variable lengths: pass ``dg.nn.utils.rnn.pack_padded_sequence(padded, lengths)`` instead of
    the padded tensor (NOTE [packed input]).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device, dtype)
        self.nonlinearity = nonlinearity

    def _step(self, gi: Tensor, state: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
        return rnn_step(gi, state, w_hh, b_hh, self.nonlinearity)


class GRU(_RNNBase):
    """A multi-layer GRU over whole sequences (the update of GRUCell at every step). Returns
    ``(output, h_n)``; shapes and arguments as ``RNN``."""

    gates = 3
    mode = "GRU"

    def _step(self, gi: Tensor, state: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
        return gru_step(gi, state, w_hh, b_hh)


class LSTM(_RNNBase):
    """A multi-layer LSTM over whole sequences (the update of LSTMCell at every step).
    Returns ``(output, (h_n, c_n))``; ``hx`` is a pair ``(h_0, c_0)``; otherwise as ``RNN``.

    >>> lstm = dg.nn.LSTM(3, 5, batch_first=True)
    >>> output, (h_n, c_n) = lstm(dg.randn(4, 7, 3))
    >>> output.shape, h_n.shape, c_n.shape
    ((4, 7, 5), (1, 4, 5), (1, 4, 5))
    """

    gates = 4
    mode = "LSTM"

    def _step(self, gi: Tensor, state: tuple[Tensor, Tensor], w_hh: Tensor,
              b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
        h, c = state
        return lstm_step(gi, h, c, w_hh, b_hh)

    def _stack_finals(self, finals: list[Any]) -> Any:
        return stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0)


def _real_steps(batch_sizes: Tensor, x: Tensor) -> Tensor:
    """(T, B, 1) in x's dtype: 1.0 where sequence b (of the sorted batch) runs at step t,
    that is b < batch_sizes[t], and 0.0 on its padding."""
    sizes = batch_sizes.numpy()
    real = np.arange(x.shape[1])[None, :] < sizes[:, None]
    return factories.tensor(real[:, :, None], dtype=x.dtype, device=x.device)


def _output_of(state: Any) -> Tensor:
    """The part of a state that is the output: h (for an LSTM, h of (h, c))."""
    return state[0] if isinstance(state, tuple) else state


def _map_pair(a: Any, b: Any, fn: Any) -> Any:
    if isinstance(a, tuple):
        return tuple(fn(x, y) for x, y in zip(a, b))
    return fn(a, b)


def _map_state(state: Any, fn: Any) -> Any:
    return tuple(fn(t) for t in state) if isinstance(state, tuple) else fn(state)
