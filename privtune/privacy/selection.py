"""Private selection: publish only the best of a random number of candidates.

When the search runs next to the data and only the chosen configuration (and its score) is
published, releasing every score is more than needed. Liu & Talwar (2019) and Papernot &
Steinke (2022, "Hyperparameter tuning with Renyi differential privacy") run a private base
mechanism a *random* number of times ``K`` and publish only the best output; the randomness of
``K`` is what keeps the cost close to one run's instead of ``K`` runs'.

The base mechanism here is one candidate: a configuration drawn at random (independently of the
data), its raw score, and that score released inside the mechanism with Laplace noise of scale
``(hi - lo) / epsilon0`` after clipping to ``value_range`` (a failed evaluation counts as
``lo``, so that every run outputs a score). ``K`` follows the distribution the user picks, by its
mean and shape (Papernot & Steinke's truncated negative binomial ``D_{eta, gamma}``):

- ``"logarithmic"`` (shape 0): the cheapest in epsilon, the widest spread of ``K``;
- ``"geometric"`` (shape 1);
- a float ``eta > 0``: the truncated negative binomial of that shape;
- ``"poisson"``: ``K ~ Poisson(mean)``, which may be 0 (then nothing is selected).

Only the best candidate (by released score) and its released score are published; the other
candidates' scores stay inside. ``K`` itself is drawn before any score is computed and does not
depend on the data. The cost is accounted with dp-accounting's
``RepeatAndSelectDpEvent(LaplaceDpEvent(1 / epsilon0), mean, shape)`` and its RDP accountant
(the only accountant that composes it).

With fifty candidates on average and ``epsilon0 = 1`` at ``delta = 1e-6`` the selection costs
epsilon 2.0 (logarithmic), 3.0 (geometric) and 22.9 (Poisson), where releasing all fifty
scores costs 41.6 (PLD).

Examples
--------
>>> from privtune.privacy.selection import RepeatDistribution, selection_epsilon
>>> round(selection_epsilon(1.0, RepeatDistribution(50, "geometric"), 1e-6), 2)
3.01
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from .._checks import check_float, check_seed
from ..acquisition import baseline_level
from .composition import (
    SHAPES,
    RepeatDistribution,
    _name,
    check_base,
    selection_epsilon,
    selection_per_candidate_epsilon,
)
from .curator import LaplaceCurator
from .errors import check_budget_pair
from .errors import check_value_range as _check_value_range
from .noise import check_seedable
from .release import ScoreRelease, as_score
from .units import PrivacyUnit

__all__ = [
    "SHAPES",
    "PrivateSelection",
    "RepeatDistribution",
    "SelectionPlan",
    "Selector",
    "private_selection",
    "selection_epsilon",
    "selection_per_candidate_epsilon",
]


@dataclass(frozen=True)
class PrivateSelection:
    """What :func:`private_selection` publishes, and its cost.

    Attributes
    ----------
    best : object or None
        The selected candidate (``None`` when ``K = 0``, possible only with ``"poisson"``).
    score : float
        Its released score (NaN when nothing was selected).
    n_candidates : int
        ``K``, drawn before any score (it does not depend on the data).
    epsilon_per_candidate : float
    epsilon, delta : float
        The guarantee of the publication (dp-accounting's RDP bound at ``delta``).
    distribution : RepeatDistribution
    base : str
        What a candidate was (:class:`SelectionPlan`).
    """

    best: Any
    score: float
    n_candidates: int
    epsilon_per_candidate: float
    epsilon: float
    delta: float
    distribution: RepeatDistribution
    base: str = "laplace"

    @property
    def event(self) -> Any:
        """The publication as a dp-accounting event."""
        return self.distribution.event(self.epsilon_per_candidate, self.base)


@dataclass(frozen=True)
class SelectionPlan:
    """What a private selection will cost, fixed before any score: the distribution of the
    number of candidates, each candidate's epsilon and the delta the cost is stated at.

    Build it with :meth:`from_args` from a user's ``epsilon`` or ``privacy_budget``.

    Attributes
    ----------
    distribution : RepeatDistribution
    epsilon_per_candidate : float
    delta : float
    baseline : bool
        Whether a baseline is released beside the candidates (:class:`Selector`).
    base : {"laplace", "private"}
        What one candidate is (:data:`~privtune.privacy.composition.BASES`): a configuration
        drawn independently of the data and its score released with Laplace noise, or any
        ``epsilon_per_candidate``-DP mechanism, such as a differentially private model fitted
        at that epsilon on the training records and its score on the validation records
        released at it too (each record is in one of the two sets, so the candidate is
        ``epsilon_per_candidate``-DP for every record).
    """

    distribution: RepeatDistribution
    epsilon_per_candidate: float
    delta: float
    baseline: bool = False
    base: str = "laplace"

    @classmethod
    def from_args(
        cls,
        mean: float,
        distribution: str | float,
        epsilon: float | None,
        privacy_budget: Any,
        *,
        delta: float | None = None,
        baseline: bool = False,
        base: str = "laplace",
    ) -> SelectionPlan:
        """The plan of ``epsilon`` (each candidate's; the cost stated at ``delta``, default
        1e-6) or ``privacy_budget`` (the whole publication's ``(epsilon, delta)``), one."""
        dist = RepeatDistribution(mean, distribution)
        check_base(base)
        if (epsilon is None) == (privacy_budget is None):
            raise ValueError(
                "Private selection takes epsilon (each candidate's) or privacy_budget=(epsilon, "
                f"delta) (the whole publication's), one of them; got epsilon={epsilon!r} and "
                f"privacy_budget={privacy_budget!r}."
            )
        if privacy_budget is not None:
            if delta is not None:
                raise ValueError("delta is part of privacy_budget=(epsilon, delta); pass it there.")
            total, delta = check_budget_pair(privacy_budget, delta_positive=True)
            epsilon0 = selection_per_candidate_epsilon(
                total, delta, dist, baseline=baseline, base=base
            )
        else:
            epsilon0 = check_float("epsilon", epsilon, low=0.0)
            delta = 1e-6 if delta is None else delta
        delta = check_float("delta", delta, low=0.0, high=1.0, closed_high=False)
        return cls(dist, epsilon0, delta, bool(baseline), base)

    @property
    def epsilon(self) -> float:
        """The publication's epsilon at :attr:`delta` (dp-accounting's RDP accountant)."""
        return selection_epsilon(
            self.epsilon_per_candidate,
            self.distribution,
            self.delta,
            baseline=self.baseline,
            base=self.base,
        )

    def report(self, unit: PrivacyUnit, n_candidates: int | None) -> dict[str, Any]:
        """The privacy report of a selection run under ``unit`` that drew ``n_candidates``."""
        epsilon = self.epsilon
        out: dict[str, Any] = {
            "release": "best",
            "distribution": _name(self.distribution.shape),
            "mean_candidates": self.distribution.mean,
            "n_candidates": n_candidates,
            "epsilon_per_candidate": self.epsilon_per_candidate,
            "candidate": self.base,
            "baseline": self.baseline,
            "epsilon": epsilon,
            "delta": self.delta,
            "accountant": "rdp",
            "privacy_unit": unit.kind,
        }
        if unit.n_val is not None:
            out["n_val"] = unit.n_val
        out["protects"] = unit.protects(epsilon, self.delta)
        return out


class Selector:
    """The inside of private selection: release each candidate's score, keep the best.

    Used by :func:`private_selection` and by :class:`privtune.PrivateBOSearchCV` with
    ``publish="best"``. Nothing but :meth:`best` leaves it.

    A baseline (:meth:`offer_baseline`, the untuned estimator) is released once beside the
    candidates, and :meth:`best` keeps it unless the best candidate's released score exceeds
    its released score by :attr:`margin`, the quantile of the difference of two independent
    noise draws at the recommendation's level for ``competitors`` comparisons
    (:func:`privtune.acquisition.baseline_level`, ``1 - 0.05 / competitors``). The best of
    ``K`` noisy scores is biased up; with that level, candidates whose true scores all equal
    the baseline's replace it at most one time in twenty (a union bound over ``K`` draws,
    whose mean is ``competitors``). Both releases are published only through that comparison,
    which is post-processing: the cost is the selection's composed with one release
    (:func:`~privtune.privacy.composition.selection_epsilon` with ``baseline=True``).

    Parameters
    ----------
    release : ScoreRelease
        The release path of each candidate's score, over a Laplace curator at each
        candidate's epsilon (:meth:`laplace` builds one).
    maximize : bool, default=True
    competitors : float, default=1.0
        How many candidates the baseline is expected to compete with: the mean of ``K``, a
        public number (``K`` itself is not, and nothing may depend on it but the output).
    """

    def __init__(
        self, release: ScoreRelease, *, maximize: bool = True, competitors: float = 1.0
    ) -> None:
        if not isinstance(release.curator, LaplaceCurator):
            raise TypeError("Selector releases through a Laplace curator.")
        self.curator: LaplaceCurator = release.curator
        self.competitors = check_float("competitors", competitors, low=1.0, closed_low=True)
        self._release = release
        self.maximize = bool(maximize)
        self._best: tuple[int, float] | None = None
        self._baseline: float | None = None
        self.n_offered = 0

    @classmethod
    def laplace(
        cls,
        epsilon0: float,
        value_range: tuple[float, float],
        *,
        maximize: bool = True,
        noise_seed: int | None = None,
        unit: PrivacyUnit | None = None,
        competitors: float = 1.0,
    ) -> Selector:
        """A selector whose candidates' scores are released at ``epsilon0`` each, clipped to
        ``value_range``, at ``unit``'s sensitivity (default: the whole score); with a
        ``noise_seed`` (experiments only), candidate ``i``'s noise comes from
        ``report_generator(noise_seed, "selection", i)`` (:mod:`privtune.privacy.seeds`)."""
        curator = LaplaceCurator(epsilon0, value_range, unit=unit)
        return cls(
            ScoreRelease(curator, noise_seed=noise_seed),
            maximize=maximize,
            competitors=competitors,
        )

    def offer(self, raw_score: float) -> None:
        """Release the next candidate's score inside; a non-finite score counts as the worst
        end of the range (so that every candidate outputs a score)."""
        lo, hi = self.curator.value_range
        worst = lo if self.maximize else hi
        y = as_score(raw_score, self.curator.value_range, "score")
        y = y if math.isfinite(y) else worst
        released, _ = self._release(y, owner="selection", number=self.n_offered)
        key = released if self.maximize else -released
        if self._best is None or key > (self._best[1] if self.maximize else -self._best[1]):
            self._best = (self.n_offered, released)
        self.n_offered += 1

    @property
    def leader(self) -> int | None:
        """The index of the candidate whose released score leads so far, the baseline aside
        (inside the data owner's process only: it depends on ``K``)."""
        return None if self._best is None else self._best[0]

    @property
    def margin(self) -> float:
        """How far above the baseline's released score a candidate's must be to replace it:
        ``u b``, with ``b`` the curator's scale and ``u`` the quantile of ``(L1 - L2) / b``
        at ``baseline_level(competitors)`` (3.27 for one competitor, 6.78 for 20)."""
        level = baseline_level(self.competitors)
        return laplace_difference_quantile(level) * self.curator.scale

    def offer_baseline(self, raw_score: float) -> None:
        """Release the baseline's score inside (once; a non-finite one counts as the worst
        end of the range)."""
        if self._baseline is not None:
            raise ValueError("the baseline was offered already.")
        lo, hi = self.curator.value_range
        worst = lo if self.maximize else hi
        y = as_score(raw_score, self.curator.value_range, "score")
        y = y if math.isfinite(y) else worst
        self._baseline, _ = self._release(y, owner="selection-baseline", number=0)

    def best(self) -> tuple[int | None, float]:
        """The index of the best candidate offered and its released score; ``-1`` for the
        baseline when no candidate beats it by :attr:`margin`."""
        if self._baseline is not None:
            sign = 1.0 if self.maximize else -1.0
            if self._best is None or sign * (self._best[1] - self._baseline) <= self.margin:
                return -1, self._baseline
        if self._best is None:
            return None, math.nan
        return self._best


def laplace_difference_quantile(level: float) -> float:
    """The ``level`` quantile of ``(L1 - L2) / b`` for two independent Laplace(b) draws.

    Parameters
    ----------
    level : float
        In [0.5, 1).

    Returns
    -------
    float
        ``u >= 0`` with ``P(L1 - L2 > u b) = e^-u (1 + u / 2) / 2 = 1 - level``.

    Examples
    --------
    >>> round(laplace_difference_quantile(0.95), 4)
    3.2718
    """
    level = check_float("level", level, low=0.5, high=1.0, closed_low=True, closed_high=False)

    def excess(u: float) -> float:
        return math.exp(-u) * (1.0 + u / 2.0) / 2.0 - (1.0 - level)

    return float(optimize.brentq(excess, 0.0, 800.0, xtol=1e-12))


def private_selection(
    score: Callable[[Any], float],
    sample: Callable[[np.random.Generator], Any],
    *,
    value_range: tuple[float, float],
    mean: float,
    distribution: str | float = "geometric",
    epsilon: float | None = None,
    privacy_budget: tuple[float, float] | None = None,
    delta: float | None = None,
    maximize: bool = True,
    seed: int | None = None,
    noise_seed: int | None = None,
    base: str = "laplace",
) -> PrivateSelection:
    """Select the best of a random number of random candidates; publish only that one.

    Draws ``K`` from ``distribution`` (mean ``mean``), then ``K`` candidates with
    ``sample(rng)``; scores each with ``score(candidate)``, releases it inside with Laplace
    noise of scale ``(hi - lo) / epsilon0`` (clipped to ``value_range``; a non-finite score
    counts as the range's worst end) and returns only the candidate with the best released
    score and that score (Liu & Talwar 2019; Papernot & Steinke 2022).

    Parameters
    ----------
    score : callable
        ``score(candidate) -> float``, the raw score (e.g. a cross-validated accuracy).
    sample : callable
        ``sample(rng) -> candidate``: a random candidate, independent of the data.
    value_range : tuple of float
        The range of a score.
    mean : float
        The mean number of candidates, ``>= 1``.
    distribution : {"logarithmic", "geometric", "poisson"} or float, default="geometric"
        The distribution of ``K`` (see :mod:`privtune.privacy.selection`).
    epsilon : float, optional
        Each candidate's epsilon; the publication then costs
        :func:`selection_epsilon` at ``delta``.
    privacy_budget : tuple of float, optional
        ``(epsilon, delta)`` for the whole publication instead: each candidate gets
        :func:`selection_per_candidate_epsilon`. One of ``epsilon`` and ``privacy_budget``.
    delta : float, optional
        With ``epsilon``: the delta the cost is stated at (default 1e-6).
    maximize : bool, default=True
    seed : int, optional
        Seed of ``K`` and of the candidates.
    noise_seed : int, optional
        Seed of the noise, for reproducible experiments only.
    base : {"laplace", "private"}, default="laplace"
        ``"private"``: each candidate is itself differentially private at the per-candidate
        epsilon in the records its score reads besides the released score (a model fitted
        at that epsilon on other records, say; :class:`SelectionPlan`), and the whole
        selection is accounted as a selection among such candidates. The caller reads the
        per-candidate epsilon from :meth:`SelectionPlan.from_args` first, to fit at it.

    Returns
    -------
    PrivateSelection

    Examples
    --------
    >>> from privtune.privacy import private_selection
    >>> out = private_selection(
    ...     lambda c: 1.0 - (c - 0.3) ** 2,
    ...     lambda rng: float(rng.random()),
    ...     value_range=(0.0, 1.0),
    ...     mean=20,
    ...     privacy_budget=(10.0, 1e-6),
    ...     seed=0,
    ...     noise_seed=0,
    ... )
    >>> out.epsilon <= 10.0
    True
    """
    if not callable(score) or not callable(sample):
        raise TypeError("score and sample must be callables.")
    value_range = _check_value_range(value_range)
    plan = SelectionPlan.from_args(
        mean, distribution, epsilon, privacy_budget, delta=delta, base=base
    )
    dist, epsilon0, delta = plan.distribution, plan.epsilon_per_candidate, plan.delta
    check_seedable("noise_seed", check_seed("noise_seed", noise_seed))
    rng = np.random.default_rng(check_seed("seed", seed))
    k = dist.draw(rng)  # before any score: K does not depend on the data
    candidates = [sample(rng) for _ in range(k)]
    selector = Selector.laplace(
        epsilon0, value_range, maximize=maximize, noise_seed=noise_seed, competitors=dist.mean
    )
    for c in candidates:
        selector.offer(score(c))
    index, released = selector.best()
    return PrivateSelection(
        best=None if index is None else candidates[index],
        score=released,
        n_candidates=k,
        epsilon_per_candidate=epsilon0,
        epsilon=plan.epsilon,
        delta=delta,
        distribution=dist,
        base=base,
    )
