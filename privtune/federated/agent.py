"""An agent of DP-FTS-DE (Dai, Low & Jaillet 2021, Alg. 2): Thompson sampling on shared
random Fourier features.

The agent models its own objective with Bayesian linear regression on the shared features
``phi`` (eq. 2): with its history ``Phi_t`` (``t x M``) and rewards ``y_t``,

    Sigma_t = Phi_t^T Phi_t + lambda I,    nu_t = Sigma_t^{-1} Phi_t^T y_t,
    omega ~ N(nu_t, lambda Sigma_t^{-1}),

and ``f(x) = phi(x)^T omega`` is a sample of the (approximate) GP posterior. One call of
:meth:`FTSAgent.step` is one round of Alg. 2:

- round 0 (line 2): query ``n_init`` points drawn uniformly in the agent's sub-region;
- round ``t >= 1`` (lines 4-8): with probability ``1 - p_t`` (``server_prob(t)``) and a
  broadcast at hand, query ``argmax_x phi(x)^T omega_{t-1}^(i[x])``, the server's vector of the
  sub-region ``x`` lies in; otherwise query the argmax of a posterior sample (line 6);
- then (line 10) sample ``omega_{n,t}`` from the updated posterior: the message to the server.

Messages are plain arrays (the broadcast in, one vector of length ``M`` out), so an agent can
run in another process: :meth:`step` changes the agent's history only after the query and the
new vector are both computed, so an agent whose step raises keeps its history from before the
round (its generator has moved on).

Deviations from the paper, named: the features are :class:`~privtune.features.RandomFourierFeatures`
in cos/sin pairs (``M = 2 n_frequencies`` coordinates, ``||phi(x)|| = 1``) rather than
``sqrt(2/M) cos(w^T x + b)``; the posterior sample of line 6 is eq. 2 scaled by ``beta``
(default 1) instead of Theorem 1's ``beta_t``, which is far too conservative to use.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

from .._checks import check_float, check_int
from ..acquisition import argmax_random_tie, maximize, recommend_index
from ..features import RandomFourierFeatures
from .regions import SubRegions

__all__ = ["FTSAgent", "server_probability"]


def _inverse(t: int) -> float:
    return 1.0 / t


def _inverse_sqrt(t: int) -> float:
    return 1.0 / math.sqrt(t)


def _inverse_square(t: int) -> float:
    return 1.0 / t**2


def _never(t: int) -> float:
    return 0.0


# module-level functions, not lambdas: an agent must pickle to run in another process
_SCHEDULES: dict[str, Callable[[int], float]] = {
    "1/t": _inverse,
    "1/sqrt(t)": _inverse_sqrt,
    "1/t^2": _inverse_square,
    "never": _never,
}


def server_probability(schedule) -> Callable[[int], float]:
    """``t -> 1 - p_t``, the probability of choosing by the server's vectors in round ``t``.

    Parameters
    ----------
    schedule : {"1/t", "1/sqrt(t)", "1/t^2", "never"} or callable
        ``"1/sqrt(t)"`` is the paper's synthetic choice, ``"1/t"`` its real-world one,
        ``"1/t^2"`` Theorem 1's; ``"never"`` is standard Thompson sampling. A callable gets
        ``t >= 1`` and returns a probability in ``[0, 1]``.
    """
    if callable(schedule):
        return schedule
    if schedule not in _SCHEDULES:
        raise ValueError(
            f"server_prob must be one of {sorted(_SCHEDULES)} or a callable t -> 1 - p_t, "
            f"got {schedule!r}."
        )
    return _SCHEDULES[schedule]


class FTSAgent:
    """One agent of (DP-)FTS(-DE): Thompson sampling on shared Fourier features.

    Parameters
    ----------
    features : RandomFourierFeatures
        The shared feature map (every agent of a federation must use the same one).
    objective : callable
        ``objective(x) -> float``, the reward of a cube point ``x`` (larger is better). It runs
        wherever the agent runs.
    regions : SubRegions
        The sub-regions of the federation (``P = 1`` for no distributed exploration).
    region : int, default=0
        The sub-region this agent explores at initialization.
    n_init : int, default=10
        ``N_init``, initial points drawn in the agent's sub-region.
    lam : float, default=0.01
        ``lambda``: the ridge of ``Sigma_t`` and the scale of the posterior covariance (the
        noise variance of the rewards, in the GP reading of eq. 2).
    beta : float, default=1.0
        Scale of the posterior sample of line 6 (standard deviation multiplier).
    server_prob : str or callable, default="1/t"
        ``t -> 1 - p_t``; see :func:`server_probability`.
    candidates : ndarray of shape (n, dim), optional
        A finite decision set (as in the paper's synthetic experiment); otherwise the cube.
    snap : callable, optional
        Projection of cube points onto valid encodings (a search space's ``snap``).
    n_raw : int, default=1000
        Uniform raw samples of the acquisition on the cube (the paper's 1000).
    n_restarts : int, default=3
        L-BFGS-B refinements from the best raw samples (the paper uses 20).
    seed : int or None
        Seed of the agent's own randomness (initial points, samples, coin flips).

    Attributes
    ----------
    X : ndarray of shape (t, dim)
        Queried points, in order.
    y : ndarray of shape (t,)
        Their rewards.
    used_server : list of bool
        For each round ``t >= 1``, whether the query was chosen by the server's vectors.
    """

    def __init__(
        self,
        features: RandomFourierFeatures,
        objective: Callable[[np.ndarray], float],
        regions: SubRegions,
        *,
        region: int = 0,
        n_init: int = 10,
        lam: float = 0.01,
        beta: float = 1.0,
        server_prob="1/t",
        candidates: np.ndarray | None = None,
        snap: Callable[[np.ndarray], np.ndarray] | None = None,
        n_raw: int = 1000,
        n_restarts: int = 3,
        seed: int | None = None,
    ) -> None:
        if not callable(objective):
            raise TypeError(f"objective must be callable, got {type(objective).__name__}.")
        if features.dim != regions.dim:
            raise ValueError(
                f"features.dim ({features.dim}) and regions.dim ({regions.dim}) must agree."
            )
        self.features = features
        self.objective = objective
        self.regions = regions
        self.region = check_int("region", region, minimum=0)
        if self.region >= regions.n_regions:
            raise ValueError(f"region must be < n_regions={regions.n_regions}, got {region}.")
        self.n_init = check_int("n_init", n_init)
        self.lam = check_float("lam", lam, low=0.0)
        self.beta = float(beta)
        if not (math.isfinite(self.beta) and self.beta >= 0):
            raise ValueError(f"beta must be a finite float >= 0, got {beta!r}.")
        self.server_prob = server_probability(server_prob)
        self.candidates = None
        if candidates is not None:
            C = np.asarray(candidates, dtype=float)
            if C.ndim != 2 or C.shape[1] != features.dim or C.shape[0] == 0:
                raise ValueError(
                    f"candidates must have shape (n, {features.dim}) with n >= 1, got {C.shape}."
                )
            self.candidates = C
            self._phi_C = features(C)
            self._region_C = regions.index(C)
        self.snap = snap
        self.n_raw = check_int("n_raw", n_raw)
        self.n_restarts = check_int("n_restarts", n_restarts, minimum=0)
        self._rng = np.random.default_rng(seed)
        m = features.n_features
        self.X = np.empty((0, features.dim))
        self.y = np.empty(0)
        self.used_server: list[bool] = []
        self._A = np.zeros((m, m))  # Phi^T Phi
        self._b = np.zeros(m)  # Phi^T y

    @property
    def n_features(self) -> int:
        """``M``, the length of the agent's vectors."""
        return self.features.n_features

    # -- the posterior in feature space (eq. 2) -------------------------------------------
    def _posterior(self, A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        L = np.linalg.cholesky(A + self.lam * np.eye(A.shape[0]))
        nu = cho_solve((L, True), b)
        return nu, L

    def _sample(self, nu: np.ndarray, L: np.ndarray, scale: float = 1.0) -> np.ndarray:
        # omega = nu + scale sqrt(lambda) L^{-T} e has covariance scale^2 lambda Sigma^{-1}
        e = self._rng.standard_normal(nu.size)
        return nu + scale * math.sqrt(self.lam) * solve_triangular(L.T, e, lower=False)

    def posterior_mean(self, X) -> np.ndarray:
        """``phi(X)^T nu_t``, the posterior mean of the agent's objective."""
        nu, _ = self._posterior(self._A, self._b)
        return self.features(X) @ nu

    # -- choosing a query -------------------------------------------------------------------
    def recommend_row(self, baseline: int | None = None, *, eligible=None) -> int:
        """Row of the evaluated point with the best posterior mean (ties: the best reward).

        The rule of :func:`privtune.acquisition.recommend_index`; an agent evaluates no
        default configuration, so there is no baseline.
        """
        if baseline is not None:
            raise ValueError("an FTSAgent recommends without a baseline; got one.")
        if self.X.shape[0] == 0:
            raise RuntimeError("recommend_row() needs at least one evaluated point.")
        return recommend_index(self.posterior_mean(self.X), tiebreak=self.y, eligible=eligible)

    def _argmax(self, vectors: np.ndarray) -> np.ndarray:
        """``argmax_x phi(x)^T vectors[i[x]]``; ``vectors`` has one row per sub-region."""
        if self.candidates is not None:
            values = np.einsum("nm,nm->n", self._phi_C, vectors[self._region_C])
            return self.candidates[argmax_random_tie(values, self._rng)].copy()

        def acq(U: np.ndarray) -> np.ndarray:
            return np.einsum("nm,nm->n", self.features(U), vectors[self.regions.index(U)])

        return maximize(
            acq,
            self.features.dim,
            self._rng,
            snap=self.snap,
            n_raw=self.n_raw,
            n_restarts=self.n_restarts,
            batched_gradient=True,
        )

    def _initial_points(self) -> np.ndarray:
        if self.candidates is not None:
            pool = np.flatnonzero(self._region_C == self.region)
            if pool.size == 0:
                pool = np.arange(len(self.candidates))
            take = self._rng.choice(pool, size=self.n_init, replace=pool.size < self.n_init)
            return self.candidates[take].copy()
        U = self.regions.sample(self.region, self.n_init, self._rng)
        return U if self.snap is None else self.snap(U)

    # -- one round of Alg. 2 ----------------------------------------------------------------
    def step(self, t: int, broadcast: np.ndarray | None = None, *, send: bool = True):
        """Round ``t`` of Alg. 2: query, update, and (if ``send``) sample the message.

        Parameters
        ----------
        t : int
            The round; 0 is the initialization (``n_init`` queries in the agent's sub-region).
        broadcast : ndarray of shape (P, M), optional
            The server's vectors of round ``t - 1``; ``None`` when the server did not run.
        send : bool, default=True
            Whether to sample ``omega_{n,t}`` for the server.

        Returns
        -------
        ndarray of shape (M,) or None
            ``omega_{n,t}``, or ``None`` when ``send`` is false.
        """
        t = check_int("t", t, minimum=0)
        used = False
        if t == 0:
            U = self._initial_points()
        else:
            if broadcast is not None:
                broadcast = np.asarray(broadcast, dtype=float)
                expected = (self.regions.n_regions, self.n_features)
                if broadcast.shape != expected:
                    raise ValueError(
                        f"broadcast must have shape {expected} (P, M), got {broadcast.shape}."
                    )
                used = bool(self._rng.random() < self.server_prob(t))  # lines 4-5
            if used:
                assert broadcast is not None
                x = self._argmax(broadcast)  # line 8
            else:
                nu, L = self._posterior(self._A, self._b)
                omega = self._sample(nu, L, self.beta)  # line 6
                x = self._argmax(np.broadcast_to(omega, (self.regions.n_regions, omega.size)))
            U = x[None, :]
        y = np.array([float(self.objective(u)) for u in U])  # line 9
        if not np.all(np.isfinite(y)):
            raise ValueError(f"objective returned a non-finite reward {y.tolist()} at round {t}.")
        Phi = self.features(U)
        A = self._A + Phi.T @ Phi
        b = self._b + Phi.T @ y
        message = None
        if send:
            nu, L = self._posterior(A, b)
            message = self._sample(nu, L)  # line 10
        # commit only now: a step that raised above left the history unchanged
        self._A, self._b = A, b
        self.X = np.vstack([self.X, U])
        self.y = np.concatenate([self.y, y])
        if t > 0:
            self.used_server.append(used)
        return message

    def __repr__(self) -> str:
        return (
            f"FTSAgent(n_features={self.n_features}, region={self.region}, "
            f"n_observations={self.y.size})"
        )
