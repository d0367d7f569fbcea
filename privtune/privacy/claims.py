"""A total budget counted where releases happen in many processes: claims and receipts.

Where the reports of one budget are released by several workers that share only a store (the
trials of an Optuna study), each report is counted from what the store holds about it: a claim
written before it computes anything, a refusal, a receipt once it released, and whether it ended
without releasing. :func:`count_reports` is the rule, free of any storage; the adapter maps its
records to :class:`ReportState`.

Examples
--------
>>> from privtune.privacy.claims import ReportState, count_reports
>>> budget = {"epsilon": 1.0, "delta": 1e-6, "n_reports": 3}
>>> states = [
...     ReportState(released=True, claim=budget),
...     ReportState(released=False, claim=budget),  # under way
...     ReportState(released=False, claim=budget, ended=True),  # failed: gives its share back
...     ReportState(released=False, claim=budget, refused=True),
... ]
>>> count_reports(states, budget)
(2, 1, None)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["ReportState", "count_reports", "describe_budget"]


@dataclass(frozen=True)
class ReportState:
    """What a store holds about one report of a shared budget.

    Attributes
    ----------
    released : bool
        A receipt was stored: the report was released.
    claim : dict or None
        The budget the report was claimed under (:meth:`PrivacyBudget.to_attrs`), if any.
    refused : bool
        The claim was refused (the report will never release).
    ended : bool
        The report's process ended without a release (it can no longer release).
    """

    released: bool
    claim: dict[str, Any] | None = None
    refused: bool = False
    ended: bool = False


def count_reports(
    states: Iterable[ReportState], budget: dict[str, Any]
) -> tuple[int, int, int | None]:
    """What counts against ``budget``.

    Returns
    -------
    reserved : int
        Reports that released or may still release: a receipt, or a claim that was neither
        refused nor ended without a release.
    released : int
        Reports with a receipt.
    other : int or None
        The index of a report whose live claim names another budget.
    """
    reserved = released = 0
    other = None
    for i, s in enumerate(states):
        if s.released:
            released += 1
            reserved += 1
            continue
        if s.claim is None or s.refused or s.ended:
            continue
        reserved += 1
        if s.claim != budget:
            other = i
    return reserved, released, other


def describe_budget(budget: dict[str, Any] | None) -> str:
    """A total budget (a claim's data) as a worker configures it."""
    if budget is None:
        return "none: epsilon per report"
    return (
        f"privacy_budget=({budget.get('epsilon')}, {budget.get('delta')}), "
        f"n_trials={budget.get('n_reports')}"
    )
