"""What both searches need of scikit-learn's estimators and scorers, below both.

- :func:`known_score_range`: the range of a scorer's values, where scikit-learn's definition
  fixes it; the scikit-learn search and the federated search take the curator's range from here
  when the user gives none.
- :func:`check_space_params`: every parameter of a search space is one the estimator has.
- :class:`ScoringPlan`: which metric a search optimizes, which it releases, and their ranges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.base import is_classifier

from .privacy.errors import PrivacyError
from .privacy.withhold import clean

__all__ = [
    "ScoringPlan",
    "check_inputs",
    "check_space_params",
    "known_score_range",
    "reports_per_candidate",
]

#: Scorers (by name) whose value lies in [0, 1].
_UNIT_SCORERS = frozenset(
    {
        "accuracy",
        "balanced_accuracy",
        "top_k_accuracy",
        "average_precision",
        "completeness_score",
        "homogeneity_score",
        "v_measure_score",
        "normalized_mutual_info_score",
        "rand_score",
        "fowlkes_mallows_score",
    }
)
_UNIT_PREFIXES = ("roc_auc", "f1", "precision", "recall", "jaccard")
_SCORE_RANGES = {"matthews_corrcoef": (-1.0, 1.0)}


def known_score_range(scoring: Any, estimator: Any = None) -> tuple[float, float] | None:
    """The range of a scorer's values, where scikit-learn's definition fixes it.

    Parameters
    ----------
    scoring : str, callable or None
        A scorer name (``"accuracy"``, ``"roc_auc"``, ``"f1_macro"``, ...), a callable (range
        unknown) or ``None`` (the estimator's ``score``: accuracy for a classifier).
    estimator : estimator, optional
        The estimator, for ``scoring=None``.

    Returns
    -------
    tuple of float or None
        ``(lo, hi)``, or ``None`` when the range is not known (regression errors, R², log loss,
        custom scorers): pass ``value_range`` then.

    Examples
    --------
    >>> known_score_range("roc_auc")
    (0.0, 1.0)
    >>> known_score_range("r2") is None
    True
    """
    if scoring is None:
        return (0.0, 1.0) if estimator is not None and is_classifier(estimator) else None
    if not isinstance(scoring, str):
        return None
    if scoring in _UNIT_SCORERS or scoring.startswith(_UNIT_PREFIXES):
        return (0.0, 1.0)
    return _SCORE_RANGES.get(scoring)


def check_space_params(estimator: Any, names: Any) -> None:
    """Raise ``ValueError`` naming the first of ``names`` that ``estimator`` does not have.

    Checked before any fit: a misspelt name (``svc__gama``) would make every fit fail.

    Parameters
    ----------
    estimator : estimator object
    names : iterable of str
        The search space's parameter names (nested ones as ``step__param``).
    """
    known = estimator.get_params(deep=True)
    for name in names:
        if name not in known:
            raise ValueError(
                f"space has the parameter {name!r}, which {type(estimator).__name__} "
                f"does not have. Its parameters are: {sorted(known)}."
            )


def check_inputs(estimator: Any, X: Any, y: Any) -> None:
    """Refuse, before any fit, data the estimator cannot take, with an error that names the
    problem: infinity in ``X``, NaN in ``X`` for an estimator that takes no missing values, NaN
    in ``y``, a continuous ``y`` for a classifier, a non-numeric ``y`` for a regressor.

    A private search withholds the message of an error raised once scoring has begun (it may
    quote a score), and scikit-learn turns a failed fit into a missing score: without this
    check such data end in an error that names neither. The messages name the parameter and
    the problem, never a value. Checked only where it can be said without fitting anything:
    ``X`` that is not one numeric array (a data frame of mixed columns, text) is left to the
    estimator.
    """
    from sklearn.base import is_regressor
    from sklearn.utils import get_tags
    from sklearn.utils.multiclass import type_of_target

    name = type(estimator).__name__
    values = _numeric(X)
    if values is not None:
        if np.isinf(values).any():
            raise ValueError(
                f"X contains infinity, which {name} cannot take: replace it (for example by "
                "NaN and an imputer) before the search."
            )
        first = _first_step(estimator)
        if (
            np.isnan(values).any()
            and first is not None
            and not get_tags(first).input_tags.allow_nan
        ):
            raise ValueError(
                f"X contains NaN (missing values), which {name} does not accept: impute them "
                "(a SimpleImputer step in a pipeline) or use an estimator that takes them "
                "(HistGradientBoostingClassifier or HistGradientBoostingRegressor)."
            )
    if y is None:
        return
    target = np.asarray(y)
    numeric = _numeric(target)
    if numeric is not None and np.isnan(numeric).any():
        raise ValueError("y contains NaN: every record needs a target.")
    if is_regressor(estimator) and numeric is None:
        raise ValueError(
            f"y holds values that are not numbers, and {name} is a regressor: pass numeric "
            "targets, or a classifier for class labels."
        )
    if is_classifier(estimator) and type_of_target(target).startswith("continuous"):
        raise ValueError(
            f"y is continuous (real numbers that are not class labels), and {name} is a "
            "classifier: pass class labels, or a regressor for a continuous target."
        )


def _first_step(estimator: Any) -> Any:
    """What reads ``X`` first: a pipeline's first step (``None``: a step that routes columns,
    whose estimators decide)."""
    while hasattr(estimator, "steps"):
        steps = [s for _, s in estimator.steps if s not in (None, "passthrough")]
        if not steps:
            return None
        estimator = steps[0]
    if hasattr(estimator, "transformers") or hasattr(estimator, "transformer_list"):
        return None
    return estimator


def _numeric(values: Any) -> np.ndarray | None:
    """``values`` as a float array, or ``None`` when they are not all numbers (sparse: its
    stored values)."""
    data = getattr(values, "data", None) if hasattr(values, "tocsr") else values
    try:
        out = np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        return None
    return out


class ScoringPlan:
    """The metrics of a search's ``scoring``: which one is optimized, which are released, and
    each one's range.

    The optimized metric is the only one with ``scoring`` a string or ``None``, and ``refit``
    among several. Without privacy nothing else is decided. With privacy the optimized metric
    is always released and needs a range (``value_range``, or the scorer's known range:
    :func:`known_score_range`); another metric is released only when ``value_range`` names it,
    since each costs one more report per candidate.

    Parameters
    ----------
    scoring, refit, estimator
        The search's.
    ranges : mapping
        The search's ``value_range`` as its privacy plan checked it
        (:attr:`privtune.plan.PrivacyPlan.ranges`): ``{metric: (lo, hi)}``, the key ``None``
        for the optimized metric.
    fixed_range : tuple of float, optional
        The optimized metric's range when privtune computes the metric itself (the record
        unit); ``value_range`` then has been read already.

    Attributes
    ----------
    metric : str or None
        The optimized metric, once :meth:`setup` has run.
    reported : list of str
        The released metrics, the optimized one first (with privacy).
    """

    def __init__(
        self,
        scoring: Any,
        refit: Any,
        estimator: Any,
        ranges: Mapping[str | None, tuple[float, float]],
        *,
        fixed_range: tuple[float, float] | None = None,
    ) -> None:
        self.scoring, self.refit, self.estimator = scoring, refit, estimator
        self.ranges: dict[str | None, tuple[float, float]] = (
            {None: fixed_range} if fixed_range is not None else dict(ranges)
        )
        self.metric: str | None = None
        self.reported: list[str] = []

    def expected_metrics(self) -> list[str] | None:
        """The metric names ``cv_results_`` will have, ``None`` for a callable scoring."""
        scoring = self.scoring
        if scoring is None or isinstance(scoring, str):
            return ["score"]
        if isinstance(scoring, dict):
            return list(scoring)
        if isinstance(scoring, (list, tuple)):
            return [str(s) for s in scoring]
        return None

    def range_of(self, metric: str, optimized: bool) -> tuple[float, float] | None:
        """The declared or known range of ``metric``."""
        if metric in self.ranges:
            return self.ranges[metric]
        if optimized and None in self.ranges:
            return self.ranges[None]
        scoring = self.scoring
        if metric == "score" and not isinstance(scoring, (list, tuple, dict)):
            return known_score_range(scoring, self.estimator)
        if isinstance(scoring, (list, tuple)):
            return known_score_range(metric)
        if isinstance(scoring, dict) and isinstance(scoring.get(metric), str):
            return known_score_range(scoring[metric])
        return None

    @property
    def optimized_range(self) -> tuple[float, float]:
        """The optimized metric's range (known once :meth:`setup` ran with privacy)."""
        assert self.metric is not None
        declared = self.range_of(self.metric, True)
        assert declared is not None
        return declared

    def n_reported_planned(self) -> int:
        """Reports per candidate: the optimized metric and every other one named in
        ``value_range`` (known before any fit, for a total budget)."""
        return reports_per_candidate(self.refit, self.ranges)

    def setup(
        self, metrics: list[str], *, private: bool, single: bool = False, planned: int | None = None
    ) -> None:
        """Decide the optimized and the released metrics from ``cv_results_``'s ``metrics``.

        Parameters
        ----------
        metrics : list of str
        private : bool
            Whether scores are released (a range is then required).
        single : bool, default=False
            Only the optimized metric may be released (private selection).
        planned : int, optional
            The reports per candidate a total budget was spread over.
        """
        if metrics == ["score"]:
            metric = "score"
        elif isinstance(self.refit, str) and self.refit in metrics:
            metric = self.refit
        else:
            raise clean(
                ValueError(
                    "With several metrics, refit must name the metric to optimize (one of "
                    f"{metrics}); got refit={self.refit!r}."
                )
            )
        unknown = [m for m in self.ranges if m is not None and m not in metrics]
        if unknown:
            raise clean(
                ValueError(f"value_range names unknown metrics {unknown}; metrics: {metrics}.")
            )
        self.metric = metric
        if not private:
            return
        if self.range_of(metric, True) is None:
            raise clean(
                ValueError(
                    f"value_range is required with epsilon for scoring={self.scoring!r}: the "
                    f"range of {metric!r} is not known. Pass value_range=(lo, hi), the range the "
                    "score can take (not the one observed, which would leak)."
                )
            )
        self.reported = [metric] + [m for m in metrics if m != metric and m in self.ranges]
        if single and len(self.reported) > 1:
            raise clean(
                ValueError(
                    "publish='best' publishes the pick's optimized score only; value_range "
                    f"names other metrics {self.reported[1:]}. Remove them, or use "
                    "publish='scores'."
                )
            )
        if planned is not None and len(self.reported) != planned:
            raise clean(
                PrivacyError(
                    f"privacy_budget was spread over {planned} reported metric(s) per candidate "
                    f"(the optimized one and those named in value_range), but the scoring "
                    f"reports {self.reported}. Name the metrics to report in value_range."
                )
            )


def reports_per_candidate(refit: Any, ranges: Mapping[str | None, Any]) -> int:
    """The reports a private search releases per candidate: the optimized metric (``refit``'s,
    or the one score) and every other one named in ``ranges``."""
    metric = refit if isinstance(refit, str) else "score"
    return 1 + len({k for k in ranges if k is not None and k != metric})
