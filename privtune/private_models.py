"""Every record protected: private selection among privately trained models.

The record unit protects the validation records; a model fitted on the training records can
depend on any one of them without bound, unless the estimator is differentially private
itself (a diffprivlib model). With such an estimator, one candidate of the selection is:

1. a configuration drawn from the space independently of the data;
2. the estimator with that configuration, fitted at ``epsilon0`` on the training records
   (its own guarantee: ``epsilon0``-DP in them);
3. its score on the validation records, released with Laplace noise at ``epsilon0`` at the
   record unit's sensitivity (``epsilon0``-DP in them, the model fixed).

Each record is a training record or a validation record (one hold-out split drawn
independently of the data), so one candidate is ``epsilon0``-DP for every record. A random
number ``K`` of candidates is drawn (Papernot & Steinke's ``D_{eta, gamma}``, fixed before
any record is read and kept with the data owner), and only the best is published, with its
released score and **its own fitted model**: no refit, so the deployed model is the one the
budget paid for. The whole publication is accounted as dp-accounting's
``RepeatAndSelectDpEvent`` over a candidate that may be any ``epsilon0``-DP mechanism
(:func:`privtune.privacy.composition.private_candidate_event`): about ``2 epsilon0`` for the
logarithmic distribution and ``3 epsilon0`` for the geometric, whatever ``K``, for every
record. Fits are not composed one by one.

The untuned estimator takes part in one of two ways (``untuned``): ``"candidate"``, one of
the configurations the candidates are drawn from (each candidate is the untuned estimator
with probability ``1 / (mean + 1)``, a draw that does not depend on the data), at no extra
cost; or ``"baseline"``, fitted at ``epsilon0`` and released once beside the candidates, kept
unless a candidate's released score beats its own by the selector's margin
(:class:`privtune.privacy.selection.Selector`), one more candidate's cost.

**No refit.** The pick's own model is deployed, and the whole budget goes to the selection.
Refitting the pick on every record with a share of the budget was measured and lost (the
diffprivlib benchmark, ``python -m benchmarks.diffprivlib_models``; docs/privacy.md,
"When not to tune"): a private fit is noisy, so the best of ``K`` fitted models is a good
configuration *and* a good draw of the noise, and a refit keeps only the first.

The estimator's own epsilon is set here: every parameter named ``epsilon`` in it
(:func:`privtune.records.epsilon_parameters`; a pipeline of diffprivlib steps has one per
step, and they share ``epsilon0`` equally, their fits composing in sequence). Both doors, the
scikit-learn search and the Optuna objective, call :func:`select_private_model`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import check_seed
from .privacy.errors import PrivacyError
from .privacy.selection import SelectionPlan, Selector
from .privacy.units import PrivacyUnit, describe_guarantee
from .records import RecordMetric, check_public_bounds, epsilon_parameters

__all__ = [
    "REFIT_FIT",
    "SELECTION_LAW",
    "PrivateModel",
    "at_epsilon",
    "select_private_model",
    "selection_resolution",
]

#: The law of ``K`` by default (both doors): the geometric, about three candidates' epsilon
#: whatever its mean. In the diffprivlib benchmark (10 candidates) it was ahead of the
#: logarithmic (about two candidates' epsilon, but one or two candidates drawn too often) at
#: a total epsilon of 1 and 3, and level at 0.5.
SELECTION_LAW = "geometric"

#: How the untuned estimator takes part (module docstring).
UNTUNED_MODES = ("candidate", "baseline", None)


def selection_resolution(
    plan: SelectionPlan, n_val: int, value_range: tuple[float, float]
) -> tuple[float, str | None]:
    """What a selection among privately trained models can resolve, before any record is
    read: the expected shortfall of the best released score among about ``mean`` candidates
    (each released with Laplace noise at the per-candidate epsilon and the record unit's
    sensitivity; :func:`privtune.privacy.oneshot.pick_shortfall`), and a warning when that is
    more than a point (a hundredth of the range), or ``None``.

    The shortfall leaves out the noise of each candidate's own fit, which only the data can
    tell; the warning says what it cannot see.
    """
    from .privacy.budget import points
    from .privacy.oneshot import pick_shortfall

    lo, hi = value_range
    width = hi - lo
    epsilon0 = plan.epsilon_per_candidate
    k = max(round(plan.distribution.mean), 1)
    shortfall = pick_shortfall(k, noise="laplace", scale=width / (n_val * epsilon0), max_lead=width)
    if shortfall <= 0.01 * width:
        return shortfall, None
    return shortfall, (
        f"At n_val={n_val} and a selection epsilon of {plan.epsilon:.3g} over about {k} "
        f"privately trained candidates (each fitted and scored at epsilon={epsilon0:.3g}), the "
        f"best released score can fall {points(shortfall / width)} points (hundredths of "
        "value_range) below the best candidate's in expectation, before the noise of each "
        "candidate's own fit: closer candidates are not told apart. More validation records "
        "or a larger budget resolve more; where the defaults are sound, one fit of the "
        "untuned model at the whole epsilon may do better "
        '(docs/privacy.md, "When not to tune").'
    )


#: The tag of a fit outside a selection, such as a refit (:func:`at_epsilon`); the untuned
#: baseline is 1 and the ``i``-th candidate ``i + 2``.
REFIT_FIT = 0


def at_epsilon(
    estimator: Any, epsilon: float, parameters: Sequence[str], fit: int = REFIT_FIT
) -> Any:
    """A clone of ``estimator`` whose fit is ``epsilon``-DP: ``epsilon`` shared equally by
    ``parameters`` (the steps' fits compose in sequence, their epsilons add up).

    Every fit of a selection must draw its own noise: the accounting treats the candidates
    as independent runs. A ``random_state`` left ``None`` (diffprivlib's default) gives each
    fit fresh randomness; one set to an integer (or a generator, which ``clone`` copies)
    would give every clone the same noise, so it is replaced by a seed derived from it and
    from ``fit``, the fit's tag (:data:`REFIT_FIT`, 1 for the untuned baseline, ``i + 2``
    for the ``i``-th candidate): reproducible, and different for every fit.
    """
    from sklearn.base import clone

    if not parameters:
        raise ValueError(
            "the estimator has no parameter that sets its own epsilon (a diffprivlib model's "
            "'epsilon'): pass epsilon_parameters naming it, or use a differentially private "
            "estimator."
        )
    share = float(epsilon) / len(parameters)
    model = clone(estimator).set_params(**dict.fromkeys(parameters, share))
    return model.set_params(**_own_seeds(model, fit))


def _own_seeds(model: Any, fit: int) -> dict[str, int]:
    """The ``random_state`` parameters of ``model`` that are set, each replaced by a seed of
    its own for the fit tagged ``fit`` (:func:`at_epsilon`)."""
    seeds = {}
    params = model.get_params(deep=True)
    for i, (name, value) in enumerate(sorted(params.items())):
        if not (name == "random_state" or name.endswith("__random_state")) or value is None:
            continue
        if isinstance(value, np.random.Generator):
            entropy = int(value.integers(2**32))
        elif isinstance(value, np.random.RandomState):
            entropy = int(value.randint(2**32 - 1))
        else:
            entropy = int(value)
        sequence = np.random.SeedSequence(entropy, spawn_key=(fit, i))
        seeds[name] = int(sequence.generate_state(1)[0])
    return seeds


@dataclass(frozen=True)
class PrivateModel:
    """What :func:`select_private_model` publishes: the pick, its fitted model and its
    released score, and what the publication cost.

    Attributes
    ----------
    params : dict or None
        The picked configuration (``None``: the untuned estimator was kept).
    model : estimator or None
        The picked candidate's own model, fitted at ``epsilon0`` on the training records
        (``None`` when nothing was selected: ``K = 0`` under ``"poisson"``).
    score : float
        Its released score (NaN when nothing was selected).
    n_candidates : int
        ``K``: the data owner's to keep (the publication's guarantee averages over it).
    plan : SelectionPlan
        The distribution of ``K``, ``epsilon0`` and the delta of the guarantee.
    parameters : tuple of str
        The estimator's parameters that were set to ``epsilon0`` (shared).
    """

    params: dict[str, Any] | None
    model: Any
    score: float
    n_candidates: int
    plan: SelectionPlan
    parameters: tuple[str, ...]

    @property
    def untuned(self) -> bool:
        """Whether the untuned estimator was kept."""
        return self.params is None and self.model is not None

    def report(self, unit: PrivacyUnit) -> dict[str, Any]:
        """The privacy report: one guarantee for every record, and what it is made of."""
        out = self.plan.report(unit, None)  # K stays with the data owner
        out["n_candidates"] = "drawn at random; kept with the data owner"
        out["fit_epsilon"] = self.plan.epsilon_per_candidate
        out["fit_parameters"] = list(self.parameters)
        out["model"] = "the picked candidate's own model, fitted at fit_epsilon (no refit)"
        out["protects"] = describe_guarantee(
            "each record of the data, training and validation", out["epsilon"], out["delta"]
        )
        return out


def select_private_model(
    estimator: Any,
    sample: Callable[[np.random.Generator], dict[str, Any]],
    X_train: Any,
    y_train: Any,
    X_val: Any,
    y_val: Any,
    metric: RecordMetric,
    *,
    privacy_budget: tuple[float, float],
    mean: float = 10.0,
    distribution: str | float = "logarithmic",
    untuned: str | None = "candidate",
    parameters: Sequence[str] | None = None,
    seed: int | None = None,
    noise_seed: int | None = None,
) -> PrivateModel:
    """Private selection among privately trained models, every record protected
    (module docstring).

    Parameters
    ----------
    estimator : estimator or callable
        A differentially private estimator whose bounds are given before the data are read
        (:func:`privtune.records.check_public_bounds`), a configuration being its parameters;
        or ``make(params) -> estimator``, an unfitted estimator of a configuration
        (``params=None``: the untuned one), as an Optuna objective builds it.
    sample : callable
        ``sample(rng) -> params``: one configuration, drawn independently of the data.
    X_train, y_train, X_val, y_val : array-like
        The two disjoint sets of records of one split drawn independently of the data.
    metric : RecordMetric
        The record-level score on the validation records (its range bounds one record's
        share).
    privacy_budget : tuple of float
        ``(epsilon, delta)`` for every record, the whole publication's; ``delta > 0``.
    mean : float, default=10.0
        The mean number of candidates.
    distribution : {"logarithmic", "geometric", "poisson"} or float, default="logarithmic"
        The distribution of ``K``.
    untuned : {"candidate", "baseline", None}, default="candidate"
        How the untuned estimator takes part (module docstring); ``None``: it does not.
    parameters : sequence of str, optional
        The parameters that set the estimator's own epsilon (default:
        :func:`privtune.records.epsilon_parameters`).
    seed : int, optional
        Seed of ``K`` and of the configurations.
    noise_seed : int, optional
        Seed of the score releases' noise (experiments only; a fit's own noise is the
        estimator's: fresh with ``random_state=None``, else seeded by a seed derived from its
        ``random_state`` and the fit, different for every fit; :func:`at_epsilon`).

    Returns
    -------
    PrivateModel
    """
    if untuned not in UNTUNED_MODES:
        raise ValueError(f"untuned must be one of {UNTUNED_MODES}, got {untuned!r}.")
    make = _builder(estimator)
    n_val = len(y_val)
    unit = PrivacyUnit.record(n_val)
    plan = SelectionPlan.from_args(
        mean, distribution, None, privacy_budget, baseline=untuned == "baseline", base="private"
    )
    epsilon0 = plan.epsilon_per_candidate
    rng = np.random.default_rng(check_seed("seed", seed))
    k = plan.distribution.draw(rng)  # before any record is read: K does not depend on them
    share = 1.0 / (plan.distribution.mean + 1.0) if untuned == "candidate" else 0.0
    # None: the untuned estimator (drawn with probability share, independently of the data)
    configurations: list[dict[str, Any] | None] = [
        None if share and rng.random() < share else dict(sample(rng)) for _ in range(k)
    ]
    selector = Selector.laplace(
        epsilon0,
        metric.value_range,
        unit=unit,
        noise_seed=noise_seed,
        competitors=plan.distribution.mean,
    )

    def fit_and_score(params: dict[str, Any] | None, fit: int) -> tuple[Any, float]:
        base = make(params)
        names = epsilon_parameters(base) if parameters is None else tuple(parameters)
        model = at_epsilon(base, epsilon0, names, fit)  # each fit its own noise
        check_public_bounds(model)  # before its fit reads anything
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # their text may depend on the records
            try:
                model.fit(X_train, y_train)
                return model, float(metric(model, X_val, y_val))
            except Exception:  # a failed candidate is the worst one
                return None, math.nan

    untuned_model = None
    if untuned == "baseline":
        untuned_model, raw = fit_and_score(None, 1)
        selector.offer_baseline(raw)
    picked: tuple[dict[str, Any] | None, Any] | None = None
    best_index = None
    for i, params in enumerate(configurations):
        model, raw = fit_and_score(params, i + 2)
        selector.offer(raw)
        if selector.leader == i:  # only the leading candidate's model is kept in memory
            picked, best_index = (params, model), i
    index, released = selector.best()
    if index is None:
        return PrivateModel(None, None, math.nan, k, plan, ())
    if index == -1:
        chosen: tuple[dict[str, Any] | None, Any] = (None, untuned_model)
    else:
        assert picked is not None and best_index == index
        chosen = picked
    if chosen[1] is None:
        raise PrivacyError(
            "The selected candidate's fit failed (every candidate failed, or the rest scored "
            "the worst end of the range): there is no model to return. The publication "
            "counts as spent."
        )
    names = epsilon_parameters(chosen[1]) if parameters is None else tuple(parameters)
    return PrivateModel(chosen[0], chosen[1], float(released), k, plan, names)


def _builder(estimator: Any) -> Callable[[dict[str, Any] | None], Any]:
    """``make(params)``: an unfitted estimator of a configuration (``None``: untuned)."""
    if not hasattr(estimator, "get_params"):
        if not callable(estimator):
            raise TypeError("estimator must be an estimator or make(params) -> estimator.")
        return estimator
    from sklearn.base import clone

    def make(params: dict[str, Any] | None) -> Any:
        model = clone(estimator)
        return model.set_params(**params) if params else model

    return make
