"""``polybias sweep --cluster`` on a real one-node SLURM cluster (``make cluster-test``).

Each test runs the sweep command in a throw-away project, as a user would from a login
node, submits real ``sbatch`` jobs and then hurts them with ``scancel``, a walltime, a
rejected submission or Ctrl-C. The runs' notebook records each attempt in ``counts/``
(outside the run's folder), so a test can tell a run retried from one computed once. Each
sweep, and the jobs it submits, get a temporary folder of their own (``TMPDIR``), so that
a test can see what they leave there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
JOB_NAME = "polybias-test-worker"
NOTEBOOK = '''# %% tags=["parameters"]
x: int = 1  # a number
sleep: float = 0.0  # seconds each attempt waits before writing
first_sleep: float = -1.0  # seconds the first attempt waits instead (< 0: as the others)
output_dir: str = "results/x"  # where to write

# %%
import pathlib
import time

from polybias.results.records import write_record

counts = pathlib.Path("counts") / f"{x}.txt"
with open(counts, "a") as fh:
    fh.write("attempt\\n")
attempt = len(counts.read_text().splitlines())
time.sleep(first_sleep if attempt == 1 and first_sleep >= 0 else sleep)
write_record({"run_id": f"square-{x}", "metric": "square", "values": {"square": x * x}}, output_dir)
print(x * x)
'''
CLUSTER = {
    "name": JOB_NAME,
    "cores": 1,
    "processes": 1,
    "memory": "1GB",
    "walltime": "00:10:00",
    "queue": "polybias",
    "interface": "lo",  # scheduler and workers on the loopback interface only
    "job-script-prologue": ['cd "$SLURM_SUBMIT_DIR"', 'export POLYBIAS_ROOT="$SLURM_SUBMIT_DIR"'],
    "log-directory": "results/dask-logs",
    "death-timeout": 60,
}


def make_project(root: Path, xs, sleep=0.0, first_sleep=-1.0, cluster=None, sweep=None) -> Path:
    """A bare project at ``root`` with the notebook, a sweep of ``xs`` and a cluster file."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("")
    for sub in ("nb", "configs", "counts"):
        (root / sub).mkdir(exist_ok=True)
    (root / "nb" / "square.py").write_text(NOTEBOOK)
    (root / "sweep.yaml").write_text(yaml.safe_dump({"kernel": "polybias", "runs": [{
        "notebook": "nb/square.py", "section": "sq", "grid": {"x": list(xs)},
        "parameters": {"sleep": sleep, "first_sleep": first_sleep},
        "executed": "paper/executed/square_{x}.ipynb"}]}, sort_keys=False))
    config = {"jobqueue": {"slurm": {**CLUSTER, **(cluster or {})}},
              "sweep": {"start-timeout": 120, **(sweep or {})}}
    (root / "cluster.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root


def env(project: Path, tmp: Path | None = None) -> dict[str, str]:
    extra = {"TMPDIR": str(tmp)} if tmp else {}
    return {**os.environ, "POLYBIAS_ROOT": str(project), "PYTHONUNBUFFERED": "1", **extra}


class Sweep:
    """``polybias sweep sweep.yaml ARGS`` running in ``project`` (its own process group),
    with ``tmp`` as its and its jobs' temporary folder."""

    def __init__(self, project: Path, *args: str, preexec=None, tmp: Path | None = None):
        self.project = project
        self.tmp = tmp
        self.log = project / "sweep.log"
        self.err = project / "sweep.err"
        # jobs of an earlier test still in the queue (a cancelled one COMPLETING) are not ours
        self.earlier = set(our_jobs())
        with open(self.log, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "polybias.cli", "sweep", "sweep.yaml", "--no-progress", *args],
                cwd=project, env=env(project, tmp), stdout=out, stderr=err, start_new_session=True,
                preexec_fn=lambda: (os.umask(0o022), preexec and preexec()))
        self.jobs_seen: set[str] = set()

    def wait_for(self, predicate, timeout: float, what: str) -> None:
        """Poll ``predicate`` (and the jobs in the queue) until true; fail after ``timeout``."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.jobs_seen |= set(our_jobs()) - self.earlier
            if predicate():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"the sweep ended (status {self.proc.returncode}) before "
                                     f"{what}:\n{self.output()}")
            time.sleep(0.5)
        raise AssertionError(f"no {what} within {timeout} s:\n{self.output()}")

    def finish(self, timeout: float) -> int:
        end = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < end:
            self.jobs_seen |= set(our_jobs()) - self.earlier
            time.sleep(0.5)
        if self.proc.poll() is None:
            self.kill()
            raise AssertionError(f"the sweep did not end within {timeout} s:\n{self.output()}")
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        cancel_all()

    def output(self) -> str:
        return f"--- stdout\n{self.log.read_text()}--- stderr\n{self.err.read_text()}"

    def stdout(self) -> str:
        return self.log.read_text()

    def stderr(self) -> str:
        return self.err.read_text()


def our_jobs(states: str = "PENDING,RUNNING,CONFIGURING,COMPLETING") -> dict[str, str]:
    """Job id -> state of the jobs named ``JOB_NAME`` (squeue shows the name the config gave)."""
    out = subprocess.run(["squeue", "-h", "-t", states, "-o", "%i %j %T"], capture_output=True,
                         text=True, check=True).stdout
    return {i: s for i, name, s in (ln.split() for ln in out.splitlines()) if name == JOB_NAME}


def cancel_all() -> None:
    ids = list(our_jobs())
    if ids:
        subprocess.run(["scancel", *ids], check=False)


def running_jobs() -> list[str]:
    return [i for i, s in our_jobs().items() if s == "RUNNING"]


def assert_jobs_cancelled(run) -> None:
    """The sweep's jobs were cancelled: within 10 s none is pending, configuring or running
    (a cancelled job shows COMPLETING while Slurm tears it down, longer on a loaded node),
    and within 120 s none is left in the queue at all."""
    def live() -> dict[str, str]:
        return {i: s for i, s in our_jobs().items() if i not in run.earlier and s != "COMPLETING"}
    end = time.monotonic() + 10
    while live() and time.monotonic() < end:
        time.sleep(0.5)
    assert not live(), ("the sweep's jobs were not cancelled", live())
    end = time.monotonic() + 120
    while set(our_jobs()) - run.earlier and time.monotonic() < end:
        time.sleep(1)
    assert not set(our_jobs()) - run.earlier, ("still completing after 120 s", our_jobs())


def done_runs(project: Path) -> list[str]:
    return sorted(p.parent.name for p in (project / "results" / "sq").glob("*/run.json"))


def attempts(project: Path, x: int) -> int:
    path = project / "counts" / f"{x}.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def leftovers(tmp: Path, seconds: float = 20) -> list[str]:
    """What the sweep's jobs left in their temporary folder once our jobs are gone: Dask's
    worker locks (``*.dirlock``), kernel folders, job scratch folders (polled: a cancelled
    job's processes take a few seconds to end)."""
    end = time.monotonic() + seconds
    while True:
        found = sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*")
                       if p.name.endswith(".dirlock") or p.name.startswith(("polybias-kernel-",
                                                                            "polybias-job-")))
        if not found or time.monotonic() > end:
            return found
        time.sleep(0.5)


