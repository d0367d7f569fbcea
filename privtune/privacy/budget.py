"""What a total privacy budget buys, before any data is touched: :func:`plan_budget`.

A mode of :mod:`privtune.privacy` (its top layer): it reads the composition
(:mod:`.composition`: the per-report epsilon a total affords, private selection's cost) and
states, for each planned number of trials, the noise on each released score and the smallest
difference between two configurations that the run could resolve. :class:`PrivacyBudget` and
:class:`BudgetMeter` live in :mod:`.composition` and are re-exported here.

Examples
--------
>>> from privtune.privacy.budget import plan_budget
>>> plan = plan_budget(10.0, 1e-6, (0.0, 1.0), 60)
>>> round(float(plan.epsilon_per_report[0]), 3)
0.259
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import check_float, check_int
from . import oneshot
from .composition import (
    BudgetMeter,
    PrivacyBudget,
    RepeatDistribution,
    laplace_composed_epsilon,
    per_report_epsilon,
    selection_per_candidate_epsilon,
)
from .errors import check_budget_pair, check_value_range
from .units import PrivacyUnit

__all__ = [
    "BudgetMeter",
    "BudgetPlan",
    "PrivacyBudget",
    "check_budget_pair",
    "laplace_composed_epsilon",
    "per_report_epsilon",
    "plan_budget",
    "released_scores_resolution",
    "resolution_advice",
]

#: The two-sided normal quantile of the resolution rule (95 % confidence).
Z_95 = 1.959963984540054

#: The mechanisms :func:`plan_budget` plans for.
MECHANISMS = ("laplace", "selection", "one-shot")

#: The difference a budget should resolve before a search spends it: one point, a hundredth
#: of the width of ``value_range`` (one accuracy point).
ONE_POINT = 0.01


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
        ``sqrt(2) s / epsilon_per_report`` with the unit's sensitivity ``s`` (``hi - lo``
        for the score unit, ``(hi - lo) / n_val`` for the record unit).
    resolvable_difference : ndarray
        The smallest difference between two configurations' scores that the run could tell
        apart (the rule of :func:`plan_budget`), in score units.
    n_val : int or None
        The number of validation records under the record unit (``None``: the score unit).
    shortfall : ndarray
        The difference the pick resolves, the same rule for every mechanism
        (:func:`~privtune.privacy.oneshot.pick_shortfall`): the most the pick loses in
        expectation against the best of ``n`` candidates, over every common margin by which
        the others trail it, in score units. For ``"laplace"`` it takes the pick to be the
        best released score (the searches' posterior-mean rule does a little better).
    """

    epsilon: float
    delta: float
    value_range: tuple[float, float]
    mechanism: str
    n_trials: np.ndarray
    epsilon_per_report: np.ndarray
    noise_std: np.ndarray
    resolvable_difference: np.ndarray
    n_val: int | None = None
    shortfall: np.ndarray | None = None

    @property
    def unit(self) -> PrivacyUnit:
        """The privacy unit planned for."""
        return PrivacyUnit.score() if self.n_val is None else PrivacyUnit.record(self.n_val)

    @property
    def protects(self) -> str:
        """What the budget protects, in one sentence."""
        return self.unit.protects(self.epsilon, self.delta)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per planned number of trials."""
        return [
            {
                "n_trials": int(n),
                "epsilon_per_report": float(e),
                "noise_std": float(s),
                "resolvable_difference": float(d),
                "shortfall": float(f),
            }
            for n, e, s, d, f in zip(
                self.n_trials,
                self.epsilon_per_report,
                self.noise_std,
                self.resolvable_difference,
                self._shortfall,
                strict=True,
            )
        ]

    @property
    def _shortfall(self) -> np.ndarray:
        if self.shortfall is None:
            return np.full(len(self.n_trials), math.nan)
        return self.shortfall

    def __str__(self) -> str:
        lo, hi = self.value_range
        lines = [
            f"budget epsilon={self.epsilon:g}, delta={self.delta:g}, {self.mechanism}, "
            f"value_range=({lo:g}, {hi:g})",
            f"protects {self.protects}",
            f"{'trials':>7}  {'eps/report':>10}  {'noise sd':>9}  {'resolvable diff':>15}"
            f"  {'pick shortfall':>14}",
        ]
        for r in self.rows():
            lines.append(
                f"{r['n_trials']:>7}  {r['epsilon_per_report']:>10.4g}  {r['noise_std']:>9.4g}"
                f"  {r['resolvable_difference']:>15.4g}  {r['shortfall']:>14.4g}"
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
        ax.set_title(
            f"What a total (epsilon = {self.epsilon:g}, delta = {self.delta:g}) resolves",
            fontsize=10,
        )
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
    n_val: int | None = None,
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

    With ``n_val`` (the record unit, :mod:`privtune.privacy.units`), each released score is a
    mean over ``n_val`` validation records of a value in ``value_range``, its sensitivity
    ``(hi - lo) / n_val``: the noise, and so ``Delta``, are ``n_val`` times smaller for the same
    budget, which now protects each validation record rather than the whole score.

    With ``mechanism="selection"`` (only the pick is published), ``n`` is the mean number of
    candidates, ``epsilon_0`` the per-candidate epsilon whose selection costs the budget, and
    each candidate is scored once: two candidates are told apart by their two noisy scores, so
    ``Delta = 1.96 sigma sqrt(2)``.

    With ``mechanism="one-shot"`` (:mod:`privtune.privacy.oneshot`: candidates fixed before
    the data are read, the choice paid once), ``n`` is the number of candidates, the untuned
    estimator included; ``epsilon_per_report`` is the whole epsilon (it is spent once),
    ``noise_std`` the standard deviation of permute-and-flip's exponential noise (its scale
    ``2 s / epsilon``), and ``Delta`` the same two-candidate rule on two such draws.

    Every mechanism's ``shortfall`` is the same rule, and the one to compare them by: the
    most the pick loses in expectation against the best of ``n`` candidates when the others
    trail it by a common margin (:func:`~privtune.privacy.oneshot.pick_shortfall`).

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
    mechanism : {"laplace", "selection", "one-shot"}, default="laplace"
        ``"laplace"``: every score released with Laplace noise (per-score LDP, the curator's);
        ``"selection"``: private selection, only the pick published (``delta > 0``);
        ``"one-shot"``: a permute-and-flip choice among candidates fixed in advance.
    distribution : {"geometric", "logarithmic", "poisson"} or float, default="geometric"
        With ``"selection"``: the distribution of the number of candidates.
    n_val : int, optional
        The number of validation records under the record unit; ``None`` (default): the score
        unit.

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
    >>> plan = plan_budget(1.0, 1e-6, (0.0, 1.0), 40, n_val=5000)
    >>> round(float(plan.noise_std[0]), 4)  # 0.7 accuracy points
    0.0072
    """
    epsilon = check_float("epsilon", epsilon, low=0.0)
    delta = check_float("delta", delta, low=0.0, high=1.0, closed_low=True, closed_high=False)
    lo, hi = check_value_range(value_range)
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}.")
    counts: list[Any] = [n_trials]
    if isinstance(n_trials, Sequence | np.ndarray) and not isinstance(n_trials, str):
        counts = list(n_trials)
    if not counts:
        raise ValueError("n_trials must be a positive integer or a non-empty sequence of them.")
    ns = np.array([check_int("n_trials", n) for n in counts], dtype=int)
    unit = PrivacyUnit.score() if n_val is None else PrivacyUnit.record(n_val)
    sensitivity = unit.sensitivity((lo, hi))
    if mechanism == "one-shot":
        eps0 = np.full(len(ns), epsilon)
        sigma = 2.0 * sensitivity / eps0  # an exponential draw's sd is its scale
        resolvable = Z_95 * sigma * math.sqrt(2.0)
        shortfall = np.array(
            [
                oneshot.choice_shortfall(
                    int(n), epsilon=epsilon, sensitivity=sensitivity, max_lead=hi - lo
                )
                for n in ns
            ]
        )
        return BudgetPlan(
            epsilon, delta, (lo, hi), mechanism, ns, eps0, sigma, resolvable, unit.n_val, shortfall
        )
    if mechanism == "selection":
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
        sigma = math.sqrt(2.0) * sensitivity / eps0
        resolvable = Z_95 * sigma * math.sqrt(2.0) * np.ones(len(ns))
    else:
        eps0 = np.array([per_report_epsilon(epsilon, delta, int(n)) for n in ns])
        sigma = math.sqrt(2.0) * sensitivity / eps0
        resolvable = Z_95 * sigma * np.sqrt(4.0 / ns)
    shortfall = np.array(
        [
            oneshot.pick_shortfall(int(n), noise="laplace", scale=sensitivity / e, max_lead=hi - lo)
            for n, e in zip(ns, eps0, strict=True)
        ]
    )
    return BudgetPlan(
        epsilon, delta, (lo, hi), mechanism, ns, eps0, sigma, resolvable, unit.n_val, shortfall
    )


