"""What the Optuna sampler and the search estimator share, once, below both.

- :data:`ALGORITHMS` and :func:`make_optimizer`: algorithm names to optimizers, with the
  defaults used for hyperparameter tuning (a Matérn-5/2 kernel whose lengthscale grows with the
  dimension and is refitted by ML-II, rewards in ``[-1, 1]``; quadrature Fourier features and
  rewards in ``[0, 1]`` for the algorithms of Dubey 2021);
- :func:`privacy_model` and :func:`make_curator`: which privacy model an algorithm runs under
  with ``epsilon`` set, and the curator that releases each score in the data owner's process
  (none for joint DP, whose trusted privatizer sees the raw scores);
- :class:`RewardScale`: scores (either direction, any range) to the centred rewards the
  optimizers assume;
- :class:`Replay`: an optimizer rebuilt from an ordered history, reused while the history only
  grows (the cache of a stateless sampler, never relied on);
- :func:`privacy_summary`: the privacy report, as both adapters state it (the recommendation
  is :meth:`privtune.optimizers.BaseOptimizer.recommend_row`, one rule for every caller).

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

from .cube import Block
from .kernels import Matern
from .optimizers import (
    ATAGPUCB,
    GOUCB,
    GPUCB,
    QFFGPUCB,
    TGPUCB,
    BaseOptimizer,
    MoMAGPUCB,
    RandomSearch,
)
from .privacy.curator import GaussianCurator, LaplaceCurator, _check_value_range
from .privacy.gaussian import check_alpha_beta, local_jdp_noise_std
from .privacy.ledger import PrivacyLedger

__all__ = [
    "ALGORITHMS",
    "AUTO",
    "Replay",
    "RewardScale",
    "check_algorithm",
    "joint_dp_summary",
    "make_curator",
    "make_optimizer",
    "privacy_model",
    "privacy_summary",
    "resolve_algorithm",
    "warn_repeated_plays",
]

#: Algorithm names accepted by the adapters.
ALGORITHMS: dict[str, type[BaseOptimizer]] = {
    "moma": MoMAGPUCB,
    "ata": ATAGPUCB,
    "tgp": TGPUCB,
    "gp-ucb": GPUCB,
    "random": RandomSearch,
    "go-ucb": GOUCB,
    "qff-jdp": QFFGPUCB,
    "qff-ldp": QFFGPUCB,
}

#: The algorithms of Dubey (2021) and the privacy argument of :class:`QFFGPUCB` they run with.
QFF_PRIVACY = {"qff-jdp": "jdp", "qff-ldp": "local-jdp"}

#: Dubey's privacy failure probability ``beta`` when ``optimizer_kwargs`` gives none (Sec. 6).
QFF_DEFAULT_BETA = 0.1

#: The number of rewards the joint-DP tree holds when the caller does not know its budget.
QFF_DEFAULT_HORIZON = 1024


#: Quadrature nodes per dimension and lengthscale (on the unit cube) of the qff algorithms.
QFF_M_BAR = 10
QFF_LENGTHSCALE = 0.3

#: The surrogate's noise variance for exact (non-private) scores, in reward units.
NON_PRIVATE_LAM = 0.01


#: What ``algorithm="auto"`` resolves to, for exact scores and for scores released with
#: epsilon-LDP: the best measured in the tuning benchmark (docs/benchmarks.md, "The default
#: algorithm").
AUTO = {"exact": "gp-ucb", "ldp": "gp-ucb"}


def check_algorithm(algorithm: str) -> str:
    """Validate an algorithm name (one of :data:`ALGORITHMS`, or ``"auto"``)."""
    if not isinstance(algorithm, str) or (algorithm not in ALGORITHMS and algorithm != "auto"):
        raise ValueError(
            f"algorithm must be 'auto' or one of {sorted(ALGORITHMS)}, got {algorithm!r}."
        )
    return algorithm


def resolve_algorithm(algorithm: str, epsilon: float | None) -> str:
    """The algorithm a name stands for: ``"auto"`` is :data:`AUTO`'s choice for exact scores
    (``epsilon`` is None) or for LDP scores; any other name is itself."""
    if check_algorithm(algorithm) == "auto":
        return AUTO["exact" if epsilon is None else "ldp"]
    return algorithm


def warn_repeated_plays(algorithm: str, epsilon: float | None, *, stacklevel: int = 2) -> None:
    """Warn that ``"moma"`` without privacy evaluates each configuration ``k`` times for
    nothing: exact scores repeat exactly, and the median of identical means is the mean."""
    if algorithm == "moma" and epsilon is None:
        warnings.warn(
            "algorithm='moma' without epsilon plays each configuration k = 3 times; with exact "
            "scores the repeats are identical evaluations that cost time and teach nothing. "
            "Use algorithm='auto' (or 'gp-ucb') for exact scores.",
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
        params = inspect.signature(klass.__init__).parameters.values()
        names += [p.name for p in params if p.kind == p.KEYWORD_ONLY and p.name not in names]
        if not any(p.kind == p.VAR_KEYWORD for p in params):
            break
    return sorted(names)


def check_optimizer_kwargs(algorithm: str, optimizer_kwargs: dict[str, Any] | None) -> None:
    """Refuse a key of ``optimizer_kwargs`` that the algorithm's optimizer does not take."""
    if optimizer_kwargs is None:
        return
    if not isinstance(optimizer_kwargs, dict):
        raise TypeError(f"optimizer_kwargs must be a dict, got {type(optimizer_kwargs).__name__}.")
    allowed = optimizer_parameters(ALGORITHMS[check_algorithm(algorithm)])
    unknown = sorted(str(k) for k in optimizer_kwargs if k not in allowed)
    if unknown:
        raise ValueError(
            f"optimizer_kwargs has {unknown}, which algorithm={algorithm!r} "
            f"({ALGORITHMS[algorithm].__name__}) does not take. Allowed keys: {allowed}."
        )


