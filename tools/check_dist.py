"""Build the wheel and the sdist, check them, and install each into a clean virtualenv.

    python tools/check_dist.py              # all four steps; exits non-zero when one fails
    python tools/check_dist.py --no-tour    # without the jupyter extra and the tour

1. ``python -m build`` makes ``build/dist/dyngraph-*.tar.gz`` and a wheel built from that sdist
   (so the sdist is known to hold everything the build needs); ``twine check --strict`` reads both.
2. The wheel is pure Python (``py3-none-any``: the readable modules are what runs, nothing is
   compiled) and holds the widget bundle and the licences of the code inside it (Graphviz
   compiled to WebAssembly among them; also under ``.dist-info/licenses/``); the sdist holds
   README, ``pyproject.toml``, the bundle and its licences.
3. A clean virtualenv gets the wheel file with the jupyter extra, and runs the tour
   (``notebooks/00_tour.ipynb``) headless with nbclient in that virtualenv's own kernel.
4. Another gets the sdist with no C compiler (``CC=/bin/false``): nothing needs one, and
   dyngraph runs (a tiny backward).

Needs ``build`` and ``twine`` (the dev extra) in the Python that runs it. Logs of the installs are
in ``build/dist/*.log``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "build" / "dist"
TOUR = ROOT / "notebooks" / "00_tour.ipynb"

BUNDLE = ["dyngraph/jupyter/static/graphview.js", "dyngraph/jupyter/static/graphview.css"]
LICENCES = "dyngraph/jupyter/static/THIRD_PARTY_LICENSES.txt"
IN_THE_SDIST = ["README.md", "LICENSE", "pyproject.toml", LICENCES, *BUNDLE]

# Run by the wheel's virtualenv: the tour, then one cell of ours that says which Python and which
# dyngraph the kernel used (it must be that virtualenv's, not this checkout's).
RUN_TOUR = """
import sys
import nbformat
from nbclient import NotebookClient

notebook = nbformat.read(sys.argv[1], as_version=4)
notebook.cells.append(nbformat.v4.new_code_cell(
    "import sys, dyngraph, dyngraph.spine.events\\n"
    "print(sys.executable, dyngraph.__file__)"))
NotebookClient(notebook, timeout=600, kernel_name="python3",
               resources={"metadata": {"path": sys.argv[2]}}).execute()
errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "error"]
print("tour:", len(notebook.cells) - 1, "cells executed,", len(errors), "errors")
print("kernel:", notebook.cells[-1].outputs[0].text.strip())
"""

# Run by the sdist's virtualenv, outside the checkout.
TINY_BACKWARD = """
import dyngraph as dg, dyngraph.spine.events
x = dg.tensor([1.0, 2.0], requires_grad=True)
(x * x).sum().backward()
assert x.grad.tolist() == [2.0, 4.0], x.grad
print("backward ok: d(sum x^2)/dx =", x.grad.tolist(), "at x = [1, 2];",
      "dyngraph from", dg.__file__)
