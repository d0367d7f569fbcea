"""Optuna's public sampler conformance cases, for every algorithm of PrivateGPUCBSampler and for
GOUCBSampler."""

from __future__ import annotations

import optuna
import pytest
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    RelativeSamplerTestCase,
    SingleOnlySamplerTestCase,
)

from privtune import GOUCBSampler, PrivateGPUCBSampler
from privtune.tuning import ALGORITHMS

optuna.logging.set_verbosity(optuna.logging.ERROR)


class TestPrivateGPUCBSampler(
    BasicSamplerTestCase, RelativeSamplerTestCase, SingleOnlySamplerTestCase
):
    @pytest.fixture(params=sorted(set(ALGORITHMS) - {"go-ucb", "qff-ldp"}))
    def sampler(self, request):
        # n_startup_trials=0 so that the short studies of the cases reach the acquisition (and
        # sample_relative proposes at once: start-up trials are left to the independent sampler).
        # qff-jdp is private by construction (its objective returns raw scores to the trusted
        # privatizer); qff-ldp needs privatize(), which the cases do not call.
        kwargs = (
            {"epsilon": 1.0, "value_range": (-10.0, 10.0)} if request.param == "qff-jdp" else {}
        )
        return lambda: PrivateGPUCBSampler(request.param, n_startup_trials=0, seed=0, **kwargs)


class TestGOUCBSampler(BasicSamplerTestCase, RelativeSamplerTestCase, SingleOnlySamplerTestCase):
    @pytest.fixture
    def sampler(self):
        # A Phase I of two trials, so that the short studies of the cases reach Phase II.
        return lambda: GOUCBSampler(n_explore=2, horizon=8, seed=0)
