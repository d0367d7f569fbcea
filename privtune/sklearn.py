"""scikit-learn adapter: :class:`PrivateBOSearchCV` (a Bayesian search over a model's parameters)
and :class:`PrivateSelectionSearchCV` (private selection: only the pick is published).

The searches are thin: scikit-learn's :class:`~sklearn.model_selection.BaseSearchCV` runs the
cross-validation (joblib, any backend) and the refit; :mod:`privtune.batch` is the Bayesian
optimization (the history, the proposals, the pick), :mod:`privtune.scores` which metric is
optimized and released with which range, :mod:`privtune.records` the record unit's metric and
hold-out split, :mod:`privtune.plan` the privacy settings checked once and every release made
from them, and :mod:`privtune.privacy` the mechanisms and their accounting. What is
scikit-learn-specific lives here: the search loops (``_run_search``), the privatized
``cv_results_``, the choice of the best candidate, and what an error or a warning may carry out.
One strategy per class, as scikit-learn has ``GridSearchCV`` and ``RandomizedSearchCV``; what
both share is their base, :class:`_PrivateSearchCV`.

Privacy model (docs/privacy.md): with ``epsilon`` or ``privacy_budget`` set, each candidate's
score is released inside ``fit`` (the data owner's process), under the privacy unit chosen:
the whole score (``clip(score, lo, hi) + Laplace((hi - lo) / epsilon)``, the default) or each
validation record of one hold-out split (noise ``n_val`` times smaller). The optimizer,
``cv_results_``, ``best_score_``, the verbose output, the warnings and the error messages only
ever see released values (the fits' own warnings are silenced, and errors raised once scoring
has begun lose their message and traceback).
"""

from __future__ import annotations

import math
import numbers
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from joblib import effective_n_jobs
from scipy.stats import rankdata
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection._search import BaseSearchCV
from sklearn.model_selection._split import _yields_constant_splits
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Hidden, Interval, StrOptions

from ._checks import user_stacklevel
from ._display import estimate_text
from ._sklearn_compat import evaluate, progress_bar, splitter_before_search
from .batch import BatchOptimization, default_point
from .plan import SEARCH, PrivacyPlan
from .privacy import PrivacyError, PrivacyLedger
from .privacy.budget import (
    one_shot_resolution,
    points,
    released_scores_resolution,
)
from .privacy.composition import SHAPES
from .privacy.errors import check_budget_pair
from .privacy.noise import check_seedable
from .privacy.oneshot import (
    DEFAULT_MECHANISM,
    UNTUNED_HEAD_START,
    OneShotPlan,
)
from .privacy.oneshot import MECHANISMS as ONE_SHOT
from .privacy.release import CandidateReleases
from .privacy.selection import SelectionPlan, Selector
from .privacy.units import PrivacyUnit, with_end_to_end
from .privacy.withhold import clean, outgoing
from .private_models import (
    PrivateModel,
    select_private_model,
    selection_resolution,
)
from .record_choice import Proposals, Shortlist, choose, shortlist
from .records import (
    TRAINING_FOLDS,
    RecordMetric,
    check_declared_epsilon,
    check_public_bounds,
    epsilon_parameters,
    holdout_split,
    record_metric,
    training_proposals,
)
from .registry import REGISTRY
from .scores import (
    ScoringPlan,
    check_inputs,
    check_space_params,
    known_score_range,
    reports_per_candidate,
)
from .space import Space, as_space
from .tuning import TuningEngine, warn_repeated_plays

__all__ = ["PrivateBOSearchCV", "PrivateSelectionSearchCV", "known_score_range"]

#: ``cv_results_`` keys that hold no score and are kept as scikit-learn computes them.
_TIMES = ("mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time")


@dataclass
class _Fit:
    """The state of one ``fit``, dropped when it ends (it holds raw-score machinery)."""

    verbose: int
    privacy: PrivacyPlan  # the privacy settings, checked (bound to n_val under the record unit)
    scores: ScoringPlan
    space: Space
    record: list | None = None  # the record unit's one split, as ``cv``
    metric: RecordMetric | None = None  # the record unit's metric, as ``scoring``
    selection: SelectionPlan | OneShotPlan | None = None
    engine: TuningEngine | None = None
    default_params: dict | None = None
    ledger: PrivacyLedger = field(default_factory=PrivacyLedger)
    releases: CandidateReleases | None = None
    scoring_started: bool = False
    last_results: dict | None = None
    last_failure: ValueError | None = None
    n_nonfinite: tuple[int, int] = (0, 0)
    warned_nonfinite: int = 0
    # the Bayesian search's
    bo: BatchOptimization | None = None
    recommended: int | None = None
    # private selection's: (params, cv_results_ row, raw score) of each candidate, in order
    offered: list = field(default_factory=list)
    # the record unit's proposals on the training records, shortlisted (PrivateBOSearchCV)
    proposed: Shortlist | None = None
    sampler: str | None = None
    # every record protected (estimator_epsilon="auto"): the selection's outcome
    private_model: PrivateModel | None = None

    @property
    def unit(self) -> PrivacyUnit:
        """The privacy unit (the record unit is bound to the hold-out split before any score)."""
        unit = self.privacy.unit
        assert unit is not None
        return unit


