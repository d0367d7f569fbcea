"""Tests for privtune.presets: the GO-UCB paper's spaces against current scikit-learn."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning

from privtune.presets import (
    PRESETS,
    estimator_for,
    gradient_boosting_space,
    mlp_space,
    random_forest_space,
)
from privtune.space import Categorical, Real

CRITERION_WARNING = "The parameter `criterion` is deprecated"


def _has_gb_criterion():
    return "criterion" in estimator_for("gradient_boosting").get_params()


@pytest.fixture(scope="module")
def tiny_data():
    # 30 rows of each class: enough for every estimator, small enough to fit in milliseconds.
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.concatenate([np.flatnonzero(y == 0)[:30], np.flatnonzero(y == 1)[:30]])
    X, y = X[rows], y[rows]
    return (X - X.mean(axis=0)) / X.std(axis=0), y


@pytest.mark.parametrize(
    ("space", "n_params", "n_coordinates"),
    [
        (random_forest_space(), 7, 11),
        (mlp_space(), 8, 12),
        (gradient_boosting_space(), 11, 14),
        (gradient_boosting_space(include_criterion=False), 10, 12),
    ],
)
def test_each_space_has_the_papers_number_of_parameters(space, n_params, n_coordinates):
    assert len(space) == n_params
    assert space.dim == n_coordinates


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_keys_are_constructor_arguments_of_the_estimator(name):
    factory, class_name = PRESETS[name]
    estimator = estimator_for(name)
    assert type(estimator).__name__ == class_name
    assert set(factory()) <= set(estimator.get_params())


def test_retired_names_are_mapped_to_current_ones():
    assert random_forest_space()["criterion"] == Categorical(["gini", "entropy", "log_loss"])
    assert gradient_boosting_space()["loss"] == Categorical(["log_loss", "exponential"])
    assert gradient_boosting_space()["criterion"] == Categorical(["friedman_mse", "squared_error"])


def test_decade_ranges_are_log_scaled_and_open_intervals_are_closed_inside_sklearns_limits():
    mlp = mlp_space()
    assert mlp["alpha"] == Real(1e-6, 1e-2, log=True)
    assert mlp["learning_rate_init"] == Real(1e-6, 1e-2, log=True)
    assert mlp["beta_1"].high < 1.0 and mlp["beta_2"].high < 1.0
    gb = gradient_boosting_space()
    assert gb["learning_rate"].low > 0.0 and gb["subsample"].low > 0.0


@pytest.mark.parametrize(
    ("name", "kwargs", "n_points"),
    [
        ("random_forest", {}, 30),
        ("mlp", {}, 30),
        ("gradient_boosting", {"include_criterion": True}, 30),
        # Differs from the line above by one parameter only; a few points check it fits cleanly.
        ("gradient_boosting", {"include_criterion": False}, 6),
    ],
)
def test_decoded_points_are_accepted_by_scikit_learn(tiny_data, name, kwargs, n_points):
    if kwargs.get("include_criterion") and not _has_gb_criterion():
        pytest.skip("this scikit-learn has removed GradientBoostingClassifier(criterion=...)")
    X, y = tiny_data
    space = PRESETS[name][0](**kwargs)
    rng = np.random.default_rng(0)
    # The two corners reach every range's ends; the random points mix them.
    corners = [np.zeros(space.dim), np.ones(space.dim)]
    U = np.vstack([*corners, rng.random((n_points - 2, space.dim))])
    for params in space.from_unit_many(U):
        estimator = estimator_for(name, random_state=0).set_params(**params)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # Short MLP runs on 60 rows need not converge; that is not what is tested here.
            warnings.simplefilter("ignore", ConvergenceWarning)
            # Deprecated in scikit-learn 1.9 and kept on purpose (see gradient_boosting_space).
            warnings.filterwarnings("ignore", CRITERION_WARNING, FutureWarning)
            estimator.fit(X, y)
        assert estimator.predict(X[:5]).shape == (5,)


def test_estimator_for_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown preset 'svm'"):
        estimator_for("svm")


def test_building_a_space_does_not_import_sklearn():
    code = (
        "import sys; from privtune.presets import PRESETS; "
        "[factory() for factory, _ in PRESETS.values()]; "
        "print('sklearn' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
