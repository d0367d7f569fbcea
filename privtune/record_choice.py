"""The record unit's choice, below both adapters: proposals, the shortlist, one private choice.

Under ``privacy_unit="record"`` a tuner proposes its candidates with exact scores on the
training records (which this unit does not protect), keeps those that score at least as well
as the untuned configuration there, and spends the whole budget on one private choice among
the untuned configuration and the rest, on the validation records. The scikit-learn search
(:class:`privtune.PrivateBOSearchCV`) and the Optuna sampler
(:class:`privtune.PrivateGPUCBSampler` with a :class:`privtune.RecordObjective`) both run it
through this module, so that on the same candidates, scores and noise seed they make the same
choice:

1. :func:`proposals`: the configurations evaluated on the training records, in order, with
   their training scores; repeats dropped, the untuned configuration apart;
2. :func:`shortlist`: the untuned configuration first, then each proposal whose training score
   is at least the untuned one's (every proposal when that score is unknown);
3. :func:`choose`: the one-shot choice (:func:`privtune.privacy.oneshot.one_shot_choice`)
   among the shortlist's validation scores, at the unit's sensitivity and the plan's noise
   seed, the whole budget spent once.

Steps 1 and 2 read the training scores only, so the shortlist is fixed before any validation
record is read, as the one-shot choice's guarantee needs (docs/privacy.md, "The record unit's
search"). The adapters compute the scores (scikit-learn's fits, an Optuna objective); nothing
here imports either.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .plan import PrivacyPlan
from .privacy.oneshot import OneShotPlan

__all__ = ["Choice", "Proposals", "Shortlist", "choose", "proposals", "shortlist"]


@dataclass(frozen=True)
class Proposals:
    """The configurations a tuner proposed on the training records, fixed before any
    validation record is read.

    Attributes
    ----------
    params : tuple of dict
        The distinct configurations, in the order first evaluated, the untuned one left out.
    training : numpy.ndarray
        Each one's score on the training records (NaN: its evaluation failed).
    keys : tuple
        Each one's key in the adapter (a trial's number, a candidate's position).
    untuned : dict or None
        The untuned configuration, ``None`` when there is none to keep.
    untuned_training : float
        Its score on the training records (NaN: not evaluated, or failed).
    untuned_key : object
        Its key in the adapter.
    """

    params: tuple[dict[str, Any], ...]
    training: np.ndarray
    keys: tuple[Any, ...]
    untuned: dict[str, Any] | None = None
    untuned_training: float = math.nan
    untuned_key: Any = None


def proposals(
    rows: Sequence[tuple[Any, Mapping[str, Any], float]],
    *,
    untuned: Mapping[str, Any] | None = None,
    untuned_key: Any = None,
    untuned_training: float = math.nan,
) -> Proposals:
    """The proposals of ``rows``, ``(key, params, training score)`` in evaluation order.

    A configuration evaluated again is kept once, at its first evaluation. The untuned
    configuration is the row whose key is ``untuned_key``, or else whose parameters equal
    ``untuned`` (each value of ``untuned`` that the row names); it is set apart, with its
    training score, as the choice's candidate 0. Without either, there is no untuned
    configuration and every row is a proposal.

    Parameters
    ----------
    rows : sequence of (key, mapping, float)
    untuned : mapping, optional
        The untuned configuration's values (a search's estimator's own).
    untuned_key : object, optional
        The untuned configuration's key (an Optuna study's baseline trial number).
    untuned_training : float, optional
        The untuned configuration's training score when no row is the untuned one (an
        estimator scored apart, a :class:`privtune.RecordObjective`'s ``untuned``).

    Returns
    -------
    Proposals
    """
    params: list[dict[str, Any]] = []
    training: list[float] = []
    keys: list[Any] = []
    found: tuple[Any, dict[str, Any], float] | None = None
    for key, p, score in rows:
        p = dict(p)
        if found is None and _is_untuned(key, p, untuned, untuned_key):
            found = (key, p, float(score))
        elif p not in params and (found is None or p != found[1]):
            params.append(p)
            training.append(float(score))
            keys.append(key)
    if found is None and untuned is not None:
        found = (untuned_key, dict(untuned), float(untuned_training))  # scored apart, or not
    return Proposals(
        tuple(params),
        np.asarray(training, dtype=float),
        tuple(keys),
        None if found is None else found[1],
        math.nan if found is None else found[2],
        None if found is None else found[0],
    )


def _is_untuned(
    key: Any, params: dict[str, Any], untuned: Mapping[str, Any] | None, untuned_key: Any
) -> bool:
    if untuned_key is not None:
        return bool(key == untuned_key)
    if untuned is None:
        return False
    return all(
        name in untuned and (untuned[name] is value or untuned[name] == value)
        for name, value in params.items()
    )


@dataclass(frozen=True)
class Shortlist:
    """The candidates of the choice, in its order: the untuned configuration first when there
    is one, then the kept proposals in the order proposed.

    Attributes
    ----------
    candidates : tuple of dict
    keys : tuple
        Each candidate's key in the adapter.
    baseline : bool
        Whether candidate 0 is the untuned configuration.
    n_proposed : int
        The proposals the shortlist was drawn from.
    """

    candidates: tuple[dict[str, Any], ...]
    keys: tuple[Any, ...]
    baseline: bool
    n_proposed: int

    @property
    def n_candidates(self) -> int:
        """The candidates besides the untuned configuration
        (:attr:`~privtune.privacy.oneshot.OneShotPlan.n_candidates`)."""
        return len(self.candidates) - int(self.baseline)

    def describe(self, n_train: int) -> str:
        """Where the candidates came from, for a privacy report (no score)."""
        kept = (
            f"kept where their cross-validated score there is at least the untuned "
            f"configuration's ({self.n_candidates} of {self.n_proposed})"
            if self.baseline
            else f"all {self.n_proposed} kept (no untuned configuration to compare with)"
        )
        return (
            f"proposed by Bayesian optimization on the {n_train} training records, which the "
            f"record unit does not protect; {kept}"
        )


def shortlist(proposed: Proposals) -> Shortlist:
    """The untuned configuration, then each proposal that scores at least as well on the
    training records (every proposal when the untuned score is not finite).

    A proposal that trails the untuned configuration on the training records rarely beats it
    on the validation records, and each one kept is a chance for the noise to pick it: dropping
    them costs nothing under the record unit (the training records decide) and kept the
    search from ever falling below the untuned estimator beyond noise on the privacy-units
    benchmark.
    """
    reference = proposed.untuned_training
    if math.isfinite(reference):
        keep = [i for i, y in enumerate(proposed.training) if y >= reference]
    else:
        keep = list(range(len(proposed.params)))
    candidates = [proposed.params[i] for i in keep]
    keys = [proposed.keys[i] for i in keep]
    baseline = proposed.untuned is not None
    if baseline:
        assert proposed.untuned is not None
        candidates.insert(0, proposed.untuned)
        keys.insert(0, proposed.untuned_key)
    return Shortlist(tuple(candidates), tuple(keys), baseline, len(proposed.params))


@dataclass(frozen=True)
class Choice:
    """The one private choice: the pick's position in the shortlist, and its published score
    (NaN unless the plan gives the score a share of the budget).

    Attributes
    ----------
    index : int
    published : float
    sampler : str
        What drew the choice's noise: ``"opendp"`` or ``"numpy"``.
    """

    index: int
    published: float
    sampler: str


def choose(
    plan: PrivacyPlan,
    one_shot: OneShotPlan,
    validation: Sequence[float],
    value_range: tuple[float, float],
) -> Choice:
    """The one-shot private choice among the candidates' ``validation`` scores.

    A non-finite score (a failed fit) counts as the worst end of ``value_range``. The choice
    is :meth:`PrivacyPlan.one_shot` at ``one_shot``'s epsilon and mechanism, with the untuned
    configuration's head start; the pick's score is released at ``one_shot.epsilon_score``
    when that is positive. Nothing else leaves: the scores are never logged, stored or quoted.

    Parameters
    ----------
    plan : PrivacyPlan
        The tuner's plan, bound to ``n_val``: the unit's sensitivity and the noise seed.
    one_shot : OneShotPlan
        What the choice spends (:meth:`PrivacyPlan.one_shot_plan`).
    validation : sequence of float
        The candidates' validation scores, in the shortlist's order.
    value_range : tuple of float
        The per-record range.

    Returns
    -------
    Choice
    """
    if len(validation) != one_shot.n_choices:
        raise ValueError(
            f"the choice is among {one_shot.n_choices} candidates; got {len(validation)} "
            "validation scores."
        )
    lo = value_range[0]
    raw = [float(y) if math.isfinite(y) else lo for y in validation]
    picked = plan.one_shot(
        raw,
        value_range,
        epsilon=one_shot.epsilon_choice,
        mechanism=one_shot.mechanism,
        head_start=one_shot.shifts,
    )
    published = math.nan
    if one_shot.epsilon_score > 0.0:
        release = plan.release(value_range, epsilon=one_shot.epsilon_score)
        assert release is not None
        published, _ = release(raw[picked.index], owner="selection-score", number=0)
    return Choice(picked.index, published, picked.sampler)
