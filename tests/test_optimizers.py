import math

import numpy as np
import pytest

from privtune.acquisition import BASELINE_LEVEL
from privtune.kernels import SE, Matern
from privtune.optimizers import ATAGPUCB, GPUCB, TGPUCB, MoMAGPUCB, RandomSearch
from privtune.optimizers.base import BaseOptimizer
from privtune.optimizers.moma_gp_ucb import median_of_means_index
from privtune.space import SearchSpace

ALL = [GPUCB, TGPUCB, ATAGPUCB, MoMAGPUCB, RandomSearch]


def _objective(x):
    return float(np.exp(-np.sum((x - 0.3) ** 2) / 0.05))


def _drive(opt, n, rng, candidates=None):
    for _ in range(n):
        x = opt.ask(candidates=candidates)
        opt.tell(x, _objective(x) + 0.1 * rng.standard_normal())
    return opt


@pytest.mark.parametrize("cls", ALL)
def test_ask_tell_predict_recommend_contract(cls):
    rng = np.random.default_rng(0)
    opt = _drive(cls(2, seed=0, n_raw_samples=64, n_restarts=1), 12, rng)
    assert opt.t == 12
    x = opt.ask()
    assert x.shape == (2,) and np.all((0 <= x) & (x <= 1))
    mean, std = opt.predict(rng.random((5, 2)))
    assert mean.shape == (5,) and std.shape == (5,) and np.all(std >= 0)
    rec = opt.recommend()
    assert rec.shape == (2,)
    assert any(np.allclose(rec, xi) for xi in opt.X)


@pytest.mark.parametrize("cls", ALL)
def test_candidates_restrict_the_proposal(cls):
    C = np.random.default_rng(1).random((7, 3))
    opt = cls(3, seed=1)
    for _ in range(5):
        x = opt.ask(candidates=C)
        assert any(np.array_equal(x, c) for c in C)
        opt.tell(x, 0.0)


def test_exact_gp_posterior_matches_the_textbook_formula():
    rng = np.random.default_rng(2)
    X, y, Z = rng.random((15, 2)), rng.standard_normal(15), rng.random((6, 2))
    k, lam = SE(0.3), 0.5
    opt = GPUCB(2, kernel=k, lam=lam)
    opt.tell(X, y)
    A = np.linalg.inv(k(X) + lam * np.eye(15))
    mean = k(Z, X) @ A @ y
    var = 1.0 - np.sum((k(Z, X) @ A) * k(Z, X), axis=1)
    m, s = opt.predict(Z)
    np.testing.assert_allclose(m, mean, atol=1e-8)
    np.testing.assert_allclose(s**2, var, atol=1e-8)


def test_pending_points_shrink_variance_like_extra_observations():
    # GP-BUCB: the variance given pending points equals the variance after observing them.
    rng = np.random.default_rng(3)
    X, y, P, Z = (
        rng.random((10, 2)),
        rng.standard_normal(10),
        rng.random((3, 2)),
        rng.random((5, 2)),
    )
    opt = GPUCB(2, kernel=SE(0.3))
    opt.tell(X, y)
    mean_p, var_p = opt._posterior(Z, P)
    ref = GPUCB(2, kernel=SE(0.3))
    ref.tell(np.vstack([X, P]), np.concatenate([y, np.zeros(3)]))
    _, std_ref = ref.predict(Z)
    np.testing.assert_allclose(var_p, std_ref**2, atol=1e-8)
    np.testing.assert_allclose(mean_p, opt.predict(Z)[0])


@pytest.mark.parametrize("cls", [GPUCB, TGPUCB, ATAGPUCB])
def test_a_batch_of_asks_does_not_collapse_to_one_point(cls):
    # GP-BUCB: pending points shrink the variance, so with the theory's confidence width
    # (beta_scale=1) the next ask of a batch goes elsewhere.
    opt = _drive(cls(2, seed=4, n_raw_samples=128, beta_scale=1.0), 8, np.random.default_rng(4))
    batch = np.array([opt.ask() for _ in range(4)])
    d = np.linalg.norm(batch[:, None] - batch[None], axis=-1)[np.triu_indices(4, 1)]
    assert d.min() > 1e-3
    assert opt.pending.shape == (4, 2)
    opt.tell(batch[0], 0.0)
    opt.discard(batch[1])
    assert opt.pending.shape == (2, 2)


