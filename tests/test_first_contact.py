"""First contact: the README's commands work as written on a fresh machine.

A new user installs the core (numpy only) and pastes "The API in 20 lines". That block must run
to its end there: it is run here in a child Python where every package of an extra (anywidget,
IPython, ipywidgets, ormsgpack, matplotlib, Graphviz's Python packages, torch, ...) fails to
import, as on a core install. The README's block for the jupyter extra runs with everything
installed. The Quick start names only make targets the Makefile has, and no command installs
from an index the package is not on.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

# What a core install (`pip install -e .`: numpy alone) does not have. Blocked by name, with
# every submodule, so an import of any of them fails as it would there.
NOT_IN_THE_CORE = ("anywidget", "ipywidgets", "IPython", "ipykernel", "traitlets", "ormsgpack",
                   "matplotlib", "graphviz", "pygraphviz", "jupyterlab", "notebook", "tqdm",
                   "torch", "cupy", "comm")

BLOCKER = textwrap.dedent("""\
    import sys

    class CoreInstallOnly:
        \"\"\"Import hook: the packages of dyngraph's extras are not installed.\"\"\"
        blocked = {blocked!r}

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.blocked:
                raise ModuleNotFoundError(f"No module named {{name!r}} (a core install)",
                                          name=name)
            return None

    sys.meta_path.insert(0, CoreInstallOnly())
    """)


def readme_block(heading: str, index: int = 0) -> str:
    """The ``index``-th ```python block under the README's ``## heading`` (up to the next ##)."""
    text = README.read_text(encoding="utf-8")
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert section, f"the README has no '## {heading}' section"
    blocks = re.findall(r"```python\n(.*?)```", section.group(1), re.S)
    assert len(blocks) > index, f"'## {heading}' has no python block number {index + 1}"
    return blocks[index]


def run_python(code: str, cwd: Path, core_only: bool) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python of this venv (from ``cwd``), as a core install would
    when ``core_only``."""
    if core_only:
        code = BLOCKER.format(blocked=set(NOT_IN_THE_CORE)) + code
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_the_blocker_makes_a_core_install(tmp_path):
    """The check below would prove nothing if the blocked packages still imported."""
    run = run_python("import anywidget", tmp_path, core_only=True)
    assert run.returncode != 0 and "a core install" in run.stderr
    run = run_python("import dyngraph, numpy; print('ok')", tmp_path, core_only=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


def test_the_api_in_20_lines_runs_on_the_core_install(tmp_path):
    block = readme_block("The API in 20 lines")
    # NOTE: dg.watch(pace=0.3) outside a notebook prints a text outline and waits 0.3 s per
    # line: the block runs as written, pauses included.
    run = run_python(block + "\nprint('THE END')\n", tmp_path, core_only=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.rstrip().endswith("THE END")
    assert (tmp_path / "run.json").exists(), "the block saves a recording as it says"


def test_the_api_blocks_jupyter_part_writes_a_page_with_the_extra(tmp_path):
    pytest.importorskip("anywidget", reason="the jupyter extra is not installed here")
    core = readme_block("The API in 20 lines")
    extra = readme_block("The API in 20 lines", index=1)
    text = README.read_text(encoding="utf-8")
    lead_in = text[:text.index(extra)][-300:]
    assert '".[jupyter]"' in lead_in, "the block that writes a page names its extra just before"
    run = run_python(core + extra, tmp_path, core_only=False)
    assert run.returncode == 0, run.stderr[-3000:]
    page = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert "mountStandalone" in page


def test_writing_a_page_on_the_core_install_names_the_extra_in_one_line(tmp_path):
    code = textwrap.dedent("""\
        import dyngraph as dg
        with dg.record() as rec:
            (dg.tensor([1.0], requires_grad=True) * 2).sum()
        try:
            rec.to_html("run.html")
        except ImportError as error:
            print(str(error))
        """)
    run = run_python(code, tmp_path, core_only=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert 'pip install "dyngraph[jupyter]"' in run.stdout or "[jupyter]" in run.stdout, run.stdout


def test_the_readme_installs_from_the_checkout_not_from_an_index():
    text = README.read_text(encoding="utf-8")
    # `pip install dyngraph` (with or without an extra) finds nothing: not published yet
    from_index = [line for line in text.splitlines()
                  if re.search(r"pip install [\"']?dyngraph\b", line)
                  and "finds nothing" not in line]  # the line that says so may name it
    assert not from_index, f"the README installs from PyPI, where dyngraph is not: {from_index}"
    assert "pip install -e ." in text


def test_the_quick_start_names_only_targets_the_makefile_has():
    text = README.read_text(encoding="utf-8")
    quick = re.search(r"## Quick start\n.*?```bash\n(.*?)```", text, re.S)
    assert quick
    targets = re.findall(r"^make (\w+)", quick.group(1), re.M)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert targets
    for target in targets:
        assert re.search(rf"^{target}:", makefile, re.M), f"make {target}: no such target"


@pytest.mark.slow
def test_make_lab_prints_the_tours_url_with_its_token(tmp_path):
    """`make lab` on a headless machine (no browser to open; as root here too) prints a URL that
    opens the tour, token included, not a bare /lab."""
    import os
    import select
    import time

    up_to_date = subprocess.run(["make", "-q", ".venv/.installed"], cwd=ROOT,
                                capture_output=True, timeout=60).returncode == 0
    if not up_to_date:
        pytest.skip("make lab would (re)install .venv first: run `make venv`, then this test")
    log = tmp_path / "lab.log"
    with log.open("w") as out:
        lab = subprocess.Popen(
            ["make", "--no-print-directory", "lab", "LAB_ARGS=--no-browser --port=0"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "JUPYTER_PLATFORM_DIRS": "1"})
    try:
        deadline = time.monotonic() + 90
        url = None
        while url is None and time.monotonic() < deadline and lab.poll() is None:
            select.select([], [], [], 0.5)
            url = re.search(r"http://127\.0\.0\.1:\d+/\S+", log.read_text())
        assert url, log.read_text()[-2000:]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/lab/tree/notebooks/00_tour\.ipynb"
                            r"\?token=[0-9a-f]+", url.group(0)), url.group(0)
    finally:
        os.killpg(lab.pid, 15)
        lab.wait(timeout=30)


def _load_run_tests():
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_tests", ROOT / "tools" / "run_tests.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_make_test_ends_with_one_summary_of_counts_and_grouped_skip_reasons(tmp_path):
    """`make test` (tools/run_tests.py) reads each stage's JUnit file, pytest's and node's alike,
    and ends with a few lines: counts per stage, each skip reason once with its count."""
    run_tests = _load_run_tests()
    (tmp_path / "test_some.py").write_text(textwrap.dedent("""\
        import pytest

        def test_passes():
            assert 1 + 1 == 2

        @pytest.mark.parametrize("n", [1, 2, 3])
        def test_needs_a_gpu(n):
            pytest.skip("no GPU here")

        def test_fails():
            assert 1 + 1 == 3
        """))
    junit = tmp_path / "py.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    str(tmp_path / "test_some.py"), f"--junitxml={junit}"],
                   cwd=tmp_path, capture_output=True, timeout=120)
    counts, reasons = run_tests.read_junit(junit)
    assert counts == {"passed": 1, "skipped": 3, "failed": 1}
    assert reasons == {"no GPU here": 3}

    stages = [run_tests.Stage("python", [], junit)]
    if run_tests.shutil.which("node"):
        (tmp_path / "some.test.js").write_text(textwrap.dedent("""\
            import test from "node:test";
            test("adds", () => {});
            test("needs WebGPU", { skip: "no WebGPU in node" }, () => {});
            """))
        node_junit = tmp_path / "node.xml"
        subprocess.run(["node", "--test", "--test-reporter=dot",
                        "--test-reporter-destination=stdout", "--test-reporter=junit",
                        f"--test-reporter-destination={node_junit}", "some.test.js"],
                       cwd=tmp_path, capture_output=True, timeout=120)
        counts, reasons = run_tests.read_junit(node_junit)
        assert counts == {"passed": 1, "skipped": 1} and reasons == {"no WebGPU in node": 1}
        stages.append(run_tests.Stage("node", [], node_junit))

    summary = run_tests.report([run_tests.summarize(s, 1 if s.name == "python" else 0)
                                for s in stages])
    assert "FAILED: python" in summary
    assert "3 x [python] no GPU here" in summary
    assert len(summary.splitlines()) <= 12


def test_make_test_installs_the_widget_packages_before_the_tests_that_run_widget_modules():
    """tests/ runs widgets/src/structure.js in Node (test_static_pictures.py), whose imports need
    widgets/node_modules: on a clean clone `npm ci` has to come before pytest (a CI run failed
    when it came after)."""
    run_tests = _load_run_tests()
    names = [stage.name for stage in run_tests.stages(sys.executable)]
    assert names.index("widgets: npm ci") < names.index("tests/ (pytest)")
    assert names.index("widgets: npm ci") < names.index("widgets (node --test)")
