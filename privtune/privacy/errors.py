"""The bottom of the privacy layer: its errors and the checks of its arguments.

Every other module of :mod:`privtune.privacy` imports from here and nothing here imports them:
the layer reads from the bottom up as checks and errors (this module, :mod:`.withhold`), then
accounting (:mod:`.ledger`, :mod:`.receipts`, :mod:`.composition`, :mod:`.units`,
:mod:`.accounting`), then mechanisms (:mod:`.curator`, :mod:`.gaussian`, :mod:`.noise`,
:mod:`.seeds`), then the modes a user picks (:mod:`.budget`, :mod:`.selection`,
:mod:`.release`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .._checks import check_float

__all__ = [
    "BudgetExhaustedError",
    "PrivacyError",
    "check_budget_pair",
    "check_epsilon",
    "check_gaussian",
    "check_value_range",
]


class PrivacyError(RuntimeError):
    """A privacy rule would be broken: privtune refuses to go on (it fails closed)."""


class BudgetExhaustedError(PrivacyError):
    """A release would exceed the total privacy budget: nothing is released."""


def check_value_range(value_range: Any, name: str = "value_range") -> tuple[float, float]:
    """A pair ``(lo, hi)`` of finite real numbers with ``lo < hi``: a tuple, a list or a
    1-D array of two numbers (not a string, a mapping or a set, whose items are not a range)."""
    message = f"{name} must be a pair (lo, hi) of finite numbers with lo < hi, got {value_range!r}."
    if isinstance(value_range, np.ndarray):
        items = value_range.tolist() if value_range.ndim == 1 else None
    elif isinstance(value_range, (tuple, list)):
        items = list(value_range)
    else:  # a string, bytes, a dict, a set, a scalar...
        items = None
    if items is None or len(items) != 2:
        raise ValueError(message)
    if not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in items):
        raise ValueError(message)
    lo, hi = (float(v) for v in items)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi and math.isfinite(hi - lo)):
        raise ValueError(message)
    return lo, hi


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """``epsilon`` as a finite float ``> 0``: a ``TypeError`` for a non-number (a string
    included), a ``ValueError`` naming ``name`` otherwise."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a float > 0, got {epsilon!r}.")
    value = float(epsilon)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite float > 0, got {epsilon!r}.")
    return value


def check_gaussian(noise_multiplier: Any, delta: Any) -> tuple[float, float]:
    """Validate a Gaussian release's noise multiplier (> 0) and calibrated delta (in (0, 1))."""
    z = float(noise_multiplier)
    if not (math.isfinite(z) and z > 0.0):
        raise ValueError(f"noise_multiplier must be a finite float > 0, got {noise_multiplier!r}.")
    if not 0.0 < float(delta) < 1.0:
        raise ValueError(f"delta must be in the open interval (0, 1), got {delta!r}.")
    return z, float(delta)


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
