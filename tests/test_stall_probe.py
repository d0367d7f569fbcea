"""A stalled study probes its incumbent's parameters one (or two) at a time."""

from __future__ import annotations

import numpy as np
import pytest

from privtune.acquisition import coordinate_moves
from privtune.cube import Block
from privtune.optimizers import GPUCB

#: A real, a discrete (four values) and a categorical (three choices) parameter.
LAYOUT = (
    Block(0, 1),
    Block(1, 2, "discrete", grid=(0.125, 0.375, 0.625, 0.875)),
    Block(2, 5, "categorical"),
)
CENTRE = np.array([0.3, 0.375, 0.0, 1.0, 0.0])


def _moved(rows: np.ndarray, x: np.ndarray) -> list[int]:
    """How many parameters of ``LAYOUT`` each row changes from ``x``."""
    return [sum(not np.array_equal(r[b.slice], x[b.slice]) for b in LAYOUT) for r in rows]


def test_coordinate_moves_change_one_parameter_to_each_of_its_values():
    rows = coordinate_moves(CENTRE, LAYOUT, n_line=5)
    # 5 values of the real coordinate (its ends included), every discrete and categorical one
    assert rows.shape == (5 + 4 + 3, 5)
    assert max(_moved(rows, CENTRE)) == 1
    assert sorted(rows[:5, 0]) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert sorted(rows[5:9, 1]) == list(LAYOUT[1].grid)
    assert {tuple(r) for r in rows[9:, 2:5]} == {(1, 0, 0), (0, 1, 0), (0, 0, 1)}


def test_coordinate_moves_with_pairs_take_each_pairs_grid_and_thin_long_grids():
    rows = coordinate_moves(CENTRE, LAYOUT, n_line=5, n_pair=3, pairs=True)
    singles = 5 + 4 + 3
    # pairs: real x discrete (3 x 3, the grid thinned to 3), real x categorical (3 x 3),
    # discrete x categorical (3 x 3)
    assert rows.shape == (singles + 9 + 9 + 9, 5)
    assert max(_moved(rows, CENTRE)) == 2
    assert set(rows[singles:, 1]) <= set(LAYOUT[1].grid) | {CENTRE[1]}
    assert {0.125, 0.875} <= set(rows[singles:, 1])  # a thinned grid keeps both ends


def _stalled_optimizer(k: int, stalled: int, *, incumbent_above_median: bool = True) -> GPUCB:
    """A fitted-surrogate optimizer told 12 exact scores of a smooth function whose best told
    point was told ``stalled`` rewards before the last."""
    opt = GPUCB(3, seed=0, surrogate="fitted", acquisition="logei", stall_probe=k, n_raw_samples=64)
    rng = np.random.default_rng(1)
    X = rng.random((12, 3))
    y = -np.sum((X - 0.5) ** 2, axis=1)
    order = np.argsort(y)  # increasing
    if incumbent_above_median:
        best = order[-1]
        rest = [i for i in range(12) if i != best]
        seq = [*rest[: 11 - stalled], best, *rest[11 - stalled :]]
    else:
        # eleven equal scores, then a worse one: the best (the first, told 11 rewards before
        # the last, a probing turn) is the median itself
        y[:] = 0.0
        y[11] = -1.0
        seq = list(range(12))
    for i in seq:
        opt.tell(X[i], float(y[i]))
    return opt


def test_a_stalled_study_probes_the_incumbent_on_every_other_proposal():
    """After ``stall_probe`` told rewards without a new best, the proposal differs from the
    best told point in one coordinate; on the next it searches the whole cube again."""
    for stalled in (5, 7):
        opt = _stalled_optimizer(5, stalled)
        best = opt.X[int(np.argmax(opt.y))]
        x = opt.ask()
        assert int(np.sum(~np.isclose(x, best))) == 1
        assert not any(np.array_equal(x, told) for told in opt.X)  # exact: never a told point
    for stalled in (3, 6):  # not yet stalled; stalled, the interleaved turn of the cube
        assert _stalled_optimizer(5, stalled)._probe_candidates(None) is None


def test_the_probe_waits_for_an_incumbent_above_the_median():
    """Around an incumbent no better than the median of the told scores (a plateau at chance
    level) the probe would only circle it: the cube is searched instead."""
    opt = _stalled_optimizer(5, 0, incumbent_above_median=False)
    assert opt.t - 1 - int(np.argmax(opt.y)) == 11
    assert opt._probe_candidates(None) is None


def test_the_probe_is_off_by_default_and_its_settings_are_checked():
    assert _stalled_optimizer(5, 5).stall_probe == 5
    assert GPUCB(2).stall_probe is None
    with pytest.raises(ValueError, match="stall_probe must be an integer >= 1"):
        GPUCB(2, stall_probe=0)
    with pytest.raises(TypeError, match="probe_pairs"):
        GPUCB(2, probe_pairs="yes")
