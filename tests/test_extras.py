"""Every optional path names its extra when the package is missing (dyngraph/extras.py): the
widget, pages and plots say ``pip install "dyngraph[jupyter]"``, dyngraph.torch says
``[torch]``, a CUDA device says ``[gpu]``. A missing package is simulated in a child process by
an import finder that refuses it, so these tests run where the extras are installed too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dyngraph import extras

ROOT = Path(__file__).resolve().parents[1]

# The child refuses the named packages (as on a machine without them), runs the code, and prints
# the error it ends with as JSON.
CHILD = """\
import json, sys
MISSING = {missing!r}

class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in MISSING:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
import dyngraph as dg
try:
{code}
except Exception as exc:
    print(json.dumps({{"type": type(exc).__name__, "message": str(exc),
                      "import_error": isinstance(exc, ImportError),
                      "name": getattr(exc, "name", None)}}))
else:
    print(json.dumps({{"type": None}}))
"""

GRAPH = "x = dg.tensor([1.0], requires_grad=True)\n(x * 2).sum().backward()\n"
INSIDE = textwrap.indent(GRAPH, "    ")  # the same, as the body of a with block
PRETEND_KERNEL = (  # what dg.watch() sees in a notebook: an IPython with a kernel
    "import types\n"
    "ipython = types.ModuleType('IPython')\n"
    "ipython.get_ipython = lambda: types.SimpleNamespace(kernel=object())\n"
    "sys.modules['IPython'] = ipython\n"
)
WIDGET = "The live graph widget (dg.watch() in a notebook, GraphView, HTML pages)"


def child_command(extra: str) -> str:
    """What a child process run with this checkout on PYTHONPATH (run_without) says installs
    ``extra``: the checkout's own command (dyngraph is not on PyPI yet; extras.install_command)."""
    return f'pip install -e "{ROOT}[{extra}]"'


JUPYTER = child_command("jupyter")

CASES = {
    # name: (packages missing, code, what the message says needed it, the install command)
    "GraphView": (["anywidget"], "from dyngraph.jupyter import GraphView", WIDGET, JUPYTER),
    "GraphView-ormsgpack": (["ormsgpack"], "from dyngraph.jupyter import GraphView", WIDGET,
                            JUPYTER),
    "to_html": (["anywidget"], f"with dg.record() as rec:\n{INSIDE}rec.to_html('page.html')",
                WIDGET, JUPYTER),
    "watch-in-a-kernel": (["anywidget"], f"{PRETEND_KERNEL}with dg.watch():\n{INSIDE}", WIDGET,
                          JUPYTER),
    "watch-a-view-asked-for": (["anywidget"], f"with dg.watch(display=False):\n{INSIDE}",
                               WIDGET, JUPYTER),
    "watch-html": (["anywidget"], f"with dg.watch(html='page.html'):\n{INSIDE}",
                   "The HTML page of dg.watch(html=...)", JUPYTER),
    "load_ext": (["anywidget"], "dg.load_ipython_extension(None)", WIDGET, JUPYTER),
    "plot": (["matplotlib"], "import dyngraph.plot\ndyngraph.plot.graph_size_by_length([1], [2])",
             "dyngraph.plot (the lessons' figures)", JUPYTER),
    "torch": (["torch"], "import dyngraph.torch", "dyngraph.torch (PyTorch code as an event "
              "source)", child_command("torch")),
}


def run_without(missing: list[str], code: str, cwd: Path) -> dict:
    body = textwrap.indent(code, "    ")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(missing=tuple(missing), code=body)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", CASES)
def test_a_missing_package_is_reported_with_its_extra(case, tmp_path):
    missing, code, needed_for, command = CASES[case]
    if case == "GraphView-ormsgpack":  # GraphView imports anywidget first: it must be there
        pytest.importorskip("anywidget", reason="the jupyter extra is not installed")
    error = run_without(missing, code, tmp_path)
    assert error["type"] == "MissingExtra", error
    assert error["message"] == (f"{needed_for} needs the Python package '{missing[0]}', which "
                                f"is not installed: {command}")
    assert error["import_error"] and error["name"] == missing[0]  # code catching ImportError
    assert not (tmp_path / "page.html").exists()


