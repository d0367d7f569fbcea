"""Maximise an acquisition function over the unit cube or over a finite candidate set.

Continuous maximisation follows the multi-start standard of BoTorch: evaluate many raw samples
(uniform, or a scrambled Sobol sequence), start a local search from the best few, keep the best
result. The local search moves the real coordinates with L-BFGS-B and sets each discrete or
categorical parameter (a block of :mod:`privtune.cube`) to its best value by enumeration, as
Optuna's ``GPSampler`` does for its mixed spaces. When a ``snap`` map is given (the search
space's ``snap``: cube point -> canonical encoding of its decoded params), every raw sample and
every L-BFGS-B result is snapped before it is compared, so the returned point always decodes to
valid params and re-encodes to itself.

Notation
--------
acq : callable, (n, d) -> (n,), the acquisition values (larger is better)
C   : (n, d) candidate points
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import optimize, special

from ._checks import check_float
from .cube import Block, check_layout

__all__ = [
    "ACQUISITIONS",
    "BASELINE_LEVEL",
    "MAX_EXHAUSTIVE",
    "PORTFOLIO_TURNS",
    "RAW_SAMPLING",
    "UCB",
    "Acquisition",
    "AcquisitionState",
    "ExpectedImprovement",
    "LogExpectedImprovement",
    "LogProbabilityOfImprovement",
    "Portfolio",
    "ProbabilityOfImprovement",
    "argmax_random_tie",
    "baseline_level",
    "coordinate_moves",
    "log_expected_improvement",
    "log_h",
    "make_acquisition",
    "maximize",
    "raw_samples",
    "recommend_index",
]

#: A function of candidate points, ``(n, d) -> (n,)``, that :func:`maximize` maximises.
Objective = Callable[[np.ndarray], np.ndarray]


class AcquisitionState:
    """What an acquisition function may read of its optimizer, each computed on first use.

    Parameters
    ----------
    beta : callable
        ``() -> float``: the confidence width of the next ask (``beta_scale * beta_t``).
    best_observed : callable
        ``() -> float``: the best told reward (0 before any).
    best_mean : callable
        ``() -> float``: the best posterior mean among the told points (0 before any), a
        noise-aware incumbent.
    noise_sd : callable, optional
        ``() -> float``: the standard deviation of a told reward's noise as the model sees it
        (known plus fitted), in reward units; 0 by default.
    exact : callable, optional
        ``() -> bool``: whether the model judges the told rewards exact (no known noise and a
        negligible fitted one); ``False`` by default.
    """

    def __init__(
        self,
        beta: Callable[[], float],
        best_observed: Callable[[], float],
        best_mean: Callable[[], float],
        noise_sd: Callable[[], float] = lambda: 0.0,
        exact: Callable[[], bool] = lambda: False,
    ) -> None:
        self._sources = {
            "beta": beta,
            "observed": best_observed,
            "mean": best_mean,
            "noise_sd": noise_sd,
            "exact": exact,
        }
        self._values: dict[str, float] = {}

    def _get(self, key: str) -> float:
        if key not in self._values:
            self._values[key] = float(self._sources[key]())
        return self._values[key]

    @property
    def beta(self) -> float:
        """The confidence width of the next ask."""
        return self._get("beta")

    @property
    def noise_sd(self) -> float:
        """The standard deviation of a told reward's noise as the model sees it."""
        return self._get("noise_sd")

    def incumbent(self, kind: str) -> float:
        """The incumbent value: ``"observed"`` (best told reward), ``"mean"`` (best posterior
        mean among the told points) or ``"auto"`` (the first while the model judges the told
        rewards exact, else the second)."""
        if kind == "auto":
            kind = "observed" if self._get("exact") else "mean"
        return self._get(kind)


