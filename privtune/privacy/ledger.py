"""A ledger of private releases, accounted for by dp-accounting.

Every release is recorded as a dp-accounting event (``LaplaceDpEvent`` for the Laplace curator,
``GaussianDpEvent`` for the Gaussian one), so that no mechanism does its own epsilon arithmetic.
The ledger answers two questions:

- the per-report guarantee: each report is epsilon-LDP on its own (the largest epsilon recorded);
- the composed guarantee for the ``k`` reports of one data owner, under basic composition
  (epsilon adds up, delta = 0), under advanced composition at a given delta (the optimal
  composition theorem of Kairouz, Oh & Viswanath, as implemented in dp-accounting), or through
  dp-accounting's privacy-loss-distribution (PLD) accountant, which is the tightest of the three.

Neighbouring relation: two inputs of one report are neighbours when they are any two scores in
the declared ``value_range`` (the local model: one report, any two values). For the Laplace
mechanism this is the same privacy loss as dp-accounting's add-or-remove relation with L1
sensitivity ``hi - lo``, which is the accountant used here. The Gaussian release is recorded with
its noise multiplier (standard deviation over the sensitivity ``hi - lo``) and composed by the
same PLD accountant; its per-report guarantee is the ``(epsilon, delta)`` it was calibrated for.
"""

from __future__ import annotations

import math
import numbers
import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import check_epsilon as _check_epsilon
from .errors import check_gaussian as _check_gaussian

if TYPE_CHECKING:  # imported where an event is built: not with privtune
    import dp_accounting

__all__ = ["PrivacyLedger", "Report"]

_METHODS = ("basic", "advanced", "pld")


@dataclass(frozen=True)
class Report:
    """One recorded release.

    Attributes
    ----------
    epsilon : float
        The epsilon of each release.
    count : int
        How many identical releases the entry stands for (a batch privatized at once).
    owner : str
        The data owner whose data the release is computed from; epsilons compose per owner.
    event : dp_accounting.DpEvent or None
        The mechanism of one release, as data; ``None`` for a joint-DP score, whose guarantee
        covers the whole run and does not compose per report.
    delta : float
        The delta of each release (0 for the Laplace mechanism's pure epsilon-DP).
    """

    epsilon: float
    count: int
    owner: str
    event: dp_accounting.DpEvent | None
    delta: float = 0.0

    @property
    def joint(self) -> bool:
        """Whether the report is a score under (alpha, beta)-joint DP."""
        return self.event is None


