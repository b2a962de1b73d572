"""The batch-job side of ``polybias sweep --cluster`` without a batch system: the cluster
file, the job script, and a rejected submission through a stand-in ``sbatch`` (the real
cluster: tests/cluster, ``make cluster-test``)."""

import contextlib
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from polybias.runner import cluster as batch
from polybias.runner import sweep

_INSTALL = "make env installs it (the dev extra), or pip install dask-jobqueue (the slurm extra)"
pytest.importorskip("dask_jobqueue", reason=f"needs dask-jobqueue: {_INSTALL}")
Client = pytest.importorskip("distributed", reason=f"needs distributed (with dask-jobqueue): {_INSTALL}").Client
REPO = Path(__file__).resolve().parents[2]


def write(tmp_path, body):
    path = tmp_path / "cluster.yaml"
    path.write_text(body)
    return path


@pytest.fixture
def batch_commands(tmp_path, monkeypatch):
    """Put stand-in batch commands first on PATH: ``batch_commands(sbatch=SHELL)`` writes
    ``sbatch`` running SHELL and an ``scancel`` that succeeds (``squeue=SHELL``: an
    ``squeue`` too); ``batch_commands()`` leaves PATH with no batch command at all."""

    def install(sbatch: str | None = None, squeue: str | None = None, sacct: str | None = None) -> Path:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        if sbatch is None:
            monkeypatch.setenv("PATH", str(bin_dir))
            return bin_dir
        for name, text in (("sbatch", sbatch), ("scancel", "exit 0"), ("squeue", squeue), ("sacct", sacct)):
            if text is None:
                continue
            (bin_dir / name).write_text(f"#!/bin/sh\n{text}\n")
            (bin_dir / name).chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        return bin_dir

    return install


@contextlib.contextmanager
def job_pool(path, jobs):
    """A :class:`~polybias.runner.cluster.JobPool` of ``jobs`` jobs and a client of its
    cluster; the pool is closed on the way out, whatever happened."""
    pool = batch.JobPool(path, jobs=jobs)
    try:
        with Client(pool.cluster) as client:
            yield pool, client
    finally:
        pool.close()


