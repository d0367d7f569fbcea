"""The tuning engine: what the Optuna sampler, the search estimator and the federated search
share, once, below all three.

- :class:`TuningEngine`: one algorithm of :data:`privtune.registry.REGISTRY` with its
  privacy parameter and declared range. It builds the optimizer with the algorithm's tuning
  defaults (:func:`make_optimizer`), owns the reward scale (:class:`RewardScale`) and the
  failure penalty derived from it, the replay cache (:class:`Replay`, one per stream of
  history), the ask policy (uniform start-up, proposals reseeded per key) and the
  recommendation (:func:`recommend`). What is private about a run (the curator of each score,
  the privacy report) comes from its :class:`~privtune.plan.PrivacyPlan`.
- :func:`recommend`: the one recommendation rule, for any model with ``recommend_row``
  (the optimizers, the federated agents).

Nothing here imports Optuna or scikit-learn.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import check_bool
from .cube import Block
from .optimizers import BaseOptimizer
from .registry import (
    AUTO,
    REGISTRY,
    BuildSetting,
    PrivacyModel,
    check_algorithm,
    laplace_noise_var,
    resolve_algorithm,
)
from .space import Space

__all__ = [
    "ALGORITHMS",
    "AUTO",
    "OutsideArm",
    "Replay",
    "RewardScale",
    "TuningEngine",
    "check_algorithm",
    "check_heavy_tailed",
    "checked_optimizer_kwargs",
    "laplace_noise_var",
    "make_optimizer",
    "recommend",
    "resolve_algorithm",
    "warn_repeated_plays",
]

#: Algorithm names accepted by the adapters, to their optimizer classes (from the registry).
ALGORITHMS: dict[str, type[BaseOptimizer]] = {name: s.optimizer for name, s in REGISTRY.items()}


def warn_repeated_plays(algorithm: str, epsilon: float | None, *, stacklevel: int = 2) -> None:
    """Warn that ``"moma"`` without privacy evaluates each configuration ``k`` times for
    nothing: exact scores repeat exactly, and the median of identical means is the mean.
    ``algorithm`` is a resolved name (:func:`resolve_algorithm`)."""
    if REGISTRY[algorithm].repeated_plays and epsilon is None:
        warnings.warn(
            f"algorithm={algorithm!r} without epsilon plays each configuration k = 3 times; with "
            "exact scores the repeats are identical evaluations that cost time and teach "
            "nothing. Use algorithm='auto' (or 'gp-ucb') for exact scores.",
            UserWarning,
            stacklevel=stacklevel,
        )


def optimizer_parameters(cls: type[BaseOptimizer]) -> list[str]:
    """The keyword arguments ``cls`` accepts: its constructor's and, through ``**kwargs``,
    its bases' (``dim`` excluded)."""
    names: list[str] = []
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        params = inspect.signature(vars(klass)["__init__"]).parameters.values()
        names += [p.name for p in params if p.kind == p.KEYWORD_ONLY and p.name not in names]
        if not any(p.kind == p.VAR_KEYWORD for p in params):
            break
    return sorted(names)


def check_optimizer_kwargs(algorithm: str, optimizer_kwargs: dict[str, Any] | None) -> None:
    """Refuse a key of ``optimizer_kwargs`` that the optimizer of ``algorithm`` (a resolved
    name) does not take."""
    if optimizer_kwargs is None:
        return
    if not isinstance(optimizer_kwargs, dict):
        raise TypeError(f"optimizer_kwargs must be a dict, got {type(optimizer_kwargs).__name__}.")
    cls = REGISTRY[algorithm].optimizer
    allowed = optimizer_parameters(cls)
    unknown = sorted(str(k) for k in optimizer_kwargs if k not in allowed)
    if unknown:
        raise ValueError(
            f"optimizer_kwargs has {unknown}, which algorithm={algorithm!r} "
            f"({cls.__name__}) does not take. Allowed keys: {allowed}."
        )


def checked_optimizer_kwargs(
    algorithm: str, optimizer_kwargs: Any, epsilon: float | None = None
) -> dict[str, Any]:
    """``optimizer_kwargs`` as a dict of arguments the algorithm's optimizer takes, checked by
    building one (a bad override fails here rather than at the first proposal; a custom GO-UCB
    model fixes the dimension)."""
    if optimizer_kwargs is not None and not isinstance(optimizer_kwargs, dict):
        raise TypeError(f"optimizer_kwargs must be a dict, got {type(optimizer_kwargs)}.")
    kwargs = dict(optimizer_kwargs or {})
    dim = int(getattr(kwargs.get("model"), "dim", 1))
    make_optimizer(algorithm, dim, epsilon=epsilon, optimizer_kwargs=kwargs)
    return kwargs


