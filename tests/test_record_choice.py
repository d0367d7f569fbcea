"""The record unit's choice below both adapters: proposals, the shortlist, one private choice."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privtune.plan import PrivacyPlan
from privtune.privacy.oneshot import one_shot_choice
from privtune.record_choice import choose, proposals, shortlist

ROWS = [
    (0, {"C": 1.0}, 0.80),  # the untuned configuration
    (1, {"C": 0.1}, 0.75),
    (2, {"C": 10.0}, 0.85),
    (3, {"C": 10.0}, 0.85),  # a repeat
    (4, {"C": 3.0}, 0.80),  # level with the untuned: kept
    (5, {"C": 0.01}, math.nan),  # failed
]


def test_proposals_set_the_untuned_apart_and_drop_repeats():
    by_key = proposals(ROWS, untuned_key=0)
    assert by_key.params == ({"C": 0.1}, {"C": 10.0}, {"C": 3.0}, {"C": 0.01})
    assert by_key.keys == (1, 2, 4, 5)
    assert by_key.untuned == {"C": 1.0} and by_key.untuned_training == 0.80
    # the same found by its values (a search's estimator's own, deep parameters included)
    by_values = proposals(ROWS, untuned={"C": 1.0, "max_iter": 100})
    assert by_values.params == by_key.params and by_values.untuned_training == 0.80
    np.testing.assert_array_equal(by_values.training, by_key.training)


def test_the_shortlist_keeps_what_scores_at_least_the_untuned_on_the_training_records():
    short = shortlist(proposals(ROWS, untuned_key=0))
    assert short.candidates == ({"C": 1.0}, {"C": 10.0}, {"C": 3.0})
    assert short.keys == (0, 2, 4) and short.baseline
    assert short.n_candidates == 2 and short.n_proposed == 4
    assert "(2 of 4)" in short.describe(400) and "does not protect" in short.describe(400)


def test_without_an_untuned_score_every_proposal_is_kept():
    failed = [(0, {"C": 1.0}, math.nan), *ROWS[1:]]
    short = shortlist(proposals(failed, untuned_key=0))
    assert short.n_candidates == 4 and short.candidates[0] == {"C": 1.0}
    # no untuned configuration at all: no candidate 0
    alone = shortlist(proposals(ROWS))
    assert not alone.baseline and len(alone.candidates) == 5 and "all 5 kept" in alone.describe(9)
    # the untuned configuration never evaluated (a search's outside the space): candidate 0
    unseen = shortlist(proposals(ROWS[1:], untuned={"C": 1.0}))
    assert unseen.baseline and unseen.candidates[0] == {"C": 1.0} and unseen.n_candidates == 4


@pytest.mark.parametrize("seed", range(4))
def test_the_choice_is_the_one_shot_law_on_the_validation_scores(seed):
    # One record's share of the score is 1 / n_val; the choice spends the whole epsilon once,
    # and a failed candidate counts as the worst end of the range.
    plan = PrivacyPlan.check(
        privacy_budget=(1.0, 1e-6),
        value_range=(0.0, 1.0),
        privacy_unit="record",
        kind="choice",
        noise_seed=seed,
    ).bound(200)
    one_shot = plan.one_shot_plan(3, baseline=True)
    validation = [0.80, 0.82, math.nan, 0.79]
    got = choose(plan, one_shot, validation, (0.0, 1.0))
    expected = one_shot_choice(
        [0.80, 0.82, 0.0, 0.79],
        epsilon=1.0,
        sensitivity=1 / 200,
        mechanism="permute-and-flip",
        noise_seed=seed,
        head_start=np.zeros(4),
    )
    assert got.index == expected.index and math.isnan(got.published)
    assert plan.model_epsilon is None and not plan.releases_scores and plan.chooses


def test_the_choice_needs_one_score_per_candidate():
    plan = PrivacyPlan.check(
        epsilon=1.0, value_range=(0.0, 1.0), privacy_unit="record", kind="choice"
    ).bound(50)
    with pytest.raises(ValueError, match="among 3 candidates; got 2"):
        choose(plan, plan.one_shot_plan(2, baseline=True), [0.5, 0.6], (0.0, 1.0))


# -- both doors: the same choice on the same candidates and scores -------------------------------
def _data():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    return X[:400], y[:400], X[400:], y[400:]


def _tree(trial):
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(
        max_depth=trial.suggest_int("max_depth", 1, 12),
        min_samples_leaf=trial.suggest_int("min_samples_leaf", 1, 40),
        random_state=0,
    )


CANDIDATES = [
    {"max_depth": 1, "min_samples_leaf": 1},
    {"max_depth": 3, "min_samples_leaf": 5},
    {"max_depth": 6, "min_samples_leaf": 20},
    {"max_depth": 12, "min_samples_leaf": 1},
    {"max_depth": 2, "min_samples_leaf": 40},
]


@pytest.mark.parametrize("seed", range(4))
def test_the_search_and_the_sampler_make_the_same_choice(seed):
    # The same candidates, fitted on the same training records and scored on the same
    # validation records, and the same noise seed: the scikit-learn search and the Optuna
    # sampler call the same choice, so they pick the same candidate (a stronger statement
    # than the same law). Small budget, so that the noise decides between close candidates.
    import optuna
    from sklearn.tree import DecisionTreeClassifier

    from privtune import PrivateGPUCBSampler, PrivateSelectionSearchCV, RecordObjective

    X_train, y_train, X_val, y_val = _data()
    X, y = np.vstack([X_train, X_val]), np.concatenate([y_train, y_val])
    split = [(np.arange(400), np.arange(400, len(y)))]
    search = PrivateSelectionSearchCV(
        DecisionTreeClassifier(random_state=0),
        {"max_depth": (1, 12), "min_samples_leaf": (1, 40)},
        candidates=CANDIDATES,
        evaluate_default=False,
        epsilon=0.2,
        privacy_unit="record",
        cv=split,
        noise_random_state=seed,
        refit=False,
    ).fit(X, y)
    objective = RecordObjective(_tree, X_train, y_train, X_val, y_val)
    sampler = PrivateGPUCBSampler(
        "random", epsilon=0.2, value_range=(0.0, 1.0), privacy_unit="record", noise_seed=seed
    )
    study = sampler.create_study(direction="maximize")
    for params in CANDIDATES:
        study.enqueue_trial(params)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler.optimize(study, objective, n_trials=len(CANDIDATES))
    assert sampler.recommend(study) == search.best_params_


@pytest.mark.parametrize("seed", range(4))
def test_an_untuned_estimator_outside_the_space_is_the_samplers_baseline_as_the_searchs(seed):
    # The untuned tree (max_depth=None) cannot be enqueued: RecordObjective(untuned=...) makes
    # it candidate 0, scored on the training records like a trial. Every candidate here scores
    # above it there (asserted), so the shortlist keeps them all and the choice is the
    # search's among the untuned estimator and the same candidates: the same pick, seed by seed.
    import optuna
    from sklearn.tree import DecisionTreeClassifier

    from privtune import PrivateGPUCBSampler, PrivateSelectionSearchCV, RecordObjective

    X_train, y_train, X_val, y_val = _data()
    X, y = np.vstack([X_train, X_val]), np.concatenate([y_train, y_val])
    untuned = DecisionTreeClassifier(random_state=0)
    candidates = [  # each scores at least the untuned tree's 0.9175 on the training records
        {"max_depth": 4, "min_samples_leaf": 3},
        {"max_depth": 5, "min_samples_leaf": 1},
        {"max_depth": 4, "min_samples_leaf": 10},
    ]
    search = PrivateSelectionSearchCV(
        untuned,
        {"max_depth": (1, 12), "min_samples_leaf": (1, 40)},
        candidates=candidates,
        epsilon=0.05,
        privacy_unit="record",
        cv=[(np.arange(400), np.arange(400, len(y)))],
        noise_random_state=seed,
        refit=False,
    ).fit(X, y)
    objective = RecordObjective(_tree, X_train, y_train, X_val, y_val, untuned=untuned)
    sampler = PrivateGPUCBSampler(
        "random", epsilon=0.05, value_range=(0.0, 1.0), privacy_unit="record", noise_seed=seed
    )
    study = sampler.create_study(direction="maximize")
    for params in candidates:
        study.enqueue_trial(params)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler.optimize(study, objective, n_trials=len(candidates))
    assert min(study.trials, key=lambda t: t.value).value >= objective.training_score(untuned)
    params = sampler.recommend(study)
    report = sampler.privacy_report(study)
    assert "(3 of 3)" in report["candidates"] and report["n_candidates"] == 3
    assert params == search.best_params_
    if params == {"max_depth": None, "min_samples_leaf": 1}:  # the untuned estimator's own
        assert report["picked"] == "the untuned configuration"
        with pytest.raises(ValueError, match="no trial of the study"):
            sampler.recommend_trial(study)
    else:
        assert report["picked"] == "a tuned configuration"
        assert sampler.recommend_trial(study).params == params


def test_the_untuned_estimators_training_score_is_the_searchs():
    # The objective scores its untuned estimator as the search scores its own: the same
    # folds of the same training records, so the two doors shortlist against the same value.
    from sklearn.tree import DecisionTreeClassifier

    from privtune import PrivateBOSearchCV, RecordObjective
    from privtune.sklearn import propose_candidates

    X_train, y_train, X_val, y_val = _data()
    untuned = DecisionTreeClassifier(random_state=0)
    search = PrivateBOSearchCV(
        untuned, {"max_depth": (1, 12)}, n_iter=2, privacy_unit="record", epsilon=1.0
    )
    offered = propose_candidates(search, "accuracy", X_train, y_train, None, np.arange(400))
    objective = RecordObjective(_tree, X_train, y_train, X_val, y_val, untuned=untuned)
    assert offered.untuned_training == objective.training_score(untuned)


def test_an_untuned_estimator_is_checked_and_is_the_only_baseline():
    import optuna

    from privtune import PrivateGPUCBSampler, RecordObjective

    X_train, y_train, X_val, y_val = _data()
    with pytest.raises(TypeError, match="untuned must be an unfitted scikit-learn estimator"):
        RecordObjective(_tree, X_train, y_train, X_val, y_val, untuned={"max_depth": None})
    from sklearn.tree import DecisionTreeClassifier

    objective = RecordObjective(
        _tree, X_train, y_train, X_val, y_val, untuned=DecisionTreeClassifier(random_state=0)
    )
    sampler = PrivateGPUCBSampler(
        "random", epsilon=1.0, value_range=(0.0, 1.0), privacy_unit="record"
    )
    study = sampler.create_study(direction="maximize")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler.optimize(study, objective, n_trials=3)
    with pytest.raises(ValueError, match="two baselines"):
        sampler.recommend(study, baseline=0)
    sampler.recommend(study)  # nothing was claimed by the refusal: the choice is still free


def test_no_validation_score_reaches_the_storage_the_log_or_the_report(caplog):
    import logging

    import optuna

    from privtune import PrivateGPUCBSampler, RecordObjective

    X_train, y_train, X_val, y_val = _data()
    objective = RecordObjective(_tree, X_train, y_train, X_val, y_val)
    sampler = PrivateGPUCBSampler(
        privacy_budget=(1.0, 1e-6), n_trials=8, value_range=(0.0, 1.0), privacy_unit="record"
    )
    optuna.logging.set_verbosity(optuna.logging.INFO)
    try:
        with caplog.at_level(logging.DEBUG):
            study = sampler.create_study(direction="maximize")
            study.enqueue_trial({"max_depth": 12, "min_samples_leaf": 1})
            sampler.optimize(study, objective)
            sampler.recommend(study, baseline=0)
    finally:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
    estimators = [_tree(optuna.trial.FixedTrial(t.params)) for t in study.trials]
    secrets = {f"{v:.6f}"[:7] for v in objective.validation_scores(estimators)}
    stored = repr(
        (
            [(t.value, t.user_attrs, t.system_attrs) for t in study.trials],
            study._storage.get_study_system_attrs(study._study_id),
            study.user_attrs,
            sampler.privacy_report(study),
        )
    )
    training = {f"{t.value:.6f}"[:7] for t in study.trials}
    for secret in secrets - training:  # a validation score equal to a training one says nothing
        assert secret not in stored and secret not in caplog.text


def test_one_choice_per_study_across_workers_on_one_storage(tmp_path):
    # Two workers (two samplers, each with the data) on one journal file: both propose, one
    # makes the choice, the other finds it made. A claim that never finished (a stopped
    # process) refuses a second choice: it counts as spent.
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    from privtune import PrivateGPUCBSampler, RecordObjective
    from privtune.optuna_privacy import ATTR_CHOICE
    from privtune.privacy import PrivacyError

    X_train, y_train, X_val, y_val = _data()
    storage = JournalStorage(JournalFileBackend(str(tmp_path / "journal.log")))
    samplers, study = [], None
    for worker in range(2):
        sampler = PrivateGPUCBSampler(
            privacy_budget=(1.0, 1e-6), value_range=(0.0, 1.0), privacy_unit="record", seed=worker
        )
        study = optuna.create_study(
            study_name="shared",
            storage=storage,
            direction="maximize",
            sampler=sampler,
            load_if_exists=True,
        )
        sampler.optimize(study, RecordObjective(_tree, X_train, y_train, X_val, y_val), n_trials=3)
        samplers.append((sampler, study))
    picks = [s.recommend(st) for s, st in samplers]
    reports = [s.privacy_report(st) for s, st in samplers]
    assert len(study.trials) == 6 and picks[0] == picks[1]
    assert reports[0] == reports[1] and reports[0]["epsilon"] == 1.0
    assert "6 completed trials" in reports[0]["candidates"]

    stopped = optuna.create_study(storage=storage, direction="maximize", sampler=sampler)
    sampler.optimize(stopped, RecordObjective(_tree, X_train, y_train, X_val, y_val), n_trials=2)
    stopped._storage.set_study_system_attr(
        stopped._study_id, ATTR_CHOICE + "x", {"state": "claimed"}
    )
    with pytest.raises(PrivacyError, match="claimed by another process and not finished"):
        sampler.recommend(stopped)
    assert sampler.privacy_report(stopped)["epsilon"] == 1.0  # counted as spent
