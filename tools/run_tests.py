"""`make test`: every stage of the test suite, then one summary that fits on a screen.

Each stage prints what its own tool prints when something fails (pytest's report, node's dot
reporter listing the failing tests), and writes a JUnit XML file of its results. At the end this
prints one table: passed / failed / skipped per stage, then the reasons for skipping, each once,
with how many tests it skipped. The exit status is non-zero when any stage failed.

    python tools/run_tests.py            # what `make test` runs
    python tools/run_tests.py --summary  # only the summary of the last run's XML files
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "build" / "test-results"


@dataclass
class Stage:
    """One step of `make test`: a command, and the JUnit file it writes (None: its exit status
    is its only result)."""

    name: str
    command: list[str]
    junit: Path | None = None
    cwd: Path = ROOT
    needs: str | None = None  # a program the stage needs on PATH; without it, skipped (and said)


@dataclass
class Result:
    name: str
    returncode: int | None  # None: not run
    counts: Counter = field(default_factory=Counter)
    skip_reasons: Counter = field(default_factory=Counter)
    note: str = ""


def stages(python: str) -> list[Stage]:
    node_tests = sorted(str(p.relative_to(ROOT / "widgets"))
                        for p in (ROOT / "widgets" / "test").glob("*.test.js"))
    return [
        Stage("lint (ruff)", [python, "-m", "ruff", "check", "."]),
        # first: tests/ runs the widget's own modules in Node (the static-vs-live golden test),
        # and those import the widget's npm packages
        Stage("widgets: npm ci", ["npm", "ci", "--silent", "--no-audit", "--no-fund"],
              cwd=ROOT / "widgets", needs="npm"),
        Stage("tests/ (pytest)", [python, "-m", "pytest", "-q", "tests",
                                  f"--junitxml={RESULTS / 'tests.xml'}"], RESULTS / "tests.xml"),
        # the lessons once, in both versions: each exercise checked blank, then with its solution
        Stage("lessons: build", [python, "tools/exercises.py", "both", "build/lessons"]),
        Stage("lessons (nbval)", [python, "-m", "pytest", "-q", "--nbval-lax", "build/lessons",
                                  f"--junitxml={RESULTS / 'lessons.xml'}"],
              RESULTS / "lessons.xml"),
        # node's dot reporter on the screen (a dot per test, the failures in full), JUnit to a file
        Stage("widgets (node --test)",
              ["node", "--test", "--test-reporter=dot", "--test-reporter-destination=stdout",
               "--test-reporter=junit",
               f"--test-reporter-destination={RESULTS / 'widgets.xml'}", *node_tests],
              RESULTS / "widgets.xml", cwd=ROOT / "widgets", needs="node"),
    ]


def read_junit(path: Path) -> tuple[Counter, Counter]:
    """Counts of passed / failed / skipped tests in a JUnit XML file (pytest's or node's), and
    the skip reasons with how many tests each skipped."""
    counts: Counter = Counter()
    reasons: Counter = Counter()
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            counts["failed"] += 1
        elif (skipped := case.find("skipped")) is not None:
            counts["skipped"] += 1
            reasons[_reason(skipped)] += 1
        else:
            counts["passed"] += 1
    return counts, reasons


def _reason(skipped: ET.Element) -> str:
    """A skip's reason as a reader wants it: pytest writes "path:line: reason" in the text and
    the bare reason in ``message``; an xfail says so."""
    reason = (skipped.get("message") or skipped.text or "no reason given").strip()
    if skipped.get("type") == "pytest.xfail":
        reason = f"expected to fail: {reason}"
    return " ".join(reason.split())


def run(stage: Stage) -> Result:
    if stage.needs and shutil.which(stage.needs) is None:
        return Result(stage.name, None, note=f"{stage.needs} not found: not run")
    print(f"\n=== {stage.name}: {' '.join(stage.command[:4])} ...", flush=True)
    if stage.junit is not None:
        stage.junit.unlink(missing_ok=True)
    returncode = subprocess.run(stage.command, cwd=stage.cwd).returncode
    return summarize(stage, returncode)


def summarize(stage: Stage, returncode: int | None) -> Result:
    result = Result(stage.name, returncode)
    if stage.junit is not None and stage.junit.exists():
        result.counts, result.skip_reasons = read_junit(stage.junit)
    return result


def _from_file(stage: Stage) -> Result:
    """A stage's result from its JUnit file alone (``--summary``): failed if a test failed."""
    if stage.junit is None or not stage.junit.exists():
        return Result(stage.name, None, note="no results from the last run")
    result = summarize(stage, 0)
    result.returncode = 1 if result.counts["failed"] else 0
    return result


def report(results: list[Result]) -> str:
    """The summary: a line per stage, then each skip reason once with its count."""
    lines = ["", "=" * 78, "make test: summary", "=" * 78]
    width = max(len(r.name) for r in results)
    for r in results:
        if r.returncode is None:
            verdict, detail = "NOT RUN", r.note
        else:
            verdict = "ok" if r.returncode == 0 else f"FAILED (exit {r.returncode})"
            detail = ", ".join(f"{r.counts[k]} {k}" for k in ("passed", "failed", "skipped")
                               if r.counts[k]) if r.counts else ""
        lines.append(f"  {r.name:<{width}}  {verdict:<16} {detail}")
    reasons = Counter()
    for r in results:
        for reason, n in r.skip_reasons.items():
            reasons[f"[{r.name}] {reason}"] += n
    if reasons:
        lines.append("skipped, by reason:")
        lines += [f"  {n:>4} x {reason}" for reason, n in reasons.most_common()]
    failed = [r.name for r in results if r.returncode not in (0, None)]
    lines.append(f"FAILED: {', '.join(failed)}" if failed else "ALL STAGES PASSED")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true",
                        help="only summarize the JUnit files of the last run")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    all_stages = stages(sys.executable)
    if args.summary:
        results = [_from_file(s) for s in all_stages]
    else:
        results = [run(stage) for stage in all_stages]
    print(report(results))
    return 1 if any(r.returncode not in (0, None) for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
