"""A share of the proposals from a trust region around the best told point (``local_share``)."""

from __future__ import annotations

import numpy as np

from privtune.optimizers import GPUCB
from privtune.optimizers.base import TRUST_REGION_SIDE


def _box(opt: GPUCB) -> tuple[np.ndarray, np.ndarray]:
    centre = opt.X[int(np.argmax(opt.y))]
    ls = np.asarray(opt._block_lengthscales(), dtype=float)
    width = opt._trust_region_side() * ls / np.exp(np.mean(np.log(ls)))
    return np.clip(centre - width / 2, 0, 1), np.clip(centre + width / 2, 0, 1)


def test_every_kth_proposal_is_in_the_trust_region_while_the_rewards_are_exact(told_gpucb):
    turns = [
        n for n in range(6, 14) if told_gpucb(n, local_share=3)._local_candidates(None) is not None
    ]
    assert turns == [6, 9, 12]
    opt = told_gpucb(12, local_share=3)
    lo, hi = _box(opt)
    assert np.all(hi - lo < 1.0)  # a box smaller than the cube, so the check below can fail
    C = opt._local_candidates(None)
    assert np.all((C >= lo - 1e-12) & (C <= hi + 1e-12))
    x = opt.ask()
    assert np.all((x >= lo - 1e-12) & (x <= hi + 1e-12))
    # off by default, and under a known noise (the rewards are not exact)
    assert told_gpucb(12, local_share=None)._local_candidates(None) is None
    assert told_gpucb(12, local_share=3, noise_var=0.01)._local_candidates(None) is None


def test_the_trust_region_follows_turbos_rule(told_gpucb):
    """Three improvements in a row double the side; ``max(4, dim)`` told rewards in a row
    without one halve it; below ``0.5^7`` it restarts."""

    def side(y):
        return told_gpucb(len(y), local_share=2, y=y)._trust_region_side()

    assert side([0, 1, 2, 3]) == 2 * TRUST_REGION_SIDE
    assert side([0, 1, 2, 3, 3, 3, 3, 3]) == TRUST_REGION_SIDE
    assert side([1, 0, 0, 0, 0]) == TRUST_REGION_SIDE / 2
    # an improvement below 1e-3 of the best is not one
    assert side([1, 1.0005, 1.0009, 1.0, 1.0]) == TRUST_REGION_SIDE / 2
    assert side([1.0] + [0.0] * 24) == TRUST_REGION_SIDE / 2**6
    assert side([1.0] + [0.0] * 28) == TRUST_REGION_SIDE


def test_the_local_proposal_is_never_a_told_point(told_gpucb):
    opt = told_gpucb(12, local_share=2)
    for _ in range(6):
        x = opt.ask()
        assert not any(np.array_equal(x, z) for z in opt.X)
        opt.tell(x, float(-np.sum((x - 0.3) ** 2)))


def test_a_study_with_a_local_share_is_reproducible(studied_twice):
    values = studied_twice({"local_share": 2}, n_trials=20, categorical=True)
    assert values[0] == values[1]
    assert max(values[0]) > 0.03


def test_without_privacy_the_default_gives_the_trust_region_every_second_proposal():
    """``"gp-ucb"`` on scores that are not privatized takes :data:`EXACT_LOCAL_SHARE`; the
    optimizers' own default is off, what the user asks is kept, and under privacy the
    default leaves it off (the curator's noise makes the rewards inexact, so it could not act
    anyway)."""
    from privtune.registry import EXACT_LOCAL_SHARE
    from privtune.tuning import make_optimizer

    assert EXACT_LOCAL_SHARE == 2
    assert make_optimizer("gp-ucb", 2).local_share == EXACT_LOCAL_SHARE
    assert GPUCB(2).local_share is None
    assert make_optimizer("gp-ucb", 2, optimizer_kwargs={"local_share": 5}).local_share == 5
    assert make_optimizer("gp-ucb", 2, epsilon=1.0).local_share is None


