"""How the adapters show a model's estimate of a score to a person: one rule, below both."""

from __future__ import annotations

import math

__all__ = ["estimate_text"]


def estimate_text(
    mean: float, value_range: tuple[float, float] | None, std: float | None = None
) -> str:
    """An estimated score as a log line shows it: clipped to the score's range, and saying so.

    The estimate is the pick's posterior mean (or, for an untuned configuration outside the
    search space, its released score).

    A model fitted to few or noisy reports can estimate an accuracy above 1; shown bare, that
    reads as a measurement. Inside ``value_range`` (or without one) the mean is shown as it
    is, to four decimals, followed by ``+- std`` when a standard deviation is given.

    >>> estimate_text(0.91234, (0.0, 1.0))
    '0.9123'
    >>> print(estimate_text(1.0685, (0.0, 1.0), std=0.05))  # doctest: +NORMALIZE_WHITESPACE
    1.0000 +- 0.0500 (clipped to the score's range [0.0, 1.0]; the estimate is 1.0685, from
    few or noisy reports)
    """
    if not math.isfinite(mean):
        return "none yet"
    band = "" if std is None or not math.isfinite(std) else f" +- {std:.4f}"
    if value_range is None:
        return f"{mean:.4f}{band}"
    lo, hi = value_range
    shown = min(max(mean, lo), hi)
    if shown == mean:
        return f"{mean:.4f}{band}"
    return (
        f"{shown:.4f}{band} (clipped to the score's range [{lo}, {hi}]; the estimate is "
        f"{mean:.6g}, from few or noisy reports)"
    )
