"""The record-level privacy unit: sensitivity by construction, an empirical audit of the
mechanism, its accounting against dp-accounting, and both adapters under it."""

from __future__ import annotations

import logging
import math
import warnings

import numpy as np
import optuna
import pytest
from scipy import stats
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_breast_cancer, make_classification, make_regression
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold
from sklearn.tree import DecisionTreeClassifier

from privtune import PrivateBOSearchCV, PrivateGPUCBSampler
from privtune.privacy import LaplaceCurator, PrivacyError, PrivacyLedger, plan_budget
from privtune.privacy.units import PrivacyUnit
from privtune.records import RECORD_METRICS, RecordObjective, record_metric

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _classification(n=400, seed=0):
    X, y = make_classification(n, 6, n_informative=3, n_classes=3, random_state=seed)
    return X[: n // 2], y[: n // 2], X[n // 2 :], y[n // 2 :]


def _regression(n=400, seed=0):
    X, y = make_regression(n, 5, noise=20.0, random_state=seed)
    y = y / 50.0
    return X[: n // 2], y[: n // 2], X[n // 2 :], y[n // 2 :]


CASES = [
    ("accuracy", None, DecisionTreeClassifier(max_depth=3, random_state=0), _classification),
    (
        "neg_log_loss",
        (-3.0, 0.0),
        DecisionTreeClassifier(max_depth=4, random_state=0),
        _classification,
    ),
    ("neg_mean_absolute_error", (-1.5, 0.0), Ridge(), _regression),
    ("neg_mean_squared_error", (-2.0, 0.0), Ridge(), _regression),
]


def test_every_supported_metric_is_tested():
    assert {c[0] for c in CASES} == set(RECORD_METRICS)


@pytest.mark.parametrize("name, value_range, estimator, data", CASES, ids=[c[0] for c in CASES])
def test_replacing_one_validation_record_moves_the_score_by_at_most_the_stated_bound(
    name, value_range, estimator, data
):
    # 500 random neighbours of one validation set, each with one record replaced by a record
    # drawn from another pool (features and label together, or a shuffled label): the
    # model is fixed (it never saw the validation records), so the bound must hold exactly.
    X_train, y_train, X_val, y_val = data()
    model = estimator.fit(X_train, y_train)
    metric = record_metric(name, None, value_range)
    n_val = len(y_val)
    bound = metric.sensitivity(n_val)
    lo, hi = metric.value_range
    assert bound == pytest.approx((hi - lo) / n_val)
    base = metric(model, X_val, y_val)
    _, _, X_pool, y_pool = data(seed=1)
    rng = np.random.default_rng(0)
    moves = []
    for _ in range(500):
        i, j = rng.integers(n_val), rng.integers(len(y_pool))
        X2, y2 = X_val.copy(), y_val.copy()
        X2[i] = X_pool[j] * rng.choice([1.0, 5.0, -3.0])  # far records too
        y2[i] = y_pool[rng.integers(len(y_pool))]
        moves.append(abs(metric(model, X2, y2) - base))
    assert max(moves) <= bound * (1 + 1e-9)
    assert max(moves) > 0.2 * bound  # the neighbours do move the score


@pytest.mark.parametrize(
    "scoring", ["roc_auc", "balanced_accuracy", "f1_macro", "r2", "precision", lambda e, X, y: 0]
)
def test_metrics_without_a_record_share_are_refused_with_the_reason(scoring):
    with pytest.raises(ValueError, match="not available under privacy_unit='record'"):
        record_metric(scoring)


def test_a_loss_needs_its_clip_and_accuracy_keeps_its_range():
    with pytest.raises(ValueError, match=r"value_range=\(-L, 0\) is required"):
        record_metric("neg_log_loss")
    with pytest.raises(ValueError, match="must be"):
        record_metric("neg_mean_squared_error", value_range=(-1.0, 1.0))
    with pytest.raises(ValueError, match=r"\(0.0, 1.0\)"):
        record_metric("accuracy", value_range=(0.0, 2.0))
    with pytest.raises(ValueError, match="not available"):
        record_metric(None, Ridge())  # a regressor's default score is R^2
    assert record_metric(None, LogisticRegression()).name == "accuracy"


def test_sample_weights_are_refused_under_the_record_unit():
    X_train, y_train, X_val, y_val = _classification()
    model = LogisticRegression(max_iter=500).fit(X_train, y_train)
    with pytest.raises(ValueError, match="sample_weight"):
        record_metric("accuracy")(model, X_val, y_val, sample_weight=np.ones(len(y_val)))


def test_an_empirical_audit_keeps_the_privacy_loss_within_epsilon():
    # Two neighbouring validation sets of n = 50 records that differ in one record, chosen so
    # that the raw accuracy moves by the full 1 / n (a right prediction replaced by a wrong
    # one). 400,000 releases on each, binned; for every bin with mass on both sides, the
    # Clopper-Pearson interval (99.99 %, Bonferroni over the bins) gives a lower bound on the
    # likelihood ratio, which a correct mechanism keeps below e^epsilon. The point estimate of
    # the largest log-ratio must also come near epsilon, so the audit can see a leak.
    X_train, y_train, X_val, y_val = _classification(n=100)
    model = LogisticRegression(max_iter=500).fit(X_train, y_train)
    metric = record_metric("accuracy")
    right = np.flatnonzero(model.predict(X_val) == y_val)
    assert right.size
    i = right[0]
    y_neighbour = y_val.copy()
    y_neighbour[i] = (y_val[i] + 1) % 3
    n = len(y_val)
    a, b = metric(model, X_val, y_val), metric(model, X_val, y_neighbour)
    assert a - b == pytest.approx(1.0 / n)
    epsilon = 1.0
    curator = LaplaceCurator(epsilon, (0.0, 1.0), unit=PrivacyUnit.record(n))
    N = 400_000
    out_a = curator.privatize(np.full(N, a), rng=np.random.default_rng(1))
    out_b = curator.privatize(np.full(N, b), rng=np.random.default_rng(2))
    edges = np.linspace(b - 4 * curator.scale, a + 4 * curator.scale, 41)
    ca, _ = np.histogram(out_a, edges)
    cb, _ = np.histogram(out_b, edges)
    keep = (ca > 200) & (cb > 200)
    alpha = 1e-4 / keep.sum()
    worst_lower, worst_point = 0.0, 0.0
    for x, y in [(ca, cb), (cb, ca)]:
        for k in np.flatnonzero(keep):
            p_low = stats.beta.ppf(alpha / 2, x[k], N - x[k] + 1)
            q_high = stats.beta.ppf(1 - alpha / 2, y[k] + 1, N - y[k])
            worst_lower = max(worst_lower, math.log(p_low / q_high))
            worst_point = max(worst_point, math.log(x[k] / y[k]))
    assert worst_lower <= epsilon
    assert worst_point >= 0.8 * epsilon


def test_the_record_units_composition_is_bounded_by_the_replace_one_rdp_accountant():
    import dp_accounting as dpa

    ledger = PrivacyLedger()
    curator = LaplaceCurator(0.1, (0.0, 1.0), ledger=ledger, unit=PrivacyUnit.record(5000))
    for _ in range(40):
        curator.release(0.9)
    pld = ledger.composed_epsilon("pld", 1e-6)
    acc = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(1 / 0.1), 40))
    rdp = acc.get_epsilon(1e-6)
    assert pld <= rdp <= 4.0  # PLD is the tighter bound of the two, both far below 40 * 0.1
    assert pld > 0.9 * rdp