def outputs(project: Path) -> dict[str, bytes]:
    """Every file the sweep left, by path, but the run locks and the batch jobs' logs."""
    files = {}
    for path in sorted(project.rglob("*")):
        rel = path.relative_to(project).as_posix()
        if path.is_file() and (rel.startswith("results/sq/") or rel.startswith("paper/")) \
                and path.name != ".lock":
            files[rel] = path.read_bytes()
    return files


@pytest.fixture(autouse=True)
def no_jobs_left():
    """Every test starts and ends with none of our jobs in the queue."""
    cancel_all()
    yield
    cancel_all()


@pytest.fixture
def sweep_in(ctrl_c_as_in_a_terminal):
    """Start a sweep as a user at a terminal would: Ctrl-C reaches it even where this test
    session was started in the background."""
    started = []

    def start(project, *args):
        # short: a kernel's sockets live under it (a socket path has at most 107 bytes)
        tmp = Path(tempfile.mkdtemp(prefix="pbc-"))
        started.append(Sweep(project, *args, preexec=ctrl_c_as_in_a_terminal, tmp=tmp))
        return started[-1]

    yield start
    for s in started:
        s.kill()
        shutil.rmtree(s.tmp, ignore_errors=True)


def test_cluster_sweep_equals_a_local_run(tmp_path, sweep_in):
    project = make_project(tmp_path / "cluster", [1, 2, 3, 4], sleep=1)
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "2")
    run.wait_for(lambda: len(running_jobs()) == 2, 120, "two running jobs")
    assert run.finish(300) == 0, run.output()
    assert "4 ran, 0 skipped, 0 failed" in run.stdout()
    assert len(run.jobs_seen) == 2  # two jobs, under the config's name; none replaced
    assert "8787" not in run.stderr() and "Task exception" not in run.stderr()
    assert [attempts(project, x) for x in (1, 2, 3, 4)] == [1, 1, 1, 1]
    assert leftovers(run.tmp) == []
    # the same sweep in this process, in another project folder: byte for byte the same
    local = make_project(tmp_path / "local", [1, 2, 3, 4], sleep=1)
    subprocess.run([sys.executable, "-m", "polybias.cli", "sweep", "sweep.yaml", "--jobs", "1",
                    "--no-progress"], cwd=local, env=env(local), check=True, capture_output=True)
    cluster_files, local_files = outputs(project), outputs(local)
    assert len(cluster_files) == 4 * 3 + 4  # per run: marker, notebook, record; 4 copies
    assert cluster_files.keys() == local_files.keys()
    assert [k for k in cluster_files if cluster_files[k] != local_files[k]] == []
    # written with the permissions umask 022 gives, readable by colleagues
    for rel in ("paper/executed/square_1.ipynb", "results/sq/square__x-1/executed.ipynb",
                "results/sq/square__x-1/run.json", "results/sq/square__x-1/square-1.json"):
        assert stat.S_IMODE((project / rel).stat().st_mode) == 0o644, rel
    # resuming does nothing: every run is done
    again = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "2")
    assert again.finish(60) == 0 and "0 ran, 4 skipped (4 already done)" in again.stdout()
    assert outputs(project) == cluster_files and not again.jobs_seen
    # forced again on a cluster that rejects the jobs: the runs done before did not run now
    gpu = yaml.safe_load((project / "cluster.yaml").read_text())
    gpu["jobqueue"]["slurm"].update(gpu_cluster())
    (project / "gpu.yaml").write_text(yaml.safe_dump(gpu, sort_keys=False))
    forced = sweep_in(project, "--cluster", "gpu.yaml", "--jobs", "2", "--force")
    assert forced.finish(120) == 1, forced.output()
    assert "sweep: 0 ran, 0 skipped, 0 failed, 4 todo (no workers)" in forced.stdout(), forced.output()
    assert "sbatch: error: Invalid generic resource" in forced.stderr()
    assert outputs(project) == cluster_files


