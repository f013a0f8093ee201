"""A PyTorch name dyngraph does not have yet says so (issue 37, item 4; NOTE [missing names] in
dyngraph/missing.py): an AttributeError that names PyTorch's spelling, says dyngraph does not
have it yet and suggests the nearest names dyngraph has, from ``dg``, ``dg.nn``,
``dg.nn.functional``, ``dg.optim``, a tensor and a module; never an error from inside dyngraph.
The sweep at the end asks for every public name of PyTorch's that dyngraph lacks."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import traceback
from typing import Any

import pytest

import dyngraph as dg
import dyngraph.nn.functional as F

# (what the learner writes, PyTorch's spelling in the message, a suggestion it must make or None)
MISSING = [
    (lambda: dg.vander, "torch.vander", None),
    (lambda: dg.nn.LPPool2d, "torch.nn.LPPool2d", None),
    (lambda: dg.nn.ConvTranspose3d, "torch.nn.ConvTranspose3d", "dg.nn.ConvTranspose2d"),
    (lambda: dg.nn.MaxPool3d, "torch.nn.MaxPool3d", "dg.nn.MaxPool2d"),
    (lambda: F.conv_transpose3d, "torch.nn.functional.conv_transpose3d", "F.conv_transpose2d"),
    (lambda: F.grid_sample, "torch.nn.functional.grid_sample", None),
    (lambda: dg.optim.SparseAdam, "torch.optim.SparseAdam", None),
    (lambda: dg.optim.Adafactor, "torch.optim.Adafactor", None),
    (lambda: dg.tensor([1.0]).logaddexp2, "Tensor.logaddexp2", "x.logaddexp"),
    (lambda: dg.tensor([1.0]).masked_scatter_, "Tensor.masked_scatter_", None),
    (lambda: dg.nn.Parameter(dg.zeros(2)).index_copy_, "Tensor.index_copy_", None),
    (lambda: dg.nn.Linear(2, 2).register_full_backward_pre_hook,
     "nn.Module.register_full_backward_pre_hook", None),
    (lambda: dg.nn.Linear(2, 2).get_parameter, "nn.Module.get_parameter", None),
]


@pytest.mark.parametrize("access, torch_name, suggestion", MISSING,
                         ids=[name for _, name, _ in MISSING])
def test_a_missing_pytorch_name_says_so_and_suggests_the_nearest(access, torch_name, suggestion):
    with pytest.raises(AttributeError) as info:
        access()
    message = str(info.value)
    assert f"dyngraph does not have PyTorch's {torch_name} yet" in message
    if suggestion is not None:
        assert f"The nearest it has: {suggestion}" in message or f", {suggestion}" in message
    # Python adds no "Did you mean" of its own to ours (the exception carries the name)
    printed = "".join(traceback.format_exception_only(type(info.value), info.value))
    assert "Did you mean" not in printed
    assert info.value.name == torch_name.rsplit(".", 1)[-1]


def test_a_name_built_on_one_dyngraph_has_suggests_that_one():
    with pytest.raises(AttributeError, match=r"nearest it has: x\.floor\b"):
        dg.tensor([1.0]).floor_  # noqa: B018
    with pytest.raises(AttributeError, match=r"nearest it has: dg\.tensor"):
        dg.tenosr  # noqa: B018


def test_missing_names_behave_as_missing_attributes_everywhere_else():
    x = dg.tensor([1.0, 2.0])
    assert not hasattr(dg, "vander") and getattr(dg.nn, "LPPool2d", 7) == 7
    assert not hasattr(x, "masked_scatter_") and getattr(F, "grid_sample", None) is None
    # probes of numpy, IPython, copy and pickle get the plain message, at once
    for owner, name in [(x, "__array_interface__"), (x, "_repr_html_"), (dg, "__wrapped__"),
                        (dg.nn.Linear(1, 1), "_ipython_display_")]:
        with pytest.raises(AttributeError) as info:
            getattr(owner, name)
        assert "dyngraph does not have" not in str(info.value)
    assert copy.deepcopy(x).tolist() == [1.0, 2.0]
    assert pickle.loads(pickle.dumps(dg.nn.Linear(2, 1))).weight.shape == (1, 2)
    # a missing submodule is still imported the ordinary way
    from dyngraph import trace

    assert callable(trace)


def test_a_learners_own_typo_on_a_module_keeps_pythons_message():
    class Net(dg.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = dg.nn.Linear(2, 2)

    net = Net()
    with pytest.raises(AttributeError) as info:
        net.fc2  # noqa: B018
    assert "dyngraph does not have" not in str(info.value)
    assert info.value.name == "fc2" and info.value.obj is net  # what Python's suggestion reads


def test_python_prints_our_suggestion_alone_and_its_own_for_a_typo():
    program = (
        "import dyngraph as dg\n"
        "class Net(dg.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc1 = dg.nn.Linear(2, 2)\n"
        "for access in (lambda: dg.nn.ConvTranspose3d, lambda: Net().fc2):\n"
        "    try:\n"
        "        access()\n"
        "    except AttributeError:\n"
        "        import sys, traceback\n"
        "        traceback.print_exc()\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=120, check=True)
    first, second = result.stderr.split("Traceback")[1:]
    assert "The nearest it has: dg.nn.ConvTranspose2d" in first and "Did you mean" not in first
    if sys.version_info >= (3, 12):  # 3.10 and 3.11 print suggestions only for uncaught errors
        assert "Did you mean: 'fc1'?" in second


def test_a_property_that_fails_inside_keeps_its_own_error():
    class Odd(dg.Tensor):
        __slots__ = ()

        @property
        def broken(self) -> Any:
            raise AttributeError("the property's own message")

    with pytest.raises(AttributeError, match="the property's own message"):
        Odd([1.0]).broken  # noqa: B018


def _torch() -> Any:
    return pytest.importorskip("torch", reason="the sweep lists PyTorch's own names")


@pytest.mark.torch
@pytest.mark.parametrize("where", ["torch", "torch.nn", "torch.nn.functional", "torch.optim",
                                   "torch.optim.lr_scheduler", "Tensor"])
def test_every_pytorch_name_dyngraph_lacks_raises_a_helpful_attribute_error(where):
    """Every public name of PyTorch's that dyngraph does not have: an AttributeError naming it
    (never another exception), with PyTorch's spelling."""
    torch = _torch()
    import importlib

    if where == "Tensor":
        theirs, mine, spelled = torch.Tensor, dg.tensor([1.0]), "Tensor"
    else:
        theirs = importlib.import_module(where)
        mine = importlib.import_module(where.replace("torch", "dyngraph", 1))
        spelled = where
    names = [n for n in dir(theirs) if not n.startswith("_")]
    lacking = [n for n in names if not hasattr(mine, n)]
    assert lacking, "dyngraph has every name: the sweep checks nothing"
    for name in lacking:
        with pytest.raises(AttributeError) as info:
            getattr(mine, name)
        assert f"{spelled}.{name}" in str(info.value), name
