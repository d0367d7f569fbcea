"""A differentially private model of IBM's diffprivlib, tuned end to end under the record unit.

diffprivlib's models are differentially private per fit (``epsilon``) once the bounds of the
data are given; privtune composes their fits for the training records and its one private
choice for the validation records (``estimator_epsilon``). diffprivlib does not import with
scikit-learn 1.8 or later: there these tests skip (``pip install -e ".[diffprivlib]"``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from dp_accounting.pld import accountant as pld_accountant
from dp_accounting.pld import common as pld_common
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from privtune import PrivateBOSearchCV, RecordObjective

pytest.importorskip(
    "diffprivlib",
    reason="diffprivlib cannot be imported: it is not installed, or scikit-learn is 1.8 or "
    'later, which it does not support (pip install -e ".[diffprivlib]")',
    exc_type=ImportError,
)
from diffprivlib.models import LogisticRegression, StandardScaler
from diffprivlib.utils import PrivacyLeakWarning

EPS_FIT = 0.5  # each fit of the model
EPS_CHOICE = 1.0  # the private choice among the candidates
N_ITER = 6  # candidates drawn from the space, besides the untuned model
DATA_NORM = 5.0  # each row is clipped to this norm; fixed before the data is read

X, y = make_classification(
    2000, 5, n_informative=3, n_redundant=0, class_sep=2.0, random_state=0
)  # rows of norm 3.9 (median) to 5.4 (95th percentile)
X_tune, X_test, y_tune, y_test = train_test_split(X, y, test_size=500, random_state=0)
MODEL = LogisticRegression(epsilon=EPS_FIT, data_norm=DATA_NORM, random_state=0)
SPACE = {"C": (1e-4, 10.0, "log-uniform")}


def _search(refit: bool = True) -> PrivateBOSearchCV:
    return PrivateBOSearchCV(
        MODEL,
        SPACE,
        privacy_unit="record",
        privacy_budget=(EPS_CHOICE, 1e-6),
        estimator_epsilon=EPS_FIT,
        n_iter=N_ITER,
        refit=refit,
        random_state=0,
        noise_random_state=0,
    )


def _leaks(fit) -> list[warnings.WarningMessage]:
    """The PrivacyLeakWarnings that ``fit()`` raises."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]


def test_bounds_given_up_front_leak_nothing():
    # Without data_norm diffprivlib computes it from the data and says the guarantee is broken;
    # with it, neither the model nor the search (whose refit is not silenced) says so.
    assert _leaks(lambda: LogisticRegression(epsilon=EPS_FIT).fit(X_tune, y_tune))
    assert not _leaks(lambda: clone(MODEL).fit(X_tune, y_tune))
    assert not _leaks(lambda: _search().fit(X_tune, y_tune))


def test_bounds_read_from_the_data_refuse_an_end_to_end_claim_before_any_fit():
    # data_norm=None: each fit would read it from the training records, so estimator_epsilon
    # would claim a guarantee the fits do not keep. Refused before the data is read.
    fits = []

    class Counted(LogisticRegression):
        def fit(self, X, y, sample_weight=None):
            fits.append(1)
            return super().fit(X, y, sample_weight)

    search = _search()
    search.set_params(estimator=Counted(epsilon=EPS_FIT, random_state=0))
    with pytest.raises(ValueError, match=r"estimator_epsilon: Counted's data_norm=None"):
        search.fit(X_tune, y_tune)
    assert not fits
    # inside a pipeline the step's parameter is named
    pipe = make_pipeline(StandardScaler(epsilon=0.1), clone(MODEL))
    search = PrivateBOSearchCV(
        pipe,
        {"logisticregression__C": (1e-4, 10.0, "log-uniform")},
        privacy_unit="record",
        privacy_budget=(EPS_CHOICE, 1e-6),
        estimator_epsilon=EPS_FIT + 0.1,
        n_iter=2,
    )
    with pytest.raises(ValueError, match=r"standardscaler__bounds=None"):
        search.fit(X_tune, y_tune)