def privacy_model(algorithm: str, epsilon: float | None) -> str | None:
    """The privacy model (docs/privacy.md) ``algorithm`` runs under with ``epsilon``.

    Parameters
    ----------
    algorithm : str
        One of :data:`ALGORITHMS`.
    epsilon : float or None
        The privacy parameter (``alpha`` for the qff algorithms, which require it).

    Returns
    -------
    {None, "ldp", "jdp", "local-jdp"}
        ``None`` without ``epsilon``; ``"jdp"`` ((alpha, beta)-joint DP, ``"qff-jdp"``: a
        trusted privatizer holds the raw scores and only the statistics it releases reach
        the learner); ``"local-jdp"`` ((alpha, beta)-local joint DP, ``"qff-ldp"``: each
        score is released with Gaussian noise where it is computed); ``"ldp"`` (epsilon-LDP
        on scores through the Laplace curator: every other algorithm).
    """
    check_algorithm(algorithm)
    if algorithm in QFF_PRIVACY:
        if epsilon is None:
            raise ValueError(
                f"algorithm={algorithm!r} is private by construction: set epsilon (the alpha "
                "of Dubey's (alpha, beta)-joint DP) and value_range (the score's range)."
            )
        return QFF_PRIVACY[algorithm]
    return None if epsilon is None else "ldp"


def make_curator(
    algorithm: str,
    epsilon: float | None,
    value_range: tuple[float, float] | None,
    *,
    optimizer_kwargs: dict[str, Any] | None = None,
    seed: int | np.random.Generator | None = None,
    ledger: PrivacyLedger | None = None,
) -> LaplaceCurator | GaussianCurator | None:
    """The curator that releases each score of ``algorithm`` in the data owner's process.

    - ``"ldp"``: :class:`~privtune.privacy.LaplaceCurator`, Laplace of scale
      ``(hi - lo) / epsilon``;
    - ``"local-jdp"``: :class:`~privtune.privacy.GaussianCurator` with Lemma 5's
      ``sigma_u`` for rewards in ``[0, 1]`` (``reward_bound = 1``), ``alpha = epsilon`` and
      ``beta`` from ``optimizer_kwargs`` (default :data:`QFF_DEFAULT_BETA`): the client's part
      of Alg. 3, the optimizer adds the rest (``client_noise=True``);
    - ``"jdp"`` and no privacy: ``None`` (raw scores go to the privatizer, or nowhere private).

    Parameters
    ----------
    algorithm : str
    epsilon : float or None
    value_range : tuple of float or None
        Required with privacy.
    optimizer_kwargs : dict, optional
        Read for ``beta`` (the qff algorithms).
    seed : int, numpy.random.Generator or None
        The curator's noise seed.
    ledger : PrivacyLedger, optional
        Where the curator records its releases.

    Returns
    -------
    LaplaceCurator, GaussianCurator or None
    """
    model = privacy_model(algorithm, epsilon)
    if model in (None, "jdp"):
        return None
    if value_range is None:
        raise ValueError(f"value_range is required with epsilon for algorithm={algorithm!r}.")
    assert epsilon is not None
    if model == "ldp":
        return LaplaceCurator(epsilon, value_range, seed=seed, ledger=ledger)
    alpha, beta = check_alpha_beta(epsilon, (optimizer_kwargs or {}).get("beta", QFF_DEFAULT_BETA))
    _, sigma_u = local_jdp_noise_std(alpha, beta, 1, reward_bound=1.0)
    return GaussianCurator(
        sigma_u, value_range, epsilon=alpha, delta=beta, seed=seed, ledger=ledger
    )


