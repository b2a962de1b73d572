"""The sweep on Dask under faults: SIGKILL its workers midway, then the whole sweep,
resume, and check that finished runs were neither damaged nor computed twice.

Each run of the throw-away notebook appends one line to its own counter file (a side
effect outside the run's folder) just before it writes its result, so the counter
says how often the run computed.
"""

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from distributed.client import AllExit
from polybias.runner import sweep

NOTEBOOK = '''# %% tags=["parameters"]
x: int = 1  # a number
output_dir: str = "results/x"  # where to write
counter_dir: str = "."  # where each run counts its executions

# %%
import pathlib
import time
time.sleep(0.3)
if x < 0:
    raise ValueError("negative x")
with open(pathlib.Path(counter_dir) / f"{x}.txt", "a") as fh:
    fh.write("computed\\n")
(pathlib.Path(output_dir) / "value.txt").write_text(str(x * x))
'''
N_RUNS = 7
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(empty_project):
    (empty_project / "counts").mkdir()
    (empty_project / "nb" / "square.py").write_text(NOTEBOOK)
    return empty_project


def write_config(project, xs, resources="", name="sweep.yaml"):
    text = ("kernel: polybias\nruns:\n  - notebook: nb/square.py\n    section: sq\n"
            f"    grid:\n      x: {list(xs)}\n"
            f"    parameters:\n      counter_dir: {project / 'counts'}\n"
            "    executed: paper/executed/square_{x}.ipynb\n" + resources)
    path = project / name
    path.write_text(text)
    return path


def folder(project, x):
    return project / "results" / "sq" / f"square__x-{x}"


def finished(project):
    """Runs whose marker exists: the bytes of their marker and value files, and how often
    they computed so far."""
    out = {}
    for x in range(N_RUNS):
        marker = folder(project, x) / "run.json"
        if marker.is_file():
            out[x] = (marker.read_bytes(), (folder(project, x) / "value.txt").read_bytes(),
                      count(project, x))
    return out


def count(project, x):
    path = project / "counts" / f"{x}.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def wait_until(predicate, proc, timeout=120):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate() or proc.poll() is not None:
            return
        time.sleep(0.1)
    raise AssertionError("the sweep made no progress in time")


def workers(proc):
    """The Dask worker processes of a running sweep (spawned children of its process)."""
    return [c for c in psutil.Process(proc.pid).children()
            if "spawn_main" in " ".join(c.cmdline())]


def sigkill(procs):
    """SIGKILL processes with all their descendants (notebook kernels included)."""
    victims = []
    for p in procs:
        try:
            victims += [p, *p.children(recursive=True)]
        except psutil.NoSuchProcess:
            pass
    for v in victims:
        try:
            v.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    gone, alive = psutil.wait_procs(victims, timeout=10)
    assert not alive
    return len(victims)


@pytest.mark.integration
def test_sigkill_workers_then_the_whole_sweep_and_resume(project, tmp_path):
    cfg = write_config(project, range(N_RUNS))
    log = open(tmp_path / "sweep.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "polybias.cli", "sweep", str(cfg), "--jobs", "2",
                             "--no-progress"], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        # 1. kill both worker processes (and their kernels) once a run has finished:
        #    Dask restarts the workers and reschedules the runs they held
        wait_until(lambda: len(finished(project)) >= 1, proc)
        before_worker_kill = finished(project)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        assert len(workers(proc)) == 2
        sigkill(workers(proc))
        # 2. the sweep survives and goes on; then kill all of it midway (client,
        #    scheduler, workers, kernels), as a lost machine would
        wait_until(lambda: len(finished(project)) >= len(before_worker_kill) + 1, proc)
        assert proc.poll() is None, "the sweep ended when its workers were killed"
        sigkill([psutil.Process(proc.pid)])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()
    done = finished(project)
    for x, snapshot in before_worker_kill.items():  # finished before the workers died: untouched
        assert done[x] == snapshot
    assert len(done) < N_RUNS, "the sweep finished before it could be killed: make the runs longer"
    runs = {r.parameters["x"]: r for r in sweep.load_sweep(cfg)}
    for x, run in runs.items():
        if x in done:  # a finished run is intact (a run killed before it finished may
            # have computed twice, once in the killed attempt)
            assert sweep.is_done(run) and done[x][2] >= 1
            assert json.loads(done[x][0])["outputs"]["value.txt"]
        else:  # a killed or pending run leaves nothing that looks finished
            assert not sweep.is_done(run)
            assert not (folder(project, x) / "executed.ipynb").exists()
            assert not (project / f"paper/executed/square_{x}.ipynb").exists()
    # 3. resume: only the missing runs execute
    outcomes = {o["key"]: o["status"] for o in sweep.run_sweep(cfg, jobs=1, progress=False)}
    assert {k for k, s in outcomes.items() if s == "skipped"} == {runs[x].key for x in done}
    assert all(s in ("ok", "skipped") for s in outcomes.values())
    for x, run in runs.items():
        assert sweep.is_done(run)
        assert (folder(project, x) / "value.txt").read_text() == str(x * x)
        assert count(project, x) >= 1
    after = finished(project)
    for x, snapshot in done.items():  # finished before the resume: byte-identical, not recomputed
        assert after[x] == snapshot
    # a damaged output of a finished run makes it count as not done, and it reruns
    computed = count(project, 0)
    (folder(project, 0) / "value.txt").write_text("tampered")
    assert not sweep.is_done(runs[0])
    assert sweep.main([str(cfg), "--jobs", "1", "--no-progress"]) == 0
    assert (folder(project, 0) / "value.txt").read_text() == "0"
    assert count(project, 0) == computed + 1 and sweep.is_done(runs[0])