def test_cuda_without_cupy_names_the_gpu_extra(tmp_path):
    error = run_without(["cupy"], "dg.zeros(2, device='cuda')", tmp_path)
    assert error["type"] == "RuntimeError"
    assert error["message"] == ("device 'cuda' was requested but no CUDA GPU is usable: install "
                                f"CuPy with `{child_command('gpu')}` on a machine with a "
                                "CUDA GPU")


def test_the_engine_runs_without_any_extra(tmp_path):
    missing = ["IPython", "ipywidgets", "anywidget", "ormsgpack", "matplotlib", "cupy", "torch"]
    assert run_without(missing, GRAPH, tmp_path) == {"type": None}


# ----------------------------------------------------------------------------- the helper


def test_require_returns_the_module():
    import json as json_module

    assert extras.require("json", "jupyter", "a test") is json_module


def test_require_of_a_missing_module_raises_missing_extra():
    with pytest.raises(extras.MissingExtra) as info:
        extras.require("dyngraph_no_such_package", "gpu", "Something")
    assert str(info.value) == ("Something needs the Python package 'dyngraph_no_such_package', "
                               f"which is not installed: {extras.install_command('gpu')}")
    assert info.value.name == "dyngraph_no_such_package" and info.value.extra == "gpu"
    assert isinstance(info.value, ModuleNotFoundError)


def test_a_missing_module_of_dyngraph_itself_is_a_bug_not_an_extra():
    with pytest.raises(ModuleNotFoundError) as info, extras.needs("jupyter", "Something"):
        import dyngraph.no_such_module  # noqa: F401
    assert type(info.value) is ModuleNotFoundError


def test_unknown_extras_are_refused():
    with pytest.raises(ValueError, match="jupyter, gpu, torch"):
        extras.install_command("gpus")


def test_the_extras_named_are_those_of_pyproject():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from "
                                                    "Python 3.11")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert set(extras.EXTRAS) <= set(project["optional-dependencies"])
    jupyter = " ".join(project["optional-dependencies"]["jupyter"])
    for package in ("anywidget", "ormsgpack", "matplotlib"):  # what the jupyter messages name
        assert package in jupyter


def test_the_lessons_say_which_extra_brings_pytorch(monkeypatch, capsys):
    from dyngraph.lessons import optional_torch

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails, as if not installed
    assert optional_torch() is None
    command = extras.install_command("torch")
    assert capsys.readouterr().out == (f"PyTorch is not installed: {command} to run the "
                                       "'Now in PyTorch' cells\n")


# ----------------------------------------------------------------------------- no warning of ours


def test_warnings_of_ours_fail_the_test_run():
    """pyproject.toml's filterwarnings: numpy's RuntimeWarnings and any warning issued by dyngraph
    or by a test are errors in the test run, so a new one cannot pass unseen."""
    import warnings

    import numpy as np

    with pytest.raises(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))  # numpy's warning, issued from this test
    with pytest.raises(UserWarning, match="ours"):
        warnings.warn_explicit("ours", UserWarning, "dyngraph/x.py", 1, module="dyngraph.x")
    with np.errstate(divide="ignore"):  # where the Inf is the point, a test says so
        assert np.log(np.zeros(1))[0] == -np.inf


def test_the_install_command_names_this_checkout_until_dyngraph_is_on_pypi(tmp_path):
    """`pip install "dyngraph[jupyter]"` finds nothing while dyngraph is not on PyPI: imported
    from its checkout, the command installs the extra from that checkout, from any directory."""
    import subprocess

    root = Path(extras.__file__).resolve().parent.parent
    command = extras.install_command("jupyter")
    if not (root / "pyproject.toml").exists():  # installed from a wheel (tools/python_matrix.py)
        assert command == 'pip install "dyngraph[jupyter]"'
    else:
        assert command == f'pip install -e "{root}[jupyter]"'
        # the shell hands pip the checkout's path with the extra as one argument
        parsed = subprocess.run(
            [sys.executable, "-c", "import shlex, sys; print(shlex.split(sys.argv[1])[3])",
             command], capture_output=True, text=True, check=True, cwd=tmp_path)
        assert parsed.stdout.strip() == f"{root}[jupyter]"
    # a dyngraph installed from a wheel names the package
    extras._checkout.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(extras, "__file__", str(tmp_path / "site-packages" / "dyngraph" /
                                                  "extras.py"))
            assert extras.install_command("torch") == 'pip install "dyngraph[torch]"'
    finally:
        extras._checkout.cache_clear()