class PrivacyLedger:
    """Record private releases and answer per-report and composed epsilon.

    The ledger is thread-safe: an Optuna study run with ``n_jobs > 1`` may record from several
    threads.

    Examples
    --------
    >>> from privtune.privacy import PrivacyLedger
    >>> ledger = PrivacyLedger()
    >>> for _ in range(10):
    ...     _ = ledger.record_laplace(epsilon=0.5)
    >>> ledger.epsilon_per_report
    0.5
    >>> ledger.composed_epsilon("basic")
    5.0
    """

    def __init__(self) -> None:
        self._reports: list[Report] = []
        self._lock = threading.Lock()

    # -- recording ---------------------------------------------------------------------------
    def record_laplace(self, epsilon: float, owner: str = "default", count: int = 1) -> Report:
        """Record ``count`` releases of the Laplace mechanism with privacy parameter ``epsilon``.

        Parameters
        ----------
        epsilon : float
            ``epsilon > 0``; the noise scale was ``sensitivity / epsilon``.
        owner : str, default="default"
            The data owner the releases are about.
        count : int, default=1
            Number of releases (each one report).

        Returns
        -------
        Report
        """
        epsilon = _check_epsilon(epsilon)
        return self.record_event(laplace_event(epsilon), epsilon, owner=owner, count=count)

    def record_gaussian(
        self,
        noise_multiplier: float,
        epsilon: float,
        delta: float,
        owner: str = "default",
        count: int = 1,
    ) -> Report:
        """Record ``count`` releases of the Gaussian mechanism.

        Parameters
        ----------
        noise_multiplier : float
            The noise's standard deviation over the release's L2 sensitivity.
        epsilon, delta : float
            The per-release guarantee the noise was calibrated for.
        owner : str, default="default"
            The data owner the releases are about.
        count : int, default=1
            Number of releases (each one report).

        Returns
        -------
        Report
        """
        z, delta = _check_gaussian(noise_multiplier, delta)
        return self.record_event(gaussian_event(z), epsilon, delta, owner=owner, count=count)

    def record_event(
        self,
        event: dp_accounting.DpEvent,
        epsilon: float,
        delta: float = 0.0,
        owner: str = "default",
        count: int = 1,
    ) -> Report:
        """Record ``count`` releases of the mechanism ``event`` (a receipt's contents).

        Parameters
        ----------
        event : dp_accounting.DpEvent
            One release's mechanism, at sensitivity 1 (the accountant composes it).
        epsilon, delta : float
            The per-release guarantee (``delta = 0`` for pure epsilon-DP).
        owner : str, default="default"
        count : int, default=1

        Returns
        -------
        Report
        """
        if event is None:
            raise ValueError("event must be a dp_accounting.DpEvent, got None.")
        delta = float(delta)
        if delta != 0.0:
            _check_gaussian(1.0, delta)
        report = Report(_check_epsilon(epsilon), _check_count(count), str(owner), event, delta)
        return self._append(report)

    def record_joint_dp(
        self, alpha: float, beta: float, owner: str = "default", count: int = 1
    ) -> Report:
        """Record ``count`` scores taken by a joint-DP privatizer at ``(alpha, beta)``.

        Joint DP (Dubey 2021, Lemma 2 and Theorem 3) protects each score over the whole run:
        whatever one score is, everything released changes in distribution by at most
        ``(alpha, beta)``; there is no per-score composition (see :meth:`summary`).
        """
        _check_gaussian(1.0, beta)
        report = Report(_check_epsilon(alpha), _check_count(count), str(owner), None, float(beta))
        return self._append(report)

    @classmethod
    def from_receipts(cls, receipts, owner: str = "default") -> PrivacyLedger:
        """A ledger of the releases of ``receipts`` (:class:`privtune.privacy.Receipt`), all
        about ``owner``: what a stateless caller rebuilds from what its trials stored."""
        ledger = cls()
        for receipt in receipts:
            ledger.record_event(receipt.event, receipt.epsilon, receipt.delta, owner=owner)
        return ledger

    def _append(self, report: Report) -> Report:
        with self._lock:
            self._reports.append(report)
        return report

    # -- queries -----------------------------------------------------------------------------
    @property
    def reports(self) -> list[Report]:
        """A copy of the recorded reports, in order."""
        with self._lock:
            return list(self._reports)

    @property
    def n_reports(self) -> int:
        """The number of recorded reports."""
        with self._lock:
            return sum(r.count for r in self._reports)

    @property
    def epsilon_per_report(self) -> float | None:
        """The largest epsilon of a single report (the epsilon-LDP guarantee of every report).

        ``None`` when nothing was recorded.
        """
        with self._lock:
            if not self._reports:
                return None
            return max(r.epsilon for r in self._reports)

    @property
    def delta_per_report(self) -> float:
        """The largest delta of a single report (0.0 for pure epsilon-DP reports or none)."""
        with self._lock:
            return max((r.delta for r in self._reports), default=0.0)

    def n_reports_by_owner(self) -> dict[str, int]:
        """Number of reports per data owner."""
        counts: dict[str, int] = defaultdict(int)
        for r in self.reports:
            counts[r.owner] += r.count
        return dict(counts)

    def composed_epsilon(
        self,
        method: str = "basic",
        delta: float = 0.0,
        owner: str | None = None,
    ) -> float:
        """Composed epsilon over the reports of one data owner.

        Parameters
        ----------
        method : {"basic", "advanced", "pld"}, default="basic"
            ``"basic"``: the sum of the reports' epsilons (a pure epsilon-DP guarantee, ``delta``
            must be 0; with Gaussian reports the deltas add up too: :meth:`summary`).
            ``"advanced"``: the optimal advanced composition theorem (Kairouz, Oh & Viswanath
            2015) through dp-accounting, an (epsilon, delta) guarantee; when the reports have
            different epsilons the largest is used for all (an upper bound); pure epsilon-DP
            reports only. ``"pld"``: dp-accounting's privacy-loss-distribution accountant at
            ``delta`` over the recorded mechanisms, the tightest of the three.
        delta : float, default=0.0
            Target delta for ``"advanced"`` and ``"pld"``, in (0, 1).
        owner : str, optional
            The data owner. By default, the owner with the most reports (the worst case when
            every report is about the same owner, as in hyperparameter tuning on one data set).

        Returns
        -------
        float
            The composed epsilon (0.0 when there are no reports).
        """
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}.")
        mine = self._reports_of(owner)
        if method != "basic" and any(r.joint for r in mine):
            raise ValueError(
                "joint-DP scores do not compose per report: their guarantee is per score over "
                "the whole run (summary()); only the basic (group-privacy) sum is stated."
            )
        if method == "basic":
            if delta != 0.0:
                raise ValueError("basic composition is a pure epsilon-DP bound: use delta=0.")
            return float(math.fsum(r.epsilon * r.count for r in mine))
        if not (0.0 < delta < 1.0):
            raise ValueError(f"delta must be in (0, 1) for method={method!r}, got {delta!r}.")
        if not mine:
            return 0.0
        if method == "advanced":
            if any(r.delta > 0.0 for r in mine):
                raise ValueError(
                    "advanced composition is computed for pure epsilon-DP reports only; these "
                    "include (epsilon, delta) Gaussian reports: use method='pld'."
                )
            k = sum(r.count for r in mine)
            return _advanced_composition(max(r.epsilon for r in mine), k, delta)
        import dp_accounting

        acc = dp_accounting.pld.PLDAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
        )
        # Reports of the same mechanism are one self-composed event: the accountant composes it
        # in one step, where composing the reports one by one costs a convolution each (minutes
        # for 60 reports at epsilon = 10).
        counts: dict[dp_accounting.DpEvent, int] = defaultdict(int)
        for r in mine:
            counts[r.event] += r.count
        for event, count in sorted(counts.items(), key=repr):
            acc.compose(dp_accounting.SelfComposedDpEvent(event, count) if count > 1 else event)
        return float(acc.get_epsilon(delta))

    def _reports_of(self, owner: str | None) -> list[Report]:
        """The reports of ``owner``; by default of the owner with the most reports."""
        reports = self.reports
        if owner is None and reports:
            counts = self.n_reports_by_owner()
            owner = max(counts, key=lambda o: counts[o])
        return [r for r in reports if r.owner == owner]

    def summary(self, delta: float = 1e-6, owner: str | None = None) -> dict:
        """A JSON-friendly summary: counts, per-report epsilon and composed epsilons.

        Laplace reports: ``n_reports``, ``epsilon_per_report``, ``composed_epsilon_basic`` and,
        with a report, ``delta`` and ``composed_epsilon_advanced``. Gaussian reports add
        ``delta_per_report`` and ``composed_delta_basic`` and have no advanced composition.
        Joint-DP scores (:meth:`record_joint_dp`): ``privacy_model`` (``"jdp"``),
        ``n_reports``, ``epsilon_per_report``, ``delta_per_report`` and
        ``composed_epsilon_basic = k alpha``. In tuning every score is computed from the same
        data set, so a change of the data that moves all ``k`` scores is covered only through
        group privacy: ``k alpha``, with a delta that grows as ``k e^{(k - 1) alpha} beta``
        (not stated).

        ``owner`` restricts the summary to one data owner's reports (default: the owner with
        the most reports): reports about different owners do not compose with each other.
        """
        mine = self._reports_of(owner)
        n = sum(r.count for r in mine)
        if any(r.joint for r in mine):
            return {
                "privacy_model": "jdp",
                "n_reports": n,
                "epsilon_per_report": self.epsilon_per_report,
                "delta_per_report": self.delta_per_report,
                "composed_epsilon_basic": self.composed_epsilon("basic"),
            }
        out = {
            "n_reports": n,
            "epsilon_per_report": self.epsilon_per_report,
            "composed_epsilon_basic": self.composed_epsilon("basic", owner=owner),
        }
        gaussian = self.delta_per_report > 0.0
        if gaussian:
            out["delta_per_report"] = self.delta_per_report
            out["composed_delta_basic"] = float(math.fsum(r.delta * r.count for r in mine))
        if n:
            out["delta"] = delta
            if not gaussian:
                out["composed_epsilon_advanced"] = self.composed_epsilon(
                    "advanced", delta, owner=owner
                )
        return out


