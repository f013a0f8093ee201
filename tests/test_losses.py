"""Losses check their arguments as PyTorch does (issue 13, item 4), and the integer-output ops of
the op table (sort/topk indices, all/any, one_hot) agree with numpy and PyTorch exactly.

- mse_loss / l1_loss warn when the target's shape differs from the input's (it would broadcast:
  pred (N, 1) against target (N,) is compared as (N, N)); the binary cross-entropies refuse it.
- cross_entropy / nll_loss name a float target where class indices are expected (``.long()``),
  and an out-of-range class index with the valid range.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from op_table import INTEGER_OUTPUT_CASES, dg_inputs, ids, ref_inputs

import dyngraph as dg
import dyngraph.nn.functional as F

# ---------------------------------------------------------------------------- integer outputs


@pytest.mark.parametrize("case", INTEGER_OUTPUT_CASES, ids=ids(INTEGER_OUTPUT_CASES))
def test_integer_output_matches_numpy_and_needs_no_grad(case, backend):
    arrays = case.arrays()
    out = case.dg(*dg_inputs(case, arrays, backend.device, np.float32))
    expected = np.asarray(case.ref(*ref_inputs(arrays, np.float32)))
    assert out.shape == expected.shape
    assert out.dtype.kind == expected.dtype.kind  # int64 indices, bool masks
    assert not out.requires_grad and out.grad_fn is None
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("case", INTEGER_OUTPUT_CASES, ids=ids(INTEGER_OUTPUT_CASES))
def test_integer_output_matches_torch(case, torch):
    arrays = case.arrays()
    out = case.dg(*dg_inputs(case, arrays, "cpu", np.float64))
    expected = case.torch(*[torch.from_numpy(np.array(a)) for a in arrays])
    assert out.shape == tuple(expected.shape)
    assert str(out.dtype) == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_sort_and_topk_return_values_and_indices():
    x = dg.tensor([[3.0, 1.0, 2.0]], requires_grad=True)
    values, indices = x.sort(descending=True)
    assert values.tolist() == [[3.0, 2.0, 1.0]] and indices.tolist() == [[0, 2, 1]]
    top = x.topk(2)
    assert top.values.tolist() == [[3.0, 2.0]] and top.indices.tolist() == [[0, 2]]
    (values * dg.tensor([[1.0, 10.0, 100.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 100.0, 10.0]]  # each value's gradient goes back home


def test_all_and_any_of_an_input_that_requires_grad_are_outside_the_graph():
    x = dg.tensor([1.0, -1.0], requires_grad=True)
    assert (x > 0).any().item() is True and x.all().item() is True
    assert not x.all(dim=0).requires_grad


# ---------------------------------------------------------------------------- shape warnings


@pytest.mark.parametrize("loss", [F.mse_loss, F.l1_loss], ids=["mse_loss", "l1_loss"])
def test_regression_loss_warns_when_target_would_broadcast(loss):
    pred = dg.tensor(np.zeros((4, 1)), requires_grad=True)
    target = dg.tensor(np.arange(4.0))
    with pytest.warns(UserWarning, match=r"target size \(4,\) that is different to the input "
                                         r"size \(4, 1\) \(they broadcast to \(4, 4\)\)") as caught:
        out = loss(pred, target)
    assert "incorrect results due to broadcasting" in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the learner's line
    assert out.shape == ()  # still computed, as PyTorch does


@pytest.mark.parametrize("loss", [F.mse_loss, F.l1_loss], ids=["mse_loss", "l1_loss"])
def test_regression_loss_with_matching_shapes_does_not_warn(loss):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss(dg.tensor(np.zeros((4, 1)), requires_grad=True), dg.tensor(np.zeros((4, 1))))


def test_mse_loss_warning_matches_torch_behaviour(torch):
    with pytest.warns(UserWarning, match="different to the input size"):
        torch.nn.functional.mse_loss(torch.zeros(4, 1), torch.zeros(4))
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(dg.zeros(4, 1), dg.zeros(4))


@pytest.mark.parametrize(
    "loss, message",
    [(F.binary_cross_entropy, r"target size \(4,\) that is different to the input size \(4, 1\)"),
     (F.binary_cross_entropy_with_logits, r"Target size \(4,\) must be the same as input size")],
    ids=["bce", "bce_with_logits"],
)
def test_binary_cross_entropy_refuses_a_target_of_another_shape(loss, message, torch):
    pred = dg.tensor(np.full((4, 1), 0.5), requires_grad=True)
    with pytest.raises(ValueError, match=message):
        loss(pred, dg.tensor(np.ones(4)))
    with pytest.raises(ValueError):  # PyTorch refuses it too
        getattr(torch.nn.functional, loss.__name__)(torch.full((4, 1), 0.5), torch.ones(4))


def test_binary_cross_entropy_wants_probabilities():
    with pytest.raises(RuntimeError, match="between 0 and 1.*binary_cross_entropy_with_logits"):
        F.binary_cross_entropy(dg.tensor([0.5, 1.5]), dg.tensor([0.0, 1.0]))


# ---------------------------------------------------------------------------- class targets


@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss], ids=["cross_entropy", "nll_loss"])
def test_float_class_target_names_long(loss):
    logits = dg.tensor(np.zeros((3, 4)), requires_grad=True)
    with pytest.raises(RuntimeError,
                       match=r"integer class indices.*dtype float32.*target\.long\(\)"):
        loss(logits, dg.tensor([0.0, 1.0, 2.0]))


def test_long_converts_a_float_target():
    target = dg.tensor([0.0, 1.0, 2.0]).long()
    assert target.dtype == np.int64
    F.cross_entropy(dg.tensor(np.zeros((3, 4)), requires_grad=True), target)


@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss], ids=["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("bad", [5, -1])
def test_out_of_range_class_names_value_and_range(loss, bad):
    logits = dg.tensor(np.zeros((3, 4)), requires_grad=True)
    with pytest.raises(IndexError, match=rf"class index {bad} \(at position \(1,\)\) is out of "
                                         r"range: the input has 4 classes, .*\[0, 3\]"):
        loss(logits, dg.tensor([0, bad, 2]))


def test_ignore_index_is_not_out_of_range():
    logits = dg.tensor(np.zeros((3, 4)), requires_grad=True)
    loss = F.cross_entropy(logits, dg.tensor([0, -100, 2]))
    np.testing.assert_allclose(loss.item(), np.log(4.0), rtol=1e-6)
    loss.backward()
    assert np.all(logits.grad.numpy()[1] == 0)  # the ignored sample gets no gradient


def test_a_class_masked_with_minus_infinity_gives_a_finite_loss(torch):
    """Integer targets pick their log-probability (a gather), as PyTorch does: a logit of -inf
    in another class (a mask) contributes nothing, where a sum over one-hot coefficients would
    give 0 * -inf = nan."""
    logits = np.array([[0.5, -np.inf, 1.0], [2.0, 0.0, -np.inf]], dtype=np.float32)
    target = np.array([2, 0])
    for loss_fn in (F.cross_entropy, lambda x, t: F.nll_loss(F.log_softmax(x, dim=1), t)):
        x = dg.tensor(logits, requires_grad=True)
        loss = loss_fn(x, target)
        loss.backward()
        x_t = torch.tensor(logits, requires_grad=True)
        expected = torch.nn.functional.cross_entropy(x_t, torch.from_numpy(target))
        expected.backward()
        assert np.isfinite(loss.item())
        np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), x_t.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("target_shape", [(4,), (2, 3), (2, 3, 2)])
def test_class_index_picks_each_samples_class(target_shape):
    from dyngraph.ops.nn import class_index

    rng = np.random.default_rng(0)
    target = rng.integers(0, 5, size=target_shape)
    logp = rng.standard_normal(target_shape[:1] + (5,) + target_shape[1:])
    picked = logp[class_index(np, target)]
    expected = np.take_along_axis(logp, np.expand_dims(target, 1), axis=1).squeeze(1)
    assert picked.shape == target.shape
    np.testing.assert_array_equal(picked, expected)


def test_class_target_shape_mismatch_is_explained():
    logits = dg.tensor(np.zeros((3, 4)), requires_grad=True)
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        F.cross_entropy(logits, dg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"expected a target of shape \(2, 5\)"):
        F.cross_entropy(dg.zeros(2, 3, 5), dg.tensor([[0, 1, 2, 0]] * 2))


def test_class_weight_must_have_one_entry_per_class():
    with pytest.raises(RuntimeError, match="weight should be a 1D tensor of 4 elements"):
        F.cross_entropy(dg.zeros(2, 4), dg.tensor([0, 1]), weight=dg.ones(3))


def test_one_hot_refuses_float_and_out_of_range():
    with pytest.raises(RuntimeError, match=r"one_hot is only applicable to index tensor.*long"):
        F.one_hot(dg.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(dg.tensor([0, 3]), num_classes=3)


# ---------------------------------------------------------------------------- argument errors


def test_dim_out_of_range_uses_pytorchs_wording():
    x = dg.zeros(2, 3)
    for call in (lambda: x.std(dim=2), lambda: x.cumsum(-3), lambda: x.sort(dim=5),
                 lambda: x.gather(2, dg.tensor([[0]]))):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                             r"of \[-2, 1\]"):
            call()


def test_gather_index_checks():
    x = dg.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"Expected dtype int64 for index.*\.long\(\)"):
        x.gather(1, dg.tensor([[0.0]]))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.gather(1, dg.tensor([[3]]))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.gather(1, dg.tensor([0]))


def test_matrix_only_ops_say_what_they_need():
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        dg.zeros(2, 3, 4).t()
    with pytest.raises(RuntimeError, match="mm: self must be a matrix"):
        dg.zeros(2, 3, 4).mm(dg.zeros(4, 2))
    with pytest.raises(RuntimeError, match="batch sizes differ"):
        dg.zeros(2, 3, 4).bmm(dg.zeros(3, 4, 2))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        dg.zeros(3).tril()


def test_einsum_is_one_node_and_checks_its_equation():
    a, b = dg.randn(2, 3, requires_grad=True), dg.randn(3, 4, requires_grad=True)
    out = dg.einsum("ij,jk->ik", a, b)
    assert out.grad_fn.name == "Einsum" and out.grad_fn.parents == (a, b)
    with pytest.raises(ValueError, match="2 operand"):
        dg.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="do not fit an operand with 2 dimension"):
        dg.einsum("ijk,jk->i", a, b)


def test_conv2d_is_one_node_and_checks_channels():
    x, w, b = dg.randn(1, 3, 5, 5), dg.randn(2, 3, 3, 3, requires_grad=True), dg.zeros(2)
    out = F.conv2d(x, w, b)
    assert out.grad_fn.name == "Conv" and out.shape == (1, 2, 3, 3)
    with pytest.raises(RuntimeError, match=r"expected input\[1, 4, 5, 5\] to have 3 channels"):
        F.conv2d(dg.randn(1, 4, 5, 5), w)


# -------------------------------------------- SmoothL1Loss and KLDivLoss (issue 37, fresh programs)

KL_INPUT = np.log(np.random.default_rng(3).dirichlet(np.ones(5), 4))   # log-probabilities
KL_TARGET = np.random.default_rng(4).dirichlet(np.ones(5), 4)
KL_TARGET[0, 2] = 0.0                                                  # a zero target: 0 log 0


@pytest.mark.torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_values_and_gradient_as_torch(torch, reduction, log_target):
    target = np.log(KL_TARGET + 0.01) if log_target else KL_TARGET
    results = []
    for lib in (dg, torch):
        x = lib.tensor(KL_INPUT, requires_grad=True)
        loss = lib.nn.KLDivLoss(reduction=reduction, log_target=log_target)(x, lib.tensor(target))
        (loss * lib.tensor(np.arange(1.0, 21.0).reshape(4, 5) if reduction == "none"
                           else 1.0)).sum().backward()
        results.append((loss.detach().numpy(), x.grad.numpy()))
    (mine, my_grad), (theirs, their_grad) = results
    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(my_grad, their_grad, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_gradients_against_finite_differences(log_target):
    target = dg.tensor(np.log(KL_TARGET + 0.01) if log_target else KL_TARGET)
    assert dg.gradcheck(lambda x: F.kl_div(x, target, reduction="batchmean",
                                           log_target=log_target),
                        (dg.tensor(KL_INPUT, requires_grad=True),))
    assert dg.gradgradcheck(lambda x: F.kl_div(x, target, reduction="sum",
                                               log_target=log_target),
                            (dg.tensor(KL_INPUT, requires_grad=True),))


def test_kl_div_loss_refuses_an_unknown_reduction():
    with pytest.raises(ValueError, match="'batchmean'"):
        dg.nn.KLDivLoss(reduction="average")
    with pytest.raises(ValueError, match="got 'batchmean'"):
        dg.nn.MSELoss(reduction="batchmean")


@pytest.mark.torch
@pytest.mark.parametrize("settings", [{}, {"beta": 0.5, "reduction": "sum"},
                                      {"beta": 0.0, "reduction": "none"}])
def test_smooth_l1_loss_module_as_torch(torch, settings):
    pred = np.random.default_rng(5).standard_normal((6, 2)) * 2
    target = np.random.default_rng(6).standard_normal((6, 2))
    results = []
    for lib in (dg, torch):
        x = lib.tensor(pred, requires_grad=True)
        loss = lib.nn.SmoothL1Loss(**settings)(x, lib.tensor(target))
        loss.sum().backward()
        results.append((loss.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
