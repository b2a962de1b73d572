"""A reader's run of a notebook in JupyterLab, in a real (headless) browser.

``make lab`` is started as a reader starts it (on 127.0.0.1, a free port, a token), the
WEAT notebook ``notebooks/01_weat.py`` is opened (jupytext shows it as a notebook), the
``n_permutations`` parameter is edited in the parameters cell, every cell is run from
the Run menu, and the WEAT table must appear rendered as an HTML table, with the
p-values the edited parameter gives, and the WEAT figure as an image below its cell.
Screenshots go to ``build/screenshots/``.

Then every notebook of ``notebooks/`` is opened as shipped, with its defaults, and run
with Run All: no cell may end in an error (a traceback). A default that needs a source
that cannot be had here (offline, no mirror) shows one note in its cell instead (e.g.
``05_crows_pairs``' ``reproduce``). The counts go to
``build/screenshots/jupyterlab_run_all.md``.

The server writes its run records and figures under a scratch ``POLYBIAS_OUTPUT_ROOT``,
and its settings, workspaces, checkpoints and runtime files under the same scratch folder
(autosave off, so the edited notebook is never saved); the test checks that
``notebooks/`` is unchanged afterwards, hidden folders included.

Needs Playwright (``make lab-test`` installs it into its own environment, ``.venv-browser``)
and a Chromium (``POLYBIAS_CHROMIUM``, default ``/usr/bin/chromium``); skipped otherwise.
Run it with ``make lab-test``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="needs Playwright and Chromium: make lab-test installs Playwright into "
    ".venv-browser and runs this test there (apt-get install chromium for the browser)")

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("POLYBIAS_CHROMIUM", "/usr/bin/chromium")
VENV = os.environ.get("LAB_VENV", ".venv")
SCREENSHOTS = ROOT / "build" / "screenshots"
NOTEBOOK = "01_weat.py"
EDITED = 1000  # n_permutations in the browser; the notebook's default is 100000
# Monte Carlo p-values are (hits + 1) / (n + 1): WEAT1 has no hits, so 1/1001 after the edit
EXPECTED_ROW = ["WEAT1", "1.54", "1.0e-03", "monte-carlo"]
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# JupyterLab user settings for the test's server only: no autosave (the edited notebook
# must not be written back), every cell in the page (no virtual scrolling), no news.
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
}

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).is_file() or shutil.which("make") is None,
                                reason=f"needs Chromium at {CHROMIUM} and make: apt-get install "
                                "chromium make, or set POLYBIAS_CHROMIUM to a Chromium binary")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """``make lab`` on 127.0.0.1 with a token; yields its URL and token, then stops it."""
    scratch = tmp_path_factory.mktemp("lab")
    for name, value in SETTINGS.items():
        path = scratch / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    port, token = _free_port(), secrets.token_hex(16)
    args = (f"--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={port} "
            f"--ServerApp.port_retries=0 --IdentityProvider.token={token} "
            f"--LabApp.user_settings_dir={scratch / 'settings'} "
            f"--LabApp.workspaces_dir={scratch / 'workspaces'} "
            # JupyterLab checkpoints a document when it opens it: not beside the notebook
            f"--FileCheckpoints.checkpoint_dir={scratch / 'checkpoints'}"
            + (" --allow-root" if os.geteuid() == 0 else ""))  # CI containers run as root
    env = {**os.environ, "POLYBIAS_OUTPUT_ROOT": str(scratch / "outputs"),
           "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"), "JUPYTER_CONFIG_DIR": str(scratch / "config"),
           "IPYTHONDIR": str(scratch / "ipython"), "MPLCONFIGDIR": str(scratch / "matplotlib")}
    log = (scratch / "lab.log").open("w")
    # -o: the environment is made by `make env` before; never rebuild it from here
    server = subprocess.Popen(["make", "--no-print-directory", "-o", f"{VENV}/.installed", "lab",
                               f"VENV={VENV}", f"LAB_ARGS={args}"],
                              cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5) as reply:
                    if reply.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"make lab did not start:\n{(scratch / 'lab.log').read_text()[-3000:]}")
            time.sleep(1)
        yield {"url": url, "token": token, "outputs": scratch / "outputs", "log": scratch / "lab.log"}
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        log.close()


@pytest.fixture(scope="module")
def page(lab, tmp_path_factory):
    with playwright_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1000})
        try:
            yield context.new_page()
        finally:
            context.close()


def _idle(page, timeout_s: float) -> None:
    """Wait until the status bar says the notebook's kernel is idle."""
    page.wait_for_function(
        """() => [...document.querySelectorAll('#jp-main-statusbar *')]
                 .some(e => /Python \\(polybias\\) \\| Idle/.test(e.textContent))""",
        timeout=timeout_s * 1000, polling=500)


