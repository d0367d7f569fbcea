"""Exact-GP optimizers: GP-UCB, TGP-UCB (truncated rewards) and random search.

- :class:`GPUCB` — IGP-UCB of Chowdhury & Gopalan (2017), the non-private sub-Gaussian baseline.
- :class:`TGPUCB` — Algorithm 2 of Zhou & Tan (2021), LDP-TGP-UCB: each privatized reward is
  truncated once, ``y_hat_t = y_bar_t 1{|y_bar_t| <= b_t}`` with ``b_t = B + R + L ln t`` and
  ``L = 2 (B + R) / epsilon``; with ``epsilon=None``, the heavy-tailed TGP-UCB of Chowdhury &
  Gopalan (2019), truncating at ``b_t = v^{1/(1+alpha)} t^{1/(2(1+alpha))}``.
- :class:`RandomSearch` — uniform proposals, with the same GP posterior for ``predict`` and
  ``recommend`` (so a private random search and private BO pick by the same rule).

The GP posterior (eqs. 2-3 of Zhou & Tan) is kept as a Cholesky factor of ``K_t + lambda I``
that grows by one row per reward (O(t^2) per update, never a cubic refactorisation).

Notation
--------
L_chol : (t, t)  lower Cholesky factor of K_t + lam I
alpha  : (t,)    (K_t + lam I)^{-1} y_used, y_used the (possibly truncated) rewards
gamma_t          empirical information gain 1/2 ln det(I + K_t / lam), the computable stand-in
                 for the maximum information gain gamma_t of the theorems
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from .base import BaseOptimizer, check_alpha

__all__ = ["GPUCB", "TGPUCB", "RandomSearch"]


class _IncrementalGP:
    """Exact GP posterior with a Cholesky factor extended one row at a time."""

    def __init__(self, kernel, lam: float, dim: int) -> None:
        self.kernel = kernel
        self.lam = lam
        self.dim = dim
        self._cap = 0
        self._L = np.zeros((0, 0))
        self._X = np.zeros((0, dim))
        self._y = np.zeros(0)
        self.n = 0
        self.alpha = np.zeros(0)
        self.log_det = 0.0  # ln det(K_t + lam I)

    def _grow(self) -> None:
        cap = max(16, 2 * self._cap)
        L = np.zeros((cap, cap))
        L[: self.n, : self.n] = self._L[: self.n, : self.n]
        X = np.zeros((cap, self.dim))
        X[: self.n] = self._X[: self.n]
        y = np.zeros(cap)
        y[: self.n] = self._y[: self.n]
        self._L, self._X, self._y, self._cap = L, X, y, cap

    def add(self, x: np.ndarray, y: float) -> None:
        if self.n == self._cap:
            self._grow()
        n = self.n
        k_vec = self.kernel(self._X[:n], x[None, :])[:, 0] if n else np.zeros(0)
        c = linalg.solve_triangular(self._L[:n, :n], k_vec, lower=True) if n else k_vec
        d2 = float(self.kernel.diag(x[None, :])[0]) + self.lam - float(c @ c)
        d = math.sqrt(max(d2, 1e-12 * self.lam))
        self._L[n, :n] = c
        self._L[n, n] = d
        self._X[n] = x
        self._y[n] = y
        self.n = n + 1
        self.log_det += 2.0 * math.log(d)
        self._solve()

    def set_y(self, y: np.ndarray) -> None:
        self._y[: self.n] = y
        self._solve()

    def _solve(self) -> None:
        L = self._L[: self.n, : self.n]
        self.alpha = linalg.cho_solve((L, True), self._y[: self.n])

    @property
    def gamma(self) -> float:
        """Empirical information gain ``1/2 ln det(I + K_t / lam)``."""
        return 0.5 * (self.log_det - self.n * math.log(self.lam))

    def mean(self, Z: np.ndarray) -> np.ndarray:
        """Posterior mean at ``Z`` (O(n t), no variance)."""
        if self.n == 0:
            return np.zeros(Z.shape[0])
        return self.kernel(Z, self._X[: self.n]) @ self.alpha

    def _mean_var(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean, variance and ``V = L^{-1} k_t(Z)`` (reused by the pending-point update)."""
        n = self.n
        prior = self.kernel.diag(Z)
        if n == 0:
            return np.zeros(Z.shape[0]), prior, np.zeros((0, Z.shape[0]))
        Kzx = self.kernel(Z, self._X[:n])
        V = linalg.solve_triangular(self._L[:n, :n], Kzx.T, lower=True)
        return Kzx @ self.alpha, prior - np.sum(V * V, axis=0), V

    def posterior(
        self, Z: np.ndarray, P: np.ndarray | None = None, lie: float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance at ``Z`` given pending points ``P`` (see :meth:`with_pending`)."""
        if P is None:
            mean, var, _ = self._mean_var(Z)
            return mean, np.maximum(var, 0.0)
        return self.with_pending(P, lie)(Z)

    def with_pending(self, P: np.ndarray, lie: float | None = None):
        """A function ``Z -> (mean, variance)`` that also conditions on pending points ``P``.

        Pending points shrink the variance (GP-BUCB: the Schur-complement block of the factor of
        ``[X; P]``, values not needed); with ``lie`` they also enter the mean as if they had
        returned ``lie`` (the constant liar). The block depends on ``P`` only, so it is built
        once per ask and reused at every point the acquisition optimiser evaluates.
        """
        n = self.n
        L = self._L[:n, :n]
        C = (
            linalg.solve_triangular(L, self.kernel(self._X[:n], P), lower=True)
            if n
            else np.zeros((0, P.shape[0]))
        )
        S = self.kernel(P) + self.lam * np.eye(P.shape[0]) - C.T @ C
        LP = linalg.cholesky(S + 1e-12 * np.eye(P.shape[0]), lower=True)
        shift = None
        if lie is not None:
            shift = linalg.solve_triangular(LP, lie - self.mean(P), lower=True)

        def posterior(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mean, var, V = self._mean_var(Z)
            W = linalg.solve_triangular(LP, self.kernel(P, Z) - C.T @ V, lower=True)
            var = var - np.sum(W * W, axis=0)
            if shift is not None:
                mean = mean + W.T @ shift
            return mean, np.maximum(var, 0.0)

        return posterior


class _ExactGPOptimizer(BaseOptimizer):
    """Shared machinery of the exact-GP optimizers."""

    def __init__(self, dim: int, **kwargs) -> None:
        super().__init__(dim, **kwargs)
        self._gp = _IncrementalGP(self.kernel, self.lam, self.dim)
        self._y_used: list[float] = []

    def _transform_reward(self, y: float, t: int) -> float:
        """The reward the model learns from at round ``t >= 1`` (identity unless truncating)."""
        return y

    def _observe(self, x: np.ndarray, y: float) -> None:
        y_used = self._transform_reward(y, self.t)
        self._y_used.append(y_used)
        self._gp.add(x, y_used)

    def _posterior(self, X, P):
        return self._gp.posterior(X, P)

    def _posterior_given(self, P):
        return self._gp.posterior if P is None else self._gp.with_pending(P, self._lie())

    def _mean(self, X):
        return self._gp.mean(X)

    def _rebuild(self) -> None:
        self._gp = _IncrementalGP(self.kernel, self.lam, self.dim)
        for x, y_used in zip(self._X, self._y_used, strict=True):
            self._gp.add(x, y_used)

    @property
    def gamma_t(self) -> float:
        """Empirical information gain of the told points (the stand-in for ``gamma_t``)."""
        return self._gp.gamma


class GPUCB(_ExactGPOptimizer):
    """Exact GP-UCB (IGP-UCB of Chowdhury & Gopalan 2017): the non-private baseline.

    ``x_t = argmax mu_{t-1}(x) + beta_t sigma_{t-1}(x)`` with
    ``beta_t = B + R sqrt(2 (gamma_{t-1} + 1 + ln(1/delta)))``, ``gamma`` being the empirical
    information gain of the told points. Privacy model: none (it learns from whatever it is
    told; with privatized rewards it is a baseline, not one of the paper's algorithms).

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    **kwargs
        ``epsilon`` (the curator's epsilon: the LDP version; ``None``: the non-private one),
        ``beta_scale`` (default: the class attribute ``default_beta_scale``, calibrated as
        described in the optimizers guide), ``kernel``, ``lam``, ``delta``, ``B``, ``R``,
        ``seed``, ... as in :class:`~privtune.optimizers.base.BaseOptimizer`.

    Examples
    --------
    >>> import numpy as np
    >>> from privtune.optimizers import GPUCB
    >>> opt = GPUCB(dim=1, seed=0)
    >>> for _ in range(5):
    ...     x = opt.ask()
    ...     opt.tell(x, -float((x[0] - 0.3) ** 2))
    >>> opt.recommend().shape
    (1,)
    """

    default_beta_scale = 0.2

    def beta_t(self) -> float:
        return self.B + self.R * math.sqrt(2.0 * (self.gamma_t + 1.0 + math.log(1.0 / self.delta)))


class TGPUCB(_ExactGPOptimizer):
    """TGP-UCB: GP-UCB on rewards truncated once (Zhou & Tan 2021, Algorithm 2).

    With ``epsilon`` set this is LDP-TGP-UCB, for rewards privatized by CTL(epsilon):

    - ``L = 2 (B + R) / epsilon`` (the curator's Laplace scale), ``K = B^2 + R^2 + 2 L^2``;
    - ``b_t = B + R + L ln t`` (line 4), ``y_hat_t = y_bar_t 1{|y_bar_t| <= b_t}`` (line 8);
    - ``beta_t = B + 2 sqrt(2/lam) b_{t-1} sqrt(gamma_{t-1} + ln(1/delta))
      + sqrt(K (ln(t-1) + 1) / lam)`` (line 5).

    With ``epsilon=None`` it is the non-private TGP-UCB of Chowdhury & Gopalan (2019) for
    rewards with a bounded ``(1+alpha)``-th moment ``E|y|^{1+alpha} <= v``:
    ``b_t = v^{1/(1+alpha)} t^{1/(2(1+alpha))}``, and ``beta_t`` has the same two terms as
    above, the bias term being ``sqrt(sum_{tau<t} (v / b_tau^alpha)^2 / lam)`` (the bound on
    ``E[y 1{|y| > b}]`` that the same proof decomposition gives for a (1+alpha)-th moment).

    ``gamma_{t-1}`` is the empirical information gain of the told points. Privacy model: the
    algorithm sees only privatized rewards; it adds no privacy of its own (ε-LDP comes from the
    curator, DESIGN.md §1).

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    alpha : float, default=1.0
        Moment order of the non-private version, in (0, 1].
    v : float, optional
        Bound on ``E|y|^{1+alpha}`` (non-private version); default ``B^2 + R^2``.
    **kwargs
        ``epsilon`` (the curator's epsilon: the LDP version; ``None``: the non-private one),
        ``beta_scale`` (default: the class attribute ``default_beta_scale``, calibrated as
        described in the optimizers guide), ``kernel``, ``lam``, ``delta``, ``B``, ``R``,
        ``seed``, ... as in :class:`~privtune.optimizers.base.BaseOptimizer`.
    """

    default_beta_scale = 0.0005

    def __init__(
        self,
        dim: int,
        *,
        alpha: float = 1.0,
        v: float | None = None,
        **kwargs,
    ) -> None:
        super().__init__(dim, **kwargs)
        self.alpha = check_alpha(alpha)
        self.v = float(self.B**2 + self.R**2 if v is None else v)
        if self.v <= 0:
            raise ValueError(f"v must be > 0, got {v!r}.")
        self._bias_sq = 0.0  # sum over told rounds of (v / b_tau^alpha)^2, non-private

    @property
    def L(self) -> float:
        """Laplace scale ``2 (B + R) / epsilon`` of the curator (LDP version)."""
        if self.epsilon is None:
            raise AttributeError("L is defined for the LDP version only (epsilon is None).")
        return 2.0 * (self.B + self.R) / self.epsilon

    def b(self, t: int) -> float:
        """Truncation level ``b_t`` for round ``t >= 1`` (``ln 0`` is read as 0)."""
        t = max(int(t), 1)
        if self.epsilon is not None:
            return self.B + self.R + self.L * math.log(t)
        return self.v ** (1.0 / (1.0 + self.alpha)) * t ** (1.0 / (2.0 * (1.0 + self.alpha)))

    def _transform_reward(self, y: float, t: int) -> float:
        b_t = self.b(t)
        if self.epsilon is None:
            self._bias_sq += (self.v / b_t**self.alpha) ** 2
        return y if abs(y) <= b_t else 0.0

    def beta_t(self) -> float:
        t = self.t + 1  # the round the next ask plays
        b_prev = self.b(t - 1)
        width = (
            2.0
            * math.sqrt(2.0 / self.lam)
            * b_prev
            * math.sqrt(self.gamma_t + math.log(1.0 / self.delta))
        )
        if self.epsilon is not None:
            K = self.B**2 + self.R**2 + 2.0 * self.L**2
            bias = math.sqrt(K * (math.log(max(t - 1, 1)) + 1.0) / self.lam)
        else:
            bias = math.sqrt(self._bias_sq / self.lam)
        return self.B + width + bias

    def _rebuild(self) -> None:
        self._bias_sq = 0.0
        self._y_used = [self._transform_reward(y, i) for i, y in enumerate(self._y, start=1)]
        super()._rebuild()


class RandomSearch(_ExactGPOptimizer):
    """Uniform random search with the exact GP posterior for ``predict`` and ``recommend``.

    The baseline every private method must beat: it spends the same privacy budget per report
    and recommends by the same rule (best posterior mean among evaluated points).

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    **kwargs
        ``kernel``, ``lam``, ``seed``, ``snap``, ... as in
        :class:`~privtune.optimizers.base.BaseOptimizer`.
    """

    def beta_t(self) -> float:
        return 0.0

    def _propose(self, C, P):
        return self._uniform_point(C)