class _PrivateSearchCV(BaseSearchCV):
    """What privtune's searches share: the privacy of one ``fit`` (its
    :class:`~privtune.plan.PrivacyPlan`, checked once; the release of every score; the
    report), the untuned estimator, the errors and warnings that may leave a private search,
    and the interrupted fit. A subclass writes ``_run_search``, ``_plan_privacy`` (each
    report's epsilon, and its mechanism's plan), ``_expose`` (the results it publishes) and
    ``_report``; one with an algorithm parameter also gives ``_algorithm``,
    ``_optimizer_kwargs`` and ``_engine``, and one that releases every score sets
    ``_spreads_budget``. The base reads none of a subclass's parameters."""

    _parameter_constraints: ClassVar[dict] = {
        **BaseSearchCV._parameter_constraints,
        "estimator": [HasMethods(["fit"])],
        "space": [Mapping, list],
        # the privacy settings: checked once, by the fit's privacy plan (PrivacyPlan.check)
        "epsilon": "no_validation",
        "privacy_budget": "no_validation",
        "value_range": "no_validation",
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "noise_random_state": ["random_state"],
        "evaluate_default": ["boolean"],
        "privacy_unit": "no_validation",
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "estimator_epsilon": [
            Interval(numbers.Real, 0, None, closed="neither"),
            tuple,
            StrOptions({"auto"}),
            None,
        ],
    }

    _algorithm = "random"  # the algorithm's name (a search with an algorithm parameter: its)
    _spreads_budget = False  # True: privacy_budget is spread over every released score
    _optimizer_kwargs = None  # overrides read for the qff algorithms' privacy_beta

    def fit(self, X, y=None, **params):
        """Run the search, then the refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs), optional
        **params : dict
            Parameters routed to the estimator's ``fit``, the scorer and the splitter, as in
            scikit-learn's searches.

        Returns
        -------
        self
        """
        self._validate_params()
        verbose, scoring, cv = self.verbose, self.scoring, self.cv
        withheld: BaseException | None = None
        try:
            self._start(X, y, params)
            if self._fit.record is not None:
                # scikit-learn's machinery scores the hold-out split with privtune's metric
                self.scoring, self.cv = self._fit.metric, self._fit.record
            # the splitter and n_splits_ known before the search, whatever scikit-learn's version
            self.cv = splitter_before_search(self, X, y, params)
            # scikit-learn's own messages one level later; above 2 they print each fold's
            # (raw) score, so with privacy they stop at 2
            self.verbose = max(verbose - 1, 0)
            if self._private:
                self.verbose = min(self.verbose, 2)
            if self._every_record:
                self._select_private_model(X, y)
            else:
                super().fit(X, y, **params)
        except BaseException as exc:
            self._stopped(exc)
            if (
                not self._private
                or not getattr(self, "_fit", None)
                or not self._fit.scoring_started
            ):
                raise
            # scikit-learn's messages (a scorer's return value) and the frames of its fit
            # (every fold's score) may hold raw scores: raise a bare exception, outside this
            # block so that it has neither context nor those frames. privtune's own errors
            # keep their message.
            withheld = outgoing(exc, self._fit.privacy.setting)
        else:
            if self._private:
                self.privacy_report_ = self._end_to_end(self._report())
                self._fitted()
        finally:
            self.verbose, self.scoring, self.cv = verbose, scoring, cv
            self.__dict__.pop("_fit", None)
        if withheld is not None:
            raise withheld
        return self

    def _fitted(self) -> None:
        """After a private fit, before its state is dropped."""

    def _end_to_end(self, report: dict[str, Any]) -> dict[str, Any]:
        """``report`` with the training records' guarantee when the estimator is
        differentially private itself (``estimator_epsilon``): every record of the data is
        then protected (:func:`privtune.privacy.composition.end_to_end`)."""
        if self.estimator_epsilon is None or self._every_record:
            return report  # the selection among private models states every record's itself
        fit_epsilon, fit_delta = self._fit_guarantee()
        # every candidate was fitted once on the training records (a failed fit too)
        n_fits = (
            int(self.n_iter)
            if "release" not in report
            else report["n_candidates"] + int(report["baseline"])
        )
        return with_end_to_end(report, fit_epsilon, fit_delta, n_fits, bool(self.refit))

    def _fit_guarantee(self) -> tuple[float, float]:
        """``estimator_epsilon`` as ``(epsilon, delta)`` of one fit."""
        value = self.estimator_epsilon
        if isinstance(value, tuple):
            return check_budget_pair(value)
        return float(value), 0.0

    def __getstate__(self) -> dict:
        # scikit-learn sends the search to its parallel workers while it fits (callbacks); the
        # state of the fit (the curators, released values) stays in this process.
        state = dict(super().__getstate__())  # a copy: it may be this object's own __dict__
        state.pop("_fit", None)
        return state

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "cv_results_")

    @property
    def _private(self) -> bool:
        """Whether the scores are privatized (``epsilon`` or ``privacy_budget`` set)."""
        return self.epsilon is not None or self.privacy_budget is not None

    @property
    def _every_record(self) -> bool:
        """``estimator_epsilon="auto"``: every record protected by one total, the estimator's
        own epsilon set by the search (:mod:`privtune.private_models`)."""
        return isinstance(self.estimator_epsilon, str)

    def _check_every_record(self, privacy: PrivacyPlan) -> None:
        """``estimator_epsilon="auto"``, before any record is read: one total budget, one
        private choice, an estimator whose own epsilon the search can set."""
        budget = privacy.privacy_budget
        if budget is None or budget[1] <= 0.0:
            raise ValueError(
                "estimator_epsilon='auto' protects every record by one total: pass "
                "privacy_budget=(epsilon, delta) with delta > 0, the guarantee every record "
                "gets (not epsilon); the search sets the estimator's own epsilon from it."
            )
        if not isinstance(self, _ChoiceSearch) or not self._chooses:
            raise ValueError(
                "estimator_epsilon='auto' publishes one private choice among privately "
                "trained models: it takes publish='best' (or 'auto'), not publish='scores'."
            )
        own = epsilon_parameters(self.estimator)
        if not own:
            raise ValueError(
                f"estimator_epsilon='auto' sets the estimator's own epsilon, but "
                f"{type(self.estimator).__name__} has no parameter named epsilon (a "
                "diffprivlib model's). Pass a differentially private estimator, or state "
                "each fit's guarantee with estimator_epsilon=<float>."
            )
        tuned = sorted(set(own) & set(as_space(self.space).names))
        if tuned:
            raise ValueError(
                f"estimator_epsilon='auto' sets {tuned} from the total budget: the space must "
                "not tune them."
            )

    def _select_private_model(self, X, y) -> None:
        """Every record protected: private selection among privately trained models, its
        pick's own model kept (no refit), the fitted attributes of a search set from it."""
        raise NotImplementedError  # pragma: no cover - only the choice searches take "auto"

    # -- the start of a fit -------------------------------------------------------------------
    def _start(self, X, y, params) -> None:
        """Check what the parameter constraints do not, and set up the state of one fit."""
        _drop_fitted(self)
        check_seedable("noise_random_state", self.noise_random_state)
        space = as_space(self.space)
        check_space_params(self.estimator, space.names)
        privacy = self._check_privacy(noise_seed=_int_seed(self.noise_random_state))
        if privacy.private:  # before any fit: the withheld errors would name nothing
            check_inputs(self.estimator, X, y)
        f = _Fit(
            verbose=self.verbose,
            privacy=privacy,
            scores=ScoringPlan(self.scoring, self.refit, self.estimator, privacy.ranges),
            space=space,
        )
        self._fit = f
        if self.estimator_epsilon is not None:
            if not (privacy.private and privacy.unit_kind == "record"):
                raise ValueError(
                    "estimator_epsilon (the estimator's own guarantee per fit) applies under "
                    "privacy_unit='record' with epsilon or privacy_budget: it extends the "
                    "validation records' guarantee to the training records."
                )
            if self._every_record:
                self._check_every_record(privacy)
            else:  # checked before any fit
                check_declared_epsilon(self.estimator, self._fit_guarantee()[0], space.names)
            check_public_bounds(self.estimator, space.names)
        if privacy.unit_kind == "record":
            f.metric = record_metric(self.scoring, self.estimator, privacy.value_range)
            f.record = holdout_split(
                self.estimator,
                self.cv,
                self.validation_fraction,
                _int_seed(self.random_state),
                X,
                y,
                params.get("groups"),
                # end to end, which record is a validation one must not depend on the data
                stratify=self.estimator_epsilon is None,
            )
            f.privacy = privacy.bound(len(f.record[0][1]))
            f.scores = ScoringPlan(
                self.scoring, self.refit, self.estimator, {}, fixed_range=f.metric.value_range
            )
        self._prepare(X, y, params)
        self.epsilon_: float | None = self._plan_privacy()
        f.engine = self._engine()
        self.algorithm_ = f.engine.algorithm
        warn_repeated_plays(self.algorithm_, self.epsilon_, stacklevel=5)
        if privacy.private and self.return_train_score:
            raise ValueError(
                "return_train_score=True is not available with epsilon: train scores would be "
                "reported raw. Set return_train_score=False."
            )
        if privacy.private:
            self._refuse_callbacks()
        if self.evaluate_default:
            own = self.estimator.get_params(deep=True)
            f.default_params = {name: own[name] for name in space.names}
        metrics = f.scores.expected_metrics()
        if metrics is not None:  # known before any fit: fail before spending compute
            self._setup_metrics(metrics)

    def _check_privacy(
        self, *, noise_seed: int | None = None, algorithm: str | None = None
    ) -> PrivacyPlan:
        """The one check of ``epsilon``, ``privacy_budget``, ``value_range`` and
        ``privacy_unit`` (:meth:`privtune.plan.PrivacyPlan.check`); a total budget is spread
        over every planned report (each candidate's optimized metric and those named in
        ``value_range``) when the search releases scores. ``algorithm``: the one whose
        curator releases (default: the search's)."""
        return PrivacyPlan.check(
            self._algorithm if algorithm is None else algorithm,
            epsilon=self.epsilon,
            privacy_budget=self.privacy_budget,
            value_range=self.value_range,
            privacy_unit=self.privacy_unit,
            n_reports=lambda ranges: self.n_iter * reports_per_candidate(self.refit, ranges),
            kind="scores" if self._spreads_budget else "choice",
            noise_seed=noise_seed,
            optimizer_kwargs=self._optimizer_kwargs,
            door=SEARCH,
        )

    def _engine(self) -> TuningEngine:
        """The fit's tuning engine: random proposals (a subclass with an algorithm builds its
        own), for the noise the plan releases."""
        f = self._fit
        return TuningEngine(
            f.privacy.algorithm, epsilon=f.privacy.model_epsilon, n_startup=0, budget=self.n_iter
        )

    def _prepare(self, X, y, params) -> None:
        """After the split and the privacy plan, before the mechanism's: what a subclass
        computes from the data first (the record unit's proposals on the training records)."""

    def _plan_privacy(self) -> float | None:
        """Each report's epsilon (``epsilon_``), after setting the plan of a subclass's
        mechanism when it has one (private selection's)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _refuse_callbacks(self) -> None:
        """With privacy, accept only progress bars, on the search and on the estimators in it.

        Other callbacks see the fitted models and data (ScoringMonitor logs raw scores).
        """
        accepted = progress_bar()
        if accepted is None:  # scikit-learn without callbacks: none can be set
            return
        owners = [self, self.estimator, *self.estimator.get_params(deep=True).values()]
        for dim in self._fit.space.values():  # estimators among a categorical's choices
            for choice in getattr(dim, "choices", ()):
                if hasattr(choice, "get_params"):
                    owners += [choice, *choice.get_params(deep=True).values()]
        for owner in owners:
            for callback in getattr(owner, "_skl_callbacks", None) or []:
                if not isinstance(callback, accepted):
                    raise clean(
                        PrivacyError(
                            f"{type(callback).__name__} is set on {type(owner).__name__}; with "
                            "epsilon only sklearn.callback.ProgressBar is accepted, since other "
                            "callbacks can compute or log raw scores (ScoringMonitor does)."
                        )
                    )

    def _setup_metrics(self, metrics: list[str]) -> None:
        """On the first results (or before, when known): the optimized metric, the released
        ones, and one release path per released metric, all in the fit's ledger."""
        f = self._fit
        budget = f.privacy.budget
        planned = None if budget is None else budget.n_reports // int(self.n_iter)
        f.scores.setup(
            metrics, private=self._private, single=f.selection is not None, planned=planned
        )
        assert f.engine is not None and f.scores.metric is not None
        f.engine.value_range = f.scores.range_of(f.scores.metric, True)  # fixes the reward scale
        if not self._private or f.selection is not None:
            return
        meter = f.privacy.meter()  # one count, every metric
        releases = {}
        for m in f.scores.reported:
            release = f.privacy.release(
                f.scores.range_of(m, m == f.scores.metric), ledger=f.ledger, meter=meter
            )
            assert release is not None
            releases[m] = release
        f.releases = CandidateReleases(releases)

    # -- results -------------------------------------------------------------------------------
    def _format_results(self, candidate_params, n_splits, out, more_results=None):
        f = self._fit
        first = f.scores.metric is None  # a callable scoring: its metrics are known now
        if not self._private:
            results = super()._format_results(candidate_params, n_splits, out, more_results)
            if first:
                self._setup_metrics(_metrics(results))
            return results
        with warnings.catch_warnings():
            # scikit-learn's warning about non-finite scores prints the raw means.
            warnings.filterwarnings("ignore", message="One or more of the", category=UserWarning)
            raw = super()._format_results(candidate_params, n_splits, out, more_results)
        if first:
            self._setup_metrics(_metrics(raw))
        return self._expose(raw, len(candidate_params))

    def _expose(self, raw: dict, n_candidates: int) -> dict:
        """The results a private search publishes, from scikit-learn's raw ones."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _report(self) -> dict[str, Any]:
        """``privacy_report_``."""
        raise NotImplementedError  # pragma: no cover - abstract

    # -- rounds ------------------------------------------------------------------------------
    def _batch_size(self) -> int:
        """``batch_size``, or enough candidates to keep the ``n_jobs`` workers busy."""
        if self.batch_size is not None:
            q = int(self.batch_size)
        else:
            q = max(1, math.ceil(effective_n_jobs(self.n_jobs) / self.n_splits_))
        self.batch_size_ = min(q, int(self.n_iter))
        return self.batch_size_

    def _rounds(self, callback_ctx, n_rounds: int, sizes):
        """Begin the search's callback context; yield each round's ``(r, size, round_ctx)``
        and end each round's context after its body ran."""
        self._warn_if_splits_change()
        search_ctx = _begin(callback_ctx, self, task_name="search", max_subtasks=n_rounds)
        for r, size in enumerate(sizes):
            round_ctx = _begin(
                search_ctx,
                self,
                task_name="round",
                max_subtasks=size * self.n_splits_,
                sequential_subtasks=False,
            )
            self._fit.scoring_started = True
            yield r, size, round_ctx
            _end(round_ctx, self)
        _end(search_ctx, self)

    def _evaluate_batch(self, evaluate_candidates, candidates, round_ctx) -> dict | None:
        """Cross-validate ``candidates``; ``None`` when every fit failed (scikit-learn keeps no
        row for them; its error is kept to raise if nothing is ever evaluated)."""
        try:
            with warnings.catch_warnings():
                if self._private:
                    # Warnings of the fits and scorers (scikit-learn's "Scoring failed", a
                    # nested search's non-finite scores...) may quote scores: silenced, in the
                    # workers too (joblib passes the filters on). diffprivlib's
                    # PrivacyLeakWarning is let through: a fixed text saying that a bound is
                    # read from the data, raised whatever the data and the scores.
                    warnings.simplefilter("ignore")
                    leak = getattr(sys.modules.get("diffprivlib.utils"), "PrivacyLeakWarning", None)
                    if leak is not None:
                        warnings.filterwarnings("default", category=leak)
                results = evaluate(evaluate_candidates, candidates, round_ctx)
        except ValueError as exc:
            n_fits = len(candidates) * self.n_splits_
            if self.error_score == "raise" or not str(exc).startswith(
                f"\nAll the {n_fits} fits failed."
            ):
                raise
            self._fit.last_failure = exc
            return None
        self._fit.last_results = results
        return results

    def _all_fits_failed(self, n_fits: int) -> ValueError:
        """scikit-learn's error for the last round whose every fit failed, counting the
        ``n_fits`` that failed in all (withheld by ``fit`` with privacy)."""
        exc = self._fit.last_failure
        assert exc is not None
        head = re.match(r"\nAll the (\d+) fits failed\.", str(exc))
        if head is None or int(head.group(1)) == n_fits:
            return exc
        return ValueError(f"\nAll the {n_fits} fits failed." + str(exc)[head.end() :])

    def _warn_if_splits_change(self) -> None:
        if not _yields_constant_splits(self._checked_cv_orig):
            warnings.warn(
                "cv yields different splits at each call, so each round of the search scores "
                "its candidates on other folds. Pass an integer random_state to a shuffling "
                "splitter.",
                UserWarning,
                stacklevel=5,
            )

    def _stopped(self, exc: BaseException) -> None:
        """Leave a search stopped by ``exc`` visibly unfitted, keeping what was evaluated."""
        _drop_fitted(self)
        f = getattr(self, "_fit", None)
        last = None if f is None else f.last_results
        if last is None:
            return  # nothing was evaluated, nothing was spent
        self.interrupted_results_ = last
        spent = ""
        if self._private:
            self.privacy_report_ = self._report()
            value = self.privacy_report_.get(
                "composed_epsilon_basic", self.privacy_report_.get("epsilon")
            )
            spent = f" They spent epsilon = {value:g} (privacy_report_)."
        warnings.warn(
            f"{type(self).__name__}.fit was stopped by {type(exc).__name__} after "
            f"{len(last['params'])} of {self.n_iter} candidates: the search is not fitted. The "
            f"results of the evaluated candidates are in interrupted_results_.{spent}",
            UserWarning,
            stacklevel=4,
        )


