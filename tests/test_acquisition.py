"""The acquisition optimiser: raw samples, mixed-space local search, enumeration."""

from __future__ import annotations

import numpy as np
import pytest

from privtune.acquisition import MAX_EXHAUSTIVE, maximize, raw_samples, recommend_index
from privtune.cube import Block
from privtune.space import SearchSpace


def test_sobol_raw_samples_cover_the_cube_more_evenly_than_uniform_ones():
    rng = np.random.default_rng(0)
    sobol = raw_samples(rng, 256, 2, "sobol")
    uniform = raw_samples(rng, 256, 2, "uniform")

    def empty_cells(U):  # of a 16 x 16 grid
        cells = set(map(tuple, np.floor(U * 16).astype(int)))
        return 256 - len(cells)

    # a scrambled Sobol sequence of 256 points puts one point in each cell; uniform draws leave
    # about 256 / e = 94 empty
    assert empty_cells(sobol) == 0
    assert empty_cells(uniform) > 60
    assert sobol.min() >= 0 and sobol.max() < 1


def test_an_unknown_raw_sampling_is_named():
    with pytest.raises(ValueError, match="raw_sampling"):
        maximize(lambda Z: Z[:, 0], 1, np.random.default_rng(0), raw_sampling="lhs")


SPACE = SearchSpace({"x": (0.0, 1.0), "kind": ["a", "b", "c", "d"], "depth": (1, 12)})


def acquisition(Z: np.ndarray) -> np.ndarray:
    """Best at x = 0.37, kind = "c", depth = 9, with an interaction between them."""
    x = Z[:, 0]
    kind = Z[:, 1:5] @ np.array([0.0, 0.3, 1.0, 0.2])
    depth = SPACE.layout[2].grid[8]
    return -((x - 0.37) ** 2) + kind - 4 * (Z[:, 5] - depth) ** 2 * (0.5 + kind)


def test_a_mixed_space_is_searched_block_by_block_and_the_result_is_valid():
    for seed in range(5):
        x = maximize(
            acquisition,
            SPACE.dim,
            np.random.default_rng(seed),
            snap=SPACE.snap,
            layout=SPACE.layout,
            raw_sampling="sobol",
            n_raw=32,
        )
        np.testing.assert_array_equal(SPACE.snap(x[None, :])[0], x)  # a valid encoding
        params = SPACE.from_unit(x)
        assert params["kind"] == "c" and params["depth"] == 9
        assert params["x"] == pytest.approx(0.37, abs=1e-3)


def test_a_finite_space_is_enumerated():
    space = SearchSpace({"kind": ["a", "b", "c"], "depth": (1, 10), "n": (1, 6)})
    seen = []

    def acq(Z):
        seen.append(Z.shape[0])
        return -np.sum((Z - 0.52) ** 2, axis=1) + Z[:, 2]  # kind "c", the cells nearest 0.52

    x = maximize(acq, space.dim, np.random.default_rng(0), snap=space.snap, layout=space.layout)
    assert seen == [3 * 10 * 6] and 3 * 10 * 6 <= MAX_EXHAUSTIVE
    assert space.from_unit(x) == {"kind": "c", "depth": 6, "n": 4}


def test_a_continuous_layout_gives_the_same_point_as_no_layout():
    """The papers' reproductions (no layout, uniform raw samples) are unchanged by the layout."""

    def acq(Z):
        return -np.sum((Z - np.array([0.2, 0.7])) ** 2, axis=1)

    a = maximize(acq, 2, np.random.default_rng(3))
    b = maximize(acq, 2, np.random.default_rng(3), layout=(Block(0, 1), Block(1, 2)))
    np.testing.assert_array_equal(a, b)


