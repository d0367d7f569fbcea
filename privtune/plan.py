"""The privacy plan of one tuner: its privacy settings, checked once where they enter, and
everything made from them, in one place.

An adapter (the Optuna sampler, the scikit-learn searches) builds one :class:`PrivacyPlan`
from its arguments with :meth:`PrivacyPlan.check`, the one function that validates
``epsilon``, ``privacy_budget``, ``value_range`` and ``privacy_unit``, and hands it down. From
the plan come:

- the epsilon the model is built with (:attr:`PrivacyPlan.model_epsilon`: the noise it is
  actually told, ``n_val`` times smaller under the record unit);
- every release of a score (:meth:`PrivacyPlan.release`: the curator of the algorithm's
  privacy model at the unit's sensitivity, the noise's seeding, the budget's meter), and
  private selection's one-shot choice (:meth:`PrivacyPlan.one_shot`);
- the privacy report (:meth:`PrivacyPlan.report`).

The privacy package's classes (the curators, :class:`~privtune.privacy.PrivacyBudget`, the
selection plans) keep their own guards for direct use; a plan hands them checked values.

Nothing here imports Optuna or scikit-learn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._checks import check_float, check_int
from .privacy.composition import BudgetMeter, PrivacyBudget
from .privacy.curator import GaussianCurator, LaplaceCurator
from .privacy.errors import check_budget_pair, check_epsilon, check_value_range
from .privacy.gaussian import check_alpha_beta, local_jdp_noise_std
from .privacy.ledger import PrivacyLedger
from .privacy.oneshot import (
    DEFAULT_MECHANISM,
    UNTUNED_HEAD_START,
    OneShotChoice,
    OneShotPlan,
    one_shot_choice,
)
from .privacy.release import ScoreRelease
from .privacy.units import UNITS, PrivacyUnit
from .registry import QFF_DEFAULT_BETA, REGISTRY, AlgorithmSpec, PrivacyModel, resolve_algorithm

__all__ = ["ANY", "REPORT_DELTA", "SEARCH", "STUDY", "Door", "PrivacyPlan", "privacy_summary"]

#: The delta at which a report states its composed epsilon when no budget names one.
REPORT_DELTA = 1e-6

#: ``value_range`` checked: ``{metric: (lo, hi)}``, the key ``None`` for the optimized score.
Ranges = Mapping[str | None, tuple[float, float]]


@dataclass(frozen=True)
class Door:
    """The door a tuner's settings enter by, and the rules that follow from what it publishes.

    Attributes
    ----------
    what : str
        What a total budget covers, in messages (``"the study"``, ``"the search"``).
    n_name : str
        The door's name for the planned number of reports (``"n_trials"``, ``"n_iter"``).
    by_metric : bool
        ``value_range`` may name metrics (a search reports several).
    require_range : bool
        Privacy needs ``value_range`` at once (no scorer tells the range).
    publishes : bool
        Every released score is published (a search's ``cv_results_``), so joint DP, whose
        raw scores stay with a trusted privatizer, is refused.
    unit_without_privacy : bool
        ``privacy_unit`` may be given without privacy, and then means nothing (a search keeps
        its other settings when ``epsilon`` is removed); otherwise it is refused.
    """

    what: str
    n_name: str
    by_metric: bool = False
    require_range: bool = False
    publishes: bool = False
    unit_without_privacy: bool = False


#: A door with no rule of its own (direct use of the plan).
ANY = Door("the study", "n_trials")
#: The Optuna sampler's door: a study.
STUDY = Door("the study", "n_trials", require_range=True)
#: The scikit-learn searches' door.
SEARCH = Door("the search", "n_iter", by_metric=True, publishes=True, unit_without_privacy=True)


@dataclass(frozen=True)
class PrivacyPlan:
    """A tuner's privacy settings, checked (:meth:`check`), and what is made from them.

    Attributes
    ----------
    algorithm : str
        The algorithm's name (``"auto"`` resolved), whose registry entry names the curator.
    epsilon : float or None
        Each report's epsilon: as given, or the budget's share once spread over the planned
        reports; ``None`` without privacy, and for a ``privacy_budget`` that is not spread
        (private selection's, the whole publication's).
    privacy_budget : tuple of float or None
        ``(epsilon, delta)`` as the user gave it, checked.
    budget : PrivacyBudget or None
        ``privacy_budget`` spread evenly over the planned reports.
    ranges : mapping
        ``value_range`` checked, as ``{metric: (lo, hi)}``; the key ``None`` stands for the
        optimized score (a pair given alone). Empty without a range.
    unit_kind : {"score", "record"}
    kind : {"scores", "choice"}
        What the tuner publishes: ``"scores"``, every score released through a curator (a
        budget spread over the planned reports); ``"choice"``, one private choice among
        candidates fixed in advance (a budget is the choice's whole, and no score is released
        where it is computed: the record unit's choice, private selection).
    n_val : int or None
        The record unit's number of validation records, once known (:meth:`bound`).
    noise_seed : int or None
        Experiments only: the seed of every release's noise (:mod:`privtune.privacy.seeds`).
    privacy_beta : float
        Dubey's ``beta`` of the qff algorithms' (alpha, beta) guarantee.
    """

    algorithm: str = "random"
    epsilon: float | None = None
    privacy_budget: tuple[float, float] | None = None
    budget: PrivacyBudget | None = None
    ranges: Ranges = field(default_factory=dict)
    unit_kind: str = "score"
    kind: str = "scores"
    n_val: int | None = None
    noise_seed: int | None = None
    privacy_beta: float = QFF_DEFAULT_BETA

    # -- the one check -------------------------------------------------------------------------
    @classmethod
    def check(
        cls,
        algorithm: str = "random",
        *,
        epsilon: Any = None,
        privacy_budget: Any = None,
        value_range: Any = None,
        privacy_unit: Any = "score",
        n_reports: int | Callable[[Ranges], int] | None = None,
        kind: str = "scores",
        noise_seed: int | None = None,
        optimizer_kwargs: Mapping[str, Any] | None = None,
        door: Door = ANY,
    ) -> PrivacyPlan:
        """Check a tuner's privacy settings, with errors that name the argument and what is
        allowed.

        Parameters
        ----------
        algorithm : str, default="random"
            A name of :data:`privtune.registry.REGISTRY` or ``"auto"``.
        epsilon : float, optional
            Each report's epsilon, ``> 0``.
        privacy_budget : tuple of float, optional
            ``(epsilon, delta)``; not with ``epsilon``. Spread over ``n_reports`` when that is
            given, available only for the algorithms whose scores go through the Laplace
            curator.
        value_range : tuple of float or dict, optional
            ``(lo, hi)``, or at a door ``by_metric`` a dict ``{metric: (lo, hi)}``.
        privacy_unit : {"score", "record"}, default="score"
            The record unit needs privacy and the Laplace curator, and one range.
        n_reports : int or callable, optional
            The planned number of reports a ``privacy_budget`` is spread over (required with a
            budget that is spread), or a function of the checked ranges that gives it (a search
            releases one report per candidate and named metric).
        kind : {"scores", "choice"}, default="scores"
            ``"scores"``: ``privacy_budget`` is spread over ``n_reports``. ``"choice"``: the
            budget is the whole publication's (one private choice), and :attr:`epsilon` stays
            ``None`` with it.
        noise_seed : int, optional
            The noise's seed, carried as it is (the adapter checks it under its own name).
        optimizer_kwargs : mapping, optional
            Read for the qff algorithms' ``privacy_beta`` (``beta``, its deprecated name).
        door : Door, default=ANY
            The door the settings enter by (:data:`STUDY`, :data:`SEARCH`): the rules that
            follow from what it publishes, and its names in messages.

        Returns
        -------
        PrivacyPlan
        """
        what, n_name = door.what, door.n_name
        if epsilon is not None and privacy_budget is not None:
            raise ValueError(
                f"Pass epsilon or privacy_budget (the total over {what}), not both; got "
                f"epsilon={epsilon!r} and privacy_budget={privacy_budget!r}."
            )
        epsilon = None if epsilon is None else check_epsilon(epsilon)
        pair = None if privacy_budget is None else check_budget_pair(privacy_budget)
        private = epsilon is not None or pair is not None
        algorithm = resolve_algorithm(algorithm, epsilon if pair is None else pair[0])
        spec = REGISTRY[algorithm]
        laplace = spec.curator == "laplace"
        if pair is not None and not laplace:
            raise ValueError(
                "privacy_budget is available for the algorithms whose scores go through the "
                f"Laplace curator, not for algorithm={algorithm!r}, whose Gaussian noise is set "
                "by (alpha, privacy_beta): pass epsilon (alpha) instead."
            )
        if privacy_unit not in UNITS:
            raise ValueError(f"privacy_unit must be 'score' or 'record', got {privacy_unit!r}.")
        if privacy_unit == "record" and not private and door.unit_without_privacy:
            privacy_unit = "score"  # without privacy there is no unit to protect
        if privacy_unit == "record" and not (private and laplace):
            raise ValueError(
                "privacy_unit='record' protects each validation record through the Laplace "
                "curator: it needs epsilon or privacy_budget, and an algorithm whose scores go "
                f"through that curator (not {algorithm!r})."
            )
        if privacy_unit == "record" and isinstance(value_range, dict):
            raise ValueError(
                "Under privacy_unit='record', value_range is the range (lo, hi) of each "
                "validation record's value of the one optimized metric, not a dict."
            )
        ranges = _check_ranges(value_range, door.by_metric)
        if private and door.require_range and not ranges:
            raise ValueError(
                "value_range is required when epsilon is set: the curator clips every score to "
                "(lo, hi) so that one report's sensitivity is hi - lo. For accuracy or AUC use "
                "value_range=(0.0, 1.0)."
            )
        if private and door.publishes and not spec.publishable:
            raise ValueError(
                f"algorithm={algorithm!r} is not available in a search: under joint DP the "
                "raw scores stay with a trusted privatizer, but a search publishes each "
                "candidate's score in cv_results_ and best_score_. Use algorithm='qff-ldp' "
                "(each score released with Gaussian noise, Dubey's local joint DP), or "
                f"PrivateGPUCBSampler({algorithm!r}, ...) with an Optuna storage you trust."
            )
        if kind not in ("scores", "choice"):
            raise ValueError(f"kind must be 'scores' or 'choice', got {kind!r}.")
        budget = None
        if pair is not None and kind == "scores":
            if n_reports is None:
                raise ValueError(
                    f"{n_name} is required with privacy_budget: the budget is spread over the "
                    f"planned number of reports, so {n_name} must be known before the first one."
                )
            planned = n_reports(ranges) if callable(n_reports) else n_reports
            budget = PrivacyBudget(*pair, check_int(n_name, planned))
            epsilon = budget.epsilon_per_report
        beta = QFF_DEFAULT_BETA
        if spec.private_model != PrivacyModel.LDP:  # Dubey's (alpha, beta): the qff algorithms
            kwargs = optimizer_kwargs if isinstance(optimizer_kwargs, Mapping) else {}
            beta = kwargs.get("privacy_beta", kwargs.get("beta", QFF_DEFAULT_BETA))
            _, beta = check_alpha_beta(
                1.0 if epsilon is None else epsilon,
                beta,
                beta_name="optimizer_kwargs['privacy_beta']",
            )
        return cls(
            algorithm=algorithm,
            epsilon=epsilon,
            privacy_budget=pair,
            budget=budget,
            ranges=ranges,
            unit_kind=privacy_unit,
            kind=kind,
            noise_seed=noise_seed,
            privacy_beta=beta,
        )

    def bound(self, n_val: int) -> PrivacyPlan:
        """This plan with the record unit's number of validation records."""
        return dataclasses.replace(self, n_val=check_int("n_val", n_val))

    # -- what the plan says -------------------------------------------------------------------
    @property
    def spec(self) -> AlgorithmSpec:
        """The algorithm's registry entry."""
        return REGISTRY[self.algorithm]

    @property
    def private(self) -> bool:
        """Whether the scores are private (``epsilon`` or ``privacy_budget`` given)."""
        return self.epsilon is not None or self.privacy_budget is not None

    @property
    def privacy_model(self) -> PrivacyModel | None:
        """The algorithm's privacy model under this plan (``None`` without privacy)."""
        return self.spec.privacy_model(self.epsilon)

    @property
    def releases_scores(self) -> bool:
        """Whether each score is released through a curator where it is computed (LDP,
        local joint DP, the record unit's every-score release); not without privacy, under
        joint DP, nor when the plan publishes one choice."""
        return self.kind == "scores" and self.epsilon is not None and self.spec.curator is not None

    @property
    def chooses(self) -> bool:
        """Whether the plan publishes one private choice among candidates fixed in advance
        (:mod:`privtune.record_choice`)."""
        return self.kind == "choice" and self.private

    @property
    def setting(self) -> str:
        """The name of the setting the user gave, for messages: ``"epsilon"`` or
        ``"privacy_budget"``."""
        return "epsilon" if self.privacy_budget is None else "privacy_budget"

    @property
    def value_range(self) -> tuple[float, float] | None:
        """The range given as one pair (the optimized score's), or ``None``."""
        return self.ranges.get(None)

    @property
    def delta(self) -> float:
        """The delta of the report's composed epsilon: the budget's, else
        :data:`REPORT_DELTA`."""
        return REPORT_DELTA if self.privacy_budget is None else self.privacy_budget[1]

    @property
    def unit(self) -> PrivacyUnit | None:
        """The privacy unit; ``None`` under the record unit until ``n_val`` is known."""
        if self.unit_kind == "score":
            return PrivacyUnit.score()
        return None if self.n_val is None else PrivacyUnit.record(self.n_val)

    @property
    def model_epsilon(self) -> float | None:
        """The epsilon the model is built with: the one whose Laplace scale
        ``(hi - lo) / epsilon`` is the released noise's. Each report's epsilon under the score
        unit; ``epsilon * n_val`` under the record unit, whose noise is ``n_val`` times smaller
        than the score's range over epsilon. The reward scale, the noise variance and the
        papers' truncation parameters read it, so the model learns from the noise it is
        actually told."""
        if self.kind == "choice":
            return None  # the model learns from exact scores; only the choice is private
        if self.epsilon is None or self.unit_kind != "record" or self.n_val is None:
            return self.epsilon
        return self.epsilon * self.n_val

    # -- what is made from it -----------------------------------------------------------------
    def curator(
        self,
        value_range: tuple[float, float] | None = None,
        *,
        ledger: PrivacyLedger | None = None,
        epsilon: float | None = None,
    ) -> LaplaceCurator | GaussianCurator | None:
        """The curator of each score, at the unit's sensitivity; ``None`` when no score is
        released where it is computed (no privacy, joint DP).

        - the Laplace curator (epsilon-LDP, the record unit): scale ``sensitivity / epsilon``;
        - Dubey's local joint DP (``"qff-ldp"``): :class:`~privtune.privacy.GaussianCurator`
          with Lemma 5's ``sigma_u`` for rewards in ``[0, 1]``, ``alpha = epsilon`` and
          ``beta = privacy_beta``: the client's part of Alg. 3, the optimizer adds the rest.

        Parameters
        ----------
        value_range : tuple of float, optional
            The score's range (default: the plan's one pair).
        ledger : PrivacyLedger, optional
            Where the curator records its releases.
        epsilon : float, optional
            Each report's epsilon (default: the plan's); private selection's score share.
        """
        epsilon = self.epsilon if epsilon is None else epsilon
        if epsilon is None or self.spec.curator is None:
            return None
        declared = self.value_range if value_range is None else value_range
        if declared is None:
            raise ValueError(f"value_range is required with epsilon for {self.algorithm!r}.")
        unit = self.unit
        if unit is None:
            raise ValueError("the record unit's number of validation records is not known yet.")
        if self.spec.curator == "laplace":
            return LaplaceCurator(epsilon, declared, ledger=ledger, unit=unit)
        if unit.kind != "score":
            raise ValueError(
                f"privacy_unit='record' is available for the algorithms whose scores go through "
                f"the Laplace curator, not for algorithm={self.algorithm!r} (Dubey's Gaussian "
                "release protects each whole score)."
            )
        _, sigma_u = local_jdp_noise_std(epsilon, self.privacy_beta, 1, reward_bound=1.0)
        return GaussianCurator(
            sigma_u, declared, epsilon=epsilon, delta=self.privacy_beta, ledger=ledger
        )

    def release(
        self,
        value_range: tuple[float, float] | None = None,
        *,
        ledger: PrivacyLedger | None = None,
        meter: BudgetMeter | None = None,
        epsilon: float | None = None,
    ) -> ScoreRelease | None:
        """The release path of each score (:class:`~privtune.privacy.release.ScoreRelease`
        over :meth:`curator`, seeded by the plan's ``noise_seed``); ``None`` when no score is
        released where it is computed."""
        curator = self.curator(value_range, ledger=ledger, epsilon=epsilon)
        if curator is None:
            return None
        return ScoreRelease(curator, noise_seed=self.noise_seed, meter=meter)

    def one_shot(
        self,
        scores: Sequence[float],
        value_range: tuple[float, float],
        *,
        epsilon: float,
        mechanism: str,
        head_start: Callable[[float], Any],
    ) -> OneShotChoice:
        """A one-shot private choice among ``scores`` (private selection's, paid once):
        :func:`~privtune.privacy.oneshot.one_shot_choice` at ``epsilon``, at the unit's
        sensitivity of ``value_range`` and the plan's noise seed; ``head_start`` gives the
        untuned estimator's shifts from that sensitivity."""
        unit = self.unit
        if unit is None:
            raise ValueError("the record unit's number of validation records is not known yet.")
        sensitivity = unit.sensitivity(value_range)
        return one_shot_choice(
            scores,
            epsilon=epsilon,
            sensitivity=sensitivity,
            mechanism=mechanism,
            noise_seed=self.noise_seed,
            head_start=head_start(sensitivity),
        )

    def one_shot_plan(
        self,
        n_candidates: int,
        *,
        baseline: bool,
        mechanism: str = DEFAULT_MECHANISM,
        score_share: float = 0.0,
        head_start: float = UNTUNED_HEAD_START,
    ) -> OneShotPlan:
        """What one private choice among ``n_candidates`` (and the untuned configuration,
        with ``baseline``) spends: the plan's whole ``epsilon`` or ``privacy_budget``, of which
        ``score_share`` publishes the pick's score (:class:`~privtune.privacy.oneshot.
        OneShotPlan`)."""
        return OneShotPlan.from_args(
            mechanism,
            self.epsilon,
            self.privacy_budget,
            score_share,
            n_candidates,
            baseline=baseline,
            head_start=head_start,
        )

    def meter(self) -> BudgetMeter | None:
        """The count of a total budget's reports in one process (``None`` without one)."""
        return None if self.budget is None else BudgetMeter(self.budget)

    def joint_dp_ledger(self, n_reports: int, owner: str = "default") -> PrivacyLedger:
        """The ledger of ``n_reports`` scores taken by the joint-DP privatizer."""
        ledger = PrivacyLedger()
        if n_reports:
            assert self.epsilon is not None
            ledger.record_joint_dp(self.epsilon, self.privacy_beta, owner=owner, count=n_reports)
        return ledger

    def report(
        self,
        ledger: PrivacyLedger,
        *,
        n_released: int | None = None,
        n_reserved: int | None = None,
        delta: float | None = None,
    ) -> dict[str, Any]:
        """The privacy report of ``ledger`` under this plan: :func:`privacy_summary` at the
        plan's unit and delta and, with a budget, what it was, what was spent and what remains
        (``n_released`` reports, default the ledger's; ``n_reserved`` under way)."""
        out = privacy_summary(ledger, self.delta if delta is None else delta, self.unit)
        if self.budget is not None:
            released = ledger.n_reports if n_released is None else n_released
            out.update(self.budget.report(released, n_reserved))
        return out


def _check_ranges(value_range: Any, by_metric: bool) -> dict[str | None, tuple[float, float]]:
    """``value_range`` as ``{metric: (lo, hi)}``; ``None`` stands for the optimized score."""
    if value_range is None:
        return {}
    if by_metric and isinstance(value_range, dict):
        out: dict[str | None, tuple[float, float]] = {}
        for name, r in value_range.items():
            if not isinstance(name, str):
                raise ValueError(f"value_range keys must be metric names (str), got {name!r}.")
            out[name] = check_value_range(r, "value_range[" + repr(name) + "]")
        return out
    return {None: check_value_range(value_range)}


def privacy_summary(
    ledger: PrivacyLedger, delta: float = REPORT_DELTA, unit: PrivacyUnit | None = None
) -> dict[str, Any]:
    """The adapters' privacy report: per-report epsilon and composed epsilon of ``ledger``,
    and what they protect.

    Parameters
    ----------
    ledger : PrivacyLedger
    delta : float, default=1e-6
        The delta of the advanced-composition and PLD bounds.
    unit : PrivacyUnit, optional
        The privacy unit of the reports (default: the whole score).

    Returns
    -------
    dict
        :meth:`PrivacyLedger.summary <privtune.privacy.PrivacyLedger.summary>` and, with at
        least one report of a mechanism dp-accounting composes, ``composed_epsilon_pld``
        ((epsilon, delta)-DP, the tightest bound). Joint-DP scores have no per-report
        composition: their summary states the per-score guarantee. Always ``privacy_unit``
        (``"score"`` or ``"record"``, with ``n_val``) and ``protects``: the sentence that says
        whom the composed epsilon protects (and that it protects little above 10).
    """
    delta = check_float("delta", delta, low=0.0, high=1.0, closed_high=False)
    unit = PrivacyUnit.score() if unit is None else unit
    owners = ledger.n_reports_by_owner()
    worst = None
    if len(owners) > 1:
        # reports about different data owners do not compose: one guarantee per owner, the
        # headline numbers the largest of them
        per_owner = {o: _owner_summary(ledger, o, delta) for o in sorted(owners)}
        worst = max(per_owner, key=lambda o: per_owner[o]["composed_epsilon_basic"])
    out = ledger.summary(delta, owner=worst)
    if ledger.n_reports and "privacy_model" not in out:
        out["composed_epsilon_pld"] = ledger.composed_epsilon("pld", delta, owner=worst)
    if worst is not None:
        out["per_owner"] = per_owner
        out["owner"] = worst
    out["privacy_unit"] = unit.kind
    if unit.n_val is not None:
        out["n_val"] = unit.n_val
    out["protects"] = _protects(out, unit, delta)
    if worst is not None:
        out["protects"] = (
            f"{out['protects']}; per data owner (the largest of {len(owners)} owners' "
            "guarantees: reports about different owners do not compose)"
        )
    return out


def _owner_summary(ledger: PrivacyLedger, owner: str, delta: float) -> dict[str, Any]:
    """One data owner's count and composed epsilons."""
    out: dict[str, Any] = {
        "n_reports": ledger.n_reports_by_owner()[owner],
        "composed_epsilon_basic": ledger.composed_epsilon("basic", owner=owner),
    }
    if not any(r.joint for r in ledger.reports if r.owner == owner):
        out["composed_epsilon_pld"] = ledger.composed_epsilon("pld", delta, owner=owner)
    return out


def _protects(out: dict[str, Any], unit: PrivacyUnit, delta: float) -> str:
    """The sentence of what ``out``'s composed epsilon protects."""
    if "privacy_model" in out:  # joint DP: one guarantee per score over the whole run
        return (
            f"each score, at (alpha={out['epsilon_per_report']:g}, "
            f"beta={out['delta_per_report']:g})-joint DP over the whole run"
        )
    if "composed_epsilon_pld" in out:
        return unit.protects(out["composed_epsilon_pld"], delta)
    return unit.protects(out["composed_epsilon_basic"], 0.0)