@dataclass(frozen=True)
class _ChoiceSettings:
    """What a search's private choice is made with (:class:`PrivateSelectionSearchCV`'s
    parameters; the record unit's default choice of :class:`PrivateBOSearchCV`)."""

    mechanism: str = DEFAULT_MECHANISM
    distribution: str | float = "geometric"
    score_share: float = 0.0
    head_start: float = UNTUNED_HEAD_START


class _ChoiceSearch(_PrivateSearchCV):
    """A search that publishes one private choice among candidates fixed before any score
    (the untuned estimator first): drawn from the space, given, or (under the record unit)
    proposed on the training records. Its candidates are cross-validated in rounds (under the
    record unit: fitted on the training records, scored on the validation records), their raw
    scores kept inside the fit, and one choice among them published
    (:func:`privtune.record_choice.choose` for the one-shot mechanisms, a
    :class:`~privtune.privacy.selection.Selector` for repeat-and-select). A subclass gives
    ``_choice`` (the settings) and ``_fixed_candidates``."""

    @property
    def _chooses(self) -> bool:
        """Whether the search publishes one private choice (PrivateBOSearchCV: with
        ``publish="best"`` only)."""
        return True

    @property
    def _choice(self) -> _ChoiceSettings:
        return _ChoiceSettings()

    def _fixed_candidates(self) -> list[dict] | None:
        """The candidates fixed by the caller (``None``: drawn from the space)."""
        return None

    def _plan_privacy(self) -> float | None:
        f = self._fit
        if not self._private:
            raise ValueError(
                "publish='best' is private selection: pass epsilon or privacy_budget=(epsilon, "
                "delta) (the whole publication's)."
            )
        if self._every_record:  # a selection among privately trained models
            if self._fixed_candidates() is not None or self._choice.score_share:
                raise ValueError(
                    "estimator_epsilon='auto' draws a random number of candidates from the "
                    "space and publishes the pick's released score: candidates and "
                    "score_share do not apply."
                )
            assert f.privacy.privacy_budget is not None
            f.selection = SelectionPlan.from_args(
                self.n_iter,
                self._choice.distribution,
                None,
                f.privacy.privacy_budget,
                base="private",
            )
            return f.selection.epsilon_per_candidate
        if self._choice.mechanism != "repeat-and-select":
            fixed = self._fixed_candidates()
            f.selection = f.privacy.one_shot_plan(
                self.n_iter if fixed is None else len(fixed),
                baseline=bool(self.evaluate_default),
                mechanism=self._choice.mechanism,
                score_share=self._choice.score_share,
                head_start=self._choice.head_start,
            )
            return f.selection.epsilon_choice
        if self._fixed_candidates() is not None:
            raise ValueError(
                "candidates applies to the one-shot mechanisms: repeat-and-select draws a "
                "random number of candidates from the space."
            )
        if self._choice.score_share:
            raise ValueError(
                "score_share applies to the one-shot mechanisms: repeat-and-select publishes "
                "the pick's released score already. Leave score_share=0."
            )
        f.selection = SelectionPlan.from_args(
            self.n_iter,
            self._choice.distribution,
            f.privacy.epsilon,
            f.privacy.privacy_budget,
            baseline=bool(self.evaluate_default),
        )
        return f.selection.epsilon_per_candidate

    def _select_private_model(self, X, y) -> None:
        from sklearn.utils import _safe_indexing

        f = self._fit
        assert f.record is not None and f.metric is not None
        assert isinstance(f.selection, SelectionPlan) and f.privacy.privacy_budget is not None
        train, val = f.record[0]
        space, name = f.space, type(self).__name__
        if f.verbose > 0:
            print(
                f"[{name}] every record protected: about {f.selection.distribution.mean:g} "
                f"candidates, each fitted at epsilon={self.epsilon_:.3g} on the {len(train)} "
                f"training records and scored at it on the {len(val)} validation records; "
                "the pick's own model is kept",
                flush=True,
            )
        _, advice = selection_resolution(f.selection, len(val), f.metric.value_range)
        if advice is not None:  # before any record is read
            warnings.warn(advice, UserWarning, stacklevel=user_stacklevel())
        f.scoring_started = True
        f.private_model = out = select_private_model(
            self.estimator,
            lambda rng: space.from_unit(rng.random(space.dim)),
            _safe_indexing(X, train),
            _safe_indexing(y, train),
            _safe_indexing(X, val),
            _safe_indexing(y, val),
            f.metric,
            privacy_budget=f.privacy.privacy_budget,
            mean=self.n_iter,
            distribution=self._choice.distribution,
            untuned="candidate" if self.evaluate_default else None,
            seed=_int_seed(self.random_state),
            noise_seed=f.privacy.noise_seed,
        )
        if out.model is None:
            raise ValueError(
                f"n_iter_distribution={self._choice.distribution!r} drew 0 candidates: "
                "nothing is published (K is drawn before any record is read, so this says "
                "nothing about the data). Fit again, or use a distribution with K >= 1."
            )
        self.n_candidates_ = out.n_candidates
        own = self.estimator.get_params(deep=True)
        params = {n: own[n] for n in space.names} if out.params is None else out.params
        m = f.scores.metric or "score"
        results: dict[str, Any] = {"params": [params]}
        for p in space.names:
            results[f"param_{p}"] = np.ma.MaskedArray(
                [params.get(p)], mask=[p not in params], dtype=object
            )
        for k in _TIMES:
            results[k] = np.array([math.nan])
        results[f"mean_test_{m}"] = np.array([out.score])
        results[f"rank_test_{m}"] = np.array([1], dtype=np.int32)
        results[f"epsilon_test_{m}"] = np.array([f.selection.epsilon])
        self.cv_results_ = results
        self.best_index_, self.best_params_, self.best_score_ = 0, params, out.score
        self.multimetric_, self.scorer_, self.n_splits_ = False, f.metric, 1
        # the pick's own model, fitted at the per-candidate epsilon: no refit (with
        # refit=False too, since it is paid for; the search predicts with refit=True only)
        self.best_estimator_, self.refit_time_ = out.model, 0.0
        if f.verbose > 0:
            print(f"[{name}] the pick published", flush=True)

    def _run_search(self, evaluate_candidates, *, callback_ctx=None) -> None:
        """The untuned estimator and the candidates, drawn before any score, cross-validated
        in rounds; then the private choice (:meth:`_choose`) and its one published row."""
        f = self._fit
        declared = self._declared_range()
        candidates = self._draw_candidates(declared)
        q, n = self._batch_size(), len(candidates)
        n_rounds = math.ceil(n / q)
        sizes = [len(candidates[r * q : (r + 1) * q]) for r in range(n_rounds)]
        # the untuned estimator, when its values lie outside the space, may fail alone
        outside = f.default_params is not None and default_point(f.space, f.default_params) is None
        failed = 0
        for r, _, round_ctx in self._rounds(callback_ctx, n_rounds, sizes):
            batch = candidates[r * q : (r + 1) * q]
            if self._evaluate_batch(evaluate_candidates, batch, round_ctx) is None:
                failed += len(batch) * self.n_splits_
                if f.last_results is None and (r + 1) * q > int(outside):
                    # every fit failed, a candidate of the space among them: stop, as the
                    # Bayesian search does (withheld by fit with privacy)
                    raise self._all_fits_failed(failed)
                # no row in scikit-learn's results: a failed candidate counts as the worst end
                # of the range, like any failed fit
                f.offered += [(params, None, math.nan) for params in batch]
            if f.verbose > 1 or (f.verbose > 0 and r + 1 == n_rounds):
                print(
                    f"[{type(self).__name__}] {min((r + 1) * q, n)}/{n} candidates fitted "
                    "and scored (no score is shown before the pick)",
                    flush=True,
                )
        if f.last_results is None:  # only the untuned estimator, outside the space, failed
            raise self._all_fits_failed(failed)
        self._publish_pick(f.last_results, *self._choose(declared))

    def _draw_candidates(self, declared: tuple[float, float]) -> list[dict]:
        """The untuned estimator and the candidates, fixed or drawn with ``random_state``
        before any score (their number too, for repeat-and-select: ``n_candidates_``)."""
        f = self._fit
        rng = np.random.default_rng(_int_seed(self.random_state))
        fixed = self._fixed_candidates()
        if isinstance(f.selection, OneShotPlan):
            k = f.selection.n_candidates
            self._say_choice_resolution(f.selection, declared)
        else:
            assert f.selection is not None
            k = f.selection.distribution.draw(rng)  # before any score: K hides nothing
            if k == 0:
                raise ValueError(
                    f"n_iter_distribution={self._choice.distribution!r} drew 0 candidates: "
                    "nothing was evaluated and nothing is published (K is drawn before any "
                    "score, so this says nothing about the data). Fit again, or use a "
                    "distribution with K >= 1."
                )
        self.n_candidates_ = k
        candidates = [] if f.default_params is None else [f.default_params]
        if fixed is not None:
            return candidates + fixed
        return candidates + [f.space.from_unit(u) for u in rng.random((k, f.space.dim))]

    def _declared_range(self) -> tuple[float, float]:
        """The optimized score's range, which the mechanisms' sensitivity is computed from."""
        f = self._fit
        declared = f.scores.range_of(f.scores.metric or "score", True)
        if declared is None:
            raise ValueError(
                f"value_range is required with publish='best' for scoring={self.scoring!r}: "
                "the range of the score is not known. Pass value_range=(lo, hi), the range the "
                "score can take."
            )
        return declared

    def _say_choice_resolution(self, plan: OneShotPlan, declared: tuple[float, float]) -> None:
        """Before any score: warn once when the choice cannot resolve one point, and (with
        ``verbose``) say what it resolves."""
        f = self._fit
        sensitivity = f.unit.sensitivity(declared)
        width = declared[1] - declared[0]
        shortfall, advice = one_shot_resolution(
            plan, sensitivity=sensitivity, width=width, n_val=f.unit.n_val
        )
        if f.verbose > 0:
            print(
                f"[{type(self).__name__}] the {plan.mechanism} choice among "
                + ("the untuned estimator and " if plan.baseline else "")
                + f"{plan.n_candidates} candidates at epsilon={plan.epsilon_choice:g} resolves "
                f"{points(shortfall / width)} points (hundredths of the score's range)",
                flush=True,
            )
        if advice is not None:
            warnings.warn(advice, UserWarning, stacklevel=user_stacklevel())

    def _expose(self, raw: dict, n_candidates: int) -> dict:
        """Keep each new candidate's raw score inside the fit; expose its parameters only."""
        f = self._fit
        n_rows = sum(row is not None for _, row, _ in f.offered)
        for i in range(n_rows, n_candidates):
            row = {k: v[i] for k, v in raw.items() if k in _TIMES or k.startswith("param_")}
            score = float(raw[f"mean_test_{f.scores.metric}"][i])
            f.offered.append((raw["params"][i], row, score))
        return {"params": list(raw["params"])}

    def _choose(self, declared: tuple[float, float]) -> tuple[int, float]:
        """The private choice among the offered candidates, in the order drawn (the untuned
        estimator first): the pick's position and its published score (NaN when none is).
        A non-finite score counts as the worst end of the range."""
        f = self._fit
        if isinstance(f.selection, OneShotPlan):
            choice = choose(f.privacy, f.selection, [y for _, _, y in f.offered], declared)
            f.sampler = choice.sampler
            return choice.index, choice.published
        lo = declared[0]
        raw = [y if math.isfinite(y) else lo for _, _, y in f.offered]
        assert isinstance(f.selection, SelectionPlan)
        release = f.privacy.release(declared, epsilon=f.selection.epsilon_per_candidate)
        assert release is not None
        selector = Selector(release, competitors=f.selection.distribution.mean)
        baseline = f.default_params is not None
        for i, y in enumerate(raw):
            (selector.offer_baseline if baseline and i == 0 else selector.offer)(y)
        index, released = selector.best()
        assert index is not None
        return index + int(baseline), released  # the baseline (-1) is the first offer

    def _publish_pick(self, results: dict, index: int, published: float) -> None:
        """Make ``results`` (the dict scikit-learn keeps as ``cv_results_``) the pick's one
        row: its parameters, times and published score."""
        f = self._fit
        assert f.selection is not None
        params, row, _ = f.offered[index]
        results.clear()
        results["params"] = [params]
        for name in f.space.names:  # masked where the pick's space has no such parameter
            results[f"param_{name}"] = np.ma.MaskedArray(
                [params.get(name)], mask=[name not in params], dtype=object
            )
        for k in _TIMES:
            results[k] = np.array([row[k] if row is not None else math.nan])
        m = f.scores.metric
        results[f"mean_test_{m}"] = np.array([published])
        results[f"rank_test_{m}"] = np.array([1], dtype=np.int32)
        results[f"epsilon_test_{m}"] = np.array([f.selection.epsilon])

    def _select_best_index(self, refit, refit_metric, results):
        if callable(refit):
            return BaseSearchCV._select_best_index(refit, refit_metric, results)
        return 0  # the published row is the pick

    def _report(self) -> dict[str, Any]:
        f = self._fit
        if f.private_model is not None:
            out = f.private_model.report(f.unit)
        elif isinstance(f.selection, OneShotPlan):
            out = f.selection.report(f.unit, self._declared_range(), f.sampler)
        else:
            assert f.selection is not None
            out = f.selection.report(f.unit, getattr(self, "n_candidates_", None))
            out["mechanism"] = "repeat-and-select"
        if f.privacy.privacy_budget is not None:
            out["budget_epsilon"], out["budget_delta"] = f.privacy.privacy_budget
        return out