def points(fraction: float) -> str:
    """``fraction`` of a range in points (hundredths), to two significant figures."""
    value = 100.0 * fraction
    return f"{value:.2g}" if value < 10 else f"{value:.0f}"


def released_scores_resolution(
    *,
    sensitivity: float,
    width: float,
    n_candidates: int,
    n_reports: int,
    epsilon: float,
    budget: PrivacyBudget | None = None,
    n_val: int | None = None,
) -> tuple[float, str | None]:
    """What a search that releases every score resolves, before any score: the shortfall of
    the best released score among ``n_candidates`` (:func:`pick_shortfall`), and the warning
    when that is more than a point (:func:`resolution_advice`), or ``None``.

    Parameters
    ----------
    sensitivity : float
        One report's sensitivity (the unit's, of ``value_range``).
    width : float
        The width of ``value_range``.
    n_candidates : int
    n_reports : int
        The planned reports (the candidates times the released metrics).
    epsilon : float
        Each report's epsilon.
    budget : PrivacyBudget, optional
        The total budget each report's epsilon is the share of; the advice then speaks of
        its epsilon, and of the share fewer candidates would get.
    n_val : int, optional
        The validation records under the record unit.

    Returns
    -------
    (float, str or None)
        The shortfall in score units, and the warning.
    """

    def shortfall(e0: float, k: int) -> float:
        return oneshot.pick_shortfall(k, noise="laplace", scale=sensitivity / e0, max_lead=width)

    epsilon_for: Callable[[float], float] | None = None
    share: Callable[[int], float] | None = None
    given, name = epsilon, "epsilon"
    if budget is not None:
        given, name = budget.epsilon, "privacy_budget's epsilon"

        def epsilon_for(factor: float) -> float:
            return laplace_composed_epsilon(factor * epsilon, n_reports, budget.delta)

        def share(k: int) -> float:  # each report's epsilon with k candidates
            return per_report_epsilon(budget.epsilon, budget.delta, n_reports * k // n_candidates)

    d = shortfall(epsilon, n_candidates)
    advice = resolution_advice(
        d,
        n_val=n_val,
        epsilon=given,
        n_candidates=n_candidates,
        width=width,
        what="the best of the released scores",
        shortfall_with=lambda k: shortfall(epsilon if share is None else share(k), k),
        epsilon_for=epsilon_for,
        epsilon_name=name,
    )
    return d, advice


def one_shot_resolution(
    plan: oneshot.OneShotPlan, *, sensitivity: float, width: float, n_val: int | None
) -> tuple[float, str | None]:
    """What one private choice resolves, before any validation record is read: the pick's
    shortfall against the best candidate (:meth:`~privtune.privacy.oneshot.OneShotPlan.
    shortfall`), and the warning when that is more than a point (:func:`resolution_advice`),
    or ``None``. The scikit-learn searches and the Optuna sampler say the same.

    Parameters
    ----------
    plan : OneShotPlan
        The choice: its mechanism, epsilon and number of candidates.
    sensitivity : float
        One candidate's score's sensitivity (the unit's, of ``value_range``).
    width : float
        The width of ``value_range``.
    n_val : int or None
        The validation records under the record unit.
    """

    def shortfall_with(k: int) -> float:
        return oneshot.choice_shortfall(
            k,
            epsilon=plan.epsilon_choice,
            sensitivity=sensitivity,
            mechanism=plan.mechanism,
            max_lead=width,
        )

    d = plan.shortfall(sensitivity, width)
    advice = resolution_advice(
        d,
        n_val=n_val,
        epsilon=plan.epsilon,
        n_candidates=plan.n_choices,
        width=width,
        what=f"the {plan.mechanism} choice",
        shortfall_with=shortfall_with,
    )
    return d, advice


def resolution_advice(
    shortfall: float,
    *,
    n_val: int | None,
    epsilon: float,
    n_candidates: int,
    width: float,
    what: str,
    shortfall_with: Callable[[int], float],
    epsilon_for: Callable[[float], float] | None = None,
    epsilon_name: str = "epsilon",
) -> str | None:
    """The warning of a search whose budget cannot resolve one point, or ``None``.

    Every mechanism's shortfall (:attr:`BudgetPlan.shortfall`) is its noise's scale times a
    function of the number of candidates, and the scale is ``(hi - lo) / (n_val epsilon)``
    with ``epsilon`` the mechanism's (the choice's, or each report's): so ``f`` times more
    validation records, or a mechanism epsilon ``f`` times larger, divide the shortfall by
    ``f`` (up to the cap at the range's width).

    Parameters
    ----------
    shortfall : float
        The pick's shortfall at this budget, in score units.
    n_val : int or None
        The validation records (``None``: the score unit).
    epsilon : float
        The budget as the user gave it (named ``epsilon_name`` in the message).
    n_candidates : int
    width : float
        The width of ``value_range``; one point is :data:`ONE_POINT` of it.
    what : str
        The mechanism, in words, as the message names it.
    shortfall_with : callable
        ``shortfall_with(k)``: the shortfall with ``k`` candidates at the same budget
        (increasing in ``k``).
    epsilon_for : callable, optional
        ``epsilon_for(f)``: the user's epsilon that makes the mechanism's ``f`` times larger
        (default: ``f * epsilon``).
    epsilon_name : str
        How the message names ``epsilon`` (the user's parameter).

    Returns
    -------
    str or None
        What the pick resolves, and what would resolve one point: more validation records,
        a larger epsilon, fewer candidates (or the record unit).
    """
    target = ONE_POINT * width
    if shortfall <= target:
        return None
    factor = shortfall / target
    where = f"n_val={n_val}, " if n_val is not None else "the score unit, "
    text = (
        f"At {where}{epsilon_name}={epsilon:g} and {n_candidates} candidates, {what} can "
        f"fall {points(shortfall / width)} points (hundredths of value_range) below the best "
        "candidate in expectation: closer candidates are not told apart. One point would "
        "take "
    )
    if n_val is not None:
        ways = [f"about {math.ceil(n_val * factor)} validation records"]
    else:
        ways = ["privacy_unit='record' (noise n_val times smaller)"]
    needed = factor * epsilon if epsilon_for is None else epsilon_for(factor)
    ways.append(f"{epsilon_name} of about {needed:.3g}")
    lo, hi = 1, n_candidates  # the largest k with shortfall_with(k) <= target, by bisection
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if shortfall_with(mid) <= target else (lo, mid)
    if lo >= 2:
        ways.append(f"at most {lo} candidates")
    return text + ", or ".join(ways) + "."
