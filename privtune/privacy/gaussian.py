"""Gaussian mechanisms for the statistics of private GP-UCB on Fourier features (Dubey 2021).

The learner of Algorithm 1 needs ``Sigma_t = sum_{tau<t} Phi(x_tau) Phi(x_tau)^T`` and
``u_t = sum_{tau<t} y_tau Phi(x_tau)``. Two ways to release them privately:

- :class:`TreeAggregation` (Algorithm 2, (alpha, beta)-joint DP): a trusted privatizer keeps
  the stream of ``[Phi(x_t), y_t]^T [Phi(x_t), y_t]`` in a binary tree whose nodes carry
  symmetric Gaussian noise; every prefix sum is a sum of at most ``1 + ceil(log2 T)`` noisy
  nodes, and every element enters at most as many nodes. The variance is Lemma 2's
  (:func:`jdp_noise_std`); the released ``Sigma`` block is shifted by ``2 Lambda I``
  (Lemma 3), so ``Sigma_tilde_t + lam I`` is positive definite with high probability, and by
  more if it is not (post-processing of released values, free of privacy cost).
- :func:`local_jdp_noise_std` and :func:`symmetric_gaussian` (Algorithm 3, (alpha, beta)-local
  joint DP): each client adds its own noise ``N_t`` and ``n_t`` (Lemma 5) to
  ``Phi(x_t) Phi(x_t)^T`` and ``y_t Phi(x_t)`` before anything leaves it.

Notation
--------
m      : the feature dimension
T      : horizon (number of rounds)
n      : 1 + ceil(log2 T), the nodes on a root-to-leaf path
alpha, beta : the (alpha, beta) of the privacy guarantee
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import check_int, check_seed

__all__ = [
    "TreeAggregation",
    "check_alpha_beta",
    "jdp_noise_std",
    "local_jdp_noise_std",
    "psd_shift",
    "symmetric_gaussian",
    "tree_depth",
]


def check_alpha_beta(alpha, beta, *, beta_name: str = "beta") -> tuple[float, float]:
    """Validate the ``(alpha, beta)`` of (alpha, beta)-DP: ``alpha > 0``, ``beta`` in (0, 1);
    an error names ``beta`` as ``beta_name`` (the caller's name for it)."""
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float))
        or not (math.isfinite(alpha) and alpha > 0)
    ):
        raise ValueError(f"alpha must be a finite float > 0, got {alpha!r}.")
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0.0 < beta < 1.0:
        raise ValueError(f"{beta_name} must be in the open interval (0, 1), got {beta!r}.")
    return float(alpha), float(beta)


def tree_depth(T: int) -> int:
    """``n = 1 + ceil(log2 T)``: the nodes on a root-to-leaf path of a tree over ``T`` leaves."""
    T = check_int("horizon", T)
    return 1 + math.ceil(math.log2(T)) if T > 1 else 1


def jdp_noise_std(
    alpha: float,
    beta: float,
    T: int,
    *,
    B: float = 1.0,
    rho: float = 1.0,
    reward_bound: float | None = None,
) -> float:
    """The standard deviation ``sigma_{alpha,beta}`` of each node's noise (Lemma 2).

    ``sigma^2 = 16 n L ln(10/beta)^2 / alpha^2`` with ``n = 1 + ceil(log2 T)`` and ``L`` the
    bound on a datum's squared norm: ``1 + B^2 + 2 rho^2 ln(8T/beta)`` for sub-Gaussian
    rewards (``||Phi|| <= 1`` and ``|y|^2 <= B^2 + 2 rho^2 ln(8T/beta)`` with probability
    ``1 - beta/4``), or ``1 + reward_bound^2`` when rewards are bounded, as the paper's
    Bernoulli experiments use (Sec. 6.1).

    Parameters
    ----------
    alpha : float
        ``alpha > 0``.
    beta : float
        ``beta`` in (0, 1).
    T : int
        Horizon.
    B : float, default=1.0
        Bound on the RKHS norm of ``f`` (the mean reward).
    rho : float, default=1.0
        Sub-Gaussian parameter of the reward noise.
    reward_bound : float, optional
        ``|y| <= reward_bound`` for every reward.

    Returns
    -------
    float
    """
    alpha, beta = check_alpha_beta(alpha, beta)
    n = tree_depth(T)
    if reward_bound is not None:
        L = 1.0 + float(reward_bound) ** 2
    else:
        L = 1.0 + B**2 + 2.0 * rho**2 * math.log(8.0 * T / beta)
    return math.sqrt(16.0 * n * L * math.log(10.0 / beta) ** 2 / alpha**2)