class PrivateBOSearchCV(_ChoiceSearch):
    """Bayesian search over an estimator's parameters, optionally on LDP scores.

    Each round, the optimizer proposes ``batch_size`` candidates (the ones in flight are pending
    points, so a batch spreads out), scikit-learn's machinery cross-validates them in parallel,
    and the candidates' mean test scores are told to the optimizer. ``n_iter`` candidates are
    evaluated in all; ``algorithm="moma"`` (MoMA-GP-UCB) evaluates each configuration
    ``k = 3`` times, which only pays off when the scores are noisy (privacy on).

    Privacy model (docs/privacy.md, "epsilon-LDP on scores"): with ``epsilon`` set, the mean
    cross-validated score of each candidate is released once through the Laplace curator
    (clipped to ``value_range``, noise of scale ``(hi - lo) / epsilon``): one epsilon-LDP report
    per candidate. The mean is privatized rather than each fold's score because the mean has
    the same range as a fold's score, so one report with one noise draw protects it; privatizing
    the ``n_splits`` fold scores would cost ``n_splits`` reports (``n_splits * epsilon`` per
    candidate) or, at the same total epsilon, noise ``n_splits`` times larger on each fold and
    ``sqrt(n_splits)`` times larger on their mean. Everything the search exposes is computed
    from released values (post-processing, free): ``cv_results_`` has no per-split or train
    score, ``mean_test_<metric>`` is the released value, ``std_test_<metric>`` is absent, and
    ``epsilon_test_<metric>`` gives each candidate's spent epsilon (0 for a NaN score, which
    releases nothing; a failed fit scored with a numeric ``error_score`` is released like any
    score). ``best_params_`` is the evaluated candidate with the best posterior mean
    of the optimizer's model (``posterior_mean_test_<metric>``, in score units, clipped to
    ``value_range``: under heavy noise a model's mean can leave the range a score can take)
    among the untuned estimator, when it was evaluated, and the candidates the model puts above
    it with posterior probability :func:`~privtune.acquisition.baseline_level` (``1 - 0.05 / m``
    for ``m`` competing candidates);
    ``best_score_`` is that candidate's posterior mean (the model's estimate of its score from
    every released value, not a released value itself, and never the maximum of the noisy
    scores), and ``rank_test_<metric>`` ranks the released scores, so the best candidate's rank
    need not be 1. ``privacy_report_``
    states the per-report and the composed epsilon. The search fails closed: with privacy,
    callbacks other than :class:`sklearn.callback.ProgressBar` (on the search or the tuned
    estimator) are refused, and an error raised once scoring has begun is re-raised without
    its message and traceback, which may hold scores. Not protected: the training data is not
    made differentially private, only the scores that leave the cross-validation are; which
    candidates failed (a NaN score) and the fit times are reported as scikit-learn has them;
    epsilon composes over the candidates and over every search on the same data.

    ``algorithm="qff-ldp"`` (Dubey 2021, "(alpha, beta)-local joint DP") releases each mean
    score the same way with Gaussian noise (:class:`privtune.privacy.GaussianCurator`, Lemma 5's
    ``sigma_u`` at ``alpha = epsilon``); ``privacy_report_`` then states each report's delta
    and composes through dp-accounting's PLD accountant. ``"qff-jdp"`` (joint DP) is refused:
    its raw scores stay with a trusted privatizer, while a search publishes every candidate's
    score (use :class:`privtune.PrivateGPUCBSampler` for it).

    A failed candidate (every fit failed, or a NaN mean score) counts as the lowest score of
    the range for the optimizer, which steers it away from the point (firmly without privacy;
    with privacy, where released scores are noisy, as much as one more low score does); a
    batch whose fits all failed leaves no row in ``cv_results_`` (with a
    ``FitFailedWarning``), as nothing was evaluated.

    Parameters
    ----------
    estimator : estimator object
        The estimator to tune (a classifier, a regressor or a pipeline).
    space : mapping or list of mappings
        Parameter names (``clf__C`` for a step of a pipeline) to search dimensions: anything
        :class:`privtune.space.SearchSpace` accepts (``Real``, ``Integer``, ``Categorical``,
        Optuna distributions, frozen ``scipy.stats`` distributions with finite support such
        as ``loguniform(1e-3, 1e2)`` or ``randint(1, 10)``, a list of choices, ``(low,
        high)``, ``(low, high, "log-uniform")``). A list of such mappings is searched as
        ``RandomizedSearchCV`` searches one: each candidate comes from one of them, and
        ``cv_results_`` masks the parameters its mapping lacks
        (:class:`privtune.space.SpaceUnion`).
    algorithm : {"auto", "moma", "ata", "tgp", "gp-ucb", "random", "go-ucb", "qff-ldp"}, \
default="auto"
        The optimizer (see :class:`privtune.PrivateGPUCBSampler`); ``"auto"`` is the one
        measured best for exact or for privatized scores (:data:`privtune.registry.AUTO`), and
        ``algorithm_`` holds the name it resolved to. ``"random"`` proposes
        uniformly and recommends with the same rule: the honest private baseline.
        ``"go-ucb"`` is :class:`privtune.optimizers.GOUCB` with ``horizon=n_iter`` (its
        uniform Phase I lasts ``ceil(sqrt(n_iter))`` candidates). ``"qff-ldp"`` is
        :class:`privtune.optimizers.QFFGPUCB` with local joint DP and ``horizon=n_iter``; it
        needs ``epsilon``.
    epsilon : float, optional
        Per-candidate LDP parameter (``alpha`` for ``"qff-ldp"``). ``None`` (default) runs the
        non-private search.
    privacy_budget : tuple of float, optional
        ``(epsilon, delta)``: the total the whole search may spend, instead of ``epsilon``
        per report. The ``n_iter`` candidates' reports (times the reported metrics) share it:
        each is released with the per-report epsilon that
        :func:`privtune.privacy.per_report_epsilon` affords (dp-accounting's PLD accountant,
        the tightest valid one for Laplace reports), kept in ``epsilon_``, and a release beyond
        the planned number is refused (:class:`privtune.privacy.BudgetExhaustedError`).
        Preview what a budget buys with :func:`privtune.privacy.plan_budget`. Laplace-curator
        algorithms only (not ``"qff-ldp"``). With ``publish="best"``, the whole publication's
        ``(epsilon, delta)``: the choice is pure epsilon-DP and spends ``epsilon`` (as does
        ``epsilon`` itself).
    publish : {"auto", "scores", "best"}, default="auto"
        What the search publishes with privacy. ``"scores"``: every candidate's score, released
        with Laplace noise (per-score LDP, for a tuner or an audience that sees every score);
        the model learns from the released scores. ``"best"``: only a private choice among
        candidates fixed before the validation records are read (the choice of
        :class:`PrivateSelectionSearchCV`, made by this search itself): under the record unit
        the candidates are proposed by this
        search's algorithm tuning with exact scores on the training records alone (3-fold
        cross-validation inside them; the record unit does not protect those records, and the
        privacy report says so); those whose cross-validated score there trails the untuned
        estimator's are dropped (free under this unit), and a permute-and-flip choice among
        the untuned estimator and the rest spends the whole budget once (``best_score_`` is
        then NaN: no score is published); with ``algorithm="random"``, with
        ``estimator_epsilon`` (the training
        records protected too) or under the score unit, the candidates are drawn from the
        space (:class:`PrivateSelectionSearchCV` offers repeat-and-select as well).
        ``"auto"``: ``"best"`` under the record unit with privacy, where it measured best
        (benchmarks page, "Privacy units"), ``"scores"`` otherwise. See docs/privacy.md,
        "Private selection".
    value_range : tuple of float or dict, optional
        The range ``(lo, hi)`` of the optimized score. Needed with ``epsilon`` unless the
        scoring's range is known (accuracy, AUC, F1, precision, recall, ...: see
        :func:`known_score_range`). With several metrics, a dict ``{metric: (lo, hi)}``: with
        privacy, the optimized metric is always reported and any other metric is reported only
        if it has an entry here, since each extra metric costs ``epsilon`` per candidate.
    n_iter : int, default=50
        Number of candidates to evaluate (each one cross-validation, and one privacy report
        per reported metric); with ``publish="best"``, the candidates proposed or drawn (the
        untuned estimator aside).
    batch_size : int, optional
        Candidates proposed per round. Default: enough to keep the ``n_jobs`` workers busy,
        ``ceil(n_jobs / n_splits)`` (1 with ``n_jobs=None``). Smaller batches give the model
        more to learn from between proposals.
    n_initial_points : int, default=10
        Candidates drawn uniformly before the acquisition is used (MoMA's repeated plays of a
        configuration count, as in :class:`privtune.PrivateGPUCBSampler`). Without privacy, in
        a space with a real parameter, the default algorithm draws half of them, then scores
        the best candidate again: if it scores the same, the scores are deterministic and the
        acquisition takes over (:meth:`privtune.tuning.TuningEngine.startup_step`).
    scoring : str, callable, list, tuple or dict, optional
        As in :class:`~sklearn.model_selection.GridSearchCV`. With several metrics, ``refit``
        names the one the optimizer maximizes.
    cv : int, cross-validation generator or iterable, optional
        As in :class:`~sklearn.model_selection.GridSearchCV`. Use splits that do not change
        between calls (the default, or a shuffling splitter with an integer
        ``random_state``); otherwise each candidate is scored on other folds.
    n_jobs : int, optional
        Parallel fits through joblib (any backend, e.g. ``joblib.parallel_config("dask")``).
    refit : bool, str or callable, default=True
        As in :class:`~sklearn.model_selection.GridSearchCV`. A callable receives the
        privatized ``cv_results_`` and replaces the posterior-mean rule.
    random_state : int, RandomState instance or None, default=None
        Seed of the proposals.
    noise_random_state : int, RandomState instance or None, default=None
        Seed of the curator's noise, for reproducible experiments only. Leave it ``None``
        otherwise: a search repeated with the same noise on other data reveals the difference of
        the raw scores.
    optimizer_kwargs : dict, optional
        Overrides of the optimizer's tuning defaults (see
        :func:`privtune.tuning.make_optimizer`).
    heavy_tailed : bool, default=False
        Say that the scores have heavy-tailed noise (rare, far-off values: an unstable
        estimator, a small or unbalanced validation set). ``algorithm="auto"`` then fits a
        Student-t likelihood instead of a Gaussian one from the first candidate, so a lucky or
        unlucky score stops pulling the model; measured on the benchmarks page ("Heavy
        tails"). Without privacy the default switches to it by itself once the start-up's
        repeat of a candidate returns another score. Available with ``algorithm="auto"`` or
        ``"gp-ucb"``.
    evaluate_default : bool, default=True
        Evaluate the untuned estimator (its own values of the space's parameters) first, so
        that it is among the candidates the pick is chosen from and tuning never loses it;
        with privacy it is also the baseline of the pick, kept unless a candidate beats it with
        posterior probability ``1 - 0.05 / m`` for ``m`` candidates. When its values lie in the
        space it is one of the ``n_iter`` candidates and the model learns from it; when they
        do not (a ``None``, a value outside a range or off a step grid), it is evaluated all
        the same as an arm outside the cube, which the model is not told, and compared through
        its released score and the curator's known noise. With ``publish="best"`` it is
        released beside the ``K`` random candidates (one more report in the accounting) and
        kept unless the best candidate's released score exceeds its own by the quantile of
        the difference of two noise draws at ``1 - 0.05 / mean`` (``mean`` the mean of
        ``K``).
    verbose : int, default=0
        ``>= 1``: one line per round: without privacy the best mean score so far, with privacy
        the posterior mean of the current pick (never the maximum of the noisy released
        scores); ``>= 2``: also scikit-learn's messages at its level ``verbose - 1`` ("Fitting
        5 folds...", then per-fit times). With privacy scikit-learn's level stops at 2, since
        above it prints fold scores.
    error_score : "raise" or float, default=np.nan
        Score of a failed fit, as in scikit-learn. A NaN score releases nothing and teaches the
        optimizer nothing.
    return_train_score : bool, default=False
        Include train scores (non-private search only; with ``epsilon`` they would be raw, and
        ``True`` is an error).
    pre_dispatch : int or str, default="2*n_jobs"
        As in :class:`~sklearn.model_selection.GridSearchCV`.
    privacy_unit : {"score", "record"}, default="score"
        With privacy, whom each released score protects (docs/privacy.md, "Privacy units").
        ``"score"``: the whole score (noise of scale ``(hi - lo) / epsilon``, any ``cv``),
        the stronger guarantee and the default, so that a weaker one is always asked for.
        ``"record"``: each of the ``n_val`` hold-out validation records (replace-one): the
        score is a metric privtune computes on one hold-out split (``scoring`` one of
        :data:`privtune.records.RECORD_METRICS`, ``value_range`` the per-record range), so its
        sensitivity is ``(hi - lo) / n_val`` and the noise ``n_val`` times smaller. ``cv``
        must give one split (K folds are refused: each record trains K - 1 fold models);
        ``refit`` fits ``best_estimator_`` on the whole data, validation records included,
        which the guarantee does not cover.
    validation_fraction : float, default=0.2
        With ``privacy_unit="record"`` and ``cv=None``: the share of the data held out for
        validation (stratified for a classifier, seeded by ``random_state``).
    estimator_epsilon : float, tuple of float or "auto", optional
        Under ``privacy_unit="record"``, for an estimator that is differentially private
        itself. ``"auto"``: every record of the data, training and validation, gets
        ``privacy_budget=(epsilon, delta)`` and nothing else is asked; the search sets the
        estimator's own ``epsilon`` (every parameter named so, shared by a pipeline's steps:
        :func:`privtune.records.epsilon_parameters`) and makes one private selection
        among privately trained models (:func:`privtune.private_models.select_private_model`:
        a random number of candidates of mean ``n_iter``, each fitted and scored at the
        per-candidate epsilon, accounted once for every record). ``best_estimator_`` is
        the pick's own model, fitted on the training records at that epsilon: the whole
        budget goes to the selection and nothing is refitted (a refit with a share of the
        budget was measured and lost; docs/privacy.md, "When not to tune"). With
        ``refit=False`` it is kept too, and the search does not predict (scikit-learn's
        rule). Mind ``n_iter``: under the geometric law the guarantee does not depend on
        it, and more candidates picked better. A number: each fit's guarantee as stated by the
        estimator's documentation, ``epsilon``-DP (or ``(epsilon, delta)``-DP) in its training
        records; the report then composes the fits one by one with the validation records'
        releases (``privacy_report_["end_to_end"]``, by
        :func:`privtune.privacy.composition.end_to_end`; the refit counts as one more fit).
        Either way the hold-out split is not stratified (a stratified one depends on the
        labels). privtune cannot check the estimator's claim; it refuses, before any fit, a
        number below the estimator's own ``epsilon`` parameters (their sum for a pipeline's
        steps; :func:`privtune.records.check_declared_epsilon`) and a space that tunes one.

    Attributes
    ----------
    cv_results_ : dict of numpy (masked) ndarrays
        One entry per candidate, in evaluation order, as in scikit-learn's searches, and
        ``turn``, what made each candidate (``"untuned"``, ``"start-up"``, ``"repeat"``,
        ``"trust-region"``, ``"acquisition"``...: the optimizer's ``turn``); with privacy, the
        released scores only (see above), ``epsilon_test_<metric>`` and
        ``posterior_mean_test_<metric>``.
    best_estimator_ : estimator
        The estimator refitted on the whole data with ``best_params_`` (``refit`` only).
    best_score_ : float
        ``mean_test_<metric>`` of ``best_index_``; with privacy its
        ``posterior_mean_test_<metric>``, the model's estimate from the released scores.
    best_params_ : dict
        Without privacy, the candidate with the best mean test score; with privacy, the one
        with the best posterior mean (the recommendation).
    best_index_ : int
        Index of ``best_params_`` in ``cv_results_``.
    scorer_ : function or dict
        The scorer(s) used.
    n_splits_ : int
        Number of cross-validation splits.
    refit_time_ : float
        Seconds spent refitting ``best_estimator_``.
    multimetric_ : bool
        Whether several metrics were evaluated.
    batch_size_ : int
        The batch size used.
    algorithm_ : str
        The algorithm run (``"auto"`` resolved).
    epsilon_ : float or None
        The per-report epsilon used: ``epsilon``, or the share of ``privacy_budget``.
    n_candidates_ : int
        With ``publish="best"``: the number of candidates chosen among (the untuned estimator
        aside; fixed before the validation records are read).
    privacy_report_ : dict
        Every key is explained in docs/privacy.md, "The privacy report". With privacy:
        ``n_reports``, ``epsilon_per_report``, ``composed_epsilon_basic``,
        ``composed_epsilon_advanced`` and ``composed_epsilon_pld`` (at ``delta``: 1e-6, or the
        budget's) and ``metrics`` (the reported ones); with ``privacy_budget`` also
        ``budget_epsilon``, ``budget_delta``, ``planned_reports``, ``released_reports``,
        ``remaining_reports`` and ``spent_epsilon`` (:meth:`privtune.privacy.PrivacyBudget.report`).
        With ``publish="best"``: :class:`PrivateSelectionSearchCV`'s report (``release``,
        ``mechanism``, ``n_candidates``, ``epsilon``, ``delta``, ``resolves``, ...) and, for
        proposed candidates, ``candidates``: where they came from.
    interrupted_results_ : dict
        Set only when ``fit`` stops with an exception (``KeyboardInterrupt`` included) after
        evaluating candidates: their (privatized) results, with a warning; ``privacy_report_``
        then states what they spent. The search is not fitted.

    See Also
    --------
    privtune.PrivateGPUCBSampler : The same optimizers as an Optuna sampler.
    sklearn.model_selection.RandomizedSearchCV : Random search.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from privtune import PrivateBOSearchCV
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> search = PrivateBOSearchCV(
    ...     LogisticRegression(max_iter=200),
    ...     {"C": (1e-3, 1e2, "log-uniform")},
    ...     algorithm="gp-ucb",
    ...     epsilon=5.0,
    ...     n_iter=12,
    ...     random_state=0,
    ... ).fit(X, y)
    >>> sorted(search.best_params_)
    ['C']
    >>> search.privacy_report_["n_reports"]
    12
    """

    _parameter_constraints: ClassVar[dict] = {
        **_PrivateSearchCV._parameter_constraints,
        "algorithm": [StrOptions({"auto", *REGISTRY})],
        "publish": [StrOptions({"auto", "scores", "best"})],
        "release": [StrOptions({"auto", "scores", "best"}), Hidden(StrOptions({"deprecated"}))],
        "n_initial_points": [Interval(numbers.Integral, 0, None, closed="left")],
        "optimizer_kwargs": [dict, None],
        "heavy_tailed": ["boolean"],
    }

    def __init__(
        self,
        estimator,
        space,
        *,
        algorithm: str = "auto",
        epsilon: float | None = None,
        privacy_budget: tuple[float, float] | None = None,
        publish: str = "auto",
        value_range=None,
        n_iter: int = 50,
        batch_size: int | None = None,
        n_initial_points: int = 10,
        scoring=None,
        cv=None,
        n_jobs: int | None = None,
        refit=True,
        random_state=None,
        noise_random_state=None,
        optimizer_kwargs: dict | None = None,
        heavy_tailed: bool = False,
        evaluate_default: bool = True,
        verbose: int = 0,
        error_score=np.nan,
        return_train_score: bool = False,
        pre_dispatch="2*n_jobs",
        privacy_unit: str = "score",
        validation_fraction: float = 0.2,
        estimator_epsilon: float | tuple[float, float] | None = None,
        release: str = "deprecated",
    ) -> None:
        super().__init__(
            estimator=estimator,
            scoring=scoring,
            n_jobs=n_jobs,
            refit=refit,
            cv=cv,
            verbose=verbose,
            pre_dispatch=pre_dispatch,
            error_score=error_score,
            return_train_score=return_train_score,
        )
        self.space = space
        self.algorithm = algorithm
        self.epsilon = epsilon
        self.privacy_budget = privacy_budget
        self.publish = publish
        self.value_range = value_range
        self.n_iter = n_iter
        self.batch_size = batch_size
        self.n_initial_points = n_initial_points
        self.random_state = random_state
        self.noise_random_state = noise_random_state
        self.optimizer_kwargs = optimizer_kwargs
        self.heavy_tailed = heavy_tailed
        self.evaluate_default = evaluate_default
        self.privacy_unit = privacy_unit
        self.validation_fraction = validation_fraction
        self.estimator_epsilon = estimator_epsilon
        self.release = release

    def fit(self, X, y=None, **params):
        """Run the search: ``n_iter`` candidates, then the refit (``publish="best"``: the
        candidates proposed or drawn, then one private choice among them).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs), optional
        **params : dict
            Parameters routed to the estimator's ``fit``, the scorer and the splitter, as in
            scikit-learn's searches.

        Returns
        -------
        self : PrivateBOSearchCV
        """
        if self.release != "deprecated":
            if self.publish != "auto":
                raise TypeError("PrivateBOSearchCV takes publish (formerly release), not both.")
            warnings.warn(
                "PrivateBOSearchCV: 'release' is renamed 'publish'; the old name will be "
                "removed in the next release.",
                FutureWarning,
                stacklevel=2,
            )
        return super().fit(X, y, **params)

    @property
    def _publishes(self) -> str:
        """``publish``, ``"auto"`` resolved: ``"best"`` under the record unit with privacy."""
        setting = self.publish if self.release == "deprecated" else self.release
        if setting != "auto":
            return setting
        return "best" if self._private and self.privacy_unit == "record" else "scores"

    @property
    def _chooses(self) -> bool:
        """Whether the search publishes one private choice (``publish="best"``)."""
        return self._publishes == "best"

    def _prepare(self, X, y, params) -> None:
        if self._chooses:
            self._fit.proposed = _propose(self, X, y, params)

    def _fixed_candidates(self) -> list[dict] | None:
        short = self._fit.proposed
        return None if short is None else list(short.candidates[int(short.baseline) :])

    @property
    def _spreads_budget(self) -> bool:  # type: ignore[override]
        return self._publishes == "scores"

    @property
    def _algorithm(self) -> str:  # type: ignore[override]
        return self.algorithm

    @property
    def _optimizer_kwargs(self) -> dict | None:  # type: ignore[override]
        return self.optimizer_kwargs

    def _plan_privacy(self) -> float | None:
        return super()._plan_privacy() if self._chooses else self._fit.privacy.epsilon

    def _engine(self) -> TuningEngine:
        f = self._fit
        return TuningEngine(
            f.privacy.algorithm,
            epsilon=f.privacy.model_epsilon,
            optimizer_kwargs=self.optimizer_kwargs,
            n_startup=self.n_initial_points,
            budget=self.n_iter,
            heavy_tailed=self.heavy_tailed,
        )

    # -- the search --------------------------------------------------------------------------
    def _run_search(self, evaluate_candidates, *, callback_ctx=None):
        if self._chooses:
            return super()._run_search(evaluate_candidates, callback_ctx=callback_ctx)
        f = self._fit
        if self._private and f.engine.spec.curator == "laplace" and f.scores.metric is not None:
            self._say_resolution()
        q = self._batch_size()
        f.bo = bo = BatchOptimization.start(
            f.engine,
            f.space,
            seed=_int_seed(self.random_state),
            noise_seed=f.privacy.noise_seed,
            default_params=f.default_params,
        )
        n_iter = bo.n_candidates(int(self.n_iter), repeats_help=self._private)
        n_rounds = math.ceil(n_iter / q)
        sizes = [min(q, n_iter - r * q) for r in range(n_rounds)]
        results, failed = None, 0
        for r, size, round_ctx in self._rounds(callback_ctx, n_rounds, sizes):
            # the untuned estimator first: its point, or an arm outside the cube
            U, candidates, n_extra = bo.batch(r, q, size)
            batch = self._evaluate_batch(evaluate_candidates, candidates, round_ctx)
            failed += 0 if batch is not None else len(candidates) * self.n_splits_
            if batch is None and results is None and len(U):
                # every fit failed, a candidate of the space's among them (by default the
                # untuned estimator's): the data or the estimator. scikit-learn's error,
                # counting every fit made, instead of a warning per round.
                raise self._all_fits_failed(failed)
            self._tell(U, len(candidates), batch, n_extra)
            results = results if batch is None else batch
            if f.verbose > 0:
                self._print_round(r + 1, n_rounds, r * q + size, results)
        if results is None:  # only the untuned estimator, outside the space, and it failed
            raise self._all_fits_failed(failed)
        self._finish_search(results)

    def _tell(self, U, n_candidates: int, batch: dict | None, n_extra: int) -> None:
        """Tell the optimizer a round's mean test scores (``batch``), or that every fit of its
        ``n_candidates`` failed (``None``: scikit-learn keeps no row for them)."""
        f = self._fit
        assert f.bo is not None
        if batch is None:
            f.bo.record_failed(U)
            _warn_all_fits_failed(n_candidates, self._private, f.last_failure)
            if n_extra:
                _warn_untuned_failed()
            return
        self._warn_nonfinite()
        f.bo.record(U, batch[f"mean_test_{f.scores.metric}"], n_extra)

    def _finish_search(self, results: dict) -> None:
        """After the last round: warn if the untuned estimator (an arm outside the cube) has no
        score; add what made each candidate (``turn``); with privacy, add the posterior means
        of the released scores and the pick."""
        f = self._fit
        assert f.bo is not None
        scores = results[f"mean_test_{f.scores.metric}"]
        if f.bo.outside is not None and not np.isfinite(scores[f.bo.outside]):
            _warn_untuned_failed()
        results["turn"] = f.bo.turn_column(len(results["params"]))
        if self._private and f.bo.has_finite(scores):
            posterior, f.recommended = f.bo.recommend(scores, self._noise_variance())
            # reported within the score's range: a model's mean under heavy noise can leave it
            results[f"posterior_mean_test_{f.scores.metric}"] = np.clip(
                posterior, *f.scores.optimized_range
            )

    def _say_resolution(self) -> None:
        """Before any score: warn once when the released scores cannot tell one point apart
        (the pick taken as the best released score, :func:`~privtune.privacy.plan_budget`'s
        shortfall rule), and (with ``verbose``) say what they resolve."""
        f = self._fit
        declared = f.scores.optimized_range
        width, n = declared[1] - declared[0], int(self.n_iter)
        assert self.epsilon_ is not None
        d, advice = released_scores_resolution(
            sensitivity=f.unit.sensitivity(declared),
            width=width,
            n_candidates=n,
            n_reports=n * f.scores.n_reported_planned(),
            epsilon=float(self.epsilon_),
            budget=f.privacy.budget,
            n_val=f.unit.n_val,
        )
        if f.verbose > 0:
            print(
                f"[{type(self).__name__}] {n} released scores at epsilon={self.epsilon_:.3g} "
                f"each resolve {points(d / width)} points (hundredths of the score's range)",
                flush=True,
            )
        if advice is not None:
            if f.unit.n_val is not None:
                advice += (
                    " Under the record unit, publish='best' spends the budget on one choice "
                    "instead (PrivateSelectionSearchCV's permute-and-flip)."
                )
            warnings.warn(advice, UserWarning, stacklevel=7)

    def _noise_variance(self) -> float:
        """The variance of a released score's noise (score units)."""
        f = self._fit
        assert f.releases is not None and f.scores.metric is not None
        return f.releases.releases[f.scores.metric].curator.noise_variance

    def _warn_nonfinite(self) -> None:
        f = self._fit
        n, n_candidates = f.n_nonfinite
        if not self._private or n <= f.warned_nonfinite:
            return
        f.warned_nonfinite = n
        warnings.warn(
            f"{n} of {n_candidates} candidates have a non-finite mean test score (failed fits "
            "scored with error_score=nan, or a scorer returning NaN): they release nothing. "
            "With epsilon the fits' own warnings are silenced, since they may quote scores; "
            "rerun without epsilon, on data you may inspect, to see them.",
            UserWarning,
            stacklevel=5,
        )

    def _print_round(self, r: int, n_rounds: int, n_done: int, results: dict | None) -> None:
        """One line per round: without privacy the best mean test score so far; with privacy
        the posterior mean of the current pick (a model estimate from released scores, never
        the maximum of noisy values)."""
        f = self._fit
        assert f.bo is not None
        metric = f.scores.metric
        value, bounds = f.bo.best, None
        if self._private and results is not None:
            scores = results[f"mean_test_{metric}"]
            if f.bo.has_finite(scores):
                posterior, pick = f.bo.recommend(scores, self._noise_variance())
                # clipped to the range, and said so: never shown as if measured
                value, bounds = float(posterior[pick]), f.scores.optimized_range
        shown = estimate_text(value, bounds)
        if not self._private:
            what = f"best mean_test_{metric} so far: {shown}"
        else:
            what = f"current pick's posterior mean of {metric}: {shown}"
        print(
            f"[{type(self).__name__}] round {r}/{n_rounds}: {n_done}/{self.n_iter} candidates, "
            f"{what}",
            flush=True,
        )

    def _select_best_index(self, refit, refit_metric, results):
        if self._chooses:
            return super()._select_best_index(refit, refit_metric, results)
        if not self._private or callable(refit):
            return BaseSearchCV._select_best_index(refit, refit_metric, results)
        f = self._fit
        if f.recommended is None:
            raise clean(
                ValueError(
                    f"Every one of the {len(results['params'])} candidates has a non-finite "
                    f"mean test score ({f.scores.metric}): there is nothing to select. Check the "
                    "scorer and error_score (failed fits score error_score)."
                )
            )
        return f.recommended

    def _fitted(self) -> None:
        # best_score_ is the pick's posterior mean, not a released (noisy) value
        if not self._chooses and not callable(self.refit) and hasattr(self, "best_index_"):
            posterior = self.cv_results_[f"posterior_mean_test_{self._fit.scores.metric}"]
            self.best_score_ = float(posterior[self.best_index_])

    # -- privatized results ------------------------------------------------------------------
    def _expose(self, raw: dict, n_candidates: int) -> dict:
        """The results to expose: the released mean of each reported metric, no raw score.

        Each candidate's mean is released once, the first time it appears; later calls (one per
        round, over all candidates so far) reuse the released values.
        """
        if self._chooses:
            return super()._expose(raw, n_candidates)
        f = self._fit
        assert f.releases is not None
        results: dict[str, Any] = {
            k: v for k, v in raw.items() if k in _TIMES or k.startswith("param_") or k == "params"
        }
        released = f.releases.update(
            {m: raw[f"mean_test_{m}"] for m in f.scores.reported}, n_candidates
        )
        for m, values in released.items():
            results[f"mean_test_{m}"] = values
            results[f"rank_test_{m}"] = _rank(values)
            results[f"epsilon_test_{m}"] = np.where(
                np.isfinite(values), float(self.epsilon_ or 0.0), 0.0
            )
        optimized = released[f.scores.reported[0]]  # the optimized metric
        f.n_nonfinite = (int(np.sum(~np.isfinite(optimized))), n_candidates)  # warned per round
        return results

    def _report(self) -> dict[str, Any]:
        f = self._fit
        if self._chooses:
            out = super()._report()
            if f.proposed is not None and f.record is not None:
                out["candidates"] = f.proposed.describe(len(f.record[0][0]))
            return out
        out = f.privacy.report(f.ledger)
        out["metrics"] = list(f.scores.reported)
        return out