def _check_count(count) -> int:
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
        raise ValueError(f"count must be a positive integer, got {count!r}.")
    return int(count)


def laplace_event(epsilon: float) -> dp_accounting.DpEvent:
    """The Laplace mechanism with sensitivity 1 and parameter ``epsilon``."""
    import dp_accounting

    return dp_accounting.LaplaceDpEvent(1.0 / epsilon)


def gaussian_event(noise_multiplier: float) -> dp_accounting.DpEvent:
    """The Gaussian mechanism with sensitivity 1 and ``noise_multiplier``."""
    import dp_accounting

    return dp_accounting.GaussianDpEvent(noise_multiplier)


def _advanced_composition(epsilon: float, k: int, delta: float) -> float:
    """Optimal advanced composition of ``k`` epsilon-DP releases at ``delta``.

    dp-accounting evaluates the exact Kairouz–Oh–Viswanath sum, whose terms overflow a float
    once ``epsilon * k`` exceeds about 700; past that the Dwork–Rothblum–Vadhan form of the
    advanced composition theorem, ``epsilon * sqrt(2 k ln(1/delta)) + k epsilon (e^epsilon - 1)``,
    is used (a valid, slightly looser bound). Basic composition ``k * epsilon`` is always valid,
    so the smaller of the two is returned.
    """
    from dp_accounting.pld import accountant as pld_accountant
    from dp_accounting.pld import common as pld_common

    basic = k * epsilon
    try:
        eps = pld_accountant.advanced_composition(
            pld_common.DifferentialPrivacyParameters(epsilon, 0.0), k, delta
        )
    except OverflowError:
        # e^epsilon itself overflows past epsilon = 709: the bound is then infinite
        growth = math.expm1(epsilon) if epsilon < 709.0 else math.inf
        eps = epsilon * math.sqrt(2.0 * k * math.log(1.0 / delta)) + k * epsilon * growth
    if eps is None:
        return basic
    return float(min(eps, basic))
