"""The ask/tell contract shared by every optimizer (the optimizers guide, docs/optimizers.md).

Every optimizer works on the unit cube ``[0, 1]^dim`` and sees only what the learner is allowed
to see (privatized scores when privacy is on). Rewards are maximised and are assumed centred:
the surrogate prior has mean zero, as in the papers, and the truncation levels compare ``|y|``
with a threshold. The adapters (Optuna sampler, search estimator) centre and scale scores from
their declared ``value_range`` before telling them.

State is a function of the told history (x, y in order) and the seed, so a stateless caller
(an Optuna sampler shared by many workers) can rebuild an optimizer by replaying the history.
Asked-but-not-told points are *pending*: they shrink the posterior variance around themselves
(GP-BUCB's hallucination) and count, for the acquisition only, as if they had returned the lowest
posterior mean among the told points (the constant liar), so a batch of asks spreads out.

Notation
--------
X   : (t, dim)  told points, in order
y   : (t,)      told rewards
P   : (p, dim)  pending points
t   : number of told rewards
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import special

from .._checks import check_bool, check_float, check_int, check_seed
from ..acquisition import (
    RAW_SAMPLING,
    START_RULES,
    Acquisition,
    AcquisitionState,
    argmax_random_tie,
    coordinate_moves,
    make_acquisition,
    maximize,
    raw_samples,
    recommend_index,
    unique_rows,
    with_faces,
)
from ..cube import Block, check_layout
from ..forest import forest_candidates, forest_proposal
from ..gp import Priors
from ..kernels import Kernel, fit_lengthscale, make_kernel

__all__ = ["SURROGATES", "BaseOptimizer", "KernelOptimizer"]

_CUBE_TOL = 1e-9

#: ``"fixed"``: the papers' model (``kernel`` and ``lam`` as given, zero mean); ``"fitted"``:
#: the fitted ARD Matérn-5/2 GP of :mod:`privtune.gp`.
SURROGATES = ("fixed", "fitted")


def _check_positive(name: str, value, *, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a float > 0, got {value!r}.")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a float > 0, got {value!r}.") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite float > 0, got {value!r}.")
    return v


def _check_unit_interval(name: str, value) -> float:
    v = _check_positive(name, value)
    if not v < 1.0:
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value!r}.")
    return v


def check_alpha(alpha) -> float:
    """Validate the moment order ``alpha`` in (0, 1] of the heavy-tailed algorithms."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}.")
    return float(alpha)


def best_above_median(score: np.ndarray) -> int | None:
    """The index of the largest of ``score`` when it is above their median, else ``None``.

    A best tied with half of the told scores (a chance-level floor that most configurations
    reach) marks no region: the local proposals, the stall probe's and the trust region's,
    would only circle it."""
    best = int(np.argmax(score))
    return best if score[best] > np.median(score) else None


def check_points(name: str, X, dim: int, *, allow_empty: bool = False) -> np.ndarray:
    """Validate an ``(n, dim)`` array of points inside the unit cube."""
    arr = np.asarray(X, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, {dim}), got ndim={arr.ndim}.")
    if arr.shape[1] != dim:
        raise ValueError(
            f"{name} must have {dim} columns (the optimizer's dim), got {arr.shape[1]}."
        )
    if arr.shape[0] == 0 and not allow_empty:
        raise ValueError(f"{name} must contain at least one row.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite.")
    if arr.size and (arr.min() < -_CUBE_TOL or arr.max() > 1.0 + _CUBE_TOL):
        raise ValueError(f"{name} must lie inside the unit cube [0, 1]^{dim}.")
    return np.clip(arr, 0.0, 1.0)


#: A told reward "stands out" of a plateau when it lies more than this many interquartile
#: ranges above the median of the told rewards.
STANDOUT = 3.0

#: The fitted noise, as a share of the told rewards' variance, up to which the model judges
#: the rewards exact for proposing (:meth:`BaseOptimizer._exact`: the incumbent of
#: ``incumbent="auto"``, no configuration told again) ...
EXACT_SHARE = 0.01
#: ... and for picking (:meth:`BaseOptimizer.recommend_row` keeps the best told reward). The
#: pick's share is wider: a fitted noise of a few per cent of the variance is the kernel
#: smoothing over sharp differences between configurations (a deterministic CV score), and the
#: posterior mean then picks a configuration scored below the best, which a second evaluation
#: would score the same.
PICK_EXACT_SHARE = 0.05
#: Evaluations repeating a configuration told before, all with its first reward, that show the
#: objective deterministic whatever the fitted noise (:meth:`BaseOptimizer._repeats_agree`):
#: two, so that one repeat of a noisy objective that happens to match does not decide it.
AGREEING_REPEATS = 2
#: The starting side of ``local_share``'s trust region, in units of the cube for parameters of
#: equal lengthscales (TuRBO's 0.8; :meth:`BaseOptimizer._trust_region_side`) ...
TRUST_REGION_SIDE = 0.8
#: ... and the number of scrambled Sobol candidates drawn in it per local proposal.
LOCAL_CANDIDATES = 2048
#: How far apart, in noise standard deviations of one reward times ``sqrt(2)`` (that of the
#: difference of two), the rewards of a repeated configuration may lie for
#: ``repeat_discounted_best`` to take them as agreeing (the ``agreement`` of
#: :class:`privtune.gp.GaussianProcess`): two, about a 95% band for Gaussian noise.
REPEAT_AGREEMENT = 2.0


