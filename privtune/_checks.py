"""Argument checks shared by every layer (no dependency beyond numpy)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["check_float", "check_int"]


def check_int(name: str, value, minimum: int = 1) -> int:
    """``value`` as an ``int``, or a ``ValueError`` naming ``name`` and the allowed range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def check_float(
    name: str,
    value,
    *,
    low: float,
    high: float = math.inf,
    closed_high: bool = True,
    closed_low: bool = False,
) -> float:
    """``value`` as a finite ``float`` in ``(low, high]`` (``(low, high)`` with
    ``closed_high=False``, ``[low, ...`` with ``closed_low=True``), or an error naming ``name``
    and the allowed range: a ``TypeError`` for a non-number, a ``ValueError`` for a number
    outside the range."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a float, got {value!r}.")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a float, got {value!r}.") from None
    above = v >= low if closed_low else v > low
    if not (math.isfinite(v) and above and (v <= high if closed_high else v < high)):
        if high == math.inf:
            interval = f"{'>=' if closed_low else '>'} {low:g} (finite)"
        else:
            left = "[" if closed_low else "("
            interval = f"{left}{low:g}, {high:g}{']' if closed_high else ')'}"
        raise ValueError(f"{name} must be in {interval}, got {value!r}.")
    return v
