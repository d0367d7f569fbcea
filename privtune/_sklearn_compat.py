"""What differs between the scikit-learn versions privtune supports (1.6 to 1.9), in one place.

scikit-learn 1.9 added callbacks (:mod:`sklearn.callback`). With them, ``BaseSearchCV.fit``
passes a callback context to ``_run_search``, ``evaluate_candidates`` accepts one, and the
checked splitter (``_checked_cv_orig``) and ``n_splits_`` are set before ``_run_search`` runs.
Before 1.9 there are no callbacks, ``evaluate_candidates`` takes no context, and the splitter
and ``n_splits_`` stay local to ``fit`` until the search has ended. The searches of
:mod:`privtune.sklearn` go through the helpers below rather than test the version themselves;
on scikit-learn 1.9 and later each helper is exactly what the search did before.
"""

from __future__ import annotations

from collections.abc import Callable
from inspect import signature
from typing import Any

from sklearn.base import is_classifier
from sklearn.model_selection import check_cv
from sklearn.model_selection._search import BaseSearchCV
from sklearn.utils.validation import _check_method_params, indexable

__all__ = ["CALLBACKS", "evaluate", "progress_bar", "splitter_before_search"]

#: Whether scikit-learn has callbacks (1.9 and later): ``BaseSearchCV`` then hands
#: ``_run_search`` a callback context and sets ``n_splits_`` before the search.
CALLBACKS: bool = "callback_ctx" in signature(BaseSearchCV._run_search).parameters


def progress_bar() -> type | None:
    """:class:`sklearn.callback.ProgressBar`, or ``None`` where scikit-learn has no callbacks.

    Returns
    -------
    type or None
        The only callback class a private search accepts.
    """
    if not CALLBACKS:
        return None
    from sklearn.callback import ProgressBar

    return ProgressBar


def evaluate(evaluate_candidates: Callable[..., dict], candidates: list[dict], ctx: Any) -> dict:
    """``evaluate_candidates(candidates)``, with the callback context ``ctx`` when there is one.

    Parameters
    ----------
    evaluate_candidates : callable
        The function ``BaseSearchCV.fit`` hands to ``_run_search``.
    candidates : list of dict
        The configurations to cross-validate.
    ctx : CallbackContext or None
        The round's callback context; always ``None`` without callbacks (scikit-learn before
        1.9, whose ``evaluate_candidates`` does not accept one).

    Returns
    -------
    dict
        The results of every candidate so far, formatted like ``cv_results_``.
    """
    if ctx is None:
        return evaluate_candidates(candidates)
    return evaluate_candidates(candidates, callback_ctx=ctx)


def splitter_before_search(search: BaseSearchCV, X: Any, y: Any, params: dict) -> Any:
    """The ``cv`` for ``search`` to fit with, its splitter and ``n_splits_`` set beforehand.

    scikit-learn 1.9 sets ``search._checked_cv_orig`` and ``search.n_splits_`` before
    ``_run_search``, which sizes its rounds with them: there ``search.cv`` is returned as it is.
    Before 1.9 this sets both as 1.9 would, and returns the checked splitter, for ``fit`` to
    use in place of ``search.cv`` (a ``cv`` given as an iterable of splits is then consumed
    once, as scikit-learn consumes it).

    Parameters
    ----------
    search : BaseSearchCV
        The search about to call ``BaseSearchCV.fit``.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or (n_samples, n_outputs), or None
    params : dict
        The parameters of ``fit`` (``groups`` goes to the splitter).

    Returns
    -------
    cross-validation generator or int or iterable
        What ``search.cv`` should be while ``BaseSearchCV.fit`` runs.
    """
    if CALLBACKS:
        return search.cv
    X, y = indexable(X, y)
    routed = search._get_routed_params_for_fit(_check_method_params(X, params=params))
    cv = check_cv(search.cv, y, classifier=is_classifier(search.estimator))
    search._checked_cv_orig = cv
    search.n_splits_ = cv.get_n_splits(X, y, **routed.splitter.split)
    return cv
