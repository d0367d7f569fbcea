"""Approximate GP-UCB on Fourier features, non-private or private (Dubey 2021, Alg. 1-3).

The GP is replaced by Bayesian linear regression on a finite feature map ``Phi``
(:mod:`privtune.features`): with ``Sigma_t = sum_{tau<t} Phi(x_tau) Phi(x_tau)^T`` and
``u_t = sum_{tau<t} y_tau Phi(x_tau)``, the learner uses only the released
``Sigma_tilde_t = Sigma_t + H_t`` and ``u_tilde_t = u_t + h_t``:

``V_t = Sigma_tilde_t + lam I``, ``theta_t = V_t^{-1} u_tilde_t``,
``x_t = argmax_x theta_t^T Phi(x) + beta_t^{1/2} ||Phi(x)||_{V_t^{-1}}`` (eq. 8).

Privacy models (docs/privacy.md):

- ``privacy=None``: ``H_t = 0``, ``h_t = 0``.
- ``privacy="jdp"`` ((alpha, beta)-joint DP, Alg. 2): a trusted PRIVATIZER keeps the stream of
  ``[Phi(x_t), y_t]^T [Phi(x_t), y_t]`` in a :class:`~privtune.privacy.TreeAggregation` with
  Lemma 2's noise; the ``Sigma`` block is shifted by ``2 Lambda I`` (Lemma 3).
- ``privacy="local-jdp"`` ((alpha, beta)-local joint DP, Alg. 3): every CLIENT adds its own
  symmetric Gaussian ``N_t`` and Gaussian ``n_t`` (Lemma 5) before sending its update; the sum
  is shifted by ``2 sigma_X Lambda I``, ``Lambda = sqrt(T) (4 sqrt(m) + 2 ln(2T/zeta))``
  (Lemma 6). With ``client_noise=True`` the told rewards are the clients' scalar releases
  ``y + N(0, sigma_u^2)`` (:class:`~privtune.privacy.GaussianCurator`: the projection of the
  client's ``n_t`` on ``Phi(x_t)``, ``||Phi|| = 1``); the optimizer adds the part of ``n_t``
  orthogonal to ``Phi(x_t)`` and ``N_t``, so the released sums have Alg. 3's distribution.

Notation
--------
m        : feature dimension (``features.n_features``)
Sigma_r  : (m, m) released Sigma_tilde_t;  u_r : (m,) released u_tilde_t
V        : (m, m) Sigma_r + lam I
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from scipy import linalg

from .._checks import UNSET, check_int, renamed
from ..acquisition import Acquisition
from ..features import QuadratureFourierFeatures, RandomFourierFeatures
from ..privacy.gaussian import (
    TreeAggregation,
    check_alpha_beta,
    jdp_noise_std,
    local_jdp_noise_std,
    psd_shift,
    symmetric_gaussian,
    tree_depth,
)
from .base import BaseOptimizer, _check_positive

__all__ = ["QFFGPUCB"]

_FEATURES = ("qff", "rff")
_PRIVACY = (None, "jdp", "local-jdp")


class QFFGPUCB(BaseOptimizer):
    """GP-UCB with noisy quadrature (or random) Fourier features (Dubey 2021, Algorithm 1).

    The object plays both of the paper's roles. Its told history ``(X, y)`` is the raw data
    of the PRIVATIZER (``"jdp"``) or of the CLIENTs (``"local-jdp"``); the SERVER's part, the
    acquisition, ``predict`` and ``recommend``, reads only the released statistics
    ``(Sigma_tilde_t, u_tilde_t)`` (:meth:`private_parameters`; Remark 1: releasing them is
    itself private). Who holds raw values: with ``"jdp"``, the trusted privatizer; with
    ``"local-jdp"``, each client its own (the noise is added per told reward, before it joins
    the sum).

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    features : {"qff", "rff"}, default="qff"
        Quadrature Fourier features (Def. 4) or random Fourier features.
    privacy : {None, "jdp", "local-jdp"}, default=None
        The privacy model.
    alpha : float, default=1.0
        ``alpha > 0`` of (alpha, beta)-(local) JDP.
    privacy_beta : float, default=0.1
        ``beta`` in (0, 1) of (alpha, beta)-(local) JDP, the privacy failure probability.
        (The confidence width of the acquisition is :meth:`beta_t`, not this.) Formerly
        ``beta``, a deprecated alias for one release.
    m_bar : int, optional
        ``"qff"``: ``m_bar``, the quadrature nodes per dimension (default 8 for ``dim <= 2``,
        else 4). The feature count :attr:`m` is ``2 m_bar^dim``, or ``2 m_bar dim`` with
        ``additive=True``.
    n_frequencies : int, optional
        ``"rff"``: the number of random frequencies (default 128); :attr:`m` is
        ``2 n_frequencies`` (times ``dim`` with ``additive=True``). ``m``, the former name of
        both ``m_bar`` and ``n_frequencies``, is a deprecated alias for one release.
    lengthscale : float, default=1.0
        Lengthscale ``nu`` of the squared-exponential kernel (Sec. 6 uses 1).
    additive : bool, default=False
        The additive kernel (a sum of one-dimensional ones) with per-coordinate features.
    lam : float, default=1.0
        Regulariser ``lambda > 0``.
    horizon : int, default=1024
        ``T``: the tree's size and the ``T`` of Lemmas 2, 3, 5 and 6.
    B : float, default=1.0
        Bound on the RKHS norm of ``f``.
    rho : float, default=0.5
        Sub-Gaussian parameter of the reward noise (Bernoulli rewards: at most 1/2).
    reward_bound : float, optional
        ``|y| <= reward_bound`` for every reward (the paper's Bernoulli rewards: 1), which
        replaces the sub-Gaussian tail bound in the sensitivities. The privatizer (``"jdp"``)
        and the clients (``"local-jdp"`` without ``client_noise``) clip every told reward to
        ``[-reward_bound, reward_bound]``, so the bound holds whatever is told. The noise
        follows the paper's sensitivities, which take ``reward_bound`` as the largest change
        of one reward: a caller who needs that for any two rewards keeps them in
        ``[0, reward_bound]`` (privtune's adapters map scores to ``[0, 1]``).
    client_noise : bool, default=False
        ``"local-jdp"`` only: the told rewards already carry the clients' Gaussian noise
        ``N(0, sigma_u^2)`` of Lemma 5 (see the module docstring); they are not clipped.
    zeta : float, default=0.05
        Failure probability of the spectral bounds (Lemmas 3 and 6) and of ``beta_t``.
    beta_scale : float, optional
        Multiplies Theorem 1's ``beta_t^{1/2}``; default ``default_beta_scale = 0.03``,
        calibrated on the setting of Sec. 6.1 with trials disjoint from the reported ones
        (``python -m benchmarks.dubey calibrate``): mean cumulative regret at ``T = 1024``
        without privacy 534 with the theory's ``beta_t`` (as random play), 122 at 0.1, 16 at
        0.03 and 45 at 0.01; with JDP at ``alpha = 1`` every scale stays near random play.
    seed : int, optional
        Seed of the acquisition's raw samples and of random features.
    acquisition : str or privtune.acquisition.Acquisition, default="ucb"
        As in :class:`~privtune.optimizers.base.BaseOptimizer` (eq. 8 is ``"ucb"``).
    noise_seed : int, optional
        Seed of the privacy noise, for experiments only. Default: drawn once from the
        operating system when the optimizer is built, so a replay in the same object adds
        the same noise (a caller that rebuilds the optimizer must keep the noise seed: a
        fresh draw per rebuild would release the same data under new noise).
    snap, n_raw_samples, n_restarts
        As in :class:`~privtune.optimizers.base.BaseOptimizer`.
    """

    default_beta_scale = 0.03
    #: The measured one-coordinate kernel error above which the constructor warns.
    max_coordinate_error = 0.05
    #: How many of the latest played points the continuous search ranks for its anchors.
    n_anchor_pool = 256

    def __init__(
        self,
        dim: int,
        *,
        features: str = "qff",
        privacy: str | None = None,
        alpha: float = 1.0,
        privacy_beta: float = UNSET,
        m_bar: int | None = UNSET,
        n_frequencies: int | None = UNSET,
        lengthscale: float = 1.0,
        additive: bool = False,
        lam: float = 1.0,
        horizon: int = 1024,
        B: float = 1.0,
        rho: float = 0.5,
        reward_bound: float | None = None,
        client_noise: bool = False,
        zeta: float = 0.05,
        beta_scale: float | None = None,
        seed: int | None = None,
        noise_seed: int | None = None,
        snap: Callable[[np.ndarray], np.ndarray] | None = None,
        n_raw_samples: int = 512,
        n_restarts: int = 3,
        acquisition: str | Acquisition = "ucb",
        m: int | None = UNSET,
        beta: float = UNSET,
    ) -> None:
        super().__init__(
            dim,
            beta_scale=beta_scale,
            seed=seed,
            snap=snap,
            n_raw_samples=n_raw_samples,
            n_restarts=n_restarts,
            acquisition=acquisition,
        )
        privacy_beta = renamed("QFFGPUCB", "beta", "privacy_beta", beta, privacy_beta, 0.1)
        nodes = m_bar if features == "qff" else n_frequencies
        nodes = renamed(
            "QFFGPUCB", "m", "m_bar" if features == "qff" else "n_frequencies", m, nodes, None
        )
        #: Regulariser ``lambda > 0`` of ``V_t`` and the bound ``B`` on ``||f||_H``.
        self.lam = _check_positive("lam", lam)
        self.B = _check_positive("B", B)
        if features not in _FEATURES:
            raise ValueError(f"features must be one of {list(_FEATURES)}, got {features!r}.")
        if privacy not in _PRIVACY:
            raise ValueError(f"privacy must be one of {list(_PRIVACY)}, got {privacy!r}.")
        self.features_kind = features
        self.privacy = privacy
        if privacy is not None:
            alpha, privacy_beta = check_alpha_beta(alpha, privacy_beta, beta_name="privacy_beta")
            if self.acquisition.reads_rewards:
                raise ValueError(
                    f"acquisition={self.acquisition!r} reads the best told reward, which with "
                    f"privacy={privacy!r} is raw data the server may not see; use "
                    "incumbent='mean' (the released posterior) or 'ucb'."
                )
        self.alpha = float(alpha)
        self.privacy_beta = float(privacy_beta)
        self.horizon = check_int("horizon", horizon)
        self.rho = _check_positive("rho", rho)
        self.reward_bound = (
            None if reward_bound is None else _check_positive("reward_bound", reward_bound)
        )
        self.client_noise = bool(client_noise)
        if self.client_noise and privacy != "local-jdp":
            raise ValueError(
                f"client_noise=True is for privacy='local-jdp' only, got privacy={privacy!r}."
            )
        self.zeta = float(zeta)
        if not 0.0 < self.zeta < 1.0:
            raise ValueError(f"zeta must be in the open interval (0, 1), got {zeta!r}.")
        self.phi: QuadratureFourierFeatures | RandomFourierFeatures
        if features == "qff":
            m_bar = (8 if self.dim <= 2 else 4) if nodes is None else nodes
            #: Quadrature nodes per dimension (``"qff"``).
            self.m_bar = int(m_bar)
            self.phi = QuadratureFourierFeatures(self.dim, m_bar, lengthscale, additive=additive)
            self.approx_error = self.phi.error_bound()
            measured = self.phi.coordinate_error()
            if measured > self.max_coordinate_error:
                warnings.warn(
                    f"Quadrature features with m={m_bar} nodes per dimension approximate the "
                    f"SE kernel of lengthscale {float(np.min(lengthscale)):g} with an error of "
                    f"{measured:.2g} (of a kernel whose largest value is 1): the model is not "
                    "the GP it stands for. Use more nodes (m_bar) or a longer lengthscale.",
                    RuntimeWarning,
                    stacklevel=2,
                )
        else:
            n_freq = 128 if nodes is None else nodes
            self.n_frequencies = int(n_freq)
            self.phi = RandomFourierFeatures(
                self.dim, n_freq, lengthscale, additive=additive, seed=seed
            )
            # the O(n^{-1/2}) rate with constant 1: RFF have no deterministic bound
            self.approx_error = 1.0 / math.sqrt(n_freq)
        #: The feature count ``m`` of the paper (not ``m_bar``).
        self.m = self.phi.n_features
        if noise_seed is None:
            noise_seed = int(np.random.SeedSequence().generate_state(1)[0])
        self.noise_seed = int(noise_seed)
        self._reset_statistics()

    # -- the privatizer / clients -----------------------------------------------------------
    def _reset_statistics(self) -> None:
        m, T = self.m, self.horizon
        #: sigma (joint DP) or (sigma_x, sigma_u) (local joint DP)
        self.noise_std: float | tuple[float, float] = 0.0
        self._local_std = (0.0, 0.0)
        self._shift = 0.0
        self._lambda_min = 0.0
        self._lambda_max = 0.0
        self._kappa = 0.0
        if self.privacy == "jdp":
            sigma = jdp_noise_std(
                self.alpha,
                self.privacy_beta,
                T,
                B=self.B,
                rho=self.rho,
                reward_bound=self.reward_bound,
            )
            n = tree_depth(T)
            self.noise_std = sigma
            self._tree = TreeAggregation(m + 1, T, sigma, seed=self.noise_seed)
            self._shift = psd_shift(sigma, n, m, T, self.zeta)
            Lam = self._shift / 2.0
            self._lambda_min, self._lambda_max = Lam, 3.0 * Lam
            self._kappa = (
                sigma
                * math.sqrt(n / Lam)
                * (math.sqrt(m) + math.sqrt(2.0 * math.log(2.0 * T / self.zeta)))
            )
        elif self.privacy == "local-jdp":
            sx, su = local_jdp_noise_std(
                self.alpha, self.privacy_beta, m, B=self.B, reward_bound=self.reward_bound
            )
            self.noise_std = self._local_std = (sx, su)
            Lam = math.sqrt(T) * (4.0 * math.sqrt(m) + 2.0 * math.log(2.0 * T / self.zeta))
            self._shift = 2.0 * sx * Lam
            self._lambda_min, self._lambda_max = sx * Lam, 3.0 * sx * Lam
            self._kappa = su * math.sqrt(m * T / Lam)
        self._Sigma_sum = np.zeros((m, m))  # local JDP: the sum of the clients' noisy updates
        self._u_sum = np.zeros(m)
        self._refresh()

    def tell(self, x, y, noise_var=None) -> None:
        """Report reward(s), as in :meth:`BaseOptimizer.tell`; with ``"jdp"`` at most
        ``horizon`` in all (the size of the privatizer's tree), checked before anything is
        recorded."""
        n_new = np.atleast_1d(np.asarray(y, dtype=float)).shape[0]
        if self.privacy == "jdp" and self.t + n_new > self.horizon:
            raise ValueError(
                f"The tree of the JDP privatizer holds horizon={self.horizon} rewards; "
                f"{self.t} are told and {n_new} more would exceed it. Build the optimizer "
                "with a larger horizon."
            )
        super().tell(x, y, noise_var)

    @property
    def client_reward_noise_std(self) -> float:
        """``sigma_u`` of Lemma 5: the standard deviation a client adds to its reward when
        ``client_noise=True`` (``Phi`` has unit-norm rows, so the projection of ``n_t`` on
        ``Phi(x)`` has the same standard deviation)."""
        if self.privacy != "local-jdp":
            raise AttributeError("client_reward_noise_std is defined for privacy='local-jdp'.")
        return float(self._local_std[1])

    def _observe(self, x: np.ndarray, y: float) -> None:
        f = self.phi(x[None, :])[0]
        if self.privacy is not None and self.reward_bound is not None and not self.client_noise:
            y = min(max(y, -self.reward_bound), self.reward_bound)
        if self.privacy == "jdp":
            z = np.append(f, y)
            self._tree.add(np.outer(z, z))
        elif self.privacy == "local-jdp":
            sx, su = self._local_std
            rng = np.random.default_rng([self.noise_seed, self.t])  # this client's noise
            self._Sigma_sum += np.outer(f, f) + symmetric_gaussian(self.m, sx, rng)
            n = rng.normal(0.0, su, self.m)
            if self.client_noise:  # y carries <f, n'>: add n's part orthogonal to f
                n -= (f @ n) / (f @ f) * f
            self._u_sum += y * f + n
        else:
            self._Sigma_sum += np.outer(f, f)
            self._u_sum += y * f
        self._refresh()

    def _refresh(self) -> None:
        """Release ``(Sigma_tilde, u_tilde)`` and derive the server's model from them only."""
        m = self.m
        if self.privacy == "jdp":
            N = self._tree.prefix_sum()
            Sigma_r, u_r = N[:m, :m] + self._shift * np.eye(m), N[:m, m].copy()
        else:
            Sigma_r = self._Sigma_sum + self._shift * np.eye(m)
            u_r = self._u_sum.copy()
        self._Sigma_r, self._u_r = Sigma_r, u_r
        V = Sigma_r + self.lam * np.eye(m)
        try:
            self._V_chol = linalg.cho_factor(V, lower=True)
        except linalg.LinAlgError:
            # probability <= zeta: shift further (post-processing of released values)
            low = float(np.linalg.eigvalsh(V).min())
            self._V_chol = linalg.cho_factor(V + (self.lam - low) * np.eye(m), lower=True)
        self._theta = linalg.cho_solve(self._V_chol, u_r)
        self._logdet_V = 2.0 * float(np.sum(np.log(np.diag(self._V_chol[0]))))

    def private_parameters(self) -> tuple[np.ndarray, np.ndarray]:
        """The released ``(Sigma_tilde_t, u_tilde_t)`` (Remark 1): private, exportable."""
        return self._Sigma_r.copy(), self._u_r.copy()

    # -- the server ---------------------------------------------------------------------------
    def _posterior(self, X: np.ndarray, P: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        F = self.phi(X)
        mean = F @ self._theta
        if P is None:
            W = linalg.cho_solve(self._V_chol, F.T)
            return mean, np.maximum(np.sum(F.T * W, axis=0), 0.0)
        # pending points: V + Phi(P)^T Phi(P) (GP-BUCB); the mean is unchanged
        G = self.phi(P)
        V = self._V_chol[0] @ self._V_chol[0].T + G.T @ G
        W = linalg.solve(V, F.T, assume_a="pos")
        return mean, np.maximum(np.sum(F.T * W, axis=0), 0.0)

    def _mean(self, X: np.ndarray) -> np.ndarray:
        return self.phi(X) @ self._theta

    def _anchor_ranking(self) -> tuple[np.ndarray, np.ndarray]:
        """The last ``n_anchor_pool`` played points, ranked by the *released* posterior mean.

        The base class ranks the told rewards, which are the privatizer's raw data; the server
        may rank only by what it computes from ``(Sigma_tilde_t, u_tilde_t)``. The pool keeps a
        round's cost the same at any ``t``.
        """
        X = self.X[-self.n_anchor_pool :]
        return X, self._mean(X)

    def beta_t(self) -> float:
        """Theorem 1's ``beta_t^{1/2}``, the multiplier of ``||Phi(x)||_{V_t^{-1}}``.

        ``B sqrt(lambda_max / rho^2 + 1) + t B eps / (rho sqrt(lambda_min + lam))
        + kappa / rho + sqrt(log det(V_t / (lam + lambda_min)) + 2 ln(2 / zeta))`` with
        ``eps`` the features' approximation error. Without privacy ``lambda_min =
        lambda_max = kappa = 0``; the paper's ``sqrt(lambda_min)`` is read as
        ``sqrt(lambda_min + lam)``, the smallest eigenvalue of ``V_t``'s regularisation.
        """
        t = self.t + 1
        rho = self.rho
        det_term = self._logdet_V - self.m * math.log(self.lam + self._lambda_min)
        return (
            self.B * math.sqrt(self._lambda_max / rho**2 + 1.0)
            + t * self.B * self.approx_error / (rho * math.sqrt(self._lambda_min + self.lam))
            + self._kappa / rho
            + math.sqrt(max(det_term, 0.0) + 2.0 * math.log(2.0 / self.zeta))
        )

    def __repr__(self) -> str:
        return (
            f"QFFGPUCB(dim={self.dim}, t={self.t}, features={self.phi!r}, privacy={self.privacy!r})"
        )