class PrivateSelectionSearchCV(_ChoiceSearch):
    """Private selection over an estimator's parameters: only the pick is published.

    The untuned estimator (candidate 0, ``evaluate_default``) and ``n_iter`` candidates drawn
    uniformly from the space with ``random_state``, all fixed before any record is read, are
    cross-validated (under the record unit: fitted on the training records, scored on the
    validation records); then one private choice among them is published, and nothing else
    unless ``score_share`` asks for the pick's score. ``cv_results_`` has one row.

    ``mechanism`` says how the choice is made:

    - ``"permute-and-flip"`` (the default; McKenna & Sheldon 2020) and ``"exponential"``
      (McSherry & Talwar 2007): one-shot choices (:mod:`privtune.privacy.oneshot`). Every
      score moves by at most the unit's sensitivity when one validation record is replaced, so
      the choice costs ``epsilon`` once, whatever the number of candidates: at 1,000
      validation records and epsilon 1, the pick is within 0.3 accuracy points of the best of
      31 candidates in expectation, where releasing all 31 scores leaves each a noise of about
      3.5 points. The untuned estimator is a candidate like any other: no margin protects it,
      and none discards a measured gain.
    - ``"repeat-and-select"`` (Liu & Talwar 2019; Papernot & Steinke 2022): a random number
      ``K`` of candidates (mean ``n_iter``, distribution ``n_iter_distribution``), each
      score released inside with Laplace noise, the best published with its released score;
      the untuned estimator is released beside them and kept unless beaten by the quantile of
      the difference of two noise draws at ``1 - 0.05 / mean``. Accounted with
      dp-accounting's ``RepeatAndSelectDpEvent`` (RDP). Its cost does not grow with the
      candidates either, but it is about three times one release's at the same noise: it is
      the mechanism for candidates whose *training* is itself randomized and private, when
      the fits should not be composed (``estimator_epsilon``).

    Before any score is computed, the search warns once when its budget cannot resolve one
    point (a hundredth of the score's range), saying what would: more validation records, a
    larger epsilon or fewer candidates (:func:`privtune.privacy.plan_budget`). A
    :class:`PrivateBOSearchCV` with ``publish="best"`` is this search.

    Privacy model (docs/privacy.md, "Private selection"): epsilon-DP (one-shot) or
    (epsilon, delta)-DP (repeat-and-select) of what the search publishes, under the privacy
    unit chosen: the whole score, or each validation record of one hold-out split
    (``privacy_unit="record"``, where it pays). The candidates' fits see only the training
    records, which the record unit does not protect unless the estimator is differentially
    private itself (``estimator_epsilon``).

    Parameters
    ----------
    estimator : estimator object
        The estimator to tune.
    space : mapping or list of mappings
        Parameter names to search dimensions, or a list of such mappings (as
        :class:`PrivateBOSearchCV`'s).
    epsilon : float, optional
        One-shot: the whole publication's epsilon (the choice's, and the score's share of
        it). Repeat-and-select: each candidate's epsilon; the publication then costs
        :func:`privtune.privacy.selection_epsilon` at delta 1e-6.
    privacy_budget : tuple of float, optional
        ``(epsilon, delta)`` of the whole publication instead (one-shot is pure epsilon-DP
        and spends ``epsilon``; repeat-and-select needs ``delta > 0`` and gives each
        candidate :func:`privtune.privacy.selection_per_candidate_epsilon`). One of
        ``epsilon`` and ``privacy_budget`` is required.
    mechanism : {"permute-and-flip", "exponential", "repeat-and-select"}, \
default="permute-and-flip"
        How the pick is chosen (above).
    n_iter : int, default=50
        One-shot: the number of candidates drawn from the space (the untuned estimator
        aside). Repeat-and-select: the mean number of candidates.
    n_iter_distribution : {"geometric", "logarithmic", "poisson"} or float, default="geometric"
        Repeat-and-select only: the distribution of ``K`` (see :class:`PrivateBOSearchCV`).
    score_share : float, default=0.0
        One-shot only: the share of the budget spent on publishing the pick's score (a
        Laplace release of the unit's sensitivity) as ``best_score_``; with 0 no score is
        published and ``best_score_`` is NaN.
    candidates : list of dict, optional
        One-shot only: the candidates to choose among (beside the untuned estimator), instead
        of ``n_iter`` draws from the space. They must be fixed without the validation
        records (chosen in advance, or proposed from records the unit does not protect, as
        :class:`PrivateBOSearchCV` does with ``publish="best"``); ``space`` still names the
        parameters of ``cv_results_``.
    untuned_head_start : float, default=0.0
        One-shot only: the untuned estimator's head start ``h`` in the choice, in units of the
        noise's scale times ``ln k`` (:func:`privtune.privacy.oneshot.untuned_head_start`):
        for the exponential mechanism a prior weight ``k^h`` against each other candidate's
        1, fixed before the data are read, so the guarantee is unchanged; it shrinks as
        ``n_val epsilon`` grows. With 0 (the default) the untuned estimator is a candidate like
        the others. Measured over random candidates (benchmarks page, "Privacy units"): with 0
        the pick fell below the untuned estimator beyond noise in 9 of 342 cells whose budget
        resolves one point (7 of them random forests; by at most 0.6 points) and in 150 of
        282 where it does not (the search warns there); ``h = 1.5`` kept it above in all but
        9 cells, at the cost of part of the gain at small budgets.
    value_range : tuple of float, optional
        The range ``(lo, hi)`` of the optimized score (or, under the record unit, of each
        record's value), where the scoring's is not known.
    batch_size : int, optional
        Candidates evaluated per round (default: enough to keep the ``n_jobs`` workers busy).
    scoring, cv, n_jobs, refit, error_score, pre_dispatch
        As in :class:`~sklearn.model_selection.GridSearchCV`.
    random_state : int, RandomState instance or None, default=None
        Seed of the candidates (and of ``K``).
    noise_random_state : int, RandomState instance or None, default=None
        Seed of the noise, for reproducible experiments only.
    evaluate_default : bool, default=True
        The untuned estimator as candidate 0.
    verbose : int, default=0
        ``>= 1``: what the budget resolves, then one line per round, counts only (no score
        is shown before the pick).
    return_train_score : bool, default=False
        Must stay ``False``: train scores would be raw.
    privacy_unit : {"score", "record"}, default="score"
        Whom the publication protects (as :class:`PrivateBOSearchCV`'s).
    validation_fraction : float, default=0.2
        The hold-out fraction under the record unit with ``cv=None``.
    estimator_epsilon : float, tuple of float or "auto", optional
        As :class:`PrivateBOSearchCV`'s: ``"auto"`` protects every record by
        ``privacy_budget`` with a selection among privately trained models (``mechanism``
        does not apply; ``n_iter_distribution`` does), a number states each fit's guarantee.

    Attributes
    ----------
    cv_results_ : dict
        The pick's one row: its parameters, times, published score (NaN when none is) and the
        publication's epsilon.
    best_params_, best_score_, best_index_, best_estimator_, n_splits_, refit_time_
        As in scikit-learn's searches (``best_index_`` is 0).
    n_candidates_ : int
        The candidates drawn from the space (``K`` for repeat-and-select; independent of the
        data).
    epsilon_ : float
        The choice's epsilon (one-shot) or each candidate's (repeat-and-select).
    privacy_report_ : dict
        ``release``, ``mechanism``, ``n_candidates``, ``baseline``, ``epsilon`` and ``delta``
        (the publication's guarantee), ``accountant``, ``privacy_unit``, ``protects``; one-shot
        adds ``epsilon_choice``, ``epsilon_score``, ``sampler`` and ``resolves`` (the pick's
        expected shortfall against the best candidate at the worst common margin, in score
        units); repeat-and-select ``distribution``, ``mean_candidates`` and
        ``epsilon_per_candidate``.

    See Also
    --------
    PrivateBOSearchCV : Every candidate's score released, the candidates proposed by a model.
    privtune.privacy.oneshot.one_shot_choice : The one-shot choice for any scores.
    privtune.privacy.private_selection : Repeat-and-select for any scoring function.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from privtune import PrivateSelectionSearchCV
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> search = PrivateSelectionSearchCV(
    ...     LogisticRegression(max_iter=200),
    ...     {"C": (1e-3, 1e2, "log-uniform")},
    ...     privacy_budget=(1.0, 1e-6),
    ...     privacy_unit="record",
    ...     n_iter=10,
    ...     random_state=0,
    ... ).fit(X, y)
    >>> len(search.cv_results_["params"]), search.privacy_report_["epsilon"] <= 1.0
    (1, True)
    """

    _parameter_constraints: ClassVar[dict] = {
        **_PrivateSearchCV._parameter_constraints,
        "mechanism": [StrOptions({*ONE_SHOT, "repeat-and-select"})],
        "n_iter_distribution": [
            StrOptions(set(SHAPES)),
            Interval(numbers.Real, 0, None, closed="neither"),
        ],
        "score_share": [Interval(numbers.Real, 0, 1, closed="left")],
        "candidates": [list, None],
        "untuned_head_start": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        estimator,
        space,
        *,
        epsilon: float | None = None,
        privacy_budget: tuple[float, float] | None = None,
        mechanism: str = DEFAULT_MECHANISM,
        n_iter: int = 50,
        n_iter_distribution: str | float = "geometric",
        score_share: float = 0.0,
        candidates: list[dict] | None = None,
        untuned_head_start: float = UNTUNED_HEAD_START,
        value_range=None,
        batch_size: int | None = None,
        scoring=None,
        cv=None,
        n_jobs: int | None = None,
        refit=True,
        random_state=None,
        noise_random_state=None,
        evaluate_default: bool = True,
        verbose: int = 0,
        error_score=np.nan,
        return_train_score: bool = False,
        pre_dispatch="2*n_jobs",
        privacy_unit: str = "score",
        validation_fraction: float = 0.2,
        estimator_epsilon: float | tuple[float, float] | None = None,
    ) -> None:
        super().__init__(
            estimator=estimator,
            scoring=scoring,
            n_jobs=n_jobs,
            refit=refit,
            cv=cv,
            verbose=verbose,
            pre_dispatch=pre_dispatch,
            error_score=error_score,
            return_train_score=return_train_score,
        )
        self.space = space
        self.epsilon = epsilon
        self.privacy_budget = privacy_budget
        self.mechanism = mechanism
        self.n_iter = n_iter
        self.n_iter_distribution = n_iter_distribution
        self.score_share = score_share
        self.candidates = candidates
        self.untuned_head_start = untuned_head_start
        self.value_range = value_range
        self.batch_size = batch_size
        self.random_state = random_state
        self.noise_random_state = noise_random_state
        self.evaluate_default = evaluate_default
        self.privacy_unit = privacy_unit
        self.validation_fraction = validation_fraction
        self.estimator_epsilon = estimator_epsilon

    @property
    def _choice(self) -> _ChoiceSettings:
        return _ChoiceSettings(
            self.mechanism, self.n_iter_distribution, self.score_share, self.untuned_head_start
        )

    def _fixed_candidates(self) -> list[dict] | None:
        """``candidates``, checked: dicts of the estimator's parameters (none at all only
        beside the untuned estimator, which is then the one candidate)."""
        if self.candidates is None:
            return None
        fixed = list(self.candidates)
        if (not fixed and not self.evaluate_default) or not all(
            isinstance(c, Mapping) for c in fixed
        ):
            raise ValueError(
                "candidates must be a list of dicts of the estimator's parameters, fixed before "
                "the validation records are read (empty only with evaluate_default=True: the "
                "untuned estimator alone)."
            )
        for c in fixed:
            check_space_params(self.estimator, c)
        return [dict(c) for c in fixed]


