"""What the Optuna sampler and the search estimator share, once, below both (DESIGN.md §2).

- :data:`ALGORITHMS` and :func:`make_optimizer`: algorithm names to optimizers, with the
  defaults used for hyperparameter tuning (a Matérn-5/2 kernel whose lengthscale grows with the
  dimension and is refitted by ML-II, rewards in ``[-1, 1]``);
- :class:`RewardScale`: scores (either direction, any range) to the centred rewards the
  optimizers assume;
- :class:`Replay`: an optimizer rebuilt from an ordered history, reused while the history only
  grows (the cache of a stateless sampler, never relied on);
- :func:`recommended_row` and :func:`privacy_summary`: the recommendation among evaluated
  configurations and the privacy report, as both adapters state them.

Nothing here imports Optuna or scikit-learn.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .kernels import Matern
from .optimizers import ATAGPUCB, GOUCB, GPUCB, TGPUCB, BaseOptimizer, MoMAGPUCB, RandomSearch
from .privacy.curator import _check_value_range
from .privacy.ledger import PrivacyLedger

__all__ = [
    "ALGORITHMS",
    "Replay",
    "RewardScale",
    "check_algorithm",
    "make_optimizer",
    "privacy_summary",
    "recommended_row",
]

#: Algorithm names accepted by the adapters.
ALGORITHMS: dict[str, type[BaseOptimizer]] = {
    "moma": MoMAGPUCB,
    "ata": ATAGPUCB,
    "tgp": TGPUCB,
    "gp-ucb": GPUCB,
    "random": RandomSearch,
    "go-ucb": GOUCB,
}


#: The surrogate's noise variance for exact (non-private) scores, in reward units.
NON_PRIVATE_LAM = 0.01


def check_algorithm(algorithm: str) -> str:
    """Validate an algorithm name (one of :data:`ALGORITHMS`)."""
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(ALGORITHMS)}, got {algorithm!r}.")
    return algorithm


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
) -> BaseOptimizer:
    """The optimizer of ``algorithm`` with the tuning defaults.

    ``"go-ucb"`` (:class:`~privtune.optimizers.GOUCB`) has no kernel: it gets ``epsilon``,
    ``seed``, ``snap`` and, when the number of evaluations is known, ``horizon = budget``;
    its other defaults are its own (the GO-UCB section of the optimizers guide). The GP
    algorithms get the following.

    Rewards are expected in ``[-1, 1]`` (see :class:`RewardScale`), so ``B + R = 1``
    (``B = R = 0.5``): the curator's Laplace scale ``(hi - lo) / epsilon`` is then the papers'
    ``2 (B + R) / epsilon`` in reward units. The kernel is Matérn-5/2 with
    :func:`default_lengthscale` and ``fit_lengthscale=True``. The regulariser ``lam`` (the
    surrogate's noise variance, in reward units, against a prior variance of 1) is:

    - without privacy, ``lam = 0.01``: a cross-validated score with fixed folds is exact, so
      the surrogate should nearly interpolate it (a standard deviation of 0.1 in reward units
      leaves room for the jitter between neighbouring configurations). The papers' ``lam = 1``
      treats every score as half noise: GP-UCB then re-evaluates its best configuration
      instead of exploring (MLP on wine, seed 0: 16 distinct scores in 60 trials, 35 with
      ``lam = 0.01``). Measured with ``benchmarks/optuna_tuning.py run --optimizer-kwargs``
      (MLP on the four data sets, seeds 0 and 4, true CV accuracy after 60 trials, mean of 8
      runs): GP-UCB
      0.813 with ``lam = 1`` and 0.833 with ``lam = 0.01``; on wine and Pima (4 runs) TGP
      0.756 and 0.827, ATA 0.797 and 0.838, and MoMA (3 runs) 0.768 and 0.819.
      ``lam = 0.001`` gave GP-UCB 0.842 on wine and Pima, against 0.840 with ``0.01``;
    - with privacy, ``lam = 1 + 8 / epsilon^2``: the papers' ``lam = 1`` plus the variance
      ``2 (2 / epsilon)^2`` of the curator's Laplace noise in reward units, so that the
      posterior mean (the acquisition's and
      :meth:`~privtune.optimizers.BaseOptimizer.recommend`'s) weighs each noisy score as the
      noise warrants. Measured on the study of the test
      ``test_recommend_beats_best_trial_under_heavy_noise`` (20 seeds, epsilon = 1): the
      recommendation's mean true score is 0.926 with this ``lam`` and 0.859 with ``lam = 1``,
      where the argmax of noisy values scores 0.864. Replacing the ``1`` by ``0.01`` did not
      help: GP-UCB at epsilon = 10 on the MLP tasks above (``lam = 0.09`` against 1.08)
      scored 0.797 against 0.801 after 60 trials and 0.733 against 0.795 after 20.

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
        ``n_iter``): GO-UCB's ``horizon``.

    Returns
    -------
    BaseOptimizer
    """
    cls = ALGORITHMS[check_algorithm(algorithm)]
    if cls is GOUCB:
        go_kwargs: dict[str, Any] = {"epsilon": epsilon, "seed": seed, "snap": snap}
        if budget is not None:
            go_kwargs["horizon"] = int(budget)
        go_kwargs.update(optimizer_kwargs or {})
        return GOUCB(dim, **go_kwargs)
    kwargs: dict[str, Any] = {
        "kernel": Matern(default_lengthscale(dim), nu=2.5),
        "fit_lengthscale": True,
        "B": 0.5,
        "R": 0.5,
        "lam": NON_PRIVATE_LAM if epsilon is None else 1.0 + 8.0 / float(epsilon) ** 2,
        "epsilon": epsilon,
        "seed": seed,
        "snap": snap,
    }
    kwargs.update(optimizer_kwargs or {})
    return cls(dim, **kwargs)


@dataclass(frozen=True)
class RewardScale:
    """Affine map from scores to centred rewards: ``r = sign (2 y - lo - hi) / (hi - lo)``.

    Scores in ``[lo, hi]`` map to ``[-1, 1]``; ``sign`` is ``+1`` to maximise the score and
    ``-1`` to minimise it (the optimizers maximise). Privatized scores may lie outside
    ``[lo, hi]`` (the noise is unbounded) and map outside ``[-1, 1]``, as they should.

    Parameters
    ----------
    lo, hi : float
        The score range; ``lo == hi`` maps every score to 0.
    sign : {1.0, -1.0}
    """

    lo: float
    hi: float
    sign: float = 1.0

    @classmethod
    def from_range(cls, value_range, *, maximize: bool = True) -> RewardScale:
        """The scale of a declared ``value_range`` (fixed, so a replayed model stays valid)."""
        lo, hi = _check_value_range(value_range)
        return cls(lo, hi, 1.0 if maximize else -1.0)

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
        return (self.sign * r * (self.hi - self.lo) + self.lo + self.hi) / 2.0

    def __call__(self, values) -> np.ndarray:
        """Rewards of ``values``; infinite scores are clipped to ``[lo, hi]`` first."""
        v = np.asarray(values, dtype=float)
        v = np.where(np.isposinf(v), max(self.hi, self.lo), v)
        v = np.where(np.isneginf(v), min(self.lo, self.hi), v)
        width = self.hi - self.lo
        if width <= 0:
            return np.zeros_like(v)
        return self.sign * (2.0 * v - self.lo - self.hi) / width


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
                opt.tell(X[n_old:], rewards[n_old:])
            except BaseException:
                self.clear()
                raise
        self._keys = keys
        return opt

    def clear(self) -> None:
        """Forget the cached optimizer."""
        self.__init__()


def recommended_row(optimizer: BaseOptimizer, X: np.ndarray) -> int:
    """Index of the row of ``X`` (the told points, in order) that ``optimizer`` recommends.

    :meth:`~privtune.optimizers.BaseOptimizer.recommend` returns the evaluated point with the
    best posterior mean; this is the first row holding exactly that point.

    Parameters
    ----------
    optimizer : BaseOptimizer
        An optimizer told the rows of ``X``.
    X : ndarray of shape (n, dim)

    Returns
    -------
    int
    """
    x = optimizer.recommend()
    return int(np.argmin(np.sum((np.asarray(X, dtype=float) - x) ** 2, axis=1)))


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
