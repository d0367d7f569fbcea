"""MoMA-GP-UCB: median of means over repeated plays, Nyström features updated per epoch.

Algorithm 3 of Zhou & Tan (2021) and its LDP version (line 6 receives CTL(epsilon) rewards).
Time is divided into epochs of ``k`` plays of the same point. In epoch ``n``:

- line 5: ``x_n = argmax mu_tilde_{n-1}(x) + beta_n sigma_tilde_{n-1}(x)``;
- line 6: play ``x_n`` ``k`` times, observing ``y_{n,1..k}``;
- lines 7-9: Nyström embedding over the epoch points ``x_1..x_n`` (Algorithm 4), ``Phi_n``,
  ``V_n = Phi_n^T Phi_n + lam I``;
- line 10: ``k`` least-squares estimates ``theta_{n,j} = V_n^{-1} sum_i y_{i,j} phi(x_i)``;
- lines 11-12: ``r_j = median_{s != j} ||theta_{n,j} - theta_{n,s}||_{V_n}``,
  ``k* = argmin_j r_j``;
- lines 13-14: ``mu_tilde_n = phi^T theta_{n,k*}`` and the approximate variance.

Parameters of Theorem 4 / Corollary 1:
``beta_{n+1} = B (1 + 1/sqrt(1 - acc)) + 3 (9 m_n c)^{1/(1+alpha)} n^{(1-alpha)/(2(1+alpha))}``,
with ``c`` the bound on ``E|eta|^{1+alpha}`` (LDP:
``c = R^2 + 8 (B + R)^2 / epsilon^2``), ``q = 6 rho ln(4T/delta) / acc^2`` and
``k = ceil(24 ln(4 e T / delta))``.

Deviations, named: the theoretical ``k`` is in the hundreds for any useful ``T`` (295 at T =
1000, delta = 0.05), which leaves a handful of epochs; the default is the practical ``k = 3``
(chosen on the synthetic benchmark: docs/benchmarks/tuning-history.md, "How the practical
defaults were chosen") and ``k="theory"`` gives the theorem's value. Epochs complete when
their ``k``-th reward is told, possibly out of order when several are evaluated in parallel;
the model is refitted at each completion over the completed epochs in completion order.
"""

from __future__ import annotations

import math

import numpy as np

from ._nystrom import DEFAULT_Q, NystromModel, NystromOptimizer

__all__ = ["MoMAGPUCB", "median_of_means_index"]

#: The practical default number of plays per epoch.
DEFAULT_K = 3


def median_of_means_index(Theta: np.ndarray, V: np.ndarray) -> tuple[int, np.ndarray]:
    """Lines 11-12 of Algorithm 3: the estimate closest, in median V-norm, to the others.

    Parameters
    ----------
    Theta : ndarray of shape (m, k)
        Columns ``theta_{n,j}``.
    V : ndarray of shape (m, m)

    Returns
    -------
    k_star : int
        ``argmin_j r_j`` (lowest index on ties).
    r : ndarray of shape (k,)
        ``r_j = median_{s != j} ||theta_j - theta_s||_V``.
    """
    k = Theta.shape[1]
    if k == 1:
        return 0, np.zeros(1)
    G = Theta.T @ V @ Theta
    g = np.diag(G)
    D = np.sqrt(np.maximum(g[:, None] + g[None, :] - 2.0 * G, 0.0))
    off = ~np.eye(k, dtype=bool)
    r = np.array([np.median(D[j, off[j]]) for j in range(k)])
    return int(np.argmin(r)), r


class _Epoch:
    __slots__ = ("vs", "x", "ys")

    def __init__(self, x: np.ndarray) -> None:
        self.x = x
        self.ys: list[float] = []
        self.vs: list[float] = []  # the rewards' known noise variances