def propose_candidates(
    search: PrivateBOSearchCV,
    scoring: str | RecordMetric,
    X: Any,
    y: Any,
    groups: Any,
    train: np.ndarray,
) -> Proposals:
    """The configurations ``search``'s algorithm proposes when it tunes with exact scores on
    the training records ``train`` alone, with their 3-fold cross-validated scores there
    (:func:`privtune.record_choice.proposals`: in order, repeats dropped, the untuned estimator
    apart when ``evaluate_default``).

    The search's own batch optimization (:class:`~privtune.batch.BatchOptimization`: its
    algorithm, seed, start-up, batch size and untuned estimator) run by
    :func:`privtune.records.training_proposals` over the training records. Nothing here reads
    a validation record: under the record unit these candidates and scores are fixed before
    the validation records are, as a one-shot choice needs."""
    from sklearn.utils import _safe_indexing

    metric = record_metric(scoring, search.estimator) if isinstance(scoring, str) else scoring
    space = as_space(search.space)
    n_iter = int(search.n_iter) + int(search.evaluate_default)  # the untuned is one of them
    own = search.estimator.get_params(deep=True)
    bo = BatchOptimization.start(
        TuningEngine(
            search.algorithm,
            epsilon=None,
            optimizer_kwargs=search.optimizer_kwargs,
            n_startup=search.n_initial_points,
            budget=n_iter,
            heavy_tailed=search.heavy_tailed,
        ),
        space,
        seed=_int_seed(search.random_state),
        noise_seed=None,
        default_params={n: own[n] for n in space.names} if search.evaluate_default else None,
    )
    q = search.batch_size or math.ceil(effective_n_jobs(search.n_jobs) / TRAINING_FOLDS)
    return training_proposals(
        bo,
        search.estimator,
        metric,
        _safe_indexing(X, train),
        _safe_indexing(y, train),
        None if groups is None else _safe_indexing(groups, train),
        n_iter=n_iter,
        batch_size=int(q),
        n_jobs=search.n_jobs,
        pre_dispatch=search.pre_dispatch,
        error_score=search.error_score,
        untuned=own if search.evaluate_default else None,
    )


