"""A real JupyterLab in headless Chromium, driven by Python Playwright.

The facts this follows (shared/BROWSER_TESTING.md): launch the system Chromium (tool-driven
browser downloads fail here) with the networking flags; run JupyterLab on 127.0.0.1 with a
random token, isolated config/runtime/settings/workspace dirs and the news toast off; wait for
the kernel to be connected *and* idle before sending a cell (a Shift+Enter sent earlier is
silently lost). Without Chromium (a laptop), these tests skip with how to install it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "tests" / "browser" / "artifacts"
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before pytest's own -m "not slow" deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every browser test is ``slow`` (a JupyterLab and a Chromium each): ``make quick`` skips
    them, ``make test`` runs them. (A conftest hook sees the whole session's items.)"""
    for item in items:
        if HERE in item.path.resolve().parents:
            item.add_marker(pytest.mark.slow)


def _chromium_missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return "Chromium is not installed (apt-get install -y chromium, or set CHROMIUM=path)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Python Playwright is not installed (pip install playwright; no browser download)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


class Lab:
    """A running JupyterLab server rooted at a temporary notebook folder."""

    def __init__(self, root: Path, port: int, token: str, process: subprocess.Popen) -> None:
        self.root, self.port, self.token, self.process = root, port, token, process
        self.base = f"http://127.0.0.1:{port}"

    def url(self, path: str) -> str:
        # ?reset: start from an empty workspace, not with the previous test's notebooks open
        return f"{self.base}/lab/tree/{path}?reset&token={self.token}"

    def kernels(self) -> list:
        return _get_json(f"{self.base}/api/kernels?token={self.token}")  # type: ignore[return-value]

    def wait_for_kernel(self, notebook: str, timeout: float = 90) -> None:
        """Until the kernel of ``notebook`` has a connected client and is idle (the kernel-ready
        trap; other notebooks' kernels from earlier tests do not count).

        While a kernel is starting, jupyter_server's kernel listings can answer 500: the kernel
        manager exists before its ``last_activity`` does, and building the kernel's model reads
        it (jupyter-server/enterprise_gateway#1395). That is "not ready yet", so poll again."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                sessions = _get_json(f"{self.base}/api/sessions?token={self.token}")
                ids = {s["kernel"]["id"] for s in sessions if s.get("path") == notebook}
                kernels = [k for k in self.kernels() if k["id"] in ids]
            except urllib.error.HTTPError as error:
                if error.code < 500:
                    raise
                kernels = []
            if any(k["connections"] >= 1 and k["execution_state"] == "idle" for k in kernels):
                return
            time.sleep(0.25)
        raise TimeoutError(f"the kernel of {notebook} is not ready after {timeout} s")


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    reason = _chromium_missing()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("lab_root")
    dirs = {name: tmp_path_factory.mktemp(name) for name in ("config", "runtime", "settings",
                                                              "workspaces")}
    notification = dirs["settings"] / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
    }
    port, token = _free_port(), secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = open(tmp_path_factory.mktemp("lab_log") / "lab.log", "w")  # noqa: SIM115
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Lab(root, port, token, process)
    deadline = time.monotonic() + 90
    while True:
        try:
            _get_json(f"{server.base}/api/status?token={token}")
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"JupyterLab did not start; see {log.name}")
            time.sleep(0.3)
    yield server
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


@pytest.fixture(scope="session")
def chromium():
    """Headless Chromium, no JupyterLab (static pages: tests/browser/test_site.py). One per
    session: Playwright's sync API runs one at a time."""
    reason = _chromium_missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def browser(lab, chromium):
    return chromium


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