def default_lengthscale(dim: int) -> float:
    """Initial lengthscale on ``[0, 1]^dim``: ``0.2 sqrt(dim)``, within ``[0.2, 1.0]``.

    A fixed ``0.2`` (the papers' one-dimensional choice) makes every pair of points nearly
    uncorrelated in ten dimensions; the typical distance between uniform points grows as
    ``sqrt(dim / 6)``. ML-II refits it from the data as trials accumulate.
    """
    return float(min(max(0.2 * math.sqrt(dim), 0.2), 1.0))


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
) -> BaseOptimizer:
    """The optimizer of ``algorithm`` with the tuning defaults.

    ``"go-ucb"`` (:class:`~privtune.optimizers.GOUCB`) has no kernel: it gets ``epsilon``,
    ``seed``, ``snap`` and, when the number of evaluations is known, ``horizon = budget``;
    its other defaults are its own (the GO-UCB section of the optimizers guide).

    ``"qff-jdp"`` and ``"qff-ldp"`` (:class:`~privtune.optimizers.QFFGPUCB`, Dubey 2021) need
    ``epsilon`` (their ``alpha``); ``beta`` defaults to 0.1 (Sec. 6). Rewards are expected in
    ``[0, 1]`` (``RewardScale.from_range(..., unit=True)``), where the paper's sensitivities
    with ``reward_bound = 1`` bound the change of any reward. Quadrature features with
    ``m_bar = 10`` nodes at lengthscale 0.3 (a measured kernel error of 3e-3 per coordinate),
    the full product kernel up to two dimensions (200 features) and the additive kernel above
    (``20 dim`` features, Sec. 6's choice for high dimensions), ``lam = 1``, the calibrated
    ``beta_scale``, and ``horizon = budget`` (default 1024): the joint-DP tree refuses more
    rewards than that. ``noise_seed`` is the privacy noise's seed, which a caller that
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
    ``layout``). ``optimizer_kwargs={"surrogate": "fixed"}`` gives the previous tuning
    defaults instead: the papers' fixed model with a Matérn-5/2 kernel of
    :func:`default_lengthscale`, its single lengthscale refitted by ML-II at powers of two,
    and ``lam = 0.01`` without privacy or ``1 + 8 / epsilon^2`` with it (what they cost is
    on the benchmarks page, "The surrogate").

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

    Returns
    -------
    BaseOptimizer
    """
    cls = ALGORITHMS[check_algorithm(algorithm)]
    check_optimizer_kwargs(algorithm, optimizer_kwargs)
    if cls is QFFGPUCB:
        model = privacy_model(algorithm, epsilon)
        qff: dict[str, Any] = {
            "privacy": model,
            "alpha": epsilon,
            "beta": QFF_DEFAULT_BETA,
            "additive": dim > 2,
            "m": QFF_M_BAR,
            "lengthscale": QFF_LENGTHSCALE,
            "reward_bound": 1.0,
            "client_noise": model == "local-jdp",
            "horizon": QFF_DEFAULT_HORIZON if budget is None else int(budget),
            "seed": seed,
            "noise_seed": noise_seed,
            "snap": snap,
        }
        qff.update(optimizer_kwargs or {})
        return QFFGPUCB(dim, **qff)
    if cls is GOUCB:
        go_kwargs: dict[str, Any] = {"epsilon": epsilon, "seed": seed, "snap": snap}
        if budget is not None:
            go_kwargs["horizon"] = int(budget)
        go_kwargs.update(optimizer_kwargs or {})
        return GOUCB(dim, **go_kwargs)
    kwargs: dict[str, Any] = {
        "B": 0.5,
        "R": 0.5,
        "epsilon": epsilon,
        "seed": seed,
        "snap": snap,
        "layout": layout,
        "raw_sampling": "sobol",
    }
    overrides = dict(optimizer_kwargs or {})
    if overrides.get("surrogate", "fitted") == "fitted":
        kwargs.update(
            surrogate="fitted",
            noise_var=0.0 if epsilon is None else laplace_noise_var(epsilon),
        )
    else:
        kwargs.update(
            kernel=Matern(default_lengthscale(dim), nu=2.5),
            fit_lengthscale=True,
            lam=NON_PRIVATE_LAM if epsilon is None else 1.0 + 8.0 / float(epsilon) ** 2,
        )
    kwargs.update(overrides)
    return cls(dim, **kwargs)


