"""The distributions, as pip would see them: the sdist and the wheel built from it carry the
widget bundle, the licences of the code inside it, and metadata that says what is tested.

(tools/check_dist.py goes further in CI: twine check, clean virtualenvs, the tour, no compiler.)
"""

from __future__ import annotations

import email
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STATIC = "dyngraph/jupyter/static/"

pytestmark = pytest.mark.slow  # a build: about ten seconds


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """The sdist, and the wheel built from it, made with this Python's setuptools
    (--no-isolation: nothing is downloaded)."""
    pytest.importorskip("build", reason="the build package is missing: pip install -e '.[dev]'")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT],
        check=True, capture_output=True,
    )
    (sdist,) = out.glob("dyngraph-*.tar.gz")
    (wheel,) = out.glob("dyngraph-*.whl")
    return sdist, wheel


def test_the_wheel_carries_the_bundle_and_the_licences_of_its_contents(dists):
    _, wheel = dists
    names = zipfile.ZipFile(wheel).namelist()
    for name in ("graphview.js", "graphview.css", "THIRD_PARTY_LICENSES.txt"):
        assert STATIC + name in names
    assert any(n.endswith(".dist-info/licenses/" + STATIC + "THIRD_PARTY_LICENSES.txt")
               for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)  # dyngraph's own (MIT)
    licences = zipfile.ZipFile(wheel).read(STATIC + "THIRD_PARTY_LICENSES.txt").decode()
    assert "Graphviz" in licences and "Eclipse Public License" in licences
    assert wheel.name.endswith("-py3-none-any.whl")  # pure Python: one wheel for every platform
    assert [n for n in names if n.startswith("dyngraph/") and not n.endswith(
        (".py", ".js", ".css", ".txt"))] == []  # the readable modules, nothing compiled


def test_the_sdist_holds_what_a_build_needs_and_no_partial_test_suite(dists):
    sdist, _ = dists
    with tarfile.open(sdist) as archive:
        names = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    for name in ("pyproject.toml", "README.md", "LICENSE",
                 STATIC + "graphview.js", STATIC + "THIRD_PARTY_LICENSES.txt"):
        assert name in names
    assert not [n for n in names if n.startswith("tests/")]


def test_the_metadata_names_the_pythons_the_matrix_tests(dists):
    _, wheel = dists
    archive = zipfile.ZipFile(wheel)
    (metadata_name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
    metadata = email.message_from_bytes(archive.read(metadata_name))
    assert metadata["Requires-Python"] == ">=3.10"
    # dyngraph's MIT and the licences of the code in the widget's bundle (Graphviz's EPL-1.0...)
    assert metadata["License-Expression"] == "MIT AND Apache-2.0 AND EPL-1.0 AND ISC"
    pythons = [c.rsplit(" :: ", 1)[1] for c in metadata.get_all("Classifier")
               if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert pythons == ["3.10", "3.11", "3.12", "3.13"]
    assert "numpy>=1.24" in metadata.get_all("Requires-Dist")