def test_the_record_unit_noise_is_n_val_times_smaller():
    score = LaplaceCurator(1.0, (0.0, 1.0))
    record = LaplaceCurator(1.0, (0.0, 1.0), unit=PrivacyUnit.record(5000))
    assert record.scale == pytest.approx(score.scale / 5000)
    plan = plan_budget(1.0, 1e-6, (0.0, 1.0), 40, n_val=5000)
    assert plan.noise_std[0] < 0.01  # below one accuracy point at a total epsilon of 1
    assert "5000 validation records" in str(plan)


# -- the scikit-learn search ---------------------------------------------------------------------
def _search(**kwargs):
    params = dict(
        publish="scores",
        privacy_unit="record",
        privacy_budget=(1.0, 1e-6),
        n_iter=6,
        n_initial_points=3,
        random_state=0,
        noise_random_state=0,
    )
    params.update(kwargs)
    return PrivateBOSearchCV(
        LogisticRegression(max_iter=300), {"C": (1e-3, 1e2, "log-uniform")}, **params
    )


def test_the_search_releases_hold_out_accuracy_with_record_noise():
    X, y = load_breast_cancer(return_X_y=True)
    search = _search().fit(X, y)
    report = search.privacy_report_
    n_val = math.ceil(0.2 * len(y))
    assert report["privacy_unit"] == "record" and report["n_val"] == n_val
    assert f"each of the {n_val} validation records" in report["protects"]
    assert report["composed_epsilon_pld"] <= 1.0
    # The same candidates scored exactly on the same split: each released value differs from
    # its raw score by one Laplace draw of scale 1 / (n_val * epsilon_); the tolerance is the
    # draw's 1 - 1e-4 quantile (the noise is seeded, so the test is deterministic; with another
    # seed it would fail with probability below 6e-4).
    released = search.cv_results_["mean_test_score"]
    scale = 1.0 / (n_val * search.epsilon_)
    split = next(iter(_holdout(X, y)))
    for params, value in zip(search.cv_results_["params"], released, strict=True):
        model = LogisticRegression(max_iter=300, **params).fit(X[split[0]], y[split[0]])
        raw = record_metric("accuracy")(model, X[split[1]], y[split[1]])
        assert abs(value - raw) <= scale * math.log(1e4)


