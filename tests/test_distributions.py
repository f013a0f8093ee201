"""dg.distributions (issue 37: the last names of the counted inventory): Categorical and Binomial
with PyTorch's log_prob, entropy, mean and variance, and their gradients, checked against
torch.distributions; samples are dyngraph's own draws (NOTE [samples are dyngraph's])."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dyngraph as dg

torch = pytest.importorskip("torch", reason="these compare with torch.distributions "
                                            "(pip install torch==2.13.0)")
D = dg.distributions
TD = torch.distributions

PROBS = [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]
LOGITS = [[0.3, -1.2, 2.0], [1.0, 0.0, -0.5]]


def both(values):
    """The same float64 leaf in dyngraph and in torch."""
    return (dg.tensor(np.array(values), dtype=dg.float64, requires_grad=True),
            torch.tensor(values, dtype=torch.float64, requires_grad=True))


@pytest.mark.parametrize("how", ["probs", "logits"])
def test_categorical_log_prob_and_entropy_and_their_gradients_are_torchs(how):
    ours, theirs = both(PROBS if how == "probs" else LOGITS)
    m, t = D.Categorical(**{how: ours}), TD.Categorical(**{how: theirs})
    action = [[2, 0], [1, 1]]  # two draws of each row
    lp = m.log_prob(dg.tensor(action))
    tlp = t.log_prob(torch.tensor(action))
    np.testing.assert_allclose(lp.detach().numpy(), tlp.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(m.entropy().detach().numpy(), t.entropy().detach().numpy(),
                               rtol=1e-12)
    (lp.sum() * 3 + m.entropy().sum()).backward()
    (tlp.sum() * 3 + t.entropy().sum()).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_the_policy_gradient_of_pytorch_examples_reinforce():
    """pytorch/examples' reinforce.py: m = Categorical(probs); loss = -m.log_prob(a) * reward."""
    logits_d, logits_t = both([0.2, -0.4, 1.1])
    m, t = D.Categorical(logits=logits_d), TD.Categorical(logits=logits_t)
    (-m.log_prob(dg.tensor(1)) * 2.5).backward()
    (-t.log_prob(torch.tensor(1)) * 2.5).backward()
    np.testing.assert_allclose(logits_d.grad.numpy(), logits_t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("how", ["probs", "logits"])
def test_binomial_log_prob_entropy_mean_variance_and_gradients_are_torchs(how):
    ours, theirs = both([0.3, 0.6, 0.9] if how == "probs" else [-0.8, 0.4, 2.2])
    m, t = D.Binomial(10, **{how: ours}), TD.Binomial(10, **{how: theirs})
    k = [3.0, 7.0, 10.0]
    lp, tlp = m.log_prob(dg.tensor(k)), t.log_prob(torch.tensor(k))
    # (ours is exact in float64: log 120 + 3 log 0.3 + 7 log 0.7 = -1.32115127776689; torch's
    # own, by another path through its logits, is within 5e-7 of it)
    np.testing.assert_allclose(lp.detach().numpy(), tlp.detach().numpy(), rtol=1e-6)
    p = 1 / (1 + np.exp(-m.logits.detach().numpy()))
    exact = [math.log(math.comb(10, int(n))) + n * math.log(q) + (10 - n) * math.log(1 - q)
             for n, q in zip(k, p)]
    np.testing.assert_allclose(lp.detach().numpy(), exact, rtol=1e-12)
    for ours_v, theirs_v in ((m.entropy(), t.entropy()), (m.mean, t.mean),
                             (m.variance, t.variance)):
        np.testing.assert_allclose(ours_v.detach().numpy(), theirs_v.detach().numpy(), rtol=1e-6)
    (lp.sum() + m.entropy().sum() + m.variance.sum()).backward()
    (tlp.sum() + t.entropy().sum() + t.variance.sum()).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


def test_log_prob_gradients_match_finite_differences():
    logits = dg.tensor(np.array([0.3, -1.2, 2.0]), dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradcheck(
        lambda z: D.Categorical(logits=z).log_prob(dg.tensor([2, 0])).sum()
        + D.Categorical(logits=z).entropy(), (logits,))
    p = dg.tensor(np.array([0.3, 0.6]), dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradcheck(lambda q: D.Binomial(5, probs=q).log_prob(dg.tensor([1.0, 4.0]))
                                 .sum(), (p,))


def test_samples_have_the_shape_and_the_support_torchs_have():
    dg.manual_seed(0)
    m = D.Categorical(probs=dg.tensor(PROBS))
    draws = m.sample((1000,))
    assert draws.shape == (1000, 2) and draws.dtype == dg.int64
    assert set(np.unique(draws.numpy())) <= {0, 1, 2}
    # the first row's frequencies are its probabilities, roughly
    freq = np.bincount(draws.numpy()[:, 0], minlength=3) / 1000
    np.testing.assert_allclose(freq, PROBS[0], atol=0.05)
    b = D.Binomial(10, probs=dg.tensor([0.3, 0.6]))
    counts = b.sample((500,))
    assert counts.shape == (500, 2) and counts.dtype == dg.float32
    assert counts.numpy().min() >= 0 and counts.numpy().max() <= 10
    np.testing.assert_allclose(counts.numpy().mean(0), [3.0, 6.0], atol=0.3)
    g = dg.Generator().manual_seed(7)
    assert m.sample((5,), generator=g).shape == (5, 2)


def test_either_probs_or_logits_is_asked_for_by_name():
    with pytest.raises(ValueError, match="Categorical: give either probs or logits"):
        D.Categorical()
    with pytest.raises(ValueError, match="Binomial: give either probs or logits"):
        D.Binomial(3, probs=dg.tensor([0.5]), logits=dg.tensor([0.0]))
