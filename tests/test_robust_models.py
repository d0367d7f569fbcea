"""The fitted surrogate's options for hard scores: input warping (a parameter whose effect
concentrates at one end of its range) and the Student-t likelihood (heavy-tailed noise), and
``heavy_tailed=True``, the user's way to ask for the latter."""

import numpy as np
import optuna
import pytest
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

from privtune import PrivateBOSearchCV, PrivateGPUCBSampler
from privtune.cube import Block, continuous_layout
from privtune.gp import GaussianProcess, MapObjective, OutputWarp, Priors
from privtune.kernels import ARDMatern52, kumaraswamy
from privtune.registry import HEAVY_TAILED_DF
from privtune.tuning import TuningEngine, make_optimizer


def _fit(X, y, **kwargs) -> GaussianProcess:
    gp = GaussianProcess.fitted(X.shape[1], continuous_layout(X.shape[1]), **kwargs)
    for x, v in zip(X, y, strict=True):
        gp.add(x, float(v))
    return gp


def test_the_warped_map_objective_has_its_analytic_gradient():
    """Every component (lengthscales, signal, nugget, each warped block's two concentrations)
    against central differences; a real, a discrete and a categorical block, the first two
    warped. Tolerance 1e-6: central differences of step 1e-6 err by about 1e-9 here."""
    rng = np.random.default_rng(0)
    layout = (Block(0, 1), Block(1, 2, "discrete", (0.25, 0.75)), Block(2, 4, "categorical"))
    X = rng.random((12, 4))
    X[:, 1] = np.where(X[:, 1] < 0.5, 0.25, 0.75)
    choice = rng.integers(0, 2, 12)
    X[:, 2], X[:, 3] = choice, 1 - choice
    objective = MapObjective(
        X, rng.standard_normal(12), np.full(12, 0.01), layout, Priors(), None, (0, 1)
    )
    theta = rng.normal(0.0, 0.5, 3 + 2 + 4)
    _, grad = objective(theta)
    h = 1e-6
    numeric = [(objective(theta + e)[0] - objective(theta - e)[0]) / (2 * h) for e in np.eye(9) * h]
    np.testing.assert_allclose(grad, numeric, atol=1e-6)


def test_the_kumaraswamy_warp_is_monotone_and_the_identity_at_one():
    x = np.linspace(0.0, 1.0, 101)
    np.testing.assert_allclose(kumaraswamy(x, 1.0, 1.0), x, atol=1e-6)
    w = kumaraswamy(x, 0.3, 2.0)
    assert np.all(np.diff(w) > 0) and w[0] >= 0.0 and w[-1] <= 1.0
    unwarped = ARDMatern52((0.3,), continuous_layout(1))
    identity = ARDMatern52((0.3,), continuous_layout(1), ((1.0, 1.0),))
    np.testing.assert_allclose(identity(x[:, None]), unwarped(x[:, None]), atol=1e-6)
    with pytest.raises(ValueError, match="real or discrete"):
        ARDMatern52((0.3,), (Block(0, 2, "categorical"),), ((2.0, 1.0),))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_warping_learns_a_parameter_whose_effect_sits_at_one_end(seed):
    """``f(x) = sin(3 pi x^(1/4))`` is stationary in ``x^(1/4)``, a Kumaraswamy warp with
    ``a = 1/4, c = 1``. From 25 random points the warped fit finds ``a`` within [0.15, 0.4]
    and predicts 400 grid points with a smaller error than the unwarped one (measured: 0.08,
    0.05, 0.10 against 0.11, 0.12, 0.17 for seeds 0-2; the test asks for less than 0.9 times)."""
    rng = np.random.default_rng(seed)
    X = rng.random((25, 1))
    grid = np.linspace(0.0, 1.0, 400)[:, None]

    def f(Z):
        return np.sin(3.0 * np.pi * Z[:, 0] ** 0.25)

    errors = {}
    for warp in (False, True):
        gp = _fit(X, f(X), input_warping=warp)
        mean, _ = gp.posterior(grid)
        errors[warp] = float(np.sqrt(np.mean((mean - f(grid)) ** 2)))
    ((a, _c),) = gp.hyper.kernel.warping
    assert 0.15 <= a <= 0.4
    assert errors[True] < 0.9 * errors[False]