def test_one_job_cancelled_is_replaced(tmp_path, sweep_in):
    project = make_project(tmp_path / "p", range(1, 7), sleep=4)
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "2")
    run.wait_for(lambda: len(done_runs(project)) >= 1 and len(running_jobs()) == 2, 180,
                 "a finished run with two running jobs")
    victim = running_jobs()[0]
    subprocess.run(["scancel", victim], check=True)
    run.wait_for(lambda: len(run.jobs_seen) == 3, 120, "a replacement job")
    assert run.finish(300) == 0, run.output()
    assert "6 ran, 0 skipped, 0 failed" in run.stdout()
    assert len(done_runs(project)) == 6
    assert len(run.jobs_seen) == 3, run.jobs_seen  # the cancelled job was replaced, once
    err = run.stderr()
    assert f"worker job lost ({JOB_NAME} job {victim}: CANCELLED); submitting a replacement " \
           "(1 of 4)" in err, err
    assert "SLURMCluster" not in err  # the job name of the file, not Dask's
    assert leftovers(run.tmp) == []  # the cancelled job's scratch folder went with it


def test_a_job_cancelled_before_its_worker_connects_is_replaced(tmp_path, sweep_in):
    """The first job's script waits (a job stuck in its prologue); cancelling it there is
    noticed in seconds, not after the start timeout (10 minutes here)."""
    hold = "[ -e counts/held ] || { touch counts/held; sleep 300; }"
    project = make_project(tmp_path / "p", [1], sweep={"start-timeout": 600}, cluster={
        "job-script-prologue": [*CLUSTER["job-script-prologue"], hold]})
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "1")
    run.wait_for(lambda: (project / "counts" / "held").exists(), 120, "the first job's script")
    [victim] = set(our_jobs()) - run.earlier
    subprocess.run(["scancel", victim], check=True)
    assert run.finish(150) == 0, run.output()
    assert "1 ran, 0 skipped, 0 failed" in run.stdout()
    assert len(run.jobs_seen) == 2, (run.jobs_seen, run.stderr())
    assert (f"worker job ended before its worker connected ({JOB_NAME} job {victim}: CANCELLED); "
            "submitting a replacement (1 of 2)") in run.stderr(), run.stderr()