def test_failures_are_listed_with_their_notebook(project, capsys):
    cfg = write_config(project, [-1])
    assert sweep.main([str(cfg), "--jobs", "1"]) == 1
    captured = capsys.readouterr()
    assert "sweep: 100%" in captured.err and "failed=1" in captured.err  # the progress bar
    out = captured.out
    assert "0 ran, 0 skipped, 1 failed" in out
    assert "FAILED square__x--1: see results/sq/square__x--1/failed.ipynb" in out
    assert "negative x" in out
    failed = json.loads((folder(project, -1) / "failed.ipynb").read_text())
    assert any("negative x" in json.dumps(c.get("outputs", [])) for c in failed["cells"])
    assert not (folder(project, -1) / "run.json").exists()
    sweep.main([str(cfg), "--list"])
    listed = capsys.readouterr().out.splitlines()
    assert listed == ["failed square__x--1"]


def where_and_when(seconds):
    start = time.monotonic()
    time.sleep(seconds)
    return os.environ.get("CUDA_VISIBLE_DEVICES"), start, time.monotonic()


@pytest.mark.integration
def test_gpu_runs_hold_one_gpu_each(project):
    """Two local GPU workers (declared, not real): each GPU run holds one whole GPU."""
    from distributed import Client

    with sweep.local_cluster(1, gpus=2) as cluster, Client(cluster) as client:
        client.wait_for_workers(3)
        offered = sorted(str(w["resources"]) for w in client.scheduler_info()["workers"].values())
        assert offered == ["{'GPU': 1}", "{'GPU': 1}", "{}"]
        futures = [client.submit(where_and_when, 0.3, resources={"GPU": 1}, pure=False)
                   for _ in range(5)]
        spans = client.gather(futures)
        assert {d for d, _, _ in spans} == {"0", "1"}  # never on the CPU worker
        for device in ("0", "1"):
            mine = sorted((s, e) for d, s, e in spans if d == device)
            assert all(a[1] <= b[0] for a, b in zip(mine, mine[1:], strict=False))  # one at a time
        # a run asking for a resource no worker of an existing cluster offers fails at
        # once, with the reason (instead of waiting forever)
        cfg = write_config(project, [5], resources="    resources: {TPU: 1}\n")
        [outcome] = sweep.run_sweep(cfg, scheduler=cluster.scheduler_address, progress=False)
        assert outcome["status"] == "failed" and "no worker" in outcome["error"]
        assert "TPU" in outcome["error"] and count(project, 5) == 0


@pytest.mark.parametrize("resources", ["{GPU: 0}", "{GPU: yes}", "[GPU]"])
def test_malformed_resources(project, resources):
    cfg = write_config(project, [1], resources=f"    resources: {resources}\n")
    with pytest.raises(sweep.SweepError, match="'resources' must map"):
        sweep.load_sweep(cfg)


def test_resources_reach_the_runs(project):
    cfg = write_config(project, [1, 2], resources="    resources: {GPU: 1}\n")
    assert [r.resources for r in sweep.load_sweep(cfg)] == [{"GPU": 1.0}, {"GPU": 1.0}]
    # where runs execute does not change what they compute: same hash with or without
    plain = write_config(project, [1, 2], name="plain.yaml")
    assert sweep.load_sweep(plain)[0].resources == {}
    assert [r.params_hash for r in sweep.load_sweep(plain)] == [r.params_hash for r in sweep.load_sweep(cfg)]


