"""A share of the proposals drawn uniformly, as random search would (``uniform_share``)."""

from __future__ import annotations

import numpy as np
import pytest

from privtune.optimizers import GPUCB


def _spy_uniform(monkeypatch, opt: GPUCB) -> list[int]:
    """Record the number of told points at each uniform draw ``opt`` makes."""
    calls: list[int] = []
    real = opt._uniform_point

    def spy(C, P=None):
        calls.append(opt.t)
        return real(C, P)

    monkeypatch.setattr(opt, "_uniform_point", spy)
    return calls


def test_every_kth_proposal_is_uniform_while_the_rewards_are_exact(monkeypatch, told_gpucb):
    """With 9 to 12 told points and ``uniform_share=3`` only the asks at 9 and 12 told points
    draw uniformly; off by default, and never under a known noise (the model's proposal)."""
    calls: list[int] = []
    for n in (9, 10, 11, 12):
        opt = told_gpucb(n, uniform_share=3)
        seen = _spy_uniform(monkeypatch, opt)
        x = opt.ask()
        assert x.shape == (2,)
        calls += seen
    assert calls == [9, 12]
    for kwargs in ({}, {"uniform_share": 3, "noise_var": 0.01}):
        opt = told_gpucb(12, **kwargs)
        seen = _spy_uniform(monkeypatch, opt)
        opt.ask()
        assert seen == []


def test_a_uniform_turn_takes_precedence_over_the_trust_region_and_the_forest(
    monkeypatch, told_gpucb
):
    """At 12 told points the turn is the uniform share's (a multiple of 3), not the trust
    region's (a multiple of 2) nor the forest's (a multiple of 4)."""
    opt = told_gpucb(12, uniform_share=3, local_share=2, forest_share=4)
    seen = _spy_uniform(monkeypatch, opt)
    monkeypatch.setattr(opt, "_local_candidates", lambda P: pytest.fail("trust region's turn"))
    monkeypatch.setattr(opt, "_forest_point", lambda C, P: pytest.fail("forest's turn"))
    opt.ask()
    assert seen == [12]


def test_a_uniform_turn_never_repeats_a_told_candidate(told_gpucb):
    opt = told_gpucb(12, uniform_share=3)
    C = np.vstack([opt.X, [[0.31, 0.29]]])
    assert np.array_equal(opt.ask(candidates=C), [0.31, 0.29])


def test_a_study_with_a_uniform_share_is_reproducible(studied_twice):
    values = studied_twice({"uniform_share": 3}, n_trials=18, categorical=False)
    assert values[0] == values[1]
    assert max(values[0]) > -0.01