def test_constant_liar_lowers_the_mean_at_pending_points():
    rng = np.random.default_rng(14)
    opt = GPUCB(2, kernel=SE(0.3), lam=0.1)
    X = rng.random((10, 2))
    opt.tell(X, np.sin(5 * X[:, 0]))
    P = X[[int(np.argmax(opt.predict(X)[0]))]]
    mean_plain, _ = opt.predict(P)
    mean_lied, _ = opt._posterior_given(P)(P)
    assert mean_lied[0] < mean_plain[0]


def test_incremental_cholesky_matches_a_full_refit():
    rng = np.random.default_rng(5)
    opt = GPUCB(1, kernel=Matern(0.2))
    for _ in range(40):
        opt.tell(rng.random(1), rng.standard_normal())
    L = np.linalg.cholesky(Matern(0.2)(opt.X) + np.eye(40))
    np.testing.assert_allclose(opt._gp._L[:40, :40], L, atol=1e-9)
    assert opt.gamma_t == pytest.approx(np.sum(np.log(np.diag(L))) - 0.0)


def test_ldp_tgp_truncation_level_and_beta_follow_algorithm_2():
    B, R, eps, lam, delta = 2.0, 1.0, 0.5, 1.0, 0.1
    opt = TGPUCB(1, B=B, R=R, epsilon=eps, lam=lam, delta=delta)
    L = 2 * (B + R) / eps
    assert opt.L == pytest.approx(L)
    for t in [1, 2, 10, 100]:
        assert opt.b_t(t) == pytest.approx(B + R + L * math.log(t))
    # Line 8: a reward above b_t is replaced by 0, once, when it arrives (round 1: b_1 = B + R).
    opt.tell(np.array([0.5]), B + R + 0.01)
    opt.tell(np.array([0.2]), 1.0)
    assert opt._y_used == [0.0, 1.0]
    # Line 5 for the next round t = 3.
    K = B**2 + R**2 + 2 * L**2
    expected = (
        B
        + 2
        * math.sqrt(2)
        / math.sqrt(lam)
        * opt.b_t(2)
        * math.sqrt(opt.gamma_t + math.log(1 / delta))
        + math.sqrt(K * (math.log(2) + 1)) / math.sqrt(lam)
    )
    assert opt.beta_t() == pytest.approx(expected)


def test_non_private_tgp_truncation_grows_like_t_to_the_quarter():
    opt = TGPUCB(1, alpha=1.0, v=4.0)
    assert opt.b_t(16) / opt.b_t(1) == pytest.approx(16**0.25)
    assert opt.b_t(1) == pytest.approx(4.0**0.5)


def test_ata_without_truncation_is_ridge_regression_in_feature_space():
    # With a huge b_t nothing is truncated and theta = V^{-1/2} V^{-1/2} Phi^T y = V^{-1} Phi^T y.
    rng = np.random.default_rng(6)
    opt = ATAGPUCB(1, v=1e12, q=100.0, seed=0)
    for _ in range(10):
        opt.tell(rng.random(1), rng.standard_normal())
    model = opt._model
    expected = np.linalg.solve(model.V, model.Phi.T @ opt.y)
    np.testing.assert_allclose(model.theta, expected, atol=1e-8)


