"""Bad arguments are refused where they enter, with an error naming the parameter and what is
allowed (never a bare error from deep inside, at the first trial or fit)."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest

from privtune import GOUCBSampler, PrivateGPUCBSampler
from privtune.privacy import LaplaceCurator, plan_budget, private_selection


def test_an_independent_sampler_that_is_not_a_sampler_is_refused_at_construction():
    with pytest.raises(TypeError, match="independent_sampler must be an Optuna sampler"):
        PrivateGPUCBSampler(independent_sampler="random")


@pytest.mark.parametrize(
    "seed, error", [("abc", TypeError), (-1, ValueError), (1.5, TypeError), (True, TypeError)]
)
def test_bad_seeds_are_refused_naming_the_parameter(seed, error):
    with pytest.raises(error, match=r"seed must be None, an int >= 0"):
        LaplaceCurator(1.0, (0.0, 1.0), seed=seed)
    with pytest.raises(error, match=r"^seed must be None, an int >= 0"):
        PrivateGPUCBSampler(seed=seed)
    with pytest.raises(error, match=r"^noise_seed must be None, an int >= 0"):
        PrivateGPUCBSampler(noise_seed=seed)
    with pytest.raises(error, match=r"^seed must be None, an int >= 0"):
        private_selection(
            float, lambda rng: 0.0, value_range=(0, 1), mean=2, epsilon=1.0, seed=seed
        )
    # a generator is a seed where the curator takes one
    LaplaceCurator(1.0, (0.0, 1.0), seed=np.random.default_rng(0))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_trials": 2.5}, ValueError, r"n_trials must be an integer >= 1, got 2.5"),
        ({"n_trials": "10"}, ValueError, r"n_trials must be an integer >= 1, got '10'"),
        ({"n_trials": [10, 0]}, ValueError, r"n_trials must be an integer >= 1, got 0"),
        ({"n_trials": 10, "epsilon": "10"}, TypeError, r"epsilon must be a float, got '10'"),
    ],
)
def test_plan_budget_names_the_bad_argument(kwargs, error, match):
    args = {"epsilon": 10.0, "delta": 1e-6, "value_range": (0.0, 1.0), **kwargs}
    with pytest.raises(error, match=match):
        plan_budget(**args)


def test_a_privacy_report_with_a_bad_delta_names_it():
    sampler = PrivateGPUCBSampler(epsilon=1.0, value_range=(0.0, 1.0), noise_seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(sampler.privatize(lambda t: t.suggest_float("x", 0, 1)), 2)
    with pytest.raises(TypeError, match="delta must be a float, got 'x'"):
        sampler.privacy_report(study, delta="x")
    with pytest.raises(ValueError, match="delta must be"):
        sampler.privacy_report(study, delta=1.5)


def test_go_ucb_refuses_a_horizon_given_twice():
    with pytest.raises(ValueError, match=r"horizon is an argument of GOUCBSampler"):
        GOUCBSampler(horizon=100, optimizer_kwargs={"horizon": 5})


def test_a_bad_weight_schedule_is_refused_naming_it():
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression

    from privtune.federated import FederatedSearch

    X, y = load_breast_cancer(return_X_y=True)
    parties = [(X[:200], y[:200]), (X[200:400], y[200:400])]
    search = FederatedSearch(
        LogisticRegression(max_iter=100),
        {"C": (0.1, 10.0)},
        n_iter=2,
        n_init=2,
        P=1,
        weight_schedule=(1,),
        random_state=0,
    )
    with pytest.raises(ValueError, match=r"weight_schedule must be a pair \(hold, decay\)"):
        search.fit(parties)
    search.set_params(weight_schedule=(10, 30), random_state="abc")
    with pytest.raises(TypeError, match=r"random_state must be None, an int >= 0"):
        search.fit(parties)


def test_options_of_the_fixed_model_are_refused_with_the_fitted_surrogate():
    # with the default (fitted) surrogate lam and kernel would change nothing: refused, with
    # what to do instead; with the fixed model they act
    from privtune.tuning import make_optimizer

    for kwargs in ({"lam": 0.1}, {"kernel": "se"}):
        with pytest.raises(ValueError, match=r'"surrogate": "fixed"'):
            make_optimizer("gp-ucb", 2, optimizer_kwargs=kwargs)
        with pytest.raises(ValueError, match="fixed surrogate"):
            PrivateGPUCBSampler(optimizer_kwargs=kwargs)
    fixed = make_optimizer("gp-ucb", 2, optimizer_kwargs={"surrogate": "fixed", "lam": 0.1})
    assert fixed.lam == 0.1


def test_beta_scale_is_refused_where_the_acquisition_does_not_read_it():
    from privtune.tuning import make_optimizer

    # the exact-score default maximises log-EI, which has no confidence width
    with pytest.raises(ValueError, match=r"beta_scale.*\"acquisition\": \"ucb\""):
        make_optimizer("gp-ucb", 2, optimizer_kwargs={"beta_scale": 0.5})
    ucb = make_optimizer("gp-ucb", 2, optimizer_kwargs={"beta_scale": 0.5, "acquisition": "ucb"})
    assert ucb.beta_scale == 0.5


@pytest.mark.parametrize("epsilon", [None, 10.0])
@pytest.mark.parametrize("kwargs", [{"B": 5.0}, {"R": 3.0}, {"delta": 0.5}])
def test_the_ucb_width_s_constants_are_refused_where_nothing_reads_them(kwargs, epsilon):
    """``B``, ``R`` and ``delta`` enter GP-UCB's ``beta_t`` only: under log-EI (the default,
    with privacy or without) they would change nothing, so they are refused; under UCB they
    change the proposals; TGP-UCB's truncation reads ``B`` and ``R``, so it takes them."""
    from privtune.tuning import make_optimizer

    with pytest.raises(ValueError, match=r"beta_t.*\"acquisition\": \"ucb\""):
        make_optimizer("gp-ucb", 2, epsilon=epsilon, optimizer_kwargs=kwargs)
    with pytest.raises(ValueError, match=r"beta_t"):
        PrivateGPUCBSampler(optimizer_kwargs=kwargs)

    def proposals(extra):
        opt = make_optimizer(
            "gp-ucb", 2, epsilon=epsilon, seed=0, optimizer_kwargs={"acquisition": "ucb", **extra}
        )
        out = []
        for _ in range(8):
            x = opt.ask()
            out.append(x)
            opt.tell(x, -float(np.sum((x - 0.3) ** 2)))
        return np.array(out)

    assert not np.array_equal(proposals({}), proposals(kwargs))
    if "delta" not in kwargs:
        assert make_optimizer("tgp", 2, epsilon=epsilon, optimizer_kwargs=kwargs) is not None
    else:  # TGP-UCB's delta enters beta_t only: inert under log-EI
        with pytest.raises(ValueError, match=r"\['delta'\].*beta_t"):
            make_optimizer(
                "tgp", 2, epsilon=epsilon, optimizer_kwargs={"acquisition": "logei", **kwargs}
            )
    # random search proposes uniformly: none of them, nor beta_scale, changes anything
    for inert in (kwargs, {"beta_scale": 0.5}):
        with pytest.raises(ValueError, match=r"proposes uniformly at random"):
            make_optimizer("random", 2, epsilon=epsilon, optimizer_kwargs=inert)


