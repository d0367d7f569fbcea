"""The privacy protocol of a private Optuna study, beside the sampler that proposes its
parameters.

:class:`privtune.PrivateGPUCBSampler` proposes parameters; what makes a study private is kept
here, in :class:`StudyPrivacy`, one per sampler:

- the privatized objective: it runs the objective in a :class:`_PrivateTrial` (no intermediate
  value), withholds the message of any exception it raises, and releases its score through the
  one release path (:class:`~privtune.privacy.release.ScoreRelease`), once per trial and within
  the trial's budget share, storing the receipt before Optuna stores the value;
- the checks that fail closed on every trial a worker reads: receipts from another curator or
  none, budget claims of another budget, a study with privatized trials joined by a worker
  without privacy, parameters asked for outside the privatized objective;
- the count of a total budget in the study's storage (a claim written before a trial computes
  anything, every claim and receipt counted after it);
- the record unit's number of validation records, bound from the objective or the study;
- the record unit's one private choice (:meth:`StudyPrivacy.choose`): the trials store
  training-record scores, and the choice among them on the validation records is made once,
  in the data owner's process, claimed in the study's storage before any validation record is
  read (:mod:`privtune.record_choice`);
- the qff algorithms' per-study noise seed, and the ledger a privacy report is rebuilt from.

It works on Optuna's storage; the arithmetic (composition, noise, receipts) is
:mod:`privtune.privacy`'s.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import math
import threading
import uuid
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from optuna.storages._cached_storage import _CachedStorage
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from ._checks import user_stacklevel
from .plan import PrivacyPlan
from .privacy import BudgetExhaustedError, PrivacyError, PrivacyLedger, Receipt
from .privacy.budget import one_shot_resolution
from .privacy.claims import ReportState, count_reports, describe_budget
from .privacy.receipts import ATTR_DIGEST, ATTR_OWNER, digest
from .privacy.release import ScoreRelease, as_score, refuse_second_release
from .privacy.seeds import draw_seed, stream_seed
from .privacy.units import PrivacyUnit, with_end_to_end
from .privacy.withhold import clean, outgoing
from .record_choice import Proposals, choose, proposals, shortlist
from .records import RecordObjective
from .registry import PrivacyModel

__all__ = [
    "ATTR_CHOICE",
    "ATTR_CLAIM",
    "ATTR_NOISE_SEED",
    "ATTR_REFUSED",
    "ATTR_TRAINING",
    "StudyPrivacy",
]

_logger = logging.getLogger("privtune.optuna")

#: Study system attribute: the seed of the qff algorithms' privacy noise, drawn once per study
#: so that every worker that rebuilds the model adds the same noise to the same data (a fresh
#: draw per rebuild would release the same scores under new noise, averaging it away).
ATTR_NOISE_SEED = "privtune:qff_noise_seed"

#: Trial system attribute: the study's total budget (``PrivacyBudget.to_attrs``), written by a
#: worker before the trial computes anything; a trial that carries it counts against the budget
#: until it is refused, fails without a release, or releases (then its receipt counts).
ATTR_CLAIM = "privtune:budget_claim"

#: Trial user attribute: the estimator's own guarantee per fit, ``[epsilon, delta]``, of a
#: trial released by a RecordObjective with an ``estimator_epsilon``.
ATTR_FIT = "privtune:estimator_epsilon"

#: Trial system attribute: the claim was refused (the trial released nothing and never will).
ATTR_REFUSED = "privtune:budget_refused"

#: Trial user attribute, under the record unit's choice: what the stored value is (the
#: objective's score on the training records) and its fingerprint, written before Optuna
#: stores the value, so that a value told by other means is refused.
ATTR_TRAINING = "privtune:training_score"

#: Study system attribute prefix, under the record unit's choice: one process's claim of the
#: study's one private choice (``state`` "claimed", "done" or "withdrawn"; when done, the
#: pick's trial and parameters and the privacy report: no score).
ATTR_CHOICE = "privtune:record_choice:"
#: The key of a RecordObjective's ``untuned`` estimator among the choice's candidates (it is
#: no trial of the study).
UNTUNED = "untuned"

#: The id of the trial whose privatized objective runs in this thread (``None``: none does).
_PRIVATIZED_TRIAL: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "privtune_privatized_trial", default=None
)


def _fresh_trials(study: Study) -> list[FrozenTrial]:
    """Every trial of ``study`` as the storage holds it now, read past Optuna's trial cache in
    front of an RDB storage (which rereads only the trials after the last finished one it saw,
    so it could miss another worker's trial created just before)."""
    storage = study._storage
    if isinstance(storage, _CachedStorage):
        storage = storage._backend
    return storage.get_all_trials(study._study_id, deepcopy=False)


def _budget_count(
    trials: Sequence[FrozenTrial], budget: dict[str, Any]
) -> tuple[int, int, FrozenTrial | None]:
    """What counts against ``budget`` in ``trials`` (:func:`privtune.privacy.claims.
    count_reports`); a FAIL or PRUNED trial without a receipt can no longer release (Optuna
    refuses to change a finished trial)."""
    states = [
        ReportState(
            released=ATTR_DIGEST in t.user_attrs,
            claim=t.system_attrs.get(ATTR_CLAIM),
            refused=bool(t.system_attrs.get(ATTR_REFUSED)),
            ended=t.state in (TrialState.FAIL, TrialState.PRUNED),
        )
        for t in trials
    ]
    reserved, released, other = count_reports(states, budget)
    return reserved, released, None if other is None else trials[other]


def _clean_errors(suggest: Callable) -> Callable:
    """``suggest`` whose errors leave the objective with their message: they are about the
    parameter's distribution (a reversed range, a step that does not divide it), which the
    trial stores as it is, never about a score."""

    @functools.wraps(suggest)
    def checked(*args, **kwargs):
        try:
            return suggest(*args, **kwargs)
        except Exception as exc:
            raise clean(exc) from None

    return checked


class _PrivateTrial:
    """The trial an objective sees under :meth:`PrivateGPUCBSampler.privatize`.

    Everything is delegated to the Optuna trial except :meth:`report`: an intermediate value
    would be stored raw (and become the value of a pruned trial), so it is refused. The
    ``suggest_*`` methods' errors keep their message (:func:`_clean_errors`).
    """

    __slots__ = ("_trial",)

    def __init__(self, trial) -> None:
        object.__setattr__(self, "_trial", trial)

    def __getattr__(self, name: str):
        attr = getattr(self._trial, name)
        if name.startswith("suggest_") and callable(attr):
            return _clean_errors(attr)
        return attr

    def __setattr__(self, name: str, value) -> None:
        setattr(self._trial, name, value)

    def report(self, value: float, step: int) -> None:
        # privtune's own message, which holds no score: it leaves the objective as it is
        raise clean(
            PrivacyError(
                "trial.report() is not available under privatize(): Optuna would store the "
                "raw intermediate value. Pruning on intermediate scores needs those scores "
                "privatized too, which privtune does not offer; remove the report() and "
                "should_prune() calls, run the trial to the end and return its score."
            )
        )


class StudyPrivacy:
    """The privacy protocol of the studies one sampler runs (see the module's docstring).

    Parameters
    ----------
    plan : PrivacyPlan
        The sampler's privacy plan (under the record unit, bound to ``n_val`` once known).
    lock : threading.RLock
        The sampler's lock (one lock over its model and this protocol).
    on_bind : callable
        Called with the bound plan when the record unit's number of validation records
        becomes known (the sampler rebuilds its model for the noise it will be told).
    n_trials : int, optional
        The trials planned: under the record unit's choice, the most candidates it can have,
        which the resolution warning counts.
    """

    def __init__(
        self,
        plan: PrivacyPlan,
        *,
        lock: threading.RLock,
        on_bind: Callable[[PrivacyPlan], None],
        n_trials: int | None = None,
    ) -> None:
        self.plan = plan
        self.n_trials = n_trials
        self._lock = lock
        self.on_bind = on_bind
        self._verified: dict[tuple, set[int]] = {}  # per study: trial ids already verified
        self._noise_seeds: dict[tuple, int] = {}  # per study: the qff noise seed in use
        self._granted: set[int] = set()  # trial ids whose budget claim this process granted
        #: The estimator's own guarantee per fit, from a RecordObjective (end to end).
        self.fit_guarantee: tuple[float, float] | None = None
        #: The record unit's choice: the objective whose validation records the choice reads
        #: (only in the process that privatized it; never stored or pickled).
        self.owner: RecordObjective | None = None
        #: The release in the objective's process (None: raw scores, for jdp or no privacy;
        #: or the record unit before the number of validation records is known).
        self.release: ScoreRelease | None = self._make_release()

    def _make_release(self) -> ScoreRelease | None:
        if self.plan.unit is None or self.plan.chooses:
            return None
        return self.plan.release()

    def wrap(self, objective: Callable[..., float]) -> Callable[..., float]:
        """The privatized objective (:meth:`privtune.PrivateGPUCBSampler.privatize`)."""
        if self.plan.unit_kind == "record":
            if not isinstance(objective, RecordObjective):
                raise TypeError(
                    "privacy_unit='record' needs an objective built by privtune.RecordObjective"
                    "(make_estimator, X_train, y_train, X_val, y_val, scoring=...): privtune "
                    "computes the score on the validation records itself, so that one record's "
                    f"share of it is known; got {type(objective).__name__}."
                )
            if objective.value_range != self.plan.value_range:
                raise ValueError(
                    f"value_range={self.plan.value_range} differs from the objective's "
                    f"per-record range {objective.value_range} "
                    f"(scoring={objective.metric.name!r}); pass value_range="
                    f"{objective.value_range}."
                )
            if self.plan.chooses and objective.fit_guarantee is not None:
                raise ValueError(
                    "estimator_epsilon is not available with the Optuna sampler under "
                    "privacy_unit='record': the trials store exact scores of the training "
                    "records, which the estimator's guarantee would have to cover. Tune a "
                    "differentially private estimator with PrivateBOSearchCV(..., "
                    "privacy_unit='record', estimator_epsilon=...), which draws its candidates "
                    "from the space."
                )
            self.bind(objective.unit)
            self.fit_guarantee = objective.fit_guarantee
            if self.plan.chooses:
                return self._wrap_training(objective)

        @functools.wraps(objective)
        def private_objective(trial):
            token = _PRIVATIZED_TRIAL.set(getattr(trial, "_trial_id", None))
            failure = None
            try:
                value = objective(_PrivateTrial(trial))
            except BaseException as exc:
                # the message and the frames may hold a raw score (a scorer's error, an
                # objective's f-string): only privtune's own messages go out
                failure = outgoing(exc, self.plan.setting)
            finally:
                _PRIVATIZED_TRIAL.reset(token)
            if failure is not None:
                raise failure
            return self.release_trial(trial, value)

        return private_objective

    def _wrap_training(self, objective: RecordObjective) -> Callable[..., float]:
        """The record unit's choice: the objective's score on the training records is what
        Optuna stores (public under this unit), fingerprinted so that a value told by other
        means is refused; the objective stays in this process for the choice."""
        if self.owner is None and self.n_trials is not None:
            # the untuned configuration is trial 0, or the objective's untuned estimator
            self._say_resolution(self.n_trials + int(objective.untuned is not None))
        self.owner = objective
        what = (
            f"{objective.cv}-fold cross-validated {objective.metric.name} on the "
            f"{len(objective.y_train)} training records (not protected under the record unit)"
        )

        @functools.wraps(objective)
        def training_objective(trial):
            token = _PRIVATIZED_TRIAL.set(getattr(trial, "_trial_id", None))
            try:
                # reads the training records only: its errors keep their message
                value = objective(_PrivateTrial(trial))
            finally:
                _PRIVATIZED_TRIAL.reset(token)
            y = as_score(value, self.plan.value_range)
            if math.isfinite(y):
                trial.set_user_attr(ATTR_TRAINING, {"value": what, "digest": digest(y)})
            return y

        return training_objective

    def _say_resolution(self, n_trials: int) -> None:
        """Before any data are read: warn when a choice among up to ``n_trials`` candidates
        cannot resolve one point of the score's range, saying what would (the searches'
        warning)."""
        unit, declared = self.plan.unit, self.plan.value_range
        assert unit is not None and declared is not None
        plan = self.plan.one_shot_plan(max(n_trials - 1, 0), baseline=True)
        _, advice = one_shot_resolution(
            plan,
            sensitivity=unit.sensitivity(declared),
            width=declared[1] - declared[0],
            n_val=unit.n_val,
        )
        if advice is not None:
            warnings.warn(advice, UserWarning, stacklevel=user_stacklevel())

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        """Fail closed before ``trial`` computes anything; claim its budget share."""
        try:
            if not self.private and self.plan.privacy_model != PrivacyModel.JDP:
                self.refuse_private_study(study)
            elif self.private:
                # a worker whose settings differ from the study's, a raw value in the storage
                self.verify_study(study, use_cache=True)  # the read infer_relative... reuses
        except PrivacyError:
            # no score exists yet: hand the trial back to the queue instead of leaving a FAIL
            # trial behind (a worker with the study's settings runs it as a new one)
            study._storage.set_trial_state_values(trial._trial_id, TrialState.WAITING)
            raise
        if self.private and self.plan.budget is not None:
            self.claim(study, trial)

    def after_trial(
        self, study: Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None
    ) -> None:
        """Check a completed trial's value; stop the study once its budget is spoken for."""
        with self._lock:
            self._granted.discard(trial._trial_id)
        if self.private and state == TrialState.COMPLETE and values is not None:
            self.verify(trial, values[0])
        if self.plan.budget is not None:
            budget = self.plan.budget.to_attrs()
            reserved, _, _ = _budget_count(_fresh_trials(study), budget)
            if reserved >= self.plan.budget.n_reports:
                # every planned report is released or under way: end the optimize loop as
                # Optuna's MaxTrialsCallback does (no error; a later trial would be refused)
                _logger.warning(
                    f"The privacy budget of study {study.study_name!r} covers "
                    f"{self.plan.budget.n_reports} reports, all released or under way: "
                    "the study stops."
                )
                try:
                    study.stop()
                except RuntimeError:  # outside study.optimize (ask-and-tell): nothing to stop
                    pass

    def ledger(self, study: Study) -> PrivacyLedger:
        """The ledger of every trial that carries a receipt, whatever its state, each about
        its data owner (the trial's ``"privtune:owner"``, by default the study)."""
        # privatize stores the receipt (with the digest of the released value) before Optuna
        # stores the value, so a worker killed in between leaves a RUNNING (later FAIL) trial
        # whose release counts all the same
        ledger = PrivacyLedger()
        for t in study._get_trials(deepcopy=False, states=None):
            receipt = Receipt.from_attrs(t.user_attrs)
            if receipt is not None:
                owner = str(t.user_attrs.get(ATTR_OWNER) or study.study_name)
                ledger.record_event(receipt.event, receipt.epsilon, receipt.delta, owner=owner)
        return ledger

    def end_to_end(self, study: Study, report: dict[str, Any]) -> dict[str, Any]:
        """``report`` with the training records' guarantee when the trials were released by a
        :class:`~privtune.records.RecordObjective` with an ``estimator_epsilon``: one fit per
        released trial (:func:`privtune.privacy.composition.end_to_end`, no refit)."""
        fits = [
            tuple(t.user_attrs[ATTR_FIT])
            for t in study._get_trials(deepcopy=False, states=None)
            if ATTR_FIT in t.user_attrs and ATTR_DIGEST in t.user_attrs
        ]
        if not fits:
            return report
        if len(set(fits)) > 1:
            raise PrivacyError(
                f"The trials of study {study.study_name!r} declare different estimator "
                "guarantees per fit; every worker must use the same estimator_epsilon."
            )
        fit_epsilon, fit_delta = (float(v) for v in fits[0])
        return with_end_to_end(report, fit_epsilon, fit_delta, len(fits), refit=False)

    def report(
        self, study: Study, ledger: PrivacyLedger, delta: float | None = None
    ) -> dict[str, Any]:
        """The privacy report of ``study``: the plan's report of ``ledger``, with a total
        budget's count across workers (released and reserved), and end to end."""
        counts: dict[str, int] = {}
        if self.plan.budget is not None:
            reserved, released, _ = _budget_count(_fresh_trials(study), self.plan.budget.to_attrs())
            counts = {"n_released": released, "n_reserved": reserved}
        return self.end_to_end(study, self.plan.report(ledger, delta=delta, **counts))

    def study_report(self, study: Study, delta: float | None = None) -> dict[str, Any]:
        """The privacy report of ``study`` after verifying every trial
        (:meth:`privtune.PrivateGPUCBSampler.privacy_report`): the record unit's choice's, the
        joint-DP guarantee of the told scores, or the report of the trials' receipts."""
        self.verify_study(study)
        if self.plan.chooses:
            return self.choice_report(study)
        if self.plan.privacy_model == PrivacyModel.JDP:
            completed = study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            ledger = self.plan.joint_dp_ledger(len(completed), owner=study.study_name)
        else:
            ledger = self.ledger(study)
        return self.report(study, ledger, delta)

    def note_noise_seed(self, study: Study, seed: int) -> None:
        """Remember the qff noise seed this worker used on ``study``'s told scores."""
        self._noise_seeds.setdefault((study._study_id, study.study_name), seed)

    @property
    def private(self) -> bool:
        """Whether Optuna may store only values that came through the privatized objective:
        the scores released through a curator (epsilon-LDP, local joint DP), or, under the
        record unit's choice, the training-record scores the choice's candidates are
        fixed by."""
        return self.plan.releases_scores or self.plan.chooses

    def bind(self, unit: PrivacyUnit) -> ScoreRelease:
        """Take the record unit's ``n_val`` (from the objective or the study), once."""
        with self._lock:
            if self.plan.n_val is None and unit.n_val is not None:
                self.plan = self.plan.bound(unit.n_val)
                self.release = None if self.plan.chooses else self._make_release()
                self.on_bind(self.plan)
            bound = self.plan.unit if self.plan.chooses else getattr(self.release, "unit", None)
            if bound is None or unit != bound:
                raise clean(
                    PrivacyError(
                        f"This sampler releases under privacy_unit={self.plan.unit_kind!r}"
                        + ("" if self.plan.n_val is None else f" with n_val={self.plan.n_val}")
                        + f"; the objective or the study's trials are under {unit.describe()}. "
                        "Every worker of a study must score on the same validation set under "
                        "the same unit."
                    )
                )
            return self.release  # type: ignore[return-value]

    def release_trial(self, trial, value) -> float:
        """Release ``trial``'s raw score through this worker's release path (once per trial,
        within its budget share) and store the receipt before Optuna stores the value."""
        assert self.release is not None and self.plan.value_range is not None
        y = as_score(value, self.plan.value_range)
        if not math.isfinite(y):
            return float("nan")
        refuse_second_release(ATTR_DIGEST in trial.user_attrs, f"Trial {trial.number}")
        if self.plan.budget is not None:
            with self._lock:
                granted = getattr(trial, "_trial_id", None) in self._granted
                self._granted.discard(getattr(trial, "_trial_id", None))
            if not granted:
                raise clean(
                    PrivacyError(
                        f"Trial {trial.number} has no share of the privacy budget: a trial "
                        "releases its score only after this sampler counted it against the "
                        "budget when the trial started (study.optimize, or study.ask with this "
                        "sampler)."
                    )
                )
        study = getattr(trial, "study", None)
        owner = trial.user_attrs.get(ATTR_OWNER) or (study.study_name if study else "default")
        released, receipt = self.release(y, owner=str(owner), number=trial.number)
        assert receipt is not None
        attrs = receipt.to_attrs()
        if self.fit_guarantee is not None:  # the training records' share, end to end
            attrs[ATTR_FIT] = list(self.fit_guarantee)
        for key, attr in attrs.items():
            trial.set_user_attr(key, attr)
        return released

    def verify_study(self, study: Study, *, use_cache: bool = False) -> None:
        """Fail closed on every completed trial of ``study``, whatever its parameters.

        A trial is checked once (finished trials are immutable); later calls check only the
        trials completed since. ``use_cache`` reads through Optuna's per-trial cache (inside a
        trial, where the relative sampling reads it again).
        """
        states = (TrialState.COMPLETE,)
        trials = study._get_trials(deepcopy=False, states=states, use_cache=use_cache)
        self.verify_trials(study, trials)

    def verify_trials(self, study: Study, trials: Sequence[FrozenTrial]) -> None:
        """Fail closed on ``trials`` (completed ones), skipping those already verified."""
        if not self.private:
            return
        with self._lock:
            done = self._verified.setdefault((study._study_id, study.study_name), set())
            for t in trials:
                if t._trial_id not in done:
                    self.verify(t, float("nan") if t.value is None else t.value)
                    done.add(t._trial_id)

    def verify(self, trial: FrozenTrial, value: float) -> None:
        """Fail closed: ``value`` must be the one :meth:`privatize` released for ``trial``: its
        stored receipt is the one this sampler's curator issues for ``value``."""
        assert self.private  # verified only with a curator
        if self.plan.chooses:
            tag = trial.user_attrs.get(ATTR_TRAINING)
            if not isinstance(tag, dict) or tag.get("digest") != digest(value):
                self.refuse_raw(trial)
            return
        claim = trial.system_attrs.get(ATTR_CLAIM)
        budget = None if self.plan.budget is None else self.plan.budget.to_attrs()
        if claim is not None and claim != budget:
            raise PrivacyError(
                f"Trial {trial.number} was released under a total privacy budget "
                f"({describe_budget(claim)}); this sampler's is "
                f"{describe_budget(budget)}. Every worker of a study must be started with the "
                "same privacy_budget and n_trials, so that they count one budget."
            )
        receipt = Receipt.from_attrs(trial.user_attrs)
        if receipt is None or not receipt.matches(value):
            self.refuse_raw(trial)
        assert receipt is not None
        release = self.release or self.bind(PrivacyUnit.from_data(receipt.unit))
        release.check(receipt, value, f"Trial {trial.number}")

    def refuse_raw(self, trial: FrozenTrial) -> None:
        if self.plan.chooses:
            raise PrivacyError(
                f"Trial {trial.number} completed with a value that did not come through this "
                "sampler's RecordObjective (its score on the training records). Under "
                "privacy_unit='record' run sampler.optimize(study, objective) and do not tell "
                "or add values: the choice's candidates must be fixed by the training records "
                "alone. The sampler refuses to learn from this study; its storage may hold a "
                "score of the validation records in that trial."
            )
        raise PrivacyError(
            f"Trial {trial.number} completed with a value that did not come through this "
            f"sampler's curator (epsilon={self.plan.epsilon}, "
            f"value_range={self.plan.value_range}). "
            "With epsilon set, run study.optimize(sampler.privatize(objective), ...) and do "
            "not tell or add raw values. The sampler refuses to learn from this study; its "
            "storage may hold a raw score in that trial."
        )

    def check_privatized(self, trial: FrozenTrial) -> None:
        """Fail closed before the score exists: with ``epsilon``, sample only for a trial whose
        privatized objective runs in this thread."""
        if self.private and _PRIVATIZED_TRIAL.get() != trial._trial_id:
            raise PrivacyError(
                f"Trial {trial.number} asked for parameters outside sampler.privatize(objective): "
                "with epsilon set, its score would be stored raw. Run "
                "study.optimize(sampler.privatize(objective), ...); in an ask-and-tell loop, "
                "call sampler.privatize(objective)(trial) and suggest inside the objective."
            )

    def refuse_private_study(self, study: Study) -> None:
        """A worker without privacy must not join a study whose trials were released under it
        (it would store a raw score beside privatized ones): refused before the trial computes
        anything."""
        for t in study._get_trials(deepcopy=False, states=None, use_cache=True):
            if (
                ATTR_DIGEST in t.user_attrs
                or ATTR_CLAIM in t.system_attrs
                or (ATTR_TRAINING in t.user_attrs)
            ):
                raise PrivacyError(
                    f"Study {study.study_name!r} holds privatized trials (trial {t.number} "
                    f"carries a privtune receipt or budget claim), and this {type(self).__name__} "
                    "has no privacy settings: its trials would store raw scores. Start every "
                    "worker with the study's epsilon (or privacy_budget), value_range and "
                    "privacy_unit. Nothing was computed."
                )

    def claim(self, study: Study, trial: FrozenTrial) -> None:
        """Count ``trial`` against the budget before it computes anything, or refuse it.

        Write, then read: the trial's claim is stored first, then every trial of the study is
        read from the storage and the live claims and receipts are counted, this one included.
        A worker whose count exceeds ``n_trials`` refuses its trial (marked refused and FAIL,
        with no score). Whatever the interleaving of workers, at most ``n_trials`` trials
        release: of any two claims, the later one's read sees the earlier one, so the last
        trial to release counted every other releasing trial before it went on. A race can
        refuse a trial that would have fit (two claims for the last report, each counting the
        other), never let one past the budget.
        """
        assert self.plan.budget is not None
        budget = self.plan.budget.to_attrs()
        storage = study._storage
        storage.set_trial_system_attr(trial._trial_id, ATTR_CLAIM, budget)
        reserved, released, other = _budget_count(_fresh_trials(study), budget)
        if other is None and reserved <= self.plan.budget.n_reports:
            with self._lock:
                self._granted.add(trial._trial_id)
            return
        storage.set_trial_system_attr(trial._trial_id, ATTR_REFUSED, True)
        storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
        if other is not None:
            raise PrivacyError(
                f"Trial {other.number} of study {study.study_name!r} runs under another total "
                f"privacy budget ({describe_budget(other.system_attrs[ATTR_CLAIM])}); this "
                f"sampler's is {describe_budget(budget)}. Every worker of a study must be "
                "started with the same privacy_budget and n_trials. Trial "
                f"{trial.number} was refused before computing anything."
            )
        raise BudgetExhaustedError(
            f"The privacy budget of study {study.study_name!r} ({self.plan.budget}) is "
            f"spent: {released} reports released and {reserved - released - 1} under way "
            f"in other trials. Trial {trial.number} was refused before computing anything; "
            "the study releases nothing more. Plan a new budget (privtune.privacy.plan_budget) "
            "for more trials."
        )

    # -- the record unit's one private choice ---------------------------------------------------
    def choose(self, study: Study, baseline: int | None) -> dict[str, Any]:
        """The study's one private choice among its trials (the record unit), made once.

        The trials' stored values are their scores on the training records. Their
        configurations, in trial order, are the proposals; with ``baseline`` (the number of
        the untuned configuration's trial) those that score below it there are dropped, and
        one permute-and-flip choice among the rest, on the validation records, spends the
        whole budget (:mod:`privtune.record_choice`). The choice is claimed in the study's
        storage before any validation record is read, so that whatever the workers, at most
        one is made; a later call returns it. Only the pick leaves: its trial's number and
        parameters, and the privacy report.

        Returns
        -------
        dict
            The stored choice: ``trial``, ``params``, ``report``.
        """
        done = self._stored_choice(study)
        if done is not None:
            return done
        if self.owner is None:
            raise PrivacyError(
                "recommend makes the study's one private choice on the validation records: "
                "call it in the process that ran sampler.optimize(study, objective) with the "
                "RecordObjective (the validation records stay there)."
            )
        trials = [
            t
            for t in study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if t.value is not None and math.isfinite(t.value)
        ]
        if not trials:
            raise ValueError("recommend needs at least one completed trial in the study.")
        self.verify_trials(study, trials)
        if baseline is not None and baseline not in {t.number for t in trials}:
            raise ValueError(
                f"baseline={baseline!r} is not the number of a completed trial of the study."
            )
        short = shortlist(self._proposals(trials, baseline))
        one_shot = self.plan.one_shot_plan(short.n_candidates, baseline=short.baseline)
        key = self._claim_choice(study)  # before any validation record is read
        try:
            from optuna.trial import FixedTrial

            owner = self.owner
            validation = owner.validation_scores(
                [
                    owner.untuned if k == UNTUNED else owner.make_estimator(FixedTrial(p, k))
                    for p, k in zip(short.candidates, short.keys, strict=True)
                ]
            )
            if not np.any(np.isfinite(validation)):
                raise PrivacyError(
                    "Every candidate's fit or prediction failed on the validation records: no "
                    "choice was made. The claim counts as spent."
                )
            assert self.plan.value_range is not None
            picked = choose(self.plan, one_shot, validation.tolist(), self.plan.value_range)
        except PrivacyError:
            raise
        except BaseException as exc:
            raise outgoing(exc, self.plan.setting) from None
        trial_number = short.keys[picked.index]
        kept_untuned = short.baseline and picked.index == 0
        report = one_shot.report(self.plan.unit, self.plan.value_range, picked.sampler)
        report["candidates"] = (
            f"the {len(trials)} completed trials' configurations, "
            + short.describe(len(self.owner.y_train))
        )
        if self.plan.privacy_budget is not None:
            report["budget_epsilon"], report["budget_delta"] = self.plan.privacy_budget
        report["picked"] = "the untuned configuration" if kept_untuned else "a tuned configuration"
        done = {
            "state": "done",
            "trial": None if trial_number == UNTUNED else int(trial_number),
            "params": dict(short.candidates[picked.index]),
            "report": report,
        }
        study._storage.set_study_system_attr(study._study_id, key, done)
        return done

    def chosen_trial(self, study: Study, baseline: int | None) -> FrozenTrial:
        """The trial of the study's one private choice (:meth:`choose`); an error when the
        choice is no trial (the untuned estimator given apart, or a selection among privately
        trained models)."""
        number = self.choose(study, baseline)["trial"]
        if number is None:
            raise ValueError(
                "The study's private choice is no trial of the study (the "
                "RecordObjective's untuned estimator, or a selection among privately "
                "trained models, which stores no trial): recommend(study) returns its "
                "parameters."
            )
        storage = study._storage
        return storage.get_trial(
            storage.get_trial_id_from_study_id_trial_number(study._study_id, number)
        )

    # -- every record protected: one selection among privately trained models --------------------
    def select_models(self, study: Study, objective: RecordObjective, mean: int | None) -> None:
        """``RecordObjective(..., estimator_epsilon="auto")``: the study's one selection among
        privately trained models, every record protected by the budget
        (:func:`privtune.private_models.select_private_model`, as the scikit-learn searches'
        ``estimator_epsilon="auto"``), made once and claimed in the study's storage like the
        record unit's choice. Configurations are drawn from the distributions the objective's
        ``suggest_*`` calls ask for, independently of the data; no trial is stored (the
        candidates' released scores stay in this process), only the pick, its released score
        and the privacy report, in the study's system attributes. ``objective.model_`` is the
        deployed model."""
        from optuna.trial import FixedTrial

        from .private_models import SELECTION_LAW, select_private_model

        budget = self.plan.privacy_budget
        if not self.plan.chooses or budget is None or budget[1] <= 0.0:
            raise ValueError(
                "estimator_epsilon='auto' protects every record by one total: create the "
                "sampler with privacy_unit='record' and privacy_budget=(epsilon, delta), "
                "delta > 0, the guarantee every record gets."
            )
        if mean is None:
            raise ValueError(
                "estimator_epsilon='auto' draws a random number of candidates: pass n_trials, "
                "their mean, to the sampler or to optimize."
            )
        if objective.value_range != self.plan.value_range:
            raise ValueError(
                f"value_range={self.plan.value_range} differs from the objective's per-record "
                f"range {objective.value_range}; pass value_range={objective.value_range}."
            )
        self.bind(objective.unit)
        if self._stored_choice(study) is not None:
            return  # made already, by this process or another one
        from .privacy.selection import SelectionPlan
        from .private_models import selection_resolution

        plan = SelectionPlan.from_args(mean, SELECTION_LAW, None, budget, base="private")
        _, advice = selection_resolution(plan, objective.n_val, objective.value_range)
        if advice is not None:  # before any record is read
            warnings.warn(advice, UserWarning, stacklevel=user_stacklevel())
        key = self._claim_choice(study)  # before any record is read

        def sample(rng: np.random.Generator) -> dict[str, Any]:
            trial = _DrawingTrial(rng)
            objective.make_estimator(trial)  # its suggest_* calls draw the configuration
            return trial.params

        def make(params: dict[str, Any] | None) -> Any:
            if params is None:
                return objective.untuned
            return objective.make_estimator(FixedTrial(dict(params)))

        try:
            out = select_private_model(
                make,
                sample,
                objective.X_train,
                objective.y_train,
                objective.X_val,
                objective.y_val,
                objective.metric,
                privacy_budget=budget,
                mean=float(mean),
                distribution=SELECTION_LAW,
                untuned="candidate" if objective.untuned is not None else None,
                noise_seed=self.plan.noise_seed,
            )
            if out.model is None:
                raise PrivacyError("The selection drew no candidate: nothing was published.")
        except PrivacyError:
            raise
        except BaseException as exc:
            raise outgoing(exc, self.plan.setting) from None
        objective.model_ = out.model  # the pick's own model: no refit
        params = out.params
        if params is None:  # the untuned estimator: its own values stand for it
            own = objective.untuned.get_params(deep=True)
            params = {n: v for n, v in own.items() if "__" not in n and not callable(v)}
        assert self.plan.unit is not None  # bound to the objective's validation records
        report = out.report(self.plan.unit)
        report["budget_epsilon"], report["budget_delta"] = budget
        report["picked"] = "the untuned configuration" if out.untuned else "a tuned configuration"
        study._storage.set_study_system_attr(
            study._study_id,
            key,
            {
                "state": "done",
                "trial": None,
                "params": params,
                "score": out.score,
                "report": report,
            },
        )

    def _proposals(self, trials: list[FrozenTrial], baseline: int | None) -> Proposals:
        """The trials as the choice's proposals; the untuned configuration is the trial
        ``baseline``, or the objective's ``untuned`` estimator scored here on the training
        records (its own values of the study's parameters stand for it)."""
        assert self.owner is not None
        rows = [(t.number, t.params, float(t.values[0])) for t in trials]
        untuned = self.owner.untuned
        if untuned is None:
            return proposals(rows, untuned_key=baseline)
        if baseline is not None:
            raise ValueError(
                f"baseline={baseline!r} and the RecordObjective's untuned estimator are two "
                "baselines: pass baseline= when the untuned configuration is a trial of the "
                "study, untuned= when it cannot be enqueued (a value outside the space)."
            )
        own = untuned.get_params(deep=True)
        names = dict.fromkeys(n for t in trials for n in t.params)
        return proposals(
            rows,
            untuned={n: own[n] for n in names if n in own},
            untuned_key=UNTUNED,
            untuned_training=self.owner.training_score(untuned),
        )

    def _choices(self, study: Study) -> dict[str, dict[str, Any]]:
        """Every claim of the study's choice, read past Optuna's cache."""
        storage = study._storage
        if isinstance(storage, _CachedStorage):
            storage = storage._backend
        attrs = storage.get_study_system_attrs(study._study_id)
        return {k: v for k, v in attrs.items() if k.startswith(ATTR_CHOICE)}

    def _stored_choice(self, study: Study) -> dict[str, Any] | None:
        """The study's choice when it was made; a claim that was never finished refuses
        another (it may have read the validation records: it counts as spent)."""
        claims = [c for c in self._choices(study).values() if c.get("state") != "withdrawn"]
        for claim in claims:
            if claim.get("state") == "done":
                return claim
        if claims:
            raise PrivacyError(
                f"The private choice of study {study.study_name!r} was claimed by another "
                "process and not finished (still running, or stopped): it counts as spent, and "
                "a second choice would spend the budget again. Wait for it, or start a new "
                "study (a second study on the same validation records composes with this one)."
            )
        return None

    def _claim_choice(self, study: Study) -> str:
        """Claim the study's choice, or refuse: write a claim, then read every claim back.
        Of two claims the later one's read sees the earlier one, so at most one goes on; a
        race may refuse both (each withdrawn: nothing was read, a retry may claim again)."""
        key = ATTR_CHOICE + uuid.uuid4().hex
        storage = study._storage
        storage.set_study_system_attr(study._study_id, key, {"state": "claimed"})
        others = {
            k: c
            for k, c in self._choices(study).items()
            if k != key and c.get("state") != "withdrawn"
        }
        if others:
            storage.set_study_system_attr(study._study_id, key, {"state": "withdrawn"})
            raise PrivacyError(
                f"Another process claimed the private choice of study {study.study_name!r} at "
                "the same time; this one withdrew before reading any validation record. Call "
                "recommend again once the other has finished: it returns that choice."
            )
        return key

    def choice_report(self, study: Study) -> dict[str, Any]:
        """The privacy report of the record unit's choice: the choice's once made (every
        claim that was not withdrawn counts), else what it will spend."""
        claims = [c for c in self._choices(study).values() if c.get("state") != "withdrawn"]
        done = [c for c in claims if c.get("state") == "done"]
        if done:
            report = dict(done[0]["report"])
            if len(claims) > 1:  # a claim that never finished counts too
                report["epsilon"] = report["epsilon"] * len(claims)
                report["n_choices_claimed"] = len(claims)
            return report
        unit = self.plan.unit
        epsilon = self.plan.one_shot_plan(1, baseline=True).epsilon
        report = {
            "release": "best",
            "mechanism": "permute-and-flip",
            "privacy_unit": self.plan.unit_kind,
            "epsilon": epsilon * len(claims),
            "delta": 0.0,
            "choice": "claimed, not finished" if claims else "not made yet (recommend makes it)",
        }
        if unit is not None:
            report["n_val"] = unit.n_val
            report["protects"] = unit.protects(epsilon * len(claims), 0.0)
        if self.plan.privacy_budget is not None:
            report["budget_epsilon"], report["budget_delta"] = self.plan.privacy_budget
        return report

    def study_noise_seed(self, study: Study) -> int | None:
        """The seed of the qff algorithms' privacy noise for ``study``, the same in every worker.

        From ``noise_seed`` and the study name when given; otherwise drawn once and kept in the
        study's system attributes (whoever may read the storage may read raw scores too under
        ``"qff-jdp"``; under ``"qff-ldp"`` this noise does not depend on the scores). Fails
        closed if the study's seed changes under a sampler that has used another one on told
        scores (two workers that drew a seed at the same moment): it would release the same
        scores under new noise. A change before any score was told releases nothing.
        """
        if self.plan.privacy_model not in (PrivacyModel.JDP, PrivacyModel.LOCAL_JDP):
            return None
        key = (study._study_id, study.study_name)
        if self.plan.noise_seed is not None:
            return stream_seed(self.plan.noise_seed, study.study_name)
        storage = study._storage
        stored = storage.get_study_system_attrs(study._study_id).get(ATTR_NOISE_SEED)
        if stored is None:
            drawn = draw_seed()
            storage.set_study_system_attr(study._study_id, ATTR_NOISE_SEED, drawn)
            stored = storage.get_study_system_attrs(study._study_id)[ATTR_NOISE_SEED]
        stored = int(stored)
        with self._lock:
            used = self._noise_seeds.get(key)
        if used is not None and used != stored:
            raise PrivacyError(
                f"The privacy noise seed of study {study.study_name!r} changed after this "
                "sampler used another one (two workers drew one at the same moment). Releasing "
                "the same scores under new noise is not private: pass the same noise_seed to "
                "every worker, or start one worker before the others."
            )
        return stored


class _DrawingTrial:
    """A stand-in trial whose ``suggest_*`` draw each value uniformly from what is asked
    (log-uniformly with ``log=True``, on the grid with ``step``), independently of the data:
    the configurations of a selection among privately trained models."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.params: dict[str, Any] = {}
        self.number = 0

    def suggest_float(self, name: str, low: float, high: float, *, step=None, log=False):
        if step is not None:
            n = math.floor((high - low) / step + 1e-9)
            value = low + step * int(self.rng.integers(0, n + 1))
        elif log:
            value = math.exp(self.rng.uniform(math.log(low), math.log(high)))
        else:
            value = float(self.rng.uniform(low, high))
        self.params[name] = float(value)
        return self.params[name]

    def suggest_int(self, name: str, low: int, high: int, *, step: int = 1, log: bool = False):
        if log:
            drawn = math.floor(math.exp(self.rng.uniform(math.log(low), math.log(high + 1))))
            value = min(max(drawn, low), high)
        else:
            value = low + step * int(self.rng.integers(0, (high - low) // step + 1))
        self.params[name] = int(value)
        return self.params[name]

    def suggest_categorical(self, name: str, choices: Sequence[Any]):
        self.params[name] = choices[int(self.rng.integers(0, len(choices)))]
        return self.params[name]

    def set_user_attr(self, key: str, value: Any) -> None:  # an objective's own bookkeeping
        pass