def local_jdp_noise_std(
    alpha: float,
    beta: float,
    m: int,
    *,
    B: float = 1.0,
    reward_bound: float | None = None,
) -> tuple[float, float]:
    """``(sigma_X, sigma_u)`` of each client's noise (Lemma 5).

    ``sigma_X^2 = 8 ln(5 / (2 beta)) / alpha^2`` for ``Phi Phi^T`` (each entry has
    sensitivity 1) and ``sigma_u^2 = 8 (B^2 + 2 ln(8m/beta)) ln(5/beta) / alpha^2`` for
    ``y Phi`` (the paper writes ``delta`` for the failure probability of the reward bound;
    here it is ``beta``), or ``8 reward_bound^2 ln(5/beta) / alpha^2`` for bounded rewards.
    Each part is then ``(alpha/2, beta/2)``-locally DP.

    Parameters
    ----------
    alpha : float
        ``alpha > 0``.
    beta : float
        ``beta`` in (0, 1).
    m : int
        Feature dimension.
    B : float, default=1.0
        Bound on the mean reward.
    reward_bound : float, optional
        ``|y| <= reward_bound`` for every reward.

    Returns
    -------
    tuple of float
    """
    alpha, beta = check_alpha_beta(alpha, beta)
    sigma_x2 = 8.0 * math.log(5.0 / (2.0 * beta)) / alpha**2
    if reward_bound is not None:
        s_u = float(reward_bound) ** 2
    else:
        s_u = B**2 + 2.0 * math.log(8.0 * m / beta)
    sigma_u2 = 8.0 * s_u * math.log(5.0 / beta) / alpha**2
    return math.sqrt(sigma_x2), math.sqrt(sigma_u2)


def symmetric_gaussian(size: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """A symmetric matrix with ``N(0, sigma^2)`` entries on and above the diagonal (Alg. 3)."""
    upper = np.triu(rng.normal(0.0, sigma, (size, size)))
    return upper + np.triu(upper, 1).T


def psd_shift(sigma: float, n: int, m: int, T: int, zeta: float = 0.05) -> float:
    """``2 Lambda`` with ``Lambda = sigma sqrt(2n) (4 sqrt(m) + 2 ln(2T/zeta))`` (Lemma 3).

    With probability ``1 - zeta`` the summed noise of every prefix has spectral norm at most
    ``Lambda``, so the shifted noise ``H_t`` has eigenvalues in ``[Lambda, 3 Lambda]``.
    """
    lam_ = sigma * math.sqrt(2.0 * n) * (4.0 * math.sqrt(m) + 2.0 * math.log(2.0 * T / zeta))
    return 2.0 * lam_


class TreeAggregation:
    """The tree-based (binary) mechanism for a stream of symmetric matrices (Algorithm 2).

    Element ``t`` (1-based) completes the dyadic block that ends at ``t`` of length
    ``2^i``, ``i`` the lowest set bit of ``t``: that node stores the block's exact sum plus
    fresh noise ``(v + v^T) / sqrt(2)`` with ``v`` of i.i.d. ``N(0, sigma^2)`` entries, and the
    smaller blocks it covers are dropped. The prefix sum of the first ``t`` elements is the sum
    of the nodes of the set bits of ``t``: at most ``1 + ceil(log2 T)`` noisy nodes, and each
    element is in at most that many nodes over the whole stream.

    Only the noisy node values leave this object (:meth:`prefix_sum`); the exact sums are
    kept to build the next nodes, as the privatizer's own state.

    Parameters
    ----------
    size : int
        The matrices are ``size x size`` (``m + 1`` for ``[Phi, y]^T [Phi, y]``).
    horizon : int
        ``T``, the largest number of elements.
    sigma : float
        Standard deviation of the noise entries (:func:`jdp_noise_std`).
    seed : int, optional
        Seed of the noise (experiments only).
    """

    def __init__(self, size: int, horizon: int, sigma: float, seed: int | None = None) -> None:
        self.size = check_int("size", size)
        self.horizon = check_int("horizon", horizon)
        if not (math.isfinite(sigma) and sigma >= 0):
            raise ValueError(f"sigma must be a finite float >= 0, got {sigma!r}.")
        self.sigma = float(sigma)
        self._rng = np.random.default_rng(check_seed("seed", seed))
        levels = tree_depth(self.horizon) + 1
        self._exact = [np.zeros((self.size, self.size)) for _ in range(levels)]
        self._noisy = [np.zeros((self.size, self.size)) for _ in range(levels)]
        self.t = 0
        #: Number of noisy nodes each element has entered (for tests of the node count).
        self.node_count = np.zeros(self.horizon, dtype=int)

    def _noise(self) -> np.ndarray:
        v = self._rng.normal(0.0, self.sigma, (self.size, self.size))
        return (v + v.T) / math.sqrt(2.0)

    def add(self, Z) -> None:
        """Insert the next element, a symmetric ``size x size`` matrix."""
        Z = np.asarray(Z, dtype=float)
        if Z.shape != (self.size, self.size):
            raise ValueError(f"Z must have shape ({self.size}, {self.size}), got {Z.shape}.")
        if self.t >= self.horizon:
            raise ValueError(f"the tree holds at most horizon={self.horizon} elements.")
        self.t += 1
        i = (self.t & -self.t).bit_length() - 1  # lowest set bit of t
        block = Z + sum(self._exact[j] for j in range(i))
        for j in range(i):
            self._exact[j] = np.zeros_like(Z)
            self._noisy[j] = np.zeros_like(Z)
        self._exact[i] = block
        self._noisy[i] = block + self._noise()
        # the node at level i covers elements t - 2^i + 1 .. t
        self.node_count[self.t - 2**i : self.t] += 1

    def nodes_in_prefix(self, t: int | None = None) -> int:
        """How many noisy nodes the prefix sum of ``t`` elements adds up (``popcount(t)``)."""
        return bin(self.t if t is None else int(t)).count("1")

    def prefix_sum(self) -> np.ndarray:
        """The noisy sum of every element inserted so far (zero before the first)."""
        out = np.zeros((self.size, self.size))
        for j in range(len(self._noisy)):
            if (self.t >> j) & 1:
                out += self._noisy[j]
        return out