class Acquisition:
    """An acquisition function: a score of candidate points from the surrogate's posterior.

    An optimizer calls ``acq(mean, var, state)`` with the posterior mean and variance at the
    candidates and an :class:`AcquisitionState`, and proposes the maximiser. Subclasses
    implement :meth:`__call__`; :attr:`name` identifies the function in messages.
    """

    name = "acquisition"

    #: Whether it reads the optimizer's confidence width ``beta`` (``beta_scale`` acts on it).
    reads_beta = False

    @property
    def reads_rewards(self) -> bool:
        """Whether it reads the told rewards themselves (an ``"observed"`` or ``"auto"``
        incumbent), not only the posterior: a model whose told rewards are raw data under a
        privacy model (Dubey's joint DP) refuses such an acquisition."""
        return getattr(self, "incumbent", None) in ("observed", "auto")

    def __call__(self, mean: np.ndarray, var: np.ndarray, state: AcquisitionState) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - abstract

    def derivatives(
        self, mean: float, var: float, state: AcquisitionState
    ) -> tuple[float, float, float] | None:
        """The value at one point and its partial derivatives in the posterior mean and
        variance, ``(a, da/dmean, da/dvar)``, for the optimiser's analytic gradient; ``None``
        (the default) when the acquisition has none: the optimiser differences instead."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _check_incumbent(incumbent: str) -> str:
    if incumbent not in INCUMBENTS:
        raise ValueError(f"incumbent must be one of {INCUMBENTS}, got {incumbent!r}.")
    return incumbent


#: The incumbents of the improvement-based acquisitions (see :meth:`AcquisitionState.incumbent`).
INCUMBENTS = ("observed", "mean", "auto")

#: Floor of the posterior variance in EI and PI: keeps ``z`` finite at told points.
_VAR_FLOOR = 1e-18


class UCB(Acquisition):
    """Upper confidence bound ``mean + beta std``, the acquisition of every paper implemented
    here, with the optimizer's ``beta`` (``beta_scale`` times the theory's ``beta_t``).

    Parameters
    ----------
    width : float, optional
        A width of the bound to use instead of the optimizer's ``beta`` (then ``beta_scale``
        does not act on it); :class:`Portfolio` sets its UCB's width per proposal.
    """

    name = "ucb"

    def __init__(self, width: float | None = None) -> None:
        if width is not None:
            width = check_float("width", width, low=0.0, closed_low=True)
        self.width = width

    @property
    def reads_beta(self) -> bool:  # type: ignore[override]
        """Whether the width is the optimizer's ``beta`` (no fixed ``width``)."""
        return self.width is None

    def _width(self, state: AcquisitionState) -> float:
        return state.beta if self.width is None else self.width

    def __call__(self, mean, var, state):
        return mean + self._width(state) * np.sqrt(np.maximum(var, 0.0))

    def derivatives(self, mean, var, state):
        sd = math.sqrt(max(var, 0.0))
        beta = self._width(state)
        return mean + beta * sd, 1.0, (0.5 * beta / sd if sd > 0.0 else 0.0)

    def __repr__(self) -> str:
        width = "" if self.width is None else f"width={self.width!r}"
        return f"{type(self).__name__}({width})"