def test_a_reader_edits_a_parameter_runs_all_and_sees_the_weat_table(lab, page):
    before = _snapshot(ROOT / "notebooks")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{lab['url']}/lab/tree/{NOTEBOOK}?token={lab['token']}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=120_000)
    assert page.locator(".jp-NotebookPanel .jp-Notebook").count() == 1, "not opened as a notebook"
    _idle(page, 120)  # the notebook's kernel (Python (polybias)) has started

    line = page.locator(".jp-CodeCell .cm-line", has_text="n_permutations: int = 100000")
    line.click()
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")
    page.keyboard.type(f"n_permutations: int = {EDITED}  # edited in the browser")
    assert page.locator(".jp-CodeCell .cm-line", has_text=f"n_permutations: int = {EDITED}").count() == 1
    page.screenshot(path=str(SCREENSHOTS / "jupyterlab_01_weat_parameters.png"))

    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    # every code cell has run when none waits or runs ([*]) and all carry a count
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                .map(p => p.textContent.trim());
            return prompts.length > 0 && prompts.every(t => /^\\[\\d+\\]:$/.test(t));
        }""", timeout=480_000, polling=1000)
    _idle(page, 60)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
                          " .jp-RenderedText:has-text('Traceback')")
    assert errors.count() == 0, errors.first.inner_text()

    tables = page.locator(".jp-OutputArea .jp-RenderedMarkdown table")
    if tables.count() < 2:
        page.screenshot(path=str(SCREENSHOTS / "jupyterlab_01_weat_failed.png"), full_page=True)
    assert tables.count() >= 2, "the WEAT and variant tables are not rendered as tables"
    weat = tables.filter(has=page.locator("td", has_text="WEAT10")).first
    weat.scroll_into_view_if_needed()
    header = [c.strip() for c in weat.locator("thead th").all_inner_texts()]
    assert header[:4] == ["test", "reproduced", "pvalue", "p_method"]
    rows = [[c.strip() for c in r.locator("td").all_inner_texts()]
            for r in weat.locator("tbody tr").all()]
    assert [r[0] for r in rows] == [f"WEAT{i}" for i in range(1, 11)]
    assert rows[0][:4] == EXPECTED_ROW, rows[0]
    page.screenshot(path=str(SCREENSHOTS / "jupyterlab_01_weat_table.png"))
    weat.screenshot(path=str(SCREENSHOTS / "jupyterlab_01_weat_table_only.png"))

    figure = page.locator(".jp-OutputArea .jp-RenderedImage img")
    assert figure.count() >= 1, "the WEAT figure is not shown below its cell"
    figure.first.scroll_into_view_if_needed()
    assert figure.first.evaluate("img => img.naturalWidth") > 300
    figure.first.screenshot(path=str(SCREENSHOTS / "jupyterlab_01_weat_figure.png"))

    assert _snapshot(ROOT / "notebooks") == before, "the server wrote into notebooks/"
    assert any(lab["outputs"].rglob("*.json")), "the run wrote no records under the scratch output root"


ALL_NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
RUN_ALL_TIMEOUT_S = 900  # the slowest notebook with its defaults, on a busy 2-core machine
_RUNS: dict[str, str] = {}


def _stop_kernels(lab) -> None:
    """Shut every session's kernel down, so that notebooks run one at a time."""
    base = f"{lab['url']}/api/sessions"
    with urllib.request.urlopen(f"{base}?token={lab['token']}", timeout=30) as reply:
        sessions = json.loads(reply.read())
    for session in sessions:
        request = urllib.request.Request(f"{base}/{session['id']}?token={lab['token']}",
                                         method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


@pytest.mark.parametrize("notebook", ALL_NOTEBOOKS)
def test_every_notebook_runs_all_as_shipped_without_an_error(lab, page, notebook):
    before = _snapshot(ROOT / "notebooks")
    started = time.monotonic()
    page.goto(f"{lab['url']}/lab/tree/{notebook}?reset&token={lab['token']}")
    panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    page.wait_for_selector(f"{panel} .jp-Notebook .jp-Cell", timeout=120_000)
    _idle(page, 180)
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_function(
        """(panel) => {
            const prompts = [...document.querySelectorAll(panel + ' .jp-CodeCell .jp-InputPrompt')]
                .map(p => p.textContent.trim());
            return prompts.length > 0 && prompts.every(t => /^\\[\\d+\\]:$/.test(t));
        }""", arg=panel, timeout=RUN_ALL_TIMEOUT_S * 1000, polling=2000)
    _idle(page, 120)
    errors = page.locator(f"{panel} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
                          " .jp-RenderedText:has-text('Traceback')")
    cells = page.locator(f"{panel} .jp-CodeCell").count()
    stem = notebook.removesuffix(".py")
    if errors.count():
        errors.first.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"jupyterlab_run_all_{stem}_error.png"))
    _RUNS[notebook] = (f"| {notebook} | {cells} | {errors.count()} | "
                       f"{time.monotonic() - started:.0f} |")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "jupyterlab_run_all.md").write_text(
        "| notebook | code cells | error cells | seconds |\n|---|---|---|---|\n"
        + "\n".join(_RUNS[n] for n in ALL_NOTEBOOKS if n in _RUNS) + "\n", encoding="utf-8")
    _stop_kernels(lab)
    assert errors.count() == 0, f"{notebook}: " + errors.first.inner_text()[-2000:]
    assert _snapshot(ROOT / "notebooks") == before, "the server wrote into notebooks/"