def test_every_job_cancelled_is_replaced(tmp_path, sweep_in):
    project = make_project(tmp_path / "p", [1, 2, 3, 4], sleep=4)
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "2")
    run.wait_for(lambda: len(done_runs(project)) >= 1 and len(running_jobs()) == 2, 180,
                 "a finished run with two running jobs")
    first = running_jobs()
    subprocess.run(["scancel", *first], check=True)
    assert run.finish(300) == 0, run.output()
    assert "4 ran" in run.stdout() and len(done_runs(project)) == 4
    assert len(run.jobs_seen - set(first)) == 2, run.jobs_seen  # both replaced


def test_every_job_cancelled_past_the_limit_ends_with_the_reason(tmp_path, sweep_in):
    project = make_project(tmp_path / "p", [1, 2, 3, 4], sleep=4, sweep={"max-resubmits": 0})
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "2")
    run.wait_for(lambda: len(done_runs(project)) >= 1 and len(running_jobs()) == 2, 180,
                 "a finished run with two running jobs")
    subprocess.run(["scancel", *running_jobs()], check=True)
    assert run.finish(120) == 1, run.output()
    assert "every worker job was lost" in run.stderr() and "sweep.max-resubmits" in run.stderr()
    assert "todo (no workers)" in run.stdout()
    assert "Traceback" not in run.stderr()
    assert_jobs_cancelled(run)


def gpu_cluster() -> dict:
    """The GPU lines of the committed configs/dask/slurm.yaml; this cluster has no GPU."""
    committed = yaml.safe_load((REPO / "configs" / "dask" / "slurm.yaml").read_text())["jobqueue"]["slurm"]
    assert "--gres=gpu:1" in committed["job-extra-directives"]
    return {"job-extra-directives": committed["job-extra-directives"],
            "worker-extra-args": committed["worker-extra-args"]}


def test_rejected_submission_ends_with_the_schedulers_message(tmp_path, sweep_in):
    """The committed configs/dask/slurm.yaml asks for a GPU; this cluster has none."""
    project = make_project(tmp_path / "p", [1, 2], cluster=gpu_cluster())
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "2")
    assert run.finish(120) == 1, run.output()
    err = run.stderr()
    lines = [ln for ln in err.splitlines() if ln.startswith("polybias sweep:")]
    assert len(lines) == 1, err
    assert "sbatch: error: Invalid generic resource (gres) specification" in lines[0]
    assert "jobqueue.slurm.job-extra-directives" in lines[0] and "cluster.yaml" in lines[0]
    assert "Traceback" not in err and "AssertionError" not in err and "Task exception" not in err
    assert "0 ran, 0 skipped, 0 failed, 2 todo" in run.stdout()
    assert attempts(project, 1) == attempts(project, 2) == 0


def test_jobs_that_end_before_connecting_end_the_sweep_with_their_state(tmp_path, sweep_in):
    """A broken job script: each job fails at once; they are replaced (twice, for one job)
    and then the sweep stops, saying why, long before the start timeout (120 s)."""
    project = make_project(tmp_path / "p", [1], cluster={"job-script-prologue": ["exit 3"]})
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "1")
    assert run.finish(90) == 1, run.output()
    [line] = [ln for ln in run.stderr().splitlines() if ln.startswith("polybias sweep:")]
    assert "every worker job ended before its worker connected" in line, line
    assert f"({JOB_NAME} job " in line and ": FAILED (NonZeroExitCode)" in line  # squeue's words
    assert "results/dask-logs" in line and "start-timeout" not in line
    assert "submitting a replacement (2 of 2)" in run.stderr(), run.output()


def test_no_worker_within_the_start_timeout(tmp_path, sweep_in):
    """A job that stays queued (here: until a start time an hour away)."""
    project = make_project(tmp_path / "p", [1], cluster={"job-extra-directives": ["--begin=now+3600"]},
                           sweep={"start-timeout": 10})
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "1")
    assert run.finish(90) == 1, run.output()
    [line] = [ln for ln in run.stderr().splitlines() if ln.startswith("polybias sweep:")]
    assert "no Dask worker connected within 10 s" in line and "sweep.start-timeout" in line
    assert f"({JOB_NAME} job " in line and ": PENDING (BeginTime))" in line, line
    assert_jobs_cancelled(run)


