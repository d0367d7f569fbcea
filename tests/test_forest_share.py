"""A share of the proposals from a forest of randomised trees (``forest_share``)."""

from __future__ import annotations

import numpy as np
import pytest

import privtune.optimizers.base as base
from privtune.cube import Block
from privtune.forest import forest_candidates, forest_proposal
from privtune.optimizers import GPUCB


def test_forest_proposal_looks_where_the_trees_disagree():
    """On a step told every 0.1 (1 up to 0.2, 0 from 0.3 on) the trees split anywhere between
    0.2 and 0.3: at 0.25 they disagree (mean about 1/2, spread about 1/2, an expected
    improvement over the best of about 0.04). Inside the step every tree predicts the best
    told reward, and above it 0, without spread: no improvement to expect. The largest
    predicted mean would be inside the step."""
    X = np.linspace(0.0, 1.0, 11)[:, None]
    y = (X[:, 0] < 0.25).astype(float)
    Z = np.array([[0.95], [0.65], [0.15], [0.25]])
    rng = np.random.default_rng(0)
    assert forest_proposal(X, y, Z, rng) == 3


def test_forest_candidates_cover_the_faces_the_best_points_and_their_moves():
    layout = (Block(0, 1), Block(1, 2))
    X = np.array([[0.2, 0.3], [0.8, 0.6], [0.5, 0.5]])
    y = np.array([0.0, 1.0, 0.5])
    C = forest_candidates(X, y, layout, np.random.default_rng(0))
    assert np.all((C >= 0.0) & (C <= 1.0))
    # a corner of the cube, and a one-parameter move of the best point to a face
    assert any(np.array_equal(c, [0.0, 1.0]) for c in C)
    assert any(np.array_equal(c, [0.8, 0.0]) for c in C)


def test_every_kth_proposal_is_the_forests_while_the_rewards_are_exact(monkeypatch, told_gpucb):
    calls = []
    real = base.forest_proposal

    def spy(X, y, Z, rng):
        calls.append(X.shape[0])
        return real(X, y, Z, rng)

    monkeypatch.setattr(base, "forest_proposal", spy)
    for n in (9, 10, 11, 12):
        x = told_gpucb(n, forest_share=3).ask()
        assert x.shape == (2,)
    assert calls == [9, 12]
    calls.clear()
    told_gpucb(12, forest_share=None).ask()  # off by default
    told_gpucb(12, forest_share=3, noise_var=0.01).ask()  # known noise: the model's proposal
    assert calls == []


def test_the_forests_proposal_is_never_a_told_point(told_gpucb):
    opt = told_gpucb(12, forest_share=3)
    C = np.vstack([opt.X, [[0.31, 0.29]]])
    x = opt.ask(candidates=C)
    assert np.array_equal(x, [0.31, 0.29])


@pytest.mark.parametrize("name", ["forest_share", "local_share", "uniform_share"])
@pytest.mark.parametrize("bad", [1, 0, 2.5, True, "3"])
def test_a_share_must_be_an_integer_of_at_least_two(name, bad):
    with pytest.raises(ValueError, match=f"{name} must be an integer >= 2"):
        GPUCB(2, **{name: bad})


def test_a_study_with_a_forest_share_is_reproducible(studied_twice):
    values = studied_twice({"forest_share": 3}, n_trials=18, categorical=False)
    assert values[0] == values[1]
    assert max(values[0]) > -0.01
