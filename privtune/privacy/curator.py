"""The curators: what a data owner's process releases in place of a raw score.

:class:`LaplaceCurator` is Curator 1 of Zhou & Tan (2021), Convert-to-Laplace, CTL(epsilon).

On receiving a score ``y``, the curator returns ``y_bar = clip(y, lo, hi) + L`` with
``L ~ Laplace(scale)`` and ``scale = (hi - lo) / epsilon``. In the paper's notation the rewards
lie in ``[-(B + R), B + R]`` and the scale is ``2 (B + R) / epsilon``: the same formula with
``hi - lo = 2 (B + R)``. The clip is what makes the declared range a real bound, so the
guarantee (epsilon-LDP for each report, Lemma 1 of the paper) holds whatever the score.

Floating-point caveat: textbook Laplace sampling in double precision (numpy's) leaks through
the low bits of the output (Mironov 2012); its guarantee holds for the idealised real-valued
mechanism. By default an unseeded release goes through OpenDP's vetted sampler when OpenDP is
installed, and a seeded one (an experiment) through numpy's (:mod:`privtune.privacy.noise`).

:class:`GaussianCurator` is the client's release of local joint DP (Dubey 2021, Alg. 3) when
the played point is public, as in hyperparameter tuning: ``clip(y, lo, hi) + N(0, s^2)``; the
same caveat, and the same choice of sampler, hold for its Gaussian sampling.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from .._checks import check_seed
from .composition import BudgetMeter
from .errors import BudgetExhaustedError, PrivacyError
from .errors import check_epsilon as _check_epsilon
from .errors import check_gaussian as _check_gaussian
from .errors import check_value_range as _check_value_range
from .ledger import PrivacyLedger, gaussian_event, laplace_event
from .noise import get_noise_sampler, opendp_release, resolve
from .receipts import Receipt, digest
from .units import PrivacyUnit
from .withhold import clean

__all__ = ["BudgetExhaustedError", "GaussianCurator", "LaplaceCurator", "PrivacyError"]


class _Curator:
    """What both curators share: the declared range, the clip, the noise's generator, the
    ledger, the release ``clip(y, lo, hi) + noise`` and its receipt; a subclass gives
    ``_noise`` and ``event``."""

    def __init__(
        self,
        value_range: tuple[float, float],
        seed: int | np.random.Generator | None,
        ledger: PrivacyLedger | None,
        unit: PrivacyUnit | None = None,
    ) -> None:
        self.value_range = _check_value_range(value_range)
        if unit is not None and not isinstance(unit, PrivacyUnit):
            raise TypeError(f"unit must be a PrivacyUnit, got {type(unit).__name__}.")
        #: Whom a release protects: the whole score (default) or each validation record.
        self.unit = PrivacyUnit.score() if unit is None else unit
        seed = check_seed("seed", seed, generator=True)
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.ledger = PrivacyLedger() if ledger is None else ledger
        #: Counts the releases against a total budget; ``None``: no limit.
        self.meter: BudgetMeter | None = None
        #: The noise's sampler setting, fixed at construction (:mod:`privtune.privacy.noise`).
        self.sampler = get_noise_sampler()
        self._seeded = seed is not None
        self._opendp: Callable[[np.ndarray], np.ndarray] | None = None
        self._lock = threading.Lock()

    @property
    def sensitivity(self) -> float:
        """Largest change of one report's input between neighbours: ``hi - lo`` for the score
        unit, ``(hi - lo) / n_val`` for the record unit (:mod:`privtune.privacy.units`)."""
        return self.unit.sensitivity(self.value_range)

    def privatize(self, y, owner: str = "default", *, rng: np.random.Generator | None = None):
        """Return the privatized score(s) ``clip(y, lo, hi) + noise`` (the class's mechanism).

        Each element of ``y`` is one report and is recorded in the ledger.

        Parameters
        ----------
        y : float or array_like
            Raw score(s). Must be finite: a failed evaluation has no score to protect and
            should be handled before the curator (Optuna marks the trial failed;
            scikit-learn's ``error_score``).
        owner : str, default="default"
            The data owner the score is about (epsilons compose per owner).
        rng : numpy.random.Generator, optional
            Generator to draw this report's noise from instead of the curator's own (an adapter
            that derives one generator per trial, for reproducible experiments).

        Returns
        -------
        float or ndarray
            Same shape as ``y``.
        """
        try:
            arr = np.asarray(y, dtype=float)
        except (TypeError, ValueError, OverflowError):
            arr = None  # raised below, outside the handler: numpy's error quotes the value
        if arr is None:
            raise clean(
                TypeError(
                    "privatize needs numbers (a float or an array of floats), got a "
                    f"{type(y).__name__}."
                )
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(
                "privatize received a non-finite score (NaN or infinite). The curator only "
                "releases finite scores: treat the evaluation as failed instead of reporting it."
            )
        lo, hi = self.value_range
        clipped = np.clip(arr, lo, hi)
        # Clipping is silent: whether a score left the range is a fact about the raw score,
        # which nothing outside the mechanism may reveal (no warning, log line or error).
        use = resolve(self.sampler, seeded=self._seeded or rng is not None)
        if self.meter is not None and arr.size:
            self.meter.claim(arr.size)  # before any noise: a refused report releases nothing
        with self._lock:
            if use == "opendp":
                out = self._opendp_release()(clipped)
            else:
                out = clipped + self._noise(self.rng if rng is None else rng, arr.shape)
        if arr.size:
            self.ledger.record_event(
                self.event, self.epsilon, self.delta, owner=owner, count=arr.size
            )
        return float(out) if out.ndim == 0 else out

    def release(
        self, y: float, owner: str = "default", *, rng: np.random.Generator | None = None
    ) -> tuple[float, Receipt]:
        """Privatize one score and return it with its :class:`~privtune.privacy.Receipt`.

        Parameters
        ----------
        y : float
            The raw score (finite).
        owner : str, default="default"
        rng : numpy.random.Generator, optional
            As in :meth:`privatize`.

        Returns
        -------
        value : float
            The released score.
        receipt : Receipt
            The mechanism, the guarantee, the range and the value's digest.
        """
        value = float(self.privatize(float(y), owner, rng=rng))
        return value, self.receipt(value)

    def _opendp_release(self) -> Callable[[np.ndarray], np.ndarray]:
        if self._opendp is None:
            self._opendp = opendp_release(self._kind, self.scale)
        return self._opendp

    #: The noise's distribution, for OpenDP's measurement.
    _kind: str

    @property
    def scale(self) -> float:
        """The noise's scale (Laplace scale, or Gaussian standard deviation)."""
        raise NotImplementedError  # pragma: no cover - abstract

    @property
    def noise_variance(self) -> float:
        """The variance of one release's noise, in score units."""
        raise NotImplementedError  # pragma: no cover - abstract

    def receipt(self, value: float) -> Receipt:
        """The receipt this curator issues for the released ``value``."""
        return Receipt(
            self.event,
            self.epsilon,
            self.delta,
            self.value_range,
            digest(value),
            self.unit.to_data(),
        )

    #: The per-report delta (0 for pure epsilon-DP).
    delta: float = 0.0
    epsilon: float

    @property
    def event(self):
        """One release's mechanism as a dp-accounting event, at sensitivity 1."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - abstract


class LaplaceCurator(_Curator):
    """The Laplace curator CTL(epsilon): epsilon-LDP on every reported score.

    Privacy model (docs/privacy.md, row "epsilon-LDP on scores"): each score is protected on its
    own; only the party that computes it sees the raw value. What is *not* protected: the data
    the score was computed from is not made differentially private beyond what the released
    scores reveal, and epsilons compose over the reports about the same data owner (see
    :attr:`ledger`).

    Parameters
    ----------
    epsilon : float
        Privacy parameter of each report, ``epsilon > 0``.
    value_range : tuple of float
        The declared range ``(lo, hi)`` of a score; scores outside it are clipped, silently:
        a warning would tell which report was clipped, a fact about the raw score.
    seed : int, numpy.random.Generator or None, default=None
        Seed of the noise generator, for reproducible experiments.
    ledger : PrivacyLedger, optional
        Where releases are recorded; a new ledger by default.
    unit : PrivacyUnit, optional
        Whom a release protects (:mod:`privtune.privacy.units`): by default the whole score
        (sensitivity ``hi - lo``); ``PrivacyUnit.record(n_val)`` for a mean over ``n_val``
        validation records of a per-record value in ``value_range`` (sensitivity
        ``(hi - lo) / n_val``).

    Attributes
    ----------
    scale : float
        The Laplace scale ``sensitivity / epsilon``: ``(hi - lo) / epsilon`` for the score unit.
    ledger : PrivacyLedger
        Every release, with its epsilon.

    Examples
    --------
    >>> from privtune.privacy import LaplaceCurator
    >>> curator = LaplaceCurator(epsilon=1.0, value_range=(0.0, 1.0), seed=0)
    >>> curator.scale
    1.0
    >>> y_bar = curator.privatize(0.93)
    >>> curator.ledger.n_reports
    1
    """

    def __init__(
        self,
        epsilon: float,
        value_range: tuple[float, float],
        seed: int | np.random.Generator | None = None,
        ledger: PrivacyLedger | None = None,
        *,
        unit: PrivacyUnit | None = None,
    ) -> None:
        super().__init__(value_range, seed, ledger, unit)
        self.epsilon = _check_epsilon(epsilon)

    _kind = "laplace"

    @property
    def scale(self) -> float:
        """Laplace scale ``sensitivity / epsilon``."""
        return self.sensitivity / self.epsilon

    @property
    def event(self):
        """``LaplaceDpEvent(1 / epsilon)``: the mechanism at sensitivity 1."""
        return laplace_event(self.epsilon)

    @property
    def noise_variance(self) -> float:
        """``2 scale^2``, the Laplace noise's variance."""
        return 2.0 * self.scale**2

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.laplace(0.0, self.scale, size=shape)


class GaussianCurator(_Curator):
    """The Gaussian release of a score: ``clip(y, lo, hi) + N(0, (noise_multiplier (hi - lo))^2)``.

    Privacy model (docs/privacy.md, row "(alpha, beta)-local joint DP"): the client's part of
    Algorithm 3 of Dubey (2021) when the played point ``x`` is public. The client of Alg. 3
    sends ``y Phi(x) + n`` with ``n ~ N(0, sigma_u^2 I)``; with ``||Phi(x)|| = 1`` that message
    is ``(y + <Phi(x), n>) Phi(x)`` plus a component orthogonal to ``Phi(x)`` that does not
    depend on ``y``. So the client may release the scalar ``y + N(0, sigma_u^2)`` and leave the
    orthogonal part (and the noise ``N`` of ``Phi Phi^T``, which protects only ``x``) to the
    server: the server's statistics then have exactly Alg. 3's distribution, and everything it
    computes is post-processing of the client's release. Only the client sees the raw score.

    The guarantee recorded per report is the one the noise was calibrated for (``epsilon``,
    ``delta``: Lemma 5's ``(alpha, beta)``); the ledger also records the mechanism itself
    (a Gaussian of ``noise_multiplier``), so compositions are computed by dp-accounting.

    Parameters
    ----------
    noise_multiplier : float
        The noise's standard deviation per unit of sensitivity; the released noise has standard
        deviation ``noise_multiplier * (hi - lo)``.
    value_range : tuple of float
        The declared range ``(lo, hi)`` of a score; scores outside it are clipped, silently:
        a warning would tell which report was clipped, a fact about the raw score.
    epsilon, delta : float
        The per-report guarantee the noise was calibrated for (for the ledger's report).
    seed : int, numpy.random.Generator or None, default=None
        Seed of the noise generator, for reproducible experiments.
    ledger : PrivacyLedger, optional
        Where releases are recorded; a new ledger by default.

    Examples
    --------
    >>> from privtune.privacy import GaussianCurator
    >>> curator = GaussianCurator(2.0, (0.0, 1.0), epsilon=1.0, delta=0.1, seed=0)
    >>> curator.scale
    2.0
    >>> y_tilde = curator.privatize(0.93)
    >>> curator.ledger.n_reports
    1
    """

    def __init__(
        self,
        noise_multiplier: float,
        value_range: tuple[float, float],
        *,
        epsilon: float,
        delta: float,
        seed: int | np.random.Generator | None = None,
        ledger: PrivacyLedger | None = None,
    ) -> None:
        super().__init__(value_range, seed, ledger)
        self.noise_multiplier, self.delta = _check_gaussian(noise_multiplier, delta)
        self.epsilon = _check_epsilon(epsilon)

    _kind = "gaussian"

    @property
    def scale(self) -> float:
        """The noise's standard deviation, ``noise_multiplier * (hi - lo)``."""
        return self.noise_multiplier * self.sensitivity

    @property
    def event(self):
        """``GaussianDpEvent(noise_multiplier)``: the mechanism at sensitivity 1."""
        return gaussian_event(self.noise_multiplier)

    @property
    def noise_variance(self) -> float:
        """``scale^2``, the Gaussian noise's variance."""
        return self.scale**2

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.normal(0.0, self.scale, size=shape)
