"""The surrogate of privtune.gp: the MAP objective, the posterior, known noise, the schedule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import linalg

from privtune import gp as gpm
from privtune.cube import Block, continuous_layout
from privtune.gp import (
    REFIT_EVERY_TELL_UNTIL,
    GaussianProcess,
    Hyperparameters,
    MapObjective,
    Priors,
    fit_hyperparameters,
    refit_point,
)
from privtune.kernels import SE, ARDMatern52, Matern
from privtune.space import SearchSpace

MIXED = (
    Block(0, 1),
    Block(1, 4, "categorical"),
    Block(4, 5, "discrete", (0.1, 0.3, 0.5, 0.7, 0.9)),
)


def mixed_points(n: int, rng: np.random.Generator) -> np.ndarray:
    X = rng.random((n, 5))
    X[:, 1:4] = np.eye(3)[rng.integers(3, size=n)]
    X[:, 4] = (rng.integers(5, size=n) * 2 + 1) / 10
    return X


def direct_posterior(h: Hyperparameters, X, y, v, Z):
    """The posterior of the module's model, computed from scratch."""
    K = h.signal_var * h.kernel(X) + np.diag(v / h.scale**2 + h.nugget + gpm._JITTER)
    k = h.signal_var * h.kernel(Z, X)
    z = (y - h.shift) / h.scale - h.mean
    mean = k @ np.linalg.solve(K, z)
    var = h.signal_var - np.sum(k * np.linalg.solve(K, k.T).T, axis=1)
    return h.centre + h.scale * mean, var * h.scale**2


