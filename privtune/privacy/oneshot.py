"""One-shot private selection: choose among candidates fixed in advance, paying epsilon once.

**The setting.** Candidates ``c_0, ..., c_{k-1}`` (``c_0`` the untuned estimator) are fixed
before any validation record is read: drawn from the space with a seed, or proposed from records
the unit does not protect. Each is fitted on the training records and scored on the ``n_val``
validation records ``V``; its score ``q_i(V)`` is a mean of a per-record value in ``[lo, hi]``
(:mod:`privtune.records`). Replacing one record of ``V`` moves every ``q_i`` by at most
``Delta = (hi - lo) / n_val`` (the models never saw ``V``; only that record's term of each mean
changes): the score vector has L-infinity sensitivity ``Delta``. A failed candidate scores ``lo``,
the same for every ``V``.

**The mechanisms** (noise scale ``s = 2 Delta / epsilon``; the index of the largest noisy score
is published, nothing else):

- ``"permute-and-flip"`` (McKenna & Sheldon, NeurIPS 2020): ``argmax_i q_i + E_i``, ``E_i``
  exponential of scale ``s``, the same law as visiting the candidates in a random order and
  stopping at ``i`` with probability ``exp(-(max q - q_i) / s)`` (Ding et al., 2021). Never worse
  in expected score than the exponential mechanism, and often better.
- ``"exponential"`` (McSherry & Talwar 2007): ``argmax_i q_i + G_i``, ``G_i`` Gumbel of scale
  ``s``, so that ``P(i) = exp(q_i / s) / sum_j exp(q_j / s)``.

**Proof, in a few lines** (the exponential mechanism; permute-and-flip is Theorem 1 of McKenna &
Sheldon). For neighbours ``V, V'`` and every ``i``, ``|q_i(V) - q_i(V')| <= Delta``, so
``P(i | V) / P(i | V') = exp((q_i - q'_i) / s) * sum_j exp(q'_j / s) / sum_j exp(q_j / s)
<= exp(Delta / s) * exp(Delta / s) = exp(epsilon)``. Nothing else is published, so the choice
is epsilon-DP (delta = 0) for each validation record, whatever ``k`` is. The number ``k`` and the
candidates are fixed before ``V`` is read, so they reveal nothing about it. Publishing the pick's
score as well is a separate release (a Laplace one of the same sensitivity) and composes: the
two epsilons add.

**Sampling.** Without a noise seed and with OpenDP installed (the ``opendp`` extra), the choice
is OpenDP's ``make_noisy_max`` (``max_divergence`` for permute-and-flip, whose map OpenDP
proves to be ``2 Delta / s``; ``zero_concentrated_divergence`` for the Gumbel law, stated by
OpenDP as ``rho = epsilon^2 / 8``), which samples exactly on rationals with a secure generator;
its privacy map is checked against ``epsilon`` before any score is read. Otherwise numpy's
generator draws the noise (:mod:`privtune.privacy.noise` says when).

**Accounting.** dp-accounting has no event for these mechanisms. The choice is stated as pure
``(epsilon, 0)``; for composing it with other events, :attr:`OneShotChoice.event` is the
``ZCDpEvent`` it satisfies: ``rho = epsilon^2 / 8`` for the exponential mechanism (its bounded
range, Cesar & Rogers 2021), ``epsilon^2 / 2`` for permute-and-flip (any epsilon-DP
mechanism, Bun & Steinke 2016).

Examples
--------
>>> from privtune.privacy.oneshot import choice_shortfall, one_shot_choice
>>> choice = one_shot_choice([0.80, 0.86, 0.79], epsilon=1.0, sensitivity=1 / 1000,
...                          noise_seed=0)
>>> choice.index, choice.epsilon
(1, 1.0)
>>> round(100 * choice_shortfall(31, epsilon=1.0, sensitivity=1 / 500), 2)  # points
0.64
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, optimize

from .._checks import check_float, check_int, check_seed
from .noise import get_noise_sampler, opendp_noisy_max, resolve
from .seeds import report_generator

__all__ = [
    "DEFAULT_MECHANISM",
    "MECHANISMS",
    "UNTUNED_HEAD_START",
    "OneShotChoice",
    "check_mechanism",
    "choice_shortfall",
    "noise_scale",
    "one_shot_choice",
    "pick_probability",
    "pick_shortfall",
    "untuned_head_start",
]

#: The one-shot mechanisms.
MECHANISMS = ("permute-and-flip", "exponential")

#: The default: permute-and-flip (never worse in expectation; measured in the privacy-units
#: benchmark).
DEFAULT_MECHANISM = "permute-and-flip"

# the noise law of each mechanism's report-noisy-max form
_NOISE = {"permute-and-flip": "exponential", "exponential": "gumbel"}


def check_mechanism(mechanism: Any) -> str:
    """``mechanism`` if it is one of :data:`MECHANISMS`, else a ``ValueError`` naming them."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}.")
    return str(mechanism)


