"""Finite feature maps that approximate a kernel.

- :class:`QuadratureFourierFeatures` and :class:`RandomFourierFeatures`: ``Phi(x)`` with
  ``Phi(x)^T Phi(y) ~ k(x, y)`` for the squared-exponential kernel, by Gauss-Hermite quadrature
  (Def. 4 of Dubey 2021, after Mutný & Krause 2018) or Monte Carlo (Rahimi & Recht 2008), and
  their additive variants (a sum of one-dimensional kernels, features per dimension);
- :class:`NystromEmbedding`: the data-dependent embedding of Zhou & Tan (2021).

Nyström embedding with ridge-leverage-score sampling, exactly as Algorithm 4 (NyströmEmbedding)
of the appendix of Zhou & Tan (2021), itself Calandriello et al. (2019) as used by Chowdhury &
Gopalan (2019):

1. every past point ``x_i`` enters the dictionary ``D`` independently with probability
   ``p_i = min{q * sigma_tilde^2_{t-1}(x_i), 1}``;
2. the feature map is ``phi(x) = (K_D^{1/2})^+ k_D(x)``, where ``K_D`` is the kernel matrix of
   the dictionary and ``^+`` is the Moore–Penrose pseudo-inverse.

The embedding dimension ``m_t`` is the dictionary size ``|D|`` (the paper's ``m_t``).

Notation
--------
X_dict : (m, d)  the dictionary points
K_D    : (m, m)  kernel matrix of the dictionary
X      : (n, d)  query points
Phi    : (n, m)  rows phi(x)^T
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from ._checks import check_int
from .kernels import Kernel

__all__ = [
    "NystromEmbedding",
    "QuadratureFourierFeatures",
    "RandomFourierFeatures",
    "ridge_leverage_sample",
]

#: Default cap on the number of Fourier features (a statistic of m^2 doubles is kept).
MAX_FEATURES = 8192


def ridge_leverage_sample(
    sigma2_prev: np.ndarray, q: float, rng: np.random.Generator
) -> np.ndarray:
    """Sample the Nyström dictionary: lines 3-6 of Algorithm 4.

    Parameters
    ----------
    sigma2_prev : ndarray of shape (n,)
        Approximate posterior variances ``sigma_tilde^2_{t-1}(x_i)`` of the candidate points
        under the previous model.
    q : float
        Oversampling parameter ``q > 0``.
    rng : numpy.random.Generator
        Source of the Bernoulli draws ``z_{t,i}``.

    Returns
    -------
    ndarray of int
        Indices ``i`` with ``z_{t,i} = 1``, in increasing order.
    """
    if q <= 0:
        raise ValueError(f"q must be > 0, got {q!r}.")
    p = np.minimum(q * np.clip(np.asarray(sigma2_prev, dtype=float), 0.0, None), 1.0)
    z = rng.random(p.shape[0]) < p
    return np.flatnonzero(z)


class NystromEmbedding:
    """The Nyström feature map ``phi(x) = (K_D^{1/2})^+ k_D(x)`` of a dictionary.

    Parameters
    ----------
    kernel : Kernel
        The kernel ``k`` to approximate.
    X_dict : ndarray of shape (m, d)
        The dictionary ``D`` (may be empty: ``m = 0`` gives the zero map).
    rtol : float, default=1e-10
        Eigenvalues of ``K_D`` below ``rtol * max eigenvalue`` are treated as zero in the
        pseudo-inverse (duplicate points in ``D`` make ``K_D`` singular).

    Attributes
    ----------
    m : int
        The embedding dimension ``m_t = |D|``.
    """

    def __init__(self, kernel: Kernel, X_dict: np.ndarray, rtol: float = 1e-10) -> None:
        self.kernel = kernel
        self.X_dict = np.atleast_2d(np.asarray(X_dict, dtype=float))
        self.m = int(self.X_dict.shape[0]) if np.asarray(X_dict).size else 0
        if self.m == 0:
            self._root_pinv = np.zeros((0, 0))
            return
        K_D = kernel(self.X_dict)
        s, U = linalg.eigh(K_D)
        keep = s > rtol * max(float(s[-1]), 1e-300)
        inv_sqrt = np.zeros_like(s)
        inv_sqrt[keep] = 1.0 / np.sqrt(s[keep])
        # (K_D^{1/2})^+ = U diag(s^{-1/2}) U^T on the range of K_D, zero elsewhere.
        self._root_pinv = (U * inv_sqrt) @ U.T

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Return ``Phi`` with rows ``phi(x)^T`` for every row ``x`` of ``X``.

        Parameters
        ----------
        X : ndarray of shape (n, d)

        Returns
        -------
        ndarray of shape (n, m)
        """
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if self.m == 0:
            return np.zeros((X.shape[0], 0))
        return self.kernel(X, self.X_dict) @ self._root_pinv


