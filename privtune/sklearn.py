"""scikit-learn adapter: :class:`PrivateBOSearchCV`, a Bayesian search over a model's parameters.

The estimator is thin: scikit-learn's :class:`~sklearn.model_selection.
BaseSearchCV` runs the cross-validation (joblib, any backend) and the refit;
:mod:`privtune.space` maps the search space to the unit cube, :mod:`privtune.tuning` builds the
optimizer and scales the scores, and :mod:`privtune.privacy` privatizes them. What is
scikit-learn-specific lives here: the search loop (``_run_search``), the privatized
``cv_results_`` and the choice of the best candidate.

Privacy model (docs/privacy.md, row "epsilon-LDP on scores"): with ``epsilon`` set, each
candidate's mean cross-validated score is released once, as ``clip(score, lo, hi) +
Laplace((hi - lo) / epsilon)``, inside ``fit`` (the data owner's process). The optimizer,
``cv_results_``, ``best_score_``, the verbose output, the warnings and the error messages only
ever see released values (the fits' own warnings are silenced, and errors raised once scoring
has begun lose their message and traceback).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from joblib import effective_n_jobs
from scipy.stats import rankdata
from sklearn.base import is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit, check_cv
from sklearn.model_selection._search import BaseSearchCV
from sklearn.model_selection._split import _yields_constant_splits
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .privacy import (
    BudgetMeter,
    PrivacyBudget,
    PrivacyError,
    PrivacyLedger,
)
from .privacy.errors import check_budget_pair
from .privacy.errors import check_value_range as _check_value_range
from .privacy.noise import check_seedable
from .privacy.release import ScoreRelease
from .privacy.seeds import draw_seed, stream_seed
from .privacy.selection import (
    SHAPES,
    RepeatDistribution,
    Selector,
    selection_epsilon,
    selection_per_candidate_epsilon,
)
from .privacy.units import UNITS, PrivacyUnit
from .privacy.withhold import clean, release
from .records import RecordMetric, record_metric
from .registry import REGISTRY, PrivacyModel
from .scores import check_space_params, known_score_range
from .space import SearchSpace
from .tuning import TuningEngine, model_epsilon, warn_repeated_plays

__all__ = ["PrivateBOSearchCV", "known_score_range"]

#: ``cv_results_`` keys that hold no score and are kept as scikit-learn computes them.
_TIMES = ("mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time")


class PrivateBOSearchCV(BaseSearchCV):
    """Bayesian search over an estimator's parameters, optionally on LDP scores.

    Each round, the optimizer proposes ``batch_size`` candidates (the ones in flight are pending
    points, so a batch spreads out), scikit-learn's machinery cross-validates them in parallel,
    and the candidates' mean test scores are told to the optimizer. ``n_iter`` candidates are
    evaluated in all; MoMA-GP-UCB (the default) evaluates each configuration ``k = 3`` times,
    which only pays off when the scores are noisy (privacy on).

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
    it with posterior probability :data:`~privtune.acquisition.BASELINE_LEVEL` (0.95);
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
    space : mapping
        Parameter names (``clf__C`` for a step of a pipeline) to search dimensions: anything
        :class:`privtune.space.SearchSpace` accepts (``Real``, ``Integer``, ``Categorical``,
        Optuna distributions, a list of choices, ``(low, high)``, ``(low, high,
        "log-uniform")``).
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
        algorithms only (not ``"qff-ldp"``). With ``release="best"``, the whole publication's
        ``(epsilon, delta)``, ``delta > 0``.
    release : {"scores", "best"}, default="scores"
        What the search publishes with privacy. ``"scores"``: every candidate's score, released
        with Laplace noise (per-score LDP, for a tuner or an audience that sees every score).
        ``"best"``: private selection (Liu & Talwar 2019; Papernot & Steinke 2022): a random
        number ``K`` of candidates drawn uniformly from the space (mean ``n_iter``, distribution
        ``n_iter_distribution``), each score released with Laplace noise inside the search,
        and only the candidate with the best released score published, with that score:
        ``cv_results_`` has one row, ``best_score_`` is the pick's released score (biased up,
        being the maximum of noisy values). Accounted with dp-accounting's
        ``RepeatAndSelectDpEvent`` (RDP): far cheaper than releasing every score, for the case
        where the search runs next to the data and only the pick leaves it. ``algorithm``
        must be ``"auto"`` or ``"random"``; the untuned estimator is released beside the random
        candidates (``evaluate_default``). See docs/privacy.md, "Private selection".
    n_iter_distribution : {"geometric", "logarithmic", "poisson"} or float, default="geometric"
        With ``release="best"``, the distribution of ``K``; a float is the shape of a
        truncated negative binomial (:mod:`privtune.privacy.selection`). ``K`` is not bounded:
        for ``n_iter`` from 10 to 100, ``"geometric"`` draws at most ``n_iter / 5``
        candidates about one run in five and more than ``4 n_iter`` about one in fifty;
        ``"logarithmic"`` (cheaper in epsilon) draws at most ``n_iter / 5`` in 40 to 55 % of
        runs and more than ``4 n_iter`` in 5 to 7 %.
    value_range : tuple of float or dict, optional
        The range ``(lo, hi)`` of the optimized score. Needed with ``epsilon`` unless the
        scoring's range is known (accuracy, AUC, F1, precision, recall, ...: see
        :func:`known_score_range`). With several metrics, a dict ``{metric: (lo, hi)}``: with
        privacy, the optimized metric is always reported and any other metric is reported only
        if it has an entry here, since each extra metric costs ``epsilon`` per candidate.
    n_iter : int, default=50
        Number of candidates to evaluate (each one cross-validation, and one privacy report
        per reported metric); with ``release="best"``, their mean number.
    batch_size : int, optional
        Candidates proposed per round. Default: enough to keep the ``n_jobs`` workers busy,
        ``ceil(n_jobs / n_splits)`` (1 with ``n_jobs=None``). Smaller batches give the model
        more to learn from between proposals.
    n_initial_points : int, default=10
        Candidates drawn uniformly before the acquisition is used (MoMA's repeated plays of a
        configuration count, as in :class:`privtune.PrivateGPUCBSampler`).
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
    evaluate_default : bool, default=True
        Evaluate the untuned estimator (its own values of the space's parameters) first, so
        that it is among the candidates the pick is chosen from and tuning never loses it;
        with privacy it is also the baseline of the pick, kept unless a candidate beats it with
        posterior probability 0.95. When its values lie in the space it is one of the
        ``n_iter`` candidates and the model learns from it; when they do not (a ``None``, a
        value outside a range or off a step grid), it is evaluated all the same as an arm
        outside the cube, which the model is not told, and compared through its released
        score and the curator's known noise. With ``release="best"`` it is released beside
        the ``K`` random candidates (one more report in the accounting) and kept unless the
        best candidate's released score exceeds its own by the 95 % quantile of the
        difference of two noise draws.
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

    Attributes
    ----------
    cv_results_ : dict of numpy (masked) ndarrays
        One entry per candidate, in evaluation order, as in scikit-learn's searches; with
        privacy, the released scores only (see above), ``epsilon_test_<metric>`` and
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
        With ``release="best"``: the number of candidates drawn (independent of the data).
    privacy_report_ : dict
        With privacy: ``n_reports``, ``epsilon_per_report``, ``composed_epsilon_basic``,
        ``composed_epsilon_advanced`` and ``composed_epsilon_pld`` (at ``delta``: 1e-6, or the
        budget's) and ``metrics`` (the reported ones); with ``privacy_budget`` also
        ``budget_epsilon``, ``budget_delta``, ``planned_reports``, ``released_reports``,
        ``remaining_reports`` and ``spent_epsilon`` (:meth:`privtune.privacy.PrivacyBudget.report`).
        With ``release="best"``: ``release``, ``distribution``, ``mean_candidates``,
        ``n_candidates``, ``epsilon_per_candidate``, ``epsilon`` and ``delta`` (the
        publication's guarantee) and ``accountant``.
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
        **BaseSearchCV._parameter_constraints,
        "estimator": [HasMethods(["fit"])],
        "space": [Mapping],
        "algorithm": [StrOptions({"auto", *REGISTRY})],
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "privacy_budget": [tuple, list, None],
        "release": [StrOptions({"scores", "best"})],
        "n_iter_distribution": [
            StrOptions(set(SHAPES)),
            Interval(numbers.Real, 0, None, closed="neither"),
        ],
        "value_range": [tuple, list, dict, None],
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_initial_points": [Interval(numbers.Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
        "noise_random_state": ["random_state"],
        "optimizer_kwargs": [dict, None],
        "evaluate_default": ["boolean"],
        "privacy_unit": [StrOptions(set(UNITS))],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
    }

    def __init__(
        self,
        estimator,
        space,
        *,
        algorithm: str = "auto",
        epsilon: float | None = None,
        privacy_budget: tuple[float, float] | None = None,
        release: str = "scores",
        n_iter_distribution: str | float = "geometric",
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
        evaluate_default: bool = True,
        verbose: int = 0,
        error_score=np.nan,
        return_train_score: bool = False,
        pre_dispatch="2*n_jobs",
        privacy_unit: str = "score",
        validation_fraction: float = 0.2,
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
        self.release = release
        self.n_iter_distribution = n_iter_distribution
        self.value_range = value_range
        self.n_iter = n_iter
        self.batch_size = batch_size
        self.n_initial_points = n_initial_points
        self.random_state = random_state
        self.noise_random_state = noise_random_state
        self.optimizer_kwargs = optimizer_kwargs
        self.evaluate_default = evaluate_default
        self.privacy_unit = privacy_unit
        self.validation_fraction = validation_fraction

    # -- fit ---------------------------------------------------------------------------------
    def fit(self, X, y=None, **params):
        """Run the search: ``n_iter`` candidates, then the refit.

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
        self._validate_params()
        verbose, scoring, cv = self.verbose, self.scoring, self.cv
        withheld: BaseException | None = None
        try:
            self._start(X, y, params)
            if self._record is not None:
                # scikit-learn's machinery scores the hold-out split with privtune's metric
                self.scoring, self.cv = self._record
            self._verbose = verbose  # privtune's line per round from 1
            # scikit-learn's own messages one level later; above 2 they print each fold's
            # (raw) score, so with privacy they stop at 2
            self.verbose = max(verbose - 1, 0)
            if self._private:
                self.verbose = min(self.verbose, 2)
            super().fit(X, y, **params)
        except BaseException as exc:
            self._stopped(exc)
            if not self._private or not self._scoring_started:
                raise
            # scikit-learn's messages (a scorer's return value) and the frames of its fit
            # (every fold's score) may hold raw scores: raise a bare exception, outside this
            # block so that it has neither context nor those frames. privtune's own errors
            # keep their message.
            withheld = release(exc)
        else:
            if self._private:
                self.privacy_report_ = self._privacy_report()
                if (
                    self._selection is None
                    and not callable(self.refit)
                    and hasattr(self, "best_index_")
                ):
                    posterior = self.cv_results_[f"posterior_mean_test_{self._metric}"]
                    self.best_score_ = float(posterior[self.best_index_])
        finally:
            self.verbose, self.scoring, self.cv = verbose, scoring, cv
            for name in self._FIT_STATE:
                self.__dict__.pop(name, None)
        if withheld is not None:
            raise withheld
        return self

    #: State of one ``fit``, dropped when it ends (it holds locks and raw-score machinery).
    _FIT_STATE = (
        "_scoring_started",
        "_verbose",
        "_default_u",
        "_default_params",
        "_space",
        "_ranges",
        "_metric",
        "_reported",
        "_released",
        "_ledger",
        "_budget",
        "_meter",
        "_selection",
        "_selector",
        "_offered",
        "_releases",
        "_noise_seed",
        "_record",
        "_unit",
        "_qff_noise_seed",
        "_engine",
        "_history",
        "_seed",
        "_last_failure",
        "_warned_nonfinite",
        "_n_nonfinite",
        "_recommended",
        "_last_results",
    )

    def __getstate__(self) -> dict:
        # scikit-learn sends the search to its parallel workers while it fits (callbacks); the
        # state of the fit (locks, the curator, released values) stays in this process.
        state = dict(super().__getstate__())  # a copy: it may be this object's own __dict__
        for name in self._FIT_STATE:
            state.pop(name, None)
        return state

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "cv_results_")

    def _start(self, X, y, params) -> None:
        """Validate what the parameter constraints cannot, and reset the state of one fit."""
        self._scoring_started = False
        _drop_fitted(self)
        check_seedable("noise_random_state", self.noise_random_state)
        self._noise_seed = _int_seed(self.noise_random_state)
        self._record = self._record_setup(X, y, params) if self._private else None
        if self._record is not None:
            metric, split = self._record
            self._unit = PrivacyUnit.record(len(split[0][1]))
            self._ranges: dict[str | None, tuple[float, float]] = {None: metric.value_range}
        else:
            self._unit = PrivacyUnit.score()
            self._ranges = self._declared_ranges()
        self._selection = self._planned_selection()
        if self._selection is not None:
            self._budget = None
            self.epsilon_: float | None = self._selection[1]
        else:
            self._budget = self._planned_budget()
            budget = self._budget
            self.epsilon_ = self.epsilon if budget is None else budget.epsilon_per_report
        self._engine = TuningEngine(
            "random" if self._selection is not None else self.algorithm,
            epsilon=model_epsilon(self.epsilon_, self._unit),
            optimizer_kwargs=self.optimizer_kwargs,
            n_startup=self.n_initial_points,
            budget=self.n_iter,
        )
        self.algorithm_ = self._engine.algorithm
        warn_repeated_plays(self.algorithm_, self.epsilon_, stacklevel=4)
        self._space = SearchSpace(self.space)
        check_space_params(self.estimator, self._space.names)
        if self._budget is not None and self._engine.spec.curator != "laplace":
            raise ValueError(
                f"privacy_budget is available for the algorithms whose scores go through the "
                f"Laplace curator, not for algorithm={self.algorithm_!r}, whose Gaussian noise "
                "is set by (alpha, privacy_beta): pass epsilon (alpha) instead."
            )
        if self._private and not self._engine.spec.publishable:
            raise ValueError(
                "algorithm='qff-jdp' is not available in PrivateBOSearchCV: under joint DP the "
                "raw scores stay with a trusted privatizer, but a search publishes each "
                "candidate's score in cv_results_ and best_score_. Use algorithm='qff-ldp' "
                "(each score released with Gaussian noise, Dubey's local joint DP), or "
                "PrivateGPUCBSampler('qff-jdp', ...) with an Optuna storage you trust."
            )
        if self._private and self.return_train_score:
            raise ValueError(
                "return_train_score=True is not available with epsilon: train scores would be "
                "reported raw. Set return_train_score=False."
            )
        if self._private:
            self._refuse_callbacks()
        self._default_params = self._own_values() if self.evaluate_default else None
        self._default_u = None if self._default_params is None else self._default_point()
        self._metric: str | None = None
        self._reported: list[str] = []
        self._released: dict[str, list[float]] = {}
        self._ledger = PrivacyLedger()
        self._meter = None if self._budget is None else BudgetMeter(self._budget)
        self._releases: dict[str, ScoreRelease] = {}
        # The qff algorithms' own privacy noise: one seed per fit, kept by every rebuild.
        self._qff_noise_seed = None
        if self._engine.privacy == PrivacyModel.LOCAL_JDP:
            seed = self._noise_seed
            self._qff_noise_seed = draw_seed() if seed is None else stream_seed(seed, "fit")
        self._warned_nonfinite = 0
        self._n_nonfinite = (0, 0)
        self._recommended: int | None = None
        self._last_results: dict | None = None
        self._offered: list[tuple[dict, dict | None]] = []
        self._selector: Selector | None = None
        if self._selection is not None:
            self._selector = self._make_selector()
        metrics = self._expected_metrics()
        if metrics is not None:  # known before any fit: fail before spending compute
            self._setup_metrics(metrics)

    def _record_setup(self, X, y, params) -> tuple[RecordMetric, list] | None:
        """Under the record unit: privtune's metric and the one hold-out split it scores on
        (``None`` under the score unit). Checked before any fit."""
        if self.privacy_unit != "record":
            return None
        spec = REGISTRY.get(self.algorithm)
        if spec is not None and spec.curator != "laplace":
            raise ValueError(
                "privacy_unit='record' releases through the Laplace curator, not the "
                f"mechanism of algorithm={self.algorithm!r}."
            )
        if isinstance(self.value_range, dict):
            raise ValueError(
                "Under privacy_unit='record', value_range is the range (lo, hi) of each "
                "validation record's value of the one optimized metric, not a dict."
            )
        metric = record_metric(self.scoring, self.estimator, self.value_range)
        classifier = is_classifier(self.estimator)
        groups = params.get("groups")
        if self.cv is None:
            seed = _int_seed(self.random_state)
            holdout = StratifiedShuffleSplit if classifier else ShuffleSplit
            splitter = holdout(
                n_splits=1,
                test_size=self.validation_fraction,
                random_state=0 if seed is None else seed,
            )
        else:
            splitter = check_cv(self.cv, y, classifier=classifier)
            k = splitter.get_n_splits(X, y, groups)
            if k != 1:
                raise ValueError(
                    f"privacy_unit='record' needs one hold-out split; cv gives {k}. With K "
                    "folds each record trains K - 1 of the fold models, and its influence on "
                    "their scores is unbounded for an estimator that is not differentially "
                    "private. Pass cv=None (a hold-out of validation_fraction, stratified for "
                    "a classifier) or a splitter with one split, e.g. "
                    "ShuffleSplit(n_splits=1, test_size=0.2, random_state=0)."
                )
        train, test = next(iter(splitter.split(X, y, groups)))
        train, test = np.asarray(train), np.asarray(test)
        if len(test) == 0 or np.intersect1d(train, test).size:
            raise ValueError(
                "privacy_unit='record' needs a hold-out split whose validation records are "
                "not among the training ones, and at least one validation record."
            )
        return metric, [(train, test)]

    def _own_values(self) -> dict[str, Any]:
        """The estimator's own values of the space's parameters (the untuned estimator)."""
        own = self.estimator.get_params(deep=True)
        return {name: own[name] for name in self._space.names}

    def _default_point(self) -> np.ndarray | None:
        """The estimator's own values of the space's parameters, encoded, if they lie in the
        space (each decodes to itself); ``None`` otherwise: the untuned estimator is then
        evaluated as an arm outside the cube, which the model is not told."""
        assert self._default_params is not None
        values = self._default_params
        try:
            u = self._space.to_unit(values)
        except (TypeError, ValueError):
            return None
        decoded = self._space.from_unit(u)
        for name, value in values.items():
            back = decoded[name]
            numeric = isinstance(value, numbers.Real) and not isinstance(value, bool)
            if not (back == value or (numeric and math.isclose(back, value, rel_tol=1e-9))):
                return None  # e.g. a value off the parameter's step grid
        return u

    def _expected_metrics(self) -> list[str] | None:
        """The metric names ``cv_results_`` will have, ``None`` for a callable scoring."""
        scoring = self.scoring
        if scoring is None or isinstance(scoring, str):
            return ["score"]
        if isinstance(scoring, dict):
            return list(scoring)
        if isinstance(scoring, (list, tuple)):
            return [str(s) for s in scoring]
        return None

    def _refuse_callbacks(self) -> None:
        """With privacy, accept only progress bars, on the search and on the estimators in it.

        Other callbacks see the fitted models and data (ScoringMonitor logs raw scores).
        """
        try:
            from sklearn.callback import ProgressBar
        except ImportError:  # pragma: no cover - scikit-learn without callbacks
            return
        owners = [self, self.estimator, *self.estimator.get_params(deep=True).values()]
        for dim in self._space.values():  # estimators among a categorical's choices
            for choice in getattr(dim, "choices", ()):
                if hasattr(choice, "get_params"):
                    owners += [choice, *choice.get_params(deep=True).values()]
        for owner in owners:
            for callback in getattr(owner, "_skl_callbacks", None) or []:
                if not isinstance(callback, ProgressBar):
                    raise clean(
                        PrivacyError(
                            f"{type(callback).__name__} is set on {type(owner).__name__}; with "
                            "epsilon only sklearn.callback.ProgressBar is accepted, since other "
                            "callbacks can compute or log raw scores (ScoringMonitor does)."
                        )
                    )

    def _declared_ranges(self) -> dict[str | None, tuple[float, float]]:
        """``value_range`` as ``{metric: (lo, hi)}``; ``None`` stands for the optimized one."""
        vr = self.value_range
        if vr is None:
            return {}
        if isinstance(vr, dict):
            out: dict[str | None, tuple[float, float]] = {}
            for name, r in vr.items():
                if not isinstance(name, str):
                    raise ValueError(f"value_range keys must be metric names (str), got {name!r}.")
                out[name] = _range("value_range[" + repr(name) + "]", r)
            return out
        return {None: _range("value_range", vr)}

    def _range_of(self, metric: str, optimized: bool) -> tuple[float, float] | None:
        """The declared or known range of ``metric``."""
        if metric in self._ranges:
            return self._ranges[metric]
        if optimized and None in self._ranges:
            return self._ranges[None]
        scoring = self.scoring
        if metric == "score" and not isinstance(scoring, (list, tuple, dict)):
            return known_score_range(scoring, self.estimator)
        if isinstance(scoring, (list, tuple)):
            return known_score_range(metric)
        if isinstance(scoring, dict) and isinstance(scoring.get(metric), str):
            return known_score_range(scoring[metric])
        return None

    def _optimized_range(self) -> tuple[float, float]:
        """The range of the optimized metric (known once privacy's curators exist)."""
        assert self._metric is not None
        declared = self._range_of(self._metric, True)
        assert declared is not None
        return declared

    def _setup_metrics(self, metrics: list[str]) -> None:
        """On the first results: the optimized metric, the reported ones and their curators."""
        if metrics == ["score"]:
            metric = "score"
        elif isinstance(self.refit, str) and self.refit in metrics:
            metric = self.refit
        else:
            raise clean(
                ValueError(
                    "With several metrics, refit must name the metric to optimize (one of "
                    f"{metrics}); got refit={self.refit!r}."
                )
            )
        unknown = [m for m in self._ranges if m is not None and m not in metrics]
        if unknown:
            raise clean(
                ValueError(f"value_range names unknown metrics {unknown}; metrics: {metrics}.")
            )
        self._metric = metric
        self._engine.value_range = self._range_of(metric, True)  # fixes the reward scale
        if not self._private:
            return
        if self._range_of(metric, True) is None:
            raise clean(
                ValueError(
                    f"value_range is required with epsilon for scoring={self.scoring!r}: the range "
                    f"of {metric!r} is not known. Pass value_range=(lo, hi), the range the score "
                    "can take (not the one observed, which would leak)."
                )
            )
        self._reported = [metric] + [m for m in metrics if m != metric and m in self._ranges]
        if self._selection is not None:
            if len(self._reported) > 1:
                raise clean(
                    ValueError(
                        "release='best' publishes the pick's optimized score only; value_range "
                        f"names other metrics {self._reported[1:]}. Remove them, or use "
                        "release='scores'."
                    )
                )
            return
        planned = self._n_reported_planned()
        if self._budget is not None and len(self._reported) != planned:
            raise clean(
                PrivacyError(
                    f"privacy_budget was spread over {planned} reported metric(s) per candidate "
                    f"(the optimized one and those named in value_range), but the scoring "
                    f"reports {self._reported}. Name the metrics to report in value_range."
                )
            )
        for m in self._reported:
            rng = self._range_of(m, m == metric)
            assert rng is not None
            curator = self._engine.curator(
                rng, ledger=self._ledger, epsilon=self.epsilon_, unit=self._unit
            )
            assert curator is not None
            # one count over every reported metric
            self._releases[m] = ScoreRelease(
                curator, noise_seed=self._noise_seed, meter=self._meter
            )

    # -- the search --------------------------------------------------------------------------
    def _run_search(self, evaluate_candidates, *, callback_ctx=None):
        if self._selection is not None:
            return self._run_selection(evaluate_candidates, callback_ctx)
        n_iter, q = int(self.n_iter), self._batch_size()
        n_rounds = math.ceil(n_iter / q)
        self._warn_if_splits_change()
        seed = _int_seed(self.random_state)
        self._seed = draw_seed() if seed is None else seed
        self._history = _History(self._space.dim)
        self._last_failure: ValueError | None = None
        search_ctx = _begin(callback_ctx, self, task_name="search", max_subtasks=n_rounds)
        results = None
        outside = self._default_params is not None and self._default_u is None
        for r in range(n_rounds):
            size = min(q, n_iter - r * q)
            extra = [self._default_params] if outside and r == 0 else []
            U = self._propose(r * q, size - len(extra))
            round_ctx = _begin(
                search_ctx,
                self,
                task_name="round",
                max_subtasks=size * self.n_splits_,
                sequential_subtasks=False,
            )
            self._scoring_started = True
            batch = self._evaluate(evaluate_candidates, U, round_ctx, extra)
            results = results if batch is None else batch
            _end(round_ctx, self)
            if self._verbose > 0:
                self._print_round(r + 1, n_rounds, r * q + size, results)
        if results is None:
            # Nothing was evaluated: scikit-learn's error, with the fits' errors (withheld by
            # fit with privacy).
            assert self._last_failure is not None
            raise self._last_failure
        if self._private and self._history.n_candidates_finite(results, self._metric):
            posterior, self._recommended = self._recommend(results)
            # reported within the score's range: a model's mean under heavy noise can leave it
            lo, hi = self._optimized_range()
            results[f"posterior_mean_test_{self._metric}"] = np.clip(posterior, lo, hi)
        _end(search_ctx, self)

    def _run_selection(self, evaluate_candidates, callback_ctx) -> None:
        """``release="best"``: ``K`` random candidates, each released inside, the best one
        published (:mod:`privtune.privacy.selection`)."""
        assert self._selection is not None
        dist, _, _ = self._selection
        rng = np.random.default_rng(_int_seed(self.random_state))
        k = dist.draw(rng)  # before any score: K does not depend on the data
        if k == 0:
            raise ValueError(
                f"n_iter_distribution={self.n_iter_distribution!r} drew 0 candidates: nothing "
                "was evaluated and nothing is published (K is drawn before any score, so this "
                "says nothing about the data). Fit again, or use a distribution with K >= 1."
            )
        self.n_candidates_ = k
        self._last_failure = None
        # the untuned estimator first (a baseline released beside the selection), then K draws
        candidates = [] if self._default_params is None else [self._default_params]
        candidates += [self._space.from_unit(u) for u in rng.random((k, self._space.dim))]
        q = self._batch_size()
        n_rounds = math.ceil(len(candidates) / q)
        self._warn_if_splits_change()
        search_ctx = _begin(callback_ctx, self, task_name="search", max_subtasks=n_rounds)
        self._scoring_started = True
        for r in range(n_rounds):
            batch = candidates[r * q : (r + 1) * q]
            round_ctx = _begin(
                search_ctx,
                self,
                task_name="round",
                max_subtasks=len(batch) * self.n_splits_,
                sequential_subtasks=False,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the fits' warnings may quote scores
                try:
                    self._last_results = evaluate_candidates(batch, callback_ctx=round_ctx)
                except ValueError as exc:
                    if not self._all_fits_failed(exc, len(batch)):
                        raise
                    # no row in scikit-learn's results: each failed candidate counts as the
                    # worst end of the range, released inside like any other
                    self._last_failure = exc
                    for params in batch:
                        self._offer(params, math.nan, None)
            _end(round_ctx, self)
            if self._verbose > 0:
                print(
                    f"[{type(self).__name__}] round {r + 1}/{n_rounds}: "
                    f"{min((r + 1) * q, len(candidates))}/{len(candidates)} candidates "
                    "(release='best': no score is shown "
                    "before the pick)",
                    flush=True,
                )
        _end(search_ctx, self)
        if self._last_results is None:
            assert self._last_failure is not None
            raise self._last_failure  # every fit failed (withheld by fit with privacy)
        self._publish_pick(self._last_results)

    def _make_selector(self) -> Selector:
        """The inside of ``release="best"``, on the optimized metric's declared range."""
        assert self._selection is not None
        refit = self.refit
        metric = refit if isinstance(refit, str) else "score"
        declared = self._range_of(metric, True)
        if declared is None:
            raise ValueError(
                f"value_range is required with release='best' for scoring={self.scoring!r}: "
                f"the range of {metric!r} is not known. Pass value_range=(lo, hi), the range "
                "the score can take."
            )
        return Selector(self._selection[1], declared, noise_seed=self._noise_seed, unit=self._unit)

    def _offer(self, params: dict, raw_score: float, row: dict | None) -> None:
        """Release one candidate's score inside the selection (nothing leaves it)."""
        assert self._selector is not None
        if not self._offered and self._default_params is not None:
            self._selector.offer_baseline(raw_score)  # the untuned estimator, offered first
        else:
            self._selector.offer(raw_score)
        self._offered.append((params, row))

    def _select(self, raw: dict, n_candidates: int) -> dict:
        """``release="best"``: offer each new candidate to the selection; expose its
        parameters only."""
        n_rows = sum(row is not None for _, row in self._offered)
        for i in range(n_rows, n_candidates):
            row = {k: v[i] for k, v in raw.items() if k in _TIMES or k.startswith("param_")}
            self._offer(raw["params"][i], float(raw[f"mean_test_{self._metric}"][i]), row)
        return {"params": list(raw["params"])}

    def _publish_pick(self, results: dict) -> None:
        """Make ``results`` (the dict scikit-learn keeps as ``cv_results_``) the pick's one
        row: its parameters, times and released score."""
        assert self._selector is not None and self._selection is not None
        index, released = self._selector.best()
        assert index is not None
        # the baseline (-1) is the first offer; the candidates follow it
        params, row = self._offered[index + 1 if self._default_params is not None else index]
        results.clear()
        results["params"] = [params]
        for name in self._space.names:
            value = row[f"param_{name}"] if row is not None else params[name]
            results[f"param_{name}"] = np.ma.MaskedArray([value], mask=[False], dtype=object)
        for k in _TIMES:
            results[k] = np.array([row[k] if row is not None else math.nan])
        m = self._metric
        results[f"mean_test_{m}"] = np.array([released])
        results[f"rank_test_{m}"] = np.array([1], dtype=np.int32)
        results[f"epsilon_test_{m}"] = np.array([self._selection_report()["epsilon"]])

    def _batch_size(self) -> int:
        """``batch_size``, or enough candidates to keep the ``n_jobs`` workers busy."""
        if self.batch_size is not None:
            q = int(self.batch_size)
        else:
            q = max(1, math.ceil(effective_n_jobs(self.n_jobs) / self.n_splits_))
        self.batch_size_ = min(q, int(self.n_iter))
        return self.batch_size_

    def _warn_if_splits_change(self) -> None:
        if not _yields_constant_splits(self._checked_cv_orig):
            warnings.warn(
                "cv yields different splits at each call, so each round of the search scores "
                "its candidates on other folds. Pass an integer random_state to a shuffling "
                "splitter.",
                UserWarning,
                stacklevel=4,
            )

    def _synced(self):
        """The engine's optimizer told the history so far, and its reward scale."""
        h = self._history
        return self._engine.sync(
            "fit",
            self._space,
            list(range(len(h))),
            h.U,
            h.values,
            failed=~np.isfinite(h.values),  # a failure's penalty, told as an exact value
            seed=self._seed,
            noise_seed=self._qff_noise_seed,
        )

    def _propose(self, n_proposed: int, size: int) -> list[np.ndarray]:
        """The next ``size`` candidates; the untuned estimator is the first of the first
        round."""
        opt, _ = self._synced()
        first = n_proposed == 0
        U = [self._default_u] if first and self._default_u is not None else []
        for j in range(len(U), size):
            pending = np.array(U) if first and U else None  # asked ones are pending already
            key = [self._seed, n_proposed + j]
            U.append(self._engine.ask(opt, n_told=len(self._history) + j, key=key, pending=pending))
        return U

    def _evaluate(self, evaluate_candidates, U, round_ctx, extra=()) -> dict | None:
        """Cross-validate ``extra`` (parameters outside the cube: the untuned estimator when
        the space cannot encode it) and the candidates ``U``, and record them in the history;
        ``None`` when every fit of the batch failed (scikit-learn keeps no row for it)."""
        try:
            with warnings.catch_warnings():
                if self._private:
                    # Warnings of the fits and scorers (scikit-learn's "Scoring failed", a
                    # nested search's non-finite scores...) may quote scores: silenced, in the
                    # workers too (joblib passes the filters on).
                    warnings.simplefilter("ignore")
                results = evaluate_candidates(
                    [*extra, *(self._space.from_unit(u) for u in U)], callback_ctx=round_ctx
                )
        except ValueError as exc:
            if not self._all_fits_failed(exc, len(U) + len(extra)):
                raise
            self._last_failure = exc
            self._history.add_failed(U)
            self._warn_all_fits_failed(len(U) + len(extra), exc)
            return None
        self._warn_nonfinite()
        self._last_results = results
        scores = np.asarray(results[f"mean_test_{self._metric}"], dtype=float)
        n = len(scores)
        self._history.add(U, scores[n - len(U) :], range(n - len(U), n))
        if extra:
            self._history.outside = n - len(U) - 1
        return results

    def _recommend(self, results) -> tuple[np.ndarray, int]:
        """Every candidate's posterior mean (score units; NaN for a failed one) and the pick:
        the engine's recommendation among the candidates with a released score. The untuned
        estimator, evaluated first, is the baseline: it is kept unless a candidate beats it
        with posterior probability :data:`~privtune.acquisition.BASELINE_LEVEL`. Inside the
        cube it is the history's row 0; outside (values the space cannot encode) it is an arm
        the model was not told, whose value is its released score with the curator's noise."""
        h = self._history
        n_candidates = len(results["params"])
        released = np.asarray(results[f"mean_test_{self._metric}"], dtype=float)
        posterior = np.full(n_candidates, np.nan)
        rows = h.rows_in_results(n_candidates)
        eligible = np.zeros(len(h), dtype=bool)
        eligible[rows] = np.isfinite(released[h.candidate[rows]])  # a failure is not a pick
        outside = h.outside if h.outside is not None and np.isfinite(released[h.outside]) else None
        if outside is not None:
            posterior[outside] = released[outside]
        if not eligible.any():
            assert outside is not None
            return posterior, outside
        opt, scale = self._synced()
        posterior[h.candidate[eligible]] = self._engine.posterior_scores(opt, scale, h.U[eligible])
        if outside is not None:
            assert self._metric is not None
            release = self._releases[self._metric]
            row = self._engine.recommend_against(
                opt, scale, released[outside], release.curator.noise_variance, eligible=eligible
            )
            return posterior, outside if row < 0 else int(h.candidate[row])
        baseline = 0 if self._default_u is not None and eligible[0] else None
        row = self._engine.recommend(opt, baseline=baseline, eligible=eligible)
        return posterior, int(h.candidate[row])

    def _all_fits_failed(self, exc: ValueError, size: int) -> bool:
        """Whether ``exc`` is scikit-learn's error for a batch whose every fit failed."""
        n_fits = size * self.n_splits_
        return self.error_score != "raise" and str(exc).startswith(
            f"\nAll the {n_fits} fits failed."
        )

    def _warn_nonfinite(self) -> None:
        n, n_candidates = self._n_nonfinite
        if not self._private or n <= self._warned_nonfinite:
            return
        self._warned_nonfinite = n
        warnings.warn(
            f"{n} of {n_candidates} candidates have a non-finite mean test score (failed fits "
            "scored with error_score=nan, or a scorer returning NaN): they release nothing. "
            "With epsilon the fits' own warnings are silenced, since they may quote scores; "
            "rerun without epsilon, on data you may inspect, to see them.",
            UserWarning,
            stacklevel=4,
        )

    def _warn_all_fits_failed(self, size: int, exc: ValueError) -> None:
        detail = (
            " (the errors are withheld with epsilon; rerun one candidate without it)"
            if self._private
            else f":{exc}"
        )
        warnings.warn(
            f"All fits of {size} candidate(s) failed; they are not in cv_results_ and count "
            f"as the lowest score of the range for the optimizer{detail}",
            FitFailedWarning,
            stacklevel=4,
        )

    def _print_round(self, r: int, n_rounds: int, n_done: int, results: dict | None) -> None:
        """One line per round: without privacy the best mean test score so far; with privacy
        the posterior mean of the current pick (a model estimate from released scores, never
        the maximum of noisy values)."""
        value = self._history.best
        if self._private and self._history.n_candidates_finite(results, self._metric):
            posterior, pick = self._recommend(results)
            value = float(np.clip(posterior[pick], *self._optimized_range()))
        shown = f"{value:.4f}" if math.isfinite(value) else "none yet"
        if not self._private:
            what = f"best mean_test_{self._metric} so far: {shown}"
        else:
            what = f"current pick's posterior mean of {self._metric}: {shown}"
        print(
            f"[{type(self).__name__}] round {r}/{n_rounds}: {n_done}/{self.n_iter} candidates, "
            f"{what}",
            flush=True,
        )

    def _select_best_index(self, refit, refit_metric, results):
        if self._selection is not None and not callable(refit):
            return 0  # the published row is the pick
        if not self._private or callable(refit):
            return BaseSearchCV._select_best_index(refit, refit_metric, results)
        if self._recommended is None:
            raise clean(
                ValueError(
                    f"Every one of the {len(results['params'])} candidates has a non-finite "
                    f"mean test score ({self._metric}): there is nothing to select. Check the "
                    "scorer and error_score (failed fits score error_score)."
                )
            )
        return self._recommended

    # -- privatized results ------------------------------------------------------------------
    def _format_results(self, candidate_params, n_splits, out, more_results=None):
        first = self._metric is None  # a callable scoring: its metrics are known now
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
        if self._selection is not None:
            return self._select(raw, len(candidate_params))
        return self._privatize(raw, len(candidate_params))

    def _privatize(self, raw: dict, n_candidates: int) -> dict:
        """The results to expose: the released mean of each reported metric, no raw score.

        Each candidate's mean is released once, the first time it appears; later calls (one per
        round, over all candidates so far) reuse the released values.
        """
        results: dict[str, Any] = {
            k: v for k, v in raw.items() if k in _TIMES or k.startswith("param_") or k == "params"
        }
        n_nonfinite = 0
        for m in self._reported:
            released = self._released.setdefault(m, [])
            for i in range(len(released), n_candidates):
                score = float(raw[f"mean_test_{m}"][i])
                # every metric's report is about the same data: one owner, numbered in order
                value, _ = self._releases[m](score, owner="search", number=self._ledger.n_reports)
                released.append(value)
            values = np.asarray(released, dtype=float)
            results[f"mean_test_{m}"] = values
            results[f"rank_test_{m}"] = _rank(values)
            spent = np.where(np.isfinite(values), float(self.epsilon_ or 0.0), 0.0)
            results[f"epsilon_test_{m}"] = spent
            if m == self._metric:
                n_nonfinite = int(np.sum(~np.isfinite(values)))
        self._n_nonfinite = (n_nonfinite, n_candidates)  # warned by _run_search
        return results

    def _selection_report(self) -> dict[str, Any]:
        """What ``release="best"`` publishes costs (dp-accounting's RDP accountant)."""
        assert self._selection is not None
        dist, epsilon0, delta = self._selection
        epsilon = selection_epsilon(epsilon0, dist, delta, baseline=bool(self.evaluate_default))
        return {
            "release": "best",
            "distribution": self.n_iter_distribution,
            "mean_candidates": dist.mean,
            "n_candidates": getattr(self, "n_candidates_", None),
            "epsilon_per_candidate": epsilon0,
            "baseline": bool(self.evaluate_default),
            "epsilon": epsilon,
            "delta": delta,
            "accountant": "rdp",
            "privacy_unit": self._unit.kind,
            **({} if self._unit.n_val is None else {"n_val": self._unit.n_val}),
            "protects": self._unit.protects(epsilon, delta),
        }

    def _privacy_report(self) -> dict[str, Any]:
        if self._selection is not None:
            out = self._selection_report()
            if self.privacy_budget is not None:
                out["budget_epsilon"], out["budget_delta"] = self.privacy_budget
            return out
        delta = 1e-6 if self._budget is None else self._budget.delta
        out = self._engine.privacy_report(self._ledger, delta, self._unit)
        out["metrics"] = list(self._reported)
        if self._budget is not None:
            out.update(self._budget.report(self._ledger.n_reports))
        return out

    @property
    def _private(self) -> bool:
        """Whether the scores are privatized (``epsilon`` or ``privacy_budget`` set)."""
        return self.epsilon is not None or self.privacy_budget is not None

    def _n_reported_planned(self) -> int:
        """Reports per candidate: the optimized metric and every other one named in
        ``value_range``."""
        refit = self.refit
        metric = refit if isinstance(refit, str) else "score"
        return 1 + len({k for k in self._ranges if k is not None and k != metric})

    def _planned_selection(self) -> tuple[RepeatDistribution, float, float] | None:
        """``release="best"``: the distribution of the number of candidates, each one's
        epsilon and the delta the cost is stated at (``None`` with ``release="scores"``)."""
        if self.release != "best":
            return None
        if not self._private:
            raise ValueError(
                "release='best' is private selection: pass epsilon (each candidate's) or "
                "privacy_budget=(epsilon, delta) (the whole publication's)."
            )
        if self.algorithm not in ("auto", "random"):
            raise ValueError(
                f"release='best' draws its candidates at random (private selection), so "
                f"algorithm={self.algorithm!r} does not apply: an adaptive algorithm learns "
                "from every score, which must then be released (release='scores')."
            )
        if self.epsilon is not None and self.privacy_budget is not None:
            raise ValueError(
                "Pass epsilon (each candidate's) or privacy_budget (the whole publication's), "
                f"not both; got epsilon={self.epsilon!r} and "
                f"privacy_budget={self.privacy_budget!r}."
            )
        dist = RepeatDistribution(self.n_iter, self.n_iter_distribution)
        if self.privacy_budget is not None:
            total, delta = check_budget_pair(self.privacy_budget, delta_positive=True)
            eps0 = selection_per_candidate_epsilon(
                total, delta, dist, baseline=bool(self.evaluate_default)
            )
            return dist, eps0, delta
        assert self.epsilon is not None
        return dist, float(self.epsilon), 1e-6

    def _planned_budget(self) -> PrivacyBudget | None:
        """``privacy_budget`` over ``n_iter`` candidates' reports (``None`` without one)."""
        if self.privacy_budget is None:
            return None
        if self.epsilon is not None:
            raise ValueError(
                "Pass epsilon (each report's) or privacy_budget (the total over the search), "
                f"not both; got epsilon={self.epsilon!r} and "
                f"privacy_budget={self.privacy_budget!r}."
            )
        n_reports = int(self.n_iter) * self._n_reported_planned()
        return PrivacyBudget.from_arg(self.privacy_budget, n_reports, n_name="n_iter")

    def _stopped(self, exc: BaseException) -> None:
        """Leave a search stopped by ``exc`` visibly unfitted, keeping what was evaluated."""
        _drop_fitted(self)
        last = getattr(self, "_last_results", None)
        if last is None:
            return  # nothing was evaluated, nothing was spent
        self.interrupted_results_ = last
        spent = ""
        if self._private:
            self.privacy_report_ = self._privacy_report()
            spent = (
                f" They spent epsilon = {self.privacy_report_['composed_epsilon_basic']:g} "
                "(privacy_report_)."
            )
        warnings.warn(
            f"{type(self).__name__}.fit was stopped by {type(exc).__name__} after "
            f"{len(last['params'])} of {self.n_iter} candidates: the search is not fitted. The "
            f"results of the evaluated candidates are in interrupted_results_.{spent}",
            UserWarning,
            stacklevel=3,
        )


def _metrics(results: dict) -> list[str]:
    return [k[len("mean_test_") :] for k in results if k.startswith("mean_test_")]


def _rank(values: np.ndarray) -> np.ndarray:
    """Rank 1 for the best value; non-finite values tie with the worst (as scikit-learn)."""
    if not np.any(np.isfinite(values)):
        return np.ones(values.shape, dtype=np.int32)
    filled = np.where(np.isfinite(values), values, np.nanmin(values[np.isfinite(values)]) - 1)
    return rankdata(-filled, method="min").astype(np.int32)


def _range(name: str, value) -> tuple[float, float]:
    return _check_value_range(value, name)


def _int_seed(random_state) -> int | None:
    """An integer seed from a scikit-learn ``random_state`` (``None`` stays ``None``)."""
    if random_state is None:
        return None
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class _History:
    """What the optimizer is told, in order: one row per proposal.

    A proposal with a finite score is told its reward; a failed one (a NaN mean, or every fit
    failed) is told the lowest reward of the range (the engine's penalty), to steer the
    optimizer away.
    ``candidate`` maps rows to ``cv_results_`` rows (-1 for a batch that left no row).
    """

    def __init__(self, dim: int) -> None:
        self.U = np.zeros((0, dim))
        self.values = np.zeros(0)
        self.candidate = np.zeros(0, dtype=int)
        #: The ``cv_results_`` row of the untuned estimator when it lies outside the cube (an
        #: arm the optimizer is not told), else ``None``.
        self.outside: int | None = None

    def __len__(self) -> int:
        return len(self.values)

    def add(self, U, scores, candidates) -> None:
        if len(U) == 0:
            return
        self.U = np.vstack([self.U, np.asarray(U, dtype=float)])
        self.values = np.concatenate([self.values, np.asarray(scores, dtype=float)])
        self.candidate = np.concatenate([self.candidate, np.asarray(list(candidates), dtype=int)])

    def add_failed(self, U) -> None:
        self.add(U, np.full(len(U), np.nan), np.full(len(U), -1))

    @property
    def scores(self) -> np.ndarray:
        return self.values[np.isfinite(self.values)]

    @property
    def n_finite(self) -> int:
        return int(np.sum(np.isfinite(self.values)))

    @property
    def best(self) -> float:
        return float(self.scores.max()) if self.n_finite else -math.inf

    def n_candidates_finite(self, results: dict | None, metric: str | None) -> bool:
        """Whether some candidate, the arm outside the cube included, has a finite score."""
        if self.n_finite:
            return True
        if results is None or self.outside is None:
            return False
        return bool(np.isfinite(float(results[f"mean_test_{metric}"][self.outside])))

    def rows_in_results(self, n_candidates: int) -> np.ndarray:
        return np.flatnonzero((self.candidate >= 0) & (self.candidate < n_candidates))


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