def test_slurm_config_asks_one_gpu_per_worker(project):
    pytest.importorskip("dask_jobqueue", reason="needs dask-jobqueue: make env installs it (the dev extra), or pip install dask-jobqueue")
    config = REPO / "configs" / "dask" / "slurm.yaml"
    with sweep.jobqueue_cluster(config, jobs=0) as cluster:  # no job submitted
        script = cluster.job_script()
    assert "#SBATCH --gres=gpu:1" in script and "#SBATCH --cpus-per-task=8" in script
    assert "--resources GPU=1" in script and "--nthreads 1" in script
    assert "source .venv/bin/activate" in script


@pytest.mark.parametrize("body, message", [
    ("jobqueue: {}", "expected one mapping"),
    ("jobqueue: {kubernetes: {cores: 1}}", "expected one mapping"),
    ("cores: 1", "unknown key\\(s\\) 'cores'"),
    ("jobqueue: {slurm: {no_such_option: 1}}", "no_such_option"),
])
def test_malformed_cluster_config(project, body, message):
    pytest.importorskip("dask_jobqueue", reason="needs dask-jobqueue: make env installs it (the dev extra), or pip install dask-jobqueue")
    path = project / "cluster.yaml"
    path.write_text(body)
    with pytest.raises(sweep.SweepError, match=message):
        sweep.jobqueue_cluster(path, jobs=0)


KILLER = '''# %% tags=["parameters"]
output_dir: str = "results/x"  # where to write

# %%
import os
import signal
os.kill(os.getppid(), signal.SIGKILL)  # the kernel's parent: the Dask worker running it
os._exit(1)
'''


@pytest.mark.integration
def test_a_run_that_kills_its_worker_each_time_fails_with_the_reason(project):
    (project / "nb" / "killer.py").write_text(KILLER)
    cfg = project / "killer.yaml"
    cfg.write_text("kernel: polybias\nruns:\n  - notebook: nb/killer.py\n    section: k\n")
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        [outcome] = sweep.run_sweep(cfg, jobs=2, progress=False)
    assert outcome["status"] == "failed", outcome
    assert outcome["error"].startswith("KilledWorker: its worker died each time it ran")
    assert not sweep.is_done(sweep.load_sweep(cfg)[0])


def stop_a_running_sweep(project, tmp_path, sig, status, preexec_fn=None):
    """Start a sweep of N_RUNS runs on two workers, send ``sig`` once one run is done, check
    its exit ``status``, and return its output and the runs done."""
    cfg = write_config(project, range(N_RUNS))
    log = open(tmp_path / "sweep.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "polybias.cli", "sweep", str(cfg), "--jobs", "2",
                             "--no-progress"], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, preexec_fn=preexec_fn,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        wait_until(lambda: len(finished(project)) >= 1, proc)
        assert proc.poll() is None, "the sweep finished before it could be stopped"
        proc.send_signal(sig)
        assert proc.wait(timeout=120) == status
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    out = (tmp_path / "sweep.log").read_text()
    done = len(finished(project))
    assert f"sweep: {done} ran, 0 skipped, 0 failed, {N_RUNS - done} todo (interrupted)" in out, out
    assert "Traceback" not in out
    return cfg, out, done


@pytest.mark.integration
def test_ctrl_c_exits_130_with_the_summary_and_leaves_runs_todo(project, tmp_path,
                                                                 ctrl_c_as_in_a_terminal):
    cfg, _, done = stop_a_running_sweep(project, tmp_path, signal.SIGINT, 130, ctrl_c_as_in_a_terminal)
    todo = [r for r in sweep.load_sweep(cfg) if not sweep.is_done(r)]
    assert len(todo) == N_RUNS - done > 0
    assert all(not (folder(project, r.parameters["x"]) / "executed.ipynb").exists() for r in todo)


@pytest.mark.integration
@pytest.mark.parametrize("sig, status, name", [(signal.SIGTERM, 143, "SIGTERM"),
                                               (signal.SIGHUP, 129, "SIGHUP")])
