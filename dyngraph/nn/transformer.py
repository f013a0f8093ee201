"""Attention and the Transformer (PyTorch's ``torch.nn``): MultiheadAttention,
TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder and
Transformer.

Every module here is a composition of layers and ops dyngraph already has (``Linear``,
``LayerNorm``, ``Dropout``, ``softmax``, ``@``); none has a backward of its own, so the graph of
a Transformer shows each projection, each softmax and each residual add.

Parameters carry PyTorch's names and shapes (``self_attn.in_proj_weight`` (3E, E),
``self_attn.out_proj.weight``, ``linear1``, ``norm1`` ...), so ``load_state_dict`` takes a
PyTorch model's ``state_dict()``.

NOTE [attention masks] PyTorch's masks say where *not* to look, the opposite of
``F.scaled_dot_product_attention``'s boolean mask: in ``attn_mask`` (L, S) or (N * num_heads,
L, S) and ``key_padding_mask`` (N, S), True means "masked out", and a float mask is added to
the scores (``-inf`` masks out). Both become one additive float mask, as in PyTorch, so a boolean
and a float mask mean the same thing. A row with every key masked out is softmax of all
``-inf``: NaN, as in PyTorch.

NOTE [is_causal is a hint] In PyTorch ``is_causal=True`` only tells the fused kernels that
``attn_mask`` is the causal mask; the mask must still be given (``Transformer.
generate_square_subsequent_mask``). dyngraph has no fused kernel, so it always applies the mask
it is given and checks only that one is there.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend, factories
from ..tensor import DEFAULT_FLOAT, Tensor
from . import functional as F
from . import init
from .layers import Dropout, Linear, uniform_parameter
from .module import Module, ModuleList
from .norm import LayerNorm

# ----------------------------------------------------------------------------- attention


class MultiheadAttention(Module):
    """softmax(Q K^T / sqrt(head_dim) + mask) V for ``num_heads`` heads side by side, then
    ``out_proj``; Q, K, V are the query, key and value projected by ``in_proj_weight``.

    Shapes (E = embed_dim): query (L, N, E), key and value (S, N, E); with ``batch_first=True``
    (N, L, E) and (N, S, E); unbatched (L, E) and (S, E). ``forward`` returns the output (as the
    query) and, when ``need_weights``, the attention weights (N, L, S) averaged over the heads
    (``average_attn_weights=False``: (N, num_heads, L, S)), else None.

    >>> attention = dg.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = dg.randn(3, 5, 8)
    >>> out, weights = attention(x, x, x)
    >>> out.shape, weights.shape
    ((3, 5, 8), (3, 5, 5))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if embed_dim % num_heads != 0:
            raise ValueError(f"embed_dim must be divisible by num_heads, got embed_dim="
                             f"{embed_dim} and num_heads={num_heads}")
        for name, dim in (("kdim", kdim), ("vdim", vdim)):
            if dim is not None and dim != embed_dim:
                raise NotImplementedError(
                    f"dyngraph's MultiheadAttention has no {name} other than embed_dim (got "
                    f"{name}={dim}, embed_dim={embed_dim}): project the keys / values to "
                    "embed_dim with a Linear first")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError(
                "dyngraph's MultiheadAttention has no add_bias_kv or add_zero_attn: leave "
                "them False (append a learnt or zero key / value to the sequence instead)")
        self.embed_dim = self.kdim = self.vdim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        # PyTorch's initialisation: Xavier for the packed projection, zero biases (drawn from
        # U(-0, 0) here, then the weight refilled by init, so each idea has one place)
        self.in_proj_weight = uniform_parameter((3 * embed_dim, embed_dim), 0.0, device, dtype)
        init.xavier_uniform_(self.in_proj_weight)
        self.in_proj_bias = (uniform_parameter((3 * embed_dim,), 0.0, device, dtype)
                             if bias else None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        if is_causal and attn_mask is None:  # NOTE [is_causal is a hint]
            raise RuntimeError(
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                "module method `generate_square_subsequent_mask` to create this mask.")
        batched = query.ndim == 3
        if not batched:  # (L, E): a batch of one, taken off again at the end
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = _as_tensor(key_padding_mask).unsqueeze(0)
        elif not self.batch_first:  # (L, N, E) -> (N, L, E): one layout below
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        n, target_len, source_len = query.shape[0], query.shape[1], key.shape[1]
        mask = _additive_mask(attn_mask, key_padding_mask, n, self.num_heads, target_len,
                              source_len, query.dtype)

        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q, b_k, b_v = (None, None, None) if self.in_proj_bias is None \
            else self.in_proj_bias.chunk(3)
        q = self._split_heads(F.linear(query, w_q, b_q))  # (N, H, L, D)
        k = self._split_heads(F.linear(key, w_k, b_k))    # (N, H, S, D)
        v = self._split_heads(F.linear(value, w_v, b_v))  # (N, H, S, D)

        scores = (q * (1.0 / math.sqrt(self.head_dim))) @ k.transpose(-2, -1)  # (N, H, L, S)
        if mask is not None:
            scores = scores + mask
        # the weights returned are those after dropout, as in PyTorch
        weights = F.dropout(F.softmax(scores, dim=-1), self.dropout, self.training)
        heads = weights @ v                                                     # (N, H, L, D)
        out = self.out_proj(heads.transpose(1, 2).reshape(n, target_len, self.embed_dim))

        if not batched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(dim=1)
        return out, (weights if batched else weights.squeeze(0))

    def _split_heads(self, x: Tensor) -> Tensor:
        """(N, T, E) -> (N, num_heads, T, head_dim): each head sees its own slice of E."""
        n, length = x.shape[0], x.shape[1]
        return x.reshape(n, length, self.num_heads, self.head_dim).transpose(1, 2)

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout={self.dropout}, batch_first={self.batch_first}")


def _as_tensor(mask: Any) -> Tensor:
    return mask if isinstance(mask, Tensor) else factories.tensor(mask)


def _additive(mask: Any, dtype: Any) -> Tensor:
    """A mask as numbers to add to the scores: True (masked out) -> -inf, False -> 0; a float
    mask as it is (NOTE [attention masks])."""
    mask = _as_tensor(mask)
    if mask.dtype != np.bool_:
        return mask.to(dtype)
    xp = backend.get_array_module(mask.array)
    return factories.tensor(xp.where(mask.array, -np.inf, 0.0), dtype=dtype, device=mask.device)


def _additive_mask(attn_mask: Any, key_padding_mask: Any, n: int, num_heads: int,
                   target_len: int, source_len: int, dtype: Any) -> Tensor | None:
    """attn_mask and key_padding_mask as one float mask that broadcasts to the scores
    (N, num_heads, L, S), or None when neither is given."""
    mask = None
    if attn_mask is not None:
        mask = _additive(attn_mask, dtype)
        if mask.shape == (target_len, source_len):
            pass
        elif mask.shape == (n * num_heads, target_len, source_len):
            mask = mask.reshape(n, num_heads, target_len, source_len)
        elif n == 1 and mask.shape == (num_heads, target_len, source_len):  # unbatched
            mask = mask.unsqueeze(0)
        else:
            raise RuntimeError(
                f"attn_mask of shape {tuple(mask.shape)} does not fit the attention: it must "
                f"be (L, S) = {(target_len, source_len)} or (N * num_heads, L, S) = "
                f"{(n * num_heads, target_len, source_len)}")
    if key_padding_mask is not None:
        padding = _additive(key_padding_mask, dtype)
        if padding.shape != (n, source_len):
            raise RuntimeError(
                f"key_padding_mask of shape {tuple(padding.shape)} does not fit the keys: it "
                f"must be (N, S) = {(n, source_len)}, True where a key is padding")
        padding = padding.reshape(n, 1, 1, source_len)
        mask = padding if mask is None else mask + padding
    return mask


# ----------------------------------------------------------------------------- encoder


def _activation(activation: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f'activation should be "relu" or "gelu" (or a callable), not '
                       f"{activation!r}")


class TransformerEncoderLayer(Module):
    """Self-attention then a two-layer feed-forward network, each with a residual connection and
    a LayerNorm (Vaswani et al. 2017):

        x = norm1(x + dropout1(self_attn(x, x, x)))
        x = norm2(x + dropout2(linear2(dropout(activation(linear1(x))))))

    ``norm_first=True`` normalises before each block instead (x = x + block(norm(x))).
    src is (S, N, d_model), or (N, S, d_model) with ``batch_first=True``.

    >>> layer = dg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(dg.randn(3, 5, 8)).shape
    (3, 5, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), src_mask, src_key_padding_mask,
                                         is_causal)
            x = x + self._feed_forward(self.norm2(x))
        else:
            x = self.norm1(x + self._self_attention(x, src_mask, src_key_padding_mask,
                                                    is_causal))
            x = self.norm2(x + self._feed_forward(x))
        return x

    def _self_attention(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                        is_causal: bool) -> Tensor:
        out, _ = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)
        return self.dropout1(out)

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` one after the other (each with its own
    parameters: ``layers.0``, ``layers.1`` ...), then ``norm`` if given.

    >>> layer = dg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    >>> dg.nn.TransformerEncoder(layer, num_layers=2)(dg.randn(5, 3, 8)).shape
    (5, 3, 8)
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        # enable_nested_tensor and mask_check choose PyTorch's fast paths: no effect here
        self.layers = _copies(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


def _copies(layer: Module, n: int) -> ModuleList:
    """n independent copies of layer (PyTorch's _get_clones: each starts from its values)."""
    return ModuleList([copy.deepcopy(layer) for _ in range(n)])


# ----------------------------------------------------------------------------- decoder


class TransformerDecoderLayer(Module):
    """Masked self-attention over the target, attention from the target to the encoder's
    output (``memory``), then the feed-forward network; each with a residual connection and a
    LayerNorm (``norm_first=True``: before each block):

        x = norm1(x + dropout1(self_attn(x, x, x, tgt_mask)))
        x = norm2(x + dropout2(multihead_attn(x, memory, memory, memory_mask)))
        x = norm3(x + dropout3(linear2(dropout(activation(linear1(x))))))

    >>> layer = dg.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(dg.randn(3, 4, 8), dg.randn(3, 5, 8)).shape
    (3, 4, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        def attention() -> MultiheadAttention:
            return MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                      batch_first=batch_first, device=device, dtype=dtype)
        def norm() -> LayerNorm:
            return LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.self_attn = attention()
        self.multihead_attn = attention()
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1, self.norm2, self.norm3 = norm(), norm(), norm()
        self.dropout1, self.dropout2, self.dropout3 = (Dropout(dropout), Dropout(dropout),
                                                       Dropout(dropout))
        self.activation = _activation(activation)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None,
                memory_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                         tgt_is_causal)
            x = x + self._cross_attention(self.norm2(x), memory, memory_mask,
                                          memory_key_padding_mask, memory_is_causal)
            x = x + self._feed_forward(self.norm3(x))
        else:
            x = self.norm1(x + self._self_attention(x, tgt_mask, tgt_key_padding_mask,
                                                    tgt_is_causal))
            x = self.norm2(x + self._cross_attention(x, memory, memory_mask,
                                                     memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._feed_forward(x))
        return x

    def _self_attention(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                        is_causal: bool) -> Tensor:
        out, _ = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)
        return self.dropout1(out)

    def _cross_attention(self, x: Tensor, memory: Tensor, attn_mask: Any,
                         key_padding_mask: Any, is_causal: bool) -> Tensor:
        out, _ = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                     key_padding_mask=key_padding_mask, need_weights=False,
                                     is_causal=is_causal)
        return self.dropout2(out)

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` one after the other, each attending to the
    same ``memory``, then ``norm`` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _copies(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None,
                memory_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


# ----------------------------------------------------------------------------- the whole model


class Transformer(Module):
    """The encoder-decoder of "Attention Is All You Need": ``encoder`` (num_encoder_layers
    layers and a final LayerNorm) reads src, ``decoder`` (num_decoder_layers layers and a final
    LayerNorm) reads tgt and attends to the encoder's output. Every weight matrix starts from
    Xavier-uniform values, as in PyTorch.

    >>> model = dg.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                           num_decoder_layers=1, dim_feedforward=16)
    >>> model(dg.randn(5, 3, 8), dg.randn(4, 3, 8)).shape
    (4, 3, 8)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        layer_args = dict(dim_feedforward=dim_feedforward, dropout=dropout,
                          activation=activation, layer_norm_eps=layer_norm_eps,
                          batch_first=batch_first, norm_first=norm_first, bias=bias,
                          device=device, dtype=dtype)
        def norm() -> LayerNorm:
            return LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **layer_args), num_encoder_layers, norm())
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **layer_args), num_decoder_layers, norm())
        for parameter in self.parameters():
            if parameter.ndim > 1:
                init.xavier_uniform_(parameter)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Any = None, tgt_mask: Any = None,
                memory_mask: Any = None, src_key_padding_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None,
                                        dtype: Any = None) -> Tensor:
        """The causal mask (sz, sz): 0 where position i may look (j <= i), -inf above the
        diagonal (the future)."""
        future = np.triu(np.ones((sz, sz), dtype=bool), k=1)
        return factories.tensor(np.where(future, -np.inf, 0.0),
                                dtype=DEFAULT_FLOAT if dtype is None else dtype, device=device)


__all__ = ["MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer"]