def check_heavy_tailed(heavy_tailed, algorithm: str) -> bool:
    """Validate ``heavy_tailed``: a bool, and True only for ``"gp-ucb"`` (the algorithm
    ``"auto"`` resolves to), whose Student-t likelihood measured best on heavy-tailed scores;
    TGP-, ATA- and MoMA-GP-UCB handle heavy tails their own way, by truncation and medians."""
    if check_bool("heavy_tailed", heavy_tailed) and algorithm != "gp-ucb":
        raise ValueError(
            f"heavy_tailed=True chooses gp-ucb's Student-t likelihood; algorithm={algorithm!r} "
            "has its own treatment of heavy tails (or none). Use algorithm='auto' or 'gp-ucb' "
            "with heavy_tailed=True, or this algorithm without it."
        )
    return bool(heavy_tailed)


def make_optimizer(
    algorithm: str,
    dim: int,
    *,
    epsilon: float | None = None,
    seed: int | Sequence[int] | None = None,
    snap: Callable[[np.ndarray], np.ndarray] | None = None,
    optimizer_kwargs: dict[str, Any] | None = None,
    budget: int | None = None,
    noise_seed: int | None = None,
    layout: tuple[Block, ...] | None = None,
    heavy_tailed: bool = False,
) -> BaseOptimizer:
    """The optimizer of ``algorithm`` with the tuning defaults of its registry entry.

    ``"go-ucb"`` (:class:`~privtune.optimizers.GOUCB`) has no kernel: it gets ``epsilon``,
    ``seed``, ``snap`` and, when the number of evaluations is known, ``horizon = budget``;
    its other defaults are its own (the GO-UCB section of the optimizers guide).

    ``"qff-jdp"`` and ``"qff-ldp"`` (:class:`~privtune.optimizers.QFFGPUCB`, Dubey 2021) need
    ``epsilon`` (their ``alpha``); ``privacy_beta`` defaults to 0.1 (Sec. 6). Rewards are
    expected in ``[0, 1]`` (``RewardScale.from_range(..., unit=True)``), where the paper's
    sensitivities with ``reward_bound = 1`` bound the change of any reward. Quadrature
    features with ``m_bar = 10`` nodes at lengthscale 0.3 (a measured kernel error of 3e-3 per
    coordinate), the full product kernel up to two dimensions (200 features) and the additive
    kernel above (``20 dim`` features, Sec. 6's choice for high dimensions), ``lam = 1``, the
    calibrated ``beta_scale``, and ``horizon = budget`` (default 1024): the joint-DP tree
    refuses more rewards than that. ``noise_seed`` is the privacy noise's seed, which a caller that
    rebuilds the optimizer must keep (see :class:`~privtune.optimizers.QFFGPUCB`).

    The GP algorithms (``"gp-ucb"``, ``"tgp"``, ``"random"``, ``"ata"``, ``"moma"``) get the
    following.

    Rewards are expected in ``[-1, 1]`` (see :class:`RewardScale`), so ``B + R = 1``
    (``B = R = 0.5``): the curator's Laplace scale ``(hi - lo) / epsilon`` is then the papers'
    ``2 (B + R) / epsilon`` in reward units. The surrogate is the fitted GP of
    :mod:`privtune.gp` (``surrogate="fitted"``: ARD Matérn-5/2 over the search space's
    ``layout``, constant mean, signal variance, lengthscales and nugget by MAP) with the
    curator's known noise variance, ``noise_var = 8 / epsilon^2`` in reward units (Laplace of
    scale ``2 / epsilon``), or 0 without privacy. The acquisition starts from Sobol raw samples
    and searches integer and categorical parameters by enumeration (``raw_sampling="sobol"``,
    ``layout``). For exact scores ``"gp-ucb"`` maximises log expected improvement over the
    best told score while the model judges the scores exact (the best posterior mean
    otherwise), with Optuna GPSampler's priors and the told scores' mean, and fills the space
    while the model cannot predict the told scores and none stands out
    (:func:`privtune.registry.exact_acquisition`, :data:`~privtune.registry.EXACT_INCUMBENT`,
    :data:`~privtune.registry.EXACT_PRIORS` and :data:`~privtune.registry.EXACT_MIN_SKILL`,
    measured on the tuning suite); with
    privacy it maximises log expected improvement over the best released score
    (:func:`privtune.registry.private_acquisition`), which keeps exploring where a few noisy
    reports would make UCB settle, with a smoother lengthscale prior while the noise is below
    a quarter of the score's range (:data:`privtune.registry.PRIVATE_PRIORS`).
    ``heavy_tailed=True`` gives it a Student-t likelihood.
    ``optimizer_kwargs={"surrogate": "fixed"}`` gives the previous tuning defaults instead: the
    papers' fixed model with a Matérn-5/2 kernel of
    :func:`~privtune.registry.default_lengthscale`, its single lengthscale refitted by ML-II
    at powers of two, and ``lam = 0.01`` without privacy or ``1 + 8 / epsilon^2`` with it
    (what they cost is on the benchmarks page, "The surrogate").

    Parameters
    ----------
    algorithm : str
        One of :data:`ALGORITHMS`.
    dim : int
        Dimension of the cube.
    epsilon : float, optional
        LDP parameter of the curator, ``None`` for the non-private algorithms.
    seed : int or sequence of int, optional
        Seed of the optimizer.
    snap : callable, optional
        The search space's ``snap``.
    optimizer_kwargs : dict, optional
        Overrides of any constructor argument (``kernel``, ``lam``, ``beta_scale``, ``k``, ...).
    budget : int, optional
        The number of evaluations the run will make, when the caller knows it (a search's
        ``n_iter``): GO-UCB's and the qff algorithms' ``horizon``.
    noise_seed : int, optional
        The seed of the qff algorithms' privacy noise (ignored by the others).
    layout : tuple of privtune.cube.Block, optional
        The search space's ``layout`` (one lengthscale per parameter, enumeration of discrete
        and categorical ones); default: every coordinate a real parameter.
    heavy_tailed : bool, default=False
        The scores have heavy-tailed noise: ``"gp-ucb"`` takes a Student-t likelihood
        (:data:`privtune.registry.HEAVY_TAILED_DF` degrees of freedom); the other algorithms
        refuse it (:func:`check_heavy_tailed`).

    Returns
    -------
    BaseOptimizer
    """
    spec = REGISTRY[check_algorithm(algorithm)]
    check_optimizer_kwargs(algorithm, optimizer_kwargs)
    check_heavy_tailed(heavy_tailed, algorithm)
    overrides = dict(optimizer_kwargs or {})
    setting = BuildSetting(
        int(dim), epsilon, spec.privacy_model(epsilon), budget, bool(heavy_tailed)
    )
    kwargs = spec.defaults(setting, overrides)
    kwargs.update(seed=seed, snap=snap)
    if spec.takes_layout:
        kwargs["layout"] = layout
    if spec.private_model != PrivacyModel.LDP:  # the qff algorithms' own privacy noise
        kwargs["noise_seed"] = noise_seed
    kwargs.update(overrides)
    unused = sorted({"lam", "kernel"} & set(overrides))
    if unused and kwargs.get("surrogate") == "fitted":
        raise ValueError(
            f"optimizer_kwargs {unused} set the papers' fixed surrogate (its noise variance "
            "and kernel), which the default fitted surrogate does not use: it fits its kernel "
            "and its noise (a nugget) to the scores, so a noisy objective needs no setting. "
            'Drop them, or add "surrogate": "fixed" to use the fixed model with them.'
        )
    optimizer = spec.optimizer(dim, **kwargs)
    acquisition = getattr(optimizer, "acquisition", None)
    inert = sorted({"beta_scale", *getattr(optimizer, "beta_only", ())} & set(overrides))
    if inert and getattr(optimizer, "proposes_uniformly", False):
        raise ValueError(
            f"optimizer_kwargs {inert} set UCB's confidence width beta_t, which "
            f"{algorithm!r} does not read: it proposes uniformly at random. Drop them."
        )
    if inert and acquisition is not None and not acquisition.reads_beta:
        raise ValueError(
            f"optimizer_kwargs {inert} set UCB's confidence width beta_t, which the "
            f"acquisition {acquisition!r} does not read. Drop them, or add "
            '"acquisition": "ucb" to use UCB with them.'
        )
    return optimizer