def test_a_record_objective_refuses_bounds_read_from_the_data_before_the_fit():
    objective = RecordObjective(
        lambda trial: LogisticRegression(epsilon=EPS_FIT),
        X_tune,
        y_tune,
        X_test,
        y_test,
        estimator_epsilon=EPS_FIT,
    )
    with pytest.raises(ValueError, match=r"LogisticRegression's data_norm=None"):
        objective(None)  # the trial is not read by this make_estimator
    # declared, the same model is scored
    objective.make_estimator = lambda trial: clone(MODEL)
    assert 0.0 <= objective(None) <= 1.0


def test_a_declared_epsilon_below_the_models_own_is_refused_before_any_fit():
    # diffprivlib's default epsilon is 1: declaring each fit 0.3-DP would understate the
    # training records' cost three-fold in the end-to-end report.
    search = _search().set_params(estimator=LogisticRegression(data_norm=DATA_NORM))
    with pytest.raises(ValueError, match=r"but the estimator's own epsilon is 1 \(epsilon=1\)"):
        search.fit(X_tune, y_tune)


def test_privacy_leak_warnings_reach_the_user_under_privacy():
    # Without estimator_epsilon the training records are not protected and the search runs;
    # the fits' other warnings are silenced (they may quote scores), diffprivlib's fixed text
    # about a bound read from the data is not.
    search = _search()
    search.set_params(estimator=LogisticRegression(epsilon=EPS_FIT), estimator_epsilon=None)
    assert _leaks(lambda: search.fit(X_tune, y_tune))


@pytest.mark.parametrize("refit", [True, False], ids=["refit", "no-refit"])
def test_the_fits_and_the_choice_are_accounted_end_to_end(refit):
    search = _search(refit).fit(X_tune, y_tune)
    report = search.privacy_report_
    # publish="auto": one private choice among the untuned model and N_ITER drawn candidates
    assert report["release"] == "best" and report["mechanism"] == "permute-and-flip"
    assert report["baseline"] and report["n_candidates"] == N_ITER
    assert report["epsilon"] == EPS_CHOICE and report["estimator_epsilon"] == EPS_FIT
    # a training record: every candidate's fit and the refit, composed (the sum, or the optimal
    # advanced composition at delta 1e-6 when smaller)
    k = N_ITER + 1 + int(refit)
    advanced = pld_accountant.advanced_composition(
        pld_common.DifferentialPrivacyParameters(EPS_FIT, 0.0), k, 1e-6
    )
    total = report["end_to_end"]
    assert total["training_epsilon"] == pytest.approx(min(k * EPS_FIT, advanced))
    assert total["training_epsilon"] <= k * EPS_FIT + 1e-12
    # a validation record: the choice, and the refit on all the data
    assert total["validation_epsilon"] == pytest.approx(EPS_CHOICE + EPS_FIT * refit)
    assert total["epsilon"] == max(total["training_epsilon"], total["validation_epsilon"])
    assert report["protects"].startswith(
        "each record of the data, training and validation (end to end)"
    )
    assert f"epsilon={total['epsilon']:g}" in report["protects"]
    assert search.best_params_ == search.cv_results_["params"][search.best_index_]
    if refit:
        tuned = search.best_estimator_
        assert isinstance(tuned, LogisticRegression) and tuned.epsilon == EPS_FIT
        assert tuned.C == search.best_params_["C"]
        assert search.score(X_test, y_test) > 0.7  # chance is 0.5
    else:
        assert not hasattr(search, "best_estimator_")


