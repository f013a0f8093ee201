"""Run the engine tests on every Python that pyproject.toml says is supported, one virtualenv each.

    python tools/python_matrix.py              # each Python 3.x named in the classifiers
    python tools/python_matrix.py 3.10 3.12    # only these

For each version it looks for an interpreter (pyenv's versions folder first, then ``python3.X``
on PATH), makes ``build/matrix/py3.X`` with it, and installs there dyngraph from this checkout,
not editable (so the tests import the installed package, not this checkout), with only numpy,
pytest and hypothesis beside it. Then it runs the tests that
need nothing else: ``pytest -m "not slow" tests``, where whatever needs Jupyter, PyTorch,
Graphviz or a browser skips and says so. One more run takes the oldest Python with the oldest
numpy that ``dependencies`` allows (``numpy>=1.24`` means 1.24.x).

It prints a table (Python x numpy x result), names the versions it could not find, and exits
non-zero when a run on an interpreter it found fails. Each run's full output is in
``build/matrix/<run>.log``. Standard library only: it runs before anything is installed, on
whichever Python is at hand; pip's cache makes the second run of it fast.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "build" / "matrix"
TEST_DEPS = ["pytest>=8", "hypothesis>=6"]  # as in the dev extra, without what needs more
TESTS = ["-m", "not slow", "tests"]

# What the package says it supports, read from pyproject.toml with two regular expressions
# (tomllib is only in Python 3.11+, and this script runs on 3.10 too).
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
SUPPORTED = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', PYPROJECT)
OLDEST_NUMPY = re.search(r'"numpy>=(\d+\.\d+)', PYPROJECT).group(1)


@dataclass
class Run:
    """One cell of the table: a Python version with a numpy (None: the newest pip finds)."""

    version: str
    numpy: str | None = None
    interpreter: Path | None = None
    python: str = "?"  # the full version of the interpreter, e.g. 3.10.13
    numpy_installed: str = "?"
    result: str = "not run"
    seconds: float = 0.0
    ok: bool = False

    @property
    def name(self) -> str:
        return f"py{self.version}" + (f"-numpy{self.numpy}" if self.numpy else "")


def find_interpreter(version: str) -> Path | None:
    """The newest pyenv-installed 3.X.Y, else ``python3.X`` on PATH, that can make a venv."""
    versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = []
    for folder in versions.glob(f"{version}.*"):
        patch = re.fullmatch(rf"{re.escape(version)}\.(\d+)", folder.name)  # not 3.13.0t, -dev
        if patch and (folder / "bin" / "python").exists():
            found.append((int(patch.group(1)), folder / "bin" / "python"))
    candidates = [path for _, path in sorted(found, reverse=True)]
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        probe = subprocess.run([candidate, "-c", "import venv, ensurepip"], capture_output=True)
        if probe.returncode == 0:  # Debian's python3.X needs python3.X-venv for this
            return candidate
    return None


def step(log, command: list, cwd: Path = ROOT) -> bool:
    """Run one command, its output appended to the run's log; True when it succeeded."""
    log.write(f"\n$ {' '.join(map(str, command))}\n")
    log.flush()
    done = subprocess.run(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    return done.returncode == 0


def pytest_summary(log_path: Path) -> str:
    """pytest's closing counts ('1234 passed, 56 skipped'), read from the end of the log."""
    for line in reversed(log_path.read_text(encoding="utf-8", errors="replace").splitlines()):
        counts = re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)",
                            line)
        if counts and " in " in line:
            return ", ".join(f"{n} {what}" for n, what in counts)
    return "no pytest summary (see the log)"


def run_one(run: Run) -> None:
    """Make the virtualenv, install, check what was installed, run the tests; fill in ``run``."""
    started = time.monotonic()
    venv = MATRIX / run.name
    log_path = MATRIX / f"{run.name}.log"
    python = venv / "bin" / "python"
    with open(log_path, "w", encoding="utf-8") as log:
        numpy = f"numpy=={run.numpy}.*" if run.numpy else "numpy"
        if not python.exists() and not step(log, [run.interpreter, "-m", "venv", venv]):
            run.result = "could not make a virtualenv"
        elif not step(log, [python, "-m", "pip", "install", "--quiet", "--upgrade", numpy,
                            *TEST_DEPS]):
            run.result = "could not install numpy and the test tools"
        # --no-deps keeps the numpy chosen above; --force-reinstall takes this checkout as it is
        # now even when dyngraph's version number has not changed.
        elif not step(log, [python, "-m", "pip", "install", "--quiet", "--no-deps",
                            "--force-reinstall", "."]):
            run.result = "could not install dyngraph"
        else:
            run_tests(run, venv, log, log_path)
    run.seconds = time.monotonic() - started


def run_tests(run: Run, venv: Path, log, log_path: Path) -> None:
    """Check that the virtualenv's own dyngraph imports, then run pytest."""
    python = venv / "bin" / "python"
    # What got installed, asked from outside the checkout so that the installed copy answers.
    probe = subprocess.run(
        [python, "-c",
         "import platform, numpy, dyngraph;"
         "print(platform.python_version(), numpy.__version__, dyngraph.__file__)"],
        cwd=venv, capture_output=True, text=True,
    )
    if probe.returncode != 0:
        log.write(probe.stdout + probe.stderr)
        run.result = "dyngraph does not import"
        return
    run.python, run.numpy_installed, location = probe.stdout.split()
    if not Path(location).is_relative_to(venv):
        run.result = f"imported from {location}, not the virtualenv"
        return
    # The venv's pytest script, not `python -m pytest`, which would put the checkout (the
    # current folder) first on sys.path and test the source tree instead of the installed copy.
    passed = step(log, [venv / "bin" / "pytest", "-q", "-p", "no:cacheprovider", *TESTS])
    run.result = pytest_summary(log_path)
    run.ok = passed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("versions", nargs="*", help=f"default: {' '.join(SUPPORTED)}")
    versions = parser.parse_args().versions or SUPPORTED
    MATRIX.mkdir(parents=True, exist_ok=True)

    runs, missing = [], []
    for version in versions:
        interpreter = find_interpreter(version)
        if interpreter is None:
            missing.append(version)
        else:
            runs.append(Run(version, interpreter=interpreter))
    if runs:  # the oldest numpy allowed, once, on the oldest Python found
        runs.insert(1, Run(runs[0].version, numpy=OLDEST_NUMPY, interpreter=runs[0].interpreter))

    started = time.monotonic()
    for run in runs:
        print(f"{run.name}: {run.interpreter} ...", flush=True)
        run_one(run)
        print(f"{run.name}: {run.result} ({run.seconds:.0f} s)", flush=True)

    print(f"\nPython matrix ({time.monotonic() - started:.0f} s; logs in "
          f"{MATRIX.relative_to(ROOT)}/): {shlex.join(['pytest', *TESTS])} in each")
    header = f"{'Python':<9} {'numpy':<8} {'':<5} result"
    print(header)
    print("-" * len(header))
    for run in runs:
        verdict = "ok" if run.ok else "FAIL"
        print(f"{run.python:<9} {run.numpy_installed:<8} {verdict:<5} "
              f"{run.result} ({run.seconds:.0f} s)")
    for version in missing:
        print(f"{version:<9} {'-':<8} {'-':<5} no interpreter found "
              f"(pyenv versions/{version}.*, python{version} on PATH)")
    failed = [run.name for run in runs if not run.ok]
    print(f"python_matrix: {len(runs) - len(failed)} passed, {len(failed)} failed"
          + (f" ({', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
