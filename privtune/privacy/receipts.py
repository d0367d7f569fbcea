"""Receipts: what a release leaves behind, as data that a ledger can be rebuilt from.

A curator's release of one score carries a :class:`Receipt`: the mechanism as a dp-accounting
event (at sensitivity 1), the per-report guarantee, the declared range and a digest binding the
receipt to the released value. A caller without state (an Optuna sampler shared by many workers)
stores the receipt with the value (:meth:`Receipt.to_attrs`, JSON: the event in dp-accounting's
named-tuple form), reads it back (:meth:`Receipt.from_attrs`), checks it against its own
curator's, and rebuilds the ledger from the stored receipts
(:meth:`privtune.privacy.PrivacyLedger.from_receipts`): no epsilon is recomputed by hand.

Examples
--------
>>> from privtune.privacy import LaplaceCurator
>>> curator = LaplaceCurator(1.0, (0.0, 1.0), seed=0)
>>> value, receipt = curator.release(0.9)
>>> attrs = receipt.to_attrs()
>>> attrs["privtune:event"]["class_name"], attrs["privtune:epsilon"]
('LaplaceDpEvent', 1.0)
>>> Receipt.from_attrs(attrs) == receipt and receipt.matches(value)
True
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .units import PrivacyUnit

if TYPE_CHECKING:
    import dp_accounting

__all__ = [
    "ATTR_DELTA",
    "ATTR_DIGEST",
    "ATTR_EPSILON",
    "ATTR_EVENT",
    "ATTR_OWNER",
    "ATTR_UNIT",
    "ATTR_VALUE_RANGE",
    "Receipt",
    "digest",
    "event_from_data",
    "event_to_data",
]

#: The keys of a receipt in a trial's user attributes.
ATTR_EPSILON = "privtune:epsilon"
ATTR_VALUE_RANGE = "privtune:value_range"
ATTR_DIGEST = "privtune:digest"
ATTR_EVENT = "privtune:event"
#: Only for a release with a delta (the Gaussian curator).
ATTR_DELTA = "privtune:delta"
#: The data owner a trial's score is about, when it is not the study's (set by the objective
#: before it returns; reports about different owners do not compose).
ATTR_OWNER = "privtune:owner"
#: Only for a release under the record unit (``"record:<n_val>"``); absent means the score unit.
ATTR_UNIT = "privtune:unit"

#: The only module whose events a stored receipt may name.
_EVENT_MODULE = "dp_accounting.dp_event"


def digest(value: float) -> str:
    """Fingerprint of a released value, binding a receipt to the value it was made for."""
    return hashlib.sha256(float(value).hex().encode()).hexdigest()[:32]


def event_to_data(event: dp_accounting.DpEvent) -> dict[str, Any]:
    """A dp-accounting event as JSON data: its named-tuple form, nested events included."""

    def convert(value: Any) -> Any:
        if hasattr(value, "_asdict"):
            return {k: convert(v) for k, v in value._asdict().items()}
        if isinstance(value, (list, tuple)):
            return [convert(v) for v in value]
        return value

    return convert(event.to_named_tuple())


def event_from_data(data: Mapping[str, Any]) -> dp_accounting.DpEvent:
    """The dp-accounting event of :func:`event_to_data`'s output.

    Only events of ``dp_accounting.dp_event`` are rebuilt (a stored receipt names no other
    module); anything else raises ``ValueError``.
    """
    import dp_accounting.dp_event as dp_event

    def build(value: Any) -> Any:
        if isinstance(value, Mapping) and "class_name" in value:
            if value.get("module_name") != _EVENT_MODULE:
                raise ValueError(f"not a dp-accounting event: {dict(value)!r}.")
            cls = getattr(dp_event, str(value["class_name"]), None)
            if not (isinstance(cls, type) and issubclass(cls, dp_event.DpEvent)):
                raise ValueError(f"unknown dp-accounting event {value['class_name']!r}.")
            fields = {
                k: build(v) for k, v in value.items() if k not in ("module_name", "class_name")
            }
            return cls(**fields)
        if isinstance(value, list):
            return [build(v) for v in value]
        return value

    event = build(data)
    if not isinstance(event, dp_event.DpEvent):
        raise ValueError(f"not a dp-accounting event: {data!r}.")
    return event


@dataclass(frozen=True)
class Receipt:
    """What one release of a score leaves behind.

    Attributes
    ----------
    event : dp_accounting.DpEvent
        The mechanism at sensitivity 1 (``LaplaceDpEvent(1 / epsilon)``,
        ``GaussianDpEvent(noise_multiplier)``).
    epsilon, delta : float
        The per-report guarantee (``delta = 0`` for pure epsilon-DP).
    value_range : tuple of float
        The declared range the score was clipped to.
    digest : str
        :func:`digest` of the released value.
    unit : str
        The privacy unit (:meth:`privtune.privacy.units.PrivacyUnit.to_data`): ``"score"``,
        or ``"record:<n_val>"``; the noise was scaled to that unit's sensitivity.
    """

    event: dp_accounting.DpEvent
    epsilon: float
    delta: float
    value_range: tuple[float, float]
    digest: str
    unit: str = "score"

    def describe(self) -> str:
        """The release's settings as a worker configures them (no value, no digest)."""
        mechanism = type(self.event).__name__.removesuffix("DpEvent")
        delta = f", delta={self.delta:g}" if self.delta else ""
        lo, hi = self.value_range
        return (
            f"{mechanism}, epsilon={self.epsilon:g}{delta}, value_range=({lo:g}, {hi:g}), "
            f"unit={self.unit}"
        )

    def matches(self, value: float) -> bool:
        """Whether ``value`` is the one this receipt was made for."""
        return math.isfinite(float(value)) and digest(value) == self.digest

    def to_attrs(self) -> dict[str, Any]:
        """The receipt as JSON user attributes (the keys ``privtune:*``)."""
        attrs: dict[str, Any] = {
            ATTR_EPSILON: self.epsilon,
            ATTR_VALUE_RANGE: list(self.value_range),
            ATTR_EVENT: event_to_data(self.event),
            ATTR_DIGEST: self.digest,
        }
        if self.delta:
            attrs[ATTR_DELTA] = self.delta
        if self.unit != "score":
            attrs[ATTR_UNIT] = self.unit
        return attrs

    @classmethod
    def from_attrs(cls, attrs: Mapping[str, Any]) -> Receipt | None:
        """The receipt stored in ``attrs``; ``None`` when there is none or it is malformed (a
        caller that needs one fails closed)."""
        try:
            lo, hi = attrs[ATTR_VALUE_RANGE]
            return cls(
                event=event_from_data(attrs[ATTR_EVENT]),
                epsilon=float(attrs[ATTR_EPSILON]),
                delta=float(attrs.get(ATTR_DELTA, 0.0)),
                value_range=(float(lo), float(hi)),
                digest=str(attrs[ATTR_DIGEST]),
                unit=PrivacyUnit.from_data(attrs.get(ATTR_UNIT, "score")).to_data(),
            )
        except (KeyError, TypeError, ValueError):
            return None
