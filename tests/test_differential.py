"""The differential sweep (issue 37, item 1): every public name dyngraph shares with PyTorch, run
on both from the same numbers (tests/differential.py says how: the names, the cases, the
comparison of values, dtypes, aliasing, gradients and what raises).

Every shared name is covered by a case or listed in ``SKIP`` with its reason, and a test checks
that the two together are exactly the shared names. A case that still differs is listed in
``DIFFERENT`` with the precise difference and runs as a strict expected failure (it fails the
suite once it passes: strike it off then). ``LENIENT`` lists the cases where dyngraph runs what
PyTorch refuses, each with the reason; they are checked to stay so, both ways. ``FIXED``: the
differences this sweep found and dyngraph fixed.

The quick part runs a first case of every name (``make quick``); the sweep of every case is
marked slow.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

from differential import CASES, NAMESPACES, SPACES, compare, dg, outcome, shared_names  # noqa: E402

pytestmark = pytest.mark.torch

# Shared names with no case, each with its reason (reviewed: a name lands here only when the
# same program cannot mean the same thing in both libraries).
SKIP: dict[str, str] = {
    "Tensor.name": "dyngraph's own attribute (the variable name a graph shows); torch's is the "
                   "experimental named-tensor dimension name: two different things",
    "torch.set_printoptions": "printing: dyngraph's repr is its own (tests/test_tensor.py), "
                              "not torch's, by design",
}

# Cases that differ from torch today, with the precise difference (strict expected failures).
DIFFERENT: dict[str, str] = {
    "Tensor.__dlpack__[detached-leaf]": "by design (tensor.py's __dlpack__, NOTE [version "
    "counters]): memory a graph also holds is exported as a copy, so np.from_dlpack(x.detach()) "
    "of a leaf that requires grad does not share x's memory; torch's does (writes through it "
    "show in x there, not here)",
    "torch.autocast[enabled-cpu]": "autocast('cpu') enabled: torch computes float32 x @ w in "
    "bfloat16; dyngraph refuses with NotImplementedError (no lower precision to compute in, "
    "by design: dg.autocast's docstring; enabled=False runs in both)",
    **{f"{s}.nanmean[all-nan-column]": "the gradient of a mean over NaNs only (the value NaN "
       "in both): 0 for each entry here (NaN, masked out, as nansum's); torch's is NaN (its "
       "backward divides by the count, 0)" for s in ("torch", "Tensor")},
    "Tensor.pow[kinks-half-negative]": "x ** 0.5 at -inf (the value is NaN in both): PyTorch "
    "computes the gradient's x ** -0.5 as rsqrt, NaN; ours is numpy's power, 0",
}

# Cases where dyngraph runs what torch refuses: no torch program meets them, so no silent
# difference; each is checked to stay so (torch raises, dyngraph runs).
LENIENT: dict[str, str] = {
    **{f"{s}.{n}[{v}]": f"{n}(x, number): dyngraph takes a Python number as the other operand; "
       "torch wants a Tensor (torch.clamp_min/clamp_max take the number)"
       for s in ("torch", "Tensor") for n in ("maximum", "minimum")
       for v in ("scalar", "float32-scalar", "int-scalar", "int-float-scalar")},
    **{f"{s}.{n}[int64-all]": f"{n} of an integer tensor: dyngraph gives the float result numpy "
       "gives; torch refuses integers (x.float().{n}() in both)" for s in ("torch", "Tensor")
       for n in ("mean", "std", "norm")},
    "F.binary_cross_entropy_with_logits[pos_weight]": "a pos_weight that requires grad: "
    "dyngraph differentiates with respect to it; torch refuses",
    "Tensor.__array__[requires-grad]": "np.asarray of a tensor that requires grad: a read-only "
    "view here (tensor.py's __array__: numpy reads, it cannot write into the graph); torch "
    "refuses (tensor.detach().numpy())",
    "Tensor.__rmatmul__[array-left]": "numpy array @ tensor: dyngraph's __rmatmul__ takes the "
                                      "array as an operand; torch raises TypeError",
    "Tensor.__getitem__[negative-step]": "x[::-1]: a reversed view, as numpy's; torch refuses "
                                         "negative steps (x.flip(0))",
    "F.cross_entropy[weight]": "class weights that require grad: dyngraph differentiates with "
                               "respect to them; torch refuses",
    "torch.isclose[int-float]": "isclose of an int64 and a float64 tensor: dyngraph compares "
                                "the values (numpy promotes); torch wants one dtype",
    "Tensor.lerp[int-end]": "lerp of a float64 tensor towards an int64 end: dyngraph promotes; "
                            "torch wants end in self's dtype",
    "nn.utils.parameters_to_vector[non-contiguous]": "a non-contiguous parameter (a transposed "
    "view): dyngraph flattens it; torch's .view(-1) of it refuses",
}


# Differences this sweep found and dyngraph fixed, each run in the quick part.
FIXED: dict[str, str] = {
    "torch.where[condition-only]": "where(condition) alone is nonzero(condition, as_tuple=True)",
    "torch.device[type]": "dg.device('cpu').type and .index",
    "Tensor.device[type]": "x.device.type raised AttributeError: Tensor.device was the str "
                           "'cpu' (a dg.device now, still equal to 'cpu')",
    "torch.normal[tensor-mean]": "normal(mean tensor, std) samples in the mean's dtype (was "
                                 "float32)",
    "F.pad[negative]": "F.pad that only crops copied nothing: a view of its input (torch's pad "
                       "returns new memory)",
    "nn.Conv2d[float64-input]": "a float64 input to a float32 convolution ran (torch refuses, "
                                "as linear does here)",
    "F.conv2d[int-input]": "an int64 input to conv2d ran (torch refuses)",
    "autograd.backward[two-roots]": "autograd.backward([y, z], [None, g]) raised: it took one "
                                    "tensor only",
    "torch.manual_seed[draw]": "dg.manual_seed returned None; torch's returns the default "
                               "Generator (g = torch.manual_seed(0); g.manual_seed(1) failed)",
    "torch.manual_seed[reseeds-the-default]": "the same: reseeding through what it returns",
    "F.embedding[padding_idx]": "F.embedding and nn.Embedding had no padding_idx (the row that "
                                "gets no gradient; nn.Embedding starts it at zeros)",
    "nn.Embedding[padding_idx]": "the same, in the module",
    "nn.Embedding[padding-row-starts-at-zero]": "the same, at initialisation",
    "optim.SGD[maximize]": "the optimizers took no maximize= (TypeError); now each does, "
                           "and its param_groups hold it, as torch's",
    "optim.Adam[decoupled]": "Adam took no decoupled_weight_decay= (TypeError): AdamW is Adam "
                             "with it, and both param_groups hold it, as torch's",
    "F.avg_pool2d[pad]": "avg_pool2d(count_include_pad=False) raised NotImplementedError",
    "nn.utils.rnn.pad_packed_sequence[round-trip]": "pad_packed_sequence kept the padded "
    "input's values after each sequence's end (not padding_value) and its length (not "
    "max(lengths)) and passed gradients to them",
    "nn.utils.rnn.pack_padded_sequence[sorted]": "PackedSequence was (padded data, lengths), "
    "not torch's (data of the real steps, batch_sizes, sorted_indices, unsorted_indices): a "
    "program reading packed.data or packed.batch_sizes got other numbers",
    "torch.roll[bad]": "roll(x, (1, 2), 0), more shifts than dims, ran (the extra shift "
                       "dropped); torch raises",
    "Tensor.__floordiv__[int-float-number]": "an int64 tensor // a Python float was float64 "
    "(numpy's), not PyTorch's default float32 (NOTE [type promotion])",
    "Tensor.__rfloordiv__[int]": "2.5 // an int64 tensor: the same",
    "Tensor.__rmod__[int]": "2.5 % an int64 tensor cast 2.5 to int64 (computed 2 % x, int64); "
                            "now float32, as torch",
    "torch.bernoulli[bad-probability]": "probabilities outside [0, 1] drew as if clipped; torch "
                                        "raises",
    "F.glu[bad-odd]": "glu of an odd-sized dimension ran: the halves (2 and 1 of 3) broadcast "
                      "into a wrong result; torch raises",
    "optim.Adagrad[maximize]": "Adagrad took no maximize= (TypeError), and its param_groups "
                               "lacked it (checkpoint keys differed)",
    "optim.LBFGS[plain]": "LBFGS's state (a checkpoint) lacked torch's 'al', the two-loop "
                          "recursion's coefficients",
    "optim.LBFGS[strong-wolfe]": "line_search_fn='strong_wolfe' raised NotImplementedError "
                                 "(the fixed step only); now PyTorch's strong Wolfe line search",
    **{f"Tensor.{n}[{v}]": "x // y of float tensors that require grad was outside the graph "
       "(backward left the grads None); torch's is in the graph and its backward raises: now "
       "FloorDivide's does too" for n, v in (("__floordiv__", "broadcast"),
                                             ("__floordiv__", "number"),
                                             ("__rfloordiv__", "float"))},
    **{f"{n}[kinks]": "the gradient at a kink, at NaN or at an infinity differed: hardtanh and "
       "relu6 passed it at their bounds (torch: 0), prelu used 1 at 0 (torch: the slope), "
       "hardsigmoid and hardswish at +-3; relu, elu, selu and celu stopped a NaN's gradient "
       "(torch passes it); abs gave NaN at NaN and sign(NaN) was NaN (torch: 0); max, min "
       "and max(dim) sent no gradient to a NaN maximum (torch: to the NaNs); topk and "
       "descending sort put NaN last (torch: first, the largest); clamp with tensor bounds, "
       "maximum and minimum treated NaN unlike torch; logit's gradient was NaN at 0 and 1 "
       "(torch: inf)"
       for n in ("Tensor.relu", "F.relu6", "F.hardtanh", "F.hardsigmoid", "F.hardswish",
                 "F.elu", "F.selu", "F.celu", "F.prelu", "Tensor.abs", "Tensor.sign",
                 "Tensor.max", "Tensor.min", "Tensor.topk", "torch.maximum", "torch.minimum",
                 "Tensor.logit")},
    "Tensor.sum[empty-softmax]": "softmax, log_softmax and logsumexp over an empty dimension "
    "raised (numpy's max of nothing); torch gives an empty result (and -inf)",
    "Tensor.sum[empty-prod]": "backward of prod over an empty dimension raised ValueError",
    "Tensor.sum[empty-mean]": "the mean of nothing warned (numpy's 'Mean of empty slice'); "
                              "torch's is NaN, silently",
    "Tensor.sum[0-d-max]": "max(0) of a 0-d tensor gave a tensor, not (values, indices)",
    "Tensor.__rmod__[float]": "2.5 % x of a float tensor that requires grad was "
    "differentiated (gradient -floor(2.5 / x)); torch's backward raises (no derivative of a "
    "number's remainder by a tensor), and now RemainderOfNumber's",
    "Tensor.logit[outside]": "logit of p outside [0, 1] (the value NaN in both): the gradient "
    "was finite (1/p + 1/(1 - p)); torch's is NaN, and now Logit's",
    **{f"Tensor.{n}[outside]": "asin and acos of +-inf (the value NaN in both): the gradient "
       "was 0 (numpy's (-inf) ** -0.5); torch's is NaN, and now ours (1 / (1 - x^2) ** 0.5)"
       for n in ("asin", "acos")},
}


def test_every_shared_name_is_covered_or_skipped_with_a_reason():
    shared = set(shared_names())
    namespaces = {n for n in shared if n in NAMESPACES}
    assert all(NAMESPACES[n] in SPACES for n in namespaces)
    covered = {c.name for c in CASES} | namespaces
    extra = covered - shared
    assert not extra, f"cases for names that are not shared: {sorted(extra)}"
    assert not covered & set(SKIP), f"covered and skipped: {sorted(covered & set(SKIP))}"
    unshared = set(SKIP) - shared
    assert not unshared, f"skipped names that are not shared: {sorted(unshared)}"
    missing = shared - covered - set(SKIP)
    assert not missing, f"shared names with no case and no reason: {sorted(missing)}"
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    listed = set(DIFFERENT) | set(LENIENT) | set(FIXED)
    assert not listed - set(ids), f"listed cases that do not exist: {sorted(listed - set(ids))}"


def _param(case):
    if case.id in DIFFERENT:
        return pytest.param(case, id=case.id, marks=pytest.mark.xfail(
            strict=True, reason=DIFFERENT[case.id]))
    return pytest.param(case, id=case.id)


RUN = [c for c in CASES if c.id not in LENIENT and c.id not in FIXED]
FIRST = {}
for _case in RUN:
    if _case.id not in DIFFERENT:
        FIRST.setdefault(_case.name, _case)
QUICK = list(FIRST.values())
SWEEP = [c for c in RUN if c not in QUICK]


@pytest.mark.parametrize("case", [_param(c) for c in QUICK])
def test_a_first_case_of_every_name_matches_torch(case):
    compare(case, torch)


@pytest.mark.slow
@pytest.mark.parametrize("case", [_param(c) for c in SWEEP])
def test_every_other_case_matches_torch(case):
    compare(case, torch)


@pytest.mark.parametrize("case_id", list(FIXED))
def test_the_differences_found_and_fixed_stay_fixed(case_id):
    (case,) = [c for c in CASES if c.id == case_id]
    compare(case, torch)


@pytest.mark.parametrize("case_id", list(LENIENT))
def test_dyngraph_runs_what_torch_refuses_only_where_listed(case_id):
    (case,) = [c for c in CASES if c.id == case_id]
    assert outcome(torch, case).raised, "torch runs it now: move the case out of LENIENT"
    assert outcome(dg, case).raised is None
