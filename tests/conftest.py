"""Fixtures shared by the test modules."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def dask_client():
    """A client of a real Dask ``LocalCluster`` on loopback: 2 worker processes, 1 thread each.

    Needs the ``distributed`` extra; ``.ci/run`` installs it (``PRIVTUNE_REQUIRE_SERVERS=1``
    turns a missing one into a failure instead of a skip).
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        if os.environ.get("PRIVTUNE_REQUIRE_SERVERS") == "1":
            pytest.fail("dask.distributed is not installed but PRIVTUNE_REQUIRE_SERVERS=1.")
        pytest.skip("dask.distributed is not installed (the 'distributed' extra)")
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client