def test_ata_truncates_each_feature_contribution_at_b():
    rng = np.random.default_rng(7)
    opt = ATAGPUCB(1, B=1.0, R=1.0, epsilon=1.0, q=100.0, seed=0)
    X = rng.random((12, 1))
    y = rng.standard_normal(12)
    y[3] = 500.0  # a huge privatized reward: its contributions must be cut
    opt.tell(X, y)
    model = opt._model
    e, Q = np.linalg.eigh(model.V)
    V_isqrt = Q @ np.diag(e**-0.5) @ Q.T
    U = V_isqrt @ model.Phi.T
    b = np.asarray(opt._b)
    r_hat = np.sum(U * y * (np.abs(U * y) <= b), axis=1)
    np.testing.assert_allclose(model.theta, V_isqrt @ r_hat, atol=1e-8)
    assert np.any(np.abs(U[:, 3] * y[3]) > b[3])  # some of the outlier's contributions are cut


def test_median_of_means_picks_an_estimate_from_the_majority_cluster():
    rng = np.random.default_rng(8)
    Theta = 0.01 * rng.standard_normal((4, 7))
    Theta[:, 2] += 10.0  # two wild estimates
    Theta[:, 5] -= 10.0
    k_star, r = median_of_means_index(Theta, np.eye(4))
    assert k_star not in (2, 5)
    assert r[2] > r[k_star] and r[5] > r[k_star]


def test_moma_plays_each_epoch_point_k_times_and_uses_the_mom_estimate():
    k = 5
    opt = MoMAGPUCB(1, k=k, seed=0, q=100.0)
    rng = np.random.default_rng(9)
    for epoch in range(3):
        xs = [opt.ask() for _ in range(k)]
        assert all(np.array_equal(xs[0], x) for x in xs)
        for x in xs:
            opt.tell(x, rng.standard_normal())
        assert opt.n_epochs == epoch + 1
    model = opt._model
    X = np.array([e.x for e in opt._done])
    Y = np.array([e.ys for e in opt._done])
    Theta = np.linalg.solve(model.V, model.Phi.T @ Y)
    k_star, _ = median_of_means_index(Theta, model.V)
    np.testing.assert_allclose(model.theta, Theta[:, k_star], atol=1e-8)
    assert X.shape == (3, 1)


def test_moma_theoretical_k():
    opt = MoMAGPUCB(1, k="theory", horizon=1000, delta=0.05)
    assert opt.k == math.ceil(24 * math.log(4 * math.e * 1000 / 0.05))
    with pytest.raises(ValueError, match="horizon"):
        MoMAGPUCB(1, k="theory")


@pytest.mark.parametrize("cls", [ATAGPUCB, MoMAGPUCB, TGPUCB])
def test_replaying_the_history_rebuilds_the_same_model(cls):
    kwargs = {"k": 3} if cls is MoMAGPUCB else {}
    a = _drive(cls(2, seed=11, n_raw_samples=64, **kwargs), 15, np.random.default_rng(10))
    b = cls(2, seed=11, **kwargs)
    b.tell(a.X, a.y)
    Z = np.random.default_rng(12).random((6, 2))
    for u, v in zip(a.predict(Z), b.predict(Z), strict=True):
        np.testing.assert_allclose(u, v, atol=1e-10)


def test_random_search_is_uniform_over_candidates():
    C = np.linspace(0, 1, 4)[:, None]
    opt = RandomSearch(1, seed=0)
    counts = np.zeros(4)
    for _ in range(4000):
        x = opt.ask(candidates=C)
        counts[round(x[0] * 3)] += 1
        opt.discard(x)
    # 4000 draws over 4 cells: each count ~ Binomial(4000, 1/4), sd ~ 27; allow 5 sd.
    assert np.all(np.abs(counts - 1000) < 5 * 27.4)