def test_the_end_to_end_benchmark_compares_with_both_untuned_models(tmp_path):
    # every mode on the same test records, at the same total epsilon for every record
    from benchmarks import diffprivlib_models as bench
    from benchmarks.harness import RunStore, load_runs

    result = bench.main(["--quick", "--out", str(tmp_path)])
    rows = result["rows"]
    assert {r["task"] for r in rows} == {"logistic/phoneme", "random_forest/penbased"}
    for row in rows:
        assert row["n_seeds"] == 2 and row["epsilon"] == 1.0
        for mode in bench.MODES:
            assert 0 <= row[mode]["accuracy"] <= 100
        for mode in bench.MODES[1:]:  # paired by seed, in points
            assert row[mode]["minus_untuned_whole"] == pytest.approx(
                row[mode]["accuracy"] - row["untuned_whole"]["accuracy"]
            )
        for mode in bench.PRIVATE_MODES:  # the totals hold
            assert row[mode]["max_epsilon"] <= 1.0 + 1e-9
    runs = load_runs(RunStore(tmp_path / "quick", "diffprivlib_models"))
    private = [r for r in runs if r["kind"] == "private"]
    own: dict = {}
    for r in runs:
        if r["kind"] in bench.OWN_RUNS:
            own.setdefault((r["task"], r["seed"]), {}).update(r["modes"])
    assert len(private) == len(own) == 4 and len([r for r in runs if r["kind"] == "exact"]) == 4
    for r in private:
        modes = {**r["modes"], **own[(r["task"], r["seed"])]}
        assert set(modes) == set(bench.PRIVATE_MODES)
        for mode in ("auto", *bench.OWN_VARIANTS):  # the pick's own model: the whole budget
            assert modes[mode]["refit_epsilon"] == 0.0
            assert modes[mode]["selection_epsilon"] <= 1.0 + 1e-9
        assert all(m["delta"] <= bench.DELTA * (1 + 1e-9) for m in modes.values())
        # composed: the untuned model, 2 candidates and the refit at eps / 4 each
        assert modes["composed"]["epsilon_per_fit"] == pytest.approx(0.25)
        assert modes["composed"]["epsilon"] == pytest.approx(1.0)
        # the refit modes: the selection's share of epsilon, the rest to the refit
        assert modes["refit_0.33"]["refit_epsilon"] == pytest.approx(2 / 3)
        assert modes["refit_0.2"]["refit_epsilon"] == pytest.approx(0.8)
        # subsampled: the selection's epsilon amplified to its share
        sub = modes["subsampled"]
        assert sub["selection_epsilon"] <= 1 / 3 + 1e-9 and sub["n_select"] < r["n_tune"]
    assert "## Targets" in (tmp_path / "quick" / "diffprivlib_models.md").read_text()
    assert (tmp_path / "quick" / "diffprivlib_models.png").stat().st_size > 0


def test_the_selection_limits_benchmark_bounds_any_selection_by_exact_scores(tmp_path):
    from benchmarks import selection_limits as bench
    from benchmarks.harness import RunStore, load_runs

    result = bench.main(["--quick", "--out", str(tmp_path)])
    runs = load_runs(RunStore(tmp_path / "quick", "selection_limits"))
    assert len(runs) == 2
    for r in runs:  # both epsilon0 on the same configurations, every score an accuracy
        assert len(r["half"]) == len(r["third"]) == 6
        assert all(0 <= v <= 1 and 0 <= t <= 1 for v, t in r["half"] + r["third"])
    (case,) = result["cases"].values()
    base = np.array([r["untuned_whole"] for r in runs])
    for share in ("half", "third"):  # the best exact validation score among the first 5
        picks = np.array([bench.bound(r[share], 5) for r in runs])
        assert case[f"bound_{share}"]["difference"] == pytest.approx(100 * (picks - base).mean())
        for r, pick in zip(runs, picks, strict=True):
            first = np.array(r[share][:5])
            assert pick in first[first[:, 0] == first[:, 0].max(), 1]
    threshold = case["threshold"]
    assert threshold["tau"] in bench.TAUS and threshold["gamma"] in bench.GAMMAS
    assert 0 <= threshold["nothing_deployed"] <= 1
    assert (tmp_path / "quick" / "selection_limits.png").stat().st_size > 0