def test_sigterm_and_sighup_stop_the_sweep_as_ctrl_c_does(project, tmp_path, sig, status, name):
    """What a batch system's walltime or scancel sends (SIGTERM), or a closed terminal
    (SIGHUP): the summary, the runs left todo, exit 128 + the signal, no traceback."""
    _, out, _ = stop_a_running_sweep(project, tmp_path, sig, status)
    assert f"polybias sweep: terminated ({name}); the runs left todo run on the next call" in out


def test_an_outcome_gone_with_its_worker_is_waited_for_again(monkeypatch):
    """A run's result held by a worker that is gone (its batch job lost as the run ended):
    the outcome is not had, and the sweep goes on checking its jobs rather than block."""
    from distributed import Client, LocalCluster

    monkeypatch.setattr(sweep, "GATHER", 1.0)
    run = sweep.Run(notebook="nb.py", section="s", key="k", parameters={}, executed=None,
                    kernel="python3")
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        fut = client.submit(dict, {"key": "k", "status": "ok"}, pure=False)
        assert sweep._outcome(fut, run, Path(".")) == {"key": "k", "status": "ok"}
        client.sync(next(iter(cluster.workers.values())).close)  # its result goes with it
        start = time.monotonic()
        assert sweep._outcome(fut, run, Path(".")) is None
        assert time.monotonic() - start < 10


def test_a_run_finished_by_a_lost_worker_counts_as_ran(project, monkeypatch):
    """A batch job lost after its run wrote the marker but before the outcome reached the
    sweep: Dask runs the task again, which finds the run done. The sweep counts it as ran,
    not as done before it started; a run done before the sweep stays "already done"."""
    cfg = write_config(project, [1, 2, 3])
    first, *rest = sweep.load_sweep(cfg)
    assert sweep.execute(first)["status"] == "ok"  # done before the sweep
    real = sweep.execute

    def retried(run, root=None, force=False):  # the lost attempt, then the retried task
        real(run, root, force)
        return real(run, root, force)

    monkeypatch.setattr(sweep, "execute", retried)
    outcomes = {o["key"]: o for o in sweep.run_sweep(cfg, jobs=1, progress=False)}
    assert outcomes[first.key] == {"key": first.key, "status": "skipped", "reason": sweep.DONE}
    for run in rest:
        assert outcomes[run.key] == {"key": run.key, "status": "ok",
                                     "note": sweep.FINISHED_UNREPORTED}
        assert count(project, run.parameters["x"]) == 1  # computed once
    assert sweep.summary(list(outcomes.values())).startswith(
        "sweep: 2 ran, 1 skipped (1 already done), 0 failed")


def test_a_run_asking_for_a_gpu_no_local_worker_offers_is_run_by_the_options_its_error_names(project):
    """Locally, with no GPU worker, a run declaring ``GPU: 1`` fails at once naming ``--gpus
    N`` and ``--jobs 1``; each option, as the error says, then runs it."""
    cfg = write_config(project, [3], resources="    resources: {GPU: 1}\n")
    [outcome] = sweep.run_sweep(cfg, jobs=2, gpus=0, progress=False)
    assert outcome["status"] == "failed" and "needs resources {'GPU': 1.0}" in outcome["error"]
    assert "(locally: --gpus N declares N GPUs; --jobs 1 runs everything in this process" in outcome["error"]
    assert count(project, 3) == 0
    [outcome] = sweep.run_sweep(cfg, jobs=1, progress=False)  # --jobs 1
    assert outcome["status"] == "ok" and count(project, 3) == 1
    [outcome] = sweep.run_sweep(cfg, jobs=2, gpus=1, force=True, progress=False)  # --gpus 1
    assert outcome["status"] == "ok" and count(project, 3) == 2
    options = sweep.parser().parse_args([str(cfg), "--gpus", "1", "--jobs", "1"])
    assert (options.gpus, options.jobs) == (1, 1)  # the options as the error spells them


def test_dask_s_gather_control_flow_is_not_printed_as_a_traceback():
    """asyncio's report of an unretrieved ``AllExit`` (Dask's gather stopping early when every
    worker is lost) is dropped; any other exception asyncio reports is kept."""
    def record(exc):
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "Task exception was never retrieved",
                                 None, (type(exc), exc, None))

    assert not sweep._DASK_CONTROL_FLOW.filter(record(AllExit()))
    assert sweep._DASK_CONTROL_FLOW.filter(record(ValueError("a real error")))
    assert sweep._DASK_CONTROL_FLOW.filter(logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "no exc",
                                                             None, None))
