"""The one release path: a raw score in, a released score and its receipt out.

Every adapter that releases scores (the Optuna sampler's privatized objective, the scikit-learn
search's candidates, private selection's candidates) calls :class:`ScoreRelease`; none of them
clips, draws noise, seeds it, claims budget, records an event or writes a receipt itself.
One call does, in order:

1. reads the objective's value as one score (a one-element sequence is unwrapped, an integer
   too large for a float is clipped like any other out-of-range value, a value that is no
   number raises a ``TypeError`` that names no value);
2. lets a non-finite score (NaN, infinite: a failed evaluation) release nothing;
3. claims one report of the budget, when there is a meter, before any noise is drawn
   (:class:`~privtune.privacy.composition.BudgetMeter`);
4. draws the noise from the report's own generator, keyed by ``(noise_seed, owner, number)``
   when a seed is given (:func:`~privtune.privacy.seeds.report_generator`; experiments only), from
   fresh entropy otherwise;
5. clips to the declared range, adds the curator's noise at the unit's sensitivity
   (:mod:`privtune.privacy.units`), records the dp-accounting event in the ledger and hands back
   the :class:`~privtune.privacy.Receipt`.

Examples
--------
>>> from privtune.privacy import LaplaceCurator
>>> from privtune.privacy.release import ScoreRelease
>>> from privtune.privacy.units import PrivacyUnit
>>> curator = LaplaceCurator(1.0, (0.0, 1.0), unit=PrivacyUnit.record(5000))
>>> release = ScoreRelease(curator, noise_seed=0)
>>> value, receipt = release(0.93, owner="study", number=0)
>>> abs(value - 0.93) < 0.01, receipt.unit, release.ledger.n_reports
(True, 'record:5000', 1)
>>> release(float("nan"), owner="study", number=1)
(nan, None)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .curator import GaussianCurator, LaplaceCurator
from .errors import PrivacyError
from .ledger import PrivacyLedger
from .receipts import Receipt
from .seeds import report_generator
from .units import PrivacyUnit
from .withhold import clean

__all__ = ["CandidateReleases", "ScoreRelease", "as_score", "refuse_second_release"]


def as_score(value: Any, value_range: tuple[float, float], source: str = "the objective") -> float:
    """An objective's return value as one float (NaN and infinities kept, to release nothing).

    An integer is clipped to ``value_range`` before the conversion, so one too large for a float
    behaves like any other value out of the range (clipped, silently) instead of overflowing.
    A value that is not one number is refused with an error that names ``source`` (what
    returned it) and the value's type, never the value: it may be a raw score.
    """
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        if len(value) != 1:
            raise clean(
                ValueError(
                    "privtune releases one score at a time (single-objective studies only); "
                    f"{source} returned {len(value)} values."
                )
            )
        value = value[0]
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        lo, hi = value_range
        n = int(value)
        return min(max(float(n), lo), hi) if abs(n) < 2**1000 else (lo if n < 0 else hi)
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        pass  # raised below, outside the handler: the conversion's error quotes the value
    raise clean(TypeError(f"{source} must return a float, got a {type(value).__name__}."))


class ScoreRelease:
    """Release raw scores through one curator: the path every adapter takes.

    Parameters
    ----------
    curator : LaplaceCurator or GaussianCurator
        The mechanism (its range, unit, epsilon and noise).
    noise_seed : int, optional
        For reproducible experiments only: each report's noise then comes from
        ``report_generator(noise_seed, owner, number)``.
    meter : BudgetMeter, optional
        Counts the releases against a total budget in this process, before any noise.

    Attributes
    ----------
    ledger : PrivacyLedger
        The curator's ledger: every release, as a dp-accounting event.
    """

    def __init__(
        self,
        curator: LaplaceCurator | GaussianCurator,
        *,
        noise_seed: int | None = None,
        meter: Any = None,
    ) -> None:
        self.curator = curator
        self.noise_seed = None if noise_seed is None else int(noise_seed)
        if meter is not None:
            curator.meter = meter

    @property
    def ledger(self) -> PrivacyLedger:
        return self.curator.ledger

    @property
    def unit(self) -> PrivacyUnit:
        return self.curator.unit

    @property
    def epsilon(self) -> float:
        return self.curator.epsilon

    @property
    def value_range(self) -> tuple[float, float]:
        return self.curator.value_range

    def receipt(self, value: float) -> Receipt:
        """The receipt this path issues for a released ``value`` (to check a stored one)."""
        return self.curator.receipt(value)

    def check(self, receipt: Receipt, value: float, what: str) -> None:
        """Fail closed unless ``receipt`` is the one this path issues for ``value``: the
        value was released with another mechanism, epsilon, range or unit."""
        mine = self.receipt(value)
        if receipt != mine:
            raise PrivacyError(
                f"{what} was released through another worker's curator ({receipt.describe()}); "
                f"this worker's curator is {mine.describe()}. Every worker must release its "
                "scores with the same algorithm, epsilon, value_range and privacy unit: start "
                "this worker with the study's settings. The stored values are privatized; "
                "nothing was released by this worker."
            )

    def __call__(self, value: Any, *, owner: str, number: int) -> tuple[float, Receipt | None]:
        """Release one score.

        Parameters
        ----------
        value : float, int or one-element sequence
            The raw score.
        owner : str
            The data owner it is about (the ledger composes per owner; the noise's seed key).
        number : int
            The report's number within ``owner`` (the noise's seed key).

        Returns
        -------
        value : float
            The released score; NaN for a non-finite raw score, which releases nothing.
        receipt : Receipt or None
            ``None`` when nothing was released.
        """
        y = as_score(value, self.value_range)
        if not math.isfinite(y):
            return math.nan, None
        rng = report_generator(self.noise_seed, owner, number)
        return self.curator.release(y, owner=owner, rng=rng)


def refuse_second_release(has_receipt: bool, what: str) -> None:
    """Fail closed when ``what`` (a trial) already released a score: a second release would
    draw fresh noise on the same data and count once where it spends twice."""
    if has_receipt:
        raise clean(
            PrivacyError(
                f"{what} already released a score: a second release would draw fresh noise on "
                "the same data (averaging it away) while the privacy report counts one. Retry "
                "in a new trial."
            )
        )


class CandidateReleases:
    """A search's released scores: each candidate's score of each reported metric, released
    once, in candidate order, through one :class:`ScoreRelease` per metric.

    Every metric's reports are about the same data (one owner, numbered in the order of
    release), so they compose in one ledger.

    Parameters
    ----------
    releases : mapping of str to ScoreRelease
        One release path per reported metric, all recording in the same ledger.
    owner : str, default="search"
    """

    def __init__(self, releases: Mapping[str, ScoreRelease], owner: str = "search") -> None:
        self.releases = dict(releases)
        self.owner = owner
        self._values: dict[str, list[float]] = {m: [] for m in self.releases}

    @property
    def ledger(self) -> PrivacyLedger:
        """The ledger every metric's release records in."""
        return next(iter(self.releases.values())).ledger

    def update(
        self, raw: Mapping[str, Sequence[float]], n_candidates: int
    ) -> dict[str, np.ndarray]:
        """Release the scores of the candidates not released yet and return every
        candidate's released value per metric (NaN where the raw score was not finite).

        Parameters
        ----------
        raw : mapping of str to sequence of float
            Each reported metric's raw score per candidate so far.
        n_candidates : int
        """
        for m, release in self.releases.items():
            values = self._values[m]
            for i in range(len(values), n_candidates):
                number = self.ledger.n_reports
                values.append(release(float(raw[m][i]), owner=self.owner, number=number)[0])
        return {m: np.asarray(v, dtype=float) for m, v in self._values.items()}