def check_until_error(pool, client, seconds=30):
    """Check the pool's jobs every 0.2 s until :meth:`JobPool.check` raises (the test's
    ``pytest.raises`` catches it); a pool that stays quiet for ``seconds`` fails the test."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pool.check(client)
        time.sleep(0.2)
    pytest.fail(f"the job pool raised nothing within {seconds} s")


def test_committed_config_names_its_jobs_and_has_no_dashboard():
    system, options, settings = batch.read_config(REPO / "configs" / "dask" / "slurm.yaml")
    assert system == "slurm" and options["job_name"] == "polybias-worker" and "name" not in options
    assert options["scheduler_options"]["dashboard"] is False
    assert settings == {"start-timeout": 3600, "max-resubmits": 16}
    with sweep.jobqueue_cluster(REPO / "configs" / "dask" / "slurm.yaml", jobs=0) as cluster:
        script = cluster.job_script()
        assert cluster.scheduler.http_server.port != 8787
    assert "#SBATCH -J polybias-worker" in script
    # each job in a scratch folder of its own, removed when the job script exits
    assert script.index("trap 'exit 143' TERM") < script.index('cd "$SLURM_SUBMIT_DIR"')
    assert 'export TMPDIR="$polybias_job_tmp"' in script


def test_a_dashboard_only_when_asked(tmp_path):
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, "
                           "scheduler-options: {dashboard_address: ':0'}}}")
    _, options, settings = batch.read_config(path)
    assert options["scheduler_options"] == {"dashboard_address": ":0"}
    assert settings == batch.SETTINGS


@pytest.mark.parametrize("body, message", [
    ("jobqueue: {slurm: {cores: 1}}\nworkers: 2", "unknown key(s) 'workers'"),
    ("jobqueue: {slurm: {cores: 1}}\nsweep: {timeout: 2}", "unknown key 'timeout'"),
    ("jobqueue: {slurm: {cores: 1}}\nsweep: {start-timeout: -1}", "must be a number >= 0"),
    ("jobqueue: {slurm: {cores: 1}}\nsweep: {max-resubmits: yes}", "must be a number >= 0"),
    ("jobqueue: {slurm: {cores: 1}}\nsweep: [1]", "'sweep' must be a mapping"),
])
def test_malformed_sweep_settings(tmp_path, body, message):
    with pytest.raises(sweep.SweepError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sweep.jobqueue_cluster(write(tmp_path, body), jobs=0)


def test_importing_dask_jobqueue_keeps_the_ctrl_c_handler(ctrl_c_as_in_a_terminal):
    """dask_jobqueue's runner replaces SIGINT's handler by sys.exit(): Ctrl-C would exit 0."""
    code = ("import signal; from polybias.runner import cluster; cluster._import_dask_jobqueue(); "
            "import dask_jobqueue.runner; "
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         preexec_fn=ctrl_c_as_in_a_terminal)
    assert out.stdout.strip() == "True"


def test_without_dask_jobqueue_the_advice_names_the_package_that_the_slurm_extra_installs(tmp_path, monkeypatch):
    """The advice, ``pip install dask-jobqueue``, names the distribution of the project's
    ``slurm`` extra; with the package importable again the same cluster file is accepted."""
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo}}\n")
    installed = sys.modules["dask_jobqueue"]
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)  # as if not installed
    with pytest.raises(sweep.SweepError, match="--cluster needs dask-jobqueue") as err:
        sweep.jobqueue_cluster(path, jobs=0)
    package = re.search(r"pip install (\S+)$", str(err.value))[1]
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(re.match(rf"{re.escape(package)}\b", req) for req in extras["slurm"])
    monkeypatch.setitem(sys.modules, "dask_jobqueue", installed)  # installed again
    with sweep.jobqueue_cluster(path, jobs=0) as cluster:
        assert "#SBATCH" in cluster.job_script()


def test_a_rejected_submission_raises_the_schedulers_message(tmp_path, batch_commands):
    batch_commands(sbatch="echo 'sbatch: error: Invalid generic resource (gres) "
                          "specification' >&2; exit 1")
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo, "
                           "job-extra-directives: ['--gres=gpu:1']}}\n")
    with job_pool(path, jobs=2) as (pool, client), pytest.raises(batch.ClusterError) as caught:
        check_until_error(pool, client)
    message = str(caught.value)
    assert "sbatch: error: Invalid generic resource (gres) specification" in message
    assert "jobqueue.slurm.job-extra-directives" in message and str(path) in message
    assert pool.cluster.status.name == "closed"


def test_no_worker_within_the_start_timeout(tmp_path, batch_commands):
    batch_commands(sbatch="echo 'Submitted batch job 42'")
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo}}\n"
                           "sweep: {start-timeout: 1}\n")
    with job_pool(path, jobs=1) as (pool, client):
        pool.check(client)  # within the timeout: nothing to say
        time.sleep(1.5)
        with pytest.raises(batch.ClusterError, match=r"no Dask worker connected within 1 s "
                                                        r"\(dask-worker job 42: "):
            pool.check(client)


def test_a_job_ended_before_its_worker_connected_is_replaced(tmp_path, batch_commands, monkeypatch):
    """squeue says the job was cancelled while its worker had not connected: it is replaced,
    and once the replacements are used up the error names the jobs and their state."""
    batch_commands(sbatch="echo 'Submitted batch job 42'", squeue="echo '42 CANCELLED None'")
    monkeypatch.setattr(batch, "QUEUE_LOOK", 0.0)
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo, name: pb-w}}\n"
                           "sweep: {max-resubmits: 1}\n")
    with job_pool(path, jobs=1) as (pool, client), pytest.raises(batch.ClusterError) as caught:
        check_until_error(pool, client)
    assert pool.resubmitted == 1 and pool.ended_early == ["pb-w job 42: CANCELLED"] * 2
    message = str(caught.value)
    assert message.startswith("every worker job ended before its worker connected "
                              "(pb-w job 42: CANCELLED) and the 1 replacements allowed are used up")
    assert "SLURMCluster" not in message and "start-timeout" not in message


def test_a_job_that_can_never_start_ends_the_pool_at_once_naming_the_setting(tmp_path, batch_commands,
                                                                           monkeypatch):
    """SLURM keeps a job that asks for more than any node has pending for ever
    (PartitionConfig): the pool says so at its first look at the queue, not at the start
    timeout, and names the key to change."""
    batch_commands(sbatch="echo 'Submitted batch job 42'", squeue="echo '42 PENDING PartitionConfig'")
    monkeypatch.setattr(batch, "QUEUE_LOOK", 0.0)
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo, name: pb-w}}\n"
                           "sweep: {start-timeout: 3600}\n")
    started = time.monotonic()
    with job_pool(path, jobs=1) as (pool, client), pytest.raises(batch.ClusterError) as caught:
        check_until_error(pool, client)
    message = str(caught.value)
    assert time.monotonic() - started < 60
    assert message.startswith("worker job pb-w job 42: PENDING (PartitionConfig) can never start as "
                              "submitted -- ask for no more than a node of the partition has: fix "
                              "jobqueue.slurm.cores (or memory) in ")
    assert "start-timeout" not in message


def test_the_start_timeout_names_the_busy_queue_over_jobs_that_ended_early(tmp_path, batch_commands,
                                                                           monkeypatch):
    """One job was cancelled before its worker connected, its replacement still waits for
    resources: the cause is the busy queue, which the advice names first."""
    once = tmp_path / "once"
    batch_commands(sbatch="echo 'Submitted batch job 42'",
                   squeue=f"if [ -f {once} ]; then echo '42 PENDING Resources'; "
                          f"else touch {once}; echo '42 CANCELLED None'; fi")
    monkeypatch.setattr(batch, "QUEUE_LOOK", 0.0)
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo, name: pb-w}}\n"
                           "sweep: {start-timeout: 2, max-resubmits: 1}\n")
    with job_pool(path, jobs=1) as (pool, client), pytest.raises(batch.ClusterError) as caught:
        check_until_error(pool, client)
    message = str(caught.value)
    assert "no Dask worker connected within 2 s (pb-w job 42: PENDING (Resources))" in message
    assert "1 earlier job(s) ended before their worker connected (pb-w job 42: CANCELLED)" in message
    assert "the queue is busy: 1 job(s) still wait (Resources); raise sweep.start-timeout" in message
    assert "logs" not in message


def test_a_job_purged_from_the_queue_counts_as_ended(tmp_path, batch_commands, monkeypatch):
    """squeue exits 1 when it lists none of the ids it is given (all purged after they ended),
    and there is no accounting: the job is counted as ended and replaced, not waited for."""
    batch_commands(sbatch="echo 'Submitted batch job 42'",
                   squeue="echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1",
                   sacct="echo 'sacct: error: Slurm accounting storage is disabled' >&2; exit 1")
    monkeypatch.setattr(batch, "QUEUE_LOOK", 0.0)
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo, name: pb-w}}\n"
                           "sweep: {max-resubmits: 1}\n")
    with job_pool(path, jobs=1) as (pool, client), pytest.raises(batch.ClusterError) as caught:
        check_until_error(pool, client)
    assert pool.resubmitted == 1
    assert pool.ended_early == ["pb-w job 42: GONE (listed by neither squeue nor sacct)"] * 2
    assert str(caught.value).startswith("every worker job ended before its worker connected")
    # with accounting, sacct's state is the job's
    assert batch.job_states("slurm", ["42"]) == {"42": "GONE (listed by neither squeue nor sacct)"}
    batch_commands_dir = tmp_path / "bin"
    (batch_commands_dir / "sacct").write_text("#!/bin/sh\necho '42|CANCELLED by 0'\n")
    assert batch.job_states("slurm", ["42"]) == {"42": "CANCELLED"}


def test_no_submission_command(tmp_path, batch_commands):
    batch_commands()  # no sbatch on PATH
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo}}\n")
    with job_pool(path, jobs=1) as (pool, client), pytest.raises(
            batch.ClusterError, match="cannot run the submission command .*sbatch"):
        check_until_error(pool, client)
