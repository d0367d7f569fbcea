"""Composition: what a total ``(epsilon, delta)`` affords per report, and what reports cost.

The accounting layer of :mod:`privtune.privacy` (below the mechanisms, above the checks): no
mechanism here, only dp-accounting's arithmetic over the events the mechanisms hand back.

- Laplace reports composed ``n`` times (:func:`laplace_composed_epsilon`) and the largest
  per-report epsilon a total budget affords (:func:`per_report_epsilon`): dp-accounting's
  privacy-loss-distribution (PLD) accountant over ``LaplaceDpEvent(1 / epsilon0)`` composed
  ``n`` times, with the ``ADD_OR_REMOVE_ONE`` relation, the tightest of the valid accountants
  for Laplace composition: for fifty reports of ``epsilon0 = 1`` at ``delta = 1e-6`` it gives
  41.6, RDP 42.8, basic composition 50. The bound used is the smaller of PLD's and basic
  composition's ``n epsilon0`` (both valid), so a budget never buys less than ``epsilon / n``
  per report. The events are at sensitivity 1: a report whose noise is scaled to its own
  sensitivity (the whole score's range, or one record's share of it, :mod:`.units`) has the
  same privacy loss whatever that sensitivity is, so one accounting serves both units.
- :class:`PrivacyBudget`, a total over a planned number of reports, and :class:`BudgetMeter`,
  which counts them in one process.
- Private selection's cost (Liu & Talwar 2019; Papernot & Steinke 2022):
  :class:`RepeatDistribution`, the distribution of the number of candidates ``K``, and
  :func:`selection_epsilon`, dp-accounting's ``RepeatAndSelectDpEvent`` under its RDP
  accountant (the only accountant that composes it).

Examples
--------
>>> from privtune.privacy.composition import laplace_composed_epsilon, per_report_epsilon
>>> eps0 = per_report_epsilon(10.0, 1e-6, 60)
>>> round(eps0, 3), round(10.0 / 60, 3)  # PLD buys more than an even split
(0.259, 0.167)
>>> laplace_composed_epsilon(eps0, 60, 1e-6) <= 10.0
True
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._checks import check_float, check_int
from .errors import BudgetExhaustedError

__all__ = [
    "BASES",
    "SHAPES",
    "BudgetMeter",
    "PrivacyBudget",
    "RepeatDistribution",
    "laplace_composed_epsilon",
    "per_report_epsilon",
    "selection_epsilon",
    "selection_per_candidate_epsilon",
]

#: Relative precision of :func:`per_report_epsilon`: the answer is within this fraction of
#: the largest per-report epsilon that fits (and never above it).
RTOL = 1e-3


def laplace_composed_epsilon(epsilon0: float, n_reports: int, delta: float) -> float:
    """The epsilon, at ``delta``, of ``n_reports`` Laplace reports of ``epsilon0`` each.

    Parameters
    ----------
    epsilon0 : float
        Each report's epsilon (Laplace noise of scale ``(hi - lo) / epsilon0``), ``> 0``.
    n_reports : int
        How many reports about the same data, ``>= 1``.
    delta : float
        In ``[0, 1)``; with 0 the bound is basic composition, ``n_reports * epsilon0``.

    Returns
    -------
    float
        ``min(n epsilon0, PLD epsilon at delta)``.
    """
    epsilon0 = check_float("epsilon0", epsilon0, low=0.0)
    n_reports = check_int("n_reports", n_reports)
    delta = check_float("delta", delta, low=0.0, high=1.0, closed_low=True, closed_high=False)
    return _composed(epsilon0, n_reports, delta)


#: The PLD accountant's value discretization while :func:`per_report_epsilon` searches: ten
#: times coarser than dp-accounting's default (and the ledger's), 4 to 10 times faster and
#: within 2e-4 of it (measured at 60 and 1000 reports, totals 10 and 100); the answer is
#: checked on the ledger's grid.
_SEARCH_GRID = 1e-3


@functools.lru_cache(maxsize=1024)
def _composed(epsilon0: float, n_reports: int, delta: float, grid: float | None = None) -> float:
    basic = n_reports * epsilon0
    if delta == 0.0:
        return basic
    import dp_accounting

    kwargs = {} if grid is None else {"value_discretization_interval": grid}
    acc = dp_accounting.pld.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, **kwargs
    )
    event = dp_accounting.LaplaceDpEvent(1.0 / epsilon0)
    acc.compose(dp_accounting.SelfComposedDpEvent(event, n_reports) if n_reports > 1 else event)
    return min(basic, float(acc.get_epsilon(delta)))


@functools.lru_cache(maxsize=256)
def per_report_epsilon(epsilon: float, delta: float, n_reports: int) -> float:
    """The largest per-report epsilon whose ``n_reports``-fold composition costs at most
    ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon : float
        The total epsilon, ``> 0``.
    delta : float
        The total delta, in ``[0, 1)``. With 0 (pure epsilon-DP) the answer is
        ``epsilon / n_reports``.
    n_reports : int
        The number of reports the budget must cover, ``>= 1``.

    Returns
    -------
    float
        ``epsilon0`` with ``laplace_composed_epsilon(epsilon0, n_reports, delta) <= epsilon``,
        within :data:`RTOL` of the largest such value; at least ``epsilon / n_reports``.
    """
    from scipy import optimize

    epsilon = check_float("epsilon", epsilon, low=0.0)
    delta = check_float("delta", delta, low=0.0, high=1.0, closed_low=True, closed_high=False)
    n_reports = check_int("n_reports", n_reports)
    even = epsilon / n_reports  # basic composition: always within the budget
    if delta == 0.0:
        return even
    if n_reports == 1:  # one report's epsilon at any delta is at most its own: capped there
        return epsilon

    def excess(log_eps0: float) -> float:
        cost = _composed(math.exp(log_eps0), n_reports, delta, _SEARCH_GRID)
        return math.log(cost) - math.log(epsilon) if cost > 0.0 else -math.inf

    # bracket upwards from the even split, where the evaluations are cheap (a report of
    # epsilon0 near the total makes a slow PLD)
    lo = math.log(even)
    if excess(lo) >= 0.0:  # basic composition is the best bound here (a large epsilon)
        return even
    hi = min(lo + math.log(2.0), math.log(epsilon))
    while excess(hi) <= 0.0:
        if hi >= math.log(epsilon):  # a delta so large that any report fits: capped
            return epsilon
        lo, hi = hi, min(hi + math.log(2.0), math.log(epsilon))
    root = optimize.brentq(excess, lo, hi, xtol=RTOL / 4, rtol=RTOL / 4)
    eps0 = math.exp(root)
    # checked as the ledger will account it (dp-accounting's default grid)
    while eps0 > even and _composed(eps0, n_reports, delta) > epsilon:
        eps0 *= 1.0 - RTOL / 4  # the root's side that fits
    return max(eps0, even)


@dataclass(frozen=True)
class PrivacyBudget:
    """A total ``(epsilon, delta)`` spread evenly over ``n_reports`` Laplace reports.

    What the adapters' ``privacy_budget`` builds: every report is released with the per-report
    epsilon :func:`per_report_epsilon` affords (PLD accounting, as the ledger composes), and no
    report beyond ``n_reports`` may be released (:class:`BudgetMeter` counts them in one
    process; the Optuna sampler counts them across workers in the study's storage).

    Parameters
    ----------
    epsilon : float
        The total epsilon, ``> 0``.
    delta : float
        The total delta, in ``[0, 1)``.
    n_reports : int
        The number of reports the budget covers, ``>= 1``.

    Examples
    --------
    >>> from privtune.privacy import PrivacyBudget
    >>> budget = PrivacyBudget(10.0, 1e-6, 60)
    >>> round(budget.epsilon_per_report, 3)
    0.259
    >>> budget.spent_epsilon(60) <= 10.0
    True
    """

    epsilon: float
    delta: float
    n_reports: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_float("epsilon", self.epsilon, low=0.0))
        delta = check_float(
            "delta", self.delta, low=0.0, high=1.0, closed_low=True, closed_high=False
        )
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "n_reports", check_int("n_reports", self.n_reports))

    @property
    def epsilon_per_report(self) -> float:
        """Each report's epsilon: :func:`per_report_epsilon` of the budget over ``n_reports``."""
        return per_report_epsilon(self.epsilon, self.delta, self.n_reports)

    def spent_epsilon(self, n_released: int) -> float:
        """The epsilon, at the budget's delta, of ``n_released`` reports (0 for none)."""
        n = int(n_released)
        return 0.0 if n <= 0 else _composed(self.epsilon_per_report, n, self.delta)

    def to_attrs(self) -> dict[str, Any]:
        """The budget as JSON-serialisable data (stored with each claim of a study)."""
        return {"epsilon": self.epsilon, "delta": self.delta, "n_reports": self.n_reports}

    def __str__(self) -> str:
        return (
            f"epsilon={self.epsilon:g}, delta={self.delta:g} over {self.n_reports} reports "
            f"(epsilon {self.epsilon_per_report:.4g} each)"
        )

    def report(self, n_released: int, n_reserved: int | None = None) -> dict[str, Any]:
        """What the budget was, what was spent and what remains.

        Parameters
        ----------
        n_released : int
            Reports released so far.
        n_reserved : int, optional
            Reports counted against the budget (released or under way); default
            ``n_released``.

        Returns
        -------
        dict
            ``budget_epsilon``, ``budget_delta``, ``planned_reports``, ``released_reports``,
            ``reserved_reports``, ``remaining_reports`` and ``spent_epsilon`` (the released
            reports composed at the budget's delta, at most ``budget_epsilon``).
        """
        reserved = int(n_released if n_reserved is None else n_reserved)
        return {
            "budget_epsilon": self.epsilon,
            "budget_delta": self.delta,
            "planned_reports": self.n_reports,
            "released_reports": int(n_released),
            "reserved_reports": reserved,
            "remaining_reports": max(self.n_reports - reserved, 0),
            "spent_epsilon": self.spent_epsilon(n_released),
        }


#: The named distributions of the number of candidates, to their shape.
SHAPES = {"logarithmic": 0.0, "geometric": 1.0, "poisson": math.inf}

#: What one candidate of a selection is: ``"laplace"``, a score released with Laplace noise
#: (the candidate's configuration drawn independently of the data); ``"private"``, any
#: epsilon0-DP mechanism, such as a differentially private model's fit and its released score.
BASES = ("laplace", "private")


def check_base(base: str) -> str:
    """``base``, one of :data:`BASES`, or a ``ValueError`` naming what is allowed."""
    if base not in BASES:
        raise ValueError(f"base must be one of {BASES}, got {base!r}.")
    return base


def private_candidate_event(epsilon0: float) -> Any:
    """The dp-accounting event that accounts for any ``epsilon0``-DP candidate: binary
    randomized response at ``epsilon0``.

    Its pair of output distributions dominates every ``epsilon0``-DP mechanism's (Kairouz,
    Oh & Viswanath 2015: any such mechanism's privacy profile is at most randomized
    response's), so its Renyi divergence bounds theirs at every order, and an RDP accountant
    composing it (inside a ``RepeatAndSelectDpEvent`` too) bounds any of them. Randomized
    response keeps the true bit with probability ``e^epsilon0 / (1 + e^epsilon0)``:
    dp-accounting's ``noise_parameter`` (the chance of a uniform draw over two buckets) is
    ``2 / (1 + e^epsilon0)``.
    """
    from dp_accounting.dp_event import RandomizedResponseDpEvent

    return RandomizedResponseDpEvent(
        noise_parameter=2.0 / (1.0 + math.exp(epsilon0)), num_buckets=2
    )


@dataclass(frozen=True)
class RepeatDistribution:
    """The distribution of the number of candidates ``K``: its mean and its shape.

    Parameters
    ----------
    mean : float
        ``E[K]``, ``>= 1``.
    distribution : {"logarithmic", "geometric", "poisson"} or float, default="geometric"
        A name, or the shape ``eta > 0`` of a truncated negative binomial.
    """

    mean: float
    distribution: str | float = "geometric"
    shape: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", check_float("mean", self.mean, low=1.0, closed_low=True))
        d = self.distribution
        if isinstance(d, str):
            if d not in SHAPES:
                raise ValueError(
                    f"distribution must be one of {sorted(SHAPES)} or a shape > 0, got {d!r}."
                )
            shape = SHAPES[d]
        else:
            shape = check_float("distribution (a shape)", d, low=0.0)
        object.__setattr__(self, "shape", shape)

    @property
    def gamma(self) -> float:
        """The parameter ``gamma`` of ``D_{eta, gamma}`` with this mean (not for Poisson)."""
        if self.shape == math.inf:
            raise ValueError("the Poisson distribution has no gamma")
        return _gamma(self.shape, self.mean)

    def draw(self, rng: np.random.Generator) -> int:
        """One ``K``."""
        if self.shape == math.inf:
            return int(rng.poisson(self.mean))
        gamma = self.gamma
        if gamma >= 1.0:
            return 1
        if self.shape == 0.0:
            return int(rng.logseries(1.0 - gamma))
        if self.shape == 1.0:
            return int(rng.geometric(gamma))
        while True:  # the negative binomial conditioned on K >= 1
            k = int(rng.negative_binomial(self.shape, gamma))
            if k >= 1:
                return k

    def event(self, epsilon0: float, base: str = "laplace") -> Any:
        """``RepeatAndSelectDpEvent`` of a candidate of ``epsilon0``: a Laplace release
        (``base="laplace"``) or any ``epsilon0``-DP mechanism (``"private"``,
        :func:`private_candidate_event`)."""
        from dp_accounting import LaplaceDpEvent
        from dp_accounting.dp_event import RepeatAndSelectDpEvent

        check_base(base)
        inner = (
            LaplaceDpEvent(1.0 / epsilon0)
            if base == "laplace"
            else private_candidate_event(epsilon0)
        )
        return RepeatAndSelectDpEvent(inner, self.mean, self.shape)


def _tnb_mean(gamma: float, shape: float) -> float:
    """The mean of ``D_{shape, gamma}`` (Papernot & Steinke, Sec. 2)."""
    if shape == 0.0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return shape * (1.0 - gamma) / (gamma * (1.0 - gamma**shape))


@functools.lru_cache(maxsize=256)
def _gamma(shape: float, mean: float) -> float:
    """``gamma`` with ``_tnb_mean(gamma, shape) == mean`` (the mean decreases in gamma)."""
    if mean <= 1.0:
        return 1.0
    if shape == 1.0:
        return 1.0 / mean
    from scipy import optimize

    log_gamma = optimize.brentq(
        lambda g: math.log(_tnb_mean(math.exp(g), shape)) - math.log(mean),
        math.log(1e-300),
        math.log(1.0 - 1e-12),
        xtol=1e-14,
    )
    return math.exp(log_gamma)


@functools.lru_cache(maxsize=1024)
def _selection_epsilon(
    epsilon0: float,
    mean: float,
    shape: float,
    delta: float,
    baseline: bool = False,
    base: str = "laplace",
) -> float:
    import dp_accounting

    # record-level DP is replace-one (the Laplace events' RDP is the same under either
    # relation; randomized response's is defined under replace-one)
    acc = dp_accounting.rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    acc.compose(RepeatDistribution(mean, _name(shape)).event(epsilon0, base))
    if baseline:  # the baseline's own release, beside the selection
        acc.compose(
            dp_accounting.LaplaceDpEvent(1.0 / epsilon0)
            if base == "laplace"
            else private_candidate_event(epsilon0)
        )
    return float(acc.get_epsilon(delta))


def _name(shape: float) -> str | float:
    for name, s in SHAPES.items():
        if s == shape:
            return name
    return shape


def selection_epsilon(
    epsilon0: float,
    distribution: RepeatDistribution,
    delta: float,
    *,
    baseline: bool = False,
    base: str = "laplace",
) -> float:
    """The epsilon, at ``delta``, of selecting the best of ``K`` candidates.

    Parameters
    ----------
    epsilon0 : float
        Each candidate's epsilon (Laplace noise of scale ``(hi - lo) / epsilon0``, or the
        guarantee of a private candidate).
    distribution : RepeatDistribution
        The distribution of ``K``.
    delta : float
        In ``(0, 1)``.
    baseline : bool, default=False
        A baseline (the untuned estimator) is released too, once, at ``epsilon0``, and the
        pick compared with it: the publication is post-processing of the baseline's release
        and the selection's, whose composition this is.
    base : {"laplace", "private"}, default="laplace"
        What a candidate is (:data:`BASES`): ``"private"`` accounts for any ``epsilon0``-DP
        candidate (:func:`private_candidate_event`), a differentially private model's fit
        and its released score among them.

    Returns
    -------
    float
        dp-accounting's RDP bound for ``RepeatAndSelectDpEvent`` (composed with the baseline's
        event).
    """
    epsilon0 = check_float("epsilon0", epsilon0, low=0.0)
    delta = check_float("delta", delta, low=0.0, high=1.0, closed_high=False)
    check_base(base)
    return _selection_epsilon(
        epsilon0, distribution.mean, distribution.shape, delta, bool(baseline), base
    )


@functools.lru_cache(maxsize=256)
def _per_candidate(
    epsilon: float,
    delta: float,
    mean: float,
    shape: float,
    baseline: bool = False,
    base: str = "laplace",
) -> float:
    from scipy import optimize

    def excess(log_eps0: float) -> float:
        return _selection_epsilon(math.exp(log_eps0), mean, shape, delta, baseline, base) - epsilon

    lo, hi = math.log(epsilon) - 12.0, math.log(epsilon) + 2.0
    if excess(lo) > 0:
        raise ValueError(
            f"a total epsilon of {epsilon:g} at delta={delta:g} cannot pay for selecting among "
            f"{mean:g} candidates on average with this distribution: even a vanishing per-"
            "candidate epsilon costs more. Raise the budget or delta, or lower the mean."
        )
    if excess(hi) <= 0:
        return math.exp(hi)
    log_eps0 = optimize.brentq(excess, lo, hi, xtol=1e-6)
    while excess(log_eps0) > 0:  # the answer must fit the budget, not approximately
        log_eps0 -= 1e-6
    return math.exp(log_eps0)


def selection_per_candidate_epsilon(
    epsilon: float,
    delta: float,
    distribution: RepeatDistribution,
    *,
    baseline: bool = False,
    base: str = "laplace",
) -> float:
    """The largest per-candidate epsilon whose selection costs at most ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon : float
        The total epsilon, ``> 0``.
    delta : float
        The total delta, in ``(0, 1)`` (the RDP bound needs ``delta > 0``).
    distribution : RepeatDistribution
    baseline : bool, default=False
        A baseline released beside the selection (:func:`selection_epsilon`).
    base : {"laplace", "private"}, default="laplace"
        What a candidate is (:func:`selection_epsilon`).

    Returns
    -------
    float
        ``epsilon0`` with ``selection_epsilon(epsilon0, distribution, delta, baseline=...) <=
        epsilon``.
    """
    epsilon = check_float("epsilon", epsilon, low=0.0)
    delta = check_float("delta", delta, low=0.0, high=1.0, closed_high=False)
    check_base(base)
    return _per_candidate(
        epsilon, delta, distribution.mean, distribution.shape, bool(baseline), base
    )


class BudgetMeter:
    """Counts the reports released under a :class:`PrivacyBudget` in one process, and refuses
    the one that would exceed it (thread-safe).

    A curator given a meter calls :meth:`claim` before it draws any noise, so a refused report
    releases nothing.

    Parameters
    ----------
    budget : PrivacyBudget
    """

    def __init__(self, budget: PrivacyBudget) -> None:
        self.budget = budget
        self.n_released = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """Reports the budget still covers."""
        return self.budget.n_reports - self.n_released

    def claim(self, count: int = 1) -> None:
        """Count ``count`` more reports, or raise :class:`BudgetExhaustedError` (and count
        nothing) when they would exceed the budget."""
        with self._lock:
            if self.n_released + count > self.budget.n_reports:
                raise BudgetExhaustedError(
                    f"The privacy budget ({self.budget}) is spent: {self.n_released} of "
                    f"{self.budget.n_reports} reports were released and {count} more would "
                    "exceed it. Nothing more is released; plan more reports with a larger "
                    "budget (privtune.privacy.plan_budget) before the next run."
                )
            self.n_released += count


def end_to_end(
    validation_epsilon: float,
    validation_delta: float,
    fit_epsilon: float,
    fit_delta: float,
    n_fits: int,
    refit: bool,
    delta: float,
) -> dict[str, Any]:
    """The record-level guarantee of a search whose estimator is differentially private itself.

    Under the record unit each record of the data is either a training record or a validation
    record. A validation record is protected by the score releases (``validation_epsilon``,
    ``validation_delta``) and, when the pick is refitted on all the data, by that one more fit.
    A training record is protected by the estimator's own guarantee, ``(fit_epsilon,
    fit_delta)`` per fit: each candidate's released score is post-processing of a fit on the
    training records, so the ``n_fits`` candidates (and the refit) compose, by the optimal
    advanced composition of Kairouz, Oh & Viswanath for any ``(epsilon, delta)``-DP mechanism
    (dp-accounting's, the smaller of it and the sum). The search's guarantee for every record
    is the larger of the two groups'.

    Returns
    -------
    dict
        ``training_epsilon``, ``training_delta``, ``validation_epsilon``,
        ``validation_delta``, and ``epsilon`` and ``delta``: the guarantee for every record.
    """
    from dp_accounting.pld import accountant as pld_accountant
    from dp_accounting.pld import common as pld_common

    k = int(n_fits) + (1 if refit else 0)
    basic = k * fit_epsilon
    slack = max(delta - k * fit_delta, 0.0)
    advanced = None
    if slack > 0.0:
        advanced = pld_accountant.advanced_composition(
            pld_common.DifferentialPrivacyParameters(fit_epsilon, fit_delta), k, delta
        )
    train_eps, train_delta = basic, k * fit_delta
    if advanced is not None and float(advanced) < basic:
        train_eps, train_delta = float(advanced), delta
    val_eps = validation_epsilon + (fit_epsilon if refit else 0.0)
    val_delta = validation_delta + (fit_delta if refit else 0.0)
    return {
        "training_epsilon": train_eps,
        "training_delta": train_delta,
        "validation_epsilon": val_eps,
        "validation_delta": val_delta,
        "epsilon": max(train_eps, val_eps),
        "delta": max(train_delta, val_delta),
    }
