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


@pytest.fixture
def postgres_url():
    """The SQLAlchemy URL of the real PostgreSQL server ``.ci/run`` starts on loopback
    (``PRIVTUNE_TEST_POSTGRES_URL``); skipped without one, unless ``PRIVTUNE_REQUIRE_SERVERS=1``
    turns a missing server into a failure."""
    url = os.environ.get("PRIVTUNE_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("PRIVTUNE_REQUIRE_SERVERS") == "1":
            pytest.fail("PRIVTUNE_TEST_POSTGRES_URL is not set but PRIVTUNE_REQUIRE_SERVERS=1.")
        pytest.skip("no PostgreSQL server: set PRIVTUNE_TEST_POSTGRES_URL (see .ci/run)")
    return url


@pytest.fixture
def always_failing():
    """An estimator class whose every fit fails, as one misconfigured for the data does; the
    class counts the fits made (``fits``), clones included."""
    from sklearn.linear_model import LogisticRegression

    class AlwaysFailing(LogisticRegression):
        fits = 0

        def fit(self, X, y, sample_weight=None):
            type(self).fits += 1
            raise ValueError("this estimator cannot fit these data")

    return AlwaysFailing
