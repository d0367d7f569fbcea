"""Optuna adapter: :class:`PrivateGPUCBSampler`, a relative sampler over privtune's optimizers.

The sampler is thin: :mod:`privtune.space` maps the study's search space to the
unit cube, :mod:`privtune.tuning` builds the optimizer and scales the scores, and
:mod:`privtune.privacy` privatizes them. What is Optuna-specific lives here: reading trials from
the study, the privatized objective that tags its trials, and the checks that fail closed.

Privacy models (docs/privacy.md). "epsilon-LDP on scores" (every algorithm but the qff ones):
with ``epsilon`` set, the value that Optuna stores for a trial is
``clip(y, lo, hi) + Laplace((hi - lo) / epsilon)``, computed inside
:meth:`PrivateGPUCBSampler.privatize` in the process that ran the objective. The raw score never
reaches the storage, the sampler or a log line of privtune. "(alpha, beta)-local joint DP"
(``"qff-ldp"``): the same, with the Gaussian noise of Dubey's Lemma 5. "(alpha, beta)-joint DP"
(``"qff-jdp"``): the storage and the sampler's privatizer hold the raw scores (they are the
trusted privatizer); the model that proposes reads only the statistics the tree mechanism
releases, so the proposals, :meth:`PrivateGPUCBSampler.recommend` and the released statistics
are what is protected.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import intersection_search_space
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, Trial, TrialState

from ._checks import check_int, check_seed
from .optuna_privacy import StudyPrivacy
from .plan import STUDY, PrivacyPlan
from .privacy.noise import check_seedable
from .privacy.seeds import draw_seed
from .records import RecordObjective
from .space import SearchSpace
from .tuning import OutsideArm, TuningEngine, checked_optimizer_kwargs, warn_repeated_plays

__all__ = ["GOUCBSampler", "Pick", "PrivateGPUCBSampler"]

_logger = logging.getLogger(__name__)

#: The trial system attribute that says what made the sampler's proposal
#: (:attr:`privtune.optimizers.base.BaseOptimizer.turn`; ``"start-up"`` for the trials
#: before the model, drawn by ``independent_sampler`` or the optimizer).
ATTR_TURN = "privtune:turn"

# The wording of Optuna's own samplers for the same fallback.
_INDEPENDENT_SAMPLING_WARNING = (
    "The parameter `{param_name}` in Trial#{trial_number} is sampled independently using "
    "`{independent_sampler_name}` instead of `{sampler_name}`, potentially degrading the "
    "optimization performance. This fallback happened because {fallback_reason}. You can "
    "suppress this warning by setting `warn_independent_sampling` to `False` in the "
    "constructor of `{sampler_name}` if this independent sampling is intended behavior."
)


def _warn_independent_sampling(param_name: str, trial_number: int, independent, sampler) -> None:
    """Optuna's warning that a parameter of a dynamic search space is sampled independently."""
    _logger.warning(
        _INDEPENDENT_SAMPLING_WARNING.format(
            param_name=param_name,
            trial_number=trial_number,
            independent_sampler_name=type(independent).__name__,
            sampler_name=type(sampler).__name__,
            fallback_reason=(
                "the parameter is not in every completed trial with the same distribution "
                "(a dynamic search space)"
            ),
        )
    )


def _model_seed(seed: int | None) -> int:
    """The model's seed: derived from ``seed``, or fresh entropy without one."""
    if seed is not None:
        return int(np.random.SeedSequence(seed).generate_state(1)[0])
    return draw_seed()


def _baseline_row(
    baseline: int | None, trials: Sequence[FrozenTrial], completed: list[FrozenTrial]
) -> tuple[int | None, FrozenTrial | None]:
    """The row of trial number ``baseline`` among the ``completed`` trials the model is told, or
    the trial itself when the model leaves it out (a configuration outside the space)."""
    if baseline is None:
        return None, None
    rows = [i for i, t in enumerate(completed) if t.number == baseline]
    others = [t for t in trials if t.number == baseline and t not in completed]
    if isinstance(baseline, bool) or not (rows or others):
        raise ValueError(
            "baseline must be the number (FrozenTrial.number) of a completed trial "
            f"of this study; got {baseline!r}."
        )
    return (rows[0], None) if rows else (None, others[0])


def _set_turn(study: Study, trial: FrozenTrial, turn: str | None) -> None:
    """Store what made ``trial``'s proposal in its system attribute :data:`ATTR_TURN`."""
    study._storage.set_trial_system_attr(trial._trial_id, ATTR_TURN, turn)


def _single_objective(study: Study) -> None:
    if study._is_multi_objective():
        raise ValueError(
            "PrivateGPUCBSampler supports single-objective studies only; this study has "
            f"{len(study.directions)} objectives."
        )


def _params(
    trials: Sequence[FrozenTrial], search_space: dict[str, BaseDistribution]
) -> list[dict[str, Any]]:
    """The trials' parameters in ``search_space``, categorical values as its own choices.

    Optuna treats ``CategoricalDistribution((1, 2))`` and ``((1.0, 2.0))`` as equal, so a trial
    may hold ``2`` where the current distribution lists ``2.0``: the value is mapped through its
    index in the trial's own distribution.
    """
    out = []
    for t in trials:
        params = {}
        for n, d in search_space.items():
            v = t.params[n]
            if isinstance(d, CategoricalDistribution):
                v = d.choices[int(t.distributions[n].to_internal_repr(v))]
            params[n] = v
        out.append(params)
    return out


def _inside(trial: FrozenTrial, search_space: dict[str, BaseDistribution]) -> bool:
    """Whether each of ``trial``'s values of ``search_space`` lies in its distribution."""
    for n, d in search_space.items():
        try:
            if not d._contains(d.to_internal_repr(trial.params[n])):
                return False
        except (TypeError, ValueError):
            return False
    return True