def noise_scale(epsilon: float, sensitivity: float) -> float:
    """The scale ``2 Delta / epsilon`` of the noise added to each candidate's score."""
    epsilon = check_float("epsilon", epsilon, low=0.0)
    sensitivity = check_float("sensitivity", sensitivity, low=0.0)
    return 2.0 * sensitivity / epsilon


@dataclass(frozen=True)
class OneShotChoice:
    """What :func:`one_shot_choice` publishes, and its guarantee.

    Attributes
    ----------
    index : int
        The chosen candidate's position.
    mechanism : str
    epsilon : float
        The choice's (pure) epsilon; its delta is 0.
    sensitivity : float
        The L-infinity sensitivity of the score vector (``(hi - lo) / n_val`` under the record
        unit).
    n_candidates : int
    sampler : str
        ``"opendp"`` or ``"numpy"``.
    """

    index: int
    mechanism: str
    epsilon: float
    sensitivity: float
    n_candidates: int
    sampler: str

    @property
    def event(self) -> Any:
        """The choice as dp-accounting's ``ZCDpEvent`` (see the module's accounting note)."""
        import dp_accounting

        factor = 8.0 if self.mechanism == "exponential" else 2.0
        return dp_accounting.ZCDpEvent(self.epsilon**2 / factor)


def one_shot_choice(
    scores: Sequence[float] | np.ndarray,
    *,
    epsilon: float,
    sensitivity: float,
    mechanism: str = DEFAULT_MECHANISM,
    maximize: bool = True,
    noise_seed: int | None = None,
    head_start: Sequence[float] | np.ndarray | None = None,
) -> OneShotChoice:
    """Choose one of ``scores`` privately, at a cost of ``epsilon`` whatever their number.

    Parameters
    ----------
    scores : sequence of float
        Every candidate's raw score, in the order fixed before the data were read; each finite
        (score a failed candidate as the worst end of the range).
    epsilon : float
        The choice's epsilon, ``> 0``.
    sensitivity : float
        How far one neighbouring change moves any score (``(hi - lo) / n_val`` under the
        record unit), ``> 0``.
    mechanism : {"permute-and-flip", "exponential"}, default="permute-and-flip"
    maximize : bool, default=True
    noise_seed : int, optional
        For reproducible experiments only (numpy's generator; OpenDP's cannot be seeded).
    head_start : sequence of float, optional
        A shift added to each candidate's score (toward the better end) before the choice,
        fixed before the data are read: it leaves the sensitivity, and so the guarantee, as
        it is (for the exponential mechanism, a base measure ``exp(head_start / s)``). The
        searches give the untuned estimator :func:`untuned_head_start`.

    Returns
    -------
    OneShotChoice
        The chosen index and the guarantee; no score leaves.
    """
    mechanism = check_mechanism(mechanism)
    scale = noise_scale(epsilon, sensitivity)
    q = np.asarray(scores, dtype=float).ravel()
    if q.size == 0:
        raise ValueError("scores must hold at least one candidate's score.")
    if not np.all(np.isfinite(q)):
        # the values are not quoted: they are raw scores
        raise ValueError(
            "scores must be finite: score a failed candidate as the worst end of the score's "
            "range (the same for every data set, so it costs nothing)."
        )
    if not maximize:
        q = -q
    if head_start is not None:
        shift = np.asarray(head_start, dtype=float).ravel()
        if shift.shape != q.shape or not np.all(np.isfinite(shift)):
            raise ValueError(
                f"head_start must hold one finite shift per candidate ({q.size}), got "
                f"{shift.size} values."
            )
        q = q + shift
    seeded = check_seed("noise_seed", noise_seed) is not None
    sampler = resolve(get_noise_sampler(), seeded)
    if sampler == "opendp":
        index = _opendp_choice(q, mechanism, scale, float(epsilon), float(sensitivity))
    else:
        rng = report_generator(noise_seed, "one-shot", 0) or np.random.default_rng()
        if mechanism == "permute-and-flip":
            noise = rng.exponential(scale, q.size)
        else:
            noise = rng.gumbel(0.0, scale, q.size)
        index = int(np.argmax(q + noise))
    return OneShotChoice(index, mechanism, float(epsilon), float(sensitivity), q.size, sampler)


