"""Typical learner programs, each written once against a PyTorch-like module.

Every program is a function ``program(torch_like, same)`` in its own file, written the way a
learner writes PyTorch (``torch_like.tensor``, ``torch_like.nn``, ``torch_like.optim``,
``dim=``, ``keepdim=``, ``.data``, ``argmax``, ...). ``tests/test_transfer.py`` runs it twice,
once with ``torch_like = torch`` and once with ``torch_like = dyngraph``, and compares what it
returns: a dict of named results (losses, gradients, parameters; numbers, lists or tensors).

Two things must be the same on both sides and are not what a learner would write:

- data and hand-made weights come from numpy's seeded generator (``torch.randn`` and
  ``dg.randn`` draw different numbers), turned into tensors with ``torch_like.tensor``;
- a module's initial weights are made the same by ``same(model)``: the first run records its
  ``state_dict()``, the second loads it (PyTorch's keys and layouts, so it loads as is).
"""

from __future__ import annotations

from typing import Any

import numpy as np

PROGRAMS = [
    "autograd_basics",
    "poly_tensors",
    "poly_autograd",
    "poly_nn",
    "poly_optim",
    "micrograd_scalar",
    "makemore_mlp",
    "char_rnn",
    "self_attention",
    "mlp_adam",
    "tiny_cnn",
    "norm_layers",
    "step_lr",
    "clip_grad_lstm",
    # issue 37, item 5: whole programs from the material counted in docs/pytorch_inventory.md
    "quickstart_loader",
    "makemore_bigram",
    "nanogpt_step",
    "d2l_lazy_mlp",
    "d2l_lenet",
    "resnet_head",
    "dcgan_step",
    "fastai_hooks_onecycle",
    "examples_mnist",
    "split_save_load",
    "annotated_pieces",
    "upsample_groupnorm",
    # issue 37, done-when 4: a fresh set, written after the first 26 ran
    "word_language_model",
    "backprop_ninja",
    "d2l_attention_scoring",
    "seq2seq_attention",
    "char_rnn_classification",
    "d2l_from_scratch",
    "makemore_wavenet",
    "dqn_optimize",
    "time_sequence_lbfgs",
    "neural_style",
    "annotated_training",
    "fastai_accel_sgd",
    "what_is_torch_nn",
    "vae_step",
    "nanogpt_train_generate",
    "d2l_rnn_scratch",
    "examples_regression",
    # issue 37: a third set, written after the names PyTorch's material reaches for next
    "pinn_lbfgs",
    "kmeans_cdist",
    "conv_unfold_scratch",
    "warmup_cosine_schedulers",
    "mobilenet_block_kinks",
    "segnet_unpool",
]


class SameWeights:
    """``same(model)``: record a model's initial weights (first run), or load them (second)."""

    def __init__(self, recorded: list[dict[str, np.ndarray]] | None = None) -> None:
        self.recorded = [] if recorded is None else recorded
        self.replaying = recorded is not None
        self.calls = 0

    def __call__(self, model: Any) -> Any:
        if self.replaying:
            model.load_state_dict(self.recorded[self.calls])
        else:
            self.recorded.append({k: to_numpy(v) for k, v in model.state_dict().items()})
        self.calls += 1
        return model


def to_numpy(value: Any) -> Any:
    """A result as numpy: tensors of either library, lists of them, numbers."""
    if isinstance(value, (list, tuple)):
        return np.array([to_numpy(v) for v in value])
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "cpu"):
        value = value.cpu()
    if hasattr(value, "numpy"):
        return np.array(value.numpy())  # a copy: torch shares the memory of the tensor
    return np.asarray(value)
