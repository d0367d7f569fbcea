"""Argument checks shared by every layer (no dependency beyond numpy)."""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any

import numpy as np

__all__ = [
    "UNSET",
    "check_bool",
    "check_float",
    "check_int",
    "check_seed",
    "renamed",
    "user_stacklevel",
]


def check_int(name: str, value, minimum: int = 1) -> int:
    """``value`` as an ``int``, or a ``ValueError`` naming ``name`` and the allowed range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def check_seed(name: str, seed: Any, *, generator: bool = False) -> Any:
    """``seed`` as ``None`` or an ``int >= 0`` (or, with ``generator=True``, a
    ``numpy.random.Generator``, returned as it is), or an error naming ``name``: a
    ``TypeError`` for another type, a ``ValueError`` for a negative integer."""
    if seed is None or (generator and isinstance(seed, np.random.Generator)):
        return seed
    allowed = "None, an int >= 0" + (" or a numpy.random.Generator" if generator else "")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{name} must be {allowed}, got {seed!r}.")
    if seed < 0:
        raise ValueError(f"{name} must be {allowed}, got {seed!r}.")
    return int(seed)


def check_bool(name: str, value) -> bool:
    """``value`` as a ``bool`` (a Python or numpy bool), or a ``TypeError`` naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {value!r}.")
    return bool(value)


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
    if isinstance(value, (bool, str, bytes)):
        raise TypeError(f"{name} must be a float, got {value!r}.")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a float, got {value!r}.") from None
    above = v >= low if closed_low else v > low
    if not (math.isfinite(v) and above and (v <= high if closed_high else v < high)):
        if high == math.inf:
            allowed = f"a finite number {'>=' if closed_low else '>'} {low:g}"
        else:
            left = "[" if closed_low else "("
            allowed = f"in {left}{low:g}, {high:g}{']' if closed_high else ')'}"
        raise ValueError(f"{name} must be {allowed}, got {value!r}.")
    return v


#: Sentinel of a deprecated argument that was not passed.
UNSET: Any = object()


def renamed(owner: str, old: str, new: str, old_value, new_value, default):
    """The value of an argument renamed from ``old`` to ``new``, warning when ``old`` is used.

    The old name is kept as a deprecated alias for one release; it is the value when it is set,
    and setting both is an error.

    Parameters
    ----------
    owner : str
        What takes the argument, for the message (e.g. ``"QFFGPUCB"``).
    old, new : str
        The argument's old and new names.
    old_value, new_value
        What was passed under each name (:data:`UNSET` when nothing was).
    default
        The value when neither was passed.
    """
    if old_value is UNSET:
        return default if new_value is UNSET else new_value
    if new_value is not UNSET:
        raise TypeError(f"{owner} takes {new} (formerly {old}), not both.")
    warnings.warn(
        f"{owner}: {old!r} is renamed {new!r}; the old name will be removed in the next release.",
        FutureWarning,
        stacklevel=3,
    )
    return old_value


def user_stacklevel() -> int:
    """The ``stacklevel`` at which a warning raised by the caller points at the user's call:
    the first frame outside privtune and the libraries it runs inside (scikit-learn's search
    machinery, Optuna's study loop, joblib), whatever path led to the warning."""
    inside = {"privtune", "sklearn", "optuna", "joblib"}
    frame = sys._getframe(1)
    level = 1
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] in inside:
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level