def test_student_t_likelihood_discounts_an_outlier():
    """One reward off by 5 (the others exact) drags the Gaussian model's mean across the
    interval (RMSE 0.40 measured); the Student-t model gives the outlier a nugget multiplier
    above 100 and follows the function (RMSE 0.003). Tolerances: 0.05 and 20, far from both."""
    rng = np.random.default_rng(0)
    X = rng.random((30, 1))
    y = np.sin(3.0 * X[:, 0])
    y[7] += 5.0
    grid = np.linspace(0.0, 1.0, 200)[:, None]
    rmse = {}
    for df in (None, 3.0):
        gp = _fit(X, y, student_t_df=df)
        mean, _ = gp.posterior(grid)
        rmse[df] = float(np.sqrt(np.mean((mean - np.sin(3.0 * grid[:, 0])) ** 2)))
    assert rmse[3.0] < 0.05 < rmse[None]
    assert gp.nugget_multipliers[7] > 20.0 * np.median(gp.nugget_multipliers)


@pytest.mark.parametrize("noisy", [False, True])
def test_the_likelihood_turns_student_t_when_a_repeat_disagrees(noisy):
    """``student_t_on_repeat``: the Gaussian nugget while every repeated configuration got the
    same reward; from the first repeat with another reward on, the Student-t likelihood, and
    the model is then the one a Student-t optimizer told the same history builds."""
    from privtune.optimizers import GPUCB

    def told(**kwargs):
        opt = GPUCB(2, seed=0, surrogate="fitted", acquisition="logei", **kwargs)
        for x, v in zip(X, y, strict=True):
            opt.tell(x, float(v))
        return opt

    rng = np.random.default_rng(0)
    X = rng.random((8, 2))
    y = np.sin(5.0 * X[:, 0])
    X = np.vstack([X, X[2]])  # the start-up's repeat
    y = np.append(y, y[2] + (0.3 if noisy else 0.0))
    opt = told(student_t_on_repeat=3.0)
    grid = rng.random((50, 2))
    if noisy:
        assert opt.likelihood_df == 3.0 and opt._gp.student_t_df == 3.0
        reference = told(student_t_df=3.0)
    else:
        assert opt.likelihood_df is None and opt._gp.student_t_df is None
        reference = told()
    np.testing.assert_allclose(opt.predict(grid)[0], reference.predict(grid)[0], atol=1e-8)
    with pytest.raises(ValueError, match="student_t_on_repeat needs the fitted surrogate"):
        GPUCB(2, student_t_on_repeat=3.0)


def test_input_warping_needs_the_fitted_surrogate_and_a_bool():
    for name, value in (("input_warping", True), ("output_warping", True), ("student_t_df", 3)):
        with pytest.raises(ValueError, match=f"{name} needs the fitted surrogate"):
            make_optimizer("gp-ucb", 2, optimizer_kwargs={name: value, "surrogate": "fixed"})
    with pytest.raises(TypeError, match="input_warping must be a bool"):
        make_optimizer("gp-ucb", 2, optimizer_kwargs={"input_warping": "yes"})
    opt = make_optimizer("gp-ucb", 2, optimizer_kwargs={"input_warping": True})
    assert opt._gp.input_warping


def test_heavy_tailed_gives_gp_ucb_the_student_t_likelihood_with_or_without_privacy():
    for epsilon in (None, 10.0):
        assert make_optimizer("gp-ucb", 2, epsilon=epsilon).student_t_df is None
        opt = make_optimizer("gp-ucb", 2, epsilon=epsilon, heavy_tailed=True)
        assert opt.student_t_df == HEAVY_TAILED_DF
        assert opt.student_t_on_repeat is None and opt.likelihood_df == HEAVY_TAILED_DF
    assert TuningEngine("auto", heavy_tailed=True).algorithm == "gp-ucb"


def test_without_privacy_the_default_turns_student_t_on_noisy_scores_only():
    """The exact-score default switches to the Student-t likelihood on a disagreeing repeat;
    under privacy (the curator's noise is known and Gaussian in the model) it does not, and a
    user's ``student_t_on_repeat=None`` keeps the Gaussian nugget throughout."""
    assert make_optimizer("gp-ucb", 2).student_t_on_repeat == HEAVY_TAILED_DF
    assert make_optimizer("gp-ucb", 2, epsilon=10.0).student_t_on_repeat is None
    off = make_optimizer("gp-ucb", 2, optimizer_kwargs={"student_t_on_repeat": None})
    assert off.student_t_on_repeat is None


def test_heavy_tailed_is_refused_where_it_would_do_nothing():
    with pytest.raises(ValueError, match="heavy_tailed=True chooses gp-ucb"):
        TuningEngine("moma", epsilon=1.0, heavy_tailed=True)
    with pytest.raises(TypeError, match="heavy_tailed must be a bool"):
        PrivateGPUCBSampler(heavy_tailed="yes")
    with pytest.raises(ValueError, match="fixed surrogate"):
        make_optimizer("gp-ucb", 2, heavy_tailed=True, optimizer_kwargs={"surrogate": "fixed"})