def _opendp_choice(
    q: np.ndarray, mechanism: str, scale: float, epsilon: float, sensitivity: float
) -> int:
    """OpenDP's noisy max, its privacy map checked against ``epsilon`` before the scores are
    read (the scale nudged up where rounding would put the map a hair above it)."""
    if mechanism == "permute-and-flip":
        measure, bound = "max_divergence", epsilon
    else:
        measure, bound = "zero_concentrated_divergence", epsilon**2 / 8.0
    for _ in range(8):
        select, privacy_map = opendp_noisy_max(measure, scale)
        if privacy_map(sensitivity) <= bound:
            return select(q)
        scale = float(np.nextafter(scale, math.inf)) * (1.0 + 1e-12)
    raise RuntimeError(  # pragma: no cover - OpenDP's map is exact up to rounding
        f"OpenDP's privacy map of the {mechanism} choice exceeds epsilon={epsilon:g}."
    )


#: The untuned estimator's head start in a search's one-shot choice, in units of the noise's
#: scale times ``ln k``: 0, a candidate like the others (the privacy-units benchmark measures
#: what a head start buys and costs).
UNTUNED_HEAD_START = 0.0


def untuned_head_start(
    n_candidates: int, *, epsilon: float, sensitivity: float, h: float = 1.5
) -> float:
    """The untuned estimator's head start among ``n_candidates`` (itself included):
    ``h s ln k`` with ``s = 2 Delta / epsilon`` the noise's scale.

    For the exponential mechanism it is a base measure that gives the untuned estimator
    ``k^h`` times each other candidate's weight (``h = 1``: about as much as all of them
    together); for permute-and-flip the same shift. It is fixed before the data are read, so the
    guarantee is unchanged, and it shrinks as ``n_val epsilon`` grows: with ``h = 1.5``, 2.0
    accuracy points for 31 candidates at epsilon 1 and 500 validation records, 0.2 at 5,000.

    Parameters
    ----------
    n_candidates : int
    epsilon : float
    sensitivity : float
    h : float, default=1.5
        ``>= 0``.

    Returns
    -------
    float
        In score units.
    """
    k = check_int("n_candidates", n_candidates)
    h = check_float("h", h, low=0.0, closed_low=True)
    return h * noise_scale(epsilon, sensitivity) * math.log(k)


