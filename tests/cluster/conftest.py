"""tests/cluster runs only on the one-node SLURM cluster of ``make cluster-test``
(tests/cluster/slurm_cluster.sh sets POLYBIAS_SLURM_CLUSTER); elsewhere it is skipped."""

import os
from pathlib import Path

import pytest

CLUSTER = os.environ.get("POLYBIAS_SLURM_CLUSTER")


def pytest_collection_modifyitems(config, items):
    if CLUSTER:
        return
    skip = pytest.mark.skip(reason="needs a SLURM cluster: run `make cluster-test` "
                                   "(tests/cluster/slurm_cluster.sh stands one up)")
    here = Path(__file__).parent
    for item in items:  # this hook sees every collected test: mark only ours
        if here in Path(item.path).parents:
            item.add_marker(skip)