def test_ml2_refit_runs_and_changes_the_lengthscale():
    rng = np.random.default_rng(13)
    opt = GPUCB(1, kernel=SE(1.5), lam=0.01, fit_lengthscale=True, seed=0, n_raw_samples=32)
    for _ in range(16):
        x = rng.random(1)
        opt.tell(x, np.sin(20 * x[0]))
    assert opt.kernel.lengthscale < 1.5


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dim": 0}, "dim"),
        ({"dim": 1.5}, "dim"),
        ({"dim": 1, "epsilon": 0.0}, "epsilon"),
        ({"dim": 1, "epsilon": -1.0}, "epsilon"),
        ({"dim": 1, "lam": 0.0}, "lam"),
        ({"dim": 1, "delta": 1.0}, "delta"),
        ({"dim": 1, "delta": 0.0}, "delta"),
        ({"dim": 1, "kernel": "laplacian"}, "kernel"),
        ({"dim": 1, "beta_scale": -1.0}, "beta_scale"),
    ],
)
@pytest.mark.parametrize("cls", ALL)
def test_bad_constructor_arguments_are_rejected(cls, kwargs, match):
    kwargs = dict(kwargs)
    dim = kwargs.pop("dim")
    with pytest.raises((ValueError, TypeError), match=match):
        cls(dim, **kwargs)


@pytest.mark.parametrize("cls", ALL)
def test_unknown_parameters_are_rejected(cls):
    with pytest.raises(TypeError):
        cls(1, lengthscale=0.3)


@pytest.mark.parametrize("cls", ALL)
def test_bad_candidates_and_points_are_rejected(cls):
    opt = cls(2)
    with pytest.raises(ValueError, match="2-D"):
        opt.ask(candidates=np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="unit cube"):
        opt.ask(candidates=np.array([[0.1, 1.5]]))
    with pytest.raises(ValueError, match="columns"):
        opt.ask(candidates=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="unit cube"):
        opt.tell(np.array([-0.2, 0.5]), 1.0)


@pytest.mark.parametrize("cls", ALL)
def test_nan_and_infinite_rewards_are_rejected_with_advice(cls):
    opt = cls(1)
    x = opt.ask()
    with pytest.raises(ValueError, match="failed evaluation"):
        opt.tell(x, float("nan"))
    with pytest.raises(ValueError, match="finite"):
        opt.tell(x, float("inf"))
    assert opt.t == 0


@pytest.mark.parametrize("cls", [GPUCB, TGPUCB, RandomSearch, ATAGPUCB, MoMAGPUCB])
def test_recommend_keeps_the_baseline_unless_beaten_with_probability_095(cls):
    # The first told point is the baseline; rewards carry noise of standard deviation 30 (an
    # epsilon of 0.05 on a unit range). The pick is the baseline, or a point the model puts
    # above it with probability >= 0.95 and, among those, the best posterior mean.
    rng = np.random.default_rng(0)
    opt = cls(dim=1, epsilon=0.05, noise_var=900.0, surrogate="fitted", seed=0)
    x0 = np.array([0.9])
    opt.tell(x0, float(-((0.9 - 0.3) ** 2) + 30 * rng.standard_normal()))
    for _ in range(11):
        x = opt.ask()
        opt.tell(x, float(-((x[0] - 0.3) ** 2) + 30 * rng.standard_normal()))
    prob = opt.probability_better(opt.X, x0)
    assert prob.shape == (12,) and np.all((prob >= 0) & (prob <= 1)) and prob[0] == 0.0
    pick = opt.recommend_row(baseline=0)
    mean, _ = opt.predict(opt.X)
    contenders = np.flatnonzero(prob >= BASELINE_LEVEL)
    if pick != 0:
        assert prob[pick] >= BASELINE_LEVEL
        assert mean[pick] == pytest.approx(mean[contenders].max())
    else:
        assert contenders.size == 0 or mean[contenders].max() <= mean[0]
    np.testing.assert_array_equal(opt.recommend(baseline=0), opt.X[pick])
    for bad in (12, -1, 0.0, True):
        with pytest.raises(ValueError, match="baseline must be the row"):
            opt.recommend(baseline=bad)


def test_recommend_replaces_a_clearly_worse_baseline():
    opt = GPUCB(dim=1, surrogate="fitted", seed=0)
    for x in (0.9, 0.3, 0.5, 0.1, 0.7, 0.35, 0.25):
        opt.tell(np.array([x]), -((x - 0.3) ** 2))
    assert opt.recommend(baseline=0)[0] == pytest.approx(0.3)
    prob = opt.probability_better(opt.X, opt.X[0])
    assert np.all(prob[1:] > 0.95) and prob[0] == 0.0  # the baseline does not beat itself


