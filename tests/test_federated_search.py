"""FederatedSearch: N parties tune one scikit-learn estimator with DP-FTS-DE."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import joblib
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression, Ridge

from privtune.federated import FederatedSearch
from privtune.privacy import PrivacyError, default_delta, subsampled_gaussian_epsilon

X, Y = load_breast_cancer(return_X_y=True)
X = (X - X.mean(0)) / X.std(0)
PARTIES = [(X[i::6], Y[i::6]) for i in range(6)]
SPACE = {"C": (1e-3, 1e2, "log-uniform")}


def search(**kw):
    kw = {"n_iter": 4, "n_init": 3, "P": 2, "n_features": 20, **kw}
    kw = {"random_state": 0, "noise_random_state": 0, **kw}
    return FederatedSearch(LogisticRegression(max_iter=200), SPACE, **kw)


def test_fit_sets_one_result_per_party_and_the_privacy_loss():
    s = search(q=0.5, z=1.0, scoring="roc_auc").fit(PARTIES)
    assert len(s.recommended_params_) == len(s.best_params_) == 6
    assert all(set(p) == {"C"} and 1e-3 <= p["C"] <= 1e2 for p in s.recommended_params_)
    assert s.scores_.shape == (6, 3 + 4)
    assert np.all((s.scores_ >= 0) & (s.scores_ <= 1))
    np.testing.assert_array_equal(s.best_scores_, s.scores_.max(axis=1))
    assert s.delta_ == 1e-6  # the default: 1 / N^1.1 is weak (below)
    assert s.epsilon_ == subsampled_gaussian_epsilon(0.5, 1.0, 4, 1e-6)
    assert [e["round"] for e in s.trace_] == list(range(5))
    assert s.trace_[0]["noise_std"] > 0 and s.trace_[-1]["n_selected"] is None
    # the server's log holds counts and noise scales only, never a score
    assert set(s.trace_[0]) == {
        "round",
        "n_used_server",
        "n_failed",
        "n_selected",
        "n_clipped",
        "phi_max",
        "noise_std",
    }


def test_the_papers_variants_are_switches():
    fts_de = search(z=None).fit(PARTIES)
    assert fts_de.epsilon_ == float("inf")
    assert fts_de.trace_[1]["n_selected"] == 6  # no subsampling without privacy
    ts = search(server_prob="never").fit(PARTIES)
    assert ts.epsilon_ == 0.0
    assert all(e["n_used_server"] == 0 for e in ts.trace_)
    limited = search(server_rounds=2).fit(PARTIES)
    assert limited.epsilon_ == subsampled_gaussian_epsilon(0.35, 1.0, 2, 1e-6)


def test_a_delta_that_guarantees_nothing_is_refused_and_a_weak_one_warned_about():
    # 1 / N: publishing each party's data with probability delta publishes one in expectation
    with pytest.raises(PrivacyError, match=r"no guarantee.*delta \* N = 1"):
        search(delta=1 / 6).fit(PARTIES)
    # the paper's 1 / N^1.1 is 0.14 for six parties: accepted, loudly
    with pytest.warns(UserWarning, match=r"weak guarantee.*delta \* N = 0\.836"):
        paper = search(delta=default_delta(6)).fit(PARTIES)
    assert paper.delta_ == default_delta(6)
    # with four parties the paper's delta pays for (almost) everything: epsilon 0 for a few
    # broadcasts, which is why it is not the default
    with pytest.warns(UserWarning, match="weak guarantee"):
        four = search(delta=default_delta(4)).fit(PARTIES[:4])
    default = search().fit(PARTIES[:4])
    assert four.epsilon_ < default.epsilon_
    with pytest.raises(ValueError, match="delta must be a float in"):
        search(delta=0.0).fit(PARTIES)


def test_the_same_seed_gives_the_same_search():
    a = search().fit(PARTIES)
    b = search().fit(PARTIES)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    assert a.recommended_params_ == b.recommended_params_


class FailingAboveOne(LogisticRegression):
    """Fails to fit when C > 1: a misconfigured region of the space."""

    def fit(self, X, y, sample_weight=None):
        if self.C > 1:
            raise ValueError("C too large")
        return super().fit(X, y, sample_weight)


def test_a_failed_candidate_counts_as_the_lowest_score_of_the_range():
    s = FederatedSearch(
        FailingAboveOne(max_iter=200),
        {"C": (1e-2, 1e2, "log-uniform")},
        n_iter=4,
        n_init=4,
        P=2,
        n_features=20,
        scoring="roc_auc",
        random_state=1,
    )
    with pytest.warns(FitFailedWarning, match="counts as the lowest score 0.0"):
        s.fit(PARTIES)
    failed = np.array([a.objective.space.from_unit_many(a.X) for a in s.runner_.agents])
    C = np.vectorize(lambda p: p["C"])(failed)
    assert np.all(s.scores_[C > 1] == 0.0)
    assert np.all(s.scores_[C <= 1] > 0.5)
    assert all(p["C"] <= 1 for p in s.best_params_)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"q": 7.0, "server_prob": "never"}, ValueError, r"q must be in \(0, 1\]"),
        ({"z": -1.0, "server_prob": "never"}, ValueError, "z must be"),
        ({"q": 0.0}, ValueError, r"q must be in \(0, 1\]"),
        ({"q": 1.2}, ValueError, r"q must be in \(0, 1\]"),
        ({"z": 0.0}, ValueError, "z must be"),
        ({"z": -1.0}, ValueError, "z must be"),
        ({"S": 0.0}, ValueError, "S must be"),
        ({"P": 7}, ValueError, "P=7 sub-regions need at least 7 parties to explore them; got 6"),
        ({"P": 0}, ValueError, "P must be an integer >= 1"),
        ({"n_iter": 0}, ValueError, "n_iter must be an integer >= 1"),
        ({"n_features": 21}, ValueError, "n_features must be even"),
        ({"validation_size": 1.0}, ValueError, "validation_size must be in"),
        ({"delta": 1.0}, ValueError, r"delta must be a float in \(0, 1\)"),
        ({"server_prob": "often"}, ValueError, "server_prob must be one of"),
        ({"scoring": "r2"}, ValueError, "value_range is required"),
        ({"value_range": (1.0, 0.0)}, ValueError, "value_range must be a pair"),
    ],
)
def test_bad_parameters_get_clear_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        search(**kwargs).fit(PARTIES)


def test_bad_datasets_get_clear_errors():
    with pytest.raises(TypeError, match="got a single"):
        search().fit((X, Y))
    with pytest.raises(ValueError, match="at least one party"):
        search().fit([])
    with pytest.raises(ValueError, match=r"datasets\[1\] has 5 features .* datasets\[0\] has 30"):
        search(P=1).fit([PARTIES[0], (X[:40, :5], Y[:40])])
    with pytest.raises(ValueError, match=r"datasets\[0\]: X has 10 rows but y has 9"):
        search(P=1).fit([(X[:10], Y[:9]), PARTIES[1]])
    with pytest.raises(ValueError, match="at least 2 parties"):
        search(P=1).fit([PARTIES[0]])


def test_a_regressor_with_a_declared_range():
    parties = [(X[i::3, 1:], X[i::3, 0]) for i in range(3)]
    s = FederatedSearch(
        Ridge(),
        {"alpha": (1e-3, 1e3, "log-uniform")},
        n_iter=3,
        n_init=3,
        P=3,
        n_features=20,
        value_range=(0.0, 1.0),
        random_state=0,
    ).fit(parties)
    assert s.best_scores_.shape == (3,) and np.all(s.best_scores_ > 0.5)


def test_importing_the_federated_package_does_not_import_sklearn():
    code = "import sys, privtune.federated; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_joblib_workers_give_the_same_search():
    local = search().fit(PARTIES)
    remote = search(n_jobs=2).fit(PARTIES)
    np.testing.assert_array_equal(remote.scores_, local.scores_)
    assert remote.epsilon_ == local.epsilon_


class PidScorer:
    """Accuracy, noting the process it ran in; it travels with its party's agent and back."""

    def __init__(self):
        self.pids = []

    def __call__(self, estimator, X, y):
        self.pids.append(os.getpid())
        return float(np.mean(estimator.predict(X) == y))


