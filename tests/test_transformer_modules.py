"""dg.nn's attention and Transformer modules against PyTorch's (issue 37).

Each test builds the torch module, loads its ``state_dict()`` into the dyngraph module built with
the same arguments (which proves the parameter names and shapes match), runs both in eval mode
on the same float64 inputs, and compares the outputs, the attention weights, and the gradients
of the inputs and of every parameter.
"""

from __future__ import annotations

import numpy as np
import pytest

import dyngraph as dg

torch = pytest.importorskip("torch", reason="these tests compare dyngraph with PyTorch")

TOLERANCE = {"rtol": 1e-9, "atol": 1e-10}
E, HEADS, N, L, S = 8, 2, 3, 4, 5


def _array(t) -> np.ndarray:
    return t.detach().numpy()


def _twins(name: str, *args, **kwargs):
    """The torch module and dyngraph's with the same arguments and torch's weights, in eval."""
    theirs = getattr(torch.nn, name)(*args, **kwargs, dtype=torch.float64).eval()
    mine = getattr(dg.nn, name)(*args, **kwargs, dtype="float64").eval()
    assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    mine.load_state_dict(theirs.state_dict())
    return mine, theirs


def _inputs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape) for shape in shapes]
    return ([dg.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _float_padding() -> np.ndarray:
    """The padding of _masks as a float mask (-inf: padding), the type of the float attn_mask
    it goes with (torch warns when the two differ)."""
    return np.where(_masks("padding")[1], -np.inf, 0.0)


def _masks(kind: str):
    """(dyngraph mask, torch mask) pairs for attn_mask (L, S) / (N * HEADS, L, S) and
    key_padding_mask (N, S); no query row has every key masked out."""
    rng = np.random.default_rng(3)
    attn, padding = None, None
    if kind in ("bool", "both"):
        attn = np.triu(np.ones((L, S), dtype=bool), k=2)
    if kind == "float per head":
        attn = rng.standard_normal((N * HEADS, L, S))
    if kind in ("padding", "both"):
        padding = np.zeros((N, S), dtype=bool)
        padding[0, -2:] = True
        padding[2, -1] = True
    return attn, padding


def _mask_args(attn, padding, as_tensor):
    return {"attn_mask": None if attn is None else as_tensor(attn),
            "key_padding_mask": None if padding is None else as_tensor(padding)}


def _compare_gradients(mine_out, theirs_out, mine_leaves, theirs_leaves, mine, theirs):
    weights = np.random.default_rng(7).standard_normal(tuple(theirs_out.shape))
    (mine_out * dg.tensor(weights)).sum().backward()
    (theirs_out * torch.tensor(weights)).sum().backward()
    for a, b in zip(mine_leaves, theirs_leaves):
        np.testing.assert_allclose(_array(a.grad), _array(b.grad), **TOLERANCE)
    theirs_parameters = dict(theirs.named_parameters())
    mine_parameters = dict(mine.named_parameters())
    assert mine_parameters.keys() == theirs_parameters.keys()
    for name, parameter in mine_parameters.items():
        np.testing.assert_allclose(_array(parameter.grad), _array(theirs_parameters[name].grad),
                                   **TOLERANCE, err_msg=name)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "bool", "float per head", "padding", "both"])
@pytest.mark.parametrize("average", [True, False])
def test_multihead_attention_matches_torch(batch_first, masks, average):
    mine, theirs = _twins("MultiheadAttention", E, HEADS, batch_first=batch_first)
    q_shape, kv_shape = ((N, L, E), (N, S, E)) if batch_first else ((L, N, E), (S, N, E))
    mine_in, theirs_in = _inputs(q_shape, kv_shape, kv_shape)
    attn, padding = _masks(masks)
    out, weights = mine(*mine_in, **_mask_args(attn, padding, dg.tensor),
                        average_attn_weights=average)
    out_t, weights_t = theirs(*theirs_in, **_mask_args(attn, padding, torch.tensor),
                              average_attn_weights=average)
    assert out.shape == tuple(out_t.shape) and weights.shape == tuple(weights_t.shape)
    np.testing.assert_allclose(_array(out), _array(out_t), **TOLERANCE)
    np.testing.assert_allclose(_array(weights), _array(weights_t), **TOLERANCE)
    _compare_gradients(out + weights.sum() * 0.5, out_t + weights_t.sum() * 0.5, mine_in,
                       theirs_in, mine, theirs)


