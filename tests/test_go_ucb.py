"""GO-UCB (Liu & Wang 2023, Algorithm 1): the model, the oracle, eqs. 3-6 and the contract."""

import math

import numpy as np
import pytest

from privtune.optimizers import GOUCB
from privtune.parametric import TwoLayerNetwork, check_model

# -- the parametric family -----------------------------------------------------------------


def test_two_layer_network_gradients_match_finite_differences():
    net = TwoLayerNetwork(dim=3, hidden=4)
    rng = np.random.default_rng(0)
    X = rng.random((5, 3))
    w = rng.standard_normal(net.n_params)
    h = 1e-6
    num_w = np.stack(
        [(net.value(X, w + h * e) - net.value(X, w - h * e)) / (2 * h) for e in np.eye(w.size)],
        axis=1,
    )
    num_x = np.stack(
        [(net.value(X + h * e, w) - net.value(X - h * e, w)) / (2 * h) for e in np.eye(3)],
        axis=1,
    )
    np.testing.assert_allclose(net.grad_w(X, w), num_w, atol=1e-7)
    np.testing.assert_allclose(net.grad_x(X, w), num_x, atol=1e-7)


def test_two_layer_network_per_row_parameters_match_shared_ones():
    net = TwoLayerNetwork(dim=2, hidden=3)
    rng = np.random.default_rng(1)
    X = rng.random((4, 2))
    W = rng.standard_normal((4, net.n_params))
    for fn in (net.value, net.grad_w, net.grad_x):
        batched = fn(X, W)
        rows = np.stack([fn(X[i : i + 1], W[i])[0] for i in range(4)])
        np.testing.assert_allclose(batched, rows, atol=1e-12)


def test_two_layer_network_is_the_papers_family():
    # f1 of Sec. 6.1: every weight and bias 1, so f(x) = hidden * sigmoid(sum(x) + 1) + 1.
    net = TwoLayerNetwork(dim=20)
    assert net.n_params == 25 * 22 + 1
    x = np.full((1, 20), 0.1)
    expected = 25 / (1 + math.exp(-(2.0 + 1.0))) + 1
    assert net.value(x, np.ones(net.n_params))[0] == pytest.approx(expected)


class _BadGradient:
    """A model whose parameter gradient has one entry too few."""

    def __init__(self, dim):
        self.dim, self.n_params = dim, 3

    def value(self, X, w):
        return X @ np.ones(self.dim) * w[0]

    def grad_w(self, X, w):
        return np.ones((X.shape[0], self.n_params - 1))

    def grad_x(self, X, w):
        return np.ones_like(X)

    def init_params(self, rng):
        return rng.standard_normal(self.n_params)


def test_a_model_whose_gradient_shape_disagrees_with_n_params_is_refused():
    with pytest.raises(ValueError, match=r"model\.grad_w returned shape \(2, 2\).*\(2, 3\)"):
        GOUCB(2, model=_BadGradient(2))
    with pytest.raises(ValueError, match=r"model\.dim is 2, but the optimizer's dim is 3"):
        GOUCB(3, model=_BadGradient(2))
    with pytest.raises(TypeError, match="ParametricModel protocol"):
        check_model(object(), 2)


class _LinearModel:
    """``f_w(x) = phi(x)^T w`` with fixed random features: linear in ``w``."""

    def __init__(self, dim, m=6, nan=False):
        rng = np.random.default_rng(42)
        self.dim, self.n_params, self.nan = dim, m, nan
        self.A = rng.standard_normal((m, dim)) * 3
        self.c = rng.uniform(0, 2 * np.pi, m)

    def _phi(self, X):
        return np.cos(X @ self.A.T + self.c)

    def value(self, X, w):
        out = np.sum(self._phi(X) * w, axis=-1)
        return out * np.nan if self.nan else out

    def grad_w(self, X, w):
        return self._phi(X)

    def grad_x(self, X, w):
        s = -np.sin(X @ self.A.T + self.c) * w  # (n, m)
        return s @ self.A

    def init_params(self, rng):
        return rng.standard_normal(self.n_params)


def test_non_finite_model_outputs_during_the_oracle_fit_raise():
    opt = GOUCB(2, model=_LinearModel(2, nan=True), n_explore=3, horizon=9, seed=0)
    opt.tell(np.full(2, 0.5), 0.0)
    opt.tell(np.full(2, 0.2), 0.1)
    with pytest.raises(FloatingPointError, match="non-finite"):
        opt.tell(np.full(2, 0.7), 0.3)