def _propose(search: PrivateBOSearchCV, X: Any, y: Any, params: dict) -> Shortlist | None:
    """``publish="best"``'s first stage: under the record unit, the candidates proposed on
    the training records and shortlisted against the untuned estimator there (free under
    this unit), one line per stage with ``verbose``; ``None`` when they are drawn from the
    space instead, which only the default algorithm or ``"random"`` do."""
    f = search._fit
    proposes = f.record is not None and search.algorithm != "random"
    if proposes and search.estimator_epsilon is not None:
        if search.algorithm != "auto":
            raise ValueError(
                "With estimator_epsilon every record is protected, the training records "
                f"too, so algorithm={search.algorithm!r} cannot propose the candidates from "
                "them: pass algorithm='auto' or 'random' (candidates drawn before any record "
                "is read)."
            )
        proposes = False
    if not proposes and search.algorithm not in ("auto", "random"):
        raise ValueError(
            f"publish='best' draws its candidates at random (private selection), so "
            f"algorithm={search.algorithm!r} does not apply: an adaptive algorithm learns "
            "from every score, which must then be released (publish='scores')."
        )
    if not proposes:
        return None
    if set(params) - {"groups"}:
        raise ValueError(
            f"fit parameters {sorted(set(params) - {'groups'})} are not available with "
            "publish='best' and proposed candidates; only groups is."
        )
    assert f.record is not None and f.metric is not None
    train, name, n_iter = f.record[0][0], type(search).__name__, int(search.n_iter)
    if f.verbose > 0:  # one line per stage: the proposals take most of the time
        print(
            f"[{name}] 1/2: proposing {n_iter} candidates by Bayesian optimization on "
            f"the {len(train)} training records (3-fold cross-validation; the record unit "
            "does not protect them)...",
            flush=True,
        )
    short = shortlist(propose_candidates(search, f.metric, X, y, params.get("groups"), train))
    if f.verbose > 0:
        repeats = n_iter - short.n_proposed
        print(
            f"[{name}] {short.n_proposed} distinct candidates proposed"
            + (
                f" ({repeats} of the n_iter={n_iter} evaluations repeated a configuration)"
                if repeats
                else ""
            )
            + f", {short.n_candidates} of them scoring at least the untuned estimator there",
            flush=True,
        )
        print(f"[{name}] 2/2: the private choice on the validation records", flush=True)
    return short


