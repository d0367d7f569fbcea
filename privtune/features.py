"""Finite feature maps that approximate a kernel.

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

import numpy as np
from scipy import linalg

from .kernels import Kernel

__all__ = ["NystromEmbedding", "ridge_leverage_sample"]


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
