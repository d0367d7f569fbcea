"""Private selection: the best of a random number of random candidates, only the pick
published (Liu & Talwar 2019; Papernot & Steinke 2022)."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression

from privtune import PrivateBOSearchCV, record_choice
from privtune.privacy import (
    PrivacyUnit,
    RepeatDistribution,
    per_report_epsilon,
    private_selection,
    selection_epsilon,
    selection_per_candidate_epsilon,
)


@pytest.mark.parametrize(
    "distribution, shape", [("logarithmic", 0.0), ("geometric", 1.0), (0.5, 0.5), (3.0, 3.0)]
)
def test_the_number_of_candidates_has_the_mean_asked_for(distribution, shape):
    dist = RepeatDistribution(20, distribution)
    assert dist.shape == shape
    # the same gamma as dp-accounting's accountant uses for this mean (its bisection is
    # conservative to 1e-9 relative)
    expected = rdp_privacy_accountant._gamma_truncated_negative_binomial(shape, 20)
    assert dist.gamma == pytest.approx(expected, rel=1e-6)
    ks = np.array([dist.draw(np.random.default_rng(i)) for i in range(4000)])
    assert ks.min() >= 1  # the truncated negative binomial never draws 0
    # 4000 draws, seeds fixed: the mean within 4 standard errors
    assert abs(ks.mean() - 20) < 4 * ks.std() / math.sqrt(len(ks))


def test_poisson_may_draw_no_candidate_and_then_selects_nothing():
    dist = RepeatDistribution(1.0, "poisson")
    ks = [dist.draw(np.random.default_rng(i)) for i in range(200)]
    assert 0 in ks
    seed = ks.index(0)
    out = private_selection(
        lambda c: 0.5,
        lambda rng: 0.0,
        value_range=(0, 1),
        mean=1.0,
        distribution="poisson",
        epsilon=1.0,
        seed=seed,
    )
    assert out.best is None and math.isnan(out.score) and out.n_candidates == 0


def test_selection_costs_what_the_papers_state_far_below_releasing_every_score():
    # fifty candidates on average at epsilon0 = 1, delta = 1e-6 (dp-accounting 0.6.0)
    costs = {
        d: selection_epsilon(1.0, RepeatDistribution(50, d), 1e-6)
        for d in ("logarithmic", "geometric", "poisson")
    }
    assert costs["logarithmic"] == pytest.approx(2.0, abs=0.05)
    assert costs["geometric"] == pytest.approx(3.0, abs=0.05)
    assert costs["poisson"] == pytest.approx(22.9, abs=0.1)
    # at a total of 10 over 50 candidates, selection gives each candidate more than ten times
    # the epsilon that releasing every score can
    eps0 = selection_per_candidate_epsilon(10.0, 1e-6, RepeatDistribution(50, "geometric"))
    assert eps0 > 10 * per_report_epsilon(10.0, 1e-6, 50)


def test_a_private_candidate_is_accounted_by_randomized_response_which_dominates_laplace():
    # Binary randomized response at epsilon0 has likelihood ratio exactly e^epsilon0: the
    # worst any epsilon0-DP candidate (a DP model's fit and its released score) can be.
    from privtune.privacy.composition import private_candidate_event

    for eps0 in (0.1, 0.5, 2.0):
        p = private_candidate_event(eps0).noise_parameter
        assert math.log((1 - p / 2) / (p / 2)) == pytest.approx(eps0, rel=1e-12)
        for d in ("logarithmic", "geometric", "poisson"):
            dist = RepeatDistribution(10, d)
            laplace = selection_epsilon(eps0, dist, 1e-6)
            private = selection_epsilon(eps0, dist, 1e-6, base="private")
            assert private >= laplace - 1e-9
    # the RDP route lands on Liu & Talwar's (2019) pure-DP bound for geometric stopping,
    # 3 epsilon0, within the accountant's grid of orders (4 %); the logarithmic distribution,
    # Papernot & Steinke's (2022) cheapest, costs about 2 epsilon0 (6 %)
    for eps0 in (0.1, 0.3, 1.0):
        geometric = selection_epsilon(eps0, RepeatDistribution(10), 1e-6, base="private")
        logarithmic = selection_epsilon(
            eps0, RepeatDistribution(10, "logarithmic"), 1e-6, base="private"
        )
        assert 3 * eps0 <= geometric <= 3 * eps0 * 1.04
        assert 2 * eps0 <= logarithmic <= 2 * eps0 * 1.06
    with pytest.raises(ValueError, match="base must be one of"):
        selection_epsilon(1.0, RepeatDistribution(10), 1e-6, base="gaussian")


@pytest.mark.parametrize("base", ["laplace", "private"])
def test_the_per_candidate_epsilon_of_private_candidates_fits_the_budget(base):
    dist = RepeatDistribution(10, "logarithmic")
    eps0 = selection_per_candidate_epsilon(1.0, 1e-6, dist, base=base)
    assert selection_epsilon(eps0, dist, 1e-6, base=base) <= 1.0
    assert selection_epsilon(eps0 * 1.001, dist, 1e-6, base=base) > 1.0


@pytest.mark.parametrize("distribution", ["logarithmic", "geometric", "poisson"])
def test_the_per_candidate_epsilon_fits_the_budget_and_is_nearly_the_largest(distribution):
    dist = RepeatDistribution(30, distribution)
    eps0 = selection_per_candidate_epsilon(5.0, 1e-6, dist)
    assert selection_epsilon(eps0, dist, 1e-6) <= 5.0
    assert selection_epsilon(eps0 * 1.001, dist, 1e-6) > 5.0


def test_only_the_pick_and_its_noisy_score_are_published():
    calls = []

    def score(c):
        calls.append(c)
        return 1.0 - (c - 0.3) ** 2

    out = private_selection(
        score,
        lambda rng: float(rng.random()),
        value_range=(0.0, 1.0),
        mean=30,
        privacy_budget=(1000.0, 1e-6),
        seed=1,
        noise_seed=1,
    )
    assert len(calls) == out.n_candidates
    assert out.best in calls
    # at epsilon0 near 1000 the noise (scale 1e-3) cannot reorder candidates further apart:
    # the pick is within 0.01 of the best candidate's score
    assert score(out.best) >= max(1.0 - (c - 0.3) ** 2 for c in calls) - 0.01
    assert out.epsilon <= 1000.0 and out.delta == 1e-6
    assert set(vars(out)) == {
        "best",
        "score",
        "n_candidates",
        "epsilon_per_candidate",
        "epsilon",
        "delta",
        "distribution",
        "base",
    }


def test_a_failed_candidate_counts_as_the_worst_score_and_minimising_works():
    out = private_selection(
        lambda c: math.nan if c < 0.5 else c,
        lambda rng: float(rng.random()),
        value_range=(0.0, 1.0),
        mean=20,
        epsilon=1e4,
        maximize=False,
        seed=3,
        noise_seed=3,
    )
    assert out.best >= 0.5  # a NaN is the worst end (hi when minimising), never the pick


@pytest.mark.parametrize("malformed", ["acc=0.7312345", ["acc=0.7312345"], [0.7312345, 0.5]])
def test_a_malformed_score_is_refused_without_quoting_it(malformed):
    """A score that is not one number may still carry the raw score (a scorer returning
    ``"acc=0.73"``): the errors of the selection and of the curator name its type only."""
    from privtune.privacy import LaplaceCurator

    with pytest.raises((TypeError, ValueError)) as selection:
        private_selection(
            lambda c: malformed,
            lambda rng: float(rng.random()),
            value_range=(0.0, 1.0),
            mean=5,
            epsilon=1.0,
            seed=0,
        )
    assert "score" in str(selection.value)
    errors = [selection.value]
    if isinstance(malformed, str) or isinstance(malformed[0], str):
        with pytest.raises(TypeError, match="privatize needs numbers") as curator:
            LaplaceCurator(1.0, (0.0, 1.0)).privatize(malformed)
        errors.append(curator.value)
    for exc in errors:
        assert "7312" not in str(exc) and exc.__context__ is None and exc.__cause__ is None


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, ValueError, "one"),
        ({"epsilon": 1.0, "privacy_budget": (1.0, 1e-6)}, ValueError, "one"),
        (
            {"privacy_budget": (1.0, 0.0)},
            ValueError,
            r"privacy_budget\[1\] \(delta\) must be in \(0, 1\)",
        ),
        ({"epsilon": 1.0, "mean": 0.5}, ValueError, "mean must be"),
        ({"epsilon": 1.0, "distribution": "uniform"}, ValueError, "distribution must be one of"),
        ({"epsilon": 1.0, "value_range": (1, 0)}, ValueError, "value_range"),
    ],
)
def test_bad_input_is_named(kwargs, error, match):
    args = {"value_range": (0.0, 1.0), "mean": 10, **kwargs}
    with pytest.raises(error, match=match):
        private_selection(lambda c: 0.5, lambda rng: 0.0, **args)


# -- the search ----------------------------------------------------------------------------------
X, y = load_breast_cancer(return_X_y=True)
X = (X - X.mean(0)) / X.std(0)


def search(**kwargs):
    """A private selection over logistic regression's C: ``PrivateBOSearchCV(publish="best")``,
    or ``PrivateSelectionSearchCV`` when a mechanism is named."""
    from privtune import PrivateSelectionSearchCV

    kwargs.setdefault("n_iter", 6)
    common = dict(cv=kwargs.pop("cv", 3), random_state=0, noise_random_state=0)
    if "mechanism" in kwargs:
        return PrivateSelectionSearchCV(
            LogisticRegression(max_iter=200), {"C": (1e-3, 1e2, "log-uniform")}, **common, **kwargs
        )
    kwargs.setdefault("publish", "best")
    return PrivateBOSearchCV(
        LogisticRegression(max_iter=200), {"C": (1e-3, 1e2, "log-uniform")}, **common, **kwargs
    )


RAS = "repeat-and-select"


def test_repeat_and_select_publishes_the_pick_only(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the score unit resolves nothing: warned
        s = search(privacy_budget=(1.0, 1e-6), verbose=1, mechanism=RAS).fit(X, y)
    assert len(s.cv_results_["params"]) == 1 and s.best_index_ == 0
    assert s.best_params_ == s.cv_results_["params"][0]
    assert s.best_score_ == s.cv_results_["mean_test_score"][0]
    assert not any("split" in k for k in s.cv_results_)
    report = s.privacy_report_
    assert report["release"] == "best" and report["n_candidates"] == s.n_candidates_ >= 1
    assert report["epsilon"] <= 1.0 and report["accountant"] == "rdp"
    assert report["mechanism"] == RAS
    assert s.epsilon_ == report["epsilon_per_candidate"]
    assert s.best_estimator_.C == s.best_params_["C"]
    lines = capsys.readouterr().out.splitlines()
    # one line when the candidates are scored, counts only: no score before the pick
    pattern = r"\[Private\w+SearchCV\] (\d+)/\1 candidates fitted and scored \(no score"
    assert len(lines) == 1 and re.match(pattern, lines[0])


def test_a_one_shot_choice_publishes_the_pick_and_no_score_unless_asked(capsys):
    with pytest.warns(UserWarning, match="One point would take privacy_unit='record'"):
        s = search(privacy_budget=(1.0, 1e-6), verbose=1).fit(X, y)
    assert len(s.cv_results_["params"]) == 1 and s.best_index_ == 0
    assert math.isnan(s.best_score_) and math.isnan(s.cv_results_["mean_test_score"][0])
    report = s.privacy_report_
    assert report["mechanism"] == "permute-and-flip" and report["delta"] == 0.0
    assert report["epsilon"] == report["epsilon_choice"] == s.epsilon_ == 1.0
    assert report["n_candidates"] == s.n_candidates_ == 6 and report["baseline"] is True
    assert report["sampler"] == "numpy"  # seeded: numpy's generator
    lines = capsys.readouterr().out.splitlines()
    # what the budget resolves, said before any score; then counts only
    assert re.match(
        r"\[Private\w+SearchCV\] the permute-and-flip choice among the untuned "
        r"estimator and 6 candidates at epsilon=1 resolves \d+ points",
        lines[0],
    )
    pattern = r"\[Private\w+SearchCV\] 7/7 candidates fitted and scored \(no score"
    assert len(lines) == 2 and re.match(pattern, lines[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shared = search(
            privacy_budget=(1.0, 1e-6), score_share=0.25, mechanism="permute-and-flip"
        ).fit(X, y)
    report = shared.privacy_report_
    assert report["epsilon_choice"] == 0.75 and report["epsilon_score"] == 0.25
    assert report["epsilon"] == 1.0 and math.isfinite(shared.best_score_)


def test_one_shot_takes_epsilon_once_whatever_the_number_of_candidates():
    reports = []
    for n_iter in (3, 12):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = search(
                epsilon=2.0, n_iter=n_iter, privacy_unit="record", cv=None, algorithm="random"
            ).fit(X, y)
        reports.append(s.privacy_report_)
    assert [r["epsilon"] for r in reports] == [2.0, 2.0]
    assert [r["n_candidates"] for r in reports] == [3, 12]
    # more candidates, a little less resolution (the shortfall grows with log k)
    assert reports[0]["resolves"] < reports[1]["resolves"]
    assert reports[0]["n_val"] == 114  # a fifth of the 569 records


def test_publish_best_draws_its_candidates_at_random_and_needs_privacy():
    with pytest.raises(ValueError, match="draws its candidates at random"):
        search(epsilon=1.0, algorithm="gp-ucb").fit(X, y)
    with pytest.raises(ValueError, match="private selection: pass epsilon"):
        search().fit(X, y)
    with pytest.raises(ValueError, match="publishes the pick's optimized score only"):
        search(
            epsilon=1.0,
            scoring=["accuracy", "roc_auc"],
            refit="accuracy",
            value_range={"roc_auc": (0.0, 1.0)},
        ).fit(X, y)


@pytest.mark.parametrize("mechanism", ["permute-and-flip", "exponential", RAS])
def test_with_a_large_epsilon_the_search_picks_a_good_candidate(mechanism):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = {"score_share": 0.5} if mechanism != RAS else {}
        s = search(epsilon=1e4, n_iter=8, mechanism=mechanism, **kwargs).fit(X, y)
    # noise of scale 1e-4 on accuracies: the pick is (nearly) the best of the candidates'
    # true scores, and every C in [1e-3, 1e2] but the smallest scores above 0.9 here
    assert s.best_score_ > 0.9


def test_the_baseline_is_kept_unless_a_candidate_beats_it_by_the_margin():
    from privtune.privacy.selection import Selector

    # Noise of scale 0.01 (epsilon 100 on a unit range): against one competitor the margin is
    # the 95 % quantile of the difference of two draws, 3.27 scales; against 20 on average,
    # Bonferroni's 1 - 0.05 / 20, 6.78 scales.
    assert Selector.laplace(100.0, (0.0, 1.0), competitors=20).margin == pytest.approx(
        0.0678, rel=1e-3
    )
    with pytest.raises(ValueError, match="competitors"):
        Selector.laplace(100.0, (0.0, 1.0), competitors=0.5)
    sel = Selector.laplace(100.0, (0.0, 1.0), noise_seed=0)
    assert sel.margin == pytest.approx(3.2718 * 0.01, rel=1e-4)
    sel.offer_baseline(0.80)
    for raw in (0.79, 0.80, 0.81):  # within a scale of it: the seeded draws stay below the margin
        sel.offer(raw)
    assert sel.best()[0] == -1
    sel.offer(0.95)  # far above: replaces it
    assert sel.best()[0] == 3
    with pytest.raises(ValueError, match="offered already"):
        sel.offer_baseline(0.5)


def test_repeat_and_select_offers_the_untuned_estimator_and_accounts_for_it():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = search(privacy_budget=(1.0, 1e-6), mechanism=RAS).fit(X, y)
        off = search(privacy_budget=(1.0, 1e-6), evaluate_default=False, mechanism=RAS).fit(X, y)
    report = s.privacy_report_
    assert report["baseline"] is True and report["epsilon"] <= 1.0
    # one more release to pay for: each candidate gets less
    assert off.privacy_report_["baseline"] is False
    assert s.epsilon_ < off.epsilon_


def test_private_selection_is_a_search_of_its_own_and_publish_best_makes_the_same_choice():
    from sklearn.base import clone

    from privtune import PrivateSelectionSearchCV

    own = PrivateSelectionSearchCV(
        LogisticRegression(max_iter=200),
        {"C": (1e-3, 1e2, "log-uniform")},
        privacy_budget=(1.0, 1e-6),
        n_iter=6,
        cv=3,
        random_state=0,
        noise_random_state=0,
    )
    assert clone(own).get_params()["n_iter_distribution"] == "geometric"
    assert clone(own).get_params()["mechanism"] == "permute-and-flip"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        own.fit(X, y)
        chosen = search(privacy_budget=(1.0, 1e-6)).fit(X, y)
    # one choice code (_ChoiceSearch), run by each search itself: nothing is delegated
    assert chosen.best_params_ == own.best_params_
    assert chosen.privacy_report_ == own.privacy_report_
    with pytest.raises(ValueError, match="private selection: pass epsilon"):
        PrivateSelectionSearchCV(LogisticRegression(), {"C": (0.1, 1.0)}).fit(X, y)


def test_a_selection_whose_first_round_fails_entirely_stops_there_with_a_withheld_error(
    always_failing,
):
    """Every fit of the first round failed: the selection stops after it (one batch of the
    untuned estimator's 3 folds) with scikit-learn's error, withheld under privacy, and
    publishes nothing."""
    from privtune import PrivateSelectionSearchCV

    s = PrivateSelectionSearchCV(
        always_failing(),
        {"C": (1e-3, 1e2, "log-uniform")},
        epsilon=1.0,
        n_iter=6,
        cv=3,
        random_state=0,
        noise_random_state=0,
        value_range=(0.0, 1.0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="withheld"):
            s.fit(X, y)
    assert always_failing.fits == 3 and not hasattr(s, "best_params_")


def test_the_margin_keeps_a_baseline_no_worse_than_every_candidate_one_time_in_twenty():
    from privtune.acquisition import baseline_level
    from privtune.privacy.selection import laplace_difference_quantile

    # The margin's promise, checked by simulation: K ~ Poisson(20) candidates whose true
    # scores all equal the baseline's replace it at most 5 % of the time. 20,000 seeded
    # draws: the standard error of the estimated rate is at most 0.0016, so 0.055 is three
    # standard errors above the promise.
    rng = np.random.default_rng(0)
    u = laplace_difference_quantile(baseline_level(20.0))
    k = rng.poisson(20.0, size=20_000)
    best = np.array([rng.laplace(size=n).max(initial=-np.inf) for n in k])
    replaced = np.mean(best - rng.laplace(size=k.size) > u)
    assert replaced <= 0.055
    # the single-comparison margin does not keep that promise
    assert np.mean(best - rng.laplace(size=k.size) > laplace_difference_quantile(0.95)) > 0.2


# -- one-shot choices among fixed candidates -------------------------------------------------------
def test_the_searchs_choice_is_the_one_shot_law_on_the_candidates_scores():
    # The search's pick is one_shot_choice on the untuned estimator's and the n_iter drawn
    # candidates' hold-out accuracies, with the same noise seed: the benchmarks compute the
    # mechanisms' laws on such scores, so this is what ties them to the searches.
    from sklearn.base import clone

    from privtune import PrivateSelectionSearchCV
    from privtune.privacy.oneshot import one_shot_choice
    from privtune.records import holdout_split, record_metric
    from privtune.space import as_space

    space = {"C": (1e-3, 1e2, "log-uniform")}
    for noise_seed in range(4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = PrivateSelectionSearchCV(
                LogisticRegression(max_iter=200),
                space,
                epsilon=0.05,  # noisy enough that the pick varies with the seed
                privacy_unit="record",
                n_iter=5,
                random_state=0,
                noise_random_state=noise_seed,
            ).fit(X, y)
        [(train, val)] = holdout_split(LogisticRegression(), None, 0.2, 0, X, y)
        dims = as_space(space)
        drawn = [dims.from_unit(u) for u in np.random.default_rng(0).random((5, dims.dim))]
        candidates = [{"C": 1.0}, *drawn]
        metric = record_metric("accuracy")
        scores = [
            metric(
                clone(LogisticRegression(max_iter=200)).set_params(**c).fit(X[train], y[train]),
                X[val],
                y[val],
            )
            for c in candidates
        ]
        choice = one_shot_choice(
            scores, epsilon=0.05, sensitivity=1 / len(val), noise_seed=noise_seed
        )
        assert s.best_params_ == candidates[choice.index]


def _record_best(**kwargs):
    from sklearn.tree import DecisionTreeClassifier

    return PrivateBOSearchCV(
        DecisionTreeClassifier(random_state=0),
        {"max_depth": (1, 20), "min_samples_leaf": (1, 50)},
        n_iter=8,
        privacy_budget=(1.0, 1e-6),
        privacy_unit="record",
        publish="best",
        random_state=0,
        noise_random_state=0,
        **kwargs,
    )


def test_the_untuned_head_start_enters_the_searchs_choice():
    # with a head start of h s ln k the search's pick is the law's with that shift
    from privtune import PrivateSelectionSearchCV
    from privtune.privacy.oneshot import OneShotPlan

    plan = OneShotPlan.from_args("permute-and-flip", 0.05, None, 0.0, 5, head_start=2.0)
    shift = plan.shifts(1 / 114)
    assert shift[0] == pytest.approx(2.0 * (2 / 114 / 0.05) * math.log(6))
    assert list(shift[1:]) == [0.0] * 5
    picks = []
    for h in (0.0, 50.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = PrivateSelectionSearchCV(
                LogisticRegression(max_iter=200),
                {"C": (1e-3, 1e2, "log-uniform")},
                epsilon=0.05,
                privacy_unit="record",
                n_iter=5,
                random_state=0,
                noise_random_state=1,
                untuned_head_start=h,
            ).fit(X, y)
        picks.append(s.best_params_)
        assert s.privacy_report_["untuned_head_start"] == h
    assert picks[1] == {"C": 1.0}  # a head start of 50 scale-logs: the untuned estimator


def test_the_choice_keeps_the_proposals_that_score_at_least_the_untuned_on_training_records():
    # The shortlist is read from the training records alone (free under the record unit):
    # the choice is among the untuned estimator and the proposals scoring at least as well
    # there, and the report says how many of them.
    from privtune.records import holdout_split
    from privtune.sklearn import propose_candidates

    search = _record_best()
    [(train, _)] = holdout_split(search.estimator, None, 0.2, 0, X, y)
    proposals = propose_candidates(search, "accuracy", X, y, None, train)
    proposed, scores = proposals.params, proposals.training
    kept = [
        c for c, score in zip(proposed, scores, strict=True) if score >= proposals.untuned_training
    ]
    assert 0 < len(kept) < len(proposed)  # this task has proposals on both sides
    short = record_choice.shortlist(proposals)
    assert list(short.candidates[1:]) == kept and short.baseline
    s = search.fit(X, y)
    assert s.n_candidates_ == len(kept)
    assert f"({len(kept)} of {len(proposed)})" in s.privacy_report_["candidates"]
    assert s.best_params_ in [*kept, {"max_depth": None, "min_samples_leaf": 1}]


def test_no_candidate_beside_the_untuned_estimator_is_a_choice_of_one():
    from privtune import PrivateSelectionSearchCV

    space = {"C": (1e-3, 1e2, "log-uniform")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = PrivateSelectionSearchCV(
            LogisticRegression(max_iter=200),
            space,
            epsilon=1.0,
            privacy_unit="record",
            candidates=[],
            random_state=0,
        ).fit(X, y)
    assert s.best_params_ == {"C": 1.0} and s.n_candidates_ == 0
    assert s.privacy_report_["resolves"] == 0.0
    with pytest.raises(ValueError, match="empty only with evaluate_default=True"):
        PrivateSelectionSearchCV(
            LogisticRegression(),
            space,
            epsilon=1.0,
            privacy_unit="record",
            candidates=[],
            evaluate_default=False,
        ).fit(X, y)


def test_candidates_proposed_on_the_training_records_ignore_the_validation_records():
    # The proposals are fixed before any validation record is read: relabelling every
    # validation record changes nothing in them.
    from privtune.records import holdout_split
    from privtune.sklearn import propose_candidates

    search = _record_best()
    [(train, val)] = holdout_split(search.estimator, None, 0.2, 0, X, y)
    relabelled = y.copy()
    relabelled[val] = 1 - relabelled[val]
    first = propose_candidates(search, "accuracy", X, y, None, train)
    second = propose_candidates(search, "accuracy", X, relabelled, None, train)
    assert first.params == second.params and len(first.params) >= 4
    # their training scores too, the untuned estimator's among them
    np.testing.assert_array_equal(first.training, second.training)
    assert first.untuned_training == second.untuned_training
    assert {"max_depth": None, "min_samples_leaf": 1} not in first.params  # candidate 0
    # one training score per proposal, and the untuned estimator's apart
    assert first.training.shape == (len(first.params),) and np.all(np.isfinite(first.training))
    assert np.isfinite(first.untuned_training)


def test_publish_best_under_the_record_unit_chooses_among_proposed_candidates(capsys):
    s = _record_best(verbose=1).fit(X, y)
    report = s.privacy_report_
    assert report["mechanism"] == "permute-and-flip" and report["epsilon"] == 1.0
    assert "proposed by Bayesian optimization on the 455 training records" in report["candidates"]
    assert "does not protect" in report["candidates"]
    out = capsys.readouterr().out
    assert "proposing 8 candidates by Bayesian optimization on the 455 training records" in out
    assert "distinct candidates proposed" in out and "2/2: the private choice" in out
    # random candidates instead: no proposals
    r = _record_best(algorithm="random").fit(X, y)
    assert "candidates" not in r.privacy_report_


def test_proposals_are_refused_where_the_training_records_are_protected_too():
    with pytest.raises(ValueError, match="algorithm='gp-ucb' cannot propose"):
        _record_best(estimator_epsilon=1.0, algorithm="gp-ucb").fit(X, y)
    # the default draws its candidates from the space instead
    s = _record_best(estimator_epsilon=1.0).fit(X, y)
    assert "candidates" not in s.privacy_report_ and s.n_candidates_ == 8


@pytest.mark.parametrize(
    "candidates, match",
    [
        (["C"], "a list of dicts of the estimator's parameters"),  # ([]: a choice of one)
        ([{"gamma": 1.0}], "space has the parameter 'gamma'"),
    ],
)
def test_fixed_candidates_are_checked(candidates, match):
    with pytest.raises(ValueError, match=match):
        search(epsilon=1.0, mechanism="permute-and-flip", candidates=candidates).fit(X, y)
    with pytest.raises(ValueError, match="one-shot mechanisms"):
        search(epsilon=1.0, mechanism=RAS, candidates=[{"C": 1.0}]).fit(X, y)


def test_a_selection_among_private_candidates_publishes_the_candidate_itself():
    # Each candidate is fitted at the plan's per-candidate epsilon (here a stand-in for a DP
    # model: a noisy estimate of 0.3) and the selection returns that candidate object, the
    # model a search would deploy, not a refit; its cost is the private base's.
    from privtune.privacy.selection import SelectionPlan

    plan = SelectionPlan.from_args(10, "logarithmic", None, (1.0, 1e-6), base="private")
    assert plan.epsilon <= 1.0 and plan.report(PrivacyUnit.record(500), 7)["candidate"] == (
        "private"
    )

    def sample(rng):
        return {"x": float(rng.random()), "model": None}

    def score(candidate):
        candidate["model"] = ("fitted at", plan.epsilon_per_candidate)
        return 1.0 - abs(candidate["x"] - 0.3)

    out = private_selection(
        score,
        sample,
        value_range=(0.0, 1.0),
        mean=10,
        distribution="logarithmic",
        privacy_budget=(1.0, 1e-6),
        seed=3,
        noise_seed=3,
        base="private",
    )
    assert out.best["model"] == ("fitted at", plan.epsilon_per_candidate)
    assert out.epsilon == pytest.approx(plan.epsilon) and out.base == "private"
    assert out.event.event.__class__.__name__ == "RandomizedResponseDpEvent"