def _warn_untuned_failed() -> None:
    """Warn that the untuned estimator is no candidate of the pick (its fits failed)."""
    warnings.warn(
        "The untuned estimator could not be evaluated (its fits failed or its score is not "
        "finite), so it is not a candidate of the pick; with privacy the fits' errors are "
        "withheld: evaluate it without epsilon to see why.",
        UserWarning,
        stacklevel=5,
    )


def _warn_all_fits_failed(size: int, private: bool, error: BaseException | None) -> None:
    """Warn that every fit of a round's ``size`` candidates failed, quoting ``error`` (the
    last failure) unless ``private`` withholds it."""
    detail = (
        " (the errors are withheld with epsilon; rerun one candidate without it)"
        if private
        else f":{error}"
    )
    warnings.warn(
        f"All fits of {size} candidate(s) failed; they are not in cv_results_ and count "
        f"as the lowest score of the range for the optimizer{detail}",
        FitFailedWarning,
        stacklevel=5,
    )


def _metrics(results: dict) -> list[str]:
    return [k[len("mean_test_") :] for k in results if k.startswith("mean_test_")]


def _rank(values: np.ndarray) -> np.ndarray:
    """Rank 1 for the best value; non-finite values tie with the worst (as scikit-learn)."""
    if not np.any(np.isfinite(values)):
        return np.ones(values.shape, dtype=np.int32)
    filled = np.where(np.isfinite(values), values, np.nanmin(values[np.isfinite(values)]) - 1)
    return rankdata(-filled, method="min").astype(np.int32)


def _int_seed(random_state) -> int | None:
    """An integer seed from a scikit-learn ``random_state`` (``None`` stays ``None``)."""
    if random_state is None:
        return None
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _begin(ctx, estimator, **kwargs):
    """A callback subcontext of ``ctx`` begun for ``estimator`` (``None`` without ``ctx``)."""
    if ctx is None:
        return None
    return ctx.subcontext(**kwargs).call_on_fit_task_begin(estimator=estimator)


def _end(ctx, estimator) -> None:
    if ctx is not None:
        ctx.call_on_fit_task_end(estimator=estimator)


def _drop_fitted(search) -> None:
    """Remove every fitted attribute (public, ending with an underscore)."""
    for name in [k for k in vars(search) if k.endswith("_") and not k.startswith("_")]:
        del search.__dict__[name]