"""


class Failed(Exception):
    """A step did not do what it should; the message says what."""


def run(command: list, log: Path | None = None, **options) -> subprocess.CompletedProcess:
    """Run a command; its output goes to ``log`` (or is captured). Raises Failed when it fails."""
    shown = ["<script>" if i and command[i - 1] == "-c" else str(part)
             for i, part in enumerate(command)]
    print("  $", " ".join(shown), flush=True)
    if log is None:
        done = subprocess.run(command, capture_output=True, text=True, **options)
        output = done.stdout + done.stderr
    else:
        with open(log, "a", encoding="utf-8") as out:
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, text=True,
                                  **options)
        output = log.read_text(encoding="utf-8", errors="replace")
    if done.returncode != 0:
        tail = "\n".join(output.splitlines()[-25:])
        raise Failed(f"`{command[0]} ...` exited with {done.returncode}:\n{tail}")
    return done


def fresh_venv(name: str) -> Path:
    """A new, empty virtualenv under build/dist/; returns its python."""
    venv = DIST / name
    shutil.rmtree(venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", venv])
    return venv / "bin" / "python"


def build() -> tuple[Path, Path]:
    """Step 1: the sdist, and the wheel built from it; twine check on both."""
    for old in DIST.glob("dyngraph-*"):
        old.unlink()
    run([sys.executable, "-m", "build", "--outdir", DIST, ROOT], log=DIST / "build.log")
    (sdist,) = DIST.glob("dyngraph-*.tar.gz")
    (wheel,) = DIST.glob("dyngraph-*.whl")
    checked = run([sys.executable, "-m", "twine", "--no-color", "check", "--strict", sdist, wheel])
    print("    " + checked.stdout.strip().replace("\n", "\n    "))
    return sdist, wheel


def check_contents(sdist: Path, wheel: Path) -> None:
    """Step 2: what each archive must hold, listed."""
    wheel_names = zipfile.ZipFile(wheel).namelist()
    licences_in_dist_info = [n for n in wheel_names if ".dist-info/licenses/" in n]
    missing = [n for n in [*BUNDLE, LICENCES] if n not in wheel_names]
    if not [n for n in licences_in_dist_info if n.endswith("/licenses/LICENSE")]:
        missing.append("*.dist-info/licenses/LICENSE (dyngraph's own licence)")
    compiled = [n for n in wheel_names if n.startswith("dyngraph/")
                and not n.endswith((".py", ".js", ".css", ".txt"))]
    if compiled or not wheel.name.endswith("-py3-none-any.whl"):
        raise Failed(f"the wheel should be pure Python (py3-none-any): {wheel.name} {compiled}")
    licence_text = zipfile.ZipFile(wheel).read(LICENCES).decode("utf-8")
    if "Graphviz" not in licence_text or "Eclipse Public License" not in licence_text:
        missing.append(f"Graphviz's licence (the Eclipse Public License) in {LICENCES}")
    print(f"  wheel {wheel.name} ({wheel.stat().st_size // 1024} KiB):")
    for name in [*BUNDLE, LICENCES, *licences_in_dist_info]:
        print(f"    {name}")
    if missing:
        raise Failed(f"the wheel lacks: {', '.join(missing)}")

    with tarfile.open(sdist) as archive:
        top = sdist.name.removesuffix(".tar.gz") + "/"
        sdist_names = [m.name.removeprefix(top) for m in archive.getmembers()]
    print(f"  sdist {sdist.name} ({sdist.stat().st_size // 1024} KiB):")
    for name in IN_THE_SDIST:
        print(f"    {name}")
    missing = [n for n in IN_THE_SDIST if n not in sdist_names]
    if missing:
        raise Failed(f"the sdist lacks: {', '.join(missing)}")


def tour_from_the_wheel(wheel: Path) -> None:
    """Step 3: the wheel with the jupyter extra in a clean virtualenv; the tour, headless."""
    python = fresh_venv("venv-wheel")
    venv = python.parent.parent
    log = DIST / "venv-wheel.log"
    log.unlink(missing_ok=True)
    try:  # nbclient is the runner, not part of the package under test
        run([python, "-m", "pip", "install", "--quiet", f"{wheel}[jupyter]", "nbclient"], log=log)
    except Failed as error:
        print(f"  the tour is skipped: the jupyter extra could not be installed here ({error})")
        run([python, "-m", "pip", "install", "--quiet", wheel], log=log)
        print("    " + run([python, "-c", TINY_BACKWARD], cwd=DIST).stdout.strip())
        return
    folder = DIST / "tour"  # the kernel runs here, outside the checkout
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    started = time.monotonic()
    report = run([python, "-c", RUN_TOUR, TOUR, folder], cwd=folder).stdout.strip().splitlines()
    print("    " + "\n    ".join(report[-2:]), f"({time.monotonic() - started:.0f} s)")
    _, executable, location = report[-1].split()
    if Path(executable).parent.parent != venv or not Path(location).is_relative_to(venv):
        raise Failed(f"the tour ran on another Python or dyngraph: {report[-1]}")


def sdist_without_a_compiler(sdist: Path) -> None:
    """Step 4: the sdist with CC=/bin/false: nothing needs a compiler, and dyngraph works."""
    python = fresh_venv("venv-sdist")
    log = DIST / "venv-sdist.log"
    log.unlink(missing_ok=True)
    # --no-cache-dir: pip must build this sdist now, not reuse a wheel it built before.
    env = {**os.environ, "CC": "/bin/false", "CXX": "/bin/false"}
    run([python, "-m", "pip", "install", "--verbose", "--no-cache-dir", sdist], log=log, env=env)
    print("    " + run([python, "-c", TINY_BACKWARD], cwd=DIST).stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-tour", action="store_true",
                        help="skip step 3 (the jupyter extra and the tour)")
    skip_tour = parser.parse_args().no_tour
    DIST.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    outcomes = []  # True or False per step that ran

    def attempt(title, action, *args):
        print(f"[{len(outcomes) + 1}] {title}", flush=True)
        try:
            result = action(*args)
        except Failed as error:
            print(f"  FAILED: {error}")
            outcomes.append(False)
            return None
        outcomes.append(True)
        return result

    built = attempt("build the sdist, and the wheel from it; twine check", build)
    if built:
        sdist, wheel = built
        attempt("what the wheel and the sdist hold", check_contents, sdist, wheel)
        if skip_tour:
            print("[-] the tour from the wheel: skipped (--no-tour)")
        else:
            attempt("the wheel with [jupyter] in a clean virtualenv runs the tour",
                    tour_from_the_wheel, wheel)
        attempt("the sdist installs and runs without a C compiler",
                sdist_without_a_compiler, sdist)
    print(f"check_dist ({time.monotonic() - started:.0f} s): "
          f"{outcomes.count(True)} passed, {outcomes.count(False)} failed")
    return 0 if all(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
