"""Fixtures shared by the test modules."""

from __future__ import annotations

import os

import numpy as np
import optuna
import pytest

from privtune import PrivateGPUCBSampler
from privtune.optimizers import GPUCB


@pytest.fixture
def told_gpucb():
    """A factory ``make(n, *, y=None, noise_var=0.0, **kwargs)``: a two-parameter fitted
    GP-UCB with log-EI (64 raw samples, seed 0; ``kwargs`` to the constructor) told ``n``
    uniform points (seed 1) and either ``-||x - 0.3||^2`` or the rewards ``y``, plus a
    Gaussian noise of standard deviation 0.1 when ``noise_var`` is given (``acquisition`` in
    ``kwargs`` replaces log-EI)."""

    def make(n: int, *, y=None, noise_var: float = 0.0, **kwargs) -> GPUCB:
        kwargs.setdefault("acquisition", "logei")
        opt = GPUCB(
            2,
            seed=0,
            surrogate="fitted",
            n_raw_samples=64,
            noise_var=noise_var,
            **kwargs,
        )
        rng = np.random.default_rng(1)
        for i, x in enumerate(rng.random((n, 2))):
            value = -np.sum((x - 0.3) ** 2) if y is None else y[i]
            opt.tell(x, float(value + (rng.normal(0, 0.1) if noise_var else 0.0)))
        return opt

    return make


@pytest.fixture
def studied_twice():
    """A factory ``run(optimizer_kwargs, n_trials, categorical)``: the values of two studies
    of ``PrivateGPUCBSampler(seed=3, optimizer_kwargs=...)``, maximising
    ``-(a - 0.3)^2 - 0.01 (b - 6)^2`` (plus 0.05 when the categorical ``c`` is ``"y"``)."""

    def run(optimizer_kwargs: dict, n_trials: int, categorical: bool) -> list[list[float]]:
        def objective(trial):
            a = trial.suggest_float("a", 0.0, 1.0)
            b = trial.suggest_int("b", 1, 8)
            value = -((a - 0.3) ** 2) - 0.01 * (b - 6) ** 2
            if categorical:
                value += 0.05 * (trial.suggest_categorical("c", ["x", "y", "z"]) == "y")
            return value

        values = []
        for _ in range(2):
            sampler = PrivateGPUCBSampler(seed=3, optimizer_kwargs=optimizer_kwargs)
            study = optuna.create_study(sampler=sampler, direction="maximize")
            study.optimize(objective, n_trials=n_trials)
            values.append([t.value for t in study.trials])
        return values

    return run


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
