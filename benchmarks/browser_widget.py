"""What a learner sees of the live widget, measured in JupyterLab + headless Chromium.

    python -m benchmarks.browser_widget

Runs, in one notebook at 1400 x 1000: (a) a 3-layer MLP (Linear 8->16, tanh, 16->16, tanh,
16->2) on a batch of 32 with an MSE loss and backward, (b) an RNNCell over 30 steps with
backward, (c) a 10 000-op loop. For (a) and (b), after the view opens: the share of nodes inside
the visible pane and the smallest label on screen (px); for playback steps and slider moves the
time until the drawing first changes (MutationObserver; median and max) and the longest
main-thread block (PerformanceObserver "longtask"). For (c), the longest block while the cell
runs and a step's response afterwards. Targets (issue 12): response <= 150 ms median, no block
> 200 ms. Needs Chromium (see shared/BROWSER_TESTING.md); prints a table, asserts nothing.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, Lab, _free_port, _get_json
from tests.browser.labtools import open_notebook, run_cell, wait_idle, write_notebook
from tests.browser.measure import (
    INSTALL_OBSERVERS,
    INTERACT,
    LOOP_CELL,
    MLP_CELL,
    RNN_CELL,
    SETUP,
    fit,
    long_tasks_since,
    now,
    responsiveness,
    wait_drawn,
)


@contextmanager
def lab_server():
    """A throwaway JupyterLab (the same setup as the browser tests' fixture)."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        dirs = {name: base / name for name in ("root", "config", "runtime", "settings", "work")}
        for d in dirs.values():
            d.mkdir()
        notification = dirs["settings"] / "@jupyterlab" / "apputils-extension"
        notification.mkdir(parents=True)
        (notification / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(dirs["config"]),
               "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
               "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
               "JUPYTERLAB_WORKSPACES_DIR": str(dirs["work"])}
        port, token = _free_port(), secrets.token_hex(16)
        command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
                   f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                   f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={dirs['root']}",
                   "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                   "--LabApp.expose_app_in_browser=True"]
        if os.geteuid() == 0:
            command.append("--allow-root")
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            server = Lab(dirs["root"], port, token, process)
            deadline = time.monotonic() + 90
            while True:
                try:
                    _get_json(f"{server.base}/api/status?token={token}")
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("JupyterLab did not start") from None
                    time.sleep(0.3)
            yield server
        finally:
            process.terminate()
            process.wait(timeout=20)


def main() -> None:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        sys.exit("Chromium is not installed (apt-get install -y chromium, or set CHROMIUM=path)")
    rows = []
    with lab_server() as lab, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        write_notebook(lab.root / "bench.ipynb", [SETUP, MLP_CELL, RNN_CELL, LOOP_CELL])
        open_notebook(page, lab, "bench.ipynb")
        page.evaluate(INSTALL_OBSERVERS)
        for index in range(3):
            run_cell(page, index)
            wait_idle(page, timeout=300)
        for i, name in ((0, "MLP (8-16-16-2, batch 32)"), (1, "RNNCell x 30 steps")):
            wait_drawn(page, i)
            page.evaluate("(i) => document.querySelectorAll('.dg-root')[i]"
                          ".scrollIntoView({block: 'start'})", i)
            time.sleep(0.5)
            f = fit(page, i)
            r = responsiveness(page, i)
            nodes = page.evaluate("(i) => document.querySelectorAll('.dg-root')[i]"
                                  ".querySelectorAll('.dg-graph svg g.node').length", i)
            rows.append((name, f"{nodes} boxes", f"{f['share']:.0%}", f"{f['smallest']:.1f}",
                         f"{f['scale']:.2f}", f"{r['step_median']:.1f} / {r['step_max']:.1f}",
                         f"{r['move_median']:.1f} / {r['move_max']:.1f}",
                         f"{r['longest_block']:.0f}"))
        # (b') the RNN with its loop opened: all ~277 nodes laid out, played back by restyling
        page.locator(".dg-root").nth(1).locator("g.node", has_text="iterations").click()
        deadline = time.monotonic() + 60
        while page.evaluate("document.querySelectorAll('.dg-root')[1]"
                            ".querySelectorAll('.dg-graph svg g.node').length") < 200:
            if time.monotonic() > deadline:
                raise TimeoutError("the loop did not open")
            time.sleep(0.1)
        time.sleep(0.5)
        f = fit(page, 1)
        r = responsiveness(page, 1)
        nodes = page.evaluate("document.querySelectorAll('.dg-root')[1]"
                              ".querySelectorAll('.dg-graph svg g.node').length")
        rows.append(("RNNCell x 30, loop opened", f"{nodes} boxes", f"{f['share']:.0%}",
                     f"{f['smallest']:.1f}", f"{f['scale']:.2f}",
                     f"{r['step_median']:.1f} / {r['step_max']:.1f}",
                     f"{r['move_median']:.1f} / {r['move_max']:.1f}", f"{r['longest_block']:.0f}"))
        # (c) the 10 000-op loop: the longest block while it runs, then a step and a move
        since = now(page)
        started = time.monotonic()
        run_cell(page, 3)
        wait_idle(page, timeout=600)
        ran = time.monotonic() - started
        wait_drawn(page, 2, timeout=120)
        time.sleep(1.0)
        during = long_tasks_since(page, since)
        page.evaluate("document.querySelectorAll('.dg-root')[2].scrollIntoView({block: 'start'})")
        time.sleep(0.5)
        r = responsiveness(page, 2, steps=10, moves=10)
        nodes = page.evaluate("document.querySelectorAll('.dg-root')[2]"
                              ".querySelectorAll('.dg-graph svg g.node').length")
        f = fit(page, 2)
        rows.append((f"10 000-op loop (cell {ran:.0f} s)", f"{nodes} boxes", f"{f['share']:.0%}",
                     f"{f['smallest']:.1f}", f"{f['scale']:.2f}",
                     f"{r['step_median']:.1f} / {r['step_max']:.1f}",
                     f"{r['move_median']:.1f} / {r['move_max']:.1f}",
                     f"{max(r['longest_block'], max(during, default=0)):.0f}"))
        browser.close()
    header = ("graph", "drawn", "nodes in pane", "smallest label px", "scale",
              "step ms (median / max)", "slider ms (median / max)", "longest block ms")
    widths = [max(len(str(row[k])) for row in [header, *rows]) for k in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)))
    print("targets: response <= 150 ms median, no block > 200 ms")
    _ = INTERACT  # the interaction script (measure.py) the figures come from


if __name__ == "__main__":
    main()
