"""Every misconfiguration of a sweep is an error before anything runs; runs whose data
cannot be had, or that another process is executing, are skipped with their reason; a
successful run logs nothing at error level; failures keep the exception's first line."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from polybias.runner import locks, sweep
from polybias.runner.runs import normalise_parameters

NOTEBOOK = '''# %% tags=["parameters"]
x: int = 1  # a number
tests: list = []  # test names
output_dir: str = "results/x"  # where to write
table_file: str = ""  # table

# %%
import json
import pathlib
if x < 0:
    raise ValueError("negative x\\nsecond line of the message")
pathlib.Path(output_dir, "value.json").write_text(json.dumps({"x": x, "tests": tests}))
'''

PLOT = '''# %% tags=["parameters"]
output_dir: str = "results/x"  # where to write

# %%
import matplotlib.pyplot as plt
plt.plot([1, 2])
plt.show()
'''

NO_PARAMETERS = '''# %%
print("no parameters cell")
'''


def files_under(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def project(empty_project, monkeypatch):
    (empty_project / "nb" / "echo.py").write_text(NOTEBOOK)
    (empty_project / "nb" / "plot.py").write_text(PLOT)
    (empty_project / "nb" / "bare.py").write_text(NO_PARAMETERS)
    monkeypatch.setenv("POLYBIAS_CACHE", str(empty_project / ".cache"))
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    return empty_project


def write(project, body, name="sweep.yaml"):
    path = project / name
    path.write_text(textwrap.dedent(body))
    return path


RUN = "runs:\n  - notebook: nb/echo.py\n    section: s\n"


@pytest.mark.parametrize("body, message", [
    ("kernal: polybias\n" + RUN + "    grid: {x: [1]}\n",
     r"sweep.yaml: unknown key\(s\) 'kernal'; valid keys: kind, kernel, runs$"),
    (RUN + "    grid: {x: [1]}\n    paramters: {tests: [a]}\n",
     r"sweep.yaml: runs\[0\]: unknown key\(s\) 'paramters'; valid keys: notebook, section, grid, "
     r"parameters, executed, table_file, resources, sources, optional_sources, keep_records$"),
    (RUN + "    grid: {y: [1]}\n",
     r"sweep.yaml: runs\[0\]: unknown parameter\(s\) 'y' of notebook nb/echo.py; it declares: "
     r"x, tests, output_dir, table_file$"),
    (RUN + "    grid: {x: [1]}\n    parameters: {n_permutation: 10, seed: 0}\n",
     r"unknown parameter\(s\) 'n_permutation', 'seed' of notebook nb/echo.py; it declares: x, "),
    ("runs:\n  - notebook: nb/plot.py\n    table_file: t.md\n",
     r"unknown parameter\(s\) 'table_file' of notebook nb/plot.py; it declares: output_dir$"),
    ("runs:\n  - notebook: nb/bare.py\n",
     r"runs\[0\]: notebook .*bare.py has no cell tagged 'parameters'"),
    (RUN + "    sources: crows-pairs\n", r"runs\[0\]: 'sources' must be a list of data source names"),
    (RUN + "    sources: [crows-pairz]\n",
     r"runs\[0\]: unknown data source\(s\) 'crows-pairz' in 'sources'; registered: far, here$"),
    (RUN + "    optional_sources: [farr]\n",
     r"runs\[0\]: unknown data source\(s\) 'farr' in 'optional_sources'; registered: far, here$"),
    (RUN + "    sources: [here, far]\n    optional_sources: [far]\n",
     r"runs\[0\]: data source\(s\) 'far' both in 'sources' \(the run needs them\) and "
     r"'optional_sources' \(a part of it reads them\)$"),
])
def test_misconfigurations_are_errors_before_anything_runs(project, body, message, capsys):
    registry(project)
    path = write(project, body)
    before = files_under(project)
    with pytest.raises(sweep.SweepError, match=message):
        sweep.load_sweep(path)
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 2
    assert capsys.readouterr().err.startswith("polybias sweep: ")
    assert files_under(project) == before  # nothing ran, nothing was written


def test_a_lone_value_of_a_list_parameter_is_a_one_item_list(project):
    path = write(project, RUN + "    grid: {tests: [weat1, [weat1, weat2]]}\n"
                                "    parameters: {x: 3}\n")
    runs = sweep.load_sweep(path)
    assert [r.parameters["tests"] for r in runs] == [["weat1"], ["weat1", "weat2"]]
    fixed = write(project, RUN + "    parameters: {tests: WEAT1}\n", "fixed.yaml")
    [run] = sweep.load_sweep(fixed)
    assert run.parameters == {"tests": ["WEAT1"]}
    [outcome] = sweep.run_sweep(fixed, jobs=1, progress=False)
    assert outcome["status"] == "ok"
    value = json.loads((project / "results/s/echo/value.json").read_text())
    assert value["tests"] == ["WEAT1"]  # not W, E, A, T, 1
    assert normalise_parameters({"tests": None}, {"tests": "list"}) == {"tests": None}


def closed_port_url():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/o/r/file.csv"


def registry(project):
    """Two sources: ``here`` in the mirror folder of the project, ``far`` unreachable."""
    import hashlib

    (project / "mirror" / "o+r").mkdir(parents=True, exist_ok=True)
    (project / "mirror" / "o+r" / "here.csv").write_text("a,b\n")
    digest = hashlib.sha256(b"a,b\n").hexdigest()
    (project / "data").mkdir(exist_ok=True)
    (project / "data" / "sources.yaml").write_text(
        f"sources:\n"
        f"  here: {{repo: o/r, commit: {'1' * 40}, path: here.csv, sha256: {digest}, licence: MIT}}\n"
        f"  far: {{url: '{closed_port_url()}', sha256: {'a' * 64}, licence: MIT}}\n")


def test_runs_whose_data_cannot_be_had_are_skipped(project, monkeypatch, capsys, caplog):
    registry(project)
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(project / "mirror"))
    monkeypatch.setenv("POLYBIAS_EMBEDDED", str(project / "embedded"))
    path = write(project, RUN + "    grid: {x: [1]}\n    sources: [here]\n"
                 "  - notebook: nb/echo.py\n    section: s\n    grid: {x: [2]}\n"
                 "    sources: [here, far]\n    executed: paper/executed/echo_{x}.ipynb\n")
    assert [r.sources for r in sweep.load_sweep(path)] == [("here",), ("here", "far")]
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "  SKIPPED echo__x-2: data source 'far' cannot be had"
    # the list: each source that cannot be had, once, how to provide it first, never cut
    assert out[1] == "data sources that cannot be had here (1), so their runs were skipped:"
    assert out[2].startswith(
        "  data source 'far' cannot be had: put the file file.csv (sha256 " + "a" * 64 + f") in "
        f"{project / 'embedded'} or at "
        f"{project / '.cache' / 'sources' / 'far' / 'file.csv'}, or connect to the network; the "
        "download failed (no connection to 127.0.0.1 (offline?)): http://127.0.0.1:")
    assert out[3] == "sweep: 1 ran, 1 skipped (1 not run), 0 failed"  # the counts last on screen
    assert len(out) == 4
    # quiet: one log line for every source that cannot be had, none saying it is downloading
    said = [r.getMessage() for r in caplog.records if "cannot be had" in r.getMessage()]
    assert said == ["sweep: 1 data source cannot be had here: 1 run skipped, 0 in part (each "
                    "source, and how to provide it, at the end)"]
    assert not [r for r in caplog.records if "downloading" in r.getMessage()]
    assert (project / "results/s/echo__x-1/run.json").is_file()
    assert not (project / "results/s/echo__x-2").exists()  # the skipped run wrote nothing
    assert not (project / "paper").exists()
    assert not (project / ".cache" / "sources" / "far").exists()
    # the next sweep: one run done, the other still without its data; both meanings told apart
    outcomes = {o["key"]: o for o in sweep.run_sweep(path, jobs=1, progress=False)}
    assert outcomes["echo__x-1"] == {"key": "echo__x-1", "status": "skipped", "reason": sweep.DONE}
    assert outcomes["echo__x-2"]["status"] == "skipped"
    assert "'far' cannot be had" in outcomes["echo__x-2"]["reason"]
    text = sweep.summary(list(outcomes.values()))
    assert text.startswith("  SKIPPED echo__x-2: ")
    assert text.endswith("\nsweep: 0 ran, 2 skipped (1 already done, 1 not run), 0 failed")


PART = '''# %% tags=["parameters"]
output_dir: str = "results/x"  # where to write
table_file: str = ""  # table

# %%
import pathlib
from polybias.data import sources
note = sources.unavailable_note(["far"], "the reproduction")
print(note or "reproduced")
pathlib.Path(output_dir, "value.json").write_text("1")
if table_file:
    pathlib.Path(table_file).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(table_file).write_text(note or "reproduced")
'''


def test_a_run_lacking_only_its_optional_sources_runs_in_part(project, monkeypatch, capsys, caplog):
    """Sources that only a part of a run reads: without them the run executes (its notebook
    says what it skipped), is recorded as partial, leaves the checked copy and table beside
    the paper as they are, and does not count as done; once they can be had the next sweep
    runs it whole."""
    import hashlib

    registry(project)
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(project / "mirror"))
    monkeypatch.setenv("POLYBIAS_EMBEDDED", str(project / "embedded"))
    (project / "nb" / "part.py").write_text(PART)
    path = write(project, "runs:\n  - notebook: nb/part.py\n    section: p\n    sources: [here]\n"
                          "    optional_sources: [far]\n    executed: paper/executed/part.ipynb\n"
                          "    table_file: paper/tables/part.md\n")
    [run] = sweep.load_sweep(path)
    assert (run.sources, run.optional_sources, run.lacking) == (("here",), ("far",), {})
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["  IN PART part: data source 'far' cannot be had; the part that reads it was skipped",
                       "data sources that cannot be had here (1), so their runs ran in part:"]
    assert out[2].startswith("  data source 'far' cannot be had: put the file file.csv") and len(out) == 4
    assert out[3] == "sweep: 1 ran (1 in part), 0 skipped, 0 failed"
    said = [r.getMessage() for r in caplog.records if "cannot be had" in r.getMessage()]
    assert said == ["sweep: 1 data source cannot be had here: 0 runs skipped, 1 in part (each "
                    "source, and how to provide it, at the end)"]
    folder = project / "results/p/part"
    marker = json.loads((folder / "run.json").read_text())
    assert marker["status"] == "partial" and list(marker["lacking"]) == ["far"]
    assert marker["executed"] is None and marker["parameters"]["table_file"] == "results/p/part/part.md"
    note = (folder / "part.md").read_text()
    assert note.startswith("(not run: the reproduction, skipped because data source 'far' cannot "
                           "be had: put the file file.csv") and "\n" not in note
    # the notebook shows the line (the project's path in it made relative, as in any output)
    shown = ["".join(out.get("text", "")) for cell in json.loads((folder / "executed.ipynb").read_text())["cells"]
             for out in cell.get("outputs", [])]
    assert note.replace(f"{project}/", "") + "\n" in shown
    assert not (project / "paper").exists()  # the checked copy and table: left as they are
    assert not sweep.is_done(run)
    capsys.readouterr()
    assert sweep.main([str(path), "--list"]) == 0
    assert capsys.readouterr().out == "part   part\n"
    # the source can be had now (in the mirror): the next sweep runs it whole
    (project / "mirror" / "o+r" / "far.csv").write_text("x\n")
    text = (project / "data" / "sources.yaml").read_text().splitlines()
    text[-1] = (f"  far: {{repo: o/r, commit: {'1' * 40}, path: far.csv, "
                f"sha256: {hashlib.sha256(b'x' + bytes([10])).hexdigest()}, licence: MIT}}")
    (project / "data" / "sources.yaml").write_text("\n".join(text) + "\n")
    [outcome] = sweep.run_sweep(path, jobs=1, progress=False)
    assert outcome["status"] == "ok" and "partial" not in outcome
    marker = json.loads((folder / "run.json").read_text())
    assert marker["status"] == "ok" and "lacking" not in marker
    assert (project / "paper/tables/part.md").read_text() == "reproduced"
    assert "reproduced" in (project / "paper/executed/part.ipynb").read_text()
    assert sweep.is_done(run)


HOLD = """
import fcntl, sys, time
fh = open(sys.argv[1], "a+")
fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
fh.seek(0); fh.truncate(); fh.write("otherhost pid 4242\\n"); fh.flush()
print("locked", flush=True)
time.sleep(600)
"""


def test_a_run_locked_by_another_process_is_skipped_then_taken_over(project, capsys):
    path = write(project, RUN + "    grid: {x: [1, 2]}\n")
    folder = project / "results/s/echo__x-1"
    folder.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder / ".lock")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert sweep.main([str(path), "--list"]) == 0
        assert capsys.readouterr().out.splitlines() == ["running echo__x-1", "todo   echo__x-2"]
        outcomes = {o["key"]: o for o in sweep.run_sweep(path, jobs=1, progress=False)}
        assert outcomes["echo__x-1"] == {"key": "echo__x-1", "status": "skipped",
                                         "reason": "running elsewhere (locked by otherhost pid 4242)"}
        assert outcomes["echo__x-2"]["status"] == "ok"
        assert files_under(folder) == [".lock"]  # the locked run was not touched
        assert "SKIPPED echo__x-1: running elsewhere (locked by otherhost pid 4242)" in \
            sweep.summary(list(outcomes.values()))
    finally:
        holder.send_signal(signal.SIGKILL)  # killed: the system releases its lock
        holder.wait()
    outcomes = {o["key"]: o["status"] for o in sweep.run_sweep(path, jobs=1, progress=False)}
    assert outcomes == {"echo__x-1": "ok", "echo__x-2": "skipped"}
    assert json.loads((folder / "value.json").read_text()) == {"x": 1, "tests": []}
    assert sweep.is_done(sweep.load_sweep(path)[0])
    assert "pid" in (folder / ".lock").read_text() and ".lock" not in json.loads(
        (folder / "run.json").read_text())["outputs"]


def test_two_sweeps_of_one_config_do_not_compute_a_run_twice(project):
    """A second sweep process started while the first executes a (slow) run skips it."""
    slow = NOTEBOOK.replace("import json\n", "import json\nimport time\ntime.sleep(x)\n")
    (project / "nb" / "echo.py").write_text(slow)
    path = write(project, RUN + "    grid: {x: [6]}\n")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    first = subprocess.Popen([sys.executable, "-m", "polybias.cli", "sweep", str(path), "--jobs", "1",
                              "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, env=env)
    lock = locks.RunLock(project / "results/s/echo__x-6")
    import time

    end = time.monotonic() + 60
    while not lock.held_elsewhere():
        assert time.monotonic() < end and first.poll() is None, "the first sweep never took the lock"
        time.sleep(0.05)
    second = subprocess.run([sys.executable, "-m", "polybias.cli", "sweep", str(path), "--jobs", "1",
                             "--no-progress"], capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 0
    assert second.stdout.splitlines()[-1] == "sweep: 0 ran, 1 skipped (1 not run), 0 failed"
    assert f"SKIPPED echo__x-6: running elsewhere (locked by {os.uname().nodename} pid {first.pid})" \
        in second.stdout
    out, _ = first.communicate(timeout=120)
    assert first.returncode == 0 and "sweep: 1 ran, 0 skipped, 0 failed" in out, out


def test_success_logs_no_error_and_failures_keep_the_first_line(project, capfd, monkeypatch):
    """jupyter_client interrupts a kernel before shutting it down; the SIGINT reaching the
    idle kernel made it log "KeyboardInterrupt caught in kernel" at error level (when it
    arrives is a race, so the interrupts themselves are counted)."""
    from jupyter_client.manager import AsyncKernelManager

    interrupts = []
    original = AsyncKernelManager._async_interrupt_kernel

    async def spy(self):
        interrupts.append(self.shutting_down)
        await original(self)

    monkeypatch.setattr(AsyncKernelManager, "_async_interrupt_kernel", spy)
    path = write(project, "runs:\n  - notebook: nb/plot.py\n    section: p\n"
                          "  - notebook: nb/echo.py\n    section: s\n    grid: {x: [-1]}\n")
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 1
    captured = capfd.readouterr()
    assert interrupts == []
    assert "ERROR" not in captured.err and "KeyboardInterrupt" not in captured.err
    assert captured.out.splitlines() == [
        "  FAILED echo__x--1: see results/s/echo__x--1/failed.ipynb",
        "    ValueError: negative x",
        "sweep: 1 ran, 0 skipped, 1 failed"]


def test_values_out_of_their_declaration_stop_the_sweep_before_a_kernel_starts(tmp_path, capsys,
                                                                              monkeypatch):
    """A value a notebook's declaration refuses (polybias.studies.parameters) is found for
    every run before any starts: one line naming each refused run, exit status 2."""
    monkeypatch.setattr(sweep, "execute", lambda *a, **k: pytest.fail("a run started"))
    path = tmp_path / "bad.yaml"
    path.write_text(textwrap.dedent("""\
        runs:
          - notebook: notebooks/05_crows_pairs.py
            section: offline-check
            grid: {n_bootstrap: [10, -5]}
            parameters: {model: planted-mlm, dataset: planted}
        """))
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "no run started, 1 refused: " in err[0], err
    assert "n_bootstrap--5: 05_crows_pairs: n_bootstrap must be an integer >= 0, got -5" in err[0], err
