"""Privacy units: whom a released score protects, and the sensitivity that follows from it.

Two units, each with its own neighbouring relation:

- ``"score"``, the papers' setting (Zhou & Tan's CTL(epsilon) on each reward): the whole score is
  the secret. Two inputs of a report are neighbours when they are any two scores in the declared
  ``value_range`` ``[lo, hi]``, so the sensitivity is ``hi - lo``. This protects everything the
  score depends on at once (the whole data set behind it), and costs noise of the order of the
  score's whole range.
- ``"record"``: one record of a hold-out validation set is the secret. The score is a mean of a
  per-record value clipped to ``[lo, hi]`` over the ``n_val`` validation records, computed by
  privtune itself (:mod:`privtune.records`). Two validation sets are neighbours when they differ
  in one record (replace-one, ``n_val`` public), so the mean moves by at most
  ``(hi - lo) / n_val``: the noise is ``n_val`` times smaller than the score unit's. The
  training records are not protected unless the estimator is differentially private itself.

Both units release through the same mechanisms (the curators), with noise scaled to the unit's
sensitivity. A Laplace release of sensitivity ``s`` and scale ``s / epsilon`` has the privacy loss
of ``LaplaceDpEvent(1 / epsilon)`` at sensitivity 1 whatever ``s`` is, so the accounting
(:mod:`.composition`, :class:`~privtune.privacy.PrivacyLedger`) is the same for both. Under
replace-one the pair of output distributions of two neighbours is a pair of Laplace
distributions whose centres differ by at most ``s``: the same dominating pair as dp-accounting's
add-or-remove Laplace event, which its PLD accountant composes (it refuses ``LaplaceDpEvent``
under ``REPLACE_ONE``, while its RDP accountant accepts it and gives a looser bound: the tests
compare the two).

Examples
--------
>>> from privtune.privacy.units import PrivacyUnit
>>> PrivacyUnit.record(5000).sensitivity((0.0, 1.0))
0.0002
>>> PrivacyUnit.score().sensitivity((0.0, 1.0))
1.0
>>> PrivacyUnit.record(5000).protects(1.0, 1e-6)
'each of the 5000 validation records, at total (epsilon=1, delta=1e-06)'
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

from .composition import end_to_end
from .errors import check_value_range

__all__ = ["UNITS", "WEAK_EPSILON", "PrivacyUnit", "describe_guarantee"]

#: The privacy units a user may choose.
UNITS = ("score", "record")

#: Above this total epsilon a guarantee protects little: ``e^10`` is a likelihood ratio of
#: about 22,000 between neighbours.
WEAK_EPSILON = 10.0


@dataclass(frozen=True)
class PrivacyUnit:
    """Whom a release protects: the whole score, or each of ``n_val`` validation records.

    Parameters
    ----------
    kind : {"score", "record"}
    n_val : int, optional
        The number of validation records (public), with ``kind="record"`` only.
    """

    kind: str = "score"
    n_val: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in UNITS:
            raise ValueError(f"privacy_unit must be one of {UNITS}, got {self.kind!r}.")
        if self.kind == "record":
            n = self.n_val
            if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
                raise ValueError(
                    f"a record-level unit needs the number of validation records n_val, an "
                    f"integer >= 1; got {n!r}."
                )
            object.__setattr__(self, "n_val", int(n))
        elif self.n_val is not None:
            raise ValueError("n_val applies to privacy_unit='record' only.")

    @classmethod
    def score(cls) -> PrivacyUnit:
        """The whole score as the secret (the papers' local model)."""
        return cls("score")

    @classmethod
    def record(cls, n_val: int) -> PrivacyUnit:
        """Each of ``n_val`` validation records as the secret (replace-one)."""
        return cls("record", n_val)

    @property
    def relation(self) -> str:
        """The neighbouring relation, in words."""
        if self.kind == "score":
            return "any two scores in value_range (the local model)"
        return f"replace one of the {self.n_val} validation records (n_val public)"

    def sensitivity(self, value_range: Any) -> float:
        """The largest change of a released score between neighbours: ``hi - lo`` for the
        score unit, ``(hi - lo) / n_val`` for the record unit."""
        lo, hi = check_value_range(value_range)
        return (hi - lo) if self.n_val is None else (hi - lo) / self.n_val

    def describe(self) -> str:
        """What is protected, in a few words."""
        if self.kind == "score":
            return "each whole score (everything it depends on at once)"
        return f"each of the {self.n_val} validation records"

    def protects(self, epsilon: float, delta: float = 0.0) -> str:
        """The sentence printed next to a total ``(epsilon, delta)``; an epsilon above
        :data:`WEAK_EPSILON` is said to protect little."""
        return describe_guarantee(self.describe(), epsilon, delta)

    def to_data(self) -> str:
        """The unit as stored with a receipt: ``"score"`` or ``"record:<n_val>"``."""
        return "score" if self.n_val is None else f"record:{self.n_val}"

    @classmethod
    def from_data(cls, data: Any) -> PrivacyUnit:
        """The unit of :meth:`to_data`'s output (``ValueError`` for anything else)."""
        text = str(data)
        if text == "score":
            return cls.score()
        kind, _, n = text.partition(":")
        if kind != "record" or not n.isdigit():
            raise ValueError(f"not a privacy unit: {data!r}.")
        return cls.record(int(n))


def describe_guarantee(what: str, epsilon: float, delta: float = 0.0) -> str:
    """``"<what>, at total (epsilon=.., delta=..)"``, with a warning in words when epsilon is
    above :data:`WEAK_EPSILON`."""
    sentence = f"{what}, at total (epsilon={epsilon:.4g}, delta={delta:.3g})"
    if epsilon > WEAK_EPSILON:
        sentence += (
            f"; an epsilon above {WEAK_EPSILON:g} protects little (neighbours may be told "
            f"apart with odds up to e^{epsilon:.3g})"
        )
    return sentence


def with_end_to_end(
    report: dict[str, Any],
    fit_epsilon: float,
    fit_delta: float,
    n_fits: int,
    refit: bool,
) -> dict[str, Any]:
    """``report`` (a record-unit privacy report) with the training records' guarantee of an
    estimator that is ``(fit_epsilon, fit_delta)``-DP per fit, composed with the validation
    records' releases by :func:`~privtune.privacy.composition.end_to_end` (``n_fits`` fits,
    and the refit when ``refit``), and its ``protects`` sentence for every record."""
    key = next(
        k for k in ("composed_epsilon_pld", "epsilon", "composed_epsilon_basic") if k in report
    )
    delta = float(report.get("delta", 0.0))
    total = end_to_end(
        float(report[key]), delta, fit_epsilon, fit_delta, n_fits, refit, max(delta, 1e-6)
    )
    out = {**report, "estimator_epsilon": fit_epsilon, "estimator_delta": fit_delta}
    out["end_to_end"] = total
    out["protects"] = describe_guarantee(
        "each record of the data, training and validation (end to end)",
        total["epsilon"],
        total["delta"],
    )
    return out