def test_the_adapters_pass_heavy_tailed_to_the_model():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = PrivateGPUCBSampler(heavy_tailed=True, seed=0, n_startup_trials=3)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(lambda t: -((t.suggest_float("x", 0.0, 1.0) - 0.3) ** 2), n_trials=5)
    (replay,) = sampler.engine._replays.values()
    assert replay.optimizer.student_t_df == HEAVY_TAILED_DF
    X, y = load_iris(return_X_y=True)
    search = PrivateBOSearchCV(
        DecisionTreeClassifier(random_state=0),
        {"max_depth": (1, 10)},
        n_iter=6,
        n_initial_points=3,
        heavy_tailed=True,
        random_state=0,
    ).fit(X, y)
    assert search.get_params()["heavy_tailed"] is True
    assert len(search.cv_results_["params"]) >= 6


def test_the_output_warp_inverts_and_its_slope_is_the_derivative():
    """Round trip to 1e-9 and the slope against central differences (step 1e-6, tolerance
    1e-7) for the ends and the middle of the exponent's range."""
    y = np.random.default_rng(0).normal(0.3, 2.0, 50)
    t = np.linspace(-3.0, 3.0, 13)
    for lam in (0.0, 0.5, 1.0, 1.5, 2.0):
        warp = OutputWarp(0.2, 1.5, lam)
        np.testing.assert_allclose(warp.inverse(warp.forward(y)), y, atol=1e-9)
        numeric = (warp.inverse(t + 1e-6) - warp.inverse(t - 1e-6)) / 2e-6
        np.testing.assert_allclose(warp.slope(t), numeric, atol=1e-7)
    assert OutputWarp.fit(np.ones(5)).lam == 1.0  # no spread: the identity


def test_output_warping_models_a_thin_bump_on_a_floor():
    """Scores at a floor of 0.1 with a thin bump to 0.9 (an accuracy's shape), 40 random
    points in 2-d: the warped model's error on 2000 fresh points is a quarter of the unwarped
    one's (measured 0.019 against 0.079; the test asks for half), and its means and
    differences come back in reward units (a difference is the difference of the means)."""
    rng = np.random.default_rng(0)

    def f(Z):
        return 0.1 + 0.8 * np.exp(-np.sum((Z - 0.7) ** 2, axis=1) / 0.02)

    X, T = rng.random((40, 2)), rng.random((2000, 2))
    errors = {}
    for warp in (False, True):
        gp = _fit(X, f(X), output_warping=warp)
        mean, var = gp.posterior(T)
        errors[warp] = float(np.sqrt(np.mean((mean - f(T)) ** 2)))
        diff, _ = gp.difference(T[:3], T[3])
        np.testing.assert_allclose(diff, mean[:3] - mean[3], atol=1e-9)
        assert np.all(var >= 0.0)
    assert gp._warp is not None and gp._warp.lam < 1.0
    assert errors[True] < 0.5 * errors[False]


def test_output_warping_is_for_exact_rewards_only():
    with pytest.raises(ValueError, match="exact rewards"):
        make_optimizer("gp-ucb", 2, epsilon=1.0, optimizer_kwargs={"output_warping": True})
    gp = GaussianProcess.fitted(1, output_warping=True)
    with pytest.raises(ValueError, match="exact rewards"):
        gp.add(np.array([0.5]), 0.3, noise_var=0.1)


def _bump_data(repeat: float | None):
    """30 rewards of ``sin(3x)`` with Gaussian noise of sd 0.1, one of them 2 above the curve
    (a narrow good region or a lucky draw), and optionally a repeat of that configuration."""
    rng = np.random.default_rng(0)
    X = rng.random((30, 1))
    y = np.sin(3.0 * X[:, 0]) + rng.normal(0.0, 0.1, 30)
    y[7] += 2.0
    if repeat is not None:
        X, y = np.vstack([X, X[7]]), np.append(y, repeat)
    return X, y