@dataclass(frozen=True)
class RewardScale:
    """Affine map from scores to centred rewards: ``r = sign (2 y - lo - hi) / (hi - lo)``.

    Scores in ``[lo, hi]`` map to ``[-1, 1]``; ``sign`` is ``+1`` to maximise the score and
    ``-1`` to minimise it (the optimizers maximise). Privatized scores may lie outside
    ``[lo, hi]`` (the noise is unbounded) and map outside ``[-1, 1]``, as they should. With
    ``unit=True`` the rewards are ``(r + 1) / 2``, in ``[0, 1]``; with ``clip=True`` they are
    clipped to their interval (raw scores whose sensitivity a privatizer bounds).

    Parameters
    ----------
    lo, hi : float
        The score range; ``lo == hi`` maps every score to 0.
    sign : {1.0, -1.0}
    unit : bool, default=False
    clip : bool, default=False
    """

    lo: float
    hi: float
    sign: float = 1.0
    unit: bool = False
    clip: bool = False

    @classmethod
    def from_range(
        cls, value_range, *, maximize: bool = True, unit: bool = False, clip: bool = False
    ) -> RewardScale:
        """The scale of a declared ``value_range`` (fixed, so a replayed model stays valid),
        a pair its privacy plan checked."""
        lo, hi = (float(v) for v in value_range)
        return cls(lo, hi, 1.0 if maximize else -1.0, bool(unit), bool(clip))

    @classmethod
    def for_algorithm(cls, algorithm: str, epsilon, value_range, *, maximize: bool) -> RewardScale:
        """The fixed scale of ``value_range`` for ``algorithm`` (a resolved name): rewards in
        ``[0, 1]`` for the algorithms whose registry entry says so (the qff ones), clipped there
        for joint DP (its privatizer sees raw scores)."""
        spec = REGISTRY[algorithm]
        return cls.from_range(
            value_range,
            maximize=maximize,
            unit=spec.reward_unit == "unit",
            clip=spec.privacy_model(epsilon) == PrivacyModel.JDP,
        )

    @classmethod
    def from_values(cls, values, *, maximize: bool = True) -> RewardScale:
        """The range of the finite observed ``values`` (non-private use without a range)."""
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 0.0)
        return cls(lo, hi, 1.0 if maximize else -1.0)

    @property
    def lowest(self) -> float:
        """The lowest reward of the range (0 with ``unit``, else -1): a failure's penalty."""
        return 0.0 if self.unit else -1.0

    def to_score(self, rewards) -> np.ndarray:
        """Scores of ``rewards``, the inverse map (``lo`` for every reward when ``lo == hi``)."""
        r = np.asarray(rewards, dtype=float)
        if self.unit:
            r = 2.0 * r - 1.0
        return (self.sign * r * (self.hi - self.lo) + self.lo + self.hi) / 2.0

    def to_score_sd(self, sd) -> np.ndarray:
        """Standard deviations of rewards in score units."""
        factor = (self.hi - self.lo) / (1.0 if self.unit else 2.0)
        return np.asarray(sd, dtype=float) * abs(factor)

    def affine_to(self, other: RewardScale) -> tuple[float, float] | None:
        """``(a, b)`` with ``other(v) = a self(v) + b`` for every score ``v``; ``None`` when
        no such map exists (a clipped or a constant scale, or another direction).

        Parameters
        ----------
        other : RewardScale

        Returns
        -------
        (float, float) or None
        """
        if (
            self.clip
            or other.clip
            or self.sign != other.sign
            or not self.hi > self.lo
            or not other.hi > other.lo
        ):
            return None
        r0, r1 = self(np.array([self.lo, self.hi]))
        s0, s1 = other(np.array([self.lo, self.hi]))
        a = float((s1 - s0) / (r1 - r0))
        return a, float(s0 - a * r0)

    def __call__(self, values) -> np.ndarray:
        """Rewards of ``values``; infinite scores are clipped to ``[lo, hi]`` first."""
        v = np.asarray(values, dtype=float)
        v = np.where(np.isposinf(v), max(self.hi, self.lo), v)
        v = np.where(np.isneginf(v), min(self.lo, self.hi), v)
        width = self.hi - self.lo
        if width <= 0:
            return np.zeros_like(v)
        r = self.sign * (2.0 * v - self.lo - self.hi) / width
        if self.unit:
            r = (r + 1.0) / 2.0
        if self.clip:
            r = np.clip(r, 0.0 if self.unit else -1.0, 1.0)
        return r


