"""The batch-job side of ``polybias sweep --cluster`` without a batch system: the cluster
file, the job script, and a rejected submission through a stand-in ``sbatch`` (the real
cluster: tests/cluster, ``make cluster-test``)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from polybias import jobqueue, sweep

pytest.importorskip("dask_jobqueue")
REPO = Path(__file__).resolve().parents[1]


def write(tmp_path, body):
    path = tmp_path / "cluster.yaml"
    path.write_text(body)
    return path


def test_committed_config_names_its_jobs_and_has_no_dashboard():
    system, options, settings = jobqueue.read_config(REPO / "configs" / "dask" / "slurm.yaml")
    assert system == "slurm" and options["job_name"] == "polybias-worker" and "name" not in options
    assert options["scheduler_options"]["dashboard"] is False
    assert settings == {"start-timeout": 3600, "max-resubmits": 16}
    with sweep.jobqueue_cluster(REPO / "configs" / "dask" / "slurm.yaml", jobs=0) as cluster:
        script = cluster.job_script()
        assert cluster.scheduler.http_server.port != 8787
    assert "#SBATCH -J polybias-worker" in script


def test_a_dashboard_only_when_asked(tmp_path):
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, "
                           "scheduler-options: {dashboard_address: ':0'}}}")
    _, options, settings = jobqueue.read_config(path)
    assert options["scheduler_options"] == {"dashboard_address": ":0"}
    assert settings == jobqueue.SETTINGS


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


def test_importing_dask_jobqueue_keeps_the_ctrl_c_handler():
    """dask_jobqueue's runner replaces SIGINT's handler by sys.exit(): Ctrl-C would exit 0."""
    code = ("import signal; from polybias import jobqueue; jobqueue._import_dask_jobqueue(); "
            "import dask_jobqueue.runner; "
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_rejected_submission_raises_the_schedulers_message(tmp_path, monkeypatch):
    from distributed import Client

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("sbatch", "echo 'sbatch: error: Invalid generic resource (gres) "
                                  "specification' >&2; exit 1"), ("scancel", "exit 0")):
        (bin_dir / name).write_text(f"#!/bin/sh\n{text}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo, "
                           "job-extra-directives: ['--gres=gpu:1']}}\n")
    pool = jobqueue.JobPool(path, jobs=2)
    try:
        with Client(pool.cluster) as client:
            end = time.monotonic() + 30
            with pytest.raises(jobqueue.ClusterError) as caught:
                while time.monotonic() < end:
                    pool.check(client)
                    time.sleep(0.2)
    finally:
        pool.close()
    message = str(caught.value)
    assert "sbatch: error: Invalid generic resource (gres) specification" in message
    assert "jobqueue.slurm.job-extra-directives" in message and str(path) in message
    assert pool.cluster.status.name == "closed"


def test_no_worker_within_the_start_timeout(tmp_path, monkeypatch):
    from distributed import Client

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("sbatch", "echo 'Submitted batch job 42'"), ("scancel", "exit 0")):
        (bin_dir / name).write_text(f"#!/bin/sh\n{text}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo}}\n"
                           "sweep: {start-timeout: 1}\n")
    pool = jobqueue.JobPool(path, jobs=1)
    try:
        with Client(pool.cluster) as client:
            pool.check(client)  # within the timeout: nothing to say
            time.sleep(1.5)
            with pytest.raises(jobqueue.ClusterError, match=r"no Dask worker connected within 1 s "
                                                            r"\(SLURMCluster-0 \(job 42"):
                pool.check(client)
    finally:
        pool.close()


def test_no_submission_command(tmp_path, monkeypatch):
    from distributed import Client

    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch here
    path = write(tmp_path, "jobqueue: {slurm: {cores: 1, memory: 1GB, interface: lo}}\n")
    pool = jobqueue.JobPool(path, jobs=1)
    try:
        with Client(pool.cluster) as client:
            end = time.monotonic() + 30
            with pytest.raises(jobqueue.ClusterError, match="cannot run the submission command .*sbatch"):
                while time.monotonic() < end:
                    pool.check(client)
                    time.sleep(0.2)
    finally:
        pool.close()