def test_the_threshold_variant_deploys_the_first_candidate_at_or_above_the_threshold():
    from benchmarks.selection_limits import threshold

    rng = np.random.default_rng(0)
    candidates = [[0.2, 0.1], [0.9, 0.8], [0.95, 0.7]]
    # scores far apart at a large epsilon0: below 0.5 never passes, above it always does
    deployed = {threshold(candidates, 10_000, 100.0, 0.5, 0.0, rng) for _ in range(50)}
    assert deployed == {0.8, 0.7}
    # a threshold nothing reaches: nothing deployed
    assert threshold(candidates, 10_000, 100.0, 0.99, 0.5, rng) is None


def test_the_benchmarks_variants_reproduce_the_search_at_its_defaults():
    # select_private_model by hand, with the whole budget and the geometric law, is the
    # search's "auto": the variants differ from it in the one setting they name
    from benchmarks import diffprivlib_models as bench

    task, seed = "naive_bayes/penbased", 3
    X_tune, X_test_, y_tune, y_test_ = bench.split(task, seed, 1200)
    search = PrivateBOSearchCV(
        bench.dp_model(task, 1.0, random_state=seed),  # seeds derived alike in both
        bench.space(task),
        privacy_unit="record",
        privacy_budget=(1.0, bench.DELTA),
        estimator_epsilon="auto",
        n_iter=4,
        random_state=seed,
        noise_random_state=bench.NOISE_SEED + seed,
    ).fit(X_tune, y_tune)
    model, cost = bench.select_and_refit(
        task,
        1.0,
        seed,
        X_tune,
        y_tune,
        share=1.0,
        distribution="geometric",
        n_iter=4,
        random_state=seed,
    )
    assert cost["params"] == search.best_params_ and cost["refit_epsilon"] == 0.0
    assert cost["epsilon"] == pytest.approx(search.privacy_report_["epsilon"])
    assert model.score(X_test_, y_test_) == search.best_estimator_.score(X_test_, y_test_)
    # Poisson subsampling: the inverse of the amplification
    assert bench.amplified(bench.unamplified(0.4, 0.2), 0.2) == pytest.approx(0.4)


def test_every_record_by_one_total_sets_the_models_epsilon_and_keeps_its_own_model():
    # estimator_epsilon="auto": the user states the total every record gets; the search sets
    # the model's epsilon (and a DP scaler's, sharing it) and returns the pick's own model.
    pipe = make_pipeline(
        StandardScaler(epsilon=1.0, bounds=(-8.0, 8.0)),
        LogisticRegression(data_norm=DATA_NORM, random_state=0),
    )
    search = PrivateBOSearchCV(
        pipe,
        {"logisticregression__C": (1e-4, 10.0, "log-uniform")},
        privacy_unit="record",
        privacy_budget=(3.0, 1e-6),
        estimator_epsilon="auto",
        n_iter=N_ITER,
        random_state=0,
        noise_random_state=0,
    )
    assert not _leaks(lambda: search.fit(X_tune, y_tune))
    report = search.privacy_report_
    assert report["epsilon"] <= 3.0 and report["candidate"] == "private"
    assert report["fit_parameters"] == [
        "standardscaler__epsilon",
        "logisticregression__epsilon",
    ]
    # the whole budget to the selection; the pick's own model, its steps sharing epsilon0
    assert "refit_epsilon" not in report
    model, eps0 = search.best_estimator_, report["fit_epsilon"]
    assert model.get_params()["standardscaler__epsilon"] == pytest.approx(eps0 / 2)
    assert model.get_params()["logisticregression__epsilon"] == pytest.approx(eps0 / 2)
    # the model alone, refit=False: the same own model, and the search does not predict
    search.set_params(estimator=LogisticRegression(data_norm=DATA_NORM, random_state=0))
    search.set_params(space=SPACE, refit=False).fit(X_tune, y_tune)
    assert search.best_estimator_.epsilon == pytest.approx(search.epsilon_)
    assert search.best_estimator_.score(X_test, y_test) > 0.7  # chance is 0.5