class Replay:
    """An optimizer that follows an ordered history, rebuilt only when it must be.

    :meth:`sync` brings the optimizer in line with the history ``(keys, X, rewards)``: if the
    cached optimizer was built for the same ``context`` and its history is a prefix of the new
    one, only the new rewards are told; otherwise a fresh optimizer is built and the whole
    history replayed. Because every optimizer's state is a function of its told history and
    seed, both paths give the same model.
    """

    def __init__(self) -> None:
        self._context: Hashable | None = None
        self._keys: list[Hashable] = []
        self._optimizer: BaseOptimizer | None = None
        self._scale: RewardScale | None = None
        #: Number of full rebuilds so far (for tests and benchmarks).
        self.n_rebuilds = 0

    def _rescale(self, scale: RewardScale | None, exact: np.ndarray | None) -> bool:
        """Map the cached optimizer's told rewards into ``scale``; whether it could be done
        (not with a failure's exact penalty told: it stays the lowest reward of each scale)."""
        if scale is None or self._scale is None or (exact is not None and np.any(exact)):
            return False
        affine = self._scale.affine_to(scale)
        assert self._optimizer is not None
        return affine is not None and self._optimizer.rescale(*affine)

    def sync(
        self,
        context: Hashable,
        factory: Callable[[], BaseOptimizer],
        keys: Sequence[Hashable],
        X: np.ndarray,
        rewards: np.ndarray,
        exact: np.ndarray | None = None,
        scale: RewardScale | None = None,
    ) -> BaseOptimizer:
        """Return an optimizer told exactly ``(X, rewards)`` in order, pending points cleared.

        When only the reward ``scale`` changed (the observed range of a study without a
        declared one grew), an optimizer whose model an affine map of its rewards leaves
        unchanged (:meth:`~privtune.optimizers.base.BaseOptimizer.rescale`) has its told
        rewards mapped instead of being rebuilt; otherwise a new scale rebuilds it.

        Parameters
        ----------
        context : hashable
            Everything besides the history that the model depends on (search space, reward
            scale, algorithm settings); a change forces a rebuild.
        factory : callable
            Builds a fresh optimizer for ``context``.
        keys : sequence of hashable
            One identifier per history row (e.g. the trial number), in order.
        X : ndarray of shape (n, dim)
        rewards : ndarray of shape (n,)
        exact : ndarray of bool of shape (n,), optional
            Rows whose reward is exact (a failure's penalty, which no curator released): told
            with noise variance 0 instead of the optimizer's ``noise_var``.
        scale : RewardScale, optional
            The scale ``rewards`` are in (part of the context, see above).

        Returns
        -------
        BaseOptimizer
        """
        keys = list(keys)
        n_old = len(self._keys)
        reuse = (
            self._optimizer is not None
            and context == self._context
            and len(keys) >= n_old
            and keys[:n_old] == self._keys
        )
        if reuse and scale != self._scale:
            reuse = self._rescale(scale, None if exact is None else exact[:n_old])
        if not reuse:
            self._optimizer = factory()
            self._context = context
            self._keys = []
            n_old = 0
            self.n_rebuilds += 1
        self._scale = scale
        opt = self._optimizer
        assert opt is not None
        opt.clear_pending()
        if len(keys) > n_old:
            try:
                noise = None if exact is None else np.where(exact[n_old:], 0.0, opt.noise_var)
                opt.tell(X[n_old:], rewards[n_old:], noise)
            except BaseException:
                self.clear()
                raise
        self._keys = keys
        return opt

    @property
    def optimizer(self) -> BaseOptimizer | None:
        """The cached optimizer (``None`` before the first :meth:`sync`)."""
        return self._optimizer

    def clear(self) -> None:
        """Forget the cached optimizer (the count of rebuilds restarts too)."""
        self._context = None
        self._keys = []
        self._optimizer = None
        self._scale = None
        self.n_rebuilds = 0