def test_a_job_that_can_never_start_ends_the_sweep_at_once(tmp_path, sweep_in):
    """A job asking for more CPUs than the one node has stays pending for ever
    (PartitionConfig): the sweep ends at its first look at the queue, in one line naming the
    setting to change, not after the start timeout (120 s), and leaves no job behind."""
    project = make_project(tmp_path / "p", [1], cluster={"cores": 512, "processes": 1})
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "1")
    assert run.finish(60) == 1, run.output()
    [line] = [ln for ln in run.stderr().splitlines() if ln.startswith("polybias sweep:")]
    assert "can never start as submitted" in line and ": PENDING (PartitionConfig)" in line, line
    assert "jobqueue.slurm.cores (or memory)" in line and "start-timeout" not in line
    assert_jobs_cancelled(run)


def test_ctrl_c_cancels_the_jobs_and_leaves_the_rest_todo(tmp_path, sweep_in):
    project = make_project(tmp_path / "p", [1, 2, 3, 4, 5, 6], sleep=6)
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "2")
    run.wait_for(lambda: len(done_runs(project)) >= 1, 180, "a finished run")
    run.proc.send_signal(signal.SIGINT)
    assert run.finish(120) == 130, run.output()
    done = done_runs(project)
    out = run.stdout()
    assert f"{len(done)} ran, 0 skipped, 0 failed, {6 - len(done)} todo (interrupted)" in out
    assert "interrupted (Ctrl-C)" in run.stderr()
    assert_jobs_cancelled(run)
    assert leftovers(run.tmp) == []  # the kernels' and Dask's scratch files went with the jobs
    listed = subprocess.run([sys.executable, "-m", "polybias.cli", "sweep", "sweep.yaml", "--list"],
                            cwd=project, env=env(project), capture_output=True, text=True, check=True)
    states = dict(reversed(ln.split()) for ln in listed.stdout.splitlines())
    assert sorted(k for k, s in states.items() if s == "done") == done
    assert all(s == "todo" for k, s in states.items() if k not in done), states


def test_ctrl_c_at_any_moment_exits_130_with_a_summary(tmp_path, sweep_in):
    """Ctrl-C while the modules load and the sweep file is read, and once the job is
    queued. The runs sleep far longer than the test lasts: on a fast machine a worker may
    already have started one by the time Ctrl-C comes (at 5 s, or once its job is queued),
    and that run must end with its cancelled job, not finish and count as done."""
    project = make_project(tmp_path / "p", [1, 2], sleep=600)
    moments = [1.0, 5.0, "queued"]
    for moment in moments:
        run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "1")
        if moment == "queued":
            run.wait_for(lambda run=run: set(our_jobs()) - run.earlier, 120, "a queued job")
        else:
            time.sleep(moment)
        run.proc.send_signal(signal.SIGINT)
        assert run.finish(60) == 130, (moment, run.output())
        out, err = run.stdout(), run.stderr()
        assert len([ln for ln in out.splitlines() if ln.startswith("sweep: ")]) == 1, (moment, out)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, (moment, err)
        assert "polybias sweep: interrupted (Ctrl-C)" in err, (moment, err)
        assert_jobs_cancelled(run)  # a run a worker had started ends with its job
    assert "0 ran, 0 skipped, 0 failed, 2 todo (interrupted)" in out, out
    assert done_runs(project) == []


def test_a_run_killed_by_its_jobs_walltime_is_retried(tmp_path, sweep_in):
    """SLURM ends the job at its walltime (1 minute) while the run's first attempt waits;
    the job is replaced and the run retried there."""
    project = make_project(tmp_path / "p", [7], first_sleep=600, cluster={"walltime": "00:01:00"})
    run = sweep_in(project, "--cluster", "cluster.yaml", "--jobs", "1")
    assert run.finish(300) == 0, run.output()
    assert "1 ran, 0 skipped, 0 failed" in run.stdout()
    assert attempts(project, 7) == 2
    assert len(run.jobs_seen) == 2
    assert "TIMEOUT" in run.stderr()  # the lost job's state, in the replacement's log line
    marker = json.loads((project / "results/sq/square__x-7/run.json").read_text())
    assert marker["status"] == "ok"
