"""Argument checks shared by every layer (no dependency beyond numpy)."""

from __future__ import annotations

import numpy as np

__all__ = ["check_int"]


def check_int(name: str, value, minimum: int = 1) -> int:
    """``value`` as an ``int``, or a ``ValueError`` naming ``name`` and the allowed range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)
