"""The tuning defaults of privtune.tuning: the fitted surrogate with the curator's known noise."""

from __future__ import annotations

import numpy as np
import pytest

from privtune.optimizers import ATAGPUCB, GPUCB, TGPUCB, MoMAGPUCB, RandomSearch
from privtune.space import SearchSpace
from privtune.tuning import (
    AUTO,
    Replay,
    laplace_noise_var,
    make_optimizer,
    optimizer_parameters,
    resolve_algorithm,
)

SPACE = SearchSpace({"C": (1e-3, 1e3, "log-uniform"), "kernel": ["rbf", "poly"], "depth": (1, 8)})


@pytest.mark.parametrize("algorithm", ["gp-ucb", "tgp", "random", "ata", "moma"])
def test_the_gp_algorithms_get_the_fitted_surrogate_with_the_curators_noise(algorithm):
    opt = make_optimizer(algorithm, SPACE.dim, epsilon=2.0, layout=SPACE.layout)
    assert opt.surrogate == "fitted" and opt.raw_sampling == "sobol"
    assert opt.layout == SPACE.layout
    # Laplace of scale (hi - lo) / epsilon is 2 / epsilon in reward units: variance 2 b^2
    assert opt.noise_var == pytest.approx(2 * (2 / 2.0) ** 2) == laplace_noise_var(2.0)
    assert make_optimizer(algorithm, SPACE.dim).noise_var == 0.0


def test_the_fixed_surrogate_gives_the_previous_defaults():
    opt = make_optimizer("gp-ucb", 2, epsilon=1.0, optimizer_kwargs={"surrogate": "fixed"})
    assert opt.surrogate == "fixed" and opt.fit_lengthscale and opt.lam == pytest.approx(9.0)


def test_gp_ucb_takes_the_smoother_prior_on_privatized_scores_below_a_quarter_of_their_range():
    from privtune.gp import Priors
    from privtune.registry import EXACT_PRIORS, PRIVATE_PRIORS, smooth_prior_applies

    private = make_optimizer("gp-ucb", SPACE.dim, epsilon=10.0, layout=SPACE.layout)
    assert private.priors == PRIVATE_PRIORS
    # the noise's standard deviation sqrt(2) (hi - lo) / epsilon reaches a quarter of the range
    # at 4 sqrt(2), about 5.66 (measured: it pays at 6 and 10, loses at 3)
    assert smooth_prior_applies(5.66) and not smooth_prior_applies(5.65)
    assert smooth_prior_applies(6.0) and not smooth_prior_applies(3.0)
    assert make_optimizer("gp-ucb", SPACE.dim, epsilon=1.0).priors is None
    assert make_optimizer("gp-ucb", SPACE.dim, epsilon=3.0).priors is None
    # its mode is 0.5 sqrt(G): 1 for four parameters, where the log-normal default's is 0.41
    # and the exact-score default's (Optuna's GPSampler's) 1 whatever G
    assert PRIVATE_PRIORS.lengthscale_mode(4) == pytest.approx(1.0, abs=1e-3)
    assert Priors().lengthscale_mode(4) == pytest.approx(0.41, abs=0.01)
    assert make_optimizer("gp-ucb", SPACE.dim).priors == EXACT_PRIORS
    assert EXACT_PRIORS.lengthscale_mode(9) == 1.0
    # the user's priors replace it whole
    mine = Priors(mean_scale=0.0)
    opt = make_optimizer("gp-ucb", 2, epsilon=10.0, optimizer_kwargs={"priors": mine})
    assert opt.priors is mine


def test_auto_is_one_of_the_algorithms():
    assert resolve_algorithm("auto", None) == AUTO["exact"]
    assert resolve_algorithm("auto", 1.0) == AUTO["ldp"]
    assert resolve_algorithm("tgp", 1.0) == "tgp"
    with pytest.raises(ValueError, match="'auto' or one of"):
        resolve_algorithm("best", None)


def test_optimizer_parameters_follow_the_constructors():
    for cls in (GPUCB, TGPUCB, RandomSearch, ATAGPUCB, MoMAGPUCB):
        names = optimizer_parameters(cls)
        assert {"surrogate", "noise_var", "layout", "seed", "lam"} <= set(names)
    assert "k" in optimizer_parameters(MoMAGPUCB) and "k" not in optimizer_parameters(GPUCB)


def test_replay_tells_a_failures_penalty_as_exact():
    replay = Replay()
    X = np.array([[0.2], [0.5], [0.8]])
    rewards = np.array([0.3, -1.0, 0.4])
    exact = np.array([False, True, False])
    opt = replay.sync(
        "ctx", lambda: make_optimizer("gp-ucb", 1, epsilon=1.0), [0, 1, 2], X, rewards, exact
    )
    np.testing.assert_array_equal(opt._v, [8.0, 0.0, 8.0])
