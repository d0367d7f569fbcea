"""The approximate GP posterior in Nyström feature space, shared by ATA- and MoMA-GP-UCB.

Given a feature map ``phi`` of dimension ``m`` (Algorithm 4 of Zhou & Tan 2021), the fitted
points' features ``Phi`` and a coefficient vector ``theta``:

- ``V = Phi^T Phi + lam I_m``
- ``mu_tilde(x) = phi(x)^T theta``
- ``sigma_tilde^2(x) = k(x, x) - phi(x)^T phi(x) + lam phi(x)^T V^{-1} phi(x)``

(lines 11-12 of Algorithm 1, 13-14 of Algorithm 3). Pending points add ``phi(p) phi(p)^T`` to
``V`` for the variance only, and join the dictionary for it: a Nyström posterior cannot lower
its variance at a point its dictionary does not span (the residual ``k(x, x) - |phi(x)|^2``
stays), so without this a batch of asks would pile up on one point.

With ``surrogate="fitted"`` the kernel (ARD Matérn-5/2), ``lam`` and the rewards' centre and
unit come from the fitted GP of :mod:`privtune.gp`, told the same rewards: the model learns
``(y - c) / sd`` with ``c`` the fitted constant mean and ``sd`` the signal's standard deviation,
and ``lam`` is the noise-to-signal variance ratio (at least :data:`MIN_FITTED_LAM`), so
``mu_tilde`` approximates that GP's posterior mean and ``sd^2 sigma_tilde^2`` its variance. The
truncations and the median of means then act on rewards relative to the fitted mean.

Notation
--------
Phi   : (n, m)  features of the fitted points
V     : (m, m)
theta : (m,)
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from ..features import NystromEmbedding, ridge_leverage_sample
from ..gp import GaussianProcess
from .base import KernelOptimizer, _check_unit_interval, check_alpha

__all__ = ["DEFAULT_Q", "NystromModel", "NystromOptimizer", "check_q", "default_q"]

#: Practical Nyström oversampling (see docs/optimizers.md for how it was chosen).
DEFAULT_Q = 4.0

#: The least ``lam`` the fitted surrogate hands the Nyström model. Exact scores fit a
#: noise-to-signal ratio near 1e-6, which leaves ``V`` so ill-conditioned that ATA's rows of
#: ``V^{-1/2} Phi^T`` exceed every truncation level; 0.01 is the ratio the tuning defaults used
#: for exact scores before the surrogate was fitted.
MIN_FITTED_LAM = 0.01


def check_q(q: float | str) -> float | str:
    """Validate ``q``: a positive float or ``"theory"``."""
    if q == "theory":
        return q
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not (math.isfinite(q) and q > 0):
        raise ValueError(f'q must be a float > 0 or "theory", got {q!r}.')
    return float(q)


def default_q(horizon: int, delta: float, accuracy: float) -> float:
    """Oversampling ``q = 6 rho ln(4T/delta) / accuracy^2`` with ``rho = (1+acc)/(1-acc)``.

    The value of Theorems 2 and 4 of Zhou & Tan (2021); ``accuracy`` is their ``varepsilon``,
    the spectral accuracy of the Nyström dictionary.
    """
    rho = (1.0 + accuracy) / (1.0 - accuracy)
    return 6.0 * rho * math.log(4.0 * max(horizon, 1) / delta) / accuracy**2


class NystromModel:
    """Nyström features plus the linear-model quantities of the approximate posterior.

    Parameters
    ----------
    kernel : Kernel
    lam : float
    embedding : NystromEmbedding
    Phi : ndarray of shape (n, m)
        Features of the fitted points.
    """

    def __init__(
        self,
        kernel,
        lam: float,
        embedding: NystromEmbedding,
        Phi: np.ndarray,
        X_fit: np.ndarray | None = None,
    ) -> None:
        self.kernel = kernel
        self.X_fit = X_fit
        self.lam = lam
        self.embedding = embedding
        self.m = embedding.m
        self.Phi = Phi
        self.V = Phi.T @ Phi + lam * np.eye(self.m)
        self._V_chol = linalg.cho_factor(self.V, lower=True) if self.m else None
        self.theta = np.zeros(self.m)

    @classmethod
    def prior(cls, kernel, lam: float, dim: int) -> NystromModel:
        """The model before any data: ``mu = 0``, ``sigma^2 = k(x, x)`` (line 2)."""
        emb = NystromEmbedding(kernel, np.zeros((0, dim)))
        return cls(kernel, lam, emb, np.zeros((0, 0)))

    @classmethod
    def sample(
        cls,
        kernel,
        lam: float,
        X: np.ndarray,
        sigma2_prev: np.ndarray,
        q: float,
        rng: np.random.Generator,
    ) -> NystromModel:
        """NyströmEmbedding({(x_i, sigma_tilde_{t-1}(x_i))}, q) and the features of ``X``."""
        idx = ridge_leverage_sample(sigma2_prev, q, rng)
        emb = NystromEmbedding(kernel, X[idx])
        return cls(kernel, lam, emb, emb.transform(X), X)

    def solve(self, B: np.ndarray) -> np.ndarray:
        """``V^{-1} B``."""
        if self.m == 0:
            return np.zeros_like(B)
        return linalg.cho_solve(self._V_chol, B)

    def inv_sqrt_V(self) -> np.ndarray:
        """``V^{-1/2}`` (symmetric square root), for the feature-adaptive truncation."""
        e, Q = linalg.eigh(self.V)
        return (Q / np.sqrt(e)) @ Q.T

    def posterior(
        self, Z: np.ndarray, P: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Approximate posterior mean and variance at ``Z``, pending points ``P``."""
        if P is None:
            return self._posterior(Z)
        return self.with_pending(P)(Z)

    def _posterior(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        prior = self.kernel.diag(Z)
        if self.m == 0:
            return np.zeros(Z.shape[0]), prior
        F = self.embedding.transform(Z)
        mean = F @ self.theta
        var = prior - np.sum(F * F, axis=1) + self.lam * np.sum(F.T * self.solve(F.T), axis=0)
        return mean, np.maximum(var, 0.0)

    def with_pending(self, P: np.ndarray, lie: float | None = None):
        """A function ``Z -> (mean, variance)`` that also conditions on pending points ``P``.

        Built once per ask. Variance: the dictionary is extended by ``P`` and ``V`` gets the
        pending points' features. Mean: with ``lie``, the pending points count as observations
        of value ``lie``, ``theta + (V + Phi_P^T Phi_P)^{-1} Phi_P^T (lie - Phi_P theta)``;
        without, it is this model's mean.
        """
        X_fit = self.X_fit if self.X_fit is not None else np.zeros((0, P.shape[1]))
        D = np.vstack([self.embedding.X_dict.reshape(-1, P.shape[1]), P])
        emb = NystromEmbedding(self.kernel, D)
        aug = NystromModel(self.kernel, self.lam, emb, emb.transform(np.vstack([X_fit, P])))

        theta = self.theta
        if lie is not None and self.m:
            FP = self.embedding.transform(P)
            theta = theta + linalg.solve(
                self.V + FP.T @ FP, FP.T @ (lie - FP @ self.theta), assume_a="pos"
            )

        def posterior(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mean = self.embedding.transform(Z) @ theta if self.m else np.zeros(Z.shape[0])
            _, var = aug._posterior(Z)
            return mean, var

        return posterior


#: The fitted surrogate's options that shape the exact GP's posterior (its likelihood and
#: warps), which the Nyström model does not have: refused rather than ignored.
_EXACT_GP_ONLY = (
    "student_t_df",
    "student_t_on_repeat",
    "repeat_discounted_best",
    "input_warping",
    "output_warping",
)


class NystromOptimizer(KernelOptimizer):
    """Shared machinery of ATA- and MoMA-GP-UCB: the parameters of the Nyström dictionary and
    the approximate posterior of :class:`NystromModel`.

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    alpha : float, default=1.0
        Moment order, in (0, 1].
    horizon : int, optional
        ``T`` in the theorems' parameters; ``None`` reads it as the current round.
    q : float or "theory", default=4.0
        Nyström oversampling.
    nystrom_accuracy : float, default=0.5
        The theorems' ``varepsilon`` in (0, 1).
    **kwargs
        As in :class:`~privtune.optimizers.base.KernelOptimizer`.
    """

    def __init__(
        self,
        dim: int,
        *,
        alpha: float = 1.0,
        horizon: int | None = None,
        q: float | str = DEFAULT_Q,
        nystrom_accuracy: float = 0.5,
        **kwargs,
    ) -> None:
        super().__init__(dim, **kwargs)
        for name in _EXACT_GP_ONLY:  # the fitted surrogate only lends its hyperparameters here
            if getattr(self, name) not in (None, False):
                raise ValueError(
                    f"{name} is an option of the exact-GP optimizers (GP-UCB, TGP-UCB); the "
                    f"Nyström model of {type(self).__name__} does not use it."
                )
        if horizon is not None and (
            isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1
        ):
            raise ValueError(f"horizon must be a positive integer or None, got {horizon!r}.")
        self.horizon = horizon
        self.alpha = check_alpha(alpha)
        self.nystrom_accuracy = _check_unit_interval("nystrom_accuracy", nystrom_accuracy)
        self.q = check_q(q)
        self._model = NystromModel.prior(self.kernel, self.lam, self.dim)
        # The fitted surrogate, whose kernel, centre and noise-to-signal ratio the Nyström model
        # takes (surrogate="fitted"); the model's rewards are (y - centre) / sd.
        self._gp = (
            GaussianProcess.fitted(self.dim, self.layout, self.priors)
            if self.surrogate == "fitted"
            else None
        )
        self._centre, self._sd = 0.0, 1.0

    def _fit_hyperparameters(self, x: np.ndarray, y: float, noise_var: float) -> None:
        """Tell the fitted surrogate ``(x, y)`` and take its hyperparameters: the ARD kernel,
        the constant mean as the centre, the signal standard deviation as the unit of the
        model's rewards, and ``lam`` = noise variance / signal variance (the ridge of the GP
        posterior mean). Nothing with the fixed surrogate."""
        if self._gp is None:
            return
        self._gp.add(x, y, noise_var)
        h = self._gp.hyper
        self.kernel = h.kernel
        self._centre = h.centre
        self._sd = h.scale * math.sqrt(h.signal_var)
        noise = float(np.mean(self._gp.noise_var)) / h.scale**2 + h.nugget
        self.lam = max(noise / h.signal_var, MIN_FITTED_LAM)

    def _model_rewards(self, y: np.ndarray) -> np.ndarray:
        """Rewards in the Nyström model's units, relative to the fitted mean."""
        return (np.asarray(y, dtype=float) - self._centre) / self._sd

    def _to_reward(self, mean: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._centre + self._sd * mean, var * self._sd**2

    @property
    def m(self) -> int:
        """Current embedding dimension (``m_t`` or ``m_n``)."""
        return self._model.m

    def _T(self) -> int:
        return self.horizon if self.horizon is not None else max(self.t, 1)

    def _sample_model(self, X: np.ndarray, key: int) -> NystromModel:
        """Algorithm 4 over ``X`` with the current model's variances and the resolved ``q``."""
        _, sigma2_prev = self._model.posterior(X)
        q = (
            default_q(self._T(), self.delta, self.nystrom_accuracy)
            if self.q == "theory"
            else float(self.q)
        )
        return NystromModel.sample(self.kernel, self.lam, X, sigma2_prev, q, self._stream(key))

    def _posterior(self, X, P):
        return self._to_reward(*self._model.posterior(X, P))

    def _posterior_given(self, P):
        if P is None:
            given = self._model._posterior
        else:
            given = self._model.with_pending(P, float(self._model_rewards(self._lie())))
        return lambda Z: self._to_reward(*given(Z))

    def _mean(self, X):
        if self.m == 0:
            return np.full(X.shape[0], self._centre)
        return self._centre + self._sd * (self._model.embedding.transform(X) @ self._model.theta)