def pick_probability(
    lead: float,
    n_candidates: int,
    *,
    noise: str,
    scale: float,
) -> float:
    """The probability that the argmax of noisy scores picks a candidate whose score leads
    every other (tied) candidate's by ``lead``.

    Parameters
    ----------
    lead : float
        The best candidate's lead, ``>= 0``, in score units.
    n_candidates : int
        ``k >= 1``.
    noise : {"exponential", "gumbel", "laplace"}
        The noise added to each score: permute-and-flip's, the exponential mechanism's, or a
        Laplace release's (every score released).
    scale : float
        The noise's scale.

    Returns
    -------
    float
        ``P = integral f(x) F(x + lead)^(k - 1) dx`` with the noise's density ``f`` and
        distribution function ``F``: ``e^a / (e^a + k - 1)`` for Gumbel noise and
        ``(1 - (1 - e^-a)^k) / (k e^-a)`` for exponential noise (``a = lead / scale``).
    """
    k = check_int("n_candidates", n_candidates)
    lead = check_float("lead", lead, low=0.0, closed_low=True)
    scale = check_float("scale", scale, low=0.0)
    if k == 1:
        return 1.0
    a = lead / scale
    if noise == "gumbel":
        return float(1.0 / (1.0 + (k - 1) * math.exp(-min(a, 700.0))))
    if noise == "exponential":
        p = math.exp(-a)
        if p == 0.0:
            return 1.0
        # (1 - (1 - p)^k) / (k p), computed stably for small p
        return float(-math.expm1(k * math.log1p(-p)) / (k * p)) if p < 1.0 else 1.0 / k
    if noise == "laplace":

        def cdf(x: float) -> float:
            return 0.5 * math.exp(x) if x < 0 else 1.0 - 0.5 * math.exp(-x)

        def integrand(x: float) -> float:
            return 0.5 * math.exp(-abs(x)) * cdf(x + a) ** (k - 1)

        value, _ = integrate.quad(integrand, -60.0, 60.0, points=[0.0, -a], limit=200)
        return float(min(max(value, 0.0), 1.0))
    raise ValueError(f"noise must be 'exponential', 'gumbel' or 'laplace', got {noise!r}.")


def pick_shortfall(
    n_candidates: int, *, noise: str, scale: float, max_lead: float = math.inf
) -> float:
    """The most an argmax of noisy scores loses in expectation against the best candidate,
    over every common margin by which the other ``n_candidates - 1`` trail it.

    With the others tied at ``lead`` below the best, the expected loss is
    ``lead * (1 - pick_probability(lead))``: small when the lead is small (a wrong pick costs
    little) and when it is large (the best is found). Its maximum over the lead is the
    difference the mechanism resolves: candidates further apart than that are told apart,
    closer ones may be confused at a cost below it.

    Parameters
    ----------
    n_candidates : int
    noise : {"exponential", "gumbel", "laplace"}
    scale : float
    max_lead : float, optional
        The largest lead the scores allow (the width of their range): no pick loses more.

    Returns
    -------
    float
        In score units (0 for a single candidate).
    """
    k = check_int("n_candidates", n_candidates)
    scale = check_float("scale", scale, low=0.0)
    if k == 1:
        return 0.0
    if not max_lead > 0.0:  # NaN or <= 0
        raise ValueError(f"max_lead must be > 0, got {max_lead!r}.")
    top = min(10.0 + 2.0 * math.log(k), max_lead / scale)

    def negative_loss(a: float) -> float:
        return -a * (1.0 - pick_probability(a * scale, k, noise=noise, scale=scale))

    best = optimize.minimize_scalar(negative_loss, bounds=(0.0, top), method="bounded")
    return max(float(-best.fun), -negative_loss(top)) * scale


def choice_shortfall(
    n_candidates: int,
    *,
    epsilon: float,
    sensitivity: float,
    mechanism: str = DEFAULT_MECHANISM,
    max_lead: float = math.inf,
) -> float:
    """:func:`pick_shortfall` of a one-shot choice among ``n_candidates`` at ``epsilon``:
    the difference it resolves, in score units.

    Parameters
    ----------
    n_candidates : int
    epsilon : float
        The choice's epsilon.
    sensitivity : float
        ``(hi - lo) / n_val`` under the record unit.
    mechanism : {"permute-and-flip", "exponential"}
    max_lead : float, optional
        The width of the scores' range.

    Returns
    -------
    float
    """
    return pick_shortfall(
        n_candidates,
        noise=_NOISE[check_mechanism(mechanism)],
        scale=noise_scale(epsilon, sensitivity),
        max_lead=max_lead,
    )