def test_an_objective_s_huge_int_is_refused_by_name_and_a_private_one_is_clipped():
    """Optuna fails on an int value beyond a float's range with an internal assertion; the
    sampler's own ``optimize`` names the problem without privacy, passes a smaller int on as a
    float, and with privacy the curator clips the value to ``value_range`` as it does a float's."""
    exact = PrivateGPUCBSampler(seed=0)
    study = exact.create_study(direction="maximize")
    with pytest.raises(ValueError, match=r"an int too large for a float"):
        exact.optimize(study, lambda t: (t.suggest_float("x", 0, 1), 10**400)[1], 1)
    exact.optimize(study, lambda t: (t.suggest_float("x", 0, 1), 10**30)[1], 2)
    assert [t.value for t in study.trials if t.value is not None] == [1e30, 1e30]

    private = PrivateGPUCBSampler(epsilon=1.0, value_range=(0.0, 1.0), seed=0, noise_seed=0)
    study = private.create_study(direction="maximize", study_name="huge")
    private.optimize(study, lambda t: (t.suggest_float("x", 0, 1), 10**400)[1], 2)
    assert all(math.isfinite(t.value) for t in study.trials)


# -- data a private search cannot take, named before any fit --------------------------------------
def _bad_data():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    nan, inf = X.copy(), X.copy()
    nan[3, 2], inf[5, 1] = np.nan, np.inf
    return X, y, nan, inf


@pytest.mark.parametrize("privacy", ["score", "record"])
@pytest.mark.parametrize(
    "case, match",
    [
        ("nan", r"X contains NaN \(missing values\), which LogisticRegression does not accept"),
        ("inf", "X contains infinity, which LogisticRegression cannot take"),
        ("continuous", "y is continuous .* LogisticRegression is a classifier"),
        ("strings", "y holds values that are not numbers, and Ridge is a regressor"),
        ("nan-y", "y contains NaN"),
    ],
)
def test_a_private_search_names_the_data_problem_before_any_fit(privacy, case, match):
    # Under privacy the errors raised once scoring has begun lose their message, and a failed
    # fit becomes a missing score: the problem is named before any fit instead, without a value.
    from sklearn.linear_model import LogisticRegression, Ridge

    from privtune import PrivateBOSearchCV

    X, y, nan, inf = _bad_data()
    estimator, data = {
        "nan": (LogisticRegression(), (nan, y)),
        "inf": (LogisticRegression(), (inf, y)),
        "continuous": (LogisticRegression(), (X, y + 0.5)),
        "strings": (Ridge(), (X, np.where(y == 1, "yes", "no"))),
        "nan-y": (Ridge(), (X, np.where(y == 1, np.nan, 1.0))),
    }[case]
    name = "C" if isinstance(estimator, LogisticRegression) else "alpha"
    kwargs = (
        {"privacy_unit": "record", "privacy_budget": (1.0, 1e-6)}
        if privacy == "record"
        else {"epsilon": 1.0, "value_range": (0.0, 1.0)}
    )
    if privacy == "record" and isinstance(estimator, Ridge):
        kwargs["scoring"], kwargs["value_range"] = "neg_mean_absolute_error", (-5.0, 0.0)
    fits = []

    class Counted(type(estimator)):
        def fit(self, *args, **kw):
            fits.append(1)
            return super().fit(*args, **kw)

    Counted.__name__ = type(estimator).__name__  # the error names the estimator's class

    search = PrivateBOSearchCV(Counted(), {name: (1e-3, 1e2, "log-uniform")}, n_iter=3, **kwargs)
    with pytest.raises(ValueError, match=match):
        search.fit(*data)
    assert fits == []
    # a pipeline that imputes takes the missing values
    if case == "nan":
        from sklearn.impute import SimpleImputer
        from sklearn.pipeline import make_pipeline

        from privtune.scores import check_inputs

        check_inputs(make_pipeline(SimpleImputer(), LogisticRegression()), nan, y)