# -- the MAP objective -------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_gradient_matches_finite_differences(seed):
    rng = np.random.default_rng(seed)
    X = mixed_points(25, rng)
    z = np.sin(5 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(25)
    vz = rng.uniform(0.0, 0.2, 25)
    objective = MapObjective(X, (z - z.mean()) / z.std(), vz, MIXED, Priors())
    theta = rng.normal(0.0, 1.0, 5) + np.array([-1.0, 0.0, 0.0, 0.0, -4.0])
    _, grad = objective(theta)
    h = 1e-6
    numeric = [(objective(theta + e)[0] - objective(theta - e)[0]) / (2 * h) for e in np.eye(5) * h]
    # central differences of a smooth function: agreement to about h^2 times its curvature
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


def test_the_gradient_matches_finite_differences_with_a_prior_on_the_mean():
    """The mean is profiled out under its prior too, so the envelope theorem still holds."""
    rng = np.random.default_rng(5)
    X = rng.random((20, 3))
    z = np.cos(4 * X[:, 0]) + 0.05 * rng.standard_normal(20)
    z = (z - z.mean()) / z.std() - 0.8
    objective = MapObjective(X, z, np.zeros(20), continuous_layout(3), Priors(mean_scale=0.3))
    theta = np.array([-1.0, -0.5, 0.0, 0.2, -4.0])
    _, grad = objective(theta)
    h = 1e-6
    numeric = [(objective(theta + e)[0] - objective(theta - e)[0]) / (2 * h) for e in np.eye(5) * h]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


def test_a_mean_scale_of_zero_fixes_the_mean_at_the_told_rewards_mean():
    """Far from the data the model reverts to the told scores' mean (Optuna's GPSampler's
    prior), not to the fitted constant, which sinks to the floor where most scores lie."""
    rng = np.random.default_rng(6)
    X = rng.random((20, 2))
    y = np.where(X[:, 0] < 0.15, 0.9, 0.1)  # a floor of 0.1 and a few good scores
    told = GaussianProcess.fitted(2, priors=Priors(mean_scale=0.0))
    fitted = GaussianProcess.fitted(2)
    for x, v in zip(X, y, strict=True):
        told.add(x, v)
        fitted.add(x, v)
    assert told.hyper.mean == 0.0
    assert told.centre == pytest.approx(float(np.mean(y)), abs=1e-12)
    assert fitted.centre < float(np.mean(y))


@pytest.mark.parametrize("bad", [-1.0, math.nan, "0"])
def test_a_bad_mean_scale_is_refused(bad):
    with pytest.raises(ValueError, match="mean_scale must be a number >= 0"):
        Priors(mean_scale=bad)


@pytest.mark.parametrize("mean_scale", [math.inf, 0.5, 0.0])
def test_the_objective_is_the_negative_log_posterior(mean_scale):
    """With the constant mean ``c`` profiled out: its GLS value under a flat prior
    (``mean_scale=inf``), shrunk towards 0 under ``N(0, mean_scale^2)``, 0 when fixed."""
    rng = np.random.default_rng(3)
    X = rng.random((12, 2))
    z = rng.standard_normal(12) + 0.7
    vz = np.full(12, 0.1)
    priors = Priors(mean_scale=mean_scale)
    objective = MapObjective(X, z, vz, continuous_layout(2), priors)
    theta = np.array([math.log(0.3), math.log(0.5), math.log(0.8), math.log(0.01)])
    ls, s2, g = objective.unpack(theta)
    K = s2 * ARDMatern52(tuple(ls), continuous_layout(2))(X) + np.diag(vz + g + gpm._JITTER)
    ones = np.ones(12)
    precision = 0.0 if math.isinf(mean_scale) else math.inf if mean_scale == 0 else mean_scale**-2
    c = ones @ np.linalg.solve(K, z) / (ones @ np.linalg.solve(K, ones) + precision)
    nll = 0.5 * (z - c) @ np.linalg.solve(K, z - c) + 0.5 * np.linalg.slogdet(K)[1]
    if 0 < mean_scale < math.inf:
        nll += 0.5 * c**2 / mean_scale**2
    loc = priors.log_lengthscale_loc(2)
    prior = (
        np.sum((np.log(ls) - loc) ** 2) / (2 * priors.lengthscale_scale**2)
        + np.sum(np.log(ls))
        + math.log(s2) ** 2 / (2 * priors.signal_var_scale**2)
        - (priors.nugget_concentration - 1) * math.log(g - priors.min_nugget)
        + priors.nugget_rate * (g - priors.min_nugget)
    )
    assert objective(theta)[0] == pytest.approx(nll + prior, rel=1e-10)


def test_the_lengthscale_prior_mode_grows_with_the_square_root_of_the_dimension():
    priors = Priors()
    assert priors.lengthscale_mode(1) == pytest.approx(math.exp(math.sqrt(2) - 3))
    assert priors.lengthscale_mode(9) == pytest.approx(3 * priors.lengthscale_mode(1))


# -- what the fit finds ----------------------------------------------------------------------------
def test_the_fit_finds_the_relevant_parameter():
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    y = np.sin(6 * X[:, 1])  # only the second coordinate matters
    gp = GaussianProcess.fitted(3)
    for x, yi in zip(X, y, strict=True):
        gp.add(x, yi)
    ls = gp.hyper.kernel.lengthscales
    # measured: about 0.8 for the relevant one, several hundred for the others
    assert ls[1] < 1.0 and min(ls[0], ls[2]) > 100 * ls[1]
    # exact scores: the nugget stays near its floor
    assert gp.hyper.nugget < 1e-3


def test_known_noise_is_fixed_and_pooled():
    """A point told 100 times with known noise variance v: the posterior variance there is
    about v / 100 (the model does not explain the noise away as signal)."""
    rng = np.random.default_rng(1)
    gp = GaussianProcess.fitted(1)
    v = 0.5
    for _ in range(100):
        gp.add(np.array([0.4]), 1.0 + math.sqrt(v) * rng.standard_normal(), v)
    mean, var = gp.posterior(np.array([[0.4]]))
    assert var[0] <= 1.2 * v / 100
    # four standard errors of the mean of 100 draws
    assert abs(mean[0] - 1.0) < 4 * math.sqrt(v / 100)


def test_an_exact_reward_outweighs_noisy_ones_at_its_point():
    gp = GaussianProcess.fitted(1)
    rng = np.random.default_rng(2)
    for x in np.linspace(0, 1, 20):
        gp.add(np.array([x]), rng.normal(0.0, 2.0), 4.0)
    gp.add(np.array([0.5]), -3.0, 0.0)
    mean, _ = gp.posterior(np.array([[0.5]]))
    assert mean[0] == pytest.approx(-3.0, abs=0.05)


def test_far_from_the_data_the_mean_reverts_to_the_fitted_constant_not_zero():
    gp = GaussianProcess.fitted(2)
    rng = np.random.default_rng(4)
    for x in rng.random((15, 2)) * 0.2:  # data in one corner, scores near 0.9
        gp.add(x, 0.9 + 0.01 * np.sin(10 * x[0]))
    mean, _ = gp.posterior(np.array([[1.0, 1.0]]))
    assert mean[0] == pytest.approx(gp.centre, abs=1e-3)
    assert gp.centre == pytest.approx(0.9, abs=0.05)


def test_the_model_is_equivariant_to_an_affine_change_of_the_rewards():
    rng = np.random.default_rng(5)
    X = rng.random((20, 2))
    y = np.cos(4 * X[:, 0]) * X[:, 1]
    a, b = 7.0, -3.0
    one, two = GaussianProcess.fitted(2), GaussianProcess.fitted(2)
    for x, yi in zip(X, y, strict=True):
        one.add(x, yi, 0.01)
        two.add(x, a * yi + b, 0.01 * a**2)
    Z = rng.random((5, 2))
    m1, v1 = one.posterior(Z)
    m2, v2 = two.posterior(Z)
    np.testing.assert_allclose(m2, a * m1 + b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v2, a**2 * v1, rtol=1e-4, atol=1e-8)


# -- the posterior -----------------------------------------------------------------------------
def test_the_fixed_model_is_the_papers():
    rng = np.random.default_rng(6)
    X, y, Z = rng.random((10, 2)), rng.standard_normal(10), rng.random((4, 2))
    gp = GaussianProcess.fixed(2, SE(0.3), lam=0.5)
    for x, yi in zip(X, y, strict=True):
        gp.add(x, yi)
    K = SE(0.3)(X) + 0.5 * np.eye(10)
    k = SE(0.3)(Z, X)
    mean, var = gp.posterior(Z)
    np.testing.assert_allclose(mean, k @ np.linalg.solve(K, y), atol=1e-8)
    np.testing.assert_allclose(var, 1 - np.sum(k * np.linalg.solve(K, k.T).T, axis=1), atol=1e-8)
    # the empirical information gain 1/2 ln det(I + K / lam)
    gain = 0.5 * np.linalg.slogdet(np.eye(10) + SE(0.3)(X) / 0.5)[1]
    assert gp.gamma == pytest.approx(gain, rel=1e-6)
    assert gp.centre == 0.0


def test_the_incremental_factor_equals_a_factorisation_from_scratch():
    """Beyond the every-tell range the factor grows row by row between fits."""
    rng = np.random.default_rng(7)
    n = REFIT_EVERY_TELL_UNTIL + 3
    X = rng.random((n, 1))
    y = np.sin(6 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    v = rng.uniform(0.0, 0.05, n)
    gp = GaussianProcess.fitted(1)
    for x, yi, vi in zip(X, y, v, strict=True):
        gp.add(x, yi, vi)
    Z = rng.random((6, 1))
    mean, var = gp.posterior(Z)
    assert gp._n_fit == REFIT_EVERY_TELL_UNTIL  # the last three were added to the factor
    assert gp.n_fits == 1  # lazy: one fit, when the posterior was asked for
    m0, v0 = direct_posterior(gp.hyper, X, y, v, Z)
    np.testing.assert_allclose(mean, m0, atol=1e-8)
    np.testing.assert_allclose(var, v0, atol=1e-8)


def test_the_difference_uses_the_joint_posterior():
    rng = np.random.default_rng(9)
    X = rng.random((12, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.05 * rng.standard_normal(12)
    v = np.full(12, 0.01)
    gp = GaussianProcess.fitted(2)
    for x, yi, vi in zip(X, y, v, strict=True):
        gp.add(x, yi, vi)
    Z = np.vstack([rng.random((4, 2)), X[:1]])
    z0 = X[3]
    mean, var = gp.difference(Z, z0)
    # from scratch: the posterior covariance of (f(Z), f(z0)) in reward units
    h = gp.hyper
    K = h.signal_var * h.kernel(X) + np.diag(v / h.scale**2 + h.nugget + gpm._JITTER)
    both = np.vstack([Z, z0])
    k = h.signal_var * h.kernel(both, X)
    cov = (h.signal_var * h.kernel(both) - k @ np.linalg.solve(K, k.T)) * h.scale**2
    m, _ = direct_posterior(h, X, y, v, both)
    np.testing.assert_allclose(mean, m[:-1] - m[-1], atol=1e-8)
    np.testing.assert_allclose(var, np.diag(cov)[:-1] + cov[-1, -1] - 2 * cov[:-1, -1], atol=1e-8)
    # a point next to z0: the two values move together, the difference is far tighter than
    # the sum of their variances
    near = z0 + 1e-3
    _, marginal = gp.posterior(np.vstack([near, z0]))
    assert gp.difference(near[None, :], z0)[1][0] < 0.01 * marginal.sum()
    assert gp.difference(z0[None, :], z0)[1][0] == pytest.approx(0.0, abs=1e-10)


def test_pending_points_shrink_the_variance_and_the_liar_moves_the_mean():
    rng = np.random.default_rng(8)
    gp = GaussianProcess.fitted(1)
    for x in rng.random(8):
        gp.add(np.array([x]), math.sin(5 * x))
    P = np.array([[0.95]])
    Z = np.array([[0.95], [0.05]])
    m0, v0 = gp.posterior(Z)
    m1, v1 = gp.posterior(Z, P, lie=-2.0)
    assert v1[0] < 0.1 * v0[0]
    assert m1[0] < m0[0] - 0.5
    # the same as telling the lie for real, with the told rewards' mean noise
    told = GaussianProcess(1, gp.hyper)
    for x, yi in zip(gp.X, gp.y, strict=True):
        told.add(x, yi)
    told.add(P[0], -2.0, 0.0)
    m2, v2 = told.posterior(Z)
    np.testing.assert_allclose(m1, m2, atol=1e-8)
    np.testing.assert_allclose(v1, v2, atol=1e-8)


# -- the schedule and replay -------------------------------------------------------------------
def test_the_refit_schedule_depends_on_the_number_of_rewards_only():
    rng = np.random.default_rng(9)
    gp = GaussianProcess.fitted(1)
    fits = []
    for _ in range(150):
        gp.add(rng.random(1), rng.standard_normal())
        gp.posterior(np.zeros((1, 1)))  # an ask after every tell
        fits.append(gp.n_fits)
    # every tell from 2 to 100, then at 5 % growth: 105, 111, 117, 123, 130, 137, 144
    assert fits[REFIT_EVERY_TELL_UNTIL - 1] == REFIT_EVERY_TELL_UNTIL - 1
    assert fits[-1] - fits[REFIT_EVERY_TELL_UNTIL - 1] == 7
    assert [refit_point(n) for n in (1, 2, 100, 104, 105, 110, 111, 150)] == [
        0,
        2,
        100,
        100,
        105,
        105,
        111,
        144,
    ]


def test_a_rebuilt_model_equals_one_that_followed_the_history():
    """A new worker replays a study: one fit, the same model as the one asked at every tell."""
    rng = np.random.default_rng(11)
    X, y = rng.random((120, 2)), rng.standard_normal(120)
    followed, rebuilt = GaussianProcess.fitted(2), GaussianProcess.fitted(2)
    for x, yi in zip(X, y, strict=True):
        followed.add(x, yi, 0.1)
        followed.posterior(X[:1])
        rebuilt.add(x, yi, 0.1)
    Z = rng.random((4, 2))
    np.testing.assert_allclose(rebuilt.posterior(Z), followed.posterior(Z), atol=1e-9)
    assert rebuilt.hyper == followed.hyper
    assert rebuilt.n_fits == 1 and followed.n_fits > 100


def test_a_replayed_history_gives_the_same_model():
    rng = np.random.default_rng(10)
    X, y = rng.random((30, 2)), rng.standard_normal(30)
    one, two = GaussianProcess.fitted(2), GaussianProcess.fitted(2)
    for x, yi in zip(X, y, strict=True):
        one.add(x, yi, 0.1)
        two.add(x, yi, 0.1)
    assert one.hyper == two.hyper


def test_the_fit_falls_back_to_the_priors_mode_when_it_cannot_run(monkeypatch):
    gp = GaussianProcess.fitted(1)
    for x in (0.1, 0.5, 0.9):
        gp.add(np.array([x]), x**2)
    fitted = gp.hyper

    def failing(*args, **kwargs):
        raise ValueError("no")

    monkeypatch.setattr(gpm.optimize, "minimize", failing)
    gp.add(np.array([0.3]), 0.09)
    mode = gpm.default_hyperparameters(continuous_layout(1), gpm.Priors())
    # the prior's mode, not the previous fit: the model depends on the told rewards alone
    assert gp.hyper.kernel == mode.kernel != fitted.kernel
    assert gp.hyper.signal_var == mode.signal_var and gp.hyper.nugget == mode.nugget
    fresh = GaussianProcess.fitted(1)
    for x, yi in zip(gp.X, gp.y, strict=True):
        fresh.add(x, yi)
    assert fresh.hyper == gp.hyper
    assert np.all(np.isfinite(gp.posterior(np.array([[0.2]]))[0]))


def test_a_failed_factorisation_leaves_the_model_whole(monkeypatch):
    rng = np.random.default_rng(4)
    X, y = rng.random((12, 2)), rng.standard_normal(12)
    gp = GaussianProcess.fitted(2)
    for x, yi in zip(X[:11], y[:11], strict=True):
        gp.add(x, yi, 0.05)
    gp.posterior(X[:2])  # fitted to 11 rewards
    gp.add(X[11], y[11], 0.05)
    real_cholesky = gpm.linalg.cholesky

    def failing(*args, **kwargs):
        raise linalg.LinAlgError("not positive definite")

    monkeypatch.setattr(gpm.linalg, "cholesky", failing)
    with pytest.raises(linalg.LinAlgError):
        gp.posterior(X[:2])  # the refit to 12 rewards fails at its factorisation
    monkeypatch.setattr(gpm.linalg, "cholesky", real_cholesky)
    # the next posterior refits: the same model as one that never failed
    fresh = GaussianProcess.fitted(2)
    for x, yi in zip(X, y, strict=True):
        fresh.add(x, yi, 0.05)
    Z = rng.random((5, 2))
    np.testing.assert_allclose(gp.posterior(Z)[0], fresh.posterior(Z)[0], rtol=1e-12)
    np.testing.assert_allclose(gp.posterior(Z)[1], fresh.posterior(Z)[1], rtol=1e-12)


def test_fit_hyperparameters_needs_an_ard_kernel():
    with pytest.raises(TypeError, match="ARDMatern52"):
        fit_hyperparameters(np.zeros((2, 1)), np.zeros(2), np.zeros(2), Hyperparameters(SE()))
    with pytest.raises(TypeError, match="ARDMatern52"):
        GaussianProcess(1, Hyperparameters(Matern(0.2)), fit=True)


# -- the ARD kernel and the layout -------------------------------------------------------------
def test_the_ard_kernel_is_hamming_on_a_one_hot_block():
    k = ARDMatern52((0.5, 2.0, 1.0), MIXED)
    a = np.array([[0.3, 1.0, 0.0, 0.0, 0.5]])
    b = np.array([[0.3, 0.0, 0.0, 1.0, 0.5]])
    # two distinct choices are at distance 1 / l_b
    assert k(a, b)[0, 0] == pytest.approx(ARDMatern52.from_sq_dist(np.array(1 / 4.0)))
    assert k(a)[0, 0] == 1.0 and k.diag(b)[0] == 1.0
    # one lengthscale 1 in every block of a continuous layout is the isotropic Matérn-5/2
    X = np.random.default_rng(0).random((5, 3))
    np.testing.assert_allclose(
        ARDMatern52((0.7,) * 3, continuous_layout(3))(X), Matern(0.7, nu=2.5)(X), atol=1e-12
    )


def test_the_ard_kernel_rejects_a_lengthscale_count_that_does_not_match():
    with pytest.raises(ValueError, match="one value per block"):
        ARDMatern52((0.5,), MIXED)
    with pytest.raises(ValueError, match="finite floats > 0"):
        ARDMatern52((0.5, -1.0, 1.0), MIXED)


def test_a_search_space_layout_names_its_blocks():
    space = SearchSpace(
        {
            "C": (1e-3, 1e3, "log-uniform"),
            "kernel": ["rbf", "linear"],
            "depth": (1, 5),
            "n": (1, 1000),
        }
    )
    kinds = [b.kind for b in space.layout]
    assert kinds == ["real", "categorical", "discrete", "real"]  # 1000 values: treated as real
    depth = space.layout[2]
    U = np.zeros((5, space.dim))
    U[:, depth.start] = depth.grid
    # the grid is the encodings of the values, each a fixed point of snap
    np.testing.assert_allclose(space.snap(U)[:, depth.start], depth.grid)
    assert [space.from_unit(u)["depth"] for u in U] == [1, 2, 3, 4, 5]


def test_a_block_checks_itself():
    with pytest.raises(ValueError, match="kind"):
        Block(0, 1, "ordinal")
    with pytest.raises(ValueError, match="one coordinate"):
        Block(0, 2, "real")
    with pytest.raises(ValueError, match="grid"):
        Block(0, 1, "discrete")
    assert Block(0, 3, "categorical").n_values == 3
    assert linalg.norm(Block(2, 5, "categorical").values() - np.eye(3)) == 0


def test_moma_with_every_point_in_its_dictionary_has_the_fitted_gps_mean():
    """The Nyström algorithms take the fitted GP's kernel, centre, unit and lam = noise/signal:
    with one play per epoch and a dictionary holding every point, MoMA's posterior is the
    fitted GP's exactly (kernel ridge on (y - c) / sd with that lam, variance times sd^2)."""
    from privtune.optimizers import MoMAGPUCB

    rng = np.random.default_rng(12)
    X = rng.random((25, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(25)
    moma = MoMAGPUCB(2, k=1, q=1e9, surrogate="fitted", noise_var=0.09, seed=0)
    gp = GaussianProcess.fitted(2)
    for x, yi in zip(X, y, strict=True):
        moma.tell(x, yi)
        gp.add(x, yi, 0.09)
    assert moma.m == 25  # every point in the dictionary
    assert moma.kernel == gp.hyper.kernel and moma.lam > 0.01  # the floor does not bind
    Z = rng.random((7, 2))
    mean, std = moma.predict(Z)
    gp_mean, gp_var = gp.posterior(Z)
    np.testing.assert_allclose(mean, gp_mean, atol=1e-6)
    np.testing.assert_allclose(std**2, gp_var, atol=1e-6)


def _fitted_mixed(n: int, seed: int, output_warping: bool = False) -> GaussianProcess:
    rng = np.random.default_rng(seed)
    gp = GaussianProcess.fitted(5, MIXED, Priors(), output_warping=output_warping)
    for x in mixed_points(n, rng):
        y = np.sin(4 * x[0]) + x[1] - 0.5 * x[4] + 0.05 * rng.standard_normal()
        gp.add(x, float(np.exp(2 * y) if output_warping else y))  # skewed: a warp to fit
    return gp


@pytest.mark.parametrize("output_warping", [False, True])
def test_the_posterior_gradient_matches_central_differences(output_warping):
    """The acquisition optimiser's analytic gradient: the mean and variance at one point agree
    with :meth:`posterior`, and their gradients with central differences (step 1e-6, error
    O(1e-12) in exact arithmetic; the tolerance, 1e-6 relative to the gradient's size,
    covers the rounding of the differences) in every coordinate, the one-hot ones included;
    through an output warp as well (the mean and the delta method's variance mapped)."""
    gp = _fitted_mixed(25, 0, output_warping)
    if output_warping:
        gp.posterior(gp.X[:1])
        assert gp._warp is not None and gp._warp.lam != 1.0  # a warp that bends
    z = mixed_points(1, np.random.default_rng(1))[0]
    mean, var, d_mean, d_var = gp.posterior_grad(z)
    m, v = gp.posterior(z[None, :])
    assert mean == pytest.approx(m[0], abs=1e-12) and var == pytest.approx(v[0], abs=1e-12)
    h = 1e-6
    for d in range(5):
        e = np.zeros(5)
        e[d] = h
        (mp,), (vp,) = gp.posterior((z + e)[None, :])
        (mm,), (vm,) = gp.posterior((z - e)[None, :])
        assert d_mean[d] == pytest.approx((mp - mm) / (2 * h), abs=1e-6 * max(1, abs(d_mean[d])))
        assert d_var[d] == pytest.approx((vp - vm) / (2 * h), abs=1e-6 * max(1, abs(d_var[d])))


def test_no_posterior_gradient_where_the_model_has_none():
    warped = GaussianProcess.fitted(1, continuous_layout(1), Priors(), input_warping=True)
    fixed = GaussianProcess.fixed(1, SE(0.2), 1.0)
    for gp in (warped, fixed):
        for x in (0.1, 0.5, 0.9):
            gp.add(np.array([x]), x * x)
        assert gp.posterior_grad(np.array([0.3])) is None


@pytest.mark.parametrize("output_warping", [False, True])
def test_an_affine_map_of_the_rewards_leaves_the_model_as_a_refit_gives_it(output_warping):
    """``rescale``: the told rewards mapped by ``a y + b`` give the posterior, in the new units,
    of a model fitted to the mapped rewards (to 1e-6 of the rewards' scale: both fits end
    where L-BFGS-B stops, from the same standardised data up to rounding); an output warp
    moves with the rewards (the warp's exponent is fitted after standardising them)."""
    gp = _fitted_mixed(30, 2, output_warping)
    a, b = 0.37, -1.4
    fresh = GaussianProcess.fitted(5, MIXED, Priors(), output_warping=output_warping)
    for x, y in zip(gp.X, gp.y, strict=True):
        fresh.add(x, a * y + b)
    gp.posterior(gp.X[:1])  # the fit happens before the map
    assert gp.rescale(a, b)
    Z = mixed_points(20, np.random.default_rng(3))
    (m1, v1), (m2, v2) = gp.posterior(Z), fresh.posterior(Z)
    assert np.allclose(m1, m2, atol=1e-6 * a) and np.allclose(v1, v2, atol=1e-6 * a * a)
    assert not gp.rescale(-1.0, 0.0)
    noisy = GaussianProcess.fitted(1, continuous_layout(1), Priors())
    noisy.add(np.array([0.5]), 1.0, noise_var=0.1)
    assert not noisy.rescale(2.0, 0.0)  # a known noise variance is in reward units


@pytest.mark.parametrize("family", ["lognormal", "optuna"])
def test_the_prior_penalty_gradient_matches_central_differences(family):
    priors = Priors(family=family)
    theta, s2 = np.array([-1.0, 0.3, 1.2]), 0.4
    _, d_ls, d_s2 = priors.penalty(theta, s2)
    h = 1e-6
    for i in range(3):
        e = h * np.eye(3)[i]
        fd = (priors.penalty(theta + e, s2)[0] - priors.penalty(theta - e, s2)[0]) / (2 * h)
        assert d_ls[i] == pytest.approx(fd, abs=1e-6)
    fd = (priors.penalty(theta, s2 + h)[0] - priors.penalty(theta, s2 - h)[0]) / (2 * h)
    assert d_s2 == pytest.approx(fd, abs=1e-6)


def test_optunas_priors_start_and_pull_towards_unit_lengthscales():
    assert Priors(family="optuna").lengthscale_mode(9) == 1.0
    with pytest.raises(ValueError, match="family must be one of"):
        Priors(family="gamma")


def test_the_fit_settings_are_checked():
    with pytest.raises(ValueError, match="fit_start must be one of"):
        Priors(fit_start="zero")
    with pytest.raises(ValueError, match="fit_gtol must be None or a number > 0"):
        Priors(fit_gtol=0.0)


def test_gpsamplers_fit_from_unit_parameters_fits_the_data():
    """``fit_start="unit"`` with a loose tolerance: one start, and a model that still explains
    the rewards (in-sample RMSE below 10 % of their spread on a smooth function; tolerance
    loose because the fit stops early by design)."""
    rng = np.random.default_rng(0)
    X = rng.random((30, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2
    gp = GaussianProcess.fitted(2, continuous_layout(2), Priors(fit_start="unit", fit_gtol=0.01))
    for x, v in zip(X, y, strict=True):
        gp.add(x, float(v))
    mean, _ = gp.posterior(X)
    assert np.sqrt(np.mean((mean - y) ** 2)) < 0.1 * np.std(y)
