"""Private selection among privately trained models: the engine both doors call.

The estimator here is a stand-in with its own ``epsilon`` (a nearest-centroid classifier
whose centroids are perturbed with noise that shrinks as epsilon grows): these tests check
the wiring (the epsilon each fit gets, the candidates, the model returned, the report), not
that the stand-in is private; tests/test_diffprivlib.py runs a diffprivlib model.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_classification
from sklearn.pipeline import Pipeline

from privtune.privacy.composition import RepeatDistribution, selection_epsilon
from privtune.privacy.selection import SelectionPlan
from privtune.privacy.units import PrivacyUnit
from privtune.private_models import REFIT_FIT, SELECTION_LAW, at_epsilon, select_private_model
from privtune.records import check_declared_epsilon, epsilon_parameters, record_metric


class NoisyCentroids(ClassifierMixin, BaseEstimator):
    """Nearest centroid, each centroid moved by Gaussian noise of SD ``shrink / epsilon``."""

    def __init__(self, epsilon=1.0, shrink=1.0, random_state=None):
        self.epsilon = epsilon
        self.shrink = shrink
        self.random_state = random_state

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.classes_ = np.unique(y)
        self.fitted_epsilon_ = self.epsilon
        self.centroids_ = np.array(
            [
                X[y == c].mean(0) + rng.normal(0, self.shrink / self.epsilon, X.shape[1])
                for c in self.classes_
            ]
        )
        return self

    def predict(self, X):
        d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(-1)
        return self.classes_[d.argmin(1)]


X, y = make_classification(1200, 4, n_informative=3, n_redundant=0, random_state=0)
SPLIT = (X[:800], y[:800], X[800:], y[800:])
ACCURACY = record_metric("accuracy", NoisyCentroids())


def _sample(rng):
    return {"shrink": float(10 ** rng.uniform(-2, 1))}


def test_the_estimators_own_epsilon_is_found_and_shared_by_its_steps():
    assert epsilon_parameters(NoisyCentroids()) == ("epsilon",)
    pipe = Pipeline([("a", NoisyCentroids()), ("b", NoisyCentroids())])
    assert set(epsilon_parameters(pipe)) == {"a__epsilon", "b__epsilon"}
    shared = at_epsilon(pipe, 1.0, epsilon_parameters(pipe))
    assert shared.get_params()["a__epsilon"] == shared.get_params()["b__epsilon"] == 0.5
    with pytest.raises(ValueError, match="no parameter that sets its own epsilon"):
        at_epsilon(NoisyCentroids(), 1.0, ())


#: The random_state of every fit NoisyCentroidsSeen made (reset by each test that reads it).
SEEN: list = []


class NoisyCentroidsSeen(NoisyCentroids):
    """NoisyCentroids that records the random_state of each of its fits."""

    def fit(self, X, y):
        SEEN.append(self.random_state)
        return super().fit(X, y)


def test_every_fit_of_a_selection_draws_its_own_noise():
    # An integer random_state, copied by clone, would give every candidate and the refit the
    # same noise, where the accounting treats them as independent runs: each fit gets a seed
    # derived from it and from the fit, reproducibly.
    def run():
        SEEN.clear()
        out = select_private_model(
            NoisyCentroidsSeen(random_state=7),
            _sample,
            *SPLIT,
            ACCURACY,
            privacy_budget=(1.0, 1e-6),
            mean=8,
            distribution="geometric",
            untuned="baseline",
            seed=0,  # K = 6
        )
        return out, list(SEEN)

    out, seen = run()
    assert len(seen) == out.n_candidates + 1 >= 3  # the baseline and every candidate
    assert len(set(seen)) == len(seen) and 7 not in seen
    assert run()[1] == seen  # reproducible from the estimator's own random_state
    refit = at_epsilon(NoisyCentroids(random_state=7), 1.0, ("epsilon",))
    assert (
        refit.random_state not in seen
        and refit.random_state
        == at_epsilon(NoisyCentroids(random_state=7), 1.0, ("epsilon",), REFIT_FIT).random_state
    )
    # None stays None (fresh randomness at each fit); a generator is copied by clone, so its
    # fits are told apart the same way; a pipeline's steps get different seeds
    assert at_epsilon(NoisyCentroids(), 1.0, ("epsilon",), 5).random_state is None
    state = np.random.RandomState(0)
    a, b = (at_epsilon(NoisyCentroids(random_state=state), 1.0, ("epsilon",), f) for f in (2, 3))
    assert isinstance(a.random_state, int) and a.random_state != b.random_state
    pipe = Pipeline([("a", NoisyCentroids(random_state=1)), ("b", NoisyCentroids(random_state=1))])
    params = at_epsilon(pipe, 1.0, epsilon_parameters(pipe), 2).get_params()
    assert params["a__random_state"] != params["b__random_state"]


def test_a_declared_epsilon_below_the_estimators_own_is_refused_before_any_fit():
    from privtune import PrivateBOSearchCV, RecordObjective

    check_declared_epsilon(NoisyCentroids(epsilon=0.5), 0.5)  # equal: true
    check_declared_epsilon(NoisyCentroids(epsilon=0.5), 1.0)  # above: a weaker, true claim
    pipe = Pipeline([("a", NoisyCentroids(epsilon=0.3)), ("b", NoisyCentroids(epsilon=0.3))])
    with pytest.raises(ValueError, match=r"own epsilon is 0\.6 \(a__epsilon=0\.3, b__epsilon"):
        check_declared_epsilon(pipe, 0.5)  # the steps add up
    SEEN.clear()
    search = PrivateBOSearchCV(
        NoisyCentroidsSeen(epsilon=5.0),
        {"shrink": (0.01, 10.0, "log-uniform")},
        privacy_unit="record",
        privacy_budget=(1.0, 1e-6),
        estimator_epsilon=0.1,
        n_iter=3,
    )
    with pytest.raises(ValueError, match=r"estimator_epsilon=0\.1 declares each fit 0\.1-DP"):
        search.fit(X, y)
    with pytest.raises(ValueError, match="the space tunes epsilon"):
        search.set_params(space={"epsilon": (0.01, 0.1)}).fit(X, y)
    objective = RecordObjective(
        lambda trial: NoisyCentroidsSeen(epsilon=5.0), *SPLIT, estimator_epsilon=0.1
    )
    with pytest.raises(ValueError, match=r"declares each fit 0\.1-DP"):
        objective(None)  # the estimator is built and checked before any fit
    assert SEEN == []  # refused before any fit


@pytest.mark.parametrize("seed", range(3))
def test_the_pick_is_its_own_model_fitted_at_the_per_candidate_epsilon(seed):
    out = select_private_model(
        NoisyCentroids(random_state=0),
        _sample,
        *SPLIT,
        ACCURACY,
        privacy_budget=(1.0, 1e-6),
        mean=8,
        seed=seed,
        noise_seed=seed,
    )
    eps0 = out.plan.epsilon_per_candidate
    # the total for every record is the budget's: a selection among eps0-DP candidates
    assert out.plan.epsilon <= 1.0 and out.plan.base == "private"
    assert out.plan.epsilon == pytest.approx(
        selection_epsilon(eps0, RepeatDistribution(8, "logarithmic"), 1e-6, base="private")
    )
    assert out.model.fitted_epsilon_ == pytest.approx(eps0)  # no refit at another epsilon
    if out.params is not None:
        assert out.model.shrink == out.params["shrink"]
    else:
        assert out.untuned and out.model.shrink == 1.0
    assert np.isfinite(out.score)  # a released value (noisy: it may leave the range)
    report = out.report(PrivacyUnit.record(400))
    assert report["candidate"] == "private" and report["fit_epsilon"] == eps0
    assert "training and validation" in report["protects"]
    assert "kept with the data owner" in report["n_candidates"]


def test_with_a_large_budget_the_pick_beats_a_poor_untuned_estimator():
    # The untuned stand-in (shrink=1 at the per-candidate epsilon) is poor; at a large
    # budget the released scores are nearly exact, and a small shrink is picked.
    out = select_private_model(
        NoisyCentroids(shrink=30.0, random_state=0),
        _sample,
        *SPLIT,
        ACCURACY,
        privacy_budget=(30.0, 1e-6),
        mean=10,
        distribution="geometric",
        seed=0,
        noise_seed=0,
    )
    assert out.params is not None and out.params["shrink"] < 1.0
    untuned = at_epsilon(NoisyCentroids(shrink=30.0, random_state=0), 1.0, ("epsilon",))
    untuned.set_params(epsilon=out.plan.epsilon_per_candidate).fit(*SPLIT[:2])
    assert ACCURACY(out.model, *SPLIT[2:]) > ACCURACY(untuned, *SPLIT[2:])


# -- the scikit-learn door ---------------------------------------------------------------------
@pytest.mark.parametrize("refit", [True, False], ids=["refit", "no-refit"])
@pytest.mark.parametrize("search", ["selection", "bayesian"])
def test_the_searches_protect_every_record_by_one_total(search, refit):
    from privtune import PrivateBOSearchCV, PrivateSelectionSearchCV

    cls = PrivateSelectionSearchCV if search == "selection" else PrivateBOSearchCV
    kw = dict(
        privacy_unit="record",
        privacy_budget=(1.0, 1e-6),
        estimator_epsilon="auto",
        n_iter=8,
        refit=refit,
        random_state=0,
        noise_random_state=0,
    )
    if search == "selection":
        kw["n_iter_distribution"] = "logarithmic"
    s = cls(NoisyCentroids(random_state=0), {"shrink": (0.01, 10.0, "log-uniform")}, **kw)
    s.fit(X, y)
    report = s.privacy_report_
    assert report["epsilon"] <= 1.0 + 1e-9 and report["candidate"] == "private"
    assert "training and validation" in report["protects"]
    assert "end_to_end" not in report  # one guarantee, not fits composed one by one
    assert s.epsilon_ == pytest.approx(report["fit_epsilon"])
    # the whole budget to the selection, the pick's own model deployed (no refit either way)
    assert "refit_epsilon" not in report and "own model" in report["model"]
    assert s.best_estimator_.fitted_epsilon_ == pytest.approx(s.epsilon_)
    assert set(s.best_params_) == {"shrink"} and len(s.cv_results_["params"]) == 1
    deployed = s if refit else s.best_estimator_  # refit=False: scikit-learn's rule
    assert deployed.predict(X[:5]).shape == (5,) and 0.0 <= deployed.score(X, y) <= 1.0
    if not refit:
        with pytest.raises(AttributeError):
            s.predict(X[:5])
    assert s.best_params_ == s.cv_results_["params"][0]
    # the engine's selection on the search's split, seeds and settings: the same pick
    from privtune.records import holdout_split
    from privtune.space import as_space

    [(train, val)] = holdout_split(s.estimator, None, 0.2, 0, X, y, stratify=False)
    space = as_space(s.space)
    alone = select_private_model(
        NoisyCentroids(random_state=0),
        lambda rng: space.from_unit(rng.random(space.dim)),
        X[train],
        y[train],
        X[val],
        y[val],
        ACCURACY,
        privacy_budget=(1.0, 1e-6),
        mean=8,
        distribution="logarithmic" if search == "selection" else SELECTION_LAW,
        seed=0,
        noise_seed=0,
    )
    assert alone.score == s.best_score_ and alone.params in (s.best_params_, None)
    np.testing.assert_array_equal(alone.model.centroids_, s.best_estimator_.centroids_)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epsilon=1.0), "privacy_budget=\\(epsilon, delta\\) with delta > 0"),
        (dict(privacy_budget=(1.0, 0.0)), "with delta > 0"),
        (dict(privacy_budget=(1.0, 1e-6), publish="scores"), "not publish='scores'"),
    ],
)
def test_every_record_needs_one_total_and_one_choice(kwargs, match):
    from privtune import PrivateBOSearchCV

    s = PrivateBOSearchCV(
        NoisyCentroids(),
        {"shrink": (0.01, 10.0, "log-uniform")},
        privacy_unit="record",
        estimator_epsilon="auto",
        n_iter=4,
        **kwargs,
    )
    with pytest.raises(ValueError, match=match):
        s.fit(X, y)


def test_every_record_needs_an_estimator_whose_epsilon_the_search_sets():
    from sklearn.linear_model import LogisticRegression

    from privtune import PrivateSelectionSearchCV

    with pytest.raises(ValueError, match="has no parameter named epsilon"):
        PrivateSelectionSearchCV(
            LogisticRegression(),
            {"C": (0.01, 10.0, "log-uniform")},
            privacy_unit="record",
            privacy_budget=(1.0, 1e-6),
            estimator_epsilon="auto",
        ).fit(X, y)
    with pytest.raises(ValueError, match="the space must not tune them"):
        PrivateSelectionSearchCV(
            NoisyCentroids(),
            {"epsilon": (0.1, 1.0)},
            privacy_unit="record",
            privacy_budget=(1.0, 1e-6),
            estimator_epsilon="auto",
        ).fit(X, y)


# -- the Optuna door ---------------------------------------------------------------------------
def _make(trial):
    return NoisyCentroids(
        shrink=trial.suggest_float("shrink", 0.01, 10.0, log=True), random_state=0
    )


def test_the_optuna_door_selects_among_private_models_by_the_same_engine():
    import optuna

    from privtune import PrivateGPUCBSampler, RecordObjective

    objective = RecordObjective(
        _make, *SPLIT, estimator_epsilon="auto", untuned=NoisyCentroids(random_state=0)
    )
    sampler = PrivateGPUCBSampler(
        privacy_unit="record",
        privacy_budget=(1.0, 1e-6),
        n_trials=8,
        value_range=(0.0, 1.0),
        noise_seed=0,
    )
    study = sampler.create_study(direction="maximize")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler.optimize(study, objective)
    assert study.trials == []  # no candidate's score reaches the storage
    params = sampler.recommend(study)
    report = sampler.privacy_report(study)
    assert report["epsilon"] <= 1.0 + 1e-9 and report["candidate"] == "private"
    assert "training and validation" in report["protects"]
    # the search's law of K and the whole budget: the same per-candidate epsilon
    plan = SelectionPlan.from_args(8, SELECTION_LAW, None, (1.0, 1e-6), base="private")
    assert report["fit_epsilon"] == pytest.approx(plan.epsilon_per_candidate)
    model = objective.model_  # the pick's own model, fitted at the per-candidate epsilon
    assert model.fitted_epsilon_ == pytest.approx(report["fit_epsilon"])
    assert "refit_epsilon" not in report and "own model" in report["model"]
    assert model.shrink == pytest.approx(params["shrink"])
    with pytest.raises(ValueError, match="no trial of the study"):
        sampler.recommend_trial(study)
    # made once: a second optimize returns it, the model stays
    sampler.optimize(study, objective)
    assert sampler.recommend(study) == params and objective.model_ is model


def test_the_optuna_door_needs_one_total_budget():
    from privtune import PrivateGPUCBSampler, RecordObjective

    objective = RecordObjective(_make, *SPLIT, estimator_epsilon="auto")
    sampler = PrivateGPUCBSampler(
        privacy_unit="record", epsilon=1.0, n_trials=4, value_range=(0.0, 1.0)
    )
    with pytest.raises(ValueError, match="privacy_budget=\\(epsilon, delta\\)"):
        sampler.optimize(sampler.create_study(direction="maximize"), objective)
    with pytest.raises(ValueError, match="'auto'"):
        RecordObjective(_make, *SPLIT, estimator_epsilon="all")


# -- an empirical audit --------------------------------------------------------------------------
class LaplaceMajority(ClassifierMixin, BaseEstimator):
    """Predicts one label for every record: 1 when the mean training label, released with
    Laplace noise of scale 1 / (n epsilon) (its sensitivity under replace-one is 1 / n), plus
    ``bias`` exceeds 1/2. epsilon-DP in the training records; ``exact=True`` drops the noise
    (a broken model, for the audit's own check)."""

    def __init__(self, bias=0.0, epsilon=1.0, random_state=None, exact=False):
        self.bias = bias
        self.epsilon = epsilon
        self.random_state = random_state
        self.exact = exact

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        noise = 0.0
        if not self.exact:
            rng = np.random.default_rng(self.random_state)
            noise = rng.laplace(0.0, 1.0 / (len(y) * self.epsilon))
        self.label_ = int(np.mean(y) + noise + self.bias > 0.5)
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


def _audit_counts(y_train, exact, n_runs):
    """How often each (picked bias, released score above 1/2) comes out, over seeded runs."""
    X_train, X_val, y_val = np.zeros((4, 1)), np.zeros((20, 1)), np.ones(20, dtype=int)
    metric = record_metric("accuracy", LaplaceMajority(), (0.0, 1.0))
    counts = np.zeros(4)
    for i in range(n_runs):

        def sample(rng):
            return {
                "bias": [-0.1, 0.1][int(rng.integers(2))],
                "random_state": int(rng.integers(2**31)),
            }

        out = select_private_model(
            LaplaceMajority(exact=exact),
            sample,
            X_train,
            np.asarray(y_train),
            X_val,
            y_val,
            metric,
            privacy_budget=(1.0, 1e-6),
            mean=2,
            distribution="geometric",
            untuned=None,
            seed=i,
            noise_seed=i,
        )
        counts[2 * int(out.params["bias"] > 0) + int(out.score > 0.5)] += 1
    return counts


@pytest.mark.parametrize("exact", [False, True], ids=["private-fits", "broken-fits"])
def test_an_empirical_audit_keeps_the_selection_within_its_total(exact):
    # Two data sets that differ in one training label (a training record replaced). The
    # selection at a total epsilon of 1 runs 4,000 times on each; for each of its 4 outcomes
    # (the picked configuration, and whether its released score is above 1/2) the
    # Clopper-Pearson interval (99.99 %, Bonferroni over the 8 ratios) gives a lower bound on
    # the log-ratio of the outcome's probabilities, which the guarantee keeps at or below 1
    # (delta 1e-6 is far below what 4,000 runs can see). The same audit of a model that drops
    # its own noise (not differentially private) must find a log-ratio above 1: the audit
    # can fail.
    from scipy import stats

    n_runs = 4_000
    first = _audit_counts([1, 1, 0, 0], exact, n_runs)
    second = _audit_counts([1, 1, 1, 0], exact, n_runs)
    alpha = 1e-4 / 8
    worst = -np.inf
    for x, z in ((first, second), (second, first)):
        for k in range(4):
            if x[k] == 0:
                continue
            p_low = stats.beta.ppf(alpha / 2, x[k], n_runs - x[k] + 1)
            q_high = stats.beta.ppf(1 - alpha / 2, z[k] + 1, n_runs - z[k])
            worst = max(worst, float(np.log(p_low / q_high)))
    if exact:
        assert worst > 1.0
    else:
        assert worst <= 1.0


def test_a_budget_that_resolves_nothing_is_said_before_any_record_is_read():
    from privtune import PrivateSelectionSearchCV
    from privtune.privacy.selection import SelectionPlan
    from privtune.private_models import selection_resolution

    plan = SelectionPlan.from_args(10, "geometric", None, (0.3, 1e-6), base="private")
    shortfall, advice = selection_resolution(plan, 240, (0.0, 1.0))
    assert shortfall > 0.01 and "n_val=240" in advice and "one fit of the untuned model" in advice
    wide = SelectionPlan.from_args(10, "geometric", None, (30.0, 1e-6), base="private")
    assert selection_resolution(wide, 10_000, (0.0, 1.0))[1] is None
    search = PrivateSelectionSearchCV(
        NoisyCentroids(random_state=0),
        {"shrink": (0.01, 10.0, "log-uniform")},
        privacy_unit="record",
        privacy_budget=(0.3, 1e-6),
        estimator_epsilon="auto",
        n_iter=10,
    )
    with pytest.warns(UserWarning, match="best released score can fall"):
        search.fit(X, y)