def _holdout(X, y):
    from sklearn.model_selection import StratifiedShuffleSplit

    return StratifiedShuffleSplit(1, test_size=0.2, random_state=0).split(X, y)


def test_the_search_refuses_k_folds_under_the_record_unit():
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.raises(ValueError, match="needs one hold-out split; cv gives 5"):
        _search(cv=KFold(5)).fit(X, y)
    with pytest.raises(ValueError, match="not available under privacy_unit='record'"):
        _search(scoring="roc_auc").fit(X, y)


def test_private_selection_takes_the_record_unit():
    X, y = load_breast_cancer(return_X_y=True)
    search = _search(publish="best", n_iter=4, algorithm="random").fit(X, y)
    assert search.privacy_report_["epsilon"] <= 1.0
    assert len(search.cv_results_["params"]) == 1


# -- the Optuna sampler --------------------------------------------------------------------------
def _record_objective():
    X_train, y_train, X_val, y_val = _classification(n=600)

    def make(trial):
        return LogisticRegression(C=trial.suggest_float("C", 1e-3, 1e2, log=True), max_iter=300)

    return RecordObjective(make, X_train, y_train, X_val, y_val)


def test_the_sampler_stores_training_scores_and_makes_one_choice_on_the_validation_records():
    objective = _record_objective()
    sampler = PrivateGPUCBSampler(
        "random", epsilon=0.5, value_range=(0.0, 1.0), privacy_unit="record", seed=0
    )
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.enqueue_trial({"C": 1.0})  # the untuned configuration, trial 0
    study.optimize(sampler.privatize(objective), n_trials=5)
    # each stored value is the trial's cross-validated score on the training records: no
    # release, no validation record read
    for t in study.trials:
        assert t.value == objective(optuna.trial.FixedTrial(t.params))
        assert "privtune:digest" not in t.user_attrs and "privtune:training_score" in t.user_attrs
    before = sampler.privacy_report(study)
    assert before["epsilon"] == 0.0 and before["n_val"] == 300
    pick = sampler.recommend(study, baseline=0)
    report = sampler.privacy_report(study)
    assert report["epsilon"] == 0.5 and report["delta"] == 0.0 and report["n_val"] == 300
    assert report["mechanism"] == "permute-and-flip"
    assert "each of the 300 validation records" in report["protects"]
    assert "5 completed trials" in report["candidates"]
    # made once: a second call returns the same pick and spends nothing
    assert sampler.recommend(study, baseline=0) == pick
    assert sampler.privacy_report(study)["epsilon"] == 0.5
    assert sampler.recommend_trial(study).params == pick
    # another process that only reads the study finds the choice made
    reader = PrivateGPUCBSampler(
        "random", epsilon=0.5, value_range=(0.0, 1.0), privacy_unit="record", seed=0
    )
    assert reader.recommend(study) == pick and reader.privacy_report(study)["epsilon"] == 0.5
    # a worker under the score unit refuses the study before computing anything
    other = PrivateGPUCBSampler("random", epsilon=0.5, value_range=(0.0, 1.0))
    shared = optuna.load_study(study_name=study.study_name, storage=study._storage, sampler=other)
    with pytest.raises(PrivacyError):
        shared.optimize(
            other.privatize(lambda t: t.suggest_float("C", 1e-3, 1e2, log=True)), n_trials=1
        )