def test_a_boolean_and_a_float_mask_mean_the_same():
    mine, _ = _twins("MultiheadAttention", E, HEADS)
    (x,), _ = _inputs((L, N, E))
    causal = np.triu(np.ones((L, L), dtype=bool), k=1)
    out_bool, w_bool = mine(x, x, x, attn_mask=dg.tensor(causal))
    out_float, w_float = mine(x, x, x, attn_mask=dg.nn.Transformer.generate_square_subsequent_mask(
        L, dtype="float64"), is_causal=True)
    np.testing.assert_allclose(_array(out_bool), _array(out_float), **TOLERANCE)
    assert np.all(_array(w_bool)[:, np.triu_indices(L, 1)[0], np.triu_indices(L, 1)[1]] == 0)


def test_unbatched_attention_and_need_weights_false_match_torch():
    mine, theirs = _twins("MultiheadAttention", E, HEADS, batch_first=True)
    mine_in, theirs_in = _inputs((L, E), (S, E), (S, E))
    out, weights = mine(*mine_in, average_attn_weights=False)
    out_t, weights_t = theirs(*theirs_in, average_attn_weights=False)
    assert weights.shape == (HEADS, L, S) == tuple(weights_t.shape)
    np.testing.assert_allclose(_array(out), _array(out_t), **TOLERANCE)
    np.testing.assert_allclose(_array(weights), _array(weights_t), **TOLERANCE)
    out, none = mine(*mine_in, need_weights=False)
    assert none is None and out.shape == (L, E)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_matches_torch_with_masks(batch_first, norm_first, activation):
    mine, theirs = _twins("TransformerEncoderLayer", E, HEADS, dim_feedforward=16, dropout=0.0,
                          activation=activation, batch_first=batch_first, norm_first=norm_first,
                          layer_norm_eps=1e-6)
    mine_in, theirs_in = _inputs((N, S, E) if batch_first else (S, N, E))
    causal = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=torch.float64)
    padding = _float_padding()
    out = mine(*mine_in, src_mask=dg.tensor(causal.numpy()),
               src_key_padding_mask=dg.tensor(padding), is_causal=True)
    out_t = theirs(*theirs_in, src_mask=causal, src_key_padding_mask=torch.tensor(padding),
                   is_causal=True)
    np.testing.assert_allclose(_array(out), _array(out_t), **TOLERANCE)
    _compare_gradients(out, out_t, mine_in, theirs_in, mine, theirs)


@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_stack_with_final_norm_matches_torch(batch_first):
    layer = torch.nn.TransformerEncoderLayer(E, HEADS, 16, dropout=0.1, batch_first=batch_first,
                                             dtype=torch.float64)
    theirs = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(E, dtype=torch.float64),
                                         enable_nested_tensor=False).eval()
    mine = dg.nn.TransformerEncoder(
        dg.nn.TransformerEncoderLayer(E, HEADS, 16, dropout=0.1, batch_first=batch_first,
                                      dtype="float64"),
        2, norm=dg.nn.LayerNorm(E, dtype="float64")).eval()
    mine.load_state_dict(theirs.state_dict())
    assert mine.layers[0].linear1.weight is not mine.layers[1].linear1.weight
    mine_in, theirs_in = _inputs((N, S, E) if batch_first else (S, N, E))
    mask = np.triu(np.ones((S, S), dtype=bool), k=1)
    out = mine(*mine_in, mask=dg.tensor(mask))
    out_t = theirs(*theirs_in, mask=torch.tensor(mask))
    np.testing.assert_allclose(_array(out), _array(out_t), **TOLERANCE)
    _compare_gradients(out, out_t, mine_in, theirs_in, mine, theirs)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch(batch_first, norm_first):
    mine, theirs = _twins("Transformer", E, HEADS, num_encoder_layers=2, num_decoder_layers=2,
                          dim_feedforward=16, batch_first=batch_first, norm_first=norm_first)
    shapes = ((N, S, E), (N, L, E)) if batch_first else ((S, N, E), (L, N, E))
    mine_in, theirs_in = _inputs(*shapes)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    padding = _float_padding()
    args_t = dict(tgt_mask=causal, src_key_padding_mask=torch.tensor(padding),
                  memory_key_padding_mask=torch.tensor(padding), tgt_is_causal=True)
    args = dict(tgt_mask=dg.tensor(causal.numpy()), src_key_padding_mask=dg.tensor(padding),
                memory_key_padding_mask=dg.tensor(padding), tgt_is_causal=True)
    out, out_t = mine(*mine_in, **args), theirs(*theirs_in, **args_t)
    np.testing.assert_allclose(_array(out), _array(out_t), **TOLERANCE)
    _compare_gradients(out, out_t, mine_in, theirs_in, mine, theirs)