class BaseOptimizer:
    """Base class of privtune's optimizers: validation, history, pending points, ask/tell, the
    acquisition and the recommendation.

    Subclasses implement ``_observe`` (update the model with one reward), ``_posterior`` (mean
    and variance at query points, with optional pending points) and ``beta_t`` (the confidence
    width for the next ask); an optimizer whose proposal is not the maximiser of an acquisition
    over a posterior (GO-UCB) replaces ``_propose``. The settings of a kernel surrogate live one
    level down, in :class:`KernelOptimizer`.

    Parameters
    ----------
    dim : int
        Dimension of the unit cube, ``dim >= 1``.
    epsilon : float, optional
        LDP parameter of the curator that privatized the rewards; ``None`` for the non-private
        versions of the algorithms.
    beta_scale : float, default=1.0
        Multiplies the theoretical ``beta_t``. The theory's values are conservative; each
        algorithm documents its default.
    seed : int, optional
        Seed of the optimizer's own randomness (tie-breaks, raw samples, Nyström sampling).
    snap : callable, optional
        Projection of cube points onto valid encodings (a search space's ``snap``), applied to
        every continuously optimised proposal.
    n_raw_samples : int, default=512
        Raw samples of the multi-start acquisition optimiser.
    n_restarts : int, default=3
        L-BFGS-B starts of the acquisition optimiser.
    layout : sequence of privtune.cube.Block, optional
        The parameters' blocks of coordinates (a search space's ``layout``): the acquisition
        optimiser enumerates integer and categorical blocks, and the fitted surrogate has one
        lengthscale per parameter. Default: every coordinate is a real parameter.
    noise_var : float, default=0.0
        The known noise variance of a told reward, in reward units (the curator's: ``2 b^2``
        for Laplace noise of scale ``b``), for a model that uses it (the fitted surrogate);
        :meth:`tell` can give each reward its own.
    raw_sampling : {"uniform", "sobol"}, default="uniform"
        The acquisition optimiser's raw samples (:func:`privtune.acquisition.raw_samples`);
        the tuning defaults use ``"sobol"``.
    acquisition : str or privtune.acquisition.Acquisition, default="ucb"
        ``"ucb"`` (:class:`~privtune.acquisition.UCB`): ``mean + beta_t std``, the papers'
        acquisition. ``"logei"`` (:class:`~privtune.acquisition.LogExpectedImprovement`): the
        logarithm of the expected improvement over the best posterior mean among the told
        points, an option measured on the benchmarks page; ``beta_t`` is then not used.
        ``"portfolio"`` (:class:`~privtune.acquisition.Portfolio`): log EI, log PI or UCB
        with HEBO's width, drawn per proposal from the optimizer's generator. Any
        :class:`~privtune.acquisition.Acquisition` instance, e.g.
        :class:`~privtune.acquisition.ExpectedImprovement` or
        :class:`~privtune.acquisition.ProbabilityOfImprovement`.
    min_skill : float, optional
        For exact rewards (no known noise, and not shown noisy by :meth:`_shown_noisy`):
        propose a space-filling point instead of the acquisition's maximiser while no told
        reward stands out and the model's leave-one-out skill (:meth:`model_skill`) is at most
        this (a plateau; see :meth:`_flat`). Default: off; the exact-score tuning default of
        ``"gp-ucb"`` is 0.2.
    min_signal : float, optional
        The same under known noise, in [0, 1]: while no told reward stands out and the model
        attributes at most this share of the rewards' variance to the objective
        (:meth:`signal_share`). Default: off.
    acq_maxiter : int, default=50
        L-BFGS-B iterations per continuous step of the acquisition optimiser.
    start_rule : {"top", "spread"}, default="top"
        How the acquisition optimiser picks its starts
        (:func:`privtune.acquisition.maximize`): the best raw samples and anchors, or
        Optuna's GPSampler's rule (the best raw sample, a roulette over the others and the
        best told point).
    stall_probe : int, optional
        Once the best told point (by told reward for exact rewards, by posterior mean
        otherwise) has not changed for this many told rewards, and while it is above the
        median, every other proposal maximises the acquisition over the points that differ
        from it in one parameter (:func:`privtune.acquisition.coordinate_moves`) instead of
        over the whole cube (a local probe of a stalled study). Default: off.
    probe_pairs : bool, default=False
        The local probe also moves every two parameters together.
    forest_share : int, optional
        While the told rewards are exact, every proposal made when the number of told and
        pending points is a multiple of this comes from a forest of randomised trees instead
        of the model (:func:`privtune.forest.forest_proposal`: the largest expected
        improvement among raw samples, their faces, perturbations of the best points and the
        best point's one-parameter moves). A second model that does not spread failures over the
        regions next to them. ``forest_share >= 2``. Default: off.
    boundary_samples : bool, default=False
        The acquisition optimiser also evaluates the raw samples' copies on the faces and
        corners of the cube (:func:`privtune.acquisition.with_faces`), and the space-filling
        proposal of a plateau chooses among corners too: a maximiser far from every start,
        where the best value of a size limit often lies, is compared.
    floor_corners : bool, default=False
        The space-filling proposal of a plateau (:meth:`_flat`) is a corner of the cube not
        yet told, the farthest from every told and pending point, while one is left (every
        corner for ``dim <= 12``, else 4,096 drawn at random): on a floor where every told
        score is the same, a size limit, a penalty or a rate often stops degrading the model
        only at an end of its range, and drawing corners without repeats covers those ends
        in turn. Once none
        is left, the usual space-filling proposal.
    agreeing_repeats : int, default=2
        How many evaluations repeating a told configuration, each with that configuration's
        first reward, show the objective deterministic whatever the fitted noise
        (:meth:`_repeats_agree`, :data:`AGREEING_REPEATS`); at least 1.
    local_share : int, optional
        While the told rewards are exact, every proposal made when the number of told and
        pending points is a multiple of this maximises the acquisition over a trust region
        around the best told point instead of the cube (:meth:`_local_candidates`: TuRBO's
        box, its sides in proportion to the lengthscales, shrunk while the study does not
        improve and grown while it does), unless that point's reward is no better than the
        median told reward (a floor, not a region). The other proposals search the cube as
        usual, so the study refines its best region without giving up the rest.
        ``local_share >= 2``.
        Default: off (the tuning default of ``"gp-ucb"`` without privacy is 2,
        :data:`privtune.registry.EXACT_LOCAL_SHARE`).
    local_retire : int, optional
        With ``local_share``: the trust region gives its turns back to the cube while its side
        (:meth:`_trust_region_side`) is at most :data:`TRUST_REGION_SIDE` halved this many
        times, that is once the study has stalled long enough to shrink it so far (TuRBO
        restarts a region that collapses; here the cube's search takes over). The region
        takes its turns again if three improvements in a row grow it back. ``local_retire
        >= 1``. Default: off (the region keeps its turns).
    local_refine : bool, default=False
        With ``local_share``: the trust region's turns maximise the acquisition over the
        region's box as the other proposals do over the cube (raw samples of the box, then
        L-BFGS-B bounded by it, as BoTorch's TuRBO does), instead of taking the best of its
        scrambled Sobol candidates, which never lie on a face of the box. Where the box meets
        a face of the cube, the region's proposals can then reach that face.
    uniform_share : int, optional
        While the told rewards are exact, every proposal made when the number of told and
        pending points is a multiple of this is a uniform draw of the cube, as in the
        start-up (:meth:`_uniform_point`), instead of the model's: random search's share of
        the study, which a model that extrapolates a trend to a face of the cube cannot
        keep from the regions it judges poor. It takes precedence over ``forest_share`` and
        ``local_share``. ``uniform_share >= 2``. Default: off.

    Attributes
    ----------
    turn : str or None
        What made the last proposal (``None`` before the first): ``"start-up"`` (a uniform
        draw asked for with ``uniform=True``), ``"uniform"`` (``uniform_share``'s turn, or
        an optimizer that only draws uniformly), ``"repeat"`` (a told point asked again),
        ``"space-filling"`` (a plateau, :meth:`_flat`), ``"forest"`` (``forest_share``),
        ``"probe"`` (``stall_probe``), ``"trust-region"`` (``local_share``) or
        ``"acquisition"`` (the acquisition's maximiser over the cube or the given
        candidates). A diagnostic: it tells why a study went where it went.
    """

    #: Default of ``beta_scale`` for the class (documented per algorithm).
    default_beta_scale: float = 1.0

    def __init__(
        self,
        dim: int,
        *,
        epsilon: float | None = None,
        beta_scale: float | None = None,
        seed: int | None = None,
        snap: Callable[[np.ndarray], np.ndarray] | None = None,
        n_raw_samples: int = 512,
        n_restarts: int = 3,
        layout: tuple[Block, ...] | None = None,
        noise_var: float = 0.0,
        raw_sampling: str = "uniform",
        acquisition: str | Acquisition = "ucb",
        min_skill: float | None = None,
        min_signal: float | None = None,
        acq_maxiter: int = 50,
        start_rule: str = "top",
        stall_probe: int | None = None,
        probe_pairs: bool = False,
        forest_share: int | None = None,
        boundary_samples: bool = False,
        floor_corners: bool = False,
        agreeing_repeats: int = AGREEING_REPEATS,
        local_share: int | None = None,
        local_retire: int | None = None,
        local_refine: bool = False,
        uniform_share: int | None = None,
    ) -> None:
        self.dim = check_int("dim", dim)
        self.epsilon = _check_positive("epsilon", epsilon, allow_none=True)
        self.beta_scale = _check_positive(
            "beta_scale", self.default_beta_scale if beta_scale is None else beta_scale
        )
        self.seed = seed
        self.snap = snap
        self.n_raw_samples = int(n_raw_samples)
        self.n_restarts = int(n_restarts)
        self.layout = check_layout(layout, self.dim)
        self.noise_var = check_float("noise_var", noise_var, low=0.0, closed_low=True)
        if raw_sampling not in RAW_SAMPLING:
            raise ValueError(f"raw_sampling must be one of {RAW_SAMPLING}, got {raw_sampling!r}.")
        self.raw_sampling = raw_sampling
        self.acquisition = make_acquisition(acquisition)
        self.min_skill = (
            None if min_skill is None else check_float("min_skill", min_skill, low=-math.inf)
        )
        self.min_signal = (
            None
            if min_signal is None
            else check_float("min_signal", min_signal, low=0.0, high=1.0, closed_low=True)
        )
        self.acq_maxiter = check_int("acq_maxiter", acq_maxiter)
        if start_rule not in START_RULES:
            raise ValueError(f"start_rule must be one of {START_RULES}, got {start_rule!r}.")
        self.start_rule = start_rule
        self.stall_probe = None if stall_probe is None else check_int("stall_probe", stall_probe)
        self.probe_pairs = check_bool("probe_pairs", probe_pairs)
        self.forest_share = (
            None if forest_share is None else check_int("forest_share", forest_share, 2)
        )
        self.boundary_samples = check_bool("boundary_samples", boundary_samples)
        self.floor_corners = check_bool("floor_corners", floor_corners)
        self.agreeing_repeats = check_int("agreeing_repeats", agreeing_repeats)
        self.local_share = None if local_share is None else check_int("local_share", local_share, 2)
        self.local_retire = (
            None if local_retire is None else check_int("local_retire", local_retire)
        )
        self.local_refine = check_bool("local_refine", local_refine)
        self.uniform_share = (
            None if uniform_share is None else check_int("uniform_share", uniform_share, 2)
        )
        self._rng = np.random.default_rng(check_seed("seed", seed))
        self._X: list[np.ndarray] = []
        self._y: list[float] = []
        self._v: list[float] = []  # the known noise variance of each told reward
        self._pending: list[np.ndarray] = []
        self._uniform = False
        self.turn: str | None = None

    # -- history -----------------------------------------------------------------------------
    @property
    def t(self) -> int:
        """Number of told rewards."""
        return len(self._y)

    @property
    def X(self) -> np.ndarray:
        """Told points, shape ``(t, dim)``, in order."""
        return np.array(self._X).reshape(-1, self.dim)

    @property
    def y(self) -> np.ndarray:
        """Told rewards, shape ``(t,)``, in order."""
        return np.array(self._y, dtype=float)

    @property
    def pending(self) -> np.ndarray:
        """Points asked and not yet told, shape ``(p, dim)``."""
        return np.array(self._pending).reshape(-1, self.dim)

    def _stream(self, *key: int) -> np.random.Generator:
        """A generator that depends only on the seed and ``key``, not on call order.

        Randomness inside the model update (Nyström sampling) uses it, so replaying a history
        reproduces the model exactly whatever asks were made in between.
        """
        if self.seed is None:
            return np.random.default_rng()
        return np.random.default_rng([int(self.seed), *key])

    # -- the contract --------------------------------------------------------------------------
    def ask(self, candidates=None, *, pending=None, uniform: bool = False) -> np.ndarray:
        """Propose the next point to evaluate.

        Parameters
        ----------
        candidates : array_like of shape (n, dim), optional
            A finite decision set (as in the papers); one of its rows is returned. By default
            the continuous cube is searched.
        pending : array_like of shape (p, dim), optional
            Points being evaluated elsewhere (e.g. other workers' running trials), in addition
            to the points this optimizer proposed and was not yet told about.
        uniform : bool, default=False
            Draw a *new* point uniformly at random (snapped to a valid encoding, or a uniform
            row of ``candidates``) instead of maximising the acquisition: the start-up phase of
            the adapters. The algorithm's structure still applies (MoMA-GP-UCB first hands out
            the repeated plays of its open epochs).

        Returns
        -------
        ndarray of shape (dim,)
            The proposal; it is remembered as pending until told or discarded.
        """
        C = None if candidates is None else check_points("candidates", candidates, self.dim)
        P = self._all_pending(pending)
        self._uniform = bool(uniform)
        self.turn = "acquisition"  # unless _propose says otherwise
        try:
            x = self._propose(C, P)
        finally:
            self._uniform = False
        self._pending.append(np.array(x, dtype=float))
        return np.array(x, dtype=float)

    def ask_again(self) -> np.ndarray:
        """Propose the best told point again (by told reward), remembered as pending: a
        repeat that tells whether the objective returns the same score twice.

        Returns
        -------
        ndarray of shape (dim,)
        """
        if self.t == 0:
            raise ValueError("ask_again needs a told point; none was told yet.")
        x = self.X[int(np.argmax(self.y))].copy()
        self._pending.append(x.copy())
        self.turn = "repeat"
        return x

    def tell(self, x, y, noise_var=None) -> None:
        """Report the reward(s) ``y`` observed at ``x``.

        Parameters
        ----------
        x : array_like of shape (dim,) or (n, dim)
        y : float or array_like of shape (n,)
            Finite rewards (privatized ones when privacy is on).
        noise_var : float or array_like of shape (n,), optional
            The known noise variance of each reward, in reward units (default: the
            constructor's ``noise_var``); the fitted surrogate fixes it in its likelihood.
        """
        X = np.asarray(x, dtype=float)
        X = X.reshape(1, -1) if X.ndim == 1 else X
        X = check_points("x", X, self.dim)
        Y = np.atleast_1d(np.asarray(y, dtype=float))
        if Y.ndim != 1 or Y.shape[0] != X.shape[0]:
            raise ValueError(
                f"y must hold one reward per point: got {Y.shape[0]} for {X.shape[0]}."
            )
        if np.any(np.isnan(Y)):
            raise ValueError(
                "y is NaN, which is what a failed evaluation returns. A failed evaluation "
                "carries no reward: do not tell it (call discard(x) to drop the pending point), "
                "or tell a finite penalty value if failures should be avoided."
            )
        if not np.all(np.isfinite(Y)):
            raise ValueError("y must be finite; an infinite reward cannot be learned from.")
        V = np.broadcast_to(
            self.noise_var if noise_var is None else np.asarray(noise_var, dtype=float), Y.shape
        )
        for v in np.unique(V):
            check_float("noise_var", v, low=0.0, closed_low=True)
        for xi, yi, vi in zip(X, Y, V, strict=True):
            self._remove_pending(xi)
            self._X.append(xi.copy())
            self._y.append(float(yi))
            self._v.append(float(vi))
            self._observe(xi, float(yi))
            self._after_observe()

    def rescale(self, a: float, b: float) -> bool:
        """Map every told reward ``y`` to ``a y + b`` (``a > 0``) without refitting, when
        that leaves the model and the proposals those of a fresh optimizer told the mapped
        rewards (up to rounding); returns whether it was done (here: never, the caller
        rebuilds). Used when the reward scale of a study without a declared value range moves.

        Parameters
        ----------
        a, b : float

        Returns
        -------
        bool
        """
        return False

    def clear_pending(self) -> None:
        """Forget every pending point (a caller that passes the current ones to each ask)."""
        self._pending.clear()

    def discard(self, x) -> None:
        """Forget a pending point whose evaluation failed (it will never be told)."""
        self._remove_pending(np.asarray(x, dtype=float).reshape(-1))

    def predict(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation of the surrogate at ``X``.

        Parameters
        ----------
        X : array_like of shape (n, dim)

        Returns
        -------
        mean, std : ndarray of shape (n,)
        """
        X = check_points("X", X, self.dim)
        mean, var = self._posterior(X, None)
        return mean, np.sqrt(np.maximum(var, 0.0))

    def probability_better(self, X, reference) -> np.ndarray:
        """Posterior probability that each point of ``X`` scores above ``reference``.

        ``P(f(x) > f(reference)) = Phi(E[d] / sd[d])`` for ``d = f(x) - f(reference)`` under
        the surrogate's posterior; for the exact-GP optimizers the joint posterior (the
        covariance of the two values counts), for the others the two values taken as
        independent, which overstates the spread of ``d`` and so errs towards keeping the
        reference.

        Parameters
        ----------
        X : array_like of shape (n, dim)
        reference : array_like of shape (dim,)

        Returns
        -------
        ndarray of shape (n,)
        """
        X = check_points("X", X, self.dim)
        x0 = check_points("reference", np.reshape(reference, (1, -1)), self.dim)[0]
        mean, var = self._difference(X, x0)
        spread = var > 0.0  # no spread: a model with no noise left
        z = mean / np.sqrt(np.where(spread, var, 1.0))
        prob = np.where(spread, special.ndtr(z), (mean > 0.0).astype(float))
        prob[np.all(X == x0, axis=1)] = 0.0  # the reference does not beat itself
        return prob

    def _difference(self, X: np.ndarray, x0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of ``f(X) - f(x0)`` (here: the two values taken as independent)."""
        mean, var = self._posterior(np.vstack([X, x0]), None)
        return mean[:-1] - mean[-1], np.maximum(var[:-1], 0.0) + max(var[-1], 0.0)

    def recommend_row(
        self,
        baseline: int | None = None,
        *,
        eligible=None,
        external: tuple[float, float] | None = None,
    ) -> int:
        """Index of the told point with the best posterior mean (ties: the best told reward).

        The rule of :func:`privtune.acquisition.recommend_index`, over the told points in order;
        of a point told several times, its first row.

        Parameters
        ----------
        baseline : int, optional
            Row of a told point to keep unless another beats it with posterior probability
            :func:`~privtune.acquisition.baseline_level` (see :meth:`probability_better`).
        eligible : array_like of bool of shape (t,), optional
            Rows that may be picked (default: all); e.g. not a failure's penalty.
        external : (float, float), optional
            A baseline outside the cube (a configuration the space cannot encode, such as an
            estimator's default ``max_depth=None``), as the reward it was told apart from the
            model and that reward's noise variance: its value is taken as ``N(reward,
            variance)``, independent of the model. It is kept (``-1`` is returned) unless a
            told point beats it with probability :func:`~privtune.acquisition.baseline_level`,
            ``Phi((mu_i - reward) / sqrt(sigma_i^2 + variance))``. Not with ``baseline``.

        Returns
        -------
        int
            The row; ``-1`` for the external baseline.
        """
        if self.t == 0:
            raise RuntimeError("recommend() needs at least one told reward.")
        X = self.X
        eligible = self._trusted(eligible, baseline)
        prob = None
        if external is not None:
            if baseline is not None:
                raise ValueError("pass baseline (a told row) or external, not both.")
            reward, variance = (float(v) for v in external)
            mean, std = self.predict(X)
            spread = np.sqrt(std**2 + max(variance, 0.0))
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(spread > 0, (mean - reward) / spread, np.sign(mean - reward) * np.inf)
            ok = np.ones(self.t, dtype=bool) if eligible is None else np.asarray(eligible, bool)
            best = recommend_index(
                np.append(mean, reward),
                tiebreak=np.append(self.y, reward),
                eligible=np.append(ok, True),
                baseline=self.t,
                prob_better=np.append(0.5 * special.erfc(-z / math.sqrt(2.0)), 0.5),
            )
            if best == self.t:
                return -1
            same = np.all(X == X[best], axis=1) & ok
            return int(np.flatnonzero(same)[0])
        if baseline is not None:
            integer = isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool)
            if not integer or not 0 <= baseline < self.t:
                raise ValueError(
                    f"baseline must be the row of a told point, an int in [0, {self.t}); "
                    f"got {baseline!r}."
                )
            baseline = int(baseline)
            prob = self.probability_better(X, X[baseline])
        best = recommend_index(
            self._mean(X), tiebreak=self.y, eligible=eligible, baseline=baseline, prob_better=prob
        )
        # a configuration told several times: its first (eligible) row
        same = np.all(X == X[best], axis=1)
        if eligible is not None:
            same &= np.asarray(eligible, dtype=bool)
        return int(np.flatnonzero(same)[0])

    def _trusted(self, eligible, baseline: int | None = None) -> np.ndarray | None:
        """``eligible``, narrowed to the rows whose told reward reaches ``max_j (y_j - s_j)``,
        ``s_j`` the fitted noise standard deviation of reward ``j``, when there is no known
        noise (no privacy): a smoothing model does not overrule scores it believes nearly
        exact, and a reward the model believes an outlier (a large ``s_j`` under the Student-t
        likelihood) does not shut the others out. When the model judges the rewards exact
        (:meth:`_exact` at :data:`PICK_EXACT_SHARE`), only the rows with the best told reward
        remain (the posterior mean breaks their ties): a score one validation sample below the
        best is not picked over it, as ``best_trial`` and ``best_params_`` would not. The
        baseline's row stays eligible (the baseline rule decides). Unchanged under known noise
        or without a fitted noise."""
        noise = self.fitted_noise_var()
        if noise is None or any(self._v):
            return eligible
        ok = np.ones(self.t, dtype=bool) if eligible is None else np.asarray(eligible, bool)
        if not ok.any():
            return eligible
        y = self.y
        if self._exact(PICK_EXACT_SHARE):
            best = np.max(y[ok])
            floor = best - 1e-12 * max(1.0, abs(best))
        else:
            floor = np.max((y - np.sqrt(noise))[ok])
        trusted = ok & (y >= floor)
        if isinstance(baseline, (int, np.integer)) and 0 <= baseline < self.t:
            trusted[baseline] = ok[baseline]
        return trusted

    def fitted_noise_var(self) -> np.ndarray | None:
        """The noise variance the model attributes to each told reward beyond its known noise,
        in reward units (the fitted surrogate's nugget, times each reward's multiplier under
        the Student-t likelihood); ``None`` for a model that fits none."""
        return None

    def _noise_sd(self) -> float:
        """The median told reward's noise standard deviation, known plus fitted (0 before
        two rewards)."""
        if self.t < 2:
            return 0.0
        fitted = self.fitted_noise_var()
        total = np.asarray(self._v, dtype=float) + (0.0 if fitted is None else fitted)
        return float(np.sqrt(np.median(total)))

    def _exact(self, share: float = EXACT_SHARE) -> bool:
        """Whether the told rewards are exact as far as the model or the history can tell: no
        known noise, not shown noisy (:meth:`_shown_noisy`: a repeated configuration that
        returned another reward, or a likelihood chosen for noisy rewards), and either
        repeated evaluations that agree (:meth:`_repeats_agree`) or a fitted noise at most
        ``share`` of the rewards' variance for the median reward. A repeat is a measurement
        and the fitted noise a reading: one repeat that disagrees outweighs a small fitted
        noise (a noise small against the objective's range can still be heavy-tailed, and its
        lucky draws would otherwise set the incumbent). At :data:`EXACT_SHARE` a configuration
        already told is then not proposed again (its second evaluation would say nothing new);
        the pick asks at :data:`PICK_EXACT_SHARE`."""
        noise = self.fitted_noise_var()
        if noise is None or any(self._v) or self.t < 2:
            return False
        if self._shown_noisy():
            return False
        if self._repeats_agree():
            return True
        return float(np.median(noise)) <= share * max(float(np.var(self.y)), 1e-300)

    def repeats(self) -> tuple[int, bool]:
        """The told rewards that repeat a configuration told before, and whether each of them
        equals that configuration's first reward (up to the rounding of :meth:`rescale`).

        Returns
        -------
        n_repeats : int
        agree : bool
            ``True`` when there is no repeat.
        """
        first: dict[bytes, float] = {}
        n_repeats, agree = 0, True
        for x, y in zip(self._X, self._y, strict=True):
            key = x.tobytes()
            if key not in first:
                first[key] = y
                continue
            n_repeats += 1
            agree = agree and abs(y - first[key]) <= 1e-9 * max(1.0, abs(y))
        return n_repeats, agree

    def _shown_noisy(self) -> bool:
        """Whether rewards told without a known noise are noisy all the same: a repeated
        configuration returned another reward (:meth:`repeats`), or (in a subclass) the user
        chose a likelihood for noisy rewards. Such rewards are never judged exact
        (:meth:`_exact`) and the plateau rule for exact rewards (``min_skill``) is off."""
        n_repeats, agree = self.repeats()
        return bool(n_repeats) and not agree

    def _repeats_agree(self) -> bool:
        """Whether the history shows the objective deterministic: at least
        ``agreeing_repeats`` evaluations repeat a configuration told before, and every
        configuration told more than once got the same reward each time (:meth:`repeats`).

        A fitted noise is the model's reading; a repeat is a measurement. A jagged but
        deterministic objective (a cross-validated score over an integer parameter, which
        changes in steps from one value to the next) makes the kernel fit a large noise, and
        the model would otherwise keep proposing configurations it has already scored.
        """
        n_repeats, agree = self.repeats()
        return agree and n_repeats >= self.agreeing_repeats

    def recommend(self, baseline: int | None = None) -> np.ndarray:
        """The evaluated point with the best posterior mean.

        Under heavy noise the point with the best *observed* reward is a poor pick: its reward is
        likely a lucky draw. The posterior mean pools every observation, and computing it from
        privatized rewards is post-processing (no extra privacy cost).

        Parameters
        ----------
        baseline : int, optional
            Row of a told point (e.g. the defaults, told first: ``0``) that is kept unless
            another point beats it with posterior probability
            :func:`~privtune.acquisition.baseline_level` (``1 - 0.05 / m`` for ``m``
            competitors).

        Returns
        -------
        ndarray of shape (dim,)
        """
        return self.X[self.recommend_row(baseline)].copy()

    @property
    def beta(self) -> float:
        """The confidence width used by the next ask (``beta_scale`` times the theory's)."""
        return self.beta_scale * self.beta_t()

    # -- hooks for subclasses -----------------------------------------------------------------
    def beta_t(self) -> float:  # pragma: no cover - abstract
        """The theoretical confidence width for the next round."""
        raise NotImplementedError

    def _observe(self, x: np.ndarray, y: float) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _posterior(self, X: np.ndarray, P: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError  # pragma: no cover - abstract

    def _posterior_grad(self, z: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray] | None:
        """Posterior mean and variance at one point and their gradients in it, for the
        acquisition optimiser's analytic gradient; ``None`` (the default) for a model without
        them: the optimiser differences the acquisition instead."""
        return None

    def _mean(self, X: np.ndarray) -> np.ndarray:
        """Posterior mean only (subclasses skip the variance, the costly part)."""
        return self._posterior(X, None)[0]

    def _after_observe(self) -> None:
        """Called after each told reward (a kernel optimizer refits its lengthscale here)."""

    def _posterior_given(self, P: np.ndarray | None):
        """``Z -> (mean, variance)`` for the acquisition, given pending points ``P``.

        Pending points shrink the variance (GP-BUCB) and, through :meth:`_lie`, lower the mean
        around themselves (the constant liar): with the small practical ``beta`` the variance
        alone would not keep a batch from piling up on the mean's maximiser.
        """
        return lambda Z: self._posterior(Z, P)

    def _lie(self) -> float:
        """The constant liar's value for pending points: the lowest posterior mean among the
        told points (pessimistic, so a batch spreads out; Ginsbourger et al. 2010)."""
        if self.t == 0:
            return 0.0
        return float(np.min(self._mean(self.X)))

    def _propose(self, C: np.ndarray | None, P: np.ndarray | None) -> np.ndarray:
        """The maximiser of the acquisition over ``C`` or the cube, given pending points ``P``
        (a uniform point in the start-up phase and on ``uniform_share``'s turns)."""
        if self._uniform or self._share_turn(self.uniform_share, P):
            self.turn = "start-up" if self._uniform else "uniform"
            return self._uniform_point(C, P)
        if self._flat():
            self.turn = "space-filling"
            return self._space_filling_point(C, P)
        if self._forest_turn(P):
            self.turn = "forest"
            return self._forest_point(C, P)
        if C is None:
            C = self._probe_candidates(P)
            if C is not None:
                self.turn = "probe"
        local, box = False, None
        if C is None:
            if self.local_refine:
                box = self._trust_region_box(P)
            else:
                C = self._local_candidates(P)
            local = C is not None or box is not None
            if local:
                self.turn = "trust-region"
        posterior = self._posterior_given(P)
        acquisition = self.acquisition
        draw = getattr(acquisition, "draw", None)
        if draw is not None:  # a portfolio: this proposal's member
            acquisition = draw(self._rng, t=self.t, dim=len(self.layout), local=local)
        state = self._acquisition_state()

        # never a configuration being evaluated, nor (with exact scores) one already told
        told = self._taken(P, told=self._exact())

        def acq(Z: np.ndarray) -> np.ndarray:
            mean, var = posterior(Z)
            values = acquisition(mean, var, state)
            if told:
                seen = np.fromiter((z.tobytes() in told for z in Z), bool, Z.shape[0])
                values = np.where(seen, -np.inf, values)
            return values

        def value_and_grad(z: np.ndarray) -> tuple[float, np.ndarray] | None:
            post = self._posterior_grad(z) if P is None else None
            if post is None or z.tobytes() in told:
                return None
            mean, var, d_mean, d_var = post
            out = acquisition.derivatives(mean, var, state)
            if out is None:
                return None
            value, a_mean, a_var = out
            return value, a_mean * d_mean + a_var * d_var

        # the analytic gradient where the model and the acquisition have one; elsewhere one
        # batched call per gradient (the point and a step along each real coordinate)
        return self._maximize(acq, C, batched_gradient=True, value_and_grad=value_and_grad, box=box)

    def _acquisition_state(self) -> AcquisitionState:
        """What the acquisition reads besides the posterior, each computed when first read."""
        return AcquisitionState(
            beta=lambda: self.beta,
            best_observed=lambda: float(np.max(self.y)) if self.t else 0.0,
            best_mean=lambda: float(np.max(self._mean(self.X))) if self.t else 0.0,
            noise_sd=self._noise_sd,
            exact=self._exact,
        )

    def _maximize(
        self,
        acq,
        C: np.ndarray | None,
        *,
        batched_gradient: bool = False,
        value_and_grad=None,
        box: tuple[np.ndarray, np.ndarray] | None = None,
    ):
        """Maximise ``acq`` over ``C``, the ``box`` ``(lower, upper)`` or the cube with this
        optimizer's settings (raw samples, restarts, snap, anchors at the best told points,
        its generator)."""
        return maximize(
            acq,
            self.dim,
            self._rng,
            candidates=C,
            snap=self.snap,
            layout=self.layout,
            raw_sampling=self.raw_sampling,
            n_raw=self.n_raw_samples,
            n_restarts=self.n_restarts,
            anchors=self._anchors(),
            maxiter=self.acq_maxiter,
            batched_gradient=batched_gradient,
            value_and_grad=value_and_grad,
            start_rule=self.start_rule,
            incumbents=self._incumbents(),
            boundary=self.boundary_samples,
            box=box,
        )

    def reseed(self, seed) -> None:
        """Reset the generator of :meth:`ask` (raw samples, tie-breaks) to ``seed``.

        The model (the told history, Nyström sampling) is not affected. A stateless caller that
        rebuilds or reuses an optimizer reseeds it per proposal, so both give the same point.

        Parameters
        ----------
        seed : int, sequence of int or None
            Anything :func:`numpy.random.default_rng` accepts.
        """
        self._rng = np.random.default_rng(seed)

    # -- plateaus ------------------------------------------------------------------------------
    def model_skill(self) -> float | None:
        """The surrogate's leave-one-out skill on the told rewards
        (:meth:`privtune.gp.GaussianProcess.loo_skill`); ``None`` for a model without one."""
        return None

    def signal_share(self) -> float | None:
        """The share of the told rewards' variance the surrogate attributes to the objective
        rather than to noise, ``s2 / (s2 + mean known noise + nugget)`` in standardised units;
        ``None`` for a model without one."""
        return None

    def _flat(self) -> bool:
        """Whether the next proposal fills the space instead of following the model.

        Only while no told reward stands out (the best lies within :data:`STANDOUT`
        interquartile ranges of the median): then, for rewards without known noise and not
        shown noisy (:meth:`_shown_noisy`: a model of noisy rewards predicts them poorly
        wherever the objective is rugged, plateau or not), with ``min_skill`` set, when the model
        predicts them from each other no better than ``min_skill`` (:meth:`model_skill`);
        under known noise with ``min_signal`` set, when the model
        attributes at most that share of their variance to the objective
        (:meth:`signal_share`): the scores told so far are equal within their noise. A plateau
        never holds the proposals: they spread until a reward stands out or the model finds
        something to follow.
        """
        noisy = any(self._v)
        threshold = self.min_signal if noisy else self.min_skill
        if threshold is None or self.t < 3:
            return False
        if not noisy and self._shown_noisy():
            return False  # noisy rewards, not exact ones: not this rule's
        y = self.y
        q25, median, q75 = np.quantile(y, [0.25, 0.5, 0.75])
        if np.max(y) - median > STANDOUT * (q75 - q25):
            return False  # a told reward stands out: something to follow, not a plateau
        value = self.signal_share() if noisy else self.model_skill()
        return value is not None and not value > threshold

    def _probe_candidates(self, P: np.ndarray | None) -> np.ndarray | None:
        """The local probe's candidates when the study has stalled (``stall_probe``), else
        ``None`` (the whole cube).

        The best told point is the incumbent: by told reward for exact rewards, by posterior
        mean otherwise. It has stalled when the last ``stall_probe`` told rewards did not
        replace it; the probe then takes every other proposal (the others search the cube as
        usual), and only while the incumbent is above the median of the told points (a probe
        around a chance-level incumbent would only circle it). Candidates already told (exact
        rewards) or pending are left out.
        """
        k = self.stall_probe
        if k is None or self.t <= k:
            return None
        exact = self._exact()
        score = self.y if exact else self._mean(self.X)
        best = best_above_median(score)
        if best is None:
            return None
        stalled = self.t - 1 - best
        if stalled < k or (stalled - k) % 2:
            return None
        C = coordinate_moves(self.X[best], self.layout, pairs=self.probe_pairs)
        if self.snap is not None:
            C = self.snap(C)
        fresh = self._untaken(C, P, told=exact)
        return C[fresh] if fresh.any() else None

    def _trust_region_side(self) -> float:
        """The side of ``local_share``'s trust region, replayed from the told rewards by
        TuRBO's rule (Eriksson et al. 2019): :data:`TRUST_REGION_SIDE` at first; doubled (to
        at most twice that) after 3 told rewards in a row that each beat the best before them
        by more than 1e-3 of its magnitude, halved after ``max(4, dim)`` in a row that did
        not, and back to the start once below ``0.5^7`` (a restart)."""
        side, wins, losses = TRUST_REGION_SIDE, 0, 0
        y = self.y
        best = float(y[0]) if self.t else 0.0
        for value in y[1:]:
            if value > best + 1e-3 * max(abs(best), 1e-12):
                wins, losses = wins + 1, 0
            else:
                wins, losses = 0, losses + 1
            best = max(best, float(value))
            if wins == 3:
                side, wins = min(2.0 * side, 2.0 * TRUST_REGION_SIDE), 0
            elif losses == max(4, self.dim):
                side, losses = side / 2.0, 0
            if side < 0.5**7:
                side = TRUST_REGION_SIDE
        return side

    def _block_lengthscales(self) -> np.ndarray | None:
        """One lengthscale per block of the layout, for a model that fits them (``None``
        otherwise: the trust region is then a cube)."""
        return None

    def _local_candidates(self, P: np.ndarray | None) -> np.ndarray | None:
        """Candidates in the trust region around the best told point when this proposal is
        ``local_share``'s (:meth:`_share_turn`) and the best told reward is above the median
        of the told rewards (:func:`best_above_median`), else ``None`` (the whole cube).

        The region is TuRBO's box: centred on the best told point, its side along each
        parameter :meth:`_trust_region_side` times that parameter's lengthscale over their
        geometric mean, cut to the cube. The candidates are :data:`LOCAL_CANDIDATES` scrambled
        Sobol points of the box, snapped, less those told or pending; the acquisition picks
        among them. With ``local_retire``, ``None`` too while the side is at most
        :data:`TRUST_REGION_SIDE` halved that many times.
        """
        box = self._trust_region_box(P)
        if box is None:
            return None
        lo, hi = box
        C = lo + raw_samples(self._rng, LOCAL_CANDIDATES, self.dim, "sobol") * (hi - lo)
        if self.snap is not None:
            C = self.snap(C)
        fresh = self._untaken(C, P, told=True)
        return C[fresh] if fresh.any() else None

    def _trust_region_box(self, P: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
        """The trust region's box ``(lower, upper)`` when this proposal is ``local_share``'s
        and the region has one (:meth:`_local_candidates`), else ``None``."""
        if not self._share_turn(self.local_share, P):
            return None
        best = best_above_median(self.y)
        if best is None:
            return None
        side = self._trust_region_side()
        if self.local_retire is not None and side <= TRUST_REGION_SIDE / 2**self.local_retire:
            return None  # retired: the study stalled it down; the cube's search takes over
        centre = self.X[best]
        width = np.ones(self.dim)
        ls = self._block_lengthscales()
        if ls is not None:
            ls = np.asarray(ls, dtype=float)
            ls = ls / np.exp(np.mean(np.log(ls)))
            for b, length in zip(self.layout, ls, strict=True):
                width[b.slice] = length
        width *= side
        lo = np.clip(centre - width / 2.0, 0.0, 1.0)
        hi = np.clip(centre + width / 2.0, 0.0, 1.0)
        return lo, hi

    def _share_turn(self, k: int | None, P: np.ndarray | None) -> bool:
        """Whether this proposal is the turn of a share of ``k`` (``forest_share``,
        ``local_share``, ``uniform_share``): exact rewards, at least two told, and the number
        of told and pending points a multiple of ``k``. Counting the pending points makes a
        batch asked before any of it is told (parallel workers) take its turns in order, as a
        sequential study would, instead of all or none of them."""
        if k is None or self.t < 2:
            return False
        n = self.t + (0 if P is None else len(P))
        return n % k == 0 and self._exact()

    def _forest_turn(self, P: np.ndarray | None) -> bool:
        """Whether this proposal is the forest's (``forest_share``, :meth:`_share_turn`)."""
        return self._share_turn(self.forest_share, P)

    def _forest_point(self, C: np.ndarray | None, P: np.ndarray | None) -> np.ndarray:
        """The forest's proposal (:func:`privtune.forest.forest_proposal`) over ``C`` or its
        own candidates (:func:`privtune.forest.forest_candidates`, snapped), never a told or
        pending point while another is left."""
        if C is None:
            C = forest_candidates(self.X, self.y, self.layout, self._rng, self.raw_sampling)
            if self.snap is not None:
                C = self.snap(C)
        fresh = self._untaken(C, P)
        if fresh.any():
            C = C[fresh]
        return np.array(C[forest_proposal(self.X, self.y, C, self._rng)], dtype=float)

    def _space_filling_point(self, C: np.ndarray | None, P: np.ndarray | None) -> np.ndarray:
        """The candidate farthest from every told and pending point (maximin distance).

        Over ``C`` if given; otherwise over the optimizer's raw samples and as many copies of
        them with each coordinate pushed to a face of the cube with probability 1/2 (the faces
        and corners, where the degenerate region of a space often ends), snapped.
        """
        seen = self.X if P is None else np.vstack([self.X, P])
        if C is None and self.floor_corners:
            C = self._untold_corners(P)
        if C is None:
            raw = raw_samples(self._rng, self.n_raw_samples, self.dim, self.raw_sampling)
            C = with_faces(raw, self._rng, corners=self.boundary_samples)
            if self.snap is not None:
                C = self.snap(C)
        gap = np.min(np.sum((C[:, None, :] - seen[None, :, :]) ** 2, axis=2), axis=1)
        return np.array(C[argmax_random_tie(gap, self._rng)], dtype=float)

    def _untold_corners(self, P: np.ndarray | None) -> np.ndarray | None:
        """The cube's corners (every one for ``dim <= 12``, else 4,096 drawn at random),
        snapped, without repeats, less those told or pending; ``None`` if none is left."""
        if self.dim <= 12:
            C = (np.arange(2**self.dim)[:, None] >> np.arange(self.dim)) & 1
        else:
            C = self._rng.integers(0, 2, size=(4096, self.dim))
        C = np.asarray(C, dtype=float)
        if self.snap is not None:
            C = self.snap(C)
        C = unique_rows(C)
        fresh = self._untaken(C, P, told=True)
        return C[fresh] if fresh.any() else None

    # -- helpers -------------------------------------------------------------------------------
    def _uniform_point(self, C: np.ndarray | None, P: np.ndarray | None = None) -> np.ndarray:
        """A uniform draw (a uniform row of ``C``), not one already told or pending when
        another can be found: in a space of few configurations the start-up draws are then
        distinct, as RandomizedSearchCV's are."""
        seen = self._taken(P)
        if C is not None:
            fresh = [i for i, c in enumerate(C) if c.tobytes() not in seen]
            rows = fresh if fresh else range(C.shape[0])
            return C[rows[int(self._rng.integers(len(rows)))]].copy()
        for _ in range(64):
            u = self._rng.random(self.dim)
            x = np.asarray(self.snap(u[None, :])[0] if self.snap else u, dtype=float)
            if x.tobytes() not in seen:
                break
        return x

    def _taken(self, P: np.ndarray | None, *, told: bool = True) -> set[bytes]:
        """The configurations a proposal should not repeat, as byte keys: the pending points
        ``P`` and, with ``told``, the told ones."""
        seen = {x.tobytes() for x in self._X} if told else set()
        if P is not None:
            seen.update(x.tobytes() for x in np.asarray(P, dtype=float))
        return seen

    def _untaken(self, C: np.ndarray, P: np.ndarray | None, *, told: bool = True) -> np.ndarray:
        """Which rows of ``C`` are not among :meth:`_taken`'s configurations (a boolean mask)."""
        seen = self._taken(P, told=told)
        return np.fromiter((c.tobytes() not in seen for c in C), bool, C.shape[0])

    def _incumbents(self) -> np.ndarray | None:
        """The best told point (by told reward), a start of the ``"spread"`` rule, its real
        coordinates moved 1e-6 towards the centre (with exact scores the told point itself is
        excluded from the search)."""
        if self.t == 0 or self.start_rule != "spread":
            return None
        x = self.X[int(np.argmax(self.y))].copy()
        for b in self.layout:
            if b.kind == "real":
                x[b.slice] += 1e-6 * np.sign(0.5 - x[b.slice])
        return x[None, :]

    def _anchors(self) -> np.ndarray | None:
        """Perturbations of the best told points, extra raw samples for the acquisition."""
        if self.t == 0:
            return None
        X, score = self._anchor_ranking()
        top = X[np.argsort(-score)[: min(5, X.shape[0])]]
        reps = np.repeat(top, 8, axis=0)
        return reps + 0.05 * self._rng.standard_normal(reps.shape)

    def _anchor_ranking(self) -> tuple[np.ndarray, np.ndarray]:
        """The points the anchors perturb and their ranking score: the told points and their
        posterior means (under noise the best told reward is mostly the luckiest draw)."""
        X = self.X
        return X, self._mean(X)

    def _all_pending(self, extra) -> np.ndarray | None:
        parts = [self.pending]
        if extra is not None:
            parts.append(check_points("pending", extra, self.dim, allow_empty=True))
        P = np.vstack(parts)
        return P if P.shape[0] else None

    def _remove_pending(self, x: np.ndarray) -> None:
        for i, p in enumerate(self._pending):
            if np.allclose(p, x, rtol=0.0, atol=1e-12):
                del self._pending[i]
                return

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, t={self.t})"


class KernelOptimizer(BaseOptimizer):
    """Base class of the optimizers with a kernel surrogate (the exact-GP and Nyström ones):
    the kernel, the regulariser, the theorems' constants and the choice of surrogate.

    Subclasses implement ``_rebuild`` (recompute the model from the history after the kernel
    changed) besides the hooks of :class:`BaseOptimizer`.

    Parameters
    ----------
    dim : int
        Dimension of the unit cube, ``dim >= 1``.
    kernel : Kernel or str, default=SE(0.2)
        Kernel of the surrogate (``"se"``, ``"matern52"``, ... or an instance).
    lam : float, default=1.0
        Regulariser ``lambda > 0`` (the surrogate's noise variance).
    delta : float, default=0.05
        Confidence parameter ``delta`` in (0, 1) of the high-probability bounds.
    B : float, default=1.0
        Bound on the RKHS norm of the objective, ``||f||_H <= B``.
    R : float, default=1.0
        Bound on the observation noise, ``|eta_t| <= R``.
    fit_lengthscale : bool, default=False
        Refit the kernel lengthscale by ML-II on the told (possibly privatized) data whenever
        the number of told rewards reaches a power of two (>= 8). Off for reproductions.
    surrogate : {"fixed", "fitted"}, default="fixed"
        ``"fixed"`` is the papers' model: ``kernel`` and ``lam`` as given, zero prior mean,
        unit signal variance (the reproductions use it). ``"fitted"`` is the surrogate of
        :mod:`privtune.gp`: ARD Matérn-5/2 over ``layout``, constant mean, signal variance,
        lengthscales and a nugget fitted by MAP, rewards standardised, and each reward's known
        noise variance (``noise_var``) fixed in the likelihood; ``kernel`` and ``lam`` are then
        not used by the exact-GP optimizers.
    priors : privtune.gp.Priors, optional
        The priors of the fitted surrogate.
    student_t_df : float, optional
        With the fitted surrogate, a Student-t likelihood with this many degrees of freedom for
        the noise the known variances do not explain (heavy-tailed scores; see
        :class:`privtune.gp.GaussianProcess`). Default: the Gaussian nugget.
    student_t_on_repeat : float, optional
        With the fitted surrogate and no ``student_t_df``: the Gaussian nugget while the scores
        look deterministic, and a Student-t likelihood with this many degrees of freedom from
        the first configuration told twice with two different rewards on (the scores are
        noisy, and a heavy-tailed draw would pull a Gaussian fit). Exact scores never switch.
        Default: off.
    repeat_discounted_best : float, optional
        With the Student-t likelihood (``student_t_df``, or ``student_t_on_repeat`` once it
        switches) and no known noise variance: when the model discounts the best told reward,
        its nugget multiplier above this value (an outlier to the model), the next proposal
        evaluates that configuration again instead of maximising the acquisition, once per
        configuration. At each refit of the hyperparameters (every tell up to 100 rewards,
        then on the schedule of :mod:`privtune.gp`), the rewards of a configuration told more
        than once that agree within :data:`REPEAT_AGREEMENT` are not discounted; between
        refits, a new reward takes the multiplier of its own residual. The likelihood cannot
        tell a lucky draw from a narrow good region the model has not resolved; a second
        evaluation can.
        Default: off.
    input_warping : bool, default=False
        With the fitted surrogate, fit a Kumaraswamy warp of each real and discrete parameter
        with the model (for parameters whose effect concentrates at one end of their range).
        It acts on the inputs, so it is valid with and without privacy.
    output_warping : bool, default=False
        With the fitted surrogate and exact rewards (``noise_var=0``), model the rewards
        through a power transform fitted with the model
        (:class:`privtune.gp.OutputWarp`), for skewed scores. Refused with a known noise
        variance (privacy): the curator's variance would not keep its meaning in warped units.
    **kwargs
        ``epsilon``, ``beta_scale``, ``seed``, ``snap``, ``layout``, ``noise_var``,
        ``acquisition``, ... as in :class:`BaseOptimizer`.
    """

    def __init__(
        self,
        dim: int,
        *,
        kernel: Kernel | str = "se",
        lam: float = 1.0,
        delta: float = 0.05,
        B: float = 1.0,
        R: float = 1.0,
        fit_lengthscale: bool = False,
        surrogate: str = "fixed",
        priors: Priors | None = None,
        student_t_df: float | None = None,
        student_t_on_repeat: float | None = None,
        repeat_discounted_best: float | None = None,
        input_warping: bool = False,
        output_warping: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(dim, **kwargs)
        self.kernel = make_kernel(kernel)
        self.lam = _check_positive("lam", lam)
        self.delta = _check_unit_interval("delta", delta)
        self.B = _check_positive("B", B)
        self.R = _check_positive("R", R)
        self.fit_lengthscale = bool(fit_lengthscale)
        if surrogate not in SURROGATES:
            raise ValueError(f"surrogate must be one of {SURROGATES}, got {surrogate!r}.")
        self.surrogate = surrogate
        if surrogate == "fitted" and self.fit_lengthscale:
            raise ValueError(
                "fit_lengthscale=True refits the fixed surrogate's single lengthscale; the "
                'fitted surrogate fits its own. Use one or the other (surrogate="fixed").'
            )
        if priors is not None and not isinstance(priors, Priors):
            raise TypeError(f"priors must be a privtune.gp.Priors, got {type(priors).__name__}.")
        self.priors = priors
        self.student_t_df = (
            None if student_t_df is None else check_float("student_t_df", student_t_df, low=0.0)
        )
        self.student_t_on_repeat = (
            None
            if student_t_on_repeat is None
            else check_float("student_t_on_repeat", student_t_on_repeat, low=0.0)
        )
        self.repeat_discounted_best = (
            None
            if repeat_discounted_best is None
            else check_float("repeat_discounted_best", repeat_discounted_best, low=1.0)
        )
        if self.repeat_discounted_best is not None and (
            self.student_t_df is None and self.student_t_on_repeat is None
        ):
            raise ValueError(
                "repeat_discounted_best acts on the Student-t likelihood's discounts: give "
                "student_t_df or student_t_on_repeat with it."
            )
        self.input_warping = check_bool("input_warping", input_warping)
        self.output_warping = check_bool("output_warping", output_warping)
        for name, on in (
            ("student_t_df", self.student_t_df is not None),
            ("student_t_on_repeat", self.student_t_on_repeat is not None),
            ("repeat_discounted_best", self.repeat_discounted_best is not None),
            ("input_warping", self.input_warping),
            ("output_warping", self.output_warping),
        ):
            if on and surrogate != "fitted":
                raise ValueError(f'{name} needs the fitted surrogate (surrogate="fitted").')
        if self.output_warping and self.noise_var != 0.0:
            raise ValueError(
                'output_warping needs the fitted surrogate (surrogate="fitted") and exact '
                "rewards (noise_var=0): under privacy the curator's known noise variance would "
                "not keep its meaning in warped units. Use input_warping, which is valid with "
                "privacy."
            )

    @property
    def likelihood_df(self) -> float | None:
        """The degrees of freedom of the fitted surrogate's Student-t likelihood now
        (``None``: the Gaussian nugget): ``student_t_df``, or ``student_t_on_repeat`` once a
        configuration told twice got two different rewards (:meth:`repeats`)."""
        if self.student_t_df is not None or self.student_t_on_repeat is None:
            return self.student_t_df
        return self.student_t_on_repeat if BaseOptimizer._shown_noisy(self) else None

    def _shown_noisy(self) -> bool:
        """As :meth:`BaseOptimizer._shown_noisy`; a Student-t likelihood from the start
        (``student_t_df``, what ``heavy_tailed=True`` sets) says the rewards are noisy."""
        return self.student_t_df is not None or super()._shown_noisy()

    def _after_observe(self) -> None:
        if self.fit_lengthscale and self.t >= 8 and (self.t & (self.t - 1)) == 0:
            self._refit_kernel()

    def _rebuild(self) -> None:  # pragma: no cover - abstract
        """Recompute the model from the history (after the kernel changed)."""
        raise NotImplementedError

    def _refit_kernel(self) -> None:
        self.kernel = fit_lengthscale(self.kernel, self.X, self.y, self.lam)
        self._rebuild()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, t={self.t}, kernel={self.kernel!r})"