def _in_space(
    trials: Sequence[FrozenTrial], search_space: dict[str, BaseDistribution]
) -> list[FrozenTrial]:
    """The COMPLETE trials of ``trials`` with every parameter of ``search_space`` inside its
    distribution, in completion order."""
    done = [
        t
        for t in trials
        if t.state == TrialState.COMPLETE
        and all(t.distributions.get(n) == d for n, d in search_space.items())
        and _inside(t, search_space)
    ]
    done.sort(key=lambda t: (t.datetime_complete is None, t.datetime_complete, t.number))
    return done


def _pending(
    trials: Sequence[FrozenTrial], trial: FrozenTrial, search_space: dict[str, BaseDistribution]
) -> list[FrozenTrial]:
    """The RUNNING trials of ``trials`` other than ``trial`` over the distributions of
    ``search_space``: the points being evaluated, which a proposal keeps away from."""
    return [
        t
        for t in trials
        if t.state == TrialState.RUNNING
        and t.number != trial.number
        and all(t.distributions.get(n) == d for n, d in search_space.items())
    ]


@dataclass(frozen=True)
class Pick:
    """A sampler's recommendation at one moment of a study (:meth:`PrivateGPUCBSampler.pick`).

    Attributes
    ----------
    trial : int
        The recommended trial's number.
    params : dict
        Its parameters.
    mean, std : float
        The posterior mean and standard deviation of its score, in score units.
    n_complete : int
        The completed trials the recommendation was made from.
    """

    trial: int
    params: dict[str, Any]
    mean: float
    std: float
    n_complete: int


def _float_objective(
    func: Callable[..., float], objective: Callable[..., float]
) -> Callable[..., float]:
    """``func`` (``objective`` privatized, or ``objective`` itself without privacy), with an
    ``int`` value of ``objective`` passed on as a float and one too large for a float refused by
    name (Optuna would fail on it with an internal assertion). A privatized value needs none
    of this: the curator clips it to ``value_range``."""
    if func is not objective:
        return func

    @functools.wraps(objective)
    def checked(trial: Trial) -> float:
        value = objective(trial)
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:
                raise ValueError(
                    "the objective returned an int too large for a float (beyond about "
                    "1.8e308): return a float score."
                ) from None
        return value

    return checked