def laplace_noise_var(epsilon: float) -> float:
    """The variance ``2 (2 / epsilon)^2 = 8 / epsilon^2`` of the curator's Laplace noise in
    reward units: a score range ``hi - lo`` maps to 2, so the scale ``(hi - lo) / epsilon``
    becomes ``2 / epsilon``."""
    return 8.0 / float(epsilon) ** 2


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
        """The scale of a declared ``value_range`` (fixed, so a replayed model stays valid)."""
        lo, hi = _check_value_range(value_range)
        return cls(lo, hi, 1.0 if maximize else -1.0, bool(unit), bool(clip))

    @classmethod
    def for_algorithm(cls, algorithm: str, epsilon, value_range, *, maximize: bool) -> RewardScale:
        """The fixed scale of ``value_range`` for ``algorithm``: rewards in ``[0, 1]`` for the
        qff algorithms, clipped there for joint DP (its privatizer sees raw scores)."""
        model = privacy_model(algorithm, epsilon)
        return cls.from_range(
            value_range, maximize=maximize, unit=algorithm in QFF_PRIVACY, clip=model == "jdp"
        )

    @classmethod
    def from_values(cls, values, *, maximize: bool = True) -> RewardScale:
        """The range of the finite observed ``values`` (non-private use without a range)."""
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 0.0)
        return cls(lo, hi, 1.0 if maximize else -1.0)

    def to_score(self, rewards) -> np.ndarray:
        """Scores of ``rewards``, the inverse map (``lo`` for every reward when ``lo == hi``)."""
        r = np.asarray(rewards, dtype=float)
        if self.unit:
            r = 2.0 * r - 1.0
        return (self.sign * r * (self.hi - self.lo) + self.lo + self.hi) / 2.0

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
        #: Number of full rebuilds so far (for tests and benchmarks).
        self.n_rebuilds = 0

    def sync(
        self,
        context: Hashable,
        factory: Callable[[], BaseOptimizer],
        keys: Sequence[Hashable],
        X: np.ndarray,
        rewards: np.ndarray,
        exact: np.ndarray | None = None,
    ) -> BaseOptimizer:
        """Return an optimizer told exactly ``(X, rewards)`` in order, pending points cleared.

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
        if not reuse:
            self._optimizer = factory()
            self._context = context
            self._keys = []
            n_old = 0
            self.n_rebuilds += 1
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

    def clear(self) -> None:
        """Forget the cached optimizer."""
        self.__init__()


def privacy_summary(ledger: PrivacyLedger, delta: float = 1e-6) -> dict[str, Any]:
    """The adapters' privacy report: per-report epsilon and composed epsilon of ``ledger``.

    Parameters
    ----------
    ledger : PrivacyLedger
    delta : float, default=1e-6
        The delta of the advanced-composition and PLD bounds.

    Returns
    -------
    dict
        ``n_reports``, ``epsilon_per_report``, ``composed_epsilon_basic`` (pure epsilon-DP),
        and with at least one report ``delta``, ``composed_epsilon_advanced`` and
        ``composed_epsilon_pld`` (both (epsilon, delta)-DP).
    """
    out = ledger.summary(delta)
    if ledger.n_reports:
        out["composed_epsilon_pld"] = ledger.composed_epsilon("pld", delta)
    return out


def joint_dp_summary(alpha: float, beta: float, n_reports: int) -> dict[str, Any]:
    """The privacy report of ``"qff-jdp"`` after ``n_reports`` scores.

    Joint DP (Dubey 2021, Lemma 2 and Theorem 3) protects each score: whatever one score is,
    everything released (the statistics, so the proposals and the recommendation) changes in
    distribution by at most ``(alpha, beta)``, over the whole run of up to ``horizon`` scores;
    there is no per-score composition. In tuning every score is computed from the same data
    set, so a change of the data that moves all ``k`` scores is covered only through group
    privacy: ``k alpha``, with a delta that grows as ``k e^{(k - 1) alpha} beta``. The
    summary states the per-score guarantee and ``composed_epsilon_basic = k alpha``.

    Parameters
    ----------
    alpha, beta : float
        The joint-DP parameters.
    n_reports : int
        The number of scores the privatizer has taken.

    Returns
    -------
    dict
        ``privacy_model`` (``"jdp"``), ``n_reports``, ``epsilon_per_report``,
        ``delta_per_report`` and ``composed_epsilon_basic``.
    """
    return {
        "privacy_model": "jdp",
        "n_reports": int(n_reports),
        "epsilon_per_report": float(alpha),
        "delta_per_report": float(beta),
        "composed_epsilon_basic": float(alpha) * int(n_reports),
    }
