"""Binder: check the one-click environment as far as this machine allows.

repo2docker itself needs Docker, which this machine does not have, so the test does what it
would do with the repository's binder/ folder: a fresh virtualenv with binder/requirements.txt
installed, postBuild run, and the tour executed there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs tomli on 3.10")

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def test_binder_files_say_what_repo2docker_needs():
    requirements = (BINDER / "requirements.txt").read_text().split()
    assert "-e" in requirements and ".[jupyter]" in requirements
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    assert "graphviz" in (BINDER / "apt.txt").read_text().split()
    assert os.access(BINDER / "postBuild", os.X_OK)


BADGE = re.compile(r"https://mybinder\.org/v2/gh/(?P<repo>[\w.-]+/[\w.-]+)/(?P<ref>[\w.-]+)"
                   r"\?urlpath=lab/tree/(?P<path>[^)\s]+)")


def test_readme_badge_opens_the_tour_in_jupyterlab():
    badge = BADGE.search((ROOT / "README.md").read_text())
    assert badge, "the README has a Binder badge that opens a notebook in JupyterLab"
    assert badge["path"] == "notebooks/00_tour.ipynb"
    assert (ROOT / badge["path"]).is_file(), "the badge opens a notebook the repository has"


def _origin_on_github() -> str | None:
    """owner/name of the repository's GitHub remote ``origin``, or None (no git, no remote, or
    a remote elsewhere)."""
    try:
        url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=ROOT, text=True,
                             capture_output=True, timeout=10).stdout.strip()
    except OSError:
        return None
    found = re.search(r"github\.com[:/](?P<repo>[\w.-]+/[\w.-]+?)(?:\.git)?/?$", url)
    return found["repo"] if found else None


def test_readme_badge_is_built_for_the_repository_it_lives_in():
    """A fork changes the badge's owner/name (the README says so beside it); this test says
    when it has not."""
    origin = _origin_on_github()
    if origin is None:
        pytest.skip("no GitHub remote 'origin' here: nothing to hold the badge's owner/name to")
    badge = BADGE.search((ROOT / "README.md").read_text())
    assert badge and badge["repo"].lower() == origin.lower(), (
        f"the Binder badge launches {badge and badge['repo']}, but this repository is {origin}:"
        f" edit the badge's URL in README.md")


def test_binder_files_are_what_repo2docker_reads():
    """repo2docker pip-installs requirements.txt, picks the Python runtime.txt names, and runs
    postBuild as an executable (a bash script, stopped at its first failing command)."""
    lines = [line.strip() for line in (BINDER / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert lines == ["-e .[jupyter]"], lines
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert "jupyter" in extras

    runtime = re.fullmatch(r"python-(\d+\.\d+)", (BINDER / "runtime.txt").read_text().strip())
    assert runtime, "runtime.txt is 'python-X.Y'"
    classifiers = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["classifiers"]
    assert f"Programming Language :: Python :: {runtime[1]}" in classifiers, (
        "Binder runs a Python the project tests")


def test_postbuild_runs_under_bash_e_and_writes_labs_settings(tmp_path):
    postbuild = BINDER / "postBuild"
    assert os.access(postbuild, os.X_OK)
    assert postbuild.read_text().startswith("#!/bin/bash")
    prefix = tmp_path / "prefix"
    run = subprocess.run(["bash", "-e", str(postbuild)], capture_output=True, text=True,
                         env={**os.environ, "NB_PYTHON_PREFIX": str(prefix)}, timeout=60)
    assert run.returncode == 0, run.stderr
    overrides = json.loads((prefix / "share/jupyter/lab/settings/overrides.json").read_text())
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    # a lesson saved in Binder's (or `make lab`'s) JupyterLab keeps its graphs
    assert overrides["@jupyter-widgets/jupyterlab-manager:plugin"]["saveState"] is True


@pytest.mark.slow
@pytest.mark.skipif(not (ROOT / "notebooks" / "00_tour.ipynb").exists(), reason="no tour yet")
def test_the_tour_runs_in_a_fresh_binder_environment(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "-r", "binder/requirements.txt"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert install.returncode == 0, install.stderr[-2000:]

    env = {**os.environ, "NB_PYTHON_PREFIX": str(venv)}
    subprocess.run([str(BINDER / "postBuild")], check=True, env=env, timeout=60)
    overrides = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    settings = json.loads(overrides.read_text())
    assert settings["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"

    executed = tmp_path / "tour.ipynb"
    run = subprocess.run(
        [str(venv / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.store_widget_state=False",
         "--ExecutePreprocessor.timeout=120", "--output", str(executed),
         str(ROOT / "notebooks" / "00_tour.ipynb")],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "JUPYTER_PLATFORM_DIRS": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    cells = json.loads(executed.read_text())["cells"]
    errors = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
