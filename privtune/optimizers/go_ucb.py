"""GO-UCB: global optimization with a parametric model (Liu & Wang 2023, Algorithm 1).

The objective is modelled as ``f_{w*}(x)`` for ``w*`` in a differentiable family
(:mod:`privtune.parametric`; by default the paper's two-layer network).

Phase I (uniform exploration)
    The first ``n`` proposals are uniform; once their ``n`` rewards are told, the regression
    oracle (eq. 2) fits ``w_hat_0 = argmin_w sum_j (f_w(x_j) - y_j)^2``.
Phase II (optimistic exploration), round ``t = 1, 2, ...``
    ``Sigma_t = lam I + sum_{i<t} g_i g_i^T`` with ``g_i = grad_w f_{x_i}(w_hat_i)`` (eq. 3,
    a rank-one update per round);
    ``w_hat_t = Sigma_t^{-1} (sum_{i<t} g_i (g_i^T w_hat_i + y_i - f_{x_i}(w_hat_i))
    + lam w_hat_0)`` (eq. 5, the minimiser of eq. 4);
    ``Ball_t = {w : ||w - w_hat_t||^2_{Sigma_t} <= beta_t}`` (eq. 6);
    ``x_t = argmax_x max_{w in Ball_t} f_x(w)`` (step 5).

The paper's sums in eqs. 3-5 start at ``i = 0``, an index Algorithm 1 gives no point for; here
they run over the Phase II rounds before ``t``, so ``Sigma_1 = lam I`` and
``w_hat_1 = w_hat_0``.

Notation
--------
n        : n_explore, the length of Phase I
T        : horizon, the number of Phase II rounds the defaults are tuned for
d_w      : the model's number of parameters
Sigma_inv: (d_w, d_w), Sigma_t^{-1}, kept by Sherman-Morrison updates
b        : (d_w,), sum_i g_i (g_i^T w_hat_i + y_i - f_{x_i}(w_hat_i))
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import linalg, optimize

from .._checks import UNSET, check_int, renamed
from ..parametric import ParametricModel, TwoLayerNetwork, check_model
from .base import BaseOptimizer, _check_positive

__all__ = ["GOUCB"]

#: How step 5 (the optimistic maximisation over ``x`` and ``w``) is solved.
SOLVERS = ("first-order", "joint")
#: Where the joint ascent starts: the best raw samples of the first-order UCB, or the told
#: points with the highest rewards.
ASCENT_STARTS = ("ucb", "observed")


class GOUCB(BaseOptimizer):
    """GO-UCB (Liu & Wang 2023, Algorithm 1) with the ask/tell contract.

    Phase I proposes ``n_explore`` uniform points and fits ``w_hat_0`` by the regression
    oracle; Phase II plays ``x_t = argmax_x max_{w in Ball_t} f_x(w)`` with ``Sigma_t``,
    ``w_hat_t`` and ``Ball_t`` of eqs. 3, 5 and 6, updated by one rank-one step per told
    reward. Privacy model: none of its own; with privatized rewards it learns from what the
    curator released (ε-LDP on scores, docs/privacy.md).

    Deviations from the paper, each for a stated reason:

    - **Regression oracle.** The paper's App. D.1 runs 2000 SGD steps with learning rate
      ``1e-11``, which leaves the network at its initialisation. Here the least-squares
      problem of eq. 2 is solved by L-BFGS-B with analytic gradients from ``n_oracle_starts``
      random initialisations, keeping the best fit.
    - **Step 5.** ``solver="joint"`` (the default) maximises over ``x`` and ``w``
      together by projected gradient ascent (Adam steps in ``x``, normalised steps in ``v``)
      from several starts: ``w = w_hat_t + L v`` with ``L L^T = Sigma_t^{-1}``, so the ball
      is ``||v|| <= sqrt(beta_t)`` and the projection is exact. The paper uses plain gradient
      ascent (2000 steps, learning rate ``1e-4``). ``solver="first-order"`` maximises
      the closed form of the inner problem for the linearised model,
      ``f_x(w_hat_t) + sqrt(beta_t) ||grad_w f_x(w_hat_t)||_{Sigma_t^{-1}}``, with the
      acquisition optimiser of the GP algorithms.
    - **beta_t and lam.** The defaults are App. D.1's ``beta_t = d_w^3 F^4 t / T`` and
      ``lam = sqrt(T) ln^2 T``, times the practical scales ``default_beta_scale = 1e-8`` and
      ``default_lam_scale = 1e-4``. The formulas as written make the ball so wide
      (``d_w^3 = 1.7e8`` for the 20-dimensional network) and ``w_hat_t`` so stiff that
      Phase II learns almost nothing from its own rewards.

    The defaults (``solver``, both scales) were chosen on problems disjoint from the
    reported ones (``python -m benchmarks.go_ucb calibrate``: realizable random networks in 5
    and 10 dimensions, Ackley-10 and Levy-10, ``n = 8``, ``T = 64``, seeds 1000 and 1001):
    among ``beta_scale`` in ``1e-12 ... 1e-4`` and ``lam`` in ``{App. D.1's, 1, 0.01}``, the
    lowest cumulative regret relative to random search, averaged over the problems, was
    ``joint`` with ``beta_scale = 1e-8`` and ``lam = 0.01`` (1.39 times random's; the same
    with ``first-order``: 1.44; App. D.1's ``lam``: 1.50 at best). GP-UCB's was 0.35 times
    random's on the same problems: GO-UCB did better than random search only on the
    realizable networks (0.25 and 0.30 times random's), and worse on Ackley and Levy, whose
    optima are inside the cube (it proposes vertices of the cube; docs/benchmarks/go-ucb.md).

    Pending points (batches): in Phase I they are uniform draws; in Phase II each pending
    point ``x_p`` adds ``g_p g_p^T`` (at ``w_hat_t``) to ``Sigma_t`` for the acquisition only,
    the analogue of GP-BUCB: the ball shrinks along the directions already being explored.

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    model : ParametricModel, optional
        The parametric family; default ``TwoLayerNetwork(dim, hidden=25)`` (the paper's).
    n_explore : int, optional
        Length ``n`` of Phase I; default ``ceil(sqrt(horizon))`` (Theorem 4.1), at least 2
        (the horizon if it is smaller).
    horizon : int, optional
        ``T``, the number of Phase II rounds the defaults of ``n_explore``, ``lam`` and
        ``beta_t`` are set for; default 100. Asking beyond it is allowed (``beta_t`` keeps
        growing as ``t / T``).
    lam : float, optional
        Regularisation weight ``lambda > 0`` of eqs. 3-5; default
        ``default_lam_scale * sqrt(T) ln^2 T`` (App. D.1's, scaled).
    beta : float or callable, optional
        ``beta_t`` itself: a constant, or a function of the Phase II round ``t >= 1``. Default
        ``beta_scale * d_w^3 F^4 t / T``.
    beta_scale : float, optional
        Multiplies App. D.1's ``beta_t``; default ``default_beta_scale``.
    F : float, default=1.0
        Bound ``|f| <= F`` of App. D.1's ``beta_t`` (rewards in ``[-1, 1]`` give 1).
    solver : {"joint", "first-order"}, default="joint"
        How step 5 is solved (see above); its acquisition is always the upper confidence
        bound over ``Ball_t``. Formerly ``acquisition``, a deprecated alias for one release.
    n_oracle_starts : int, default=5
        Random initialisations of the regression oracle.
    oracle_maxiter : int, default=500
        L-BFGS-B iterations per oracle start.
    n_ascent_starts : int, default=8
        Starts of the joint ascent (the best raw samples of the first-order UCB).
    n_ascent_steps : int, default=200
        Adam steps of the joint ascent.
    ascent_lr : float, default=0.02
        Adam step size for ``x`` (cube units); ``v`` uses ``ascent_lr * sqrt(beta_t)``.
    ascent_starts : {"ucb", "observed"}, default="ucb"
        Where the joint ascent starts: ``"ucb"``, the best raw samples of the first-order UCB
        (with perturbations of the best told points); ``"observed"``, the ``n_ascent_starts``
        told points with the highest told rewards (Phase I's points at first). The paper
        does not say where its ascent starts.
    step_bound : float, optional
        Keeps the joint ascent within ``step_bound`` (cube units, per coordinate) of its start:
        step 5 solved over a box around each start instead of the whole cube. ``None`` (the
        default): the whole cube, as Algorithm 1 writes it.
    refit_every : int, optional
        Every ``refit_every`` Phase II rounds, call the regression oracle again on all told
        rewards and restart eqs. 3-5 from that fit: ``w_hat_0`` becomes the new fit and
        ``Sigma_t``, ``w_hat_t`` are rebuilt from the Phase II rounds' gradients at it.
        ``None`` (the default): the oracle runs once, after Phase I, as in Algorithm 1.
    epsilon : float, optional
        The curator's epsilon when rewards are privatized (recorded; the algorithm is the same).
    seed : int, optional
        Seed of the uniform draws, the oracle's initialisations and the acquisition's raw
        samples.
    snap : callable, optional
        The search space's ``snap``, applied to every proposal.
    n_raw_samples : int, default=512
        Raw samples of the acquisition optimiser.
    n_restarts : int, default=3
        L-BFGS-B starts of the first-order acquisition optimiser.

    Examples
    --------
    >>> import numpy as np
    >>> from privtune.optimizers import GOUCB
    >>> opt = GOUCB(dim=2, horizon=16, seed=0)
    >>> for _ in range(8):
    ...     x = opt.ask()
    ...     opt.tell(x, -float(np.sum((x - 0.3) ** 2)))
    >>> opt.phase
    2
    """

    #: Multiplies App. D.1's ``beta_t`` (calibrated; see the class docstring).
    default_beta_scale = 1e-8
    #: Multiplies App. D.1's ``lam = sqrt(T) ln^2 T`` (calibrated; see the class docstring).
    default_lam_scale = 1e-4

    def __init__(
        self,
        dim: int,
        *,
        model: ParametricModel | None = None,
        n_explore: int | None = None,
        horizon: int | None = None,
        lam: float | None = None,
        beta: float | Callable[[int], float] | None = None,
        beta_scale: float | None = None,
        F: float = 1.0,
        solver: str = UNSET,
        n_oracle_starts: int = 5,
        oracle_maxiter: int = 500,
        n_ascent_starts: int = 8,
        n_ascent_steps: int = 200,
        ascent_lr: float = 0.02,
        ascent_starts: str = "ucb",
        step_bound: float | None = None,
        refit_every: int | None = None,
        epsilon: float | None = None,
        seed: int | None = None,
        snap: Callable[[np.ndarray], np.ndarray] | None = None,
        n_raw_samples: int = 512,
        n_restarts: int = 3,
        acquisition: str = UNSET,
    ) -> None:
        T = 100 if horizon is None else check_int("horizon", horizon)
        if lam is None:
            lam = self.default_lam_scale * math.sqrt(T) * max(math.log(T), 1.0) ** 2
        super().__init__(
            dim,
            epsilon=epsilon,
            beta_scale=beta_scale,
            seed=seed,
            snap=snap,
            n_raw_samples=n_raw_samples,
            n_restarts=n_restarts,
        )
        #: Regularisation weight ``lambda > 0`` of eqs. 3-5.
        self.lam = _check_positive("lam", lam)
        self.horizon = T
        if n_explore is None:
            n_explore = min(T, max(2, math.ceil(math.sqrt(T))))
        self.n_explore = check_int("n_explore", n_explore)
        if self.n_explore > T:
            raise ValueError(
                f"n_explore ({self.n_explore}) must not exceed the horizon ({T}): Phase I "
                "would outlast the run it prepares. Lower n_explore or raise horizon."
            )
        self.model = check_model(TwoLayerNetwork(self.dim) if model is None else model, self.dim)
        if beta is not None and not callable(beta):
            beta = _check_positive("beta", beta)
        self._beta_arg = beta
        self.F = _check_positive("F", F)
        name = "solver" if acquisition is UNSET else "acquisition"  # the name the caller used
        solver = renamed("GOUCB", "acquisition", "solver", acquisition, solver, "joint")
        if solver not in SOLVERS:
            raise ValueError(f"{name} must be one of {list(SOLVERS)}, got {solver!r}.")
        self.solver = solver
        self.n_oracle_starts = check_int("n_oracle_starts", n_oracle_starts)
        self.oracle_maxiter = check_int("oracle_maxiter", oracle_maxiter)
        self.n_ascent_starts = check_int("n_ascent_starts", n_ascent_starts)
        self.n_ascent_steps = check_int("n_ascent_steps", n_ascent_steps, 0)
        self.ascent_lr = _check_positive("ascent_lr", ascent_lr)
        if ascent_starts not in ASCENT_STARTS:
            raise ValueError(
                f"ascent_starts must be one of {list(ASCENT_STARTS)}, got {ascent_starts!r}."
            )
        self.ascent_starts = ascent_starts
        self.step_bound = None if step_bound is None else _check_positive("step_bound", step_bound)
        self.refit_every = None if refit_every is None else check_int("refit_every", refit_every)
        if solver == "first-order" and (ascent_starts != "ucb" or step_bound is not None):
            raise ValueError(
                'ascent_starts and step_bound configure the joint ascent (solver="joint"); '
                'solver="first-order" has no ascent to start or bound.'
            )
        p = self.model.n_params
        self.w0: np.ndarray | None = None  # w_hat_0, set when Phase I ends
        self.w_hat: np.ndarray | None = None  # w_hat_t for the next round
        self._Sigma_inv = np.eye(p) / self.lam
        self._b = np.zeros(p)
        self._interim: tuple[int, np.ndarray] | None = None  # oracle fit during Phase I

    # -- the paper's quantities ---------------------------------------------------------------
    @property
    def phase(self) -> int:
        """1 while fewer than ``n_explore`` rewards are told, then 2."""
        return 1 if self.t < self.n_explore else 2

    @property
    def round(self) -> int:
        """The Phase II round ``t`` the next ask plays (0 during Phase I)."""
        return 0 if self.phase == 1 else self.t - self.n_explore + 1

    @property
    def Sigma(self) -> np.ndarray:
        """``Sigma_t`` of eq. 3 (the inverse of the kept ``Sigma_t^{-1}``)."""
        return np.linalg.inv(self._Sigma_inv)

    def beta_t(self) -> float:
        """``beta_t`` for the next Phase II round (App. D.1's ``d_w^3 F^4 t / T``)."""
        t = max(self.round, 1)
        if callable(self._beta_arg):
            return float(self._beta_arg(t))
        if self._beta_arg is not None:
            return float(self._beta_arg)
        return self.model.n_params**3 * self.F**4 * t / self.horizon

    @property
    def beta(self) -> float:
        """The ``beta_t`` the next ask uses (``beta_scale`` times App. D.1's by default)."""
        if self._beta_arg is not None:
            return self.beta_t()
        return self.beta_scale * self.beta_t()

    # -- regression oracle --------------------------------------------------------------------
    def fit_oracle(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The regression oracle of eq. 2: least squares over ``w``, best of several starts.

        Parameters
        ----------
        X : ndarray of shape (n, dim)
        y : ndarray of shape (n,)
        rng : numpy.random.Generator
            Source of the initialisations.

        Returns
        -------
        ndarray of shape (n_params,)

        Raises
        ------
        FloatingPointError
            When the model's outputs or gradients are not finite.
        """
        model = self.model

        def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
            r = model.value(X, w) - y
            g = model.grad_w(X, w).T @ r
            return 0.5 * float(r @ r), g

        best_w, best_loss = None, math.inf
        for _ in range(self.n_oracle_starts):
            w_init = np.asarray(model.init_params(rng), dtype=float)
            f0, g0 = loss(w_init)
            if not (math.isfinite(f0) and np.all(np.isfinite(g0))):
                raise FloatingPointError(
                    "The model returned non-finite values or gradients during the regression "
                    f"oracle's fit ({model!r} at its initialisation); check the model and that "
                    "the rewards are finite and of moderate scale."
                )
            res = optimize.minimize(
                loss,
                w_init,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": self.oracle_maxiter},
            )
            if math.isfinite(res.fun) and res.fun < best_loss:
                best_w, best_loss = np.array(res.x, dtype=float), float(res.fun)
        if best_w is None or not np.all(np.isfinite(best_w)):
            raise FloatingPointError(
                "The regression oracle's fit produced non-finite model outputs from every "
                f"start ({model!r}); the rewards may be of a scale the model cannot fit."
            )
        return best_w

    # -- ask/tell hooks -----------------------------------------------------------------------
    def _observe(self, x: np.ndarray, y: float) -> None:
        t = self.t  # the reward is already appended
        if t < self.n_explore:
            return
        if t == self.n_explore:
            self.w0 = self.fit_oracle(self.X, self.y, self._stream(0, t))
            self.w_hat = self.w0.copy()
            self._interim = None
            return
        if self.refit_every is not None and (t - self.n_explore) % self.refit_every == 0:
            self._refit(t)
            return
        w = self.w_hat
        assert w is not None and self.w0 is not None
        g = self.model.grad_w(x[None, :], w)[0]
        f = float(self.model.value(x[None, :], w)[0])
        self._b += g * (float(g @ w) + y - f)
        Sg = self._Sigma_inv @ g
        self._Sigma_inv -= np.outer(Sg, Sg) / (1.0 + float(g @ Sg))
        self._Sigma_inv = 0.5 * (self._Sigma_inv + self._Sigma_inv.T)
        self.w_hat = self._Sigma_inv @ (self._b + self.lam * self.w0)

    def _refit(self, t: int) -> None:
        """The regression oracle on all ``t`` told rewards, then eqs. 3-5 rebuilt around it:
        ``Sigma = lam I + sum_i g_i g_i^T`` and ``b = sum_i g_i (g_i^T w_0 + y_i - f_i(w_0))``
        over the Phase II rounds, every ``g_i`` at the new ``w_hat_0``."""
        self.w0 = self.fit_oracle(self.X, self.y, self._stream(2, t))
        X2, y2 = self.X[self.n_explore :], self.y[self.n_explore :]
        G = self.model.grad_w(X2, self.w0)
        r = y2 - self.model.value(X2, self.w0)
        self._Sigma_inv = np.linalg.inv(self.lam * np.eye(G.shape[1]) + G.T @ G)
        self._Sigma_inv = 0.5 * (self._Sigma_inv + self._Sigma_inv.T)
        self._b = G.T @ (G @ self.w0 + r)
        self.w_hat = self._Sigma_inv @ (self._b + self.lam * self.w0)

    def _current_w(self) -> np.ndarray:
        """``w_hat_t``; during Phase I, the oracle fitted to the rewards told so far."""
        if self.w_hat is not None:
            return self.w_hat
        if self.t == 0:
            raise RuntimeError("The model needs at least one told reward.")
        if self._interim is None or self._interim[0] != self.t:
            self._interim = (self.t, self.fit_oracle(self.X, self.y, self._stream(1, self.t)))
        return self._interim[1]

    def _given_pending(self, P: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """``(w_hat_t, Sigma^{-1})`` with ``g_p g_p^T`` added to ``Sigma_t`` per pending ``p``.

        GP-BUCB's idea: a pending point shrinks the ball along its gradient ``g_p`` (at
        ``w_hat_t``) and carries no value, so ``w_hat_t`` is unchanged. (A constant liar, as
        the GP algorithms use, would move ``w_hat_t`` through the linearised update of eq. 5;
        with the small default ``lam`` that step is large, and on a test problem it raised
        the acquisition at the pending point instead of lowering it.)
        """
        w = self._current_w()
        S = self._Sigma_inv
        if P is None or self.w_hat is None:
            return w, S
        G = self.model.grad_w(P, w)  # (p, d_w)
        SG = S @ G.T
        return w, S - SG @ np.linalg.solve(np.eye(G.shape[0]) + G @ SG, SG.T)

    def _posterior(self, X: np.ndarray, P: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """``f_x(w_hat_t)`` and ``||grad_w f_x(w_hat_t)||^2_{Sigma_t^{-1}}`` at ``X``."""
        w, S = self._given_pending(P)
        G = self.model.grad_w(X, w)
        var = np.sum((G @ S) * G, axis=1)
        return self.model.value(X, w), np.maximum(var, 0.0)

    def _anchor_ranking(self) -> tuple[np.ndarray, np.ndarray]:
        """The told points ranked by their told rewards (GO-UCB's network, fitted by the
        oracle, is not a pooling posterior mean)."""
        return self.X, self.y

    def _mean(self, X: np.ndarray) -> np.ndarray:
        return self.model.value(X, self._current_w())

    def _propose(self, C: np.ndarray | None, P: np.ndarray | None) -> np.ndarray:
        if self._uniform or self.phase == 1:
            self.turn = "start-up"
            return self._uniform_point(C)
        w, S = self._given_pending(P)
        root_beta = math.sqrt(self.beta)
        model = self.model

        def ucb(Z: np.ndarray) -> np.ndarray:
            G = model.grad_w(Z, w)
            width = np.sqrt(np.maximum(np.sum((G @ S) * G, axis=1), 0.0))
            return model.value(Z, w) + root_beta * width

        if self.solver == "first-order":
            return self._maximize(ucb, C, batched_gradient=True)
        return self._joint_ascent(ucb, w, S, root_beta, C)[0]

    def _joint_ascent(
        self, ucb, w_hat: np.ndarray, S: np.ndarray, root_beta: float, C: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """``argmax_x max_{w in Ball_t} f_x(w)`` by projected gradient ascent over ``(x, v)``.

        ``w = w_hat_t + L v`` with ``L L^T = Sigma_t^{-1}`` maps the ellipsoid ``Ball_t`` onto
        the Euclidean ball ``||v|| <= sqrt(beta_t)``. The starts are the best raw samples (or
        candidates) of the first-order UCB, with ``v`` at the linearised inner maximiser
        ``sqrt(beta_t) L^T g / ||L^T g||``. With ``candidates`` only ``v`` moves. The best
        iterate of each start is kept.

        Returns
        -------
        x, w, value
            The proposal, its maximising parameters in ``Ball_t`` and ``f_x(w)``.
        """
        model = self.model
        L = linalg.cholesky(S + 1e-12 * np.eye(S.shape[0]), lower=True)
        if C is not None:
            starts = C
        elif self.ascent_starts == "observed":
            starts = self.X[np.argsort(-self.y, kind="stable")[: self.n_ascent_starts]]
        else:
            raw = self._rng.random((self.n_raw_samples, self.dim))
            anchors = self._anchors()
            if anchors is not None:
                raw = np.vstack([raw, np.clip(anchors, 0.0, 1.0)])
            if self.snap is not None:
                raw = self.snap(raw)
            starts = raw[np.argsort(-ucb(raw))[: self.n_ascent_starts]]
        X = starts.copy()
        if self.step_bound is None:
            lo, hi = 0.0, 1.0
        else:
            lo = np.clip(starts - self.step_bound, 0.0, 1.0)
            hi = np.clip(starts + self.step_bound, 0.0, 1.0)
        GL = model.grad_w(X, w_hat) @ L  # rows: (L^T g)^T
        norms = np.linalg.norm(GL, axis=1, keepdims=True)
        V = root_beta * GL / np.where(norms > 0, norms, 1.0)
        move_x = C is None
        lr_x, lr_v = self.ascent_lr, self.ascent_lr * root_beta
        mx, vx = np.zeros_like(X), np.zeros_like(X)
        b1, b2, eps = 0.9, 0.999, 1e-8
        best_X, best_V = X.copy(), V.copy()
        best_val = model.value(X, w_hat + V @ L.T)
        for k in range(1, self.n_ascent_steps + 1):
            W = w_hat + V @ L.T
            gv = model.grad_w(X, W) @ L
            # v: normalised gradient steps, then the exact projection onto the ball (a
            # direction-preserving step keeps the linearised optimum a fixed point)
            gn = np.linalg.norm(gv, axis=1, keepdims=True)
            V = V + lr_v * gv / np.where(gn > 0, gn, 1.0)
            n_v = np.linalg.norm(V, axis=1, keepdims=True)
            V = V * np.minimum(1.0, root_beta / np.maximum(n_v, 1e-300))
            if move_x:
                gx = model.grad_x(X, W)
                mx = b1 * mx + (1 - b1) * gx
                vx = b2 * vx + (1 - b2) * gx**2
                X = X + lr_x * (mx / (1 - b1**k)) / (np.sqrt(vx / (1 - b2**k)) + eps)
                X = np.clip(X, lo, hi)
            val = model.value(X, w_hat + V @ L.T)
            better = val > best_val
            best_X[better], best_V[better], best_val[better] = X[better], V[better], val[better]
        X, V = best_X, best_V
        if move_x and self.snap is not None:
            X = self.snap(X)
        values = model.value(X, w_hat + V @ L.T)
        best = int(np.argmax(values))
        w_best = w_hat + L @ V[best]
        return np.array(X[best], dtype=float), w_best, float(values[best])

    def __repr__(self) -> str:
        return (
            f"GOUCB(dim={self.dim}, t={self.t}, phase={self.phase}, model={self.model!r}, "
            f"solver={self.solver!r})"
        )
