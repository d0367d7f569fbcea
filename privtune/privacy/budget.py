"""A total privacy budget over many reports: what each report may spend, and what a run can
resolve with it.

A study that releases ``n`` scores about the same data through the Laplace curator spends the
composition of ``n`` Laplace mechanisms. Users think in the total ``(epsilon, delta)`` they
publish; :func:`per_report_epsilon` turns that total into the largest per-report epsilon
whose ``n``-fold composition stays within it, and :func:`laplace_composed_epsilon` answers
the other way round. :func:`plan_budget` shows, before any score is touched, what a budget
buys: the noise on each score and the smallest difference between two configurations that
the run could resolve.

The composition is accounted the way :class:`~privtune.privacy.PrivacyLedger` accounts a
study (``composed_epsilon("pld", delta)``): dp-accounting's privacy-loss-distribution (PLD)
accountant over ``LaplaceDpEvent(1 / epsilon0)`` composed ``n`` times, with the
``ADD_OR_REMOVE_ONE`` relation. PLD is the tightest of the valid accountants for Laplace
composition: for fifty reports of ``epsilon0 = 1`` at ``delta = 1e-6`` it gives 41.6, RDP
42.8, basic composition 50. The bound used is the smaller of PLD's and basic composition's
``n epsilon0`` (both valid), so a budget never buys less than ``epsilon / n`` per report.

Examples
--------
>>> from privtune.privacy.budget import laplace_composed_epsilon, per_report_epsilon
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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import check_float, check_int
from .curator import BudgetExhaustedError, _check_value_range

__all__ = [
    "BudgetMeter",
    "BudgetPlan",
    "PrivacyBudget",
    "laplace_composed_epsilon",
    "per_report_epsilon",
    "plan_budget",
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


#: The two-sided normal quantile of the resolution rule (95 % confidence).
Z_95 = 1.959963984540054

#: The mechanisms :func:`plan_budget` plans for.
MECHANISMS = ("laplace", "selection")


@dataclass(frozen=True)
class BudgetPlan:
    """What a total budget buys, per planned number of trials (:func:`plan_budget`).

    Attributes
    ----------
    epsilon, delta : float
        The total budget.
    value_range : tuple of float
        The scores' declared range.
    mechanism : str
        ``"laplace"``: every score released with Laplace noise (per-score LDP);
        ``"selection"``: only the best of a random number of candidates published (private
        selection, :mod:`privtune.privacy.selection`).
    n_trials : ndarray of int
        The planned numbers of trials (with ``"selection"``, the mean number of candidates).
    epsilon_per_report : ndarray
        The per-report epsilon each ``n`` affords (:func:`per_report_epsilon`; with
        ``"selection"``, :func:`~privtune.privacy.selection_per_candidate_epsilon`).
    noise_std : ndarray
        The standard deviation of a released score's noise, in score units:
        ``sqrt(2) (hi - lo) / epsilon_per_report``.
    resolvable_difference : ndarray
        The smallest difference between two configurations' scores that the run could tell
        apart (the rule of :func:`plan_budget`), in score units.
    """

    epsilon: float
    delta: float
    value_range: tuple[float, float]
    mechanism: str
    n_trials: np.ndarray
    epsilon_per_report: np.ndarray
    noise_std: np.ndarray
    resolvable_difference: np.ndarray

    def rows(self) -> list[dict[str, Any]]:
        """One dict per planned number of trials."""
        return [
            {
                "n_trials": int(n),
                "epsilon_per_report": float(e),
                "noise_std": float(s),
                "resolvable_difference": float(d),
            }
            for n, e, s, d in zip(
                self.n_trials,
                self.epsilon_per_report,
                self.noise_std,
                self.resolvable_difference,
                strict=True,
            )
        ]

    def __str__(self) -> str:
        lo, hi = self.value_range
        lines = [
            f"budget epsilon={self.epsilon:g}, delta={self.delta:g}, {self.mechanism}, "
            f"value_range=({lo:g}, {hi:g})",
            f"{'trials':>7}  {'eps/report':>10}  {'noise sd':>9}  {'resolvable diff':>15}",
        ]
        for r in self.rows():
            lines.append(
                f"{r['n_trials']:>7}  {r['epsilon_per_report']:>10.4g}  {r['noise_std']:>9.4g}"
                f"  {r['resolvable_difference']:>15.4g}"
            )
        return "\n".join(lines)

    def plot(self, path: str | None = None, *, ax: Any = None) -> Any:
        """Plot the noise and the resolvable difference against the number of trials, next to
        the width of ``value_range`` (needs matplotlib: the ``bench`` extra).

        Parameters
        ----------
        path : str, optional
            Where to save the figure (PNG).
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure by default.

        Returns
        -------
        matplotlib.axes.Axes
        """
        try:
            import matplotlib

            if ax is None and path is not None:
                matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError(
                "BudgetPlan.plot needs matplotlib: pip install 'privtune[bench]'."
            ) from None
        if ax is None:
            _, ax = plt.subplots(figsize=(5.5, 3.5))
        lo, hi = self.value_range
        ax.plot(self.n_trials, self.noise_std, marker="o", label="noise sd of a score")
        ax.plot(
            self.n_trials,
            self.resolvable_difference,
            marker="s",
            label="smallest resolvable difference",
        )
        ax.axhline(hi - lo, color="grey", linestyle="--", label="width of value_range")
        ax.set_yscale("log")
        ax.set_xlabel("planned trials")
        ax.set_ylabel("score units")
        ax.set_title(f"total epsilon = {self.epsilon:g}, delta = {self.delta:g}")
        ax.legend(fontsize=8)
        if path is not None:
            ax.figure.tight_layout()
            ax.figure.savefig(path, dpi=120)
        return ax


def plan_budget(
    epsilon: float,
    delta: float,
    value_range: tuple[float, float],
    n_trials: int | Sequence[int],
    mechanism: str = "laplace",
    *,
    distribution: str | float = "geometric",
) -> BudgetPlan:
    """What a total ``(epsilon, delta)`` buys, before any score is touched.

    For each planned number of trials ``n``: the per-report epsilon ``epsilon_0`` that the
    budget affords over ``n`` reports (:func:`per_report_epsilon`), the noise's standard
    deviation ``sigma = sqrt(2) (hi - lo) / epsilon_0`` in score units, and the smallest
    difference ``Delta`` between two configurations' true scores that the run could resolve.

    **The rule for Delta.** The best a run of ``n`` reports can do to compare two
    configurations is to spend all of them on those two, ``n / 2`` each; the difference of the
    two means then has standard deviation ``sigma sqrt(4 / n)``, and ``Delta = 1.96 sigma
    sqrt(4 / n)`` is the critical difference of a two-sided test at 95 %: a true difference of
    ``Delta`` is detected half the time, of ``2 Delta`` 98 % of the time. A tuning run spreads its
    reports over many configurations, so it resolves less: a difference below ``Delta`` is one
    no run at this budget can find, and when ``Delta`` exceeds the width of ``value_range``,
    the scores carry no usable information.

    With ``mechanism="selection"`` (only the pick is published), ``n`` is the mean number of
    candidates, ``epsilon_0`` the per-candidate epsilon whose selection costs the budget, and
    each candidate is scored once: two candidates are told apart by their two noisy scores, so
    ``Delta = 1.96 sigma sqrt(2)``.

    Parameters
    ----------
    epsilon : float
        The total epsilon, ``> 0``.
    delta : float
        The total delta, in ``[0, 1)``.
    value_range : (float, float)
        The scores' declared range ``(lo, hi)``.
    n_trials : int or sequence of int
        The planned number(s) of trials (one report each).
    mechanism : {"laplace", "selection"}, default="laplace"
        ``"laplace"``: every score released with Laplace noise (per-score LDP, the curator's);
        ``"selection"``: private selection, only the pick published (``delta > 0``).
    distribution : {"geometric", "logarithmic", "poisson"} or float, default="geometric"
        With ``"selection"``: the distribution of the number of candidates.

    Returns
    -------
    BudgetPlan
        Print it for a table, ``.plot()`` it, or read its arrays.

    Examples
    --------
    >>> from privtune.privacy import plan_budget
    >>> plan = plan_budget(100.0, 1e-6, (0.0, 1.0), [20, 60])
    >>> [round(float(d), 2) for d in plan.resolvable_difference]
    [0.25, 0.38]
    """
    epsilon = check_float("epsilon", epsilon, low=0.0)
    delta = check_float("delta", delta, low=0.0, high=1.0, closed_low=True, closed_high=False)
    lo, hi = _check_value_range(value_range)
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}.")
    counts = [n_trials] if isinstance(n_trials, (int, np.integer)) else list(n_trials)
    if not counts:
        raise ValueError("n_trials must be a positive integer or a non-empty sequence of them.")
    ns = np.array([check_int("n_trials", n) for n in counts], dtype=int)
    if mechanism == "selection":
        from .selection import RepeatDistribution, selection_per_candidate_epsilon

        if delta == 0.0:
            raise ValueError("delta must be > 0 with mechanism='selection' (an RDP bound).")
        eps0 = np.array(
            [
                selection_per_candidate_epsilon(
                    epsilon, delta, RepeatDistribution(int(n), distribution)
                )
                for n in ns
            ]
        )
        sigma = math.sqrt(2.0) * (hi - lo) / eps0
        resolvable = Z_95 * sigma * math.sqrt(2.0) * np.ones(len(ns))
    else:
        eps0 = np.array([per_report_epsilon(epsilon, delta, int(n)) for n in ns])
        sigma = math.sqrt(2.0) * (hi - lo) / eps0
        resolvable = Z_95 * sigma * np.sqrt(4.0 / ns)
    return BudgetPlan(epsilon, delta, (lo, hi), mechanism, ns, eps0, sigma, resolvable)


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

    @classmethod
    def from_arg(cls, privacy_budget: Any, n_reports: int, *, n_name: str) -> PrivacyBudget:
        """The budget of an adapter's ``privacy_budget=(epsilon, delta)`` over ``n_reports``.

        Parameters
        ----------
        privacy_budget : tuple of float
            ``(epsilon, delta)``.
        n_reports : int
            The planned number of reports.
        n_name : str
            The adapter's name for the planned number (``"n_trials"``, ``"n_iter"``), for the
            error message.
        """
        epsilon, delta = check_budget_pair(privacy_budget)
        if n_reports is None:
            raise ValueError(
                f"{n_name} is required with privacy_budget: the budget is spread over the "
                f"planned number of reports, so {n_name} must be known before the first one."
            )
        return cls(epsilon, delta, check_int(n_name, n_reports))

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


def check_budget_pair(privacy_budget: Any, *, delta_positive: bool = False) -> tuple[float, float]:
    """``privacy_budget`` as ``(epsilon, delta)``, or a ``ValueError`` naming it.

    Parameters
    ----------
    privacy_budget : tuple of float
        ``(epsilon, delta)`` with ``epsilon > 0`` and ``0 <= delta < 1``.
    delta_positive : bool, default=False
        Require ``delta > 0`` (an RDP bound has no ``delta = 0``).
    """
    bound = "0 < delta < 1" if delta_positive else "0 <= delta < 1"
    message = (
        f"privacy_budget must be a pair (epsilon, delta) with epsilon > 0 and {bound}, "
        f"got {privacy_budget!r}."
    )
    if isinstance(privacy_budget, (str, bytes)) or not isinstance(
        privacy_budget, (tuple, list, np.ndarray)
    ):
        raise ValueError(message)
    if len(privacy_budget) != 2:
        raise ValueError(message)
    try:
        epsilon = check_float("privacy_budget[0] (epsilon)", privacy_budget[0], low=0.0)
        delta = check_float(
            "privacy_budget[1] (delta)",
            privacy_budget[1],
            low=0.0,
            high=1.0,
            closed_low=not delta_positive,
            closed_high=False,
        )
    except TypeError:
        raise ValueError(message) from None
    return epsilon, delta


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