def test_log_h_matches_the_direct_formula_and_stays_finite_far_below():
    from scipy.stats import norm

    from privtune.acquisition import log_h

    z = np.array([-30.0, -10.0, -1.5, -1.0, -0.2, 0.0, 3.0])
    direct = np.log(norm.pdf(z) + z * norm.cdf(z))
    np.testing.assert_allclose(log_h(z), direct, rtol=1e-9)
    # where the direct formula underflows to -inf: ln phi(z) - 2 ln|z| to first order
    far = log_h(np.array([-60.0]))[0]
    assert np.isfinite(far)
    assert far == pytest.approx(-0.5 * 60**2 - 0.5 * np.log(2 * np.pi) - 2 * np.log(60), abs=1e-3)
    # far below, against the asymptotic series h(z) = phi(z) / z^2 (1 - 3/z^2 + 15/z^4 - ...),
    # whose truncation error (105/z^6) is below 1e-16 here: the result keeps its precision
    # (no cancellation of two numbers of size z^2 / 2) on both sides of the switch at -1e8
    z = np.array([-1e3, -1e4, -1e5, -1e6, -1e7, -0.99e8, -1.01e8, -1e10])
    series = (
        -0.5 * z**2 - 0.5 * np.log(2 * np.pi) - 2 * np.log(-z) + np.log1p(-3 / z**2 + 15 / z**4)
    )
    np.testing.assert_allclose(log_h(z), series, rtol=1e-14)


def test_log_ei_proposes_near_the_optimum_of_a_smooth_function():
    from privtune.optimizers import GPUCB

    opt = GPUCB(1, surrogate="fitted", acquisition="logei", raw_sampling="sobol", seed=0)
    for x in (0.05, 0.5, 0.95):
        opt.tell([x], 1 - (x - 0.3) ** 2)
    for _ in range(8):
        x = opt.ask()
        opt.tell(x, 1 - (x[0] - 0.3) ** 2)
    assert abs(opt.recommend()[0] - 0.3) < 0.02
    with pytest.raises(ValueError, match="acquisition"):
        GPUCB(1, acquisition="pi")


def test_a_space_without_real_parameters_is_swept_until_nothing_improves():
    # three coupled discrete parameters of 20 values each (8000 configurations, more than are
    # enumerated): from (0.125, 0.125, 0.125), one sweep of the coordinates moves x0 before x1
    # has moved and stops short of the optimum; further sweeps reach it
    grid = tuple((np.arange(20) + 0.5) / 20)
    layout = tuple(Block(i, i + 1, "discrete", grid) for i in range(3))

    def acq(Z):
        return -((Z[:, 0] - Z[:, 1]) ** 2) - 0.5 * (Z[:, 1] - 0.9) ** 2 - (Z[:, 2] - Z[:, 0]) ** 2

    def snap(Z):
        return (np.clip(np.floor(np.asarray(Z) * 20), 0, 19) + 0.5) / 20

    start = np.array([[0.125, 0.125, 0.125]])
    x = maximize(
        acq,
        3,
        np.random.default_rng(0),
        snap=snap,
        layout=layout,
        n_raw=1,
        n_restarts=2,
        anchors=start,
    )
    one_sweep = -0.2003  # the value after a single sweep from the start
    assert acq(x[None, :])[0] > one_sweep + 0.04
    assert np.all(np.isin(x, grid))


def test_the_baseline_is_kept_unless_beaten_with_the_level():
    mean = np.array([0.5, 0.9, 0.7, 0.6])
    assert recommend_index(mean) == 1
    prob = np.array([0.5, 0.90, 0.96, 0.99])
    # only index 2 and 3 reach 0.95: the better mean of the two
    assert recommend_index(mean, baseline=0, prob_better=prob) == 2
    assert recommend_index(mean, baseline=0, prob_better=prob, level=0.995) == 0
    # the baseline competes with the mean rule: a baseline with the best mean stays
    assert recommend_index(np.array([1.0, 0.9]), baseline=0, prob_better=np.array([0.5, 1.0])) == 0
    # ineligible configurations stay out
    eligible = np.array([True, True, False, True])
    assert recommend_index(mean, baseline=0, prob_better=prob, eligible=eligible) == 3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"baseline": 4, "prob_better": np.zeros(3)}, "baseline must index"),
        ({"baseline": 0}, "needs prob_better"),
        ({"baseline": 0, "prob_better": np.zeros(2)}, "needs prob_better"),
        ({"baseline": 0, "prob_better": np.zeros(3), "level": 1.0}, "level must lie"),
        ({"baseline": 1, "prob_better": np.zeros(3), "eligible": [1, 0, 1]}, "baseline must"),
    ],
)
def test_a_bad_baseline_is_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        recommend_index(np.array([0.1, 0.2, 0.3]), **kwargs)