def recommend(model, *, baseline: int | None = None, eligible=None, external=None) -> int:
    """The one recommendation rule: the row of the pick among ``model``'s told points.

    The best posterior mean among the eligible told points (ties: the best told reward), with
    ``baseline`` kept unless another point beats it with posterior probability
    :func:`~privtune.acquisition.baseline_level`
    (:func:`privtune.acquisition.recommend_index`); of a configuration told several times, its
    first row.

    Parameters
    ----------
    model : BaseOptimizer or privtune.federated.FTSAgent
        Anything with ``recommend_row(baseline, eligible)``.
    baseline : int, optional
        Row of a told point to keep unless beaten.
    eligible : array_like of bool, optional
        Rows that may be picked (default: all).
    external : (float, float), optional
        A baseline outside the model's points (reward, noise variance), kept unless beaten:
        ``-1`` stands for it (:meth:`privtune.optimizers.BaseOptimizer.recommend_row`).

    Returns
    -------
    int
    """
    if external is not None:
        return int(model.recommend_row(eligible=eligible, external=external))
    return int(model.recommend_row(baseline, eligible=eligible))


class TuningEngine:
    """One algorithm, run for an adapter: everything between released scores and proposals.

    The adapters (the Optuna sampler, the search estimator) hold one engine each; they read
    their framework's history, and the engine does the rest, the same way for both:

    - the **reward scale** (:meth:`scale`): the declared ``value_range`` fixed for the run
      (rewards in the unit of the algorithm's registry entry), or the observed range without
      one;
    - the **failure penalty**: a failed evaluation is told the lowest reward of the scale
      (:attr:`RewardScale.lowest`), as an exact value;
    - the **replay cache** (:meth:`sync`): one :class:`Replay` per stream of history (a study,
      a fit), rebuilt only when the history stops growing as a prefix;
    - the **ask policy** (:meth:`ask`): uniform proposals until ``n_startup`` rewards were told
      (or, with exact scores, until half of them and one repeat that shows the objective
      deterministic: :meth:`startup_step`), then the acquisition; every proposal reseeded
      from its own key, so a rebuilt and a cached model propose the same point;
      :meth:`any_uniform_start` says when a start-up proposal may come from the adapter's own
      uniform sampler instead;
    - the **recommendation** (:meth:`recommend`).

    The curator of each score and the privacy report come from the adapter's
    :class:`~privtune.plan.PrivacyPlan`; the engine is built with its
    :attr:`~privtune.plan.PrivacyPlan.model_epsilon`.

    Parameters
    ----------
    algorithm : str
        A name of :data:`privtune.registry.REGISTRY` or ``"auto"`` (resolved with
        ``epsilon``; :attr:`algorithm` holds the result).
    epsilon : float, optional
        The privacy parameter the model is built with (``alpha`` for the qff algorithms;
        :attr:`PrivacyPlan.model_epsilon <privtune.plan.PrivacyPlan.model_epsilon>`, checked
        by the plan); ``None`` without privacy.
    value_range : tuple of float, optional
        The range of a score, checked by the plan; fixes the reward scale.
    optimizer_kwargs : dict, optional
        Overrides of the tuning defaults (checked against the optimizer's constructor).
    n_startup : int, default=10
        Rewards told before the acquisition is used (at most: see :meth:`startup_step`).
    budget : int, optional
        The number of evaluations, when known (the ``horizon`` of GO-UCB and the qff
        algorithms).
    heavy_tailed : bool, default=False
        The scores have heavy-tailed noise (see :func:`make_optimizer`).

    Examples
    --------
    >>> import numpy as np
    >>> from privtune.space import SearchSpace
    >>> from privtune.tuning import TuningEngine
    >>> engine = TuningEngine("gp-ucb", value_range=(0.0, 1.0), n_startup=2)
    >>> space = SearchSpace({"x": (0.0, 1.0)})
    >>> X, scores = np.array([[0.2], [0.7]]), np.array([0.5, 0.8])
    >>> opt, scale = engine.sync("run", space, [0, 1], X, scores, seed=0)
    >>> x = engine.ask(space, opt, n_told=2, key=[0, 2])
    >>> engine.recommend(opt)
    1
    """

    def __init__(
        self,
        algorithm: str,
        *,
        epsilon: float | None = None,
        value_range: tuple[float, float] | None = None,
        optimizer_kwargs: dict[str, Any] | None = None,
        n_startup: int = 10,
        budget: int | None = None,
        heavy_tailed: bool = False,
    ) -> None:
        # the privacy settings come checked, from the adapter's PrivacyPlan
        self.epsilon = None if epsilon is None else float(epsilon)
        self.algorithm = resolve_algorithm(algorithm, self.epsilon)
        self.heavy_tailed = check_heavy_tailed(heavy_tailed, self.algorithm)
        self.spec = REGISTRY[self.algorithm]
        self.privacy = self.spec.privacy_model(self.epsilon)
        self.value_range = None if value_range is None else _pair(value_range)
        check_optimizer_kwargs(self.algorithm, optimizer_kwargs)
        self.optimizer_kwargs = dict(optimizer_kwargs or {})
        self.n_startup = int(n_startup)
        self.budget = None if budget is None else int(budget)
        self._replays: dict[Hashable, Replay] = {}
        self._exhausted = False  # the finite space's warning was given

    # -- scores to rewards ------------------------------------------------------------------
    def scale(self, values=(), *, maximize: bool = True, value_range=None) -> RewardScale:
        """The reward scale: of ``value_range`` (default: the engine's), fixed for the run, or
        of the finite observed ``values`` when there is no declared range."""
        declared = self.value_range if value_range is None else value_range
        if declared is not None:
            return RewardScale.for_algorithm(
                self.algorithm, self.epsilon, declared, maximize=maximize
            )
        return RewardScale.from_values(values, maximize=maximize)

    def rewards(self, scale: RewardScale, values, failed=None) -> np.ndarray:
        """``scale(values)``, with :attr:`RewardScale.lowest` for the ``failed`` rows."""
        values = np.asarray(values, dtype=float)
        if failed is None:
            return scale(values)
        failed = np.asarray(failed, dtype=bool)
        return np.where(failed, scale.lowest, scale(np.where(failed, 0.0, values)))

    # -- the optimizer ------------------------------------------------------------------------
    def build(self, space: Space, *, seed=None, noise_seed: int | None = None) -> BaseOptimizer:
        """A fresh optimizer for ``space`` with the algorithm's tuning defaults."""
        return make_optimizer(
            self.algorithm,
            space.dim,
            epsilon=self.epsilon,
            seed=seed,
            snap=space.snap,
            optimizer_kwargs=self.optimizer_kwargs,
            budget=self.budget,
            noise_seed=noise_seed,
            layout=space.layout,
            heavy_tailed=self.heavy_tailed,
        )

    def sync(
        self,
        stream: Hashable,
        space: Space,
        keys: Sequence[Hashable],
        X: np.ndarray,
        values: np.ndarray,
        *,
        failed: np.ndarray | None = None,
        maximize: bool = True,
        seed=None,
        noise_seed: int | None = None,
        context: Hashable = (),
    ) -> tuple[BaseOptimizer, RewardScale]:
        """The optimizer of ``stream`` told exactly this history, and the scale it was told in.

        Parameters
        ----------
        stream : hashable
            Which history this is (a study, a fit): each has its own cached optimizer.
        space : SearchSpace or SpaceUnion
            The search space the points ``X`` encode.
        keys : sequence of hashable
            One identifier per history row, in order (e.g. trial numbers).
        X : ndarray of shape (n, dim)
        values : ndarray of shape (n,)
            The released scores (NaN where ``failed``).
        failed : ndarray of bool of shape (n,), optional
            Failed evaluations: told :attr:`RewardScale.lowest`, as exact values.
        maximize : bool, default=True
        seed : int or sequence of int, optional
            The optimizer's seed (part of the cache's context).
        noise_seed : int, optional
            The qff algorithms' privacy-noise seed (part of the cache's context).
        context : hashable, default=()
            Anything else the model depends on (e.g. the search space's distributions).

        Returns
        -------
        optimizer : BaseOptimizer
        scale : RewardScale
        """
        values = np.asarray(values, dtype=float)
        ok = values if failed is None else values[~np.asarray(failed, dtype=bool)]
        scale = self.scale(ok, maximize=maximize)
        replay = self._replays.setdefault(stream, Replay())
        opt = replay.sync(
            (context, _hashable(seed), noise_seed),
            lambda: self.build(space, seed=seed, noise_seed=noise_seed),
            keys,
            X,
            self.rewards(scale, values, failed),
            failed,
            scale,
        )
        return opt, scale

    def replay(self, stream: Hashable) -> Replay:
        """The replay cache of ``stream`` (created empty when there is none yet)."""
        return self._replays.setdefault(stream, Replay())

    def probes(self, space: Space) -> bool:
        """Whether the start-up tests the objective for determinism (see :meth:`startup_step`):
        exact scores (no ``epsilon``, not ``heavy_tailed``), the ``"gp-ucb"`` algorithm,
        ``n_startup`` of at least 4 and a space with a real parameter (in a finite space the
        search covers each configuration once, as scikit-learn's searches do)."""
        return (
            space.n_configurations is None
            and self.epsilon is None
            and not self.heavy_tailed
            and self.algorithm == "gp-ucb"
            and self.n_startup >= 4
        )

    def any_uniform_start(self, space: Space, n_told: int) -> bool:
        """Whether the next proposal may come from any uniform sampler (an adapter's own, such
        as Optuna's ``RandomSampler``) before the model is built: fewer than ``n_startup``
        rewards were told (half of them when the start-up :meth:`probes`: what comes next
        depends on the history, :meth:`startup_step`) and :meth:`adapter_draws`."""
        first = self.n_startup // 2 if self.probes(space) else self.n_startup
        return n_told < first and self.adapter_draws(space)

    def adapter_draws(self, space: Space) -> bool:
        """Whether a start-up draw (:meth:`startup_step` ``"uniform"``) may come from the
        adapter's own uniform sampler: the space has a real parameter (so uniform draws do not
        repeat a configuration; in a finite space :meth:`ask`'s draws are distinct) and the
        algorithm does not repeat its plays (MoMA's start-up repeats each one ``k`` times)."""
        return space.n_configurations is None and not self.spec.repeated_plays

    def startup_step(self, space: Space, opt: BaseOptimizer, n_told: int) -> str:
        """What the next proposal is, given ``n_told`` rewards told or being proposed:
        ``"uniform"`` (a start-up draw), ``"again"`` (the best told configuration again) or
        ``"model"`` (the acquisition).

        Without :meth:`probes`, uniform while ``n_told < n_startup``. With it, the start-up
        asks the objective whether it is deterministic: after ``n_startup // 2`` uniform draws
        the best told configuration is proposed again; when its second score equals its first
        (:meth:`BaseOptimizer.repeats`), the start-up ends there and the model takes over;
        otherwise (a noisy objective, or the repeat was not told) uniform draws go on until
        ``n_startup`` rewards, the repeat counted among them. A deterministic objective spends
        one evaluation on the question and gains ``n_startup // 2 - 1`` model-guided trials;
        a noisy one keeps its ``n_startup`` start-up trials, one of them a replicate.
        """
        if not self.probes(space):
            return "uniform" if n_told < self.n_startup else "model"
        half = self.n_startup // 2
        if n_told < half:
            return "uniform"
        n_repeats, agree = opt.repeats()
        if n_repeats and agree:
            return "model"
        if not n_repeats and n_told == half and opt.t == half:
            return "again"
        return "uniform" if n_told < self.n_startup else "model"

    def ask(
        self, space: Space, opt: BaseOptimizer, *, n_told: int, key, pending=None
    ) -> np.ndarray:
        """The next proposal in ``space``, as :meth:`startup_step` says; its randomness is
        seeded by ``key``."""
        opt.reseed(key)
        step = self.startup_step(space, opt, n_told)
        if step == "again":
            return opt.ask_again()
        return opt.ask(pending=pending, uniform=step == "uniform")

    def warn_if_exhausted(self, space: Space, opt: BaseOptimizer, pending, x: np.ndarray) -> None:
        """With exact scores, warn once when the told and pending points and the proposal
        ``x`` hold every configuration of a finite space (:meth:`SearchSpace.covered_by`): a
        repeat returns the same score. The caller's run goes on (an Optuna sampler does not
        end a study that asked for ``n_trials``; Optuna's conformance tests hold it to that)."""
        if self.epsilon is not None or self._exhausted:
            return
        parts = [opt.X, np.reshape(x, (1, -1))]
        if pending is not None:
            parts.append(np.asarray(pending, dtype=float))
        if not space.covered_by(np.vstack(parts)):
            return
        self._exhausted = True
        warnings.warn(
            f"Every one of the {space.n_configurations} configurations of the search space "
            "has been evaluated (or is running); with exact scores a repeat returns the same "
            "score. Stop the study (study.stop() in a callback, or fewer n_trials), or widen "
            "the space.",
            UserWarning,
            stacklevel=3,
        )

    # -- results -------------------------------------------------------------------------------
    def recommend(
        self,
        opt: BaseOptimizer | None,
        scale: RewardScale | None = None,
        *,
        baseline: int | None = None,
        outside: OutsideArm | None = None,
        eligible=None,
    ) -> int:
        """The row of the pick among ``opt``'s told points (:func:`recommend`), or ``-1`` for
        the arm ``outside``.

        The baseline, kept unless a told point beats it with posterior probability
        :func:`~privtune.acquisition.baseline_level`, is either the told row ``baseline`` or,
        when the space cannot encode its values (an untuned estimator's ``None``), the arm
        ``outside``: its score and that score's noise variance, in score units (``scale``
        converts them to rewards). An arm whose score is not finite (a failure) is no
        candidate; without a told point (``opt`` ``None``, or none ``eligible``) the arm is
        the pick.
        """
        if outside is not None and not math.isfinite(outside.score):
            outside = None
        told = opt is not None and (eligible is None or bool(np.any(eligible)))
        if not told:
            if outside is None:
                raise ValueError("no evaluated configuration with a finite score to recommend.")
            return -1
        assert opt is not None
        if outside is None:
            return recommend(opt, baseline=baseline, eligible=eligible)
        if baseline is not None or scale is None:
            raise ValueError("an outside baseline needs the reward scale and no baseline row.")
        reward = float(scale(np.array([outside.score]))[0])
        width = float(scale(np.array([1.0]))[0] - scale(np.array([0.0]))[0])
        noise = outside.noise_var * width**2
        return recommend(opt, eligible=eligible, external=(reward, noise))

    @staticmethod
    def posterior_scores(opt: BaseOptimizer, scale: RewardScale, X) -> np.ndarray:
        """The posterior mean at ``X``, in score units."""
        mean, _ = opt.predict(X)
        return scale.to_score(mean)

    @staticmethod
    def posterior_band(opt: BaseOptimizer, scale: RewardScale, X) -> tuple[np.ndarray, np.ndarray]:
        """The posterior mean and standard deviation at ``X``, in score units."""
        mean, std = opt.predict(X)
        return scale.to_score(mean), scale.to_score_sd(std)


@dataclass(frozen=True)
class OutsideArm:
    """The untuned configuration when the space cannot encode its values (a ``None`` where
    the space has numbers, a value outside a range): an arm outside the cube, known by its
    score and that score's noise variance (score units), the baseline of the recommendation
    in both adapters (:meth:`TuningEngine.recommend`)."""

    score: float
    noise_var: float

    @property
    def std(self) -> float:
        """The standard deviation of the score's noise."""
        return math.sqrt(self.noise_var)


def _pair(value_range) -> tuple[float, float]:
    lo, hi = (float(v) for v in value_range)
    return lo, hi


def _hashable(seed) -> Hashable:
    """A seed as a cache key (a sequence of ints becomes a tuple)."""
    if isinstance(seed, (list, np.ndarray)):
        return tuple(int(s) for s in seed)
    return seed