def test_the_trust_region_never_acts_on_noisy_or_privatized_rewards():
    """A repeat that returns another score, or the curator's known noise, makes the rewards
    inexact; no proposal is then the trust region's, at any number of told rewards."""
    from privtune.tuning import make_optimizer

    rng = np.random.default_rng(0)
    noisy = make_optimizer("gp-ucb", 2, seed=0)
    private = make_optimizer("gp-ucb", 2, seed=0, epsilon=1.0)
    x0 = rng.random(2)
    noisy.tell(x0, 0.5)
    noisy.tell(x0, 0.6)  # the repeat disagrees
    private.tell(x0, 0.5)
    turns = []
    for opt in (noisy, private):
        for x in rng.random((12, 2)):
            opt.tell(x, float(-np.sum((x - 0.3) ** 2)))
            turns.append(opt._local_candidates(None) is not None)
    assert not any(turns)
    exact = make_optimizer("gp-ucb", 2, seed=0)
    for x in rng.random((12, 2)):
        exact.tell(x, float(-np.sum((x - 0.3) ** 2)))
    assert exact._local_candidates(None) is not None  # the check above can fail


def test_a_batch_of_parallel_workers_takes_its_turns_in_order(told_gpucb):
    """The pending points count towards the turn: four proposals asked before any is told
    alternate between the trust region and the cube as four sequential ones would, instead
    of all falling in the trust region (or none)."""
    opt = told_gpucb(12, local_share=2)
    pending = np.random.default_rng(2).random((3, 2))
    turns = [opt._local_candidates(pending[:i] if i else None) is not None for i in range(4)]
    assert turns == [True, False, True, False]
    odd = told_gpucb(13, local_share=2)
    assert [odd._local_candidates(pending[:i] if i else None) is not None for i in range(4)] == [
        False,
        True,
        False,
        True,
    ]


def test_no_trust_region_around_a_best_tied_with_the_median(told_gpucb):
    """A best told reward no better than the median (most configurations at one chance-level
    floor) marks no region: the turn then searches the cube. Once a reward rises above the
    floor, the turn is the trust region's again."""
    floor = [0.1] * 11 + [0.05]
    assert told_gpucb(12, local_share=2, y=floor)._local_candidates(None) is None
    risen = [*floor[:-1], 0.4]
    assert told_gpucb(12, local_share=2, y=risen)._local_candidates(None) is not None


def test_a_retired_trust_region_gives_its_turns_back_to_the_cube(told_gpucb):
    """With ``local_retire=2`` the turn searches the cube once the side is halved twice
    (``2 max(4, dim)`` told rewards in a row without an improvement), and is the region's
    again after three improvements in a row grow it back."""
    improving = [0.1 * k for k in range(12)]
    stalled = [1.0, *[0.0] * 11]  # two halvings: the side is a quarter of its start
    assert told_gpucb(12, local_share=2, y=stalled)._trust_region_side() == TRUST_REGION_SIDE / 4
    assert told_gpucb(12, local_share=2, y=stalled)._local_candidates(None) is not None
    assert told_gpucb(12, local_share=2, local_retire=2, y=stalled)._local_candidates(None) is None
    assert (
        told_gpucb(12, local_share=2, local_retire=3, y=stalled)._local_candidates(None) is not None
    )
    assert (
        told_gpucb(12, local_share=2, local_retire=2, y=improving)._local_candidates(None)
        is not None
    )
    # three improvements in a row double the side back: the region's turn again
    regrown = [*stalled[:-4], 0.0, 1.1, 1.2, 1.3]
    opt = told_gpucb(12, local_share=2, local_retire=2, y=regrown)
    assert opt._trust_region_side() == TRUST_REGION_SIDE / 2
    assert opt._local_candidates(None) is not None


def test_local_retire_must_be_a_positive_integer():
    import pytest

    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="local_retire"):
            GPUCB(2, local_share=2, local_retire=bad)


def test_a_refined_trust_region_reaches_the_face_its_candidates_never_do(told_gpucb):
    """On a slope down from the origin the trust region's box meets the cube's lower faces.
    Its Sobol candidates lie inside the box, so the pick among them never reaches a face;
    with ``local_refine`` L-BFGS-B bounded by the box proposes the corner itself."""
    X = np.random.default_rng(1).random((12, 2))  # the points told_gpucb tells
    slope = [-float(x.sum()) for x in X]
    candidates = told_gpucb(12, local_share=2, y=slope)
    refined = told_gpucb(12, local_share=2, local_refine=True, y=slope)
    lo, hi = _box(refined)
    assert np.array_equal(lo, [0.0, 0.0]) and np.all(hi < 1.0)
    x = candidates.ask()
    assert candidates.turn == "trust-region" and np.all(x > 0.0)
    x = refined.ask()
    assert refined.turn == "trust-region" and np.array_equal(x, [0.0, 0.0])
    import pytest

    with pytest.raises(TypeError, match="local_refine"):
        GPUCB(2, local_share=2, local_refine="yes")