# -- parameters ----------------------------------------------------------------------------


def test_defaults_follow_theorem_4_1_and_appendix_d1():
    opt = GOUCB(20, horizon=64)
    d_w = 25 * 22 + 1
    assert opt.n_explore == 8  # ceil(sqrt(T))
    # App. D.1's sqrt(T) ln^2 T, times the calibrated scale
    assert opt.lam == pytest.approx(GOUCB.default_lam_scale * 8 * math.log(64) ** 2)
    opt = GOUCB(20, horizon=64, n_explore=3, beta_scale=1.0)
    for _ in range(5):  # Phase II round 3 next
        opt.tell(opt.ask(), 0.0)
    assert opt.round == 3
    assert opt.beta == pytest.approx(d_w**3 * 1.0**4 * 3 / 64)
    assert GOUCB(2, beta=0.5).beta == 0.5
    assert GOUCB(2, beta=lambda t: 2.0 * t).beta == 2.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"horizon": 9, "n_explore": 10}, r"n_explore \(10\) must not exceed the horizon \(9\)"),
        ({"horizon": 0}, "horizon must be an integer >= 1"),
        ({"n_explore": 0}, "n_explore must be an integer >= 1"),
        ({"lam": -1.0}, "lam must be a finite float > 0"),
        ({"beta": 0.0}, "beta must be a finite float > 0"),
        ({"acquisition": "thompson"}, "acquisition must be one of"),
        ({"F": math.inf}, "F must be a finite float > 0"),
        ({"ascent_starts": "best"}, "ascent_starts must be one of"),
        ({"step_bound": 0.0}, "step_bound must be a finite float > 0"),
        ({"refit_every": 0}, "refit_every must be an integer >= 1"),
        ({"solver": "first-order", "step_bound": 0.1}, "configure the joint ascent"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GOUCB(2, **kwargs)


# -- Algorithm 1 ----------------------------------------------------------------------------


def _quadratic(x):
    return float(1.0 - 4.0 * np.sum((x - 0.3) ** 2))


def test_phase_one_is_uniform_and_ends_with_the_oracle_fit():
    opt = GOUCB(2, n_explore=6, horizon=36, seed=0)
    for _ in range(6):
        assert opt.phase == 1 and opt.w0 is None
        x = opt.ask()
        opt.tell(x, _quadratic(x))
    assert opt.phase == 2 and opt.round == 1
    # eq. 2: the least-squares fit of the six rewards (25 hidden units interpolate them)
    resid = opt.model.value(opt.X, opt.w0) - opt.y
    assert np.max(np.abs(resid)) < 1e-3
    np.testing.assert_array_equal(opt.w_hat, opt.w0)  # w_hat_1 = w_hat_0
    # the draws are the seed's uniform draws, not an acquisition's
    rng = np.random.default_rng(0)
    np.testing.assert_allclose(opt.X, rng.random((6, 2)))


def test_sigma_and_w_hat_follow_eqs_3_to_5():
    opt = GOUCB(2, n_explore=4, horizon=16, lam=3.0, beta_scale=1e-3, seed=1)
    w_hats, grads, targets = [], [], []
    for _ in range(12):
        x = opt.ask()
        y = _quadratic(x)
        if opt.phase == 2:
            w = opt.w_hat.copy()
            g = opt.model.grad_w(x[None, :], w)[0]
            w_hats.append(w)
            grads.append(g)
            targets.append(float(g @ w) + y - float(opt.model.value(x[None, :], w)[0]))
        opt.tell(x, y)
    G = np.array(grads)
    Sigma = 3.0 * np.eye(opt.model.n_params) + G.T @ G  # eq. 3
    np.testing.assert_allclose(opt.Sigma, Sigma, rtol=1e-6, atol=1e-6)
    w5 = np.linalg.solve(Sigma, G.T @ np.array(targets) + 3.0 * opt.w0)  # eq. 5
    np.testing.assert_allclose(opt.w_hat, w5, rtol=1e-6, atol=1e-8)
    # eq. 5 minimises eq. 4: its gradient vanishes there
    r = np.array([(opt.w_hat - wi) @ gi for wi, gi in zip(w_hats, grads, strict=True)])
    f_i = np.array(targets) - np.einsum("ij,ij->i", G, np.array(w_hats))
    grad4 = 3.0 * (opt.w_hat - opt.w0) + G.T @ (r - f_i)
    np.testing.assert_allclose(grad4, 0.0, atol=1e-8)


def test_observed_starts_and_a_step_bound_keep_proposals_near_the_best_told_points():
    opt = GOUCB(3, n_explore=5, horizon=20, ascent_starts="observed", step_bound=0.05, seed=2)
    for _ in range(5):
        x = opt.ask()
        opt.tell(x, _quadratic(x))
    for _ in range(6):
        x = opt.ask()
        # within 0.05 of one of the told points the ascent started from (its best ones)
        assert np.min(np.max(np.abs(opt.X - x), axis=1)) <= 0.05 + 1e-12
        opt.tell(x, _quadratic(x))


def test_refit_restarts_eqs_3_to_5_from_a_new_oracle_fit():
    opt = GOUCB(2, n_explore=4, horizon=16, lam=3.0, refit_every=3, seed=1)
    w0_first = None
    for _ in range(10):
        x = opt.ask()
        opt.tell(x, _quadratic(x))
        if opt.t == 4:
            w0_first = opt.w0.copy()
    # refits after Phase II rounds 3 and 6 (t = 7 and 10): the last one saw every reward
    assert not np.allclose(opt.w0, w0_first)
    X2, y2 = opt.X[4:], opt.y[4:]
    G = opt.model.grad_w(X2, opt.w0)
    Sigma = 3.0 * np.eye(opt.model.n_params) + G.T @ G  # eq. 3 at the new w_hat_0
    np.testing.assert_allclose(opt.Sigma, Sigma, rtol=1e-6, atol=1e-6)
    b = G.T @ (G @ opt.w0 + y2 - opt.model.value(X2, opt.w0))
    np.testing.assert_allclose(opt.w_hat, np.linalg.solve(Sigma, b + 3.0 * opt.w0), atol=1e-8)
    # the oracle's fit is a least-squares fit of all ten rewards
    assert np.max(np.abs(opt.model.value(opt.X, opt.w0) - opt.y)) < 1e-2


def test_first_order_ucb_is_the_exact_inner_maximum_for_a_linear_family():
    # For f_w(x) = phi(x)^T w, max_{w in Ball_t} f_x(w) = f_x(w_hat) + sqrt(beta) ||phi||_{S^-1}
    # exactly, so both ways of solving step 5 choose the same candidate.
    C = np.random.default_rng(3).random((40, 2))
    picks = {}
    for acq in ("first-order", "joint"):
        opt = GOUCB(2, model=_LinearModel(2), n_explore=4, horizon=16, beta=0.3, solver=acq, seed=2)
        for _ in range(9):
            x = opt.ask(candidates=C)
            opt.tell(x, _quadratic(x))
        picks[acq] = opt.ask(candidates=C)
    np.testing.assert_array_equal(picks["first-order"], picks["joint"])


def test_joint_ascent_stays_in_the_ball_and_beats_the_centre():
    opt = GOUCB(3, n_explore=4, horizon=16, beta=0.2, solver="joint", seed=4)
    for _ in range(8):
        x = opt.ask()
        assert np.all((x >= 0) & (x <= 1))
        opt.tell(x, _quadratic(x))
    S = opt._Sigma_inv
    opt.solver = "first-order"
    first_order = opt._propose(None, None)

    def ucb(Z):
        G = opt.model.grad_w(Z, opt.w_hat)
        return opt.model.value(Z, opt.w_hat) + math.sqrt(0.2) * np.sqrt(
            np.einsum("ij,jk,ik->i", G, S, G)
        )

    x, w, value = opt._joint_ascent(ucb, opt.w_hat, S, math.sqrt(0.2), None)
    assert np.all((x >= 0) & (x <= 1))
    d = w - opt.w_hat
    assert d @ np.linalg.solve(S, d) <= 0.2 * (1 + 1e-9)  # ||w - w_hat||^2_Sigma <= beta
    assert value == pytest.approx(opt.model.value(x[None, :], w)[0])
    # the joint maximum is at least f at the centre of the ball for the first-order pick
    assert value >= opt.model.value(first_order[None, :], opt.w_hat)[0] - 1e-9


def test_replaying_the_history_gives_the_same_model_and_proposal():
    a = GOUCB(3, n_explore=5, horizon=25, seed=7)
    for _ in range(11):
        x = a.ask()
        a.tell(x, _quadratic(x))
    b = GOUCB(3, n_explore=5, horizon=25, seed=7)
    b.tell(a.X, a.y)
    np.testing.assert_array_equal(a.w_hat, b.w_hat)
    a.reseed(123)
    b.reseed(123)
    np.testing.assert_array_equal(a.ask(), b.ask())
    np.testing.assert_array_equal(a.recommend(), b.recommend())


@pytest.mark.parametrize("acquisition", ["joint", "first-order"])
def test_pending_points_shrink_the_ball_and_spread_a_batch(acquisition):
    opt = GOUCB(2, n_explore=4, horizon=16, beta=0.1, seed=5, solver=acquisition)
    for _ in range(8):
        x = opt.ask()
        opt.tell(x, _quadratic(x))
    p = opt.ask()
    opt.clear_pending()
    mean_free, var_free = opt._posterior(p[None, :], None)
    mean_pending, var_pending = opt._posterior(p[None, :], p[None, :])
    assert var_pending[0] < var_free[0]
    assert mean_pending[0] == mean_free[0]  # a pending point carries no value
    batch = [opt.ask() for _ in range(4)]
    assert len({tuple(np.round(b, 6)) for b in batch}) == 4


def test_recommend_and_predict_work_in_both_phases():
    opt = GOUCB(2, n_explore=4, horizon=16, seed=6)
    with pytest.raises(RuntimeError):
        opt.recommend()
    for _ in range(2):
        x = opt.ask()
        opt.tell(x, _quadratic(x))
    mean, std = opt.predict(opt.X)  # Phase I: the oracle fitted to the rewards so far
    np.testing.assert_allclose(mean, opt.y, atol=1e-3)
    assert np.all(std > 0)
    for _ in range(8):
        x = opt.ask()
        opt.tell(x, _quadratic(x))
    rec = opt.recommend()
    assert any(np.array_equal(rec, xi) for xi in opt.X)


def test_go_ucb_finds_the_optimum_of_a_realizable_function():
    # The objective is the paper's network with fixed random weights (realizable, as f1):
    # after Phase I (n = 6) and 24 Phase II rounds, the best evaluated value is within 5% of
    # the function's range from its maximum, on each of 3 seeds. Tolerance: the regret of
    # uniform search with 30 draws on this function is 11% to 24% of the range (same seeds).
    net = TwoLayerNetwork(2, hidden=5)
    w_star = np.random.default_rng(11).standard_normal(net.n_params) * 2
    grid = np.stack(np.meshgrid(*[np.linspace(0, 1, 201)] * 2), -1).reshape(-1, 2)
    f_grid = net.value(grid, w_star)
    f_max, f_range = f_grid.max(), np.ptp(f_grid)
    for seed in range(3):
        opt = GOUCB(2, n_explore=6, horizon=24, seed=seed)
        for _ in range(30):
            x = opt.ask()
            opt.tell(x, float(net.value(x[None, :], w_star)[0]))
        gap = f_max - opt.y.max()
        assert gap < 0.05 * f_range, (seed, gap / f_range)
        rand = net.value(np.random.default_rng(seed).random((30, 2)), w_star)
        assert f_max - rand.max() > gap


# -- the Optuna sampler --------------------------------------------------------------------


def test_go_ucb_sampler_runs_phase_one_then_the_model():
    import optuna

    from privtune import GOUCBSampler

    sampler = GOUCBSampler(n_explore=4, horizon=12, seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(
        lambda t: _quadratic(np.array([t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)])),
        n_trials=12,
    )
    opt = sampler.engine.replay((study._study_id, study.study_name)).optimizer
    assert (opt.n_explore, opt.horizon, opt.phase, opt.t) == (4, 12, 2, 11)
    # the phase I draws are uniform draws of the optimizer's seed; the model picks after them
    rec = sampler.recommend(study)
    assert set(rec) == {"x", "y"}
    assert rec in [t.params for t in study.trials]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"horizon": 0}, "horizon must be an integer >= 1"),
        ({"horizon": 4, "n_explore": 5}, r"n_explore \(5\) must not exceed the horizon \(4\)"),
        ({"epsilon": 1.0}, "value_range is required when epsilon is set"),
        ({"optimizer_kwargs": {"acquisition": "ei"}}, "acquisition must be one of"),
    ],
)
def test_go_ucb_sampler_bad_arguments_are_named(kwargs, match):
    from privtune import GOUCBSampler

    with pytest.raises(ValueError, match=match):
        GOUCBSampler(**kwargs)
