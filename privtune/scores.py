"""What both searches need of scikit-learn's estimators and scorers, below both.

- :func:`known_score_range`: the range of a scorer's values, where scikit-learn's definition
  fixes it; the scikit-learn search and the federated search take the curator's range from here
  when the user gives none.
- :func:`check_space_params`: every parameter of a search space is one the estimator has.
"""

from __future__ import annotations

from typing import Any

from sklearn.base import is_classifier

__all__ = ["check_space_params", "known_score_range"]

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