@dataclass(frozen=True)
class OneShotPlan:
    """What a one-shot selection will spend, fixed before any score: the choice's epsilon
    and, when the pick's score is published, that release's.

    Build it with :meth:`from_args` from a user's ``epsilon`` or ``privacy_budget``.

    Attributes
    ----------
    mechanism : str
    epsilon_choice : float
    epsilon_score : float
        0 when no score is published.
    n_candidates : int
        The candidates drawn from the space (the untuned estimator aside).
    baseline : bool
        Whether the untuned estimator is candidate 0.
    head_start : float
        The untuned estimator's head start ``h`` (:func:`untuned_head_start`).
    """

    mechanism: str
    epsilon_choice: float
    epsilon_score: float
    n_candidates: int
    baseline: bool = True
    head_start: float = UNTUNED_HEAD_START

    @classmethod
    def from_args(
        cls,
        mechanism: str,
        epsilon: float | None,
        privacy_budget: Any,
        score_share: float,
        n_candidates: int,
        *,
        baseline: bool = True,
        head_start: float = UNTUNED_HEAD_START,
    ) -> OneShotPlan:
        """The plan of a total ``epsilon`` or ``privacy_budget=(epsilon, delta)`` (the choice
        is pure epsilon-DP: delta is not needed), of which ``score_share`` goes to publishing
        the pick's score."""
        from .errors import check_budget_pair

        if (epsilon is None) == (privacy_budget is None):
            raise ValueError(
                "A one-shot selection takes epsilon or privacy_budget=(epsilon, delta) (the "
                f"whole publication's), one of them; got epsilon={epsilon!r} and "
                f"privacy_budget={privacy_budget!r}."
            )
        if privacy_budget is not None:
            total, _ = check_budget_pair(privacy_budget)
        else:
            total = check_float("epsilon", epsilon, low=0.0)
        share = check_float(
            "score_share", score_share, low=0.0, high=1.0, closed_low=True, closed_high=False
        )
        return cls(
            check_mechanism(mechanism),
            total * (1.0 - share),
            total * share,
            check_int("n_iter", n_candidates, minimum=0 if baseline else 1),
            bool(baseline),
            check_float("untuned_head_start", head_start, low=0.0, closed_low=True),
        )

    @property
    def epsilon(self) -> float:
        """The whole publication's epsilon (delta 0): the choice's plus the score's."""
        return self.epsilon_choice + self.epsilon_score

    @property
    def n_choices(self) -> int:
        """How many candidates the choice is among (the untuned estimator included)."""
        return self.n_candidates + int(self.baseline)

    def shifts(self, sensitivity: float) -> np.ndarray:
        """Each candidate's head start: the untuned estimator's (candidate 0, when it is one)
        and 0 for the others."""
        shift = np.zeros(self.n_choices)
        if self.baseline:
            shift[0] = untuned_head_start(
                self.n_choices,
                epsilon=self.epsilon_choice,
                sensitivity=sensitivity,
                h=self.head_start,
            )
        return shift

    def shortfall(self, sensitivity: float, width: float = math.inf) -> float:
        """:func:`choice_shortfall` of this plan at ``sensitivity`` (scores of range
        ``width``)."""
        return choice_shortfall(
            self.n_choices,
            epsilon=self.epsilon_choice,
            sensitivity=sensitivity,
            mechanism=self.mechanism,
            max_lead=width,
        )

    def report(self, unit: Any, value_range: tuple[float, float], sampler: str | None) -> dict:
        """The privacy report of a run under ``unit`` (a :class:`PrivacyUnit`)."""
        out: dict[str, Any] = {
            "release": "best",
            "mechanism": self.mechanism,
            "n_candidates": self.n_candidates,
            "baseline": self.baseline,
            "epsilon_choice": self.epsilon_choice,
            "epsilon_score": self.epsilon_score,
            "epsilon": self.epsilon,
            "delta": 0.0,
            "accountant": "pure epsilon-DP (the choice's and the score's epsilons add)",
            "untuned_head_start": self.head_start,
            "sampler": sampler,
            "privacy_unit": unit.kind,
        }
        if unit.n_val is not None:
            out["n_val"] = unit.n_val
        width = value_range[1] - value_range[0]
        out["resolves"] = self.shortfall(unit.sensitivity(value_range), width)
        out["protects"] = unit.protects(self.epsilon, 0.0)
        return out