def test_agreeing_repeats_are_not_discounted_by_the_student_t_likelihood():
    """``agreement``: a reward far above the model is discounted (multiplier above 3); told
    again with a reward 0.05 away (within 2 sqrt(2) noise standard deviations of 0.1) the
    configuration's two rewards get multiplier 1, and the model's mean there rises to them;
    told again with the curve's value, the first reward stays discounted. Without
    ``agreement`` the agreeing pair is discounted as the single reward was. Measured: the
    single reward's multiplier 102, the agreeing pair's mean 2.74 at a reward of 2.80 (0.81
    without ``agreement``, multipliers 24 and 25), the disagreeing first reward's 113; the
    bounds (3, 0.3 and 1.0 below the reward) are far from each."""
    X, y = _bump_data(None)
    single = _fit(X, y, student_t_df=3.0, agreement=2.0)
    assert single.nugget_multipliers[7] > 3.0
    agreeing_X, agreeing_y = _bump_data(repeat=y[7] + 0.05)
    pair = _fit(agreeing_X, agreeing_y, student_t_df=3.0, agreement=2.0)
    np.testing.assert_array_equal(pair.nugget_multipliers[[7, 30]], [1.0, 1.0])
    assert pair.mean(X[7:8])[0] > y[7] - 0.3
    plain = _fit(agreeing_X, agreeing_y, student_t_df=3.0)
    assert np.all(plain.nugget_multipliers[[7, 30]] > 3.0)
    assert plain.mean(X[7:8])[0] < y[7] - 1.0
    disagreeing = _fit(*_bump_data(repeat=float(np.sin(3.0 * X[7, 0]))), student_t_df=3.0,
                       agreement=2.0)  # fmt: skip
    assert disagreeing.nugget_multipliers[7] > 3.0
    with pytest.raises(ValueError, match="agreement needs student_t_df"):
        _fit(X, y, agreement=2.0)


def test_repeat_discounted_best_evaluates_the_discounted_best_again_once():
    """With ``repeat_discounted_best`` the next proposal after a discounted best told reward is
    that configuration; once it is told twice the proposals move on. Without the option the
    proposal is elsewhere."""
    from privtune.optimizers import GPUCB

    X, y = _bump_data(None)

    def told(X, y, **kwargs):
        opt = GPUCB(1, seed=0, surrogate="fitted", acquisition="logei", student_t_df=3.0, **kwargs)
        for x, v in zip(X, y, strict=True):
            opt.tell(x, float(v))
        return opt

    opt = told(X, y, repeat_discounted_best=3.0)
    np.testing.assert_array_equal(opt.ask(), X[7])
    assert not np.array_equal(told(X, y).ask(), X[7])
    agreeing_X, agreeing_y = _bump_data(repeat=y[7] + 0.05)
    assert not np.array_equal(told(agreeing_X, agreeing_y, repeat_discounted_best=3.0).ask(), X[7])
    # a configuration being evaluated is not proposed again
    assert not np.array_equal(opt.ask(pending=X[7:8]), X[7])


def test_repeat_discounted_best_never_acts_on_exact_scores():
    """On exact scores the default never switches to the Student-t likelihood, so the option
    changes nothing: the same 15 proposals with and without it."""

    def run(kwargs):
        opt = make_optimizer("gp-ucb", 2, seed=0, optimizer_kwargs=kwargs)
        asked = []
        for t in range(15):
            x = opt.ask(uniform=t < 5)
            opt.tell(x, float(-np.sum((x - 0.3) ** 2)))
            asked.append(x)
        return np.array(asked)

    np.testing.assert_array_equal(run({"repeat_discounted_best": 3.0}), run({}))


def test_repeat_discounted_best_needs_a_student_t_likelihood():
    from privtune.optimizers import GPUCB

    with pytest.raises(ValueError, match="repeat_discounted_best acts on the Student-t"):
        GPUCB(2, surrogate="fitted", repeat_discounted_best=3.0)
    with pytest.raises(ValueError, match="needs the fitted surrogate"):
        GPUCB(2, student_t_on_repeat=3.0, repeat_discounted_best=3.0)
    with pytest.raises(ValueError, match="repeat_discounted_best"):
        GPUCB(2, surrogate="fitted", student_t_df=3.0, repeat_discounted_best=0.5)


@pytest.mark.parametrize("algorithm", ["ata", "moma"])
def test_the_nystrom_optimizers_refuse_the_exact_gps_likelihood_options(algorithm):
    """ATA- and MoMA-GP-UCB take only the fitted surrogate's hyperparameters: an option of the
    exact GP's likelihood or warps would do nothing there, so it is refused."""
    for name, value in (("student_t_df", 3.0), ("input_warping", True)):
        with pytest.raises(ValueError, match=f"{name} is an option of the exact-GP optimizers"):
            make_optimizer(algorithm, 2, optimizer_kwargs={name: value, "surrogate": "fitted"})


def test_random_search_refuses_repeat_discounted_best():
    """Random search's proposals never read the model, so an option that picks a proposal from
    its discounts would do nothing there: it is refused, and the likelihood options are kept
    (they shape ``predict`` and ``recommend``)."""
    from privtune.optimizers import RandomSearch

    kwargs = {"surrogate": "fitted", "student_t_df": 3.0}
    with pytest.raises(ValueError, match="RandomSearch proposes uniformly"):
        RandomSearch(2, repeat_discounted_best=3.0, **kwargs)
    assert RandomSearch(2, **kwargs).student_t_df == 3.0