def test_the_choice_is_made_where_the_validation_records_are():
    objective = _record_objective()
    sampler = PrivateGPUCBSampler(epsilon=0.5, value_range=(0.0, 1.0), privacy_unit="record")
    study = sampler.optimize(sampler.create_study(direction="maximize"), objective, n_trials=3)
    reader = PrivateGPUCBSampler(epsilon=0.5, value_range=(0.0, 1.0), privacy_unit="record")
    with pytest.raises(PrivacyError, match=r"in the process that ran sampler\.optimize"):
        reader.recommend(study)
    assert reader.privacy_report(study)["epsilon"] == 0.0  # nothing was claimed


def test_the_record_sampler_takes_only_privtunes_objective():
    sampler = PrivateGPUCBSampler(epsilon=0.5, value_range=(0.0, 1.0), privacy_unit="record")
    with pytest.raises(TypeError, match="RecordObjective"):
        sampler.privatize(lambda trial: 0.5)
    wrong = PrivateGPUCBSampler(epsilon=0.5, value_range=(0.0, 2.0), privacy_unit="record")
    with pytest.raises(ValueError, match="per-record range"):
        wrong.privatize(_record_objective())
    with pytest.raises(ValueError, match="needs epsilon"):
        PrivateGPUCBSampler(privacy_unit="record")