def _lengthscales(lengthscale, dim: int) -> np.ndarray:
    ls = np.broadcast_to(np.asarray(lengthscale, dtype=float), (dim,)).copy()
    if not np.all(np.isfinite(ls)) or np.any(ls <= 0):
        raise ValueError(
            f"lengthscale must be > 0 (a float or one per dimension), got {lengthscale!r}."
        )
    return ls


class _FourierFeatures:
    """``Phi(x) = sqrt(w_i) [cos(omega_i^T x), sin(omega_i^T x)]_i`` for weights summing to 1.

    Then ``Phi(x)^T Phi(y) = sum_i w_i cos(omega_i^T (x - y))`` and ``||Phi(x)|| = 1``. The
    additive variant concatenates the features of each coordinate, scaled by ``1/sqrt(dim)``,
    for ``k(x, y) = (1/dim) sum_j k_j(x_j, y_j)``.
    """

    dim: int
    additive: bool
    omega: np.ndarray  # (p, dim) frequencies; additive: (dim, p), each coordinate's own
    weights: np.ndarray  # (p,) quadrature or Monte Carlo weights, summing to 1
    _ls: np.ndarray  # (dim,) lengthscales

    @property
    def n_features(self) -> int:
        """The dimension ``m`` of ``Phi(x)``."""
        per = 2 * self.weights.size
        return per * self.dim if self.additive else per

    def __call__(self, X) -> np.ndarray:
        """``Phi(X)``, shape ``(n, n_features)``; rows have unit norm."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.shape[1] != self.dim:
            raise ValueError(
                f"X must have {self.dim} columns (the features' dim), got {X.shape[1]}."
            )
        root_w = np.sqrt(self.weights)
        if self.additive:
            # (n, dim, p): each coordinate's one-dimensional features
            A = X[:, :, None] * self.omega[None, :, :]
            feats = np.concatenate([np.cos(A) * root_w, np.sin(A) * root_w], axis=2)
            return feats.reshape(X.shape[0], -1) / math.sqrt(self.dim)
        A = X @ self.omega.T
        return np.hstack([np.cos(A) * root_w, np.sin(A) * root_w])

    def kernel(self, X, Y) -> np.ndarray:
        """The kernel the features approximate, ``k(X, Y)`` of shape ``(n, n')``."""
        X = np.atleast_2d(np.asarray(X, dtype=float)) / self._ls
        Y = np.atleast_2d(np.asarray(Y, dtype=float)) / self._ls
        D = X[:, None, :] - Y[None, :, :]
        if self.additive:
            return np.mean(np.exp(-0.5 * D**2), axis=2)
        return np.exp(-0.5 * np.sum(D**2, axis=2))


class QuadratureFourierFeatures(_FourierFeatures):
    """Quadrature Fourier features (QFF) of the squared-exponential kernel (Def. 4).

    For ``k(x, y) = exp(-sum_j (x_j - y_j)^2 / (2 nu_j^2))`` on ``[0, 1]^dim``, Bochner's
    integral is computed by Gauss-Hermite quadrature with ``m_bar`` nodes per dimension: with
    the nodes ``z_l`` and weights ``w_l`` of ``int exp(-z^2) g(z) dz``, the frequencies are the
    Cartesian product of ``sqrt(2) z_l / nu_j`` and the weights the products of
    ``w_l / sqrt(pi)``. ``Phi`` has ``2 m_bar^dim`` coordinates (cos and sin pairs) and
    ``||Phi(x)|| = 1``; its uniform error decays exponentially in ``m_bar`` (Theorem 2,
    :meth:`error_bound`).

    With ``additive=True`` the kernel is ``(1/dim) sum_j exp(-(x_j - y_j)^2 / (2 nu_j^2))``
    and ``Phi`` has ``2 m_bar dim`` coordinates, which keeps 10- and 20-dimensional problems
    tractable.

    Parameters
    ----------
    dim : int
        Input dimension.
    m_bar : int
        Quadrature nodes per dimension, ``>= 1``.
    lengthscale : float or array_like, default=1.0
        ``nu``, one value or one per dimension.
    additive : bool, default=False
        The additive kernel and its per-coordinate features.
    max_features : int, default=8192
        Refuse a feature map larger than this (the learner keeps an ``m x m`` statistic).

    Raises
    ------
    ValueError
        When ``2 m_bar^dim`` exceeds ``max_features``; the message suggests the additive
        variant or random Fourier features.
    """

    def __init__(
        self,
        dim: int,
        m_bar: int,
        lengthscale=1.0,
        *,
        additive: bool = False,
        max_features: int = MAX_FEATURES,
    ) -> None:
        self.dim = check_int("dim", dim)
        self.m_bar = check_int("m_bar", m_bar)
        self.additive = bool(additive)
        self._ls = _lengthscales(lengthscale, self.dim)
        m = 2 * self.m_bar * self.dim if self.additive else 2 * self.m_bar**self.dim
        if m > max_features:
            gib = m * m * 8 / 2**30
            raise ValueError(
                f"QFF with m_bar={self.m_bar} in dim={self.dim} has 2 * m_bar^dim = {m} "
                f"features (an m x m statistic of {gib:.3g} GiB), more than max_features="
                f"{max_features}. Use additive=True (2 * m_bar * dim features), "
                "RandomFourierFeatures, or a smaller m_bar."
            )
        z, w = np.polynomial.hermite.hermgauss(self.m_bar)
        w = w / math.sqrt(math.pi)
        if self.additive:
            # one-dimensional nodes, scaled per coordinate
            self.omega = (math.sqrt(2.0) * z[None, :]) / self._ls[:, None]  # (dim, m_bar)
            self.weights = w
        else:
            grid = np.stack(np.meshgrid(*[np.arange(self.m_bar)] * self.dim, indexing="ij"), -1)
            idx = grid.reshape(-1, self.dim)
            self.omega = math.sqrt(2.0) * z[idx] / self._ls
            self.weights = np.prod(w[idx], axis=1)

    def error_bound(self) -> float:
        """Theorem 2: ``d 2^{d-1} sqrt(pi/2) m_bar^{-m_bar} (e / (4 nu^2))^{m_bar}``.

        The bound on ``sup_{x, y in [0, 1]^d} |k(x, y) - Phi(x)^T Phi(y)|`` for the product
        kernel, with ``nu`` the smallest lengthscale (for the additive kernel, the bound of
        one coordinate, since the additive error is the mean of the coordinates' errors).
        """
        nu = float(self._ls.min())
        d = 1 if self.additive else self.dim
        mb = self.m_bar
        return d * 2 ** (d - 1) * math.sqrt(math.pi / 2) * mb**-mb * (math.e / (4 * nu**2)) ** mb

    def coordinate_error(self, n_grid: int = 257) -> float:
        """The measured ``sup_{|r| <= 1} |exp(-r^2 / (2 nu^2)) - sum_l w_l cos(omega_l r)|``.

        The error of one coordinate's quadrature on the unit cube (``nu`` the smallest
        lengthscale), on ``n_grid`` distances: the additive kernel's error is at most this,
        the product kernel's at most ``dim`` times this. Theorem 2's :meth:`error_bound` is
        far looser (at ``m_bar = 8``, 8 times this at lengthscale 0.4 and 700 times at 0.2),
        so this is the number to check a configuration with.
        """
        nu = float(self._ls.min())
        z, w = np.polynomial.hermite.hermgauss(self.m_bar)
        r = np.linspace(0.0, 1.0, int(n_grid))
        approx = np.cos(np.outer(r, math.sqrt(2.0) * z / nu)) @ (w / math.sqrt(math.pi))
        return float(np.max(np.abs(np.exp(-(r**2) / (2.0 * nu**2)) - approx)))

    def __repr__(self) -> str:
        return (
            f"QuadratureFourierFeatures(dim={self.dim}, m_bar={self.m_bar}, "
            f"additive={self.additive}, n_features={self.n_features})"
        )


class RandomFourierFeatures(_FourierFeatures):
    """Random Fourier features (Rahimi & Recht 2008) of the squared-exponential kernel.

    ``n_frequencies`` frequencies ``omega ~ N(0, diag(1 / nu^2))`` with equal weights; ``Phi``
    has ``2 n_frequencies`` coordinates (cos and sin pairs, so ``||Phi(x)|| = 1``), or
    ``2 n_frequencies dim`` for the additive kernel. The error decays as
    ``O(n_frequencies^{-1/2})``.

    Parameters
    ----------
    dim : int
        Input dimension.
    n_frequencies : int
        Number of frequencies, ``>= 1``.
    lengthscale : float or array_like, default=1.0
        ``nu``, one value or one per dimension.
    additive : bool, default=False
        The additive kernel and its per-coordinate features.
    seed : int, optional
        Seed of the frequencies.
    """

    def __init__(
        self,
        dim: int,
        n_frequencies: int,
        lengthscale=1.0,
        *,
        additive: bool = False,
        seed: int | None = None,
    ) -> None:
        self.dim = check_int("dim", dim)
        self.n_frequencies = check_int("n_frequencies", n_frequencies)
        self.additive = bool(additive)
        self._ls = _lengthscales(lengthscale, self.dim)
        rng = np.random.default_rng(seed)
        if self.additive:
            self.omega = rng.standard_normal((self.dim, self.n_frequencies)) / self._ls[:, None]
        else:
            self.omega = rng.standard_normal((self.n_frequencies, self.dim)) / self._ls
        self.weights = np.full(self.n_frequencies, 1.0 / self.n_frequencies)

    def __repr__(self) -> str:
        return (
            f"RandomFourierFeatures(dim={self.dim}, n_frequencies={self.n_frequencies}, "
            f"additive={self.additive}, n_features={self.n_features})"
        )