def test_generate_square_subsequent_mask_is_torchs():
    np.testing.assert_array_equal(dg.nn.Transformer.generate_square_subsequent_mask(4).numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())
    assert dg.nn.Transformer.generate_square_subsequent_mask(4).dtype == np.float32


def test_training_mode_drops_attention_weights():
    attention = dg.nn.MultiheadAttention(E, HEADS, dropout=0.5, dtype="float64")
    (x,), _ = _inputs((L, N, E))
    dg.manual_seed(0)
    _, dropped = attention(x, x, x, average_attn_weights=False)
    _, kept = attention.eval()(x, x, x, average_attn_weights=False)
    # torch returns the weights after dropout in training: some are zeroed, the rest doubled
    assert np.any(_array(dropped) == 0) and not np.any(_array(kept) == 0)


def test_unsupported_arguments_and_bad_masks_say_what_to_do():
    with pytest.raises(NotImplementedError, match="kdim"):
        dg.nn.MultiheadAttention(E, HEADS, kdim=4)
    with pytest.raises(NotImplementedError, match="add_bias_kv"):
        dg.nn.MultiheadAttention(E, HEADS, add_bias_kv=True)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        dg.nn.MultiheadAttention(E, 3)
    with pytest.raises(RuntimeError, match='activation should be "relu" or "gelu"'):
        dg.nn.TransformerEncoderLayer(E, HEADS, activation="tanh")
    attention = dg.nn.MultiheadAttention(E, HEADS)
    (x,), _ = _inputs((L, N, E))
    with pytest.raises(RuntimeError, match="generate_square_subsequent_mask"):
        attention(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match=r"attn_mask of shape \(4, 3\)"):
        attention(x, x, x, attn_mask=dg.zeros(4, 3))
    with pytest.raises(RuntimeError, match=r"key_padding_mask of shape \(4, 3\).*\(N, S\)"):
        attention(x, x, x, key_padding_mask=dg.zeros(4, 3))


@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_with_memory_mask_matches_torch(batch_first):
    mine, theirs = _twins("TransformerDecoderLayer", E, HEADS, dim_feedforward=16,
                          batch_first=batch_first, activation="gelu")
    shapes = ((N, L, E), (N, S, E)) if batch_first else ((L, N, E), (S, N, E))
    mine_in, theirs_in = _inputs(*shapes)
    tgt_mask = np.triu(np.ones((L, L), dtype=bool), k=1)
    memory_mask = np.triu(np.ones((L, S), dtype=bool), k=3)
    out = mine(*mine_in, tgt_mask=dg.tensor(tgt_mask), memory_mask=dg.tensor(memory_mask))
    out_t = theirs(*theirs_in, tgt_mask=torch.tensor(tgt_mask),
                   memory_mask=torch.tensor(memory_mask))
    np.testing.assert_allclose(_array(out), _array(out_t), **TOLERANCE)
    _compare_gradients(out, out_t, mine_in, theirs_in, mine, theirs)


def test_default_float32_attention_matches_torch():
    theirs = torch.nn.MultiheadAttention(E, HEADS)
    mine = dg.nn.MultiheadAttention(E, HEADS)
    mine.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(1).standard_normal((L, N, E)).astype(np.float32)
    mask = dg.nn.Transformer.generate_square_subsequent_mask(L)
    out, weights = mine(*[dg.tensor(x)] * 3, attn_mask=mask)
    out_t, weights_t = theirs(*[torch.tensor(x)] * 3, attn_mask=torch.tensor(mask.numpy()))
    assert out.dtype == np.float32
    np.testing.assert_allclose(_array(out), _array(out_t), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_array(weights), _array(weights_t), rtol=1e-5, atol=1e-6)