# -- the sampler's remaining leaks ---------------------------------------------------------------
def test_an_objectives_error_after_scoring_leaves_no_score_in_the_exception_or_the_log(caplog):
    sampler = PrivateGPUCBSampler("random", epsilon=1.0, value_range=(0.0, 1.0), seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler)

    def objective(trial):
        score = 0.7312345 + trial.suggest_float("x", 0.0, 1.0) * 0
        raise ValueError(f"scoring must return a number, got [{score} {score}]")

    optuna.logging.set_verbosity(optuna.logging.INFO)
    try:
        with caplog.at_level(logging.DEBUG), pytest.raises(ValueError) as info:
            study.optimize(sampler.privatize(objective), n_trials=1)
    finally:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
    assert "0.7312345" not in str(info.value) and "withheld" in str(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None
    assert "0.7312345" not in caplog.text


def test_a_worker_without_privacy_refuses_a_private_study_before_computing():
    sampler = PrivateGPUCBSampler("random", epsilon=1.0, value_range=(0.0, 1.0), seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(sampler.privatize(lambda t: t.suggest_float("x", 0.0, 1.0)), n_trials=2)
    calls = []
    for plain in (PrivateGPUCBSampler(seed=1), __import__("privtune").GOUCBSampler()):
        shared = optuna.load_study(
            study_name=study.study_name, storage=study._storage, sampler=plain
        )
        with pytest.raises(PrivacyError, match="holds privatized trials"):
            shared.optimize(
                lambda t: calls.append(t.suggest_float("x", 0.0, 1.0)) or 0.5, n_trials=1
            )
    assert calls == []
    completed = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(completed) == 2 and all("privtune:digest" in t.user_attrs for t in completed)


def test_the_sampler_runs_its_own_study_with_the_objective_privatized():
    objective = _record_objective()
    sampler = PrivateGPUCBSampler(
        "random",
        privacy_budget=(1.0, 1e-6),
        n_trials=4,
        value_range=(0.0, 1.0),
        privacy_unit="record",
        seed=0,
    )
    study = sampler.optimize(sampler.create_study(direction="maximize"), objective)
    assert len(study.trials) == 4  # n_trials: the study's length, optimize's default
    assert all("privtune:training_score" in t.user_attrs for t in study.trials)
    sampler.recommend(study)
    report = sampler.privacy_report(study)
    assert report["epsilon"] == 1.0 and report["budget_epsilon"] == 1.0
    # a value told by other means is refused: it could be a validation score
    C = optuna.distributions.FloatDistribution(1e-3, 1e2, log=True)
    study.add_trial(
        optuna.trial.create_trial(params={"C": 1.0}, distributions={"C": C}, value=0.93)
    )
    with pytest.raises(PrivacyError, match="did not come through this sampler's RecordObjective"):
        sampler.privacy_report(study)
    with pytest.raises(ValueError, match="whose sampler is this one"):
        sampler.optimize(optuna.create_study(), objective)
    with pytest.raises(TypeError, match="no sampler"):
        sampler.create_study(sampler=sampler)


def test_reports_about_different_data_owners_are_accounted_per_owner():
    # Zhou & Tan's setting: each score comes from another user. Three trials about "alice",
    # one about "bob": the guarantee is per owner, the headline the largest.
    sampler = PrivateGPUCBSampler("random", epsilon=0.5, value_range=(0.0, 1.0), seed=0)
    study = sampler.create_study(direction="maximize")

    def objective(trial):
        trial.set_user_attr("privtune:owner", "bob" if trial.number == 3 else "alice")
        return trial.suggest_float("x", 0.0, 1.0)

    sampler.optimize(study, objective, n_trials=4)
    report = sampler.privacy_report(study)
    assert report["per_owner"]["alice"]["n_reports"] == 3
    assert report["per_owner"]["bob"]["composed_epsilon_basic"] == pytest.approx(0.5)
    assert report["owner"] == "alice" and report["composed_epsilon_basic"] == pytest.approx(1.5)
    assert "per data owner" in report["protects"]
    single = PrivateGPUCBSampler("random", epsilon=0.5, value_range=(0.0, 1.0), seed=0)
    study = single.optimize(single.create_study(), lambda t: t.suggest_float("x", 0, 1), 2)
    assert "per_owner" not in single.privacy_report(study)


@pytest.mark.parametrize("default_wins", [True, False])
def test_an_enqueued_baseline_outside_the_space_is_an_arm_the_model_is_not_told(default_wins):
    # l2 = 100 against a range that ends at 10: the sampler leaves the trial out of its model and
    # recommend(baseline=0) compares it as an arm outside the cube (exact scores: the better
    # one wins).
    sampler = PrivateGPUCBSampler("gp-ucb", n_startup_trials=3, seed=0)
    study = sampler.create_study(direction="maximize")
    study.enqueue_trial({"l2": 100.0, "x": 0.5})

    def objective(trial):
        l2 = trial.suggest_float("l2", 1e-6, 10.0, log=True)
        x = trial.suggest_float("x", 0.0, 1.0)
        value = 0.5 - 0.1 * (x - 0.3) ** 2 - 0.01 * math.log10(l2 + 1e-9) ** 2 / 100
        return 0.9 if (l2 > 10 and default_wins) else (0.0 if l2 > 10 else value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna's warning about the fixed value out of range
        study.optimize(objective, n_trials=10)
    assert study.trials[0].params["l2"] == 100.0 and len(study.trials) == 10
    picked = sampler.recommend_trial(study, baseline=0)
    assert (picked.number == 0) == default_wins
    told = sampler.engine.replay((study._study_id, study.study_name))._keys
    assert 0 not in told and len(told) == 9  # the arm outside the space is not in the model


class _NoisyMeans(ClassifierMixin, BaseEstimator):
    """A differentially private classifier for the tests: class means of features clipped to
    [-1, 1], released with Laplace noise (each mean's L1 sensitivity 2 d / n_c per record, the
    class counts taken as public), then nearest-mean prediction: ``epsilon`` per fit."""

    def __init__(self, epsilon=1.0, shrink=0.0, random_state=0):
        self.epsilon, self.shrink, self.random_state = epsilon, shrink, random_state

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        X = np.clip(X, -1, 1)
        self.classes_ = np.unique(y)
        d = X.shape[1]
        means = [
            X[y == c].mean(0) + rng.laplace(0, 2 * d / (self.epsilon * max((y == c).sum(), 1)), d)
            for c in self.classes_
        ]
        self.means_ = np.array(means) * (1 - self.shrink)
        return self

    def predict(self, X):
        X = np.clip(X, -1, 1)
        return self.classes_[np.argmin(((X[:, None] - self.means_[None]) ** 2).sum(-1), 1)]


def test_a_differentially_private_estimator_extends_the_guarantee_to_every_record():
    # The estimator's own guarantee per fit is declared; the report composes the training
    # records' fits (20 candidates and the refit) and the validation records' releases, and
    # the end-to-end epsilon is the larger of the two.
    X, y = make_classification(2000, 5, n_informative=3, n_redundant=0, random_state=0)
    X = X / 4
    search = PrivateBOSearchCV(
        _NoisyMeans(epsilon=0.05),  # its own epsilon is the one declared
        {"shrink": (0.0, 0.9)},
        publish="scores",
        privacy_unit="record",
        privacy_budget=(1.0, 1e-6),
        estimator_epsilon=0.05,
        n_iter=20,
        random_state=0,
        noise_random_state=0,
    ).fit(X, y)
    report = search.privacy_report_
    total = report["end_to_end"]
    assert report["estimator_epsilon"] == 0.05
    assert total["training_epsilon"] <= 21 * 0.05 + 1e-12
    assert total["validation_epsilon"] == pytest.approx(report["composed_epsilon_pld"] + 0.05)
    assert total["epsilon"] == max(total["training_epsilon"], total["validation_epsilon"])
    assert "each record of the data" in report["protects"]
    with pytest.raises(ValueError, match="applies under privacy_unit='record'"):
        PrivateBOSearchCV(_NoisyMeans(), {"shrink": (0.0, 0.9)}, estimator_epsilon=1.0).fit(X, y)


def test_the_default_choice_among_drawn_candidates_is_accounted_end_to_end():
    # publish="auto" under the record unit with estimator_epsilon: a one-shot choice among the
    # untuned estimator and 20 candidates drawn from the space; every one of the 21 fits and the
    # refit compose for a training record, the choice (epsilon 1) and the refit for a
    # validation record.
    X, y = make_classification(2000, 5, n_informative=3, n_redundant=0, random_state=0)
    X = X / 4
    search = PrivateBOSearchCV(
        _NoisyMeans(epsilon=0.05),  # its own epsilon is the one declared
        {"shrink": (0.0, 0.9)},
        privacy_unit="record",
        privacy_budget=(1.0, 1e-6),
        estimator_epsilon=0.05,
        n_iter=20,
        random_state=0,
        noise_random_state=0,
    ).fit(X, y)
    report = search.privacy_report_
    total = report["end_to_end"]
    assert report["mechanism"] == "permute-and-flip" and report["epsilon"] == 1.0
    assert total["training_epsilon"] <= 22 * 0.05 + 1e-12
    assert total["validation_epsilon"] == pytest.approx(1.0 + 0.05)
    assert total["epsilon"] == max(total["training_epsilon"], total["validation_epsilon"])
    assert "each record of the data" in report["protects"]


def test_the_sampler_refuses_a_private_estimator_whose_training_scores_it_would_store():
    X, y = make_classification(1200, 5, n_informative=3, n_redundant=0, random_state=0)
    X = X / 4

    def make(trial):
        return _NoisyMeans(epsilon=0.05, shrink=trial.suggest_float("shrink", 0.0, 0.9))

    objective = RecordObjective(make, X[:600], y[:600], X[600:], y[600:], estimator_epsilon=0.05)
    sampler = PrivateGPUCBSampler(
        privacy_budget=(1.0, 1e-6), n_trials=5, value_range=(0.0, 1.0), privacy_unit="record"
    )
    with pytest.raises(ValueError, match="estimator_epsilon is not available with the Optuna"):
        sampler.optimize(sampler.create_study(direction="maximize"), objective)
    with pytest.raises(ValueError, match="estimator_epsilon"):
        RecordObjective(make, X, y, X, y, estimator_epsilon=-1.0)


def test_a_search_that_cannot_resolve_a_point_warns_before_any_fit_and_says_what_would():
    # 114 validation records, a total epsilon of 1 over 6 released scores: each score's noise
    # hides differences of several points. The warning comes before any fit (an estimator that
    # fails on fit would stop the search after it), and names three ways out.
    X, y = load_breast_cancer(return_X_y=True)

    class Refuses(LogisticRegression):
        def fit(self, X, y, sample_weight=None):
            raise RuntimeError("no fit")

    with pytest.warns(UserWarning, match="can fall .* points .* below the best candidate") as w:
        with pytest.raises(RuntimeError):
            PrivateBOSearchCV(
                Refuses(),
                {"C": (1e-3, 1e2, "log-uniform")},
                publish="scores",
                privacy_unit="record",
                privacy_budget=(1.0, 1e-6),
                n_iter=6,
                random_state=0,
                error_score="raise",
            ).fit(X, y)
    [message] = [str(m.message) for m in w if "below the best candidate" in str(m.message)]
    assert "validation records" in message and "privacy_budget's epsilon of about" in message
    assert "publish='best'" in message
    # with a hundred times the budget the released scores resolve a point: no such warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _search(privacy_budget=(100.0, 1e-6), n_iter=3).fit(X, y)
    assert not [w for w in caught if "below the best candidate" in str(w.message)]
