"""Binder: check the one-click environment as far as this machine allows.

repo2docker itself needs Docker, which this machine does not have, so the test does what it
would do with the repository's binder/ folder: a fresh virtualenv with binder/requirements.txt
installed, postBuild run, and the tour executed there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def test_binder_files_say_what_repo2docker_needs():
    requirements = (BINDER / "requirements.txt").read_text().split()
    assert "-e" in requirements and ".[jupyter]" in requirements
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    assert "graphviz" in (BINDER / "apt.txt").read_text().split()
    assert os.access(BINDER / "postBuild", os.X_OK)


def test_readme_badge_opens_the_tour_in_jupyterlab():
    readme = (ROOT / "README.md").read_text()
    assert "mybinder.org/v2/gh/" in readme
    assert "urlpath=lab/tree/notebooks/00_tour.ipynb" in readme


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