def expected_improvement(sd: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``sd (z Phi(z) + phi(z))``: the expected improvement of a normal of standard deviation
    ``sd`` whose mean is ``z`` standard deviations above the bar (Jones et al. 1998)."""
    return sd * (z * special.ndtr(z) + np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi))


class ExpectedImprovement(Acquisition):
    """Expected improvement over ``incumbent + xi``:
    ``std (z Phi(z) + phi(z))``, ``z = (mean - incumbent - xi) / std`` (Jones et al. 1998).

    Parameters
    ----------
    xi : float, default=0.0
        Margin over the incumbent.
    incumbent : {"observed", "mean", "auto"}, default="observed"
        The best told reward (the textbook choice), the best posterior mean among the told
        points (noise-aware: under heavy noise the best told reward is mostly a lucky draw), or
        ``"auto"``: the first while the optimizer judges the told rewards exact, else the
        second.
    """

    name = "ei"

    def __init__(self, xi: float = 0.0, incumbent: str = "observed") -> None:
        self.xi = float(xi)
        self.incumbent = _check_incumbent(incumbent)

    def _z(self, mean, var, state):
        sd = np.sqrt(np.maximum(var, _VAR_FLOOR))
        return sd, (mean - (state.incumbent(self.incumbent) + self.xi)) / sd

    def __call__(self, mean, var, state):
        return expected_improvement(*self._z(mean, var, state))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(xi={self.xi!r}, incumbent={self.incumbent!r})"


class ProbabilityOfImprovement(ExpectedImprovement):
    """Probability of improvement ``Phi(z)`` over ``incumbent + xi`` (Kushner 1964), with
    ``z`` as in :class:`ExpectedImprovement`.

    Parameters
    ----------
    xi : float, default=0.0
        Margin over the incumbent.
    incumbent : {"observed", "mean", "auto"}, default="observed"
        As in :class:`ExpectedImprovement`.
    """

    name = "pi"

    def __call__(self, mean, var, state):
        return special.ndtr(self._z(mean, var, state)[1])


class LogExpectedImprovement(Acquisition):
    """The logarithm of the expected improvement (:func:`log_expected_improvement`), which
    keeps its precision where EI underflows (Ament et al. 2023).

    Parameters
    ----------
    incumbent : {"observed", "mean", "auto"}, default="mean"
        As in :class:`ExpectedImprovement`; the default is the noise-aware one.
    margin : float, default=0.0
        Improvement counted only beyond ``incumbent + margin * noise_sd``, with ``noise_sd``
        the told rewards' noise as the model sees it (:attr:`AcquisitionState.noise_sd`):
        an improvement within the noise is one a new evaluation would not tell apart.
    """

    name = "logei"

    def __init__(self, incumbent: str = "mean", margin: float = 0.0) -> None:
        self.incumbent = _check_incumbent(incumbent)
        self.margin = float(margin)

    def __call__(self, mean, var, state):
        best = state.incumbent(self.incumbent)
        if self.margin:
            best += self.margin * state.noise_sd
        return log_expected_improvement(mean, np.sqrt(np.maximum(var, 0.0)), best)

    def derivatives(self, mean, var, state):
        # ln EI = ln s + ln h(z), z = (mean - best) / s, h' = Phi, h - z Phi = phi:
        # d/dmean = Phi(z) / (h(z) s), d/ds = phi(z) / (h(z) s), d/dvar = d/ds / (2 s)
        best = state.incumbent(self.incumbent)
        if self.margin:
            best += self.margin * state.noise_sd
        sd = max(math.sqrt(max(var, 0.0)), 1e-12)
        z = (mean - best) / sd
        lh = float(log_h(np.array([z]))[0])
        value = math.log(sd) + lh
        d_mean = math.exp(float(special.log_ndtr(z)) - lh) / sd
        d_sd = math.exp(-0.5 * z * z - 0.5 * math.log(2.0 * math.pi) - lh) / sd
        d_var = 0.5 * d_sd / sd if var > 1e-24 else 0.0
        return value, d_mean, d_var

    def __repr__(self) -> str:
        return f"{type(self).__name__}(incumbent={self.incumbent!r}, margin={self.margin!r})"


class LogProbabilityOfImprovement(ProbabilityOfImprovement):
    """The logarithm of :class:`ProbabilityOfImprovement`, ``ln Phi(z)``, finite where
    ``Phi(z)`` underflows; it takes the same ``xi`` and ``incumbent``."""

    name = "logpi"

    def __call__(self, mean, var, state):
        return special.log_ndtr(self._z(mean, var, state)[1])

    def derivatives(self, mean, var, state):
        # ln Phi(z): d/dmean = r / s, d/ds = -z r / s, with the inverse Mills ratio
        # r = phi(z) / Phi(z) = sqrt(2 / pi) / erfcx(-z / sqrt 2), exact for every z
        sd, z = self._z(mean, var, state)
        sd, z = float(sd), float(z)
        r = math.sqrt(2.0 / math.pi) / float(special.erfcx(-z / math.sqrt(2.0)))
        d_var = -z * r / sd / (2.0 * sd) if var > _VAR_FLOOR else 0.0
        return float(special.log_ndtr(z)), r / sd, d_var


#: The proposals a :class:`Portfolio` draws a member for (its ``turns``).
PORTFOLIO_TURNS = ("all", "local")


class Portfolio(Acquisition):
    """One of log-EI, log-PI and UCB per proposal, drawn uniformly: a random portfolio of
    the single-objective ends of the Pareto front that HEBO's MACE acquisition searches
    (Cowen-Rivers et al. 2022). It is not MACE, which proposes a random point of the whole
    front of EI, PI and UCB (found by an evolutionary search, its posterior means perturbed
    by the fitted noise), mostly compromises between them.

    Each proposal's optimizer calls :meth:`draw` with its generator, the number of told
    points ``t`` and of parameters ``d`` before it maximises; the UCB member's width is
    HEBO's, ``kappa = sqrt(2 upsilon ((2 + d / 2) ln t + ln(pi^2 / delta)))``. With the
    fitted surrogate, which standardises the rewards, that width means the same in any units
    of the rewards.

    Parameters
    ----------
    incumbent : {"observed", "mean", "auto"}, default="auto"
        The incumbent of log-EI and log-PI, as in :class:`ExpectedImprovement`.
    upsilon : float, default=0.5
        HEBO's ``upsi`` in the UCB width.
    delta : float, default=0.01
        HEBO's ``delta`` in the UCB width.
    turns : {"all", "local"}, default="all"
        The proposals that draw a member: ``"all"`` the optimizer's every maximisation of the
        acquisition; ``"local"`` only the trust region's turns (``local_share``), the others
        maximising log-EI (the first member) without drawing.
    """

    name = "portfolio"

    def __init__(
        self,
        incumbent: str = "auto",
        upsilon: float = 0.5,
        delta: float = 0.01,
        turns: str = "all",
    ) -> None:
        self.incumbent = _check_incumbent(incumbent)
        self.upsilon = check_float("upsilon", upsilon, low=0.0)
        self.delta = check_float("delta", delta, low=0.0, high=1.0, closed_high=False)
        if turns not in PORTFOLIO_TURNS:
            raise ValueError(f"turns must be one of {PORTFOLIO_TURNS}, got {turns!r}.")
        self.turns = turns
        self._ucb = UCB(width=0.0)
        self.members: tuple[Acquisition, ...] = (
            LogExpectedImprovement(incumbent=self.incumbent),
            LogProbabilityOfImprovement(incumbent=self.incumbent),
            self._ucb,
        )
        self.member: Acquisition = self.members[0]

    def width(self, t: int, dim: int) -> float:
        """HEBO's UCB width after ``t`` told points on ``dim`` parameters."""
        log_t = math.log(max(int(t), 1))
        return math.sqrt(
            2.0 * self.upsilon * ((2.0 + dim / 2.0) * log_t + math.log(math.pi**2 / self.delta))
        )

    def draw(
        self, rng: np.random.Generator, t: int, dim: int, *, local: bool = True
    ) -> Acquisition:
        """Pick the member of the next proposal uniformly with ``rng`` and return it; with
        ``turns="local"`` and a proposal outside the trust region (``local`` false), log-EI,
        ``rng`` untouched."""
        if self.turns == "local" and not local:
            self.member = self.members[0]
            return self.member
        self._ucb.width = self.width(t, dim)
        self.member = self.members[int(rng.integers(len(self.members)))]
        return self.member

    def __call__(self, mean, var, state):
        return self.member(mean, var, state)

    def derivatives(self, mean, var, state):
        return self.member.derivatives(mean, var, state)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(incumbent={self.incumbent!r}, upsilon={self.upsilon!r}, "
            f"delta={self.delta!r}, turns={self.turns!r})"
        )


#: The acquisitions an optimizer takes by name (any :class:`Acquisition` instance is taken too).
ACQUISITIONS: dict[str, Callable[[], Acquisition]] = {
    "ucb": UCB,
    "logei": LogExpectedImprovement,
    "portfolio": Portfolio,
}


def make_acquisition(acquisition: str | Acquisition) -> Acquisition:
    """An :class:`Acquisition` from a name of :data:`ACQUISITIONS` or an instance."""
    if isinstance(acquisition, Acquisition):
        return acquisition
    if isinstance(acquisition, str) and acquisition in ACQUISITIONS:
        return ACQUISITIONS[acquisition]()
    raise ValueError(
        f"acquisition must be one of {sorted(ACQUISITIONS)} or a privtune.acquisition."
        f"Acquisition instance (e.g. ExpectedImprovement()), got {acquisition!r}."
    )


def log_h(z: np.ndarray) -> np.ndarray:
    """``ln h(z)`` with ``h(z) = phi(z) + z Phi(z)``, the expected improvement of a unit normal
    over ``-z``, computed without underflow for very negative ``z`` (Ament et al. 2023, "Unexpected
    improvements to expected improvement"): ``h = phi(z) (1 + z Phi(z) / phi(z))``."""
    z = np.asarray(z, dtype=float)
    log_phi = -0.5 * z * z - 0.5 * math.log(2.0 * math.pi)
    out = np.empty_like(z)
    big = z > -1.0
    zb = z[big]
    out[big] = np.log(np.exp(log_phi[big]) + zb * special.ndtr(zb))
    zs = z[~big]
    mid = zs > -1e8
    zm = zs[mid]
    # Phi(z) / phi(z) = sqrt(pi/2) erfcx(-z/sqrt 2), about -1/z: exact to double precision
    # where the difference of ln Phi and ln phi (both about -z^2/2) would cancel
    ratio = math.sqrt(0.5 * math.pi) * special.erfcx(-zm / math.sqrt(2.0))
    small = log_phi[~big]
    small[mid] += np.log(np.maximum(1.0 + zm * ratio, 1e-300))
    # beyond -1e8, 1 + z Phi/phi = 1/z^2 (1 + O(1/z^2)) to double precision
    small[~mid] -= 2.0 * np.log(-zs[~mid])
    out[~big] = small
    return out


def log_expected_improvement(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    """``ln EI`` of a normal posterior over the incumbent value ``best``:
    ``ln std + ln h((mean - best) / std)``, with ``std`` floored at ``1e-12``."""
    std = np.maximum(np.asarray(std, dtype=float), 1e-12)
    return np.log(std) + log_h((np.asarray(mean, dtype=float) - best) / std)


BASELINE_LEVEL = 0.95
"""The posterior probability with which the baseline is kept against all its competitors
together: each of ``m`` competitors must beat it with probability ``1 - 0.05 / m``
(:func:`baseline_level`)."""


def baseline_level(m: float, family_level: float = BASELINE_LEVEL) -> float:
    """The probability one of ``m`` competitors needs to replace the baseline:
    ``1 - (1 - family_level) / m``, Bonferroni's correction.

    The recommendation tests the configuration with the best posterior mean, the maximum of
    ``m`` candidates, so a level meant for one comparison is spent ``m`` times: with privacy
    at a per-report epsilon of 1 (noise far above the scores' spread), a level of 0.95 per
    comparison let 16 of 60 studies replace the untuned estimator with a worse configuration
    and none with a better one; with the correction, 1 (benchmarks page, "Tuning quality with
    Optuna")."""
    return 1.0 - (1.0 - family_level) / max(float(m), 1.0)


def recommend_index(
    mean: np.ndarray,
    *,
    tiebreak: np.ndarray | None = None,
    eligible: np.ndarray | None = None,
    baseline: int | None = None,
    prob_better: np.ndarray | None = None,
    level: float | None = None,
) -> int:
    """The recommendation rule: the evaluated configuration with the best posterior mean,
    kept to the baseline unless something beats it with probability ``level``.

    Every recommendation in privtune (an optimizer's ``recommend``, the Optuna sampler's
    ``recommend``, the search's ``best_params_`` with privacy, the federated search's
    ``recommended_params_``) is this rule over the evaluated configurations. Under noise the
    best *observed* value is mostly the luckiest draw; the posterior mean pools every
    observation, and computed from released values it is post-processing.

    With a ``baseline`` (the configuration a user would run anyway, e.g. the estimator's
    defaults, evaluated like the others), only the baseline and the configurations whose
    posterior probability of scoring above it, ``prob_better``, is at least ``level`` compete:
    under heavy noise the best posterior mean alone is often a configuration worse than the
    defaults, and keeping the defaults unless the evidence says otherwise is what a careful
    user does by hand (the benchmarks page measures both rules).

    Parameters
    ----------
    mean : ndarray of shape (n,)
        The posterior mean at each evaluated configuration.
    tiebreak : ndarray of shape (n,), optional
        Breaks ties of the mean (within ``1e-12`` relative), e.g. the told rewards while a model
        is still flat; remaining ties go to the first index.
    eligible : ndarray of bool of shape (n,), optional
        Configurations that may be picked (e.g. not a failed one); default all.
    baseline : int, optional
        Index of the baseline configuration; it must be eligible with a finite mean.
    prob_better : ndarray of shape (n,), optional
        ``P(f_i > f_baseline)`` under the posterior; required with ``baseline``.
    level : float, optional
        The probability, in (0, 1), a configuration needs to replace the baseline; default
        :func:`baseline_level` of the number of competitors (the eligible configurations
        other than the baseline, one per distinct posterior mean: a configuration told
        several times counts once).

    Returns
    -------
    int
    """
    mean = np.asarray(mean, dtype=float)
    ok = np.isfinite(mean) if eligible is None else np.isfinite(mean) & np.asarray(eligible)
    if not ok.any():
        raise ValueError("no eligible configuration with a finite posterior mean to recommend.")
    if baseline is not None:
        if not 0 <= baseline < mean.size or not ok[baseline]:
            raise ValueError(
                f"baseline must index an eligible configuration with a finite posterior mean; "
                f"got {baseline} of {mean.size}."
            )
        if prob_better is None or np.shape(prob_better) != mean.shape:
            raise ValueError("baseline needs prob_better, one probability per configuration.")
        if level is None:
            rivals = ok.copy()
            rivals[baseline] = False
            level = baseline_level(np.unique(mean[rivals]).size)
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must lie in (0, 1); got {level!r}.")
        ok = ok & (np.asarray(prob_better, dtype=float) >= level)
        ok[baseline] = True
    idx = np.flatnonzero(ok)
    best = mean[idx].max()
    top = idx[mean[idx] >= best - 1e-12 * max(1.0, abs(best))]
    if tiebreak is not None and top.size > 1:
        return int(top[np.argmax(np.asarray(tiebreak, dtype=float)[top])])
    return int(top[0])


def argmax_random_tie(values: np.ndarray, rng: np.random.Generator, rtol: float = 1e-12) -> int:
    """Index of the largest value, ties broken uniformly at random.

    A deterministic tie-break (the first index) would make every algorithm start in a corner of
    the cube while the posterior is still flat.
    """
    values = np.asarray(values, dtype=float)
    best = np.max(values)
    tol = rtol * max(1.0, abs(best))
    ties = np.flatnonzero(values >= best - tol)
    return int(ties[0] if ties.size == 1 else rng.choice(ties))


#: Enumerate every configuration when a space without real parameters has at most this many.
MAX_EXHAUSTIVE = 4096
#: Passes per start: alternations of the continuous step and the coordinate search, or
#: coordinate sweeps alone in a space without real parameters (stopping when one gains nothing).
_PASSES = 3
#: The raw sampling schemes.
RAW_SAMPLING = ("uniform", "sobol")

#: How the acquisition optimiser picks its local searches' starts (:func:`maximize`).
START_RULES = ("top", "spread")


def raw_samples(rng: np.random.Generator, n: int, dim: int, scheme: str = "uniform") -> np.ndarray:
    """``n`` raw samples in ``[0, 1]^dim``: uniform, or a scrambled Sobol sequence seeded from
    ``rng`` (evenly spread: fewer of them leave a region unvisited)."""
    if scheme == "sobol":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "balance properties" for n not a power of two
            from scipy.stats import qmc  # here: scipy.stats takes a third of a second to import

            return qmc.Sobol(dim, scramble=True, seed=rng).random(n)
    return rng.random((n, dim))


def with_faces(raw: np.ndarray, rng: np.random.Generator, *, corners: bool = False) -> np.ndarray:
    """``raw`` and as many copies of it with each coordinate pushed to a face of the cube
    with probability 1/2: the faces and corners, where the best value of a size limit (or
    the degenerate region of a space) often ends. With ``corners``, a third copy has every
    coordinate pushed to its nearer face (a corner of the cube per row)."""
    faces = raw.copy()
    push = rng.random(faces.shape) < 0.5
    faces[push] = np.round(faces[push])
    if not corners:
        return np.vstack([raw, faces])
    return np.vstack([raw, faces, np.round(raw)])


def maximize(
    acq: Objective,
    dim: int,
    rng: np.random.Generator,
    *,
    candidates: np.ndarray | None = None,
    snap: Callable[[np.ndarray], np.ndarray] | None = None,
    layout: Sequence[Block] | None = None,
    raw_sampling: str = "uniform",
    n_raw: int = 512,
    n_restarts: int = 3,
    anchors: np.ndarray | None = None,
    maxiter: int = 50,
    batched_gradient: bool = False,
    value_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray] | None] | None = None,
    start_rule: str = "top",
    incumbents: np.ndarray | None = None,
    boundary: bool = False,
    box: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Return the maximiser of ``acq`` over the candidates, over ``[0, 1]^dim`` or over a box
    in it.

    Over the cube: ``n_raw`` raw samples (and the anchors), snapped, are evaluated; from each of
    the best ``n_restarts``, L-BFGS-B moves the real coordinates (the others fixed) and a
    coordinate search tries every value of each discrete and categorical block of ``layout``,
    alternating until neither improves (at most three times). A space with no real parameter
    and at most :data:`MAX_EXHAUSTIVE` configurations is enumerated instead. Every point
    compared is snapped, so the result is a valid encoding.

    Parameters
    ----------
    acq : callable
        Vectorised acquisition, ``(n, dim) -> (n,)``.
    dim : int
        Dimension of the cube.
    rng : numpy.random.Generator
        Source of raw samples and tie-breaks.
    candidates : ndarray of shape (n, dim), optional
        A finite decision set; the best row is returned (no continuous search).
    snap : callable, optional
        Projection of cube points onto valid encodings (vectorised, idempotent).
    layout : sequence of privtune.cube.Block, optional
        The parameters' blocks; default: every coordinate real.
    raw_sampling : {"uniform", "sobol"}, default="uniform"
        How the raw samples are drawn (:func:`raw_samples`).
    n_raw : int, default=512
        Number of raw samples.
    n_restarts : int, default=3
        Number of local searches from the best raw samples.
    anchors : ndarray of shape (k, dim), optional
        Extra raw samples, e.g. Gaussian perturbations of the best observed points, so that
        the search looks near the incumbent as well as everywhere.
    maxiter : int, default=50
        L-BFGS-B iterations per continuous step (a local search alternates at most three
        continuous and discrete steps).
    batched_gradient : bool, default=False
        Give L-BFGS-B a forward-difference gradient computed by one call of ``acq`` on the
        ``k + 1`` points ``x, x + h e_1, ..., x + h e_k`` over the ``k`` real coordinates (one
        vectorised call instead of ``k + 1`` single-point calls, for acquisitions whose
        per-call cost dominates).
    value_and_grad : callable, optional
        ``x -> (acq(x), gradient of acq at x over all dim coordinates)`` at one point of the
        cube, or ``None`` where it has none: L-BFGS-B then uses this analytic gradient, and the
        difference quotients of ``batched_gradient`` only where it returns ``None``.
    start_rule : {"top", "spread"}, default="top"
        The starts of the local searches: ``"top"``, the ``n_restarts`` best of the raw
        samples and anchors; ``"spread"``, Optuna's GPSampler's rule: the best raw sample,
        then draws without replacement with probability proportional to ``exp(acq - max
        acq)`` (the acquisition's values taken as logarithms), and the ``incumbents`` as they
        are, ``n_restarts`` in all (anchors are not used).
    incumbents : ndarray of shape (k, dim), optional
        Starts of the ``"spread"`` rule besides the raw samples (e.g. the best told point).
    boundary : bool, default=False
        Evaluate, besides the raw samples, their copies on the faces and corners of the cube
        (:func:`with_faces` with ``corners``): three times the raw samples, so that a
        maximiser on the boundary, far from every start, is compared too.
    box : tuple of two ndarrays of shape (dim,), optional
        ``(lower, upper)``, a box in the cube (a trust region) to search instead of the cube:
        the raw samples (and their faces) are drawn in it, L-BFGS-B is bounded by it, and the
        coordinate search and the enumeration keep to the values inside it.

    Returns
    -------
    ndarray of shape (dim,)
    """
    if candidates is not None:
        return np.array(candidates[argmax_random_tie(acq(candidates), rng)], dtype=float)
    if raw_sampling not in RAW_SAMPLING:
        raise ValueError(f"raw_sampling must be one of {RAW_SAMPLING}, got {raw_sampling!r}.")
    blocks = check_layout(layout, dim)
    finite = [b for b in blocks if b.kind != "real"]
    real = np.array([b.start for b in blocks if b.kind == "real"], dtype=int)
    lo, hi = (np.zeros(dim), np.ones(dim)) if box is None else _check_box(box, dim)
    within = None if box is None else (lo, hi)
    if not real.size and math.prod(b.n_values for b in finite) <= MAX_EXHAUSTIVE:
        grid = _enumerate(finite, dim)
        if snap is not None:  # one point per configuration (a union of spaces has fewer)
            grid = snap(grid)
            grid = unique_rows(grid)
        inside = None if box is None else _inside(grid, lo, hi)
        if inside is not None and inside.any():
            grid = grid[inside]
        return np.array(grid[argmax_random_tie(acq(grid), rng)], dtype=float)

    if start_rule not in START_RULES:
        raise ValueError(f"start_rule must be one of {START_RULES}, got {start_rule!r}.")
    raw = raw_samples(rng, n_raw, dim, raw_sampling)
    if boundary:
        raw = with_faces(raw, rng, corners=True)
    if box is not None:
        raw = lo + raw * (hi - lo)
    n_raw = raw.shape[0]
    if anchors is not None and len(anchors) and start_rule == "top":
        raw = np.vstack([raw, np.clip(anchors, lo, hi)])
    if snap is not None:
        raw = snap(raw)
    values = acq(raw)
    order = np.argsort(-values)
    best_x, best_v = raw[order[0]], float(values[order[0]])
    if start_rule == "spread":
        extra = np.zeros((0, dim)) if incumbents is None else np.asarray(incumbents, float)
        if extra.size:
            raw = np.vstack([raw, extra])
            values = np.append(values, acq(extra))
        order = _spread_starts(values[:n_raw], rng, max(n_restarts - len(extra), 1))
        order = np.append(order, np.arange(n_raw, n_raw + len(extra))).astype(int)
    for i in order[: max(n_restarts, 0)]:
        x, v = raw[i], float(values[i])
        if not math.isfinite(v):
            continue  # an excluded point (told or pending): no local search from it
        for _ in range(_PASSES):
            x_new, v_new = x, v
            if real.size:
                x_new, v_new = _continuous_step(
                    acq, x_new, real, snap, maxiter, batched_gradient, value_and_grad,
                    lo[real], hi[real],
                )  # fmt: skip
            if finite:
                x_new, v_new = _coordinate_step(acq, x_new, v_new, finite, within)
            improved = v_new > v + 1e-12 * max(1.0, abs(v))
            if v_new >= v:
                x, v = x_new, v_new
            if not (improved and finite):
                break  # real coordinates only: a second L-BFGS-B pass repeats the first
        if v > best_v:
            best_x, best_v = x, v
    return np.array(best_x, dtype=float)


def _spread_starts(values: np.ndarray, rng: np.random.Generator, k: int) -> np.ndarray:
    """The best row, then up to ``k - 1`` rows drawn without replacement with probability
    proportional to ``exp(values - max)`` (Optuna's GPSampler's roulette)."""
    finite = np.where(np.isfinite(values), values, -np.inf)
    best = int(np.argmax(finite))
    probs = np.exp(finite - finite[best])
    probs[best] = 0.0
    n_more = min(k - 1, int(np.count_nonzero(probs > 0.0)))
    if n_more <= 0:
        return np.array([best])
    more = rng.choice(values.size, size=n_more, replace=False, p=probs / probs.sum())
    return np.append(best, more)


def _block_values(b: Block, n: int) -> np.ndarray:
    """At most ``n`` encodings of block ``b``, one per row: ``n`` evenly spaced values of a
    real coordinate, its ends included; every value of a finite block, or ``n`` of them
    evenly spaced when it has more."""
    if b.kind == "real":
        return np.linspace(0.0, 1.0, n)[:, None]
    vals = b.values()
    if len(vals) > n:
        vals = vals[np.unique(np.round(np.linspace(0, len(vals) - 1, n)).astype(int))]
    return vals


def coordinate_moves(
    x: np.ndarray,
    layout: Sequence[Block],
    *,
    n_line: int = 65,
    n_pair: int = 9,
    pairs: bool = False,
) -> np.ndarray:
    """Points that differ from ``x`` in one parameter (and with ``pairs``, in two).

    Each parameter of ``layout`` takes ``n_line`` values (:func:`_block_values`) with the others
    kept at ``x``'s; with ``pairs``, each two parameters take the ``n_pair x n_pair`` grid of
    their values. The candidates of a local probe around an incumbent: on a ridge the better
    configurations are often a step or two away along the parameters, where a stationary
    model's variance is small and a search over the whole cube seldom looks.

    Parameters
    ----------
    x : ndarray of shape (dim,)
        The centre, a valid encoding.
    layout : sequence of privtune.cube.Block
        The parameters' blocks of coordinates.
    n_line, n_pair : int
        Values per parameter moved alone, and per parameter of a moved pair.
    pairs : bool, default=False
        Also move every two parameters together.

    Returns
    -------
    ndarray of shape (n, dim)
        The moved points (``x`` itself may be among them).
    """
    x = np.asarray(x, dtype=float)
    rows = []
    for b in layout:
        vals = _block_values(b, n_line)
        moved = np.repeat(x[None, :], len(vals), axis=0)
        moved[:, b.slice] = vals
        rows.append(moved)
    if pairs:
        for i, a in enumerate(layout):
            for b in layout[i + 1 :]:
                va, vb = _block_values(a, n_pair), _block_values(b, n_pair)
                moved = np.repeat(x[None, :], len(va) * len(vb), axis=0)
                moved[:, a.slice] = np.repeat(va, len(vb), axis=0)
                moved[:, b.slice] = np.tile(vb, (len(va), 1))
                rows.append(moved)
    return np.vstack(rows)


def _enumerate(finite: Sequence[Block], dim: int) -> np.ndarray:
    """Every combination of the blocks' values (the blocks tile the cube)."""
    grid = np.zeros((1, dim))
    for b in finite:
        vals = b.values()
        rows = np.repeat(grid, len(vals), axis=0)
        rows[:, b.slice] = np.tile(vals, (grid.shape[0], 1))
        grid = rows
    return grid


def unique_rows(X: np.ndarray) -> np.ndarray:
    """The rows of ``X`` without repeats, in the order of their first appearance."""
    return X[np.sort(np.unique(X, axis=0, return_index=True)[1])]


def _check_box(box, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """``box`` as two arrays of shape ``(dim,)``, ``0 <= lower <= upper <= 1``."""
    lo, hi = (np.asarray(b, dtype=float).reshape(-1) for b in box)
    if (
        lo.shape != (dim,)
        or hi.shape != (dim,)
        or not (np.all(lo >= 0.0) and np.all(lo <= hi) and np.all(hi <= 1.0))
    ):
        raise ValueError(f"box must be (lower, upper) of {dim} values, 0 <= lower <= upper <= 1.")
    return lo, hi


def _inside(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Which rows of ``X`` lie in the box ``[lo, hi]`` (a boolean mask)."""
    return np.all((X >= lo - 1e-12) & (X <= hi + 1e-12), axis=1)


def _continuous_step(
    acq, x, real, snap, maxiter, batched_gradient, value_and_grad=None, lo=None, hi=None
):
    """L-BFGS-B over the real coordinates ``real`` of ``x``, the others fixed, within
    ``[lo, hi]`` (the real coordinates' bounds; default the cube's)."""
    lo = np.zeros(len(real)) if lo is None else lo
    hi = np.ones(len(real)) if hi is None else hi
    base = np.array(x, dtype=float)

    def full(u: np.ndarray) -> np.ndarray:
        out = np.repeat(base[None, :], u.shape[0], axis=0)
        out[:, real] = u
        return out

    def neg(u: np.ndarray) -> float:
        return -float(acq(full(u[None, :]))[0])

    h = 1e-6

    def neg_and_grad(u: np.ndarray) -> tuple[float, np.ndarray]:
        # step inwards at the upper bound, so every evaluated point stays in the box
        steps = np.where(u + h <= hi, h, -h)
        v = -acq(full(np.vstack([u, u + np.diag(steps)])))
        return float(v[0]), (v[1:] - v[0]) / steps

    def neg_and_analytic(u: np.ndarray) -> tuple[float, np.ndarray]:
        out = value_and_grad(full(u[None, :])[0])
        if out is None:
            return neg_and_grad(u)
        return -float(out[0]), -np.asarray(out[1], dtype=float)[real]

    if value_and_grad is not None:
        fun, jac = neg_and_analytic, True
    else:
        fun, jac = (neg_and_grad, True) if batched_gradient else (neg, None)
    res = optimize.minimize(
        fun,
        base[real],
        jac=jac,
        method="L-BFGS-B",
        bounds=list(zip(lo, hi, strict=True)),
        options={"maxiter": maxiter},
    )
    out = full(np.clip(res.x, lo, hi)[None, :])
    if snap is not None:
        out = snap(out)
    return out[0], float(acq(out)[0])


def _coordinate_step(acq, x, v, finite, box=None):
    """One sweep over the discrete and categorical blocks: each set to its best value (of
    those inside ``box``'s ``(lower, upper)`` when given)."""
    x = np.array(x, dtype=float)
    for b in finite:
        vals = b.values()
        if box is not None:
            vals = vals[_inside(vals, box[0][b.slice], box[1][b.slice])]
            if not len(vals):
                continue
        trial = np.repeat(x[None, :], len(vals), axis=0)
        trial[:, b.slice] = vals
        a = acq(trial)
        j = int(np.argmax(a))
        if a[j] > v:
            x, v = trial[j], float(a[j])
    return x, v