# -- the two bases and the renamed arguments ----------------------------------------------------


def test_kernel_settings_live_in_the_kernel_base_only():
    from privtune.optimizers import GOUCB, QFFGPUCB
    from privtune.optimizers.base import KernelOptimizer

    for opt in (GPUCB(2), TGPUCB(2), RandomSearch(2), ATAGPUCB(2), MoMAGPUCB(2)):
        assert isinstance(opt, KernelOptimizer)
    for opt in (GOUCB(2), QFFGPUCB(2)):
        assert isinstance(opt, BaseOptimizer) and not isinstance(opt, KernelOptimizer)
        for name in ("kernel", "fit_lengthscale", "surrogate", "priors", "_rebuild"):
            assert not hasattr(opt, name), (type(opt).__name__, name)
        assert opt.lam > 0  # their own regulariser, documented on their own class


def test_renamed_arguments_keep_a_deprecated_alias():
    from privtune.optimizers import GOUCB, QFFGPUCB

    with pytest.warns(FutureWarning, match="'m' is renamed 'm_bar'"):
        old = QFFGPUCB(2, m=4)
    assert old.m_bar == 4 and old.m == QFFGPUCB(2, m_bar=4).m == 2 * 4**2
    with pytest.warns(FutureWarning, match="'m' is renamed 'n_frequencies'"):
        rff = QFFGPUCB(2, features="rff", m=16, seed=0)
    assert rff.n_frequencies == 16 and rff.m == QFFGPUCB(2, features="rff", n_frequencies=16).m
    with pytest.warns(FutureWarning, match="'beta' is renamed 'privacy_beta'"):
        assert QFFGPUCB(2, privacy="jdp", beta=0.2, horizon=8).privacy_beta == 0.2
    with pytest.raises(TypeError, match=r"privacy_beta \(formerly beta\), not both"):
        QFFGPUCB(2, beta=0.2, privacy_beta=0.3)
    with pytest.warns(FutureWarning, match="'acquisition' is renamed 'solver'"):
        assert GOUCB(2, acquisition="first-order").solver == "first-order"
    opt = TGPUCB(1, epsilon=1.0)
    with pytest.warns(FutureWarning, match="TGPUCB.b is renamed TGPUCB.b_t"):
        assert opt.b(5) == opt.b_t(5)


def test_a_qff_search_takes_the_old_privacy_beta_key_with_a_warning():
    from privtune.plan import PrivacyPlan
    from privtune.tuning import TuningEngine

    def curator(kwargs):
        plan = PrivacyPlan.check(
            "qff-ldp", epsilon=1.0, value_range=(0, 1), optimizer_kwargs=kwargs
        )
        return plan.curator()

    assert curator({"privacy_beta": 0.2}).delta == curator({"beta": 0.2}).delta == 0.2
    assert curator(None).delta != 0.2
    new = TuningEngine(
        "qff-ldp", epsilon=1.0, value_range=(0, 1), optimizer_kwargs={"privacy_beta": 0.2}
    )
    old = TuningEngine("qff-ldp", epsilon=1.0, value_range=(0, 1), optimizer_kwargs={"beta": 0.2})
    space = SearchSpace({"x": (0.0, 1.0)})
    assert new.build(space, noise_seed=0).privacy_beta == 0.2
    with pytest.warns(FutureWarning, match="privacy_beta"):
        assert old.build(space, noise_seed=0).privacy_beta == 0.2


def test_the_acquisition_optimiser_settings_are_checked():
    from privtune.optimizers import GPUCB

    with pytest.raises(ValueError, match="acq_maxiter must be an integer >= 1"):
        GPUCB(2, acq_maxiter=0)
    with pytest.raises(ValueError, match="start_rule must be one of"):
        GPUCB(2, start_rule="best")


