"""Record-level scores: a metric that is a mean of a bounded per-record value, computed by
privtune on a hold-out validation set, so that its sensitivity holds by construction.

Under the record unit (:mod:`privtune.privacy.units`) the secret is one validation record. A
score that is the mean over the ``n_val`` validation records of a per-record value clipped to
``[lo, hi]`` moves by at most ``(hi - lo) / n_val`` when one record is replaced by any other
(replace-one, ``n_val`` public): the model does not change (it never saw the validation
records), only that record's term of the mean does, and the term is confined to ``[lo, hi]``.
privtune computes the per-record values itself from the estimator's predictions, so a user
cannot declare a sensitivity that privtune does not check.

Supported metrics (the names of scikit-learn's scorers), with the per-record value:

- ``"accuracy"``: 1 if the prediction is right, else 0; range ``(0, 1)``.
- ``"neg_log_loss"``: ``log p(y | x)``, clipped; ``value_range=(-L, 0)`` required.
- ``"neg_mean_absolute_error"``: ``-|y - f(x)|``, clipped; ``value_range=(-L, 0)`` required.
- ``"neg_mean_squared_error"``: ``-(y - f(x))^2``, clipped; ``value_range=(-L, 0)`` required.

For the losses, ``value_range=(-L, 0)`` is the clip: a per-record loss above ``L`` counts as
``L``, so the score is the mean of ``max(-loss, -L)``, not the loss itself. (The error rate is
``1 - accuracy``.) Metrics that are not such a mean are refused: ROC AUC and average precision
(a pairwise statistic: one record moves the score by up to ``1 / min(n_pos, n_neg)``, a bound
that depends on private class counts), balanced accuracy, F1, precision and recall (ratios
whose denominators are private counts; one record can move them by a constant), R² and
explained variance (divided by the validation targets' own variance), and any callable scorer.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._checks import check_int
from .privacy.errors import check_budget_pair, check_epsilon, check_value_range
from .privacy.units import PrivacyUnit
from .record_choice import Proposals, proposals

if TYPE_CHECKING:
    from .batch import BatchOptimization

__all__ = [
    "RECORD_METRICS",
    "RecordMetric",
    "RecordObjective",
    "check_declared_epsilon",
    "check_public_bounds",
    "epsilon_parameters",
    "fold_score",
    "holdout_split",
    "record_metric",
    "training_folds",
]


def _correct(estimator: Any, X: Any, y: Any) -> np.ndarray:
    return (np.asarray(estimator.predict(X)) == np.asarray(y)).astype(float)


def _log_likelihood(estimator: Any, X: Any, y: Any) -> np.ndarray:
    proba = np.asarray(estimator.predict_proba(X), dtype=float)
    classes = np.asarray(estimator.classes_)
    y = np.asarray(y)
    index = np.searchsorted(classes, y)
    index = np.clip(index, 0, len(classes) - 1)
    known = classes[index] == y  # a label the model never saw has probability 0
    p = np.where(known, proba[np.arange(len(y)), index], 0.0)
    with np.errstate(divide="ignore"):
        return np.log(p)  # -inf for p = 0, clipped to the range's low end


def _neg_absolute_error(estimator: Any, X: Any, y: Any) -> np.ndarray:
    pred = np.asarray(estimator.predict(X), dtype=float).reshape(len(y), -1)
    return -np.mean(np.abs(np.asarray(y, dtype=float).reshape(len(y), -1) - pred), axis=1)


def _neg_squared_error(estimator: Any, X: Any, y: Any) -> np.ndarray:
    pred = np.asarray(estimator.predict(X), dtype=float).reshape(len(y), -1)
    return -np.mean((np.asarray(y, dtype=float).reshape(len(y), -1) - pred) ** 2, axis=1)


#: The supported metrics: per-record function and fixed range (``None``: the clip is required).
RECORD_METRICS: dict[str, tuple[Callable[..., np.ndarray], tuple[float, float] | None]] = {
    "accuracy": (_correct, (0.0, 1.0)),
    "neg_log_loss": (_log_likelihood, None),
    "neg_mean_absolute_error": (_neg_absolute_error, None),
    "neg_mean_squared_error": (_neg_squared_error, None),
}

_REFUSED = {
    ("roc_auc", "average_precision"): "a pairwise statistic: one record moves it by up to "
    "1 / min(n_pos, n_neg), a bound that depends on private class counts",
    ("balanced_accuracy", "f1", "precision", "recall", "jaccard", "matthews"): "a ratio whose "
    "denominator is a private count: one record can move it by a constant",
    ("r2", "explained_variance"): "divided by the validation targets' own variance, which one "
    "record can change without bound",
}


@dataclass(frozen=True)
class RecordMetric:
    """A score that is the mean of a per-record value clipped to ``value_range``.

    Call it as a scikit-learn scorer, ``metric(estimator, X_val, y_val)``. Build it with
    :func:`record_metric`.

    Attributes
    ----------
    name : str
        The scorer's name (a key of :data:`RECORD_METRICS`).
    value_range : tuple of float
        ``(lo, hi)``: each record's value is clipped to it.
    """

    name: str
    value_range: tuple[float, float]

    def per_record(self, estimator: Any, X: Any, y: Any) -> np.ndarray:
        """Each validation record's value, clipped to ``value_range``."""
        lo, hi = self.value_range
        values = RECORD_METRICS[self.name][0](estimator, X, y)
        return np.clip(np.nan_to_num(values, nan=lo, neginf=lo, posinf=hi), lo, hi)

    def __call__(self, estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> float:
        if sample_weight is not None:
            raise ValueError(
                "sample_weight is not available under the record unit: a weighted mean gives "
                "one record more than a 1 / n_val share of the score, so the sensitivity "
                "(hi - lo) / n_val would not hold."
            )
        return float(np.mean(self.per_record(estimator, X, y)))

    def sensitivity(self, n_val: int) -> float:
        """``(hi - lo) / n_val``: the most one replaced record can move the score."""
        return PrivacyUnit.record(n_val).sensitivity(self.value_range)


def _refusal(scoring: Any) -> str:
    supported = ", ".join(repr(m) for m in RECORD_METRICS)
    if callable(scoring):
        why = (
            "a callable scorer's sensitivity is not known to privtune (a user cannot declare "
            "one that privtune does not check)"
        )
    else:
        why = "its sensitivity is not a record's 1 / n_val share of a bounded range"
        for names, reason in _REFUSED.items():
            if isinstance(scoring, str) and scoring.startswith(names):
                why = reason
                break
    return (
        f"scoring={scoring!r} is not available under privacy_unit='record': {why}. Supported: "
        f"{supported} (means of a bounded per-record value; accuracy is 1 - the error rate). "
        "Or use privacy_unit='score', which protects the whole score."
    )


def record_metric(
    scoring: Any = "accuracy", estimator: Any = None, value_range: Any = None
) -> RecordMetric:
    """The record-level metric of ``scoring``, or a ``ValueError`` saying why it is refused.

    Parameters
    ----------
    scoring : str or None, default="accuracy"
        A name of :data:`RECORD_METRICS`; ``None`` is the classifier's default score
        (accuracy). Anything else is refused with the reason.
    estimator : estimator, optional
        With ``scoring=None``: a classifier (a regressor's default score, R², is refused).
    value_range : tuple of float, optional
        The per-record range ``(lo, hi)``, checked as a pair (a privacy plan's, or
        :class:`RecordObjective`'s); each record's value is clipped to it. Fixed for accuracy
        (``(0, 1)``; another value is an error); required for the losses, as ``(-L, 0)`` with
        the clip ``L > 0``.

    Returns
    -------
    RecordMetric

    Examples
    --------
    >>> from privtune.records import record_metric
    >>> record_metric("accuracy").sensitivity(5000)
    0.0002
    >>> record_metric("neg_log_loss", value_range=(-5.0, 0.0)).value_range
    (-5.0, 0.0)
    """
    if scoring is None:
        from sklearn.base import is_classifier

        if estimator is None or not is_classifier(estimator):
            raise ValueError(_refusal("r2"))
        scoring = "accuracy"
    if not isinstance(scoring, str) or scoring not in RECORD_METRICS:
        raise ValueError(_refusal(scoring))
    fixed = RECORD_METRICS[scoring][1]
    if fixed is not None:
        if value_range is not None and tuple(value_range) != fixed:
            raise ValueError(
                f"value_range for scoring={scoring!r} under the record unit is {fixed}, the "
                f"range of each record's value; got {value_range!r}."
            )
        return RecordMetric(scoring, fixed)
    if value_range is None:
        raise ValueError(
            f"value_range=(-L, 0) is required for scoring={scoring!r} under privacy_unit="
            "'record': it is the clip of each record's loss (a loss above L counts as L), which "
            "bounds one record's share of the score. For example value_range=(-10.0, 0.0)."
        )
    lo, hi = (float(v) for v in value_range)
    if hi != 0.0:
        raise ValueError(
            f"value_range for scoring={scoring!r} must be (-L, 0): a negated loss is at most 0; "
            f"got {value_range!r}."
        )
    return RecordMetric(scoring, (lo, hi))


class RecordObjective:
    """An Optuna objective under the record unit: training records that propose, validation
    records that the one private choice reads.

    ``objective(trial)`` builds an estimator with ``make_estimator(trial)`` (which calls the
    trial's ``suggest_*``) and returns its ``cv``-fold cross-validated record-level metric on
    the **training** records: the value Optuna stores, which reads no validation record. Pass
    it to :meth:`privtune.PrivateGPUCBSampler.optimize` with ``privacy_unit="record"``: the
    sampler proposes from those scores, and :meth:`~privtune.PrivateGPUCBSampler.recommend`
    makes one private choice among the trials on the validation records
    (:meth:`validation_scores`, read in this process only), whose sensitivity is
    ``(hi - lo) / n_val`` by construction (:mod:`privtune.record_choice`).

    Protected: each of the ``n_val`` validation records. The training records are not: the
    stored values are computed from them exactly.

    Parameters
    ----------
    make_estimator : callable
        ``make_estimator(trial) -> estimator``, an unfitted estimator with the trial's
        parameters.
    X_train, y_train : array-like
        The training data.
    X_val, y_val : array-like
        The validation data (``n_val = len(y_val)`` records, public).
    scoring : str, default="accuracy"
        A name of :data:`RECORD_METRICS`.
    value_range : tuple of float, optional
        The per-record range (:func:`record_metric`).
    cv : int, default=3
        The folds of the training records that score a trial (stratified for a classifier,
        not shuffled: every trial is scored on the same folds).
    untuned : estimator, optional
        The estimator you would use without tuning (``SVC()``, say), for when its
        configuration cannot be enqueued as a trial: a value outside the space, such as
        ``max_depth=None`` or ``gamma="scale"``. :meth:`~privtune.PrivateGPUCBSampler.recommend`
        then makes it the choice's baseline (candidate 0, scored on the training records like
        a trial, in the data owner's process), as an enqueued untuned trial with
        ``baseline=0`` would be. Cloned before each fit.
    estimator_epsilon : float, tuple of float or "auto", optional
        For an estimator that is differentially private itself. ``"auto"``: every record,
        training and validation, gets the sampler's ``privacy_budget`` and nothing else is
        asked: :meth:`~privtune.PrivateGPUCBSampler.optimize` sets the estimator's own
        ``epsilon`` and makes one private selection among privately trained models
        (:func:`privtune.private_models.select_private_model`, the scikit-learn searches'
        ``estimator_epsilon="auto"``), and :attr:`model_` is the deployed model. A number:
        each fit's guarantee (``epsilon``-DP, or ``(epsilon, delta)``-DP, in the training
        records), which the sampler under the record unit refuses: its trials store exact
        scores of the training records. privtune cannot check the estimator's claim, except
        that its own ``epsilon`` must not exceed the number (:func:`check_declared_epsilon`)
        and that a diffprivlib model must not read its bounds from the data
        (:func:`check_public_bounds`), both before each fit.

    Attributes
    ----------
    metric : RecordMetric
    n_val : int
    unit : PrivacyUnit
        ``PrivacyUnit.record(n_val)``.
    untuned : estimator or None
    model_ : estimator
        With ``estimator_epsilon="auto"``, after the selection: the deployed model (the pick's
        own model, fitted on the training records; no refit), in the data owner's process
        only.
    """

    def __init__(
        self,
        make_estimator: Callable[[Any], Any],
        X_train: Any,
        y_train: Any,
        X_val: Any,
        y_val: Any,
        *,
        scoring: str = "accuracy",
        value_range: Any = None,
        cv: int = 3,
        untuned: Any = None,
        estimator_epsilon: float | tuple[float, float] | str | None = None,
    ) -> None:
        if not callable(make_estimator):
            raise TypeError(
                f"make_estimator must be callable (trial -> estimator), got "
                f"{type(make_estimator).__name__}."
            )
        if untuned is not None and not (hasattr(untuned, "fit") and hasattr(untuned, "get_params")):
            raise TypeError(
                "untuned must be an unfitted scikit-learn estimator (the one you would use "
                f"without tuning, e.g. SVC()), got {type(untuned).__name__}."
            )
        n_val = len(y_val)
        if len(X_val) != n_val or len(X_train) != len(y_train):
            raise ValueError(
                "X_val and y_val (and X_train and y_train) must have the same number of rows; "
                f"got {len(X_val)} and {n_val} ({len(X_train)} and {len(y_train)})."
            )
        if not isinstance(n_val, numbers.Integral) or n_val < 1:
            raise ValueError("the validation set must hold at least one record.")
        self.make_estimator: Callable[[Any], Any] = make_estimator
        self.X_train: Any = X_train
        self.y_train: Any = y_train
        self.X_val: Any = X_val
        self.y_val: Any = y_val
        checked = None if value_range is None else check_value_range(value_range)
        self.metric: RecordMetric = record_metric(scoring, None, checked)
        self.n_val: int = int(n_val)
        self.unit: PrivacyUnit = PrivacyUnit.record(self.n_val)
        self.cv: int = check_int("cv", cv, minimum=2)
        self.untuned: Any = untuned
        #: With ``estimator_epsilon="auto"``, after the selection: the deployed model.
        self.model_: Any = None
        self.estimator_epsilon = estimator_epsilon
        #: The estimator's own guarantee per fit, ``(epsilon, delta)``, or ``None``.
        self.fit_guarantee: tuple[float, float] | None = None
        #: ``estimator_epsilon="auto"``: every record protected by the sampler's budget.
        self.every_record: bool = isinstance(estimator_epsilon, str)
        if self.every_record and estimator_epsilon != "auto":
            raise ValueError(
                f"estimator_epsilon must be a number > 0, a pair (epsilon, delta) or 'auto', "
                f"got {estimator_epsilon!r}."
            )
        if estimator_epsilon is not None and not self.every_record:
            if isinstance(estimator_epsilon, tuple):
                self.fit_guarantee = check_budget_pair(estimator_epsilon)
            else:
                self.fit_guarantee = (check_epsilon(estimator_epsilon, "estimator_epsilon"), 0.0)

    @property
    def value_range(self) -> tuple[float, float]:
        return self.metric.value_range

    def __call__(self, trial: Any) -> float:
        """The trial's ``cv``-fold cross-validated score on the training records (no
        validation record is read)."""
        return self.training_score(self._estimator(trial))

    def training_score(self, estimator: Any) -> float:
        """``estimator``'s ``cv``-fold cross-validated score on the training records, on the
        folds every trial is scored on (no validation record is read)."""
        self._check_bounds(estimator)
        folds = training_folds(estimator, self.X_train, self.y_train, n_folds=self.cv)
        return float(
            np.mean(
                [
                    fold_score(estimator, self.X_train, self.y_train, fit, test, self.metric)
                    for fit, test in folds
                ]
            )
        )

    def validation_scores(self, estimators: Sequence[Any]) -> np.ndarray:
        """Each estimator's score on the validation records, a clone of it fitted on every
        training record: what the one private choice reads, in the data owner's process only.

        An adapter passes ``make_estimator``'s estimator of each candidate's parameters (and
        :attr:`untuned`). A fit or a prediction that fails scores NaN (the choice counts it
        as the worst end of the range), and warnings are silenced: what they say could
        depend on the validation records. Never store, print or log what this returns.
        """
        from sklearn.base import clone

        out = np.full(len(estimators), np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, estimator in enumerate(estimators):
                self._check_bounds(estimator)  # outside the try: a refusal is no failed fit
                try:
                    model = clone(estimator).fit(self.X_train, self.y_train)
                    out[i] = self.metric(model, self.X_val, self.y_val)
                except Exception:  # a failed candidate is the worst one, as in a search
                    out[i] = np.nan
        return out

    def _estimator(self, trial: Any) -> Any:
        estimator = self.make_estimator(trial)
        self._check_bounds(estimator)
        return estimator

    def _check_bounds(self, estimator: Any) -> None:
        if self.fit_guarantee is not None:  # before the fit reads anything
            check_declared_epsilon(estimator, self.fit_guarantee[0])
            check_public_bounds(estimator)


#: The folds of the training records that score a proposal under the record unit.
TRAINING_FOLDS = 3


def training_folds(
    estimator: Any, X: Any, y: Any, groups: Any = None, *, n_folds: int = TRAINING_FOLDS
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The folds of the training records that score a proposal under the record unit: grouped
    with ``groups``, stratified for a classifier, never shuffled (every proposal is scored on
    the same folds). The scikit-learn search and :class:`RecordObjective` both use them."""
    from sklearn.base import is_classifier
    from sklearn.model_selection import GroupKFold, check_cv

    if groups is not None:
        return list(GroupKFold(n_folds).split(X, y, groups))
    return list(check_cv(n_folds, y, classifier=is_classifier(estimator)).split(X, y))


def fold_score(
    estimator: Any, X: Any, y: Any, fit: np.ndarray, test: np.ndarray, metric: RecordMetric
) -> float:
    """``metric`` of a clone of ``estimator`` fitted on the rows ``fit`` of ``X``, ``y``,
    on the rows ``test``."""
    from sklearn.base import clone
    from sklearn.utils import _safe_indexing

    model = clone(estimator).fit(_safe_indexing(X, fit), _safe_indexing(y, fit))
    return metric(model, _safe_indexing(X, test), _safe_indexing(y, test))


def training_proposals(
    bo: BatchOptimization,
    estimator: Any,
    metric: RecordMetric,
    X_train: Any,
    y_train: Any,
    groups: Any = None,
    *,
    n_iter: int,
    batch_size: int = 1,
    n_jobs: int | None = None,
    pre_dispatch: Any = "2*n_jobs",
    error_score: Any = np.nan,
    untuned: Mapping[str, Any] | None = None,
) -> Proposals:
    """The candidates a batch optimization proposes on the training records alone, with
    their cross-validated scores there: the record unit's proposals
    (:func:`privtune.record_choice.proposals`: in order, repeats dropped, the untuned
    configuration ``untuned`` apart).

    ``bo`` proposes ``n_iter`` candidates, ``batch_size`` at a time; each is a clone of
    ``estimator`` with the candidate's parameters, scored by :func:`fold_score` on
    :func:`training_folds` (in parallel over ``n_jobs``; a failed fit scores ``error_score``,
    or raises when it is ``"raise"``), and the batch's mean scores are told to ``bo`` before
    the next batch. No validation record is read.
    """
    from sklearn.utils.parallel import Parallel, delayed

    folds = training_folds(estimator, X_train, y_train, groups)
    q = min(max(int(batch_size), 1), n_iter)
    n = bo.n_candidates(n_iter, repeats_help=False)
    parallel = Parallel(n_jobs=n_jobs, pre_dispatch=pre_dispatch)
    score = functools.partial(_score_or_error, estimator, X_train, y_train, metric)
    rows: list[tuple[int, dict, float]] = []
    for r in range(math.ceil(n / q)):
        U, candidates, n_extra = bo.batch(r, q, min(q, n - r * q))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fits' warnings, as in a search
            per_fold = parallel(
                delayed(score)(params, fit, test, error_score)
                for params in candidates
                for fit, test in folds
            )
        means = np.asarray(per_fold, dtype=float).reshape(len(candidates), len(folds)).mean(1)
        rows += [(len(rows), params, float(v)) for params, v in zip(candidates, means, strict=True)]
        bo.record(U, np.array([v for _, _, v in rows]), n_extra)
    return proposals(rows, untuned=untuned)


def _score_or_error(estimator, X, y, metric, params, fit, test, error_score) -> float:
    """One fold's score of ``estimator`` with ``params`` (a failed fit: ``error_score``)."""
    from sklearn.base import clone

    try:
        return fold_score(clone(estimator).set_params(**params), X, y, fit, test, metric)
    except Exception:
        if error_score == "raise":
            raise
        return float(error_score)


def holdout_split(
    estimator: Any,
    cv: Any,
    validation_fraction: float,
    random_state: int | None,
    X: Any,
    y: Any,
    groups: Any = None,
    *,
    stratify: bool = True,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The one hold-out split a search scores on under the record unit, checked before any fit.

    ``cv=None``: a hold-out of ``validation_fraction`` of the records (stratified for a
    classifier unless ``stratify=False``, seeded by ``random_state``, 0 when ``None``; a
    stratified split depends on the labels, so one record can change which others are held
    out, which an end-to-end guarantee cannot allow). Otherwise ``cv`` must give one
    split: with K folds each record is in the training set of K - 1 fold models, and a
    non-private estimator's fit can depend on one record without bound. The validation
    records must not be among the training ones.

    Returns
    -------
    list of (train, test)
        The one split, as ``cv`` for scikit-learn's search machinery.
    """
    from sklearn.base import is_classifier
    from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit, check_cv

    classifier = is_classifier(estimator)
    if cv is None:
        holdout = StratifiedShuffleSplit if classifier and stratify else ShuffleSplit
        splitter = holdout(
            n_splits=1,
            test_size=validation_fraction,
            random_state=0 if random_state is None else random_state,
        )
    else:
        splitter = check_cv(cv, y, classifier=classifier)
        k = splitter.get_n_splits(X, y, groups)
        if k != 1:
            raise ValueError(
                f"privacy_unit='record' needs one hold-out split; cv gives {k}. With K folds "
                "each record trains K - 1 of the fold models, and its influence on their scores "
                "is unbounded for an estimator that is not differentially private. Pass "
                "cv=None (a hold-out of validation_fraction, stratified for a classifier) or a "
                "splitter with one split, e.g. ShuffleSplit(n_splits=1, test_size=0.2, "
                "random_state=0)."
            )
    train, test = (np.asarray(a) for a in next(iter(splitter.split(X, y, groups))))
    if len(test) == 0 or np.intersect1d(train, test).size:
        raise ValueError(
            "privacy_unit='record' needs a hold-out split whose validation records are not "
            "among the training ones, and at least one validation record."
        )
    return [(train, test)]


def epsilon_parameters(estimator: Any) -> tuple[str, ...]:
    """The parameters of ``estimator`` that set its own epsilon: ``epsilon``, and
    ``<step>__epsilon`` for every step of a pipeline or meta-estimator that has one
    (diffprivlib's models and preprocessors; any estimator whose fit is ``epsilon``-DP can
    take part by naming its parameter ``epsilon``)."""
    if not hasattr(estimator, "get_params"):
        return ()
    params = estimator.get_params(deep=True)
    return tuple(n for n in params if n == "epsilon" or n.endswith("__epsilon"))


def check_declared_epsilon(estimator: Any, declared: float, tuned: Any = ()) -> None:
    """Refuse, before any fit, an ``estimator_epsilon`` below the estimator's own epsilon.

    The end-to-end guarantee is computed from ``estimator_epsilon``, the guarantee of one fit
    the user declares; the estimator's fit is as private as its own ``epsilon`` parameters
    say (:func:`epsilon_parameters`; a pipeline's steps fit in sequence, so theirs add up). A
    declaration below that sum would state a guarantee the fits do not have, so the search
    fails closed; one above it states a weaker guarantee than the fits have, which is true.
    The space may not tune an ``epsilon`` parameter: each fit's guarantee would then depend
    on the configuration.

    Parameters
    ----------
    estimator : estimator
        The estimator the search tunes (or one candidate of it).
    declared : float
        ``estimator_epsilon``'s epsilon.
    tuned : iterable of str
        The names of the parameters the space sets.

    Raises
    ------
    ValueError
        Naming the parameters, their epsilon and the declared one.
    """
    names = epsilon_parameters(estimator)
    in_space = sorted(set(tuned) & set(names))
    if in_space:
        raise ValueError(
            f"estimator_epsilon: the space tunes {', '.join(in_space)}, the estimator's own "
            "epsilon, so one fit's guarantee would depend on the configuration. Set it on the "
            "estimator (at most estimator_epsilon) and leave it out of the space, or use "
            "estimator_epsilon='auto', which sets it from the total budget."
        )
    params = estimator.get_params(deep=True) if names else {}
    values = {n: params[n] for n in names}
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in values.values()):
        raise ValueError(
            f"estimator_epsilon: the estimator's own epsilon must be a number to be checked "
            f"against the declared guarantee, got {values!r}."
        )
    own = float(sum(values.values()))
    if own > float(declared) * (1.0 + 1e-9):
        listed = ", ".join(f"{n}={v:g}" for n, v in values.items())
        if len(values) > 1:
            listed += ": the steps' fits add up"
        raise ValueError(
            f"estimator_epsilon={float(declared):g} declares each fit {float(declared):g}-DP, "
            f"but the estimator's own epsilon is {own:g} ({listed}): "
            "the stated end-to-end guarantee would be false. Set estimator_epsilon to at least "
            f"{own:g}, or the estimator's epsilon to at most {float(declared):g}."
        )


#: The parameters of diffprivlib's models that, left ``None``, are read from the data at fit
#: time, which breaks the model's guarantee (diffprivlib warns with a ``PrivacyLeakWarning``).
DATA_DEPENDENT_PARAMETERS = ("bounds", "bounds_X", "bounds_y", "classes", "data_norm")


def check_public_bounds(estimator: Any, tuned: Any = ()) -> None:
    """Refuse, before any fit, a diffprivlib model that would read its bounds from the data.

    ``estimator_epsilon`` states each fit's guarantee; a diffprivlib model keeps it only when
    the range of the data (``bounds``, ``bounds_X``, ``bounds_y``, ``data_norm``) and the
    classes are given before the data is read. Left ``None`` they are computed from the
    training records, and diffprivlib warns that the guarantee is broken: the end-to-end claim
    would be false, so the search fails closed instead. Checked on the estimator and every
    estimator inside it (a pipeline's steps); parameters that the space tunes are the space's
    to set. A centered diffprivlib ``PCA`` does not read ``bounds``.

    Parameters
    ----------
    estimator : estimator
        The estimator the search tunes.
    tuned : iterable of str
        The names of the parameters the space sets (``step__param`` for nested ones).

    Raises
    ------
    ValueError
        Naming the first such parameter and what to give instead.
    """
    tuned = set(tuned)
    parts = [("", estimator)]
    if hasattr(estimator, "get_params"):
        parts += [
            (f"{name}__", value)
            for name, value in estimator.get_params(deep=True).items()
            if hasattr(value, "get_params")
        ]
    for prefix, part in parts:
        if not any(c.__module__.startswith("diffprivlib.") for c in type(part).__mro__):
            continue  # neither a diffprivlib model nor a subclass of one
        params = part.get_params(deep=False)
        for name in DATA_DEPENDENT_PARAMETERS:
            if name not in params or params[name] is not None or prefix + name in tuned:
                continue
            if name == "bounds" and params.get("centered", False):
                continue
            raise ValueError(
                f"estimator_epsilon: {type(part).__name__}'s {prefix + name}=None would be read "
                "from the training records at each fit, which breaks the estimator's own "
                "guarantee (diffprivlib warns with a PrivacyLeakWarning), so no end-to-end "
                f"guarantee can be stated. Give {prefix + name} before the data is read "
                "(the range of each feature, the largest row norm or the list of classes, from "
                "domain knowledge, not from the data)."
            )