class MoMAGPUCB(NystromOptimizer):
    """MoMA-GP-UCB and LDP-MoMA-GP-UCB (Zhou & Tan 2021, Algorithm 3).

    ``ask`` returns the current epoch's point until it has been handed out ``k`` times (told
    or pending), then opens a new epoch. ``tell`` files each reward under the oldest open
    epoch at the same point (or opens one, when a history is replayed).

    Privacy model: learns from privatized rewards only (epsilon-LDP comes from the curator,
    docs/privacy.md). Each of the ``k`` plays is a separate report: in hyperparameter tuning on
    one data set they all concern the same data owner and their epsilons compose.

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    k : int or "theory", default=3
        Plays per epoch. ``"theory"`` is ``ceil(24 ln(4 e T / delta))`` (needs ``horizon``).
    alpha : float, default=1.0
        Moment order, in (0, 1].
    c : float, optional
        Bound on ``E|eta|^{1+alpha}``. Default ``R^2 + 8 (B + R)^2 / epsilon^2`` (LDP,
        Corollary 1) or ``R^2`` (non-private).
    horizon : int, optional
        ``T`` in the theorem's parameters; ``None`` reads it as the current round.
    q : float or "theory", default=4.0
        Nyström oversampling (see :class:`~privtune.optimizers.ATAGPUCB`).
    nystrom_accuracy : float, default=0.5
        The theorem's ``varepsilon`` in (0, 1).
    **kwargs
        ``epsilon`` (the curator's epsilon: the LDP version; ``None``: the non-private one),
        ``beta_scale`` (default: the class attribute ``default_beta_scale``, calibrated as
        described in the optimizers guide), ``kernel``, ``lam``, ``delta``, ``B``, ``R``,
        ``seed``, ... as in :class:`~privtune.optimizers.base.KernelOptimizer`.
    """

    default_beta_scale = 0.01

    def __init__(
        self,
        dim: int,
        *,
        k: int | str = DEFAULT_K,
        alpha: float = 1.0,
        c: float | None = None,
        horizon: int | None = None,
        q: float | str = DEFAULT_Q,
        nystrom_accuracy: float = 0.5,
        **kwargs,
    ) -> None:
        super().__init__(
            dim, alpha=alpha, horizon=horizon, q=q, nystrom_accuracy=nystrom_accuracy, **kwargs
        )
        if k == "theory":
            if horizon is None:
                raise ValueError('k="theory" needs the horizon T: pass horizon=T.')
            k = math.ceil(24.0 * math.log(4.0 * math.e * horizon / self.delta))
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f'k must be a positive integer or "theory", got {k!r}.')
        self.k = int(k)
        if c is None:
            c = self.R**2
            if self.epsilon is not None:
                c += 8.0 * (self.B + self.R) ** 2 / self.epsilon**2
        if c <= 0:
            raise ValueError(f"c must be > 0, got {c!r}.")
        self.c = float(c)
        self._open: list[_Epoch] = []
        self._done: list[_Epoch] = []
        self.k_star_history: list[int] = []

    @property
    def n_epochs(self) -> int:
        """Number of completed epochs ``n``."""
        return len(self._done)

    def beta_t(self) -> float:
        a = self.alpha
        n = max(self.n_epochs, 1)
        acc = self.nystrom_accuracy
        width = (
            3.0
            * (9.0 * self.m * self.c) ** (1.0 / (1.0 + a))
            * n ** ((1.0 - a) / (2.0 * (1.0 + a)))
        )
        return self.B * (1.0 + 1.0 / math.sqrt(1.0 - acc)) + width

    # -- epochs --------------------------------------------------------------------------------
    def _propose(self, C, P):
        for epoch in self._open:
            handed_out = len(epoch.ys) + (
                0 if P is None else int(np.sum(np.all(np.abs(P - epoch.x) <= 1e-12, axis=1)))
            )
            if handed_out < self.k:
                self.turn = "repeat"
                return epoch.x.copy()
        x = super()._propose(C, P)
        self._open.append(_Epoch(np.array(x, dtype=float)))
        return x

    def _observe(self, x: np.ndarray, y: float) -> None:
        epoch = next((e for e in self._open if np.allclose(e.x, x, rtol=0.0, atol=1e-12)), None)
        if epoch is None:
            epoch = _Epoch(x.copy())
            self._open.append(epoch)
        epoch.ys.append(y)
        epoch.vs.append(self._v[-1])
        if len(epoch.ys) == self.k:
            self._open.remove(epoch)
            self._done.append(epoch)
            # the fitted surrogate learns the epoch's mean, whose noise variance is mean(v) / k
            self._fit_hyperparameters(epoch.x, float(np.mean(epoch.ys)), np.mean(epoch.vs) / self.k)
            self._update()

    def _update(self) -> None:
        n = self.n_epochs
        X = np.array([e.x for e in self._done])
        Y = self._model_rewards(
            np.array([e.ys for e in self._done])
        )  # (n, k): row i holds y_{i,1..k}
        model = self._sample_model(X, n)
        if model.m:
            Theta = model.solve(model.Phi.T @ Y)  # (m, k): theta_{n,j}
            k_star, _ = median_of_means_index(Theta, model.V)
            model.theta = Theta[:, k_star]
            self.k_star_history.append(k_star)
        self._model = model

    def _rebuild(self) -> None:
        self._model = NystromModel.prior(self.kernel, self.lam, self.dim)
        done, self._done = self._done, []
        for epoch in done:
            self._done.append(epoch)
            self._update()