def test_without_privacy_the_default_starts_its_local_searches_by_the_spread_rule(monkeypatch):
    """``"gp-ucb"`` on scores that are not privatized starts its local searches by Optuna's
    GPSampler's rule, one of them from the best told point (its real coordinates nudged
    inwards); under privacy, and when the user asks for ``"top"``, from the best raw samples
    and the perturbations of the best told points."""
    import privtune.optimizers.base as base
    from privtune.tuning import make_optimizer

    calls = []
    real_maximize = base.maximize

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real_maximize(*args, **kwargs)

    monkeypatch.setattr(base, "maximize", spy)
    X = np.array([[0.1, 0.2], [0.8, 0.3], [0.4, 0.9], [0.6, 0.6]])
    y = np.array([0.2, 0.9, 0.1, 0.5])
    for kwargs, rule in (
        ({}, "spread"),
        ({"epsilon": 10.0}, "top"),
        ({"optimizer_kwargs": {"start_rule": "top"}}, "top"),
    ):
        opt = make_optimizer("gp-ucb", 2, seed=0, **kwargs)
        assert opt.start_rule == rule
        for x, v in zip(X, y, strict=True):
            opt.tell(x, v)
        calls.clear()
        opt.ask()
        assert calls and calls[-1]["start_rule"] == rule
        if rule == "spread":
            assert np.allclose(calls[-1]["incumbents"], [[0.8, 0.3]], atol=1e-5)
            assert not np.array_equal(calls[-1]["incumbents"][0], X[1])
        else:
            assert calls[-1]["incumbents"] is None and calls[-1]["anchors"] is not None


def test_without_privacy_the_default_takes_one_agreeing_repeat_as_deterministic():
    """``"gp-ucb"`` on scores that are not privatized takes one agreeing repeat (the
    start-up's) as evidence of exact scores; the optimizers' own default, and what the user
    asks, stay as they are."""
    from privtune.optimizers.base import AGREEING_REPEATS
    from privtune.registry import EXACT_AGREEING_REPEATS
    from privtune.tuning import make_optimizer

    assert EXACT_AGREEING_REPEATS == 1 < AGREEING_REPEATS
    assert make_optimizer("gp-ucb", 2).agreeing_repeats == EXACT_AGREEING_REPEATS
    assert GPUCB(2).agreeing_repeats == AGREEING_REPEATS
    asked = make_optimizer("gp-ucb", 2, optimizer_kwargs={"agreeing_repeats": 3})
    assert asked.agreeing_repeats == 3
    opt = make_optimizer("gp-ucb", 1, seed=0)
    for x, v in [(0.2, 0.5), (0.7, 0.9), (0.7, 0.9), (0.4, 0.8)]:
        opt.tell([x], v)
    assert opt._repeats_agree() and opt._exact()


@pytest.mark.parametrize("noise_var", [0.0, 0.05])
def test_the_auto_incumbent_is_the_best_told_score_only_for_exact_scores(noise_var):
    """The optimizer hands its judgement of the scores to the acquisition: with exact rewards
    (no known noise, a negligible fitted one) ``"auto"`` is the best told reward; with a known
    noise variance it is the best posterior mean among the told points."""
    from privtune.acquisition import LogExpectedImprovement

    rng = np.random.default_rng(0)
    opt = GPUCB(
        2,
        seed=0,
        surrogate="fitted",
        noise_var=noise_var,
        acquisition=LogExpectedImprovement(incumbent="auto"),
        n_raw_samples=64,
    )
    for _ in range(12):
        x = rng.random(2)
        opt.tell(
            x, float(np.sin(4 * x[0]) + x[1]) + (0.2 * rng.standard_normal() if noise_var else 0.0)
        )
    seen = []
    inner = opt.acquisition

    class Spy(LogExpectedImprovement):
        def __call__(self, mean, var, state):
            seen.append(state.incumbent("auto"))
            return inner(mean, var, state)

    opt.acquisition = Spy(incumbent="auto")
    opt.ask()
    assert opt._exact() == (noise_var == 0.0)
    want = np.max(opt.y) if noise_var == 0.0 else np.max(opt._mean(opt.X))
    assert seen and seen[0] == pytest.approx(want)