def test_a_dask_local_cluster_runs_the_parties(dask_client):
    """The parties step on a real LocalCluster (loopback) through joblib's Dask backend."""
    local = search(scoring=PidScorer(), value_range=(0.0, 1.0)).fit(PARTIES)
    with joblib.parallel_config(backend="dask"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # dask's notes on large graphs
        remote = search(n_jobs=-1, scoring=PidScorer(), value_range=(0.0, 1.0)).fit(PARTIES)
    workers = set(dask_client.run(os.getpid).values())
    # every evaluation ran in one of the cluster's worker processes, none in this one
    pids = {p for agent in remote.runner_.agents for p in agent.objective.scorer.pids}
    assert pids and pids <= workers and os.getpid() not in pids
    assert {p for a in local.runner_.agents for p in a.objective.scorer.pids} == {os.getpid()}
    np.testing.assert_array_equal(remote.scores_, local.scores_)
    assert remote.recommended_params_ == local.recommended_params_


def test_sub_regions_split_only_real_parameters():
    # a categorical (one-hot) and an integer coordinate are never cut: every party's snapped
    # initial points stay in its sub-region
    space = {
        "fit_intercept": [True, False],
        "C": (1e-3, 1e2, "log-uniform"),
        "max_iter": (50, 300),
        "tol": (1e-5, 1e-2, "log-uniform"),
    }
    s = FederatedSearch(
        LogisticRegression(), space, n_iter=1, n_init=5, P=4, n_features=20, random_state=0
    ).fit(PARTIES[:4])
    for n, agent in enumerate(s.runner_.agents):
        assert agent.regions.splits.tolist() == [1, 1, 2, 1, 2]  # C and tol, halved
        assert np.all(agent.regions.index(agent.X[:5]) == n % 4)
    with pytest.raises(ValueError, match="P=2 sub-regions split the real parameters"):
        FederatedSearch(LogisticRegression(), {"fit_intercept": [True, False]}, P=2).fit(PARTIES)


def test_a_parameter_the_estimator_does_not_have_is_refused_before_any_fit():
    s = FederatedSearch(LogisticRegression(), {"Cc": (1e-3, 1e2, "log-uniform")}, n_iter=2)
    with pytest.raises(ValueError, match=r"space has the parameter 'Cc', which LogisticRegression"):
        s.fit(PARTIES)
    assert not hasattr(s, "runner_")  # refused before the rounds began


def test_a_party_whose_every_fit_fails_gets_no_recommendation():
    # party 2 holds one class only: every fit of a classifier fails there
    parties = [PARTIES[0], PARTIES[1], (PARTIES[2][0], np.zeros_like(PARTIES[2][1]))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = search(P=1).fit(parties)
    assert s.failed_parties_ == [2]
    assert s.recommended_params_[2] is None and s.best_params_[2] is None
    assert np.isnan(s.best_scores_[2]) and np.all(np.isfinite(s.best_scores_[:2]))
    assert all(set(p) == {"C"} for p in s.recommended_params_[:2])
    (named,) = [w for w in caught if "got no valid evaluation" in str(w.message)]
    assert "[2]" in str(named.message)
    assert search(P=1).fit(PARTIES[:3]).failed_parties_ == []
