"""One Gaussian-process surrogate for every GP-family optimizer, fitted to the scores it is told.

The model of a told reward ``y_i`` at ``x_i`` (in the optimizer's reward units) is

    y_i = shift + scale (c + f(x_i) + e_i),   f ~ GP(0, s2 k),   e_i ~ N(0, v_i / scale^2 + g)

- ``k`` a kernel with ``k(x, x) = 1``: the ARD Matérn-5/2 of :class:`privtune.kernels.ARDMatern52`
  (one lengthscale per parameter) when fitted, the papers' isotropic kernel when fixed;
- ``shift`` and ``scale`` standardise the rewards (their mean and standard deviation at the
  last fit), so that the priors below are stated once for any score;
- ``c`` a constant mean, ``s2`` the signal variance;
- ``v_i`` the *known* noise variance of reward ``i`` in reward units: with a curator it is the
  curator's own (Laplace of scale ``b``: ``2 b^2``), without privacy 0;
- ``g >= g_min`` a nugget: the noise a known variance does not explain (the whole noise without
  privacy, where cross-validated scores with fixed folds are nearly exact).

**Fitted** (:class:`GaussianProcess` with ``fit=True``): the lengthscales, ``s2`` and ``g`` are
the maximum a posteriori values (L-BFGS-B on their logarithms with analytic gradients), ``c`` is
profiled out: its maximiser given them, by default the generalised-least-squares value (a flat
prior), or with ``c ~ N(0, mean_scale^2)`` that value shrunk towards 0, the told rewards' mean
(``mean_scale=0`` fixes it there, as Optuna's ``GPSampler`` does). The priors (:class:`Priors`),
in standardised units:

- lengthscale ``l_b ~ LogNormal(sqrt(2) + ln(G) / 2, sqrt(3))`` for ``G`` parameters, a
  density on ``l_b``: the dimension-scaled prior of Hvarfner, Hellsten & Nardi (2024, "Vanilla
  Bayesian optimization performs great in high dimensions"), BoTorch's default. Its mode
  ``0.2 sqrt(G)`` grows like the distance between random points of the cube, so a
  high-dimensional space does not start out as uncorrelated points. On privatized scores whose
  noise is below a quarter of the score's range the tuning default of ``"gp-ucb"`` takes a tighter,
  smoother one (:data:`privtune.registry.PRIVATE_PRIORS`: mode about ``0.5 sqrt(G)``, scale
  0.75): under a known noise far above the differences between configurations the likelihood
  hardly tells lengthscales apart;
- signal variance ``ln s2 ~ N(0, 2^2)`` (a density on ``ln s2``, mode ``s2 = 1``): weak and
  centred on the standardised rewards' variance. Unlike Optuna's ``GPSampler`` prior,
  Gamma(2, 1), it lets ``s2`` fall far below 1 when the known noise explains most of the
  variance, which is the case of private scores;
- nugget ``g - g_min ~ Gamma(1.1, 30)`` with ``g_min = 1e-6``: Optuna's ``GPSampler`` prior and
  floor, small noise unless the data insist.

The hyperparameters are fitted on a schedule that depends on the number of rewards ``n`` only:
the model with ``n`` rewards has the hyperparameters fitted to the first :func:`refit_point`
``(n)`` of them (all of them while ``n <= REFIT_EVERY_TELL_UNTIL`` = 100; beyond, the last point
of the sequence 100, 105, 111, ... growing by ``REFIT_GROWTH`` = 5 %), and the rows beyond
enter its Cholesky factor one at a time (O(n^2) each). Each fit starts from fixed points, the
prior's mode and (up to 100 rewards) a four times smoother kernel, and keeps the better
finite optimum; if no start ends at a finite value, the model takes the prior's mode. No fit
starts from the
previous one: the model is then a function of the told history alone, so an optimizer rebuilt
by replaying a study (a new Optuna worker) has the model of one that followed it, after a
single fit rather than one per tell.
Fits are lazy: telling a reward costs nothing until a posterior is asked for. A fit makes a few
hundred small matrix products; it runs them on one BLAS thread, since several threads
contending for the cores (with each other or with the cross-validation running beside them)
made a fit at 300 rewards five times slower (two starts: 6.3 s against 1.2 s, on two cores with
the other core busy).

**Options of the fitted model.** ``student_t_df``: a Student-t likelihood for the noise the
known variances do not explain (heavy-tailed scores), as a scale mixture fitted by
expectation-maximisation. ``input_warping``: each real and discrete parameter enters ``k``
through a Kumaraswamy CDF whose two concentrations are fitted with the rest
(``ln a, ln c ~ N(0, 0.75)``). ``output_warping``: ``y`` is modelled through a Yeo-Johnson
transform fitted at each refit (:class:`OutputWarp`; exact rewards only).

**Fixed** (``fit=False``): the papers' model, the hyperparameters as given and never changed:
zero mean, ``s2 = 1``, no standardisation and a noise variance ``lam`` (``nugget=lam``).

Nothing here imports Optuna or scikit-learn.

Notation
--------
X  : (n, dim)  told points          z  : (n,)  standardised rewards ``(y - shift) / scale``
y  : (n,)      told rewards         K  : (n, n) ``s2 k(X, X) + diag(v / scale^2 + g)``
v  : (n,)      known noise variances, reward units
L  : (n, n)    lower Cholesky factor of K        alpha : (n,) ``K^{-1} (z - c)``
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import linalg, optimize
from threadpoolctl import threadpool_limits

from .cube import Block, check_layout
from .kernels import ARDMatern52, kumaraswamy, kumaraswamy_grads

__all__ = [
    "REFIT_EVERY_TELL_UNTIL",
    "REFIT_GROWTH",
    "GaussianProcess",
    "Hyperparameters",
    "MapObjective",
    "OutputWarp",
    "Priors",
    "fit_hyperparameters",
    "refit_point",
]

#: The families of :class:`Priors`.
PRIOR_FAMILIES = ("lognormal", "optuna")
#: Where a fit of :class:`Priors` starts.
FIT_STARTS = ("mode", "unit")

#: Refit at every tell while there are at most this many rewards.
REFIT_EVERY_TELL_UNTIL = 100
#: Beyond, refit when the number of rewards has grown by this fraction since the last fit.
REFIT_GROWTH = 0.05
#: Expectation-maximisation steps of a Student-t fit (fits given the multipliers).
STUDENT_T_EM_STEPS = 4


def refit_point(n: int) -> int:
    """The number of rewards the hyperparameters of a model with ``n`` rewards are fitted to
    (0: not fitted, the prior's mode)."""
    if n < 2:
        return 0
    if n <= REFIT_EVERY_TELL_UNTIL:
        return n
    point = REFIT_EVERY_TELL_UNTIL
    while (nxt := math.ceil(point * (1.0 + REFIT_GROWTH))) <= n:
        point = nxt
    return point


_LOG_LS_BOUNDS = (math.log(1e-3), math.log(1e3))
_LOG_S2_BOUNDS = (math.log(1e-6), math.log(1e3))
_LOG_NUGGET_BOUNDS = (math.log(1e-12), math.log(1e2))
_LOG_WARP_BOUNDS = (math.log(0.1), math.log(10.0))
_JITTER = 1e-10


@dataclass(frozen=True)
class Priors:
    """The priors of the fitted hyperparameters, in standardised units (see the module).

    Parameters
    ----------
    lengthscale_loc : float, default=sqrt(2)
        ``mu_0`` of ``l_b ~ LogNormal(mu_0 + ln(G) / 2, lengthscale_scale^2)``.
    lengthscale_scale : float, default=sqrt(3)
    signal_var_scale : float, default=2.0
        ``ln s2 ~ N(0, signal_var_scale^2)``.
    nugget_concentration, nugget_rate : float, default=1.1 and 30.0
        ``g - min_nugget ~ Gamma(concentration, rate)``.
    min_nugget : float, default=1e-6
        The floor of the nugget ``g``.
    warping_scale : float, default=sqrt(0.75)
        ``ln a_b, ln c_b ~ N(0, warping_scale^2)`` for the Kumaraswamy concentrations of an
        input-warped parameter: a log-normal prior centred on no warping (``a = c = 1``).
    mean_scale : float, default=inf
        ``c ~ N(0, mean_scale^2)`` for the constant mean: ``inf`` leaves ``c`` to the data
        (its generalised-least-squares value), ``0`` fixes it at the told rewards' mean.
    family : {"lognormal", "optuna"}, default="lognormal"
        The priors of the lengthscales and the signal variance: ``"lognormal"`` as above;
        ``"optuna"`` those of Optuna's GPSampler, ``-ln p = 0.1 (l_b^2 + l_b^-2)`` per
        lengthscale (mode 1 whatever the dimension, steep on both sides) and
        ``s2 ~ Gamma(2, 1)`` (``lengthscale_*`` and ``signal_var_scale`` are then not used).
    fit_start : {"mode", "unit"}, default="mode"
        Where the fit starts: ``"mode"``, at the prior's mode and, up to
        :data:`REFIT_EVERY_TELL_UNTIL` rewards, also at 4 times its lengthscales; ``"unit"``,
        once at unit lengthscales, signal variance and nugget (Optuna's GPSampler's first fit).
    fit_gtol : float, optional
        L-BFGS-B's gradient tolerance in the fit (default: scipy's; GPSampler's is 1e-2).
    """

    lengthscale_loc: float = math.sqrt(2.0)
    lengthscale_scale: float = math.sqrt(3.0)
    signal_var_scale: float = 2.0
    nugget_concentration: float = 1.1
    nugget_rate: float = 30.0
    min_nugget: float = 1e-6
    warping_scale: float = math.sqrt(0.75)
    mean_scale: float = math.inf
    family: str = "lognormal"
    fit_start: str = "mode"
    fit_gtol: float | None = None

    def log_lengthscale_loc(self, n_blocks: int) -> float:
        """The prior's location of ``ln l_b`` for ``n_blocks`` parameters."""
        return self.lengthscale_loc + 0.5 * math.log(max(n_blocks, 1))

    def __post_init__(self) -> None:
        if self.family not in PRIOR_FAMILIES:
            raise ValueError(f"family must be one of {PRIOR_FAMILIES}, got {self.family!r}.")
        if self.fit_start not in FIT_STARTS:
            raise ValueError(f"fit_start must be one of {FIT_STARTS}, got {self.fit_start!r}.")
        if self.fit_gtol is not None and not (
            isinstance(self.fit_gtol, (int, float)) and self.fit_gtol > 0
        ):
            raise ValueError(f"fit_gtol must be None or a number > 0, got {self.fit_gtol!r}.")
        if not (isinstance(self.mean_scale, (int, float)) and self.mean_scale >= 0.0):
            raise ValueError(
                "mean_scale must be a number >= 0 (0 fixes the constant mean at the told "
                f"rewards' mean, inf leaves it to the data), got {self.mean_scale!r}."
            )

    def mean_given(self, ones_k: float, z_k: float) -> float:
        """The constant mean ``c`` given the other hyperparameters: the maximiser of
        ``-(z - c)' K^-1 (z - c) / 2`` plus the log prior of ``c``, from ``ones_k = 1' K^-1 1``
        and ``z_k = 1' K^-1 z``."""
        if self.mean_scale == 0.0:
            return 0.0
        return z_k / (ones_k + 1.0 / self.mean_scale**2)

    def mean_penalty(self, c: float) -> float:
        """The negative log prior density of ``c`` (up to a constant)."""
        if self.mean_scale in (0.0, math.inf):
            return 0.0
        return 0.5 * c * c / self.mean_scale**2

    def lengthscale_mode(self, n_blocks: int) -> float:
        """The mode of the lengthscale prior: ``exp(loc - scale^2)`` for the log-normal, 1
        for Optuna's."""
        if self.family == "optuna":
            return 1.0
        return math.exp(self.log_lengthscale_loc(n_blocks) - self.lengthscale_scale**2)

    def penalty(self, theta_ls: np.ndarray, theta_s2: float) -> tuple[float, np.ndarray, float]:
        """The negative log prior of ``ln l`` and ``ln s2`` (up to constants) and its
        gradients in them."""
        if self.family == "optuna":
            l2 = np.exp(2.0 * theta_ls)
            s2 = math.exp(theta_s2)
            nll = 0.1 * float(np.sum(l2 + 1.0 / l2)) + s2 - theta_s2
            return nll, 0.2 * (l2 - 1.0 / l2), s2 - 1.0
        # log-normal density of l (not of ln l: its mode, not its median, is the prior's pull)
        t_ls = theta_ls - self.log_lengthscale_loc(theta_ls.size)
        nll = float(t_ls @ t_ls) / (2.0 * self.lengthscale_scale**2) + float(np.sum(theta_ls))
        nll += theta_s2**2 / (2.0 * self.signal_var_scale**2)
        return nll, t_ls / self.lengthscale_scale**2 + 1.0, theta_s2 / self.signal_var_scale**2


@dataclass(frozen=True)
class Hyperparameters:
    """The surrogate's hyperparameters (see the module for the model).

    Parameters
    ----------
    kernel : callable
        ``kernel(X, Y)`` and ``kernel.diag(X)``, with ``k(x, x) = 1``.
    signal_var : float, default=1.0
        ``s2``, standardised units.
    nugget : float, default=0.0
        ``g``, standardised units (the papers' ``lam`` in the fixed model).
    mean : float, default=0.0
        ``c``, standardised units.
    shift, scale : float, default=0.0 and 1.0
        The standardisation of the rewards.
    """

    kernel: Any
    signal_var: float = 1.0
    nugget: float = 0.0
    mean: float = 0.0
    shift: float = 0.0
    scale: float = 1.0

    @property
    def centre(self) -> float:
        """The constant mean in reward units, ``shift + scale c``."""
        return self.shift + self.scale * self.mean


def default_hyperparameters(
    layout: tuple[Block, ...], priors: Priors, shift: float = 0.0, scale: float = 1.0
) -> Hyperparameters:
    """The prior's mode: every lengthscale at the log-normal's mode, ``s2 = 1``, a small
    nugget, ``c = 0``."""
    ls = priors.lengthscale_mode(len(layout))
    return Hyperparameters(
        ARDMatern52((ls,) * len(layout), layout),
        signal_var=1.0,
        nugget=priors.min_nugget + 1e-3,
        mean=0.0,
        shift=shift,
        scale=scale,
    )


def _standardisation(y: np.ndarray) -> tuple[float, float]:
    shift = float(np.mean(y)) if y.size else 0.0
    sd = float(np.std(y)) if y.size > 1 else 0.0
    return shift, (sd if sd > 1e-12 * max(1.0, abs(shift)) else 1.0)


class MapObjective:
    """The negative log posterior of the hyperparameters and its gradient (up to constants).

    ``theta = (ln l_1, ..., ln l_G, ln s2, ln(g - g_min))``, followed by ``(ln a_b, ln c_b)``
    for each input-warped block ``b``; the constant mean is profiled out (its
    generalised-least-squares value given ``theta``), so by the envelope theorem the gradient
    at fixed ``c`` is the profile's gradient.

    Parameters
    ----------
    X : ndarray of shape (n, dim)
    z : ndarray of shape (n,)
        Standardised rewards.
    vz : ndarray of shape (n,)
        Known noise variances, standardised units.
    layout : tuple of Block
    priors : Priors
    nugget_weight : ndarray of shape (n,), optional
        Multiplies the nugget per reward, ``g m_i`` (the Student-t likelihood's scale mixture,
        :class:`GaussianProcess` with ``student_t_df``); default all 1.
    warp : tuple of int, default=()
        The blocks whose coordinate is input-warped (:func:`privtune.kernels.kumaraswamy`),
        their concentrations fitted with the rest.
    """

    def __init__(
        self,
        X,
        z,
        vz,
        layout: tuple[Block, ...],
        priors: Priors,
        nugget_weight=None,
        warp: tuple[int, ...] = (),
    ) -> None:
        self.z = np.asarray(z, dtype=float)
        self.vz = np.asarray(vz, dtype=float)
        self.m = np.ones_like(self.z) if nugget_weight is None else np.asarray(nugget_weight)
        self.priors = priors
        self.G = len(layout)
        self.n = self.z.size
        self.warp = tuple(warp)
        # each warped block's raw coordinate
        self.columns = [np.asarray(X, dtype=float)[:, layout[b].start] for b in self.warp]
        # per-block squared distances, (G, n * n): computed once per fit (a warped block's
        # row at each evaluation)
        self.D = ARDMatern52((1.0,) * self.G, layout).block_sq_dists(X).reshape(self.G, -1)

    def warping(self, theta: np.ndarray) -> tuple[tuple[float, float] | None, ...]:
        """The kernel's ``warping`` of ``theta`` (empty without warped blocks)."""
        if not self.warp:
            return ()
        out: list[tuple[float, float] | None] = [None] * self.G
        for j, b in enumerate(self.warp):
            out[b] = (math.exp(theta[self.G + 2 + 2 * j]), math.exp(theta[self.G + 3 + 2 * j]))
        return tuple(out)

    def unpack(self, theta: np.ndarray) -> tuple[np.ndarray, float, float]:
        """Lengthscales, signal variance and nugget of ``theta``."""
        G = self.G
        g = self.priors.min_nugget + math.exp(theta[G + 1])
        return np.exp(theta[:G]), math.exp(theta[G]), g

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        G, n, z, priors = self.G, self.n, self.z, self.priors
        ls, s2, g = self.unpack(theta)
        D, warped = self.D, []
        if self.warp:
            D = D.copy()
            warping = self.warping(theta)
            for b, x in zip(self.warp, self.columns, strict=True):
                a_b, c_b = warping[b]  # type: ignore[misc]
                w = kumaraswamy(x, a_b, c_b)
                D[b] = ((w[:, None] - w[None, :]) ** 2).ravel()
                warped.append((b, x, w, a_b, c_b))
        S2 = (D.T @ (1.0 / ls**2)).reshape(n, n)
        M = ARDMatern52.from_sq_dist(S2)
        K = s2 * M
        K[np.diag_indices(n)] += self.vz + g * self.m + _JITTER
        try:
            Lc = linalg.cholesky(K, lower=True)
        except linalg.LinAlgError:
            return 1e25, np.zeros_like(theta)
        Kinv = linalg.cho_solve((Lc, True), np.eye(n))
        Ki1 = Kinv.sum(axis=1)
        c = priors.mean_given(float(Ki1.sum()), float(Ki1 @ z))
        a = Kinv @ (z - c)
        nll = 0.5 * float((z - c) @ a) + float(np.sum(np.log(np.diag(Lc))))
        nll += priors.mean_penalty(c)
        W = Kinv - np.outer(a, a)
        A = W * ARDMatern52.d_sq_dist(S2)  # d nll / d S2 is s2 A / 2
        grad = np.empty_like(theta)
        grad[:G] = -(s2 / ls**2) * (D @ A.ravel())
        grad[G] = 0.5 * s2 * float(np.sum(W * M))
        gg = g - priors.min_nugget
        grad[G + 1] = 0.5 * gg * float(np.diagonal(W) @ self.m)
        prior, d_ls, d_s2 = priors.penalty(theta[:G], float(theta[G]))
        nll += prior
        grad[:G] += d_ls
        grad[G] += d_s2
        a_g, b_g = priors.nugget_concentration, priors.nugget_rate
        nll += -(a_g - 1.0) * math.log(gg) + b_g * gg
        grad[G + 1] += (-(a_g - 1.0) / gg + b_g) * gg
        # a warped block: D_b[i, k] = (w_i - w_k)^2, so sum_ik A_ik dD_b[i, k] is
        # 4 (sum_i w_i w'_i (A 1)_i - w' A w)
        r = A.sum(axis=1) if warped else None
        for j, (b, x, w, a_b, c_b) in enumerate(warped):
            pair = (G + 2 + 2 * j, G + 3 + 2 * j)
            for k, dw in zip(pair, kumaraswamy_grads(x, a_b, c_b), strict=True):
                grad[k] = 2.0 * s2 / ls[b] ** 2 * (float(np.sum(w * dw * r)) - float(dw @ A @ w))
        if warped:
            t_w = theta[G + 2 :]
            nll += float(t_w @ t_w) / (2.0 * priors.warping_scale**2)
            grad[G + 2 :] += t_w / priors.warping_scale**2
        return nll, grad


def fit_hyperparameters(
    X: np.ndarray,
    y: np.ndarray,
    noise_var: np.ndarray,
    init: Hyperparameters,
    *,
    priors: Priors | None = None,
    nugget_weight: np.ndarray | None = None,
    input_warping: bool = False,
) -> Hyperparameters:
    """Maximum a posteriori hyperparameters of the ARD Matérn-5/2 surrogate.

    Parameters
    ----------
    X : ndarray of shape (n, dim)
    y : ndarray of shape (n,)
        Rewards, any units.
    noise_var : ndarray of shape (n,)
        Known noise variances of ``y``, in the units of ``y`` squared.
    init : Hyperparameters
        Its kernel, an :class:`ARDMatern52` whose layout is kept.
    priors : Priors, optional
    nugget_weight : ndarray of shape (n,), optional
        Per-reward multipliers of the nugget (see :class:`MapObjective`).
    input_warping : bool, default=False
        Also fit a Kumaraswamy warp of every real and discrete parameter (each fit starts
        unwarped).

    Returns
    -------
    Hyperparameters
        Standardised with the mean and standard deviation of ``y``; the prior's mode (with
        this standardisation) if no start ended at a finite value, so that the result depends
        on the data and the priors alone, never on ``init``'s values.
    """
    priors = priors or Priors()
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    kernel = init.kernel
    if not isinstance(kernel, ARDMatern52):
        raise TypeError("fit_hyperparameters fits an ARDMatern52 kernel.")
    layout = kernel.layout
    G = len(layout)
    shift, scale = _standardisation(y)
    z = (y - shift) / scale
    vz = np.asarray(noise_var, dtype=float) / scale**2
    warp = (
        tuple(b for b, block in enumerate(layout) if block.kind != "categorical")
        if input_warping
        else ()
    )
    objective = MapObjective(X, z, vz, layout, priors, nugget_weight, warp)
    g_min = priors.min_nugget
    n = y.size

    bounds = [_LOG_LS_BOUNDS] * G + [_LOG_S2_BOUNDS, _LOG_NUGGET_BOUNDS]
    bounds += [_LOG_WARP_BOUNDS] * (2 * len(warp))
    lo, hi = np.array(bounds).T

    def pack(h: Hyperparameters) -> np.ndarray:
        ls = np.asarray(h.kernel.lengthscales, dtype=float)
        g = max(h.nugget - g_min, 1e-10)
        theta = [np.log(ls), [math.log(h.signal_var), math.log(g)], np.zeros(2 * len(warp))]
        return np.clip(np.concatenate(theta), lo, hi)

    prior_mode = default_hyperparameters(layout, priors)
    mode = pack(prior_mode)
    smoother = mode.copy()
    smoother[:G] += math.log(4.0)
    # two starts while a fit is cheap; beyond, the prior's mode alone (a fit at 1000 rewards
    # costs seconds per start)
    candidates = [mode, smoother] if n <= REFIT_EVERY_TELL_UNTIL else [mode]
    if priors.fit_start == "unit":
        unit = Hyperparameters(ARDMatern52((1.0,) * G, layout), 1.0, g_min + 1.0)
        candidates = [pack(unit)]
    options: dict[str, float] = {"maxiter": 200}
    if priors.fit_gtol is not None:
        options["gtol"] = float(priors.fit_gtol)
    best_theta, best_value = None, math.inf
    for theta0 in candidates:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = optimize.minimize(
                    objective,
                    theta0,
                    jac=True,
                    method="L-BFGS-B",
                    bounds=bounds,
                    options=options,
                )
        except (ValueError, linalg.LinAlgError, FloatingPointError):
            continue
        if np.all(np.isfinite(res.x)) and math.isfinite(res.fun) and res.fun < best_value:
            best_theta, best_value = res.x, float(res.fun)
    if best_theta is None or best_value >= 1e24:
        return replace(prior_mode, shift=shift, scale=scale, mean=0.0)  # the data mean
    ls, s2, g = objective.unpack(best_theta)
    fitted = Hyperparameters(
        kernel.with_lengthscales(ls, objective.warping(best_theta)), s2, g, 0.0, shift, scale
    )
    # c given the fitted parameters (the profiled GLS mean)
    K = s2 * fitted.kernel(X)
    K[np.diag_indices(n)] += objective.vz + g * objective.m + _JITTER
    Kinv1 = linalg.cho_solve(linalg.cho_factor(K, lower=True), np.column_stack([np.ones(n), z]))
    c = priors.mean_given(float(Kinv1[:, 0].sum()), float(Kinv1[:, 1].sum()))
    return replace(fitted, mean=float(c))


@dataclass(frozen=True)
class OutputWarp:
    """A monotone map of rewards, ``t = YJ_lambda((y - mu) / sigma)`` (Yeo & Johnson 2000),
    fitted to the rewards so that ``t`` is as close to normal as the family allows: the power
    transform of HEBO (Cowen-Rivers et al. 2022), for skewed scores such as an accuracy with a
    chance-level floor and a thin good region.

    ``lam`` is the maximum-likelihood value (:func:`scipy.stats.yeojohnson_normmax`) restricted
    to ``[0, 2]``, where the transform and its inverse are defined on the whole line.

    Parameters
    ----------
    mu, sigma : float
        The standardisation before the transform.
    lam : float
        The Yeo-Johnson exponent (1: the identity).
    """

    mu: float
    sigma: float
    lam: float

    @classmethod
    def fit(cls, y: np.ndarray) -> OutputWarp:
        """The warp of rewards ``y`` (at least three distinct values; the identity otherwise)."""
        mu, sigma = _standardisation(y)
        u = (y - mu) / sigma
        if y.size < 3 or np.ptp(u) <= 0.0:
            return cls(mu, sigma, 1.0)
        from scipy import stats  # on first use: ``import privtune`` stays light

        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lam = float(stats.yeojohnson_normmax(u))
        return cls(mu, sigma, float(np.clip(lam, 0.0, 2.0)) if math.isfinite(lam) else 1.0)

    def forward(self, y) -> np.ndarray:
        """``t`` of rewards ``y``."""
        from scipy import stats

        return stats.yeojohnson((np.asarray(y, dtype=float) - self.mu) / self.sigma, self.lam)

    def inverse(self, t) -> np.ndarray:
        """The reward of ``t``."""
        t = np.asarray(t, dtype=float)
        lam, pos = self.lam, t >= 0.0
        u = np.empty_like(t)
        tp, tn = t[pos], t[~pos]
        u[pos] = np.expm1(tp) if lam == 0.0 else (lam * tp + 1.0) ** (1.0 / lam) - 1.0
        u[~pos] = (
            -np.expm1(-tn) if lam == 2.0 else 1.0 - (1.0 - (2.0 - lam) * tn) ** (1.0 / (2.0 - lam))
        )
        return self.mu + self.sigma * u

    def slope(self, t) -> np.ndarray:
        """``d y / d t`` at ``t``: the delta method's factor of a variance in ``t`` units."""
        t = np.asarray(t, dtype=float)
        lam, pos = self.lam, t >= 0.0
        g = np.empty_like(t)
        g[pos] = (lam * t[pos] + 1.0) ** (1.0 / lam - 1.0) if lam else np.exp(t[pos])
        k = 2.0 - lam
        g[~pos] = (1.0 - k * t[~pos]) ** (1.0 / k - 1.0) if k else np.exp(-t[~pos])
        return self.sigma * g

    def curvature(self, t) -> np.ndarray:
        """``d^2 y / d t^2`` at ``t``: the derivative of :meth:`slope` (the analytic gradient
        of a variance mapped by the delta method)."""
        t = np.asarray(t, dtype=float)
        lam, pos = self.lam, t >= 0.0
        g = np.empty_like(t)
        g[pos] = (1.0 - lam) * (lam * t[pos] + 1.0) ** (1.0 / lam - 2.0) if lam else np.exp(t[pos])
        k = 2.0 - lam
        g[~pos] = (k - 1.0) * (1.0 - k * t[~pos]) ** (1.0 / k - 2.0) if k else -np.exp(-t[~pos])
        return self.sigma * g

    def moved(self, a: float, b: float) -> OutputWarp:
        """The warp of rewards mapped to ``a y + b`` (``a > 0``): the same ``t`` for each
        reward, which a warp fitted to the mapped rewards also gives (the standardisation
        takes the map out before the exponent is fitted)."""
        return OutputWarp(a * self.mu + b, a * self.sigma, self.lam)


@dataclass
class _Data:
    """Told points, rewards and known noise variances, in growing buffers."""

    dim: int
    n: int = 0
    X: np.ndarray = field(init=False)
    y: np.ndarray = field(init=False)
    v: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.X, self.y, self.v = np.zeros((0, self.dim)), np.zeros(0), np.zeros(0)

    def append(self, x: np.ndarray, y: float, v: float) -> None:
        if self.n == self.y.size:
            cap = max(16, 2 * self.n)
            X, Y, V = np.zeros((cap, self.dim)), np.zeros(cap), np.zeros(cap)
            X[: self.n], Y[: self.n], V[: self.n] = self.X[: self.n], self.y, self.v
            self.X, self.y, self.v = X, Y, V
        self.X[self.n], self.y[self.n], self.v[self.n] = x, y, v
        self.n += 1


class GaussianProcess:
    """Exact GP posterior over the told rewards, fitted or with fixed hyperparameters.

    Parameters
    ----------
    dim : int
        Dimension of the cube.
    hyper : Hyperparameters
        The hyperparameters (the starting point when ``fit=True``).
    fit : bool, default=False
        Refit the hyperparameters by MAP on the module's schedule (needs an
        :class:`~privtune.kernels.ARDMatern52` kernel).
    priors : Priors, optional
        The priors of the fit.
    student_t_df : float, optional
        A Student-t likelihood with this many degrees of freedom for the noise the known
        variances do not explain (heavy-tailed scores), instead of the Gaussian nugget. As a
        scale mixture of Gaussians, each reward ``i`` gets the nugget ``g m_i``; at each refit
        :data:`STUDENT_T_EM_STEPS` expectation-maximisation steps alternate the MAP fit
        given ``m`` with ``m_i = 1 / w_i``, ``w_i = (nu + 1) / (nu + E[e_i^2] / (v_i + g))``
        where ``e_i`` is the reward's residual from the posterior of ``f`` (so an outlier's
        weight falls and it stops pulling the model), and a reward told after the fit gets its
        ``m_i`` from its residual to the model before it. Fitted only (``fit=True``).
    agreement : float, optional
        With ``student_t_df``: at each refit, the rewards of a configuration told more than
        once keep ``m_i = 1`` when they lie within ``agreement * sqrt(2)`` noise standard
        deviations (``sqrt(v_i + g)`` in model units) of each other. A reward far from the
        model is an outlier or a narrow good region the model has not resolved; a repeat that
        agrees with it says which. Default: every reward weighted by its residual.
    input_warping : bool, default=False
        Fit a Kumaraswamy warp of each real and discrete parameter with the other
        hyperparameters (:class:`~privtune.kernels.ARDMatern52`'s ``warping``). The warp acts
        on the inputs only, so the known noise variances keep their meaning. Fitted only.
    output_warping : bool, default=False
        Model the rewards through an :class:`OutputWarp` fitted at each refit (a power
        transform towards normality). Exact rewards only: a known noise variance would not
        keep its meaning in the warped units, so a reward with one is refused. Posterior means
        come back in reward units through the inverse warp (the median of the predictive
        distribution) and variances by the delta method. Fitted only.

    Examples
    --------
    >>> import numpy as np
    >>> gp = GaussianProcess.fitted(1)
    >>> for x in (0.1, 0.5, 0.9):
    ...     gp.add(np.array([x]), 0.8 - (x - 0.4) ** 2)
    >>> mean, var = gp.posterior(np.array([[0.5]]))
    >>> bool(abs(mean[0] - 0.79) < 1e-3)
    True
    """

    def __init__(
        self,
        dim: int,
        hyper: Hyperparameters,
        *,
        fit: bool = False,
        priors: Priors | None = None,
        student_t_df: float | None = None,
        agreement: float | None = None,
        input_warping: bool = False,
        output_warping: bool = False,
    ) -> None:
        if fit and not isinstance(hyper.kernel, ARDMatern52):
            raise TypeError("a fitted GaussianProcess needs an ARDMatern52 kernel.")
        if student_t_df is not None and not (fit and student_t_df > 0):
            raise ValueError("student_t_df needs fit=True and a positive number of degrees.")
        if agreement is not None and not (student_t_df is not None and agreement > 0):
            raise ValueError("agreement needs student_t_df and a positive width.")
        self.agreement = None if agreement is None else float(agreement)
        if input_warping and not fit:
            raise ValueError("input_warping needs fit=True.")
        self.input_warping = bool(input_warping)
        if output_warping and not fit:
            raise ValueError("output_warping needs fit=True.")
        self.output_warping = bool(output_warping)
        self._warp: OutputWarp | None = None  # the reward warp of the current model
        self.student_t_df = None if student_t_df is None else float(student_t_df)
        self._m = np.ones(0)  # each reward's nugget multiplier (1 under the Gaussian nugget)
        self.dim = int(dim)
        self._hyper = hyper
        self.fit = bool(fit)
        self.priors = priors or Priors()
        self._data = _Data(self.dim)
        self._n_fit = 0  # the rewards the hyperparameters were fitted to
        self._n_factor = 0  # the rewards in the factor
        self._n_synced = -1  # the rewards the model was last brought up to (the fast path)
        self._buffer = np.zeros((0, 0))  # the factor's storage, grown by doubling
        self._L = self._buffer
        self._alpha = np.zeros(0)
        self._log_det = 0.0  # ln det K
        self._log_noise = 0.0  # sum of ln(noise variance), model units
        self.n_fits = 0

    @classmethod
    def fitted(
        cls,
        dim: int,
        layout: tuple[Block, ...] | None = None,
        priors: Priors | None = None,
        student_t_df: float | None = None,
        input_warping: bool = False,
        output_warping: bool = False,
        agreement: float | None = None,
    ) -> GaussianProcess:
        """A fitted GP starting at the prior's mode (ARD Matérn-5/2 over ``layout``)."""
        priors = priors or Priors()
        return cls(
            dim,
            default_hyperparameters(check_layout(layout, dim), priors),
            fit=True,
            priors=priors,
            student_t_df=student_t_df,
            agreement=agreement,
            input_warping=input_warping,
            output_warping=output_warping,
        )

    @classmethod
    def fixed(cls, dim: int, kernel, lam: float) -> GaussianProcess:
        """The papers' model: zero mean, unit signal variance, noise variance ``lam``."""
        return cls(dim, Hyperparameters(kernel, 1.0, float(lam)))

    # -- data ------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of told rewards."""
        return self._data.n

    @property
    def X(self) -> np.ndarray:
        return self._data.X[: self.n]

    @property
    def y(self) -> np.ndarray:
        return self._data.y[: self.n]

    @property
    def noise_var(self) -> np.ndarray:
        """The known noise variances of the told rewards, reward units."""
        return self._data.v[: self.n]

    @property
    def hyper(self) -> Hyperparameters:
        """The hyperparameters of the model of the told rewards (fitted on demand)."""
        self._sync()
        return self._hyper

    @property
    def centre(self) -> float:
        """The constant mean in reward units (0 for the fixed model)."""
        return float(self._from_t(np.array([self.hyper.centre]))[0])

    def fitted_noise_var(self) -> np.ndarray:
        """The noise variance of each told reward that the model fitted (its nugget, times the
        reward's multiplier), in reward units; the known variances not included."""
        h = self.hyper
        var = h.nugget * self._m[: self.n] * h.scale**2
        if self._warp is None:
            return var
        return var * self._warp.slope(self._warp.forward(self.y)) ** 2

    def _from_t(self, t: np.ndarray) -> np.ndarray:
        """Rewards of values in the model's (warped) reward units."""
        return t if self._warp is None else self._warp.inverse(t)

    @property
    def nugget_multipliers(self) -> np.ndarray:
        """Each told reward's nugget multiplier ``m_i`` (all 1 under the Gaussian nugget)."""
        self._sync()
        return self._m[: self.n].copy()

    def add(self, x: np.ndarray, y: float, noise_var: float = 0.0) -> None:
        """Tell one reward ``y`` at ``x`` with known noise variance ``noise_var``."""
        if self.output_warping and noise_var != 0.0:
            raise ValueError(
                "output_warping models exact rewards: a known noise variance would not keep "
                "its meaning in the warped units."
            )
        self._data.append(np.asarray(x, dtype=float), float(y), float(noise_var))
        if not self.fit:
            self._sync()  # the fixed model's factor grows now, O(n^2)

    def rescale(self, a: float, b: float) -> bool:
        """Map every told reward ``y`` to ``a y + b`` (``a > 0``): the standardisation moves
        with them, so the fitted hyperparameters and the factor stay as they are, the model of
        the mapped rewards (up to rounding); an output warp moves with them too, leaving each
        reward's warped value as it was. Only for the fitted model of exact rewards; returns
        whether it was done.

        Parameters
        ----------
        a, b : float

        Returns
        -------
        bool
        """
        if not (a > 0 and self.fit and not np.any(self.noise_var)):
            return False
        self._data.y[: self.n] = a * self._data.y[: self.n] + b
        if self._warp is not None:  # the warped values, and so the model in them, stay
            self._warp = self._warp.moved(a, b)
        else:
            h = self._hyper
            self._hyper = replace(h, shift=a * h.shift + b, scale=a * h.scale)
        return True

    def refit(self) -> None:
        """Fit the hyperparameters to the first ``refit_point(n)`` told rewards now."""
        target = refit_point(self.n)
        hyper = self._hyper
        m = np.ones(target)
        warp = None
        if target:
            X, y, v = self.X[:target], self.y[:target], self.noise_var[:target]
            if self.output_warping:
                warp = OutputWarp.fit(y)
                y = warp.forward(y)
            steps = STUDENT_T_EM_STEPS if self.student_t_df else 1
            with threadpool_limits(1, user_api="blas"):  # many small products: see the module
                for step in range(steps):
                    hyper = fit_hyperparameters(
                        X,
                        y,
                        v,
                        self._hyper,
                        priors=self.priors,
                        nugget_weight=m,
                        input_warping=self.input_warping,
                    )
                    if step + 1 < steps:
                        m = self._em_multipliers(hyper, X, y, v, m)
        # the new hyperparameters take effect with their factor, or not at all: a failed
        # factorisation leaves the previous model whole, and the next sync refits
        self._factorize(hyper, m, warp)
        self._n_fit = target
        self._n_synced = -1
        self.n_fits += int(bool(target))

    def _sync(self) -> None:
        """Bring the factor (and, on the schedule, the hyperparameters) up to the told rewards."""
        n = self.n
        if n == self._n_synced and self._n_factor == n:
            return  # nothing told since: the acquisition's many calls stop here
        if self.fit and refit_point(n) != self._n_fit:
            self.refit()
        while self._n_factor < n:
            self._extend()
        self._n_synced = n

    # -- the factor --------------------------------------------------------------------------------
    def _noise(
        self, v: np.ndarray, h: Hyperparameters | None = None, m: np.ndarray | float = 1.0
    ) -> np.ndarray:
        """Noise variances in model units of rewards with known variances ``v`` and nugget
        multipliers ``m``."""
        h = self._hyper if h is None else h
        return v / h.scale**2 + h.nugget * m + _JITTER

    def _em_multipliers(self, h, X, y, v, m) -> np.ndarray:
        """The Student-t E-step: each reward's nugget multiplier ``1 / w_i`` given ``h``."""
        n = y.size
        noise = self._noise(v, h, m)
        K = h.signal_var * h.kernel(X)
        K[np.diag_indices(n)] += noise
        L = linalg.cholesky(K, lower=True)
        z = (y - h.shift) / h.scale - h.mean
        alpha = linalg.cho_solve((L, True), z)
        Linv = linalg.solve_triangular(L, np.eye(n), lower=True)
        kinv_diag = np.sum(Linv * Linv, axis=0)
        residual = noise * alpha  # z_i - E[f_i]
        var_f = np.maximum(noise - noise**2 * kinv_diag, 0.0)
        scale2 = v / h.scale**2 + h.nugget
        m = self._multiplier(residual**2 + var_f, scale2)
        return self._trust_agreeing(X, (y - h.shift) / h.scale, scale2, m)

    def _trust_agreeing(
        self, X: np.ndarray, z: np.ndarray, scale2: np.ndarray, m: np.ndarray
    ) -> np.ndarray:
        """``m`` with 1 for every configuration told more than once whose rewards ``z`` agree
        within ``agreement * sqrt(2)`` noise standard deviations (``agreement``)."""
        if self.agreement is None:
            return m
        rows: dict[bytes, list[int]] = {}
        for i, x in enumerate(X):
            rows.setdefault(x.tobytes(), []).append(i)
        width = self.agreement * math.sqrt(2.0)
        for idx in rows.values():
            if len(idx) > 1 and np.ptp(z[idx]) <= width * math.sqrt(float(np.max(scale2[idx]))):
                m[idx] = 1.0
        return m

    def _multiplier(self, e2: np.ndarray | float, scale2: np.ndarray | float) -> np.ndarray:
        nu = self.student_t_df
        assert nu is not None
        w = (nu + 1.0) / (nu + np.asarray(e2) / np.asarray(scale2))
        return np.clip(1.0 / w, 1e-2, 1e4)

    def _z(self, y: np.ndarray) -> np.ndarray:
        h = self._hyper
        t = y if self._warp is None else self._warp.forward(y)
        return (t - h.shift) / h.scale - h.mean

    def _factorize(
        self,
        h: Hyperparameters | None = None,
        m: np.ndarray | None = None,
        warp: OutputWarp | None = None,
    ) -> None:
        """Factor the told rows under ``h`` (default: the current hyperparameters): every row,
        or under the Student-t likelihood the first ``len(m)``, those the multipliers ``m``
        were fitted with (the next sync extends the factor by the rest); the model's state
        changes only once the factor exists."""
        h = self._hyper if h is None else h
        if self.student_t_df and m is not None:
            n = m.size
        else:
            n, m = self.n, np.ones(self.n)
        noise = self._noise(self.noise_var[:n], h, m)
        K = h.signal_var * h.kernel(self.X[:n])
        K[np.diag_indices(n)] += noise
        L = linalg.cholesky(K, lower=True) if n else np.zeros((0, 0))
        self._hyper, self._buffer, self._L = h, L, L
        self._warp = warp
        self._m = np.array(m, dtype=float)
        self._log_det = 2.0 * float(np.sum(np.log(np.diag(L))))
        self._log_noise = float(np.sum(np.log(noise)))
        self._n_factor = n
        self._solve()

    def _extend(self) -> None:
        """Grow the factor by the next told row (hyperparameters unchanged)."""
        i = self._n_factor
        h = self._hyper
        x = self._data.X[i]
        k_vec = h.signal_var * h.kernel(self._data.X[:i], x[None, :])[:, 0]
        c = linalg.solve_triangular(self._L, k_vec, lower=True, check_finite=False) if i else k_vec
        m = 1.0
        if self.student_t_df:  # its multiplier from its residual to the model before it
            v_i = float(self._data.v[i]) / h.scale**2
            e = float(self._z(self._data.y[i : i + 1])[0]) - float(c @ self._alpha_z())
            var_f = max(h.signal_var - float(c @ c), 0.0)
            m = float(self._multiplier(e * e + var_f, v_i + h.nugget))
        self._m = np.append(self._m, m)
        noise = float(self._noise(self._data.v[i : i + 1], m=m)[0])
        d2 = h.signal_var * float(h.kernel.diag(x[None, :])[0]) + noise - float(c @ c)
        d = math.sqrt(max(d2, 1e-12 * noise))
        if i == self._buffer.shape[0]:  # capacity doubles: no copy per row
            buffer = np.zeros((max(16, 2 * i), max(16, 2 * i)))
            buffer[:i, :i] = self._L
            self._buffer = buffer
        self._buffer[i, :i] = c
        self._buffer[i, i] = d
        self._L = self._buffer[: i + 1, : i + 1]
        self._log_det += 2.0 * math.log(d)
        self._log_noise += math.log(noise)
        self._n_factor = i + 1
        self._solve()

    def _solve(self) -> None:
        m = self._n_factor
        z = self._z(self._data.y[:m])
        self._alpha = linalg.cho_solve((self._L, True), z) if m else np.zeros(0)

    def _alpha_z(self) -> np.ndarray:
        """``L^{-1} (z - c)`` over the factored rows: with ``c_new = L^{-1} k``, the posterior
        mean at a new point is ``c_new @ _alpha_z()``."""
        m = self._n_factor
        if not m:
            return np.zeros(0)
        return linalg.solve_triangular(self._L, self._z(self._data.y[:m]), lower=True)

    @property
    def gamma(self) -> float:
        """Empirical information gain ``1/2 ln det(I + s2 K / noise)`` of the told points."""
        self._sync()
        return 0.5 * (self._log_det - self._log_noise)

    def loo_skill(self) -> float:
        """How much better than its constant mean the model predicts each told reward from the
        others.

        ``1 - sum_i r_i^2 / sum_i (z_i - c)^2``, with ``r_i = alpha_i / [K^{-1}]_ii`` the
        leave-one-out residual of reward ``i`` at the current hyperparameters (Rasmussen &
        Williams 2006, eq. 5.12) and ``z_i - c`` its residual from the constant mean: 1 when
        each reward is predicted exactly from the others, 0 or below when the model predicts
        them no better than a constant, as on a plateau whose small, uncorrelated differences
        a fitted model explains with short lengthscales. Scale-free; ``nan`` below three
        rewards.
        """
        self._sync()
        n = self.n
        if n < 3:
            return math.nan
        Linv = linalg.solve_triangular(self._L, np.eye(n), lower=True)
        residual = self._alpha / np.sum(Linv * Linv, axis=0)
        z = self._z(self.y)
        spread = float(z @ z)
        if spread <= 0.0:
            return 0.0
        return 1.0 - float(residual @ residual) / spread

    # -- the posterior -----------------------------------------------------------------------------
    def mean(self, Z: np.ndarray) -> np.ndarray:
        """Posterior mean at ``Z`` in reward units (O(n) per point, no variance)."""
        h = self.hyper
        if self.n == 0:
            return np.full(Z.shape[0], h.centre)
        return self._from_t(h.centre + h.scale * (h.signal_var * h.kernel(Z, self.X) @ self._alpha))

    def _mean_var(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean and variance in model units (mean without ``c``), and ``V = L^{-1} k(X, Z)``."""
        h = self.hyper
        prior = h.signal_var * h.kernel.diag(Z)
        if self.n == 0:
            return np.zeros(Z.shape[0]), prior, np.zeros((0, Z.shape[0]))
        Kzx = h.signal_var * h.kernel(Z, self.X)
        # the factor and the kernel values are finite by construction: no check per call
        V = linalg.solve_triangular(self._L, Kzx.T, lower=True, check_finite=False)
        return Kzx @ self._alpha, prior - np.sum(V * V, axis=0), V

    def posterior_grad(self, z: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray] | None:
        """Posterior mean and variance at one point ``z`` in reward units, and their gradients
        in ``z`` (the acquisition optimiser's analytic gradient): with ``k`` the kernel vector,
        ``dk`` its Jacobian, ``v = L^{-1} k`` and ``w = L^{-T} v``, the mean's gradient is
        ``dk^T alpha`` and the variance's ``-2 dk^T w``; under an output warp ``y(t)`` the
        mean ``y(T)`` and the delta method's variance ``y'(T)^2 var`` are differentiated
        through it. ``None`` for a model without one (a kernel with no gradient, input
        warping): the caller differences instead.

        Parameters
        ----------
        z : ndarray of shape (dim,)

        Returns
        -------
        (float, float, ndarray, ndarray) or None
            mean, variance, d mean / dz, d variance / dz.
        """
        h = self.hyper
        grad = getattr(h.kernel, "value_and_grad", None)
        if grad is None:
            return None
        if self.n == 0:
            zero = np.zeros(self.dim)
            return h.centre, h.signal_var * h.scale**2, zero, zero.copy()
        kg = grad(z, self.X)
        if kg is None:
            return None
        k, dk = h.signal_var * kg[0], h.signal_var * kg[1]
        v = linalg.solve_triangular(self._L, k, lower=True, check_finite=False)
        w = linalg.solve_triangular(self._L, v, lower=True, trans="T", check_finite=False)
        var = h.signal_var - float(v @ v)
        dvar = -2.0 * (dk.T @ w) if var > 0.0 else np.zeros(self.dim)
        t = h.centre + h.scale * float(k @ self._alpha)
        var, dt, dvar = (
            max(var, 0.0) * h.scale**2,
            h.scale * (dk.T @ self._alpha),
            dvar * h.scale**2,
        )
        if self._warp is None:
            return t, var, dt, dvar
        T = np.array([t])
        mean, g, g1 = (
            float(f(T)[0]) for f in (self._warp.inverse, self._warp.slope, self._warp.curvature)
        )
        return mean, var * g * g, g * dt, g * g * dvar + 2.0 * var * g * g1 * dt

    def difference(self, Z: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of ``f(Z) - f(z0)`` in reward units (the joint
        posterior: the covariance of the two values is subtracted, so near or correlated
        points are compared more precisely than their separate variances suggest)."""
        h = self.hyper
        both = np.vstack([Z, np.reshape(z0, (1, -1))])
        mean, var, V = self._mean_var(both)
        cov = h.signal_var * h.kernel(Z, both[-1:])[:, 0] - V[:, :-1].T @ V[:, -1]
        if self._warp is not None:  # the delta method, each value at its own slope
            t = h.centre + h.scale * mean
            g = self._warp.slope(t)
            var_d = g[:-1] ** 2 * var[:-1] + g[-1] ** 2 * var[-1] - 2.0 * g[:-1] * g[-1] * cov
            y = self._warp.inverse(t)
            return y[:-1] - y[-1], np.maximum(var_d, 0.0) * h.scale**2
        var_d = var[:-1] + var[-1] - 2.0 * cov
        return h.scale * (mean[:-1] - mean[-1]), np.maximum(var_d, 0.0) * h.scale**2

    def _to_reward(self, mean: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = self.hyper
        t, var = h.centre + h.scale * mean, np.maximum(var, 0.0) * h.scale**2
        if self._warp is None:
            return t, var
        return self._warp.inverse(t), var * self._warp.slope(t) ** 2

    def posterior(
        self, Z: np.ndarray, P: np.ndarray | None = None, lie: float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of ``f`` plus the mean, in reward units, at ``Z``, given
        pending points ``P`` (see :meth:`with_pending`)."""
        if P is None:
            mean, var, _ = self._mean_var(Z)
            return self._to_reward(mean, var)
        return self.with_pending(P, lie)(Z)

    def with_pending(self, P: np.ndarray, lie: float | None = None):
        """A function ``Z -> (mean, variance)`` that also conditions on pending points ``P``.

        Pending points shrink the variance (GP-BUCB: the Schur-complement block of the factor of
        ``[X; P]``, values not needed), as if observed with the told rewards' mean noise; with
        ``lie`` (reward units) they also enter the mean as if they had returned ``lie`` (the
        constant liar). The block depends on ``P`` only, so it is built once per ask.
        """
        h = self.hyper
        n = self.n
        v_p = float(np.mean(self.noise_var)) if n else 0.0
        C = (
            linalg.solve_triangular(self._L, h.signal_var * h.kernel(self.X, P), lower=True)
            if n
            else np.zeros((0, P.shape[0]))
        )
        S = h.signal_var * h.kernel(P) - C.T @ C
        S[np.diag_indices(P.shape[0])] += self._noise(np.full(P.shape[0], v_p))
        LP = linalg.cholesky(S + 1e-12 * np.eye(P.shape[0]), lower=True)
        shift = None
        if lie is not None:
            lie_t = lie if self._warp is None else float(self._warp.forward(np.array([lie]))[0])
            lie_z = (lie_t - h.centre) / h.scale
            mean_p = self._mean_var(P)[0] if n else np.zeros(P.shape[0])
            shift = linalg.solve_triangular(LP, lie_z - mean_p, lower=True)

        def posterior(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mean, var, V = self._mean_var(Z)
            W = linalg.solve_triangular(
                LP, h.signal_var * h.kernel(P, Z) - C.T @ V, lower=True, check_finite=False
            )
            var = var - np.sum(W * W, axis=0)
            if shift is not None:
                mean = mean + W.T @ shift
            return self._to_reward(mean, var)

        return posterior
