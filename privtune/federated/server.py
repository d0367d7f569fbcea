"""The central server of DP-FTS-DE (Dai, Low & Jaillet 2021, Alg. 1).

In every round ``t`` the server receives one vector ``omega_{n,t}`` (of length ``M``, the shared
features' dimension) from each agent and broadcasts ``P`` vectors ``omega_t^(i)``, one per
sub-region. With privacy on (``z`` given) that is Alg. 1 exactly:

- line 6, Poisson subsampling: each agent is selected independently with probability ``q``;
- line 9, clipping: ``omega_hat = omega / max(1, ||omega||_2 / (S / sqrt(P)))``;
- line 10, weighted sum over the selected agents, divided by ``q``:
  ``omega^(i) = sum_{n in S_t} (phi_n^(i) / q) omega_hat_n``;
- line 11, Gaussian noise on every coordinate with standard deviation ``z phi_max S / q``,
  ``phi_max`` the largest weight of the round.

The ``P`` vectors are one Gaussian mechanism on the joint vector (Sec. 3.3): a selected agent
moves it by at most ``phi_max S / q`` in L2 norm, so the noise multiplier of every round is
``z`` and the rounds compose as the Poisson-subsampled Gaussian mechanism, accounted by
:func:`privtune.privacy.accounting.subsampled_gaussian_epsilon` (one agent's whole contribution
present or replaced by nothing, with ``N`` and the assignment public: user-level DP).

Weights (Sec. 3.2 and App. B): ``phi_n^(i) = softmax_n((a 1[n explores X_i] + 1) / T_t)`` with
``a = 15`` and the temperature ``T_t = a / (a_t - 1)``, where ``a_t = a + 1`` for the first
``hold`` rounds, decreases linearly to 1 over the next ``decay`` rounds and is 1 afterwards
(``T = inf``, uniform weights ``1 / N``). The paper uses ``(hold, decay) = (5, 5)`` on its
synthetic functions and ``(10, 30)`` in its real-world experiments.

Without privacy (``z=None``: FTS and FTS-DE) the server keeps the weighted average of Alg. 1
and drops what only privacy needs: every agent is used (``q = 1``), nothing is clipped unless
``S`` is given, and no noise is added.

An agent that fails in a round sends nothing (``None``). Subsampling is drawn before the
vectors are looked at, and a selected agent that sent nothing contributes the zero vector: a
vector inside the clipping ball like any other, so the mechanism, its sensitivity and its
accounting are those of every other round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._checks import check_float, check_int
from ..privacy.accounting import subsampled_gaussian_epsilon

__all__ = ["DPFTSServer", "RoundStats", "inverse_temperature", "softmax_weights"]


def inverse_temperature(t: int, a: float = 15.0, hold: int = 10, decay: int = 30) -> float:
    """``1 / T_t = (a_t - 1) / a``, the inverse temperature of round ``t`` (App. B).

    ``a_t = a + 1`` for ``t <= hold``; then it falls linearly from ``a + 1`` (at ``t = hold +
    1``) to 1 (at ``t = hold + decay``); and ``a_t = 1`` afterwards. Round 0 (the
    initialization) uses round 1's value.

    Examples
    --------
    >>> [round(15 * inverse_temperature(t, hold=5, decay=5) + 1, 2) for t in range(5, 12)]
    [16.0, 16.0, 12.25, 8.5, 4.75, 1.0, 1.0]
    """
    t = max(int(t), 1)
    if t <= hold:
        a_t = a + 1.0
    elif t <= hold + decay:
        a_t = a + 1.0 if decay == 1 else (a + 1.0) - a * (t - hold - 1) / (decay - 1)
    else:
        a_t = 1.0
    return (a_t - 1.0) / a


def softmax_weights(assignment, n_regions: int, inverse_temperature: float, a: float = 15.0):
    """The weights ``phi_n^(i)`` of every sub-region, shape ``(P, N)``; each row sums to 1.

    Parameters
    ----------
    assignment : array-like of int, shape (N,)
        The sub-region each agent explored at initialization.
    n_regions : int
        ``P``.
    inverse_temperature : float
        ``1 / T``; 0 gives uniform weights.
    a : float, default=15
        The bonus of the agents assigned to the sub-region.
    """
    assignment = np.asarray(assignment)
    indicator = assignment[None, :] == np.arange(n_regions)[:, None]
    logits = (a * indicator + 1.0) * inverse_temperature
    logits -= logits.max(axis=1, keepdims=True)
    w = np.exp(logits)
    return w / w.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class RoundStats:
    """What the server did in one round (its own log: not a private release).

    Attributes
    ----------
    n_selected : int
        Agents selected by Poisson subsampling.
    n_clipped : int
        Selected agents whose vector was longer than ``S / sqrt(P)``.
    n_missing : int
        Selected agents that sent nothing (failed), counted as zero vectors.
    phi_max : float
        Largest weight of the round.
    noise_std : float
        Standard deviation of the Gaussian noise per coordinate (0 without privacy).
    """

    n_selected: int
    n_clipped: int
    n_missing: int
    phi_max: float
    noise_std: float


class DPFTSServer:
    """The central server of DP-FTS-DE (Alg. 1), and of FTS / FTS-DE without privacy.

    Parameters
    ----------
    assignment : array-like of int, shape (N,)
        The sub-region each of the ``N`` agents explores at initialization (line 2 of Alg. 2),
        in ``[0, P)``.
    n_features : int
        ``M``, the length of every agent's vector.
    n_regions : int, default=1
        ``P``; 1 is DP-FTS / FTS (no distributed exploration).
    q : float, default=1.0
        Poisson sampling probability, in ``(0, 1]``.
    z : float or None, default=None
        Noise multiplier, ``> 0``; ``None`` turns privacy off (FTS, FTS-DE).
    S : float or None, default=None
        Clipping threshold of the joint vector, ``> 0``; required when ``z`` is given. Each
        agent's vector is clipped to ``S / sqrt(P)``.
    a : float, default=15.0
        Weight bonus of the agents assigned to a sub-region (the paper's ``a = 15``).
    weight_schedule : tuple of int, default=(10, 30)
        ``(hold, decay)`` of the temperature schedule (App. B, real-world experiments).
    seed : int or None
        Seed of the subsampling and the noise.

    Attributes
    ----------
    n_releases : int
        Rounds aggregated so far (the compositions the accountant counts).
    """

    def __init__(
        self,
        assignment,
        n_features: int,
        *,
        n_regions: int = 1,
        q: float = 1.0,
        z: float | None = None,
        S: float | None = None,
        a: float = 15.0,
        weight_schedule: tuple[int, int] = (10, 30),
        seed: int | None = None,
    ) -> None:
        self.n_features = check_int("n_features", n_features)
        self.n_regions = check_int("n_regions", n_regions)
        assignment = np.asarray(assignment)
        if (
            assignment.ndim != 1
            or assignment.size == 0
            or not np.issubdtype(assignment.dtype, np.integer)
        ):
            raise ValueError("assignment must be a non-empty 1-d array of ints (one per agent).")
        if assignment.min() < 0 or assignment.max() >= self.n_regions:
            raise ValueError(f"assignment values must be in [0, n_regions={self.n_regions}).")
        self.n_agents = int(assignment.size)
        if self.n_regions > self.n_agents:
            raise ValueError(
                f"n_regions (P={self.n_regions}) must be at most the number of agents "
                f"({self.n_agents}): each sub-region needs an agent to explore it."
            )
        self.assignment = assignment.astype(int)
        self.q = check_float("q", q, low=0.0, high=1.0)
        self.z = None if z is None else check_float("z", z, low=0.0)
        self.S = None if S is None else check_float("S", S, low=0.0)
        if self.z is not None and self.S is None:
            raise ValueError("S (the clipping threshold) is required when z is given.")
        if self.z is None and self.q != 1.0:
            raise ValueError(
                "q < 1 subsamples agents for privacy; without z (no noise) there is no privacy "
                "to amplify. Give z, or leave q=1."
            )
        self.a = check_float("a", a, low=0.0)
        if not (isinstance(weight_schedule, (tuple, list)) and len(weight_schedule) == 2):
            raise ValueError(
                "weight_schedule must be a pair (hold, decay) of ints: the rounds the "
                f"central weight is held, then the rounds it decays over; got {weight_schedule!r}."
            )
        hold, decay = weight_schedule
        self.hold = check_int("weight_schedule[0] (hold)", hold, minimum=0)
        self.decay = check_int("weight_schedule[1] (decay)", decay, minimum=1)
        self._rng = np.random.default_rng(seed)
        self.n_releases = 0

    @property
    def private(self) -> bool:
        """Whether the broadcasts are (epsilon, delta) user-level DP."""
        return self.z is not None

    def weights(self, t: int) -> np.ndarray:
        """``phi_n^(i)`` of round ``t``, shape ``(P, N)``."""
        tau = inverse_temperature(t, self.a, self.hold, self.decay)
        return softmax_weights(self.assignment, self.n_regions, tau, self.a)

    def aggregate(
        self, vectors: Sequence[np.ndarray | None], t: int
    ) -> tuple[np.ndarray, RoundStats]:
        """Lines 5-12 of Alg. 1: the broadcast of round ``t``.

        Parameters
        ----------
        vectors : sequence of ndarray of shape (M,) or None
            ``omega_{n,t}`` of each agent in order; ``None`` for an agent that failed.
        t : int
            The round (it sets the weights' temperature).

        Returns
        -------
        broadcast : ndarray of shape (P, M)
            ``omega_t^(i)`` for every sub-region.
        stats : RoundStats
            The server's own log of the round.
        """
        if len(vectors) != self.n_agents:
            raise ValueError(
                f"expected {self.n_agents} vectors (one per agent), got {len(vectors)}."
            )
        for n, v in enumerate(vectors):
            if v is None:
                continue
            v = np.asarray(v)
            if v.shape != (self.n_features,):
                raise ValueError(
                    f"agent {n} sent a vector of shape {v.shape}; the shared features have "
                    f"M={self.n_features} coordinates, so every vector must have shape "
                    f"({self.n_features},)."
                )
            if not np.all(np.isfinite(v)):
                raise ValueError(f"agent {n} sent a vector with NaN or infinite coordinates.")
        phi = self.weights(t)
        phi_max = float(phi.max())
        # line 6, drawn before any vector is read (a failure cannot change who is selected)
        selected = (
            np.flatnonzero(self._rng.random(self.n_agents) < self.q)
            if self.private
            else np.arange(self.n_agents)
        )
        omega = np.zeros((self.n_regions, self.n_features))
        n_clipped = n_missing = 0
        bound = None if self.S is None else self.S / math.sqrt(self.n_regions)
        for n in selected.tolist():
            v = vectors[n]
            if v is None:
                n_missing += 1
                continue
            v = np.asarray(v, dtype=float)
            if bound is not None:
                norm = float(np.linalg.norm(v))
                if norm > bound:
                    n_clipped += 1
                v = v / max(1.0, norm / bound)  # line 9
            omega += np.outer(phi[:, n] / self.q, v)  # line 10
        noise_std = 0.0
        if self.private:
            assert self.z is not None and self.S is not None  # what private means
            noise_std = self.z * phi_max * self.S / self.q
            omega += self._rng.normal(0.0, noise_std, size=omega.shape)  # line 11
        self.n_releases += 1
        stats = RoundStats(int(selected.size), n_clipped, n_missing, phi_max, noise_std)
        return omega, stats

    def epsilon(self, delta: float, accountant: str | None = None) -> float:
        """The privacy loss of the broadcasts so far at ``delta`` (``inf`` without privacy)."""
        if not self.private:
            return math.inf
        assert self.z is not None
        return subsampled_gaussian_epsilon(self.q, self.z, self.n_releases, delta, accountant)

    def __repr__(self) -> str:
        return (
            f"DPFTSServer(n_agents={self.n_agents}, n_features={self.n_features}, "
            f"n_regions={self.n_regions}, q={self.q}, z={self.z}, S={self.S})"
        )