class PrivateGPUCBSampler(BaseSampler):
    """Optuna sampler running one of privtune's GP-UCB optimizers, optionally on LDP scores.

    Relative sampling over the study's whole search space (the intersection of the completed
    trials' distributions; parameters with a single value are left to Optuna), encoded in the
    unit cube by :class:`privtune.space.SearchSpace`. Parameters that appear dynamically
    (conditional or changing distributions) go to ``independent_sampler`` with Optuna's
    one-time warning. Both directions are supported; failed and pruned trials are ignored (a NaN
    objective value fails the trial, as everywhere in Optuna). Multi-objective studies are
    rejected.

    The sampler keeps no state about a study that it cannot rebuild: at every trial it reads
    the completed trials (in completion order), replays them into a fresh optimizer or extends
    a cached one, and passes the parameters of RUNNING trials as pending points, so any number
    of workers can share one storage without evaluating the same configuration. Each trial it
    proposes for says what made the proposal in its system attribute ``"privtune:turn"``
    (``"start-up"``, ``"repeat"``, ``"trust-region"``, ``"acquisition"``, ...; see
    :attr:`privtune.optimizers.base.BaseOptimizer.turn`): computed from what the model was
    told, so under privacy from the released scores only.

    Privacy model (docs/privacy.md, "epsilon-LDP on scores"): with ``epsilon`` set, run the study
    as ``study.optimize(sampler.privatize(objective), ...)``. The wrapper clips the score to
    ``value_range``, adds Laplace noise of scale ``(hi - lo) / epsilon`` and tags the trial;
    Optuna stores and logs only the privatized value. The sampler proposes parameters only to
    a trial whose privatized objective is running, so an objective that was not wrapped fails
    at its first ``suggest_*``, before it computes a score. A completed trial without a valid
    tag (``study.tell`` or ``study.add_trial`` with a raw value, an unwrapped objective that
    suggests nothing) makes the sampler raise :class:`privtune.privacy.PrivacyError` instead
    of learning from it. The tag guards against such accidents, not against deliberate
    forgery (whoever can forge it holds the raw scores anyway). Not protected: the data the
    model was trained on, beyond what the released scores reveal; epsilon composes over the
    trials of a study (:meth:`privacy_report`).

    ``"qff-ldp"`` (Dubey 2021, "(alpha, beta)-local joint DP") works the same way with
    Gaussian noise: ``privatize`` releases ``clip(y, lo, hi) + N(0, (sigma_u (hi - lo))^2)``,
    ``sigma_u`` of Lemma 5 at ``alpha = epsilon``; the sampler completes Alg. 3's statistics
    (the played configuration is its own proposal, so only the score needs the client's noise).
    ``"qff-jdp"`` ("(alpha, beta)-joint DP") has a different trust model: the objective
    returns raw scores, which Optuna stores, and the storage together with the sampler is the
    trusted privatizer of Alg. 2. Its model, and so every proposal, :meth:`recommend` and the
    released statistics, is computed from the tree mechanism's noisy sums only. Give the
    storage only to those who may see raw scores; share the proposals and the recommendation.
    The privacy noise of both is seeded once per study (a study system attribute, or
    ``noise_seed``), so every worker rebuilds the same released statistics.

    Parameters
    ----------
    algorithm : {"auto", "moma", "ata", "tgp", "gp-ucb", "random", "go-ucb", "qff-jdp", \
"qff-ldp"}, default="auto"
        ``"auto"`` is the algorithm measured best for exact scores (without ``epsilon``) or for
        privatized ones (:data:`privtune.registry.AUTO`; the evidence is in the benchmarks page),
        and ``algorithm`` then holds the name it resolved to. Otherwise: MoMA-GP-UCB (plays
        each configuration ``k = 3`` times and takes a median of means: made for noisy,
        private scores), ATA-GP-UCB, TGP-UCB, exact GP-UCB or uniform random proposals (with
        the same recommendation rule: the honest private baseline). ``"go-ucb"`` is GO-UCB,
        better reached through
        :class:`GOUCBSampler`. ``"qff-jdp"`` and ``"qff-ldp"`` are GP-UCB on quadrature
        Fourier features with joint or local joint DP
        (:class:`~privtune.optimizers.QFFGPUCB`; defaults in
        :func:`privtune.tuning.make_optimizer`, ``privacy_beta`` and ``horizon`` through
        ``optimizer_kwargs``); they need ``epsilon`` and ``value_range``.
    epsilon : float, optional
        Per-trial LDP parameter (``alpha`` for the qff algorithms). ``None`` (default) runs the
        non-private algorithm on raw scores. With ``privacy_budget``, the per-report share of
        the budget.
    value_range : tuple of float, optional
        The range ``(lo, hi)`` of a score (e.g. ``(0, 1)`` for accuracy). Required with
        ``epsilon``; scores outside it are clipped before the noise. Without privacy it fixes
        the reward scale; by default the observed range is used.
    n_startup_trials : int, default=10
        Number of completed trials before the acquisition is used. Until then the trials are
        ``independent_sampler``'s, as Optuna's samplers draw theirs (with the same ``seed``,
        the start-up trials of this sampler, ``GPSampler`` and ``TPESampler`` are the same).
        Two exceptions draw privtune's own uniform points instead: a finite space (every
        parameter discrete or categorical), where those never repeat a configuration, and
        MoMA, which repeats its plays. Without privacy, in a space with a real parameter, the
        default algorithm asks after half of them whether the objective is deterministic: the
        best of those trials is run again, and if it returns the same value the acquisition
        takes over; otherwise the start-up goes on with ``independent_sampler``'s draws
        (:meth:`privtune.tuning.TuningEngine.startup_step`).
    seed : int, optional
        Seed of the proposals. As with Optuna's samplers, a sequential study with a seed is
        reproducible; with ``n_jobs > 1`` Optuna reseeds the sampler per trial (only the
        proposals' seed changes, the model and its cache are kept), and the study is not
        reproducible.
    noise_seed : int, optional
        Seed of the curator's noise, for reproducible experiments only: each trial's
        noise is drawn from a generator keyed by ``(noise_seed, study name, trial number)``,
        and the qff algorithms' own noise from ``(noise_seed, study name)``.
        Leave it ``None`` outside experiments: reusing a seed on the same data reuses the
        noise, and the difference of two scores released with the same noise is not private.
    independent_sampler : optuna.samplers.BaseSampler, optional
        Sampler of the start-up trials and of parameters outside the relative search space; a
        :class:`~optuna.samplers.RandomSampler` seeded with ``seed`` by default.
    optimizer_kwargs : dict, optional
        Constructor arguments of the optimizer overriding the tuning defaults of
        :func:`privtune.tuning.make_optimizer` (``kernel``, ``lam``, ``beta_scale``, ``k``...).
    heavy_tailed : bool, default=False
        Say that the objective's values have heavy-tailed noise (rare, far-off values).
        ``algorithm="auto"`` then fits a Student-t likelihood instead of a Gaussian one from
        the first trial, so a lucky or unlucky value stops pulling the model (measured on the
        benchmarks page, "Heavy tails"). Without privacy the default switches to it by itself
        once the start-up's repeat of a configuration returns another value. Available with
        ``"auto"`` or ``"gp-ucb"``.
    warn_independent_sampling : bool, default=True
        Log Optuna's warning when a parameter is sampled independently (once per parameter).
    privacy_budget : tuple of float, optional
        ``(epsilon, delta)``: the total the whole study may spend, instead of ``epsilon`` per
        trial. Each trial's score is released with the per-report epsilon that
        :func:`privtune.privacy.per_report_epsilon` affords over ``n_trials`` reports
        (dp-accounting's PLD accountant, the tightest valid one for Laplace reports; kept in
        :attr:`epsilon`). Laplace-curator algorithms only (not the qff ones). Preview what a
        budget buys with :func:`privtune.privacy.plan_budget`.
    n_trials : int, optional
        The number of trials ``privacy_budget`` covers (required with it). Every trial is
        counted against it in the study's storage before it computes anything, by every
        worker: once ``n_trials`` trials released or are under way, ``study.optimize`` stops
        (with a logged warning), and a trial started beyond them is refused: it is marked
        failed with nothing computed and :class:`privtune.privacy.BudgetExhaustedError` is
        raised. A trial that fails or is pruned without a release gives its share back.
        See docs/privacy.md, "A total budget", for what a race between workers can and cannot
        do.
    privacy_unit : {"score", "record"}, default="score"
        With privacy, whom each released score protects (docs/privacy.md, "Privacy units").
        ``"score"``: the whole score (the papers' local model), the stronger guarantee and the
        default. ``"record"``: each validation record of a :class:`privtune.RecordObjective`,
        the only objective :meth:`privatize` then accepts: privtune fits the estimator and
        computes a per-record metric on the ``n_val`` hold-out records, so the noise is
        ``(hi - lo) / (n_val epsilon)``. ``value_range`` must be the objective's per-record
        range (``(0, 1)`` for accuracy).

    Examples
    --------
    >>> import optuna
    >>> from privtune import PrivateGPUCBSampler
    >>> sampler = PrivateGPUCBSampler("moma", epsilon=1.0, value_range=(0.0, 1.0), seed=0)
    >>> study = optuna.create_study(direction="maximize", sampler=sampler)
    >>> def objective(trial):
    ...     x = trial.suggest_float("x", 0.0, 1.0)
    ...     return 1.0 - (x - 0.3) ** 2
    >>> study.optimize(sampler.privatize(objective), n_trials=20)
    >>> params = sampler.recommend(study)
    >>> sampler.privacy_report(study)["composed_epsilon_basic"]
    20.0
    """

    def __init__(
        self,
        algorithm: str = "auto",
        *,
        epsilon: float | None = None,
        value_range: tuple[float, float] | None = None,
        n_startup_trials: int = 10,
        seed: int | None = None,
        noise_seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        optimizer_kwargs: dict[str, Any] | None = None,
        heavy_tailed: bool = False,
        warn_independent_sampling: bool = True,
        privacy_budget: tuple[float, float] | None = None,
        n_trials: int | None = None,
        privacy_unit: str = "score",
    ) -> None:
        # under the record unit the budget is one choice's, and n_trials only the study's
        # length (optimize's default); otherwise the reports a budget is spread over
        chooses = privacy_unit == "record" and (epsilon is not None or privacy_budget is not None)
        if privacy_budget is None and n_trials is not None and not chooses:
            raise ValueError(
                "n_trials is the number of reports privacy_budget is spread over; without "
                "privacy_budget it has no effect. Pass both, or neither (then the number of "
                "trials is study.optimize's)."
            )
        # the noise's seed first: the plan carries it
        noise_seed = check_seed("noise_seed", noise_seed)
        check_seedable("noise_seed", noise_seed)
        #: The privacy settings, checked once (the record unit's ``n_val`` is bound from the
        #: objective, :meth:`privatize`, or from the study's receipts).
        self.plan = PrivacyPlan.check(
            algorithm,
            epsilon=epsilon,
            privacy_budget=privacy_budget,
            value_range=value_range,
            privacy_unit=privacy_unit,
            n_reports=n_trials,
            kind="choice" if chooses else "scores",
            noise_seed=noise_seed,
            optimizer_kwargs=optimizer_kwargs,
            door=STUDY,
        )
        self._n_trials = None if n_trials is None else check_int("n_trials", n_trials)
        self.algorithm = self.plan.algorithm
        self.optimizer_kwargs = checked_optimizer_kwargs(
            self.algorithm, optimizer_kwargs, self.plan.model_epsilon
        )
        self.heavy_tailed = heavy_tailed  # checked by the engine, built below
        warn_repeated_plays(self.algorithm, self.plan.model_epsilon, stacklevel=3)
        self.n_startup_trials = check_int("n_startup_trials", n_startup_trials, minimum=0)
        self.seed = check_seed("seed", seed)
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise TypeError(
                "independent_sampler must be an Optuna sampler instance (for example "
                f"optuna.samplers.RandomSampler(seed=0)) or None, got {independent_sampler!r}."
            )
        self._independent_sampler = independent_sampler or RandomSampler(seed=seed)
        self._warn_independent_sampling = bool(warn_independent_sampling)
        # The model's seed (Nyström sampling) is fixed for the sampler's life, so a cached
        # optimizer stays valid; the proposals' seed starts equal to it and reseed_rng redraws it.
        self._model_seed = _model_seed(seed)
        self._ask_seed = self._model_seed
        self._init_runtime()

    # -- runtime state (caches and locks; never relied on, not pickled) -------------------------
    _RUNTIME = ("_lock", "engine", "_warned", "_startup", "_privacy")

    def _init_runtime(self) -> None:
        self._lock = threading.RLock()
        self._warned: set[str] = set()
        #: (study, trial number) of the start-up trials left to independent_sampler
        self._startup: set[tuple[str, int]] = set()
        #: The privacy protocol of the studies this sampler runs.
        self._privacy = StudyPrivacy(
            self.plan, lock=self._lock, on_bind=self._bound, n_trials=self._n_trials
        )
        self._init_model()

    def _bound(self, plan: PrivacyPlan) -> None:
        """The record unit's number of validation records is known: the model is built for
        the noise it will be told."""
        self.plan = plan
        self._init_model()

    def _init_model(self) -> None:
        """The tuning engine (reward scale, replay cache per study, ask policy,
        recommendation), built for the noise of the privacy unit as far as it is known."""
        self.engine = TuningEngine(
            self.algorithm,
            epsilon=self.plan.model_epsilon,
            value_range=self.plan.value_range,
            optimizer_kwargs=self.optimizer_kwargs,
            n_startup=self.n_startup_trials,
            heavy_tailed=self.heavy_tailed,
        )

    # the settings as the plan holds them
    epsilon = property(lambda self: self.plan.epsilon, doc="Each report's epsilon.")
    value_range = property(lambda self: self.plan.value_range, doc="The score's range.")
    privacy_budget = property(lambda self: self.plan.budget, doc="The total budget.")
    privacy_unit = property(lambda self: self.plan.unit_kind, doc="'score' or 'record'.")
    privacy_model = property(lambda self: self.plan.privacy_model, doc="The privacy model.")
    noise_seed = property(lambda self: self.plan.noise_seed, doc="The noise's seed.")
    n_val = property(lambda self: self.plan.n_val, doc="The record unit's validation records.")

    @property
    def n_trials(self) -> int | None:
        """The number of trials :meth:`optimize` runs by default: the reports a total budget
        covers, or under the record unit the ``n_trials`` given (``None``: Optuna's)."""
        return self._n_trials

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        for key in self._RUNTIME:
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._init_runtime()

    def reseed_rng(self) -> None:
        """Draw a fresh seed for the proposals (Optuna calls this per trial when ``n_jobs > 1``).

        The model's own seed is kept, so the cached optimizer stays valid and a reseed costs no
        replay.
        """
        with self._lock:
            self._ask_seed = _model_seed(None)
        self._independent_sampler.reseed_rng()

    # -- the privatized objective ----------------------------------------------------------------
    def create_study(self, **kwargs: Any) -> Study:
        """``optuna.create_study(sampler=self, **kwargs)``: a study this sampler runs.

        With :meth:`optimize`, the path on which the privatization cannot be left out.

        Parameters
        ----------
        **kwargs
            Any argument of :func:`optuna.create_study` but ``sampler``.

        Returns
        -------
        optuna.study.Study
        """
        import optuna

        if "sampler" in kwargs:
            raise TypeError("create_study takes no sampler: the study's sampler is this one.")
        return optuna.create_study(sampler=self, **kwargs)

    def optimize(
        self, study: Study, objective: Callable[..., float], n_trials: int | None = None, **kwargs
    ) -> Study:
        """Run ``study`` on ``objective`` with its scores privatized: the main private path.

        ``study.optimize(self.privatize(objective), n_trials, **kwargs)``, after checking that
        ``study`` is run by this sampler; ``n_trials`` defaults to the number the total budget
        covers. On this path the wrapper cannot be forgotten. On the plain
        ``study.optimize(objective)`` path the sampler still refuses to propose parameters to an
        unwrapped objective (its first ``suggest_*`` raises before any score exists), but an
        objective that suggests nothing, ``study.tell`` and ``study.add_trial`` store whatever
        value they are given before any sampler hook can refuse it; the sampler then refuses to
        learn from the study (:class:`~privtune.privacy.PrivacyError`), which is detection, not
        prevention.

        Parameters
        ----------
        study : optuna.study.Study
            A study whose sampler is this one (:meth:`create_study`).
        objective : callable
            ``objective(trial) -> float``, the raw score (a :class:`privtune.RecordObjective`
            under ``privacy_unit="record"``).
        n_trials : int, optional
            Default: ``n_trials`` of the total budget, or Optuna's (until stopped) without one.
        **kwargs
            Other arguments of :meth:`optuna.study.Study.optimize`. With privacy,
            ``show_progress_bar=True`` shows :class:`privtune.optuna_pick.PickProgress` (the
            pick) instead of Optuna's bar, whose "Best value" is the largest stored value.

        Returns
        -------
        optuna.study.Study
            ``study``.
        """
        if study.sampler is not self:
            raise ValueError(
                "optimize runs a study whose sampler is this one; create it with "
                "sampler.create_study(...) or optuna.create_study(sampler=sampler)."
            )
        if n_trials is None:
            n_trials = self.n_trials
        if isinstance(objective, RecordObjective) and objective.every_record:
            self._privacy.select_models(study, objective, n_trials)
            return study
        from .optuna_pick import pick_progress

        # with privacy Optuna's bar would show the largest stored value: the luckiest draw
        with pick_progress(self, n_trials, kwargs, private=self._privacy.private) as kwargs:
            study.optimize(
                _float_objective(self.privatize(objective), objective), n_trials, **kwargs
            )
        return study

    def privatize(self, objective: Callable[..., float]) -> Callable[..., float]:
        """Wrap ``objective`` so that Optuna only ever stores its privatized value.

        The wrapper runs ``objective(trial)``, passes the score through the curator
        (clip to ``value_range``, Laplace noise) and records in the trial's user attributes the
        epsilon spent (``"privtune:epsilon"``), the range and a fingerprint of the released
        value, which the sampler checks. A non-finite score (NaN, infinite) releases nothing:
        the wrapper returns NaN and Optuna marks the trial failed. ``trial.report`` raises
        :class:`~privtune.privacy.PrivacyError`, since Optuna would store the raw intermediate
        value. Without ``epsilon``, and with ``"qff-jdp"`` (whose privatizer is the storage and
        the sampler), the objective is returned unchanged.

        With ``epsilon`` set, the sampler proposes parameters only to a trial whose privatized
        objective is running: a ``suggest_*`` call from an objective that was not wrapped (or
        from ``study.ask(fixed_distributions)``) raises :class:`~privtune.privacy.PrivacyError`
        before any score exists, so the trial fails and no raw value is stored. In an
        ask-and-tell loop, call ``sampler.privatize(objective)(trial)`` and suggest inside it.

        An exception raised by the objective leaves without its message, context and traceback
        (the same type, a message saying it was withheld): a scorer's error can quote the raw
        score, and Optuna logs the message. A trial releases once: calling the privatized
        objective again on a trial that has a receipt raises
        :class:`~privtune.privacy.PrivacyError`.

        Parameters
        ----------
        objective : callable
            ``objective(trial) -> float``, the raw score.
            Under ``privacy_unit="record"``, a :class:`privtune.RecordObjective`.

        Returns
        -------
        callable
            The objective to pass to ``study.optimize`` (or to call in an ask-and-tell loop).
        """
        if not callable(objective):
            raise TypeError(f"objective must be callable, got {type(objective).__name__}.")
        if not self._privacy.private:
            return objective
        return self._privacy.wrap(objective)

    # -- BaseSampler -----------------------------------------------------------------------------
    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        _single_objective(study)
        self._privacy.check_privatized(trial)
        trials = study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,), use_cache=True)
        self._privacy.verify_trials(study, trials)  # every one, whatever its parameters
        return {
            name: dist
            for name, dist in intersection_search_space(trials).items()
            if not dist.single()
        }

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        _single_objective(study)
        self._privacy.check_privatized(trial)
        if not search_space:  # independent_sampler's; the start-up's before any completed trial
            if not study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
                _set_turn(study, trial, "start-up")
            return {}
        space = SearchSpace(search_space)
        states = (TrialState.COMPLETE, TrialState.RUNNING)
        trials = study._get_trials(deepcopy=False, states=states, use_cache=False)
        completed = self._completed(study, trials, search_space)
        if self.engine.any_uniform_start(space, len(completed)):
            with self._lock:  # a start-up trial: independent_sampler's, as in Optuna's samplers
                self._startup.add((study.study_name, trial.number))
            _set_turn(study, trial, "start-up")
            return {}
        running = _pending(trials, trial, search_space)
        pending = space.to_unit_many(_params(running, search_space)) if running else None
        # One lock over sync and ask: threads (n_jobs > 1) share the cached optimizer.
        with self._lock:
            opt, _ = self._optimizer(study, space, search_space, completed)
            step = self.engine.startup_step(space, opt, len(completed))
            if step == "uniform" and self.engine.adapter_draws(space):
                self._startup.add((study.study_name, trial.number))  # the start-up goes on
                _set_turn(study, trial, "start-up")
                return {}
            key = [self._ask_seed, trial.number]
            x = self.engine.ask(space, opt, n_told=len(completed), key=key, pending=pending)
            self.engine.warn_if_exhausted(space, opt, pending, x)
        _set_turn(study, trial, opt.turn)
        return space.from_unit(x)

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        _single_objective(study)
        self._privacy.check_privatized(trial)
        with self._lock:
            warn = self._warn_independent_sampling and param_name not in self._warned
            warn = warn and (study.study_name, trial.number) not in self._startup
            if warn and study._get_trials(
                deepcopy=False, states=(TrialState.COMPLETE,), use_cache=True
            ):
                self._warned.add(param_name)
            else:
                warn = False
        if warn:
            _warn_independent_sampling(param_name, trial.number, self._independent_sampler, self)
        return self._independent_sampler.sample_independent(
            study, trial, param_name, param_distribution
        )

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._independent_sampler.before_trial(study, trial)
        self._privacy.before_trial(study, trial)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        self._independent_sampler.after_trial(study, trial, state, values)
        self._privacy.after_trial(study, trial, state, values)

    # -- the model ---------------------------------------------------------------------------------
    def _completed(
        self,
        study: Study,
        trials: Sequence[FrozenTrial],
        search_space: dict[str, BaseDistribution],
    ) -> list[FrozenTrial]:
        """COMPLETE trials in the search space, in completion order, verified when private.

        A trial whose value of a parameter lies outside its distribution (an enqueued untuned
        configuration, such as ``l2_regularization=0`` against a log-scale range) is left out:
        the model cannot place it in the cube; :meth:`recommend_trial` compares it as an arm
        outside the cube."""
        done = _in_space(trials, search_space)
        self._privacy.verify_trials(study, done)
        return done

    def _optimizer(
        self,
        study: Study,
        space: SearchSpace,
        search_space: dict[str, BaseDistribution],
        completed: list[FrozenTrial],
    ) -> Any:
        """The engine's optimizer of ``study`` told ``completed``, and its reward scale (the
        callers hold the lock)."""
        noise_seed = self._privacy.study_noise_seed(study)
        X = space.to_unit_many(_params(completed, search_space)) if completed else None
        opt, scale = self.engine.sync(
            (study._study_id, study.study_name),
            space,
            [t.number for t in completed],
            np.zeros((0, space.dim)) if X is None else X,
            np.array([t.value for t in completed], dtype=float),
            maximize=study.direction == StudyDirection.MAXIMIZE,
            seed=self._model_seed,
            noise_seed=noise_seed,
            context=tuple(search_space.items()),
        )
        if noise_seed is not None and completed:
            self._privacy.note_noise_seed(study, noise_seed)
        return opt, scale

    # -- results -----------------------------------------------------------------------------------
    def recommend_trial(self, study: Study, baseline: int | None = None) -> FrozenTrial:
        """The completed trial whose configuration has the best posterior mean.

        See :meth:`recommend`.

        Parameters
        ----------
        study : optuna.study.Study
        baseline : int, optional
            Number of a completed trial to keep unless another beats it; see :meth:`recommend`.

        Returns
        -------
        optuna.trial.FrozenTrial
        """
        if self.plan.chooses:
            return self._privacy.chosen_trial(study, baseline)
        return self._recommend(study, baseline)[0]

    def pick(self, study: Study, baseline: int | None = None) -> Pick:
        """The recommendation now, with the model's estimate of its score.

        What to show while a study runs instead of ``study.best_value``, which with privacy
        is the largest noisy value (above the score's range, often). Computed from the stored
        values only, so with privacy it is post-processing and costs nothing;
        :class:`privtune.optuna_pick.PickTracker` calls it after every trial.

        Parameters
        ----------
        study : optuna.study.Study
        baseline : int, optional
            As for :meth:`recommend`.

        Returns
        -------
        Pick
            The recommended trial's number and parameters, the posterior mean and standard
            deviation of its score (score units; for a baseline outside the search space, its
            stored value and the curator's noise standard deviation), and the number of
            completed trials.
        """
        trial, mean, std = self._recommend(study, baseline)
        n = len(study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
        return Pick(trial.number, dict(trial.params), mean, std, n)

    def _recommend(self, study: Study, baseline: int | None) -> tuple[FrozenTrial, float, float]:
        """The recommended trial, and the posterior mean and standard deviation of its score."""
        _single_objective(study)
        trials = study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if not trials:
            raise ValueError("recommend needs at least one completed trial in the study.")
        self._privacy.verify_trials(study, trials)
        search_space = {
            n: d for n, d in intersection_search_space(trials).items() if not d.single()
        }
        if not search_space:
            raise ValueError(
                "recommend needs a parameter shared by every completed trial; this study has "
                "none (its parameters are all conditional or fixed)."
            )
        space = SearchSpace(search_space)
        completed = self._completed(study, trials, search_space)
        row, outside = _baseline_row(baseline, trials, completed)
        release = self._privacy.release
        noise = 0.0 if release is None else release.curator.noise_variance
        # a baseline outside the space is an arm apart, known by its stored value
        arm = None if outside is None else OutsideArm(float(outside.values[0]), noise)
        if not completed and arm is None:
            raise ValueError("recommend needs a completed trial inside the search space.")
        with self._lock:
            opt, scale = (
                self._optimizer(study, space, search_space, completed)
                if completed
                else (None, None)
            )
            # the told rows are the completed trials, in order
            pick = self.engine.recommend(opt, scale, baseline=row, outside=arm)
            if pick < 0:
                assert outside is not None and arm is not None
                return outside, arm.score, arm.std
            assert opt is not None and scale is not None
            mean, std = self.engine.posterior_band(opt, scale, opt.X[pick : pick + 1])
        return completed[pick], float(mean[0]), float(std[0])

    def recommend(self, study: Study, baseline: int | None = None) -> dict[str, Any]:
        """Parameters of the evaluated configuration with the best posterior mean; under
        ``privacy_unit="record"``, the study's one private choice.

        Under the record unit the trials store scores of the training records, and
        ``recommend`` makes one private choice among them on the validation records (the
        configurations that score below ``baseline``'s on the training records dropped, one
        permute-and-flip choice with the whole budget): in the process that passed the
        :class:`~privtune.RecordObjective` to :meth:`optimize`, once per study (claimed in its
        storage; a later call, in any process, returns it). docs/privacy.md, "The record
        unit's search", gives the proof. When the untuned configuration cannot be enqueued (a
        value outside the space), give it as ``RecordObjective(..., untuned=estimator)``
        instead of ``baseline``: it is then the baseline, and when the choice keeps it,
        ``recommend`` returns its own values of the study's parameters. What follows is the
        rule under the score unit and without privacy.

        ``study.best_trial`` is the argmax of the stored values; with privacy those are noisy
        (Laplace of scale ``(hi - lo) / epsilon``) and the argmax is mostly the luckiest draw.
        The posterior mean pools every trial's value, and computing it from privatized values
        is post-processing: it costs no privacy. Use :meth:`recommend` whenever the stored
        values are noisy; ``best_trial`` is right for deterministic, non-private objectives.

        With ``baseline``, the number of a trial whose configuration you would use anyway
        (typically the estimator's defaults, enqueued with ``study.enqueue_trial`` as trial
        ``0``), that configuration is kept unless another one scores above it with posterior
        probability at least ``1 - 0.05 / m``, ``m`` the configurations competing with it
        (:func:`privtune.acquisition.baseline_level`). Under heavy
        noise the best posterior mean alone often picks a configuration worse than the defaults;
        the benchmarks page measures both rules.

        Parameters
        ----------
        study : optuna.study.Study
        baseline : int, optional
            Number of a completed trial (``FrozenTrial.number``) to keep unless beaten.

        Returns
        -------
        dict
            The trial's parameters, including any sampled outside the relative search space
            (conditional parameters): those of the first trial, in completion order, evaluated
            at the recommended configuration.
        """
        if self.plan.chooses:
            return dict(self._privacy.choose(study, baseline)["params"])
        return dict(self.recommend_trial(study, baseline).params)

    def privacy_report(self, study: Study, delta: float | None = None) -> dict[str, Any]:
        """The privacy spent by the study: per-report epsilon and composed epsilon (under the
        record unit, the one choice's report). Every key is explained in docs/privacy.md,
        "The privacy report".

        Built from the trials' user attributes, so it covers every worker that wrote to the
        study's storage. With ``"qff-ldp"`` the reports are Gaussian: the summary has
        ``delta_per_report`` and ``composed_delta_basic`` and no advanced composition. With
        ``"qff-jdp"`` it states the per-score joint-DP guarantee
        (:meth:`privtune.privacy.PrivacyLedger.summary`).

        Each privatized trial is one epsilon-LDP report about the same data; the composed
        epsilon bounds what the whole study reveals about it. A trial counts from the moment its
        receipt is stored, before its value: a worker killed in between leaves a trial that is
        RUNNING (or FAIL once cleaned up) and counted, so no release escapes the report and
        none counts twice (one receipt per trial). Spending
        adds up beyond the study too: other studies or reruns on the same data compose with
        this one. Raises :class:`~privtune.privacy.PrivacyError` if a completed trial's value
        did not come through the curator (its epsilon is unbounded).

        With ``privacy_budget``, the report also shows the budget, what was spent and what
        remains (:meth:`privtune.privacy.PrivacyBudget.report`): ``reserved_reports`` counts
        the released reports and the trials under way that may still release.

        Parameters
        ----------
        study : optuna.study.Study
        delta : float, optional
            The delta of the advanced-composition and PLD bounds: the budget's, or 1e-6.

        Returns
        -------
        dict
            ``n_reports``, ``epsilon_per_report``, ``composed_epsilon_basic`` (pure
            epsilon-DP), and with at least one report ``delta``, ``composed_epsilon_advanced``
            and ``composed_epsilon_pld`` (both (epsilon, delta)-DP); with ``privacy_budget``,
            ``budget_epsilon``, ``budget_delta``, ``planned_reports``, ``released_reports``,
            ``reserved_reports``, ``remaining_reports`` and ``spent_epsilon``. Always
            ``privacy_unit`` (and ``n_val`` under the record unit) and ``protects``, the
            sentence of what the composed epsilon protects. When trials name their data owner
            (the user attribute ``"privtune:owner"``, set by the objective before it returns;
            by default every report is about the study's one data set), ``per_owner`` gives
            each owner's guarantee: reports about different owners do not compose, and the
            headline numbers are the largest owner's (``owner``).
        """
        return self._privacy.study_report(study, delta)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(algorithm={self.algorithm!r}, epsilon={self.epsilon}, "
            f"value_range={self.value_range})"
        )


class GOUCBSampler(PrivateGPUCBSampler):
    """Optuna sampler running GO-UCB (Liu & Wang 2023), optionally on LDP scores.

    :class:`privtune.optimizers.GOUCB` behind the contract of :class:`PrivateGPUCBSampler`:
    relative sampling over the study's search space, both directions, many workers on one
    storage (the model is rebuilt from the completed trials, RUNNING trials are pending
    points), ``privatize`` and ``epsilon`` through the curator, the fail-closed checks,
    :meth:`~PrivateGPUCBSampler.recommend` and
    :meth:`~PrivateGPUCBSampler.privacy_report`. The first ``n_explore`` completed trials are
    GO-UCB's uniform Phase I; the regression oracle then fits the model and every later trial
    is Phase II. Privacy model (docs/privacy.md): "epsilon-LDP on scores", as for
    :class:`PrivateGPUCBSampler`.

    Parameters
    ----------
    epsilon : float, optional
        Per-trial LDP parameter; ``None`` (default) learns from raw scores.
    value_range : tuple of float, optional
        The range ``(lo, hi)`` of a score; required with ``epsilon``.
    horizon : int, default=100
        ``T``, the number of trials GO-UCB's defaults are set for (``n_explore``, ``lam`` and
        the growth of ``beta_t``); a study may run longer.
    n_explore : int, optional
        Length of Phase I; default ``ceil(sqrt(horizon))``.
    seed : int, optional
        Seed of the proposals and of the regression oracle's initialisations.
    noise_seed : int, optional
        Seed of the curator's noise, for reproducible experiments only (see
        :class:`PrivateGPUCBSampler`).
    independent_sampler : optuna.samplers.BaseSampler, optional
        Sampler for parameters outside the relative search space.
    optimizer_kwargs : dict, optional
        Other arguments of :class:`~privtune.optimizers.GOUCB` (``model``, ``lam``, ``beta``,
        ``beta_scale``, ``acquisition``, ...).
    warn_independent_sampling : bool, default=True
        Log Optuna's warning when a parameter is sampled independently.
    privacy_budget : tuple of float, optional
        ``(epsilon, delta)`` over the study, with ``n_trials`` (see
        :class:`PrivateGPUCBSampler`).
    n_trials : int, optional
        The number of trials ``privacy_budget`` covers.

    Examples
    --------
    >>> import optuna
    >>> from privtune import GOUCBSampler
    >>> sampler = GOUCBSampler(horizon=20, seed=0)
    >>> study = optuna.create_study(direction="maximize", sampler=sampler)
    >>> def objective(trial):
    ...     x = trial.suggest_float("x", 0.0, 1.0)
    ...     y = trial.suggest_float("y", 0.0, 1.0)
    ...     return 1.0 - (x - 0.3) ** 2 - (y - 0.6) ** 2
    >>> study.optimize(objective, n_trials=12)
    >>> sorted(sampler.recommend(study))
    ['x', 'y']
    """

    def __init__(
        self,
        *,
        epsilon: float | None = None,
        value_range: tuple[float, float] | None = None,
        horizon: int = 100,
        n_explore: int | None = None,
        seed: int | None = None,
        noise_seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        optimizer_kwargs: dict[str, Any] | None = None,
        warn_independent_sampling: bool = True,
        privacy_budget: tuple[float, float] | None = None,
        n_trials: int | None = None,
    ) -> None:
        if optimizer_kwargs is not None and not isinstance(optimizer_kwargs, dict):
            raise TypeError(f"optimizer_kwargs must be a dict, got {type(optimizer_kwargs)}.")
        for name in ("horizon", "n_explore"):
            if name in (optimizer_kwargs or {}):
                raise ValueError(
                    f"{name} is an argument of GOUCBSampler: pass GOUCBSampler({name}=...), "
                    "not optimizer_kwargs={" + repr(name) + ": ...} (two values would disagree)."
                )
        kwargs = {"horizon": horizon, "n_explore": n_explore, **(optimizer_kwargs or {})}
        self.horizon = horizon
        self.n_explore = n_explore
        super().__init__(
            "go-ucb",
            epsilon=epsilon,
            value_range=value_range,
            n_startup_trials=0,  # Phase I is the optimizer's own
            seed=seed,
            noise_seed=noise_seed,
            independent_sampler=independent_sampler,
            optimizer_kwargs=kwargs,
            warn_independent_sampling=warn_independent_sampling,
            privacy_budget=privacy_budget,
            n_trials=n_trials,
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(horizon={self.horizon}, epsilon={self.epsilon}, "
            f"value_range={self.value_range})"
        )
