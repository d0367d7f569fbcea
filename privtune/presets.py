"""Search spaces of the hyperparameter-tuning experiments of the GO-UCB paper.

Liu & Wang, *Global Optimization with Parametric Function Approximation* (ICML 2023),
Appendix D.2, tunes a random forest (7 hyperparameters), a multi-layer perceptron (8) and
gradient boosting (11) on the Breast-cancer, Australian and Diabetes datasets. Each function
below returns one of those spaces as a :class:`~privtune.space.SearchSpace` keyed by the
constructor arguments of the current scikit-learn estimator, in the paper's order.

The paper's ranges cannot all be used verbatim with current scikit-learn. Each function's
docstring lists every parameter with the paper's range and every change, which follows four
rules:

- Retired option names get their current name (``"logloss"`` becomes ``"log_loss"``; the
  spaces in option names become underscores).
- An open interval becomes a closed one. An end point is kept where scikit-learn accepts it and
  the estimator still does something sensible there; otherwise it moves inward by 0.001.
- A range the paper gives over several decades (1e-6 to 1e-2) is searched on a log scale. The
  paper maps every continuous range linearly, which spends 99 % of such a range above 1e-4.
- Nothing else changes: integer ranges and the categorical choices are the paper's.

The paper's spaces leave out some of scikit-learn's defaults (``max_depth=None`` for the forest,
``max_features=None`` and ``max_leaf_nodes=None`` for gradient boosting). They stay reachable:
:class:`privtune.PrivateBOSearchCV` and :class:`privtune.PrivateSelectionSearchCV` evaluate the
untuned estimator first whatever its values, as an arm outside the cube when the space cannot
encode them, and keep it unless a candidate beats it; with Optuna, enqueue the defaults as
trial 0 and pass ``baseline=0`` to ``recommend`` (a number outside a distribution's range is
an arm apart there too; Optuna's integer and float distributions cannot hold a ``None``).

The paper maps every hyperparameter to one coordinate of [0, 10] (a categorical one to equal
intervals of that coordinate), so its dimension d_x counts hyperparameters. privtune encodes a
categorical one-hot, so ``space.dim`` is larger than ``len(space)``: 11 coordinates for the
random forest, 12 for the perceptron and 14 for gradient boosting.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from privtune.space import Categorical, Integer, Real, SearchSpace

__all__ = [
    "PRESETS",
    "estimator_for",
    "gradient_boosting_space",
    "mlp_space",
    "random_forest_space",
]


def random_forest_space() -> SearchSpace:
    """Return the random-forest space of the GO-UCB paper (7 hyperparameters).

    Keys are arguments of :class:`sklearn.ensemble.RandomForestClassifier`.

    ========================= ============================== ===========================
    parameter                 paper                          here
    ========================= ============================== ===========================
    ``n_estimators``          integer in [20, 200]           same
    ``criterion``             "gini", "entropy", "logloss"   "gini", "entropy", "log_loss"
    ``max_depth``             integer in [1, 10]             same
    ``min_samples_split``     integer in [2, 10]             same
    ``min_samples_leaf``      integer in [1, 10]             same
    ``max_features``          "sqrt" or "log2"               same
    ``bootstrap``             True or False                  same
    ========================= ============================== ===========================

    Returns
    -------
    SearchSpace

    Notes
    -----
    ``"logloss"`` is spelled ``"log_loss"`` in scikit-learn. For classification trees
    scikit-learn computes ``"entropy"`` and ``"log_loss"`` with the same criterion (Shannon
    information gain), so these two choices score alike; both are kept so that the space is the
    paper's.

    Examples
    --------
    >>> space = random_forest_space()
    >>> len(space), space.dim
    (7, 11)
    """
    return SearchSpace(
        {
            "n_estimators": Integer(20, 200),
            "criterion": Categorical(["gini", "entropy", "log_loss"]),
            "max_depth": Integer(1, 10),
            "min_samples_split": Integer(2, 10),
            "min_samples_leaf": Integer(1, 10),
            "max_features": Categorical(["sqrt", "log2"]),
            "bootstrap": Categorical([True, False]),
        }
    )


def mlp_space() -> SearchSpace:
    """Return the multi-layer-perceptron space of the GO-UCB paper (8 hyperparameters).

    Keys are arguments of :class:`sklearn.neural_network.MLPClassifier`.

    ======================== ========================================== =========================
    parameter                paper                                      here
    ======================== ========================================== =========================
    ``activation``           "identity", "logistic", "tanh", "relu"     same
    ``alpha``                float in [1e-6, 1e-2]                      same, log scale
    ``learning_rate_init``   float in [1e-6, 1e-2]                      same, log scale
    ``max_iter``             integer in [100, 300]                      same
    ``shuffle``              True or False                              same
    ``beta_1``               float in (0, 1)                            [0.0, 0.999]
    ``beta_2``               float in (0, 1)                            [0.0, 0.999]
    ``n_iter_no_change``     integer in [1, 10]                         same
    ======================== ========================================== =========================

    Returns
    -------
    SearchSpace

    Notes
    -----
    ``alpha`` and ``learning_rate_init`` span four decades; the paper maps them linearly, here
    they are on a log scale, so that each decade gets the same share of the search.

    scikit-learn accepts ``beta_1`` and ``beta_2`` in [0, 1): the open end 0 is closed (0 is a
    valid Adam setting, without averaging) and the end 1 is moved to 0.999, the largest value
    on a 0.001 grid that scikit-learn accepts (it is also Adam's default ``beta_2``).

    ``beta_1``, ``beta_2`` and ``shuffle`` only act with the default solver ``"adam"``, which
    the paper does not tune. ``max_iter`` counts epochs.

    Examples
    --------
    >>> space = mlp_space()
    >>> len(space), space.dim
    (8, 12)
    """
    return SearchSpace(
        {
            "activation": Categorical(["identity", "logistic", "tanh", "relu"]),
            "alpha": Real(1e-6, 1e-2, log=True),
            "learning_rate_init": Real(1e-6, 1e-2, log=True),
            "max_iter": Integer(100, 300),
            "shuffle": Categorical([True, False]),
            "beta_1": Real(0.0, 0.999),
            "beta_2": Real(0.0, 0.999),
            "n_iter_no_change": Integer(1, 10),
        }
    )


def gradient_boosting_space(include_criterion: bool = True) -> SearchSpace:
    """Return the gradient-boosting space of the GO-UCB paper (11 hyperparameters).

    Keys are arguments of :class:`sklearn.ensemble.GradientBoostingClassifier`.

    ============================== ================================ ==============================
    parameter                      paper                            here
    ============================== ================================ ==============================
    ``loss``                       "logloss" or "exponential"       "log_loss" or "exponential"
    ``learning_rate``              float in (0, 1)                  [0.001, 1.0]
    ``n_estimators``               integer in [20, 200]             same
    ``subsample``                  float in (0, 1)                  [0.001, 1.0]
    ``criterion``                  "friedman mse", "squared error"  "friedman_mse", "squared_error"
    ``min_samples_split``          integer in [2, 10]               same
    ``min_samples_leaf``           integer in [1, 10]               same
    ``min_weight_fraction_leaf``   float in (0, 0.5)                [0.0, 0.5]
    ``max_depth``                  integer in [1, 10]               same
    ``max_features``               "sqrt" or "log2"                 same
    ``max_leaf_nodes``             integer in [2, 10]               same
    ============================== ================================ ==============================

    Parameters
    ----------
    include_criterion : bool, default=True
        Include ``criterion``, the paper's fifth hyperparameter. scikit-learn 1.9 deprecated it:
        it has no effect there, setting it makes every ``fit`` emit a ``FutureWarning``, and
        scikit-learn 1.11 removes it. Pass False to leave it out (10 hyperparameters), which is
        required from scikit-learn 1.11 on. With scikit-learn before 1.9 the two choices differ
        only in a small correction of the split score.

    Returns
    -------
    SearchSpace

    Notes
    -----
    ``"logloss"`` is scikit-learn's ``"log_loss"`` (called ``"deviance"`` before
    scikit-learn 1.1). ``"exponential"`` (AdaBoost's loss) only works for binary targets, as
    are the paper's three datasets; scikit-learn rejects it for more classes.

    The open intervals are closed where scikit-learn accepts the end point: ``subsample`` may
    be 1.0 (no subsampling, the default) and ``min_weight_fraction_leaf`` may be 0.0 (the
    default) or 0.5. scikit-learn rejects ``subsample=0``, and accepts ``learning_rate=0`` but
    then never moves from its initial constant prediction, so both lower ends are 0.001.
    Both ranges stay linear, as in the paper: the lower end 0.001 only closes the open
    interval, it does not make the range one to search over decades.

    The paper lists ``max_features`` as a float but gives the choices "sqrt" and "log2"; those
    are used.

    Examples
    --------
    >>> len(gradient_boosting_space()), len(gradient_boosting_space(include_criterion=False))
    (11, 10)
    """
    dimensions: dict[str, Any] = {
        "loss": Categorical(["log_loss", "exponential"]),
        "learning_rate": Real(0.001, 1.0),
        "n_estimators": Integer(20, 200),
        "subsample": Real(0.001, 1.0),
        "criterion": Categorical(["friedman_mse", "squared_error"]),
        "min_samples_split": Integer(2, 10),
        "min_samples_leaf": Integer(1, 10),
        "min_weight_fraction_leaf": Real(0.0, 0.5),
        "max_depth": Integer(1, 10),
        "max_features": Categorical(["sqrt", "log2"]),
        "max_leaf_nodes": Integer(2, 10),
    }
    if not include_criterion:
        del dimensions["criterion"]
    return SearchSpace(dimensions)


PRESETS: dict[str, tuple[Callable[[], SearchSpace], str]] = {
    "random_forest": (random_forest_space, "RandomForestClassifier"),
    "mlp": (mlp_space, "MLPClassifier"),
    "gradient_boosting": (gradient_boosting_space, "GradientBoostingClassifier"),
}
"""Preset name -> (space factory, name of the scikit-learn estimator class it is for)."""

_ESTIMATOR_MODULES = {
    "RandomForestClassifier": "sklearn.ensemble",
    "MLPClassifier": "sklearn.neural_network",
    "GradientBoostingClassifier": "sklearn.ensemble",
}


def estimator_for(name: str, **params: Any) -> Any:
    """Return a new scikit-learn estimator for the preset ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`PRESETS`: ``"random_forest"``, ``"mlp"`` or ``"gradient_boosting"``.
    **params
        Constructor arguments, for example ``random_state=0``.

    Returns
    -------
    sklearn.base.BaseEstimator
        An unfitted ``RandomForestClassifier``, ``MLPClassifier`` or
        ``GradientBoostingClassifier``.

    Raises
    ------
    ValueError
        If ``name`` is not a preset.

    Examples
    --------
    >>> estimator_for("random_forest", random_state=0)
    RandomForestClassifier(random_state=0)
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; expected one of {sorted(PRESETS)}.")
    class_name = PRESETS[name][1]
    # Imported here so that building a space does not load scikit-learn.
    module = importlib.import_module(_ESTIMATOR_MODULES[class_name])
    return getattr(module, class_name)(**params)
