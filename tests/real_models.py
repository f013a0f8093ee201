"""The three real models of issue 40 (ResNet-18, a nanoGPT-style transformer, a recursive
TreeNet), under the name the tests import (``import real_models``, tests/ on ``sys.path``; the
browser tests do it in a notebook cell). They are defined in benchmarks/real_models.py, which
W7 times, since the benchmarks do not import from tests/; this module only re-exports them."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])  # the repository, which holds benchmarks/
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.real_models import (  # noqa: E402, F401
    CASES,
    GPT,
    MLP,
    TREE_A,
    TREE_B,
    BasicBlock,
    Block,
    CausalSelfAttention,
    ResNet,
    TreeNet,
    gpt_case,
    resnet18_case,
    treenet_case,
)
