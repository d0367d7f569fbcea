"""Which sampler draws the curators' noise: OpenDP's vetted samplers or numpy's.

Textbook floating-point sampling of the Laplace and Gaussian distributions is attackable:
Mironov (2012) showed that the low bits of ``x + Laplace(b)`` computed in double precision reveal
``x``; numpy's sampler has that weakness, and its guarantee holds for the idealised real-valued
mechanism. OpenDP's samplers (``opendp.measurements.make_laplace`` and ``make_gaussian``) draw
from the discrete Laplace and discrete Gaussian distributions on a grid finer than the output's
precision with a cryptographically secure generator, and add the noise without that leak
(Canonne, Kamath & Steinke 2020; OpenDP's proofs).

The samplers (:func:`set_noise_sampler`, read by every curator when it is built):

- ``"auto"`` (default): OpenDP's when OpenDP is installed (``pip install 'privtune[opendp]'``;
  the ``dev`` install has it) and the release is not seeded; numpy's otherwise. A noise seed
  (``noise_seed``, ``noise_random_state``) is for reproducible experiments, and only numpy's
  generator can be seeded;
- ``"opendp"``: always OpenDP's; a noise seed is refused;
- ``"numpy"``: always numpy's.

What it costs: a release through OpenDP took 0.44 ms against 0.05 ms with numpy (9 times,
one score per call, ``python -m benchmarks.noise_samplers``); a trial's cross-validation takes
seconds, so per trial the difference is negligible. The Gaussian noise of the qff algorithms'
tree mechanism (:class:`~privtune.privacy.TreeAggregation`) and of the federated server still
come from numpy.

OpenDP's library-wide switch ``enable_features("contrib")`` is turned on when the first OpenDP
release is built.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "NOISE_SAMPLERS",
    "check_seedable",
    "get_noise_sampler",
    "opendp_available",
    "opendp_noisy_max",
    "opendp_release",
    "resolve",
    "set_noise_sampler",
]

#: The samplers a curator can draw its noise with.
NOISE_SAMPLERS = ("auto", "numpy", "opendp")

_current = "auto"


def get_noise_sampler() -> str:
    """The sampler of the curators created from now on (``"auto"`` by default)."""
    return _current


@functools.lru_cache(maxsize=1)
def opendp_available() -> bool:
    """Whether OpenDP can be imported."""
    return importlib.util.find_spec("opendp") is not None


def resolve(sampler: str, seeded: bool) -> str:
    """The sampler a release uses: ``"numpy"`` or ``"opendp"``.

    Parameters
    ----------
    sampler : {"auto", "numpy", "opendp"}
        The curator's setting.
    seeded : bool
        Whether the release's noise is seeded (an experiment).
    """
    if sampler == "opendp":
        if seeded:
            raise ValueError(
                "A noise seed was given, but OpenDP's sampler cannot be seeded: pass no "
                "noise_seed (or noise_random_state) with set_noise_sampler('opendp'), or use "
                "numpy's sampler for a reproducible experiment."
            )
        return "opendp"
    if sampler == "auto" and not seeded and opendp_available():
        return "opendp"
    return "numpy"


def set_noise_sampler(name: str) -> str:
    """Choose the sampler of the curators created from now on; returns the previous one.

    Parameters
    ----------
    name : {"auto", "numpy", "opendp"}
        ``"opendp"`` needs the ``opendp`` extra.

    Returns
    -------
    str
    """
    global _current
    if name not in NOISE_SAMPLERS:
        raise ValueError(f"name must be one of {NOISE_SAMPLERS}, got {name!r}.")
    if name == "opendp":
        _import_opendp()
    previous, _current = _current, name
    return previous


def check_seedable(name: str, seed) -> None:
    """Refuse a noise seed ``name`` when the curators draw with OpenDP (it cannot be seeded)."""
    if seed is not None and _current == "opendp":
        raise ValueError(
            f"{name}={seed!r} seeds the privacy noise, but OpenDP's sampler cannot be seeded "
            "(set_noise_sampler('opendp')): pass no seed, or use numpy's sampler for a "
            "reproducible experiment."
        )


def _import_opendp():
    try:
        import opendp.prelude as dp
    except ImportError:
        raise ImportError(
            "The OpenDP noise sampler needs OpenDP: pip install 'privtune[opendp]'."
        ) from None
    dp.enable_features("contrib")
    return dp


def opendp_release(kind: str, scale: float) -> Callable[[np.ndarray], np.ndarray]:
    """OpenDP's measurement adding ``kind`` noise of ``scale`` to a vector of floats.

    Parameters
    ----------
    kind : {"laplace", "gaussian"}
    scale : float
        The Laplace scale, or the Gaussian standard deviation.

    Returns
    -------
    callable
        ``release(values) -> values + noise`` on a 1-D float array.
    """
    dp = _import_opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    if kind == "laplace":
        measurement = dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=float(scale))
    elif kind == "gaussian":
        measurement = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=float(scale))
    else:
        raise ValueError(f"kind must be 'laplace' or 'gaussian', got {kind!r}.")

    def release(values: np.ndarray) -> np.ndarray:
        flat = [float(v) for v in np.asarray(values, dtype=float).ravel()]
        return np.asarray(measurement(flat), dtype=float).reshape(np.shape(values))

    return release


def opendp_noisy_max(measure: str, scale: float) -> tuple[Callable[[np.ndarray], int], Any]:
    """OpenDP's ``make_noisy_max``: the index of the largest of a vector of floats, each with
    noise of ``scale`` added (OpenDP's exact samplers on rationals).

    Parameters
    ----------
    measure : {"max_divergence", "zero_concentrated_divergence"}
        ``"max_divergence"``: exponential noise (permute-and-flip), pure epsilon-DP;
        ``"zero_concentrated_divergence"``: Gumbel noise (the exponential mechanism), stated
        by OpenDP in rho-zCDP.
    scale : float
        The noise's scale.

    Returns
    -------
    (callable, callable)
        ``select(values) -> index`` and OpenDP's privacy map, ``map(d_in)`` for an L-infinity
        sensitivity ``d_in`` (epsilon, or rho for the zCDP measure).
    """
    dp = _import_opendp()
    if measure == "max_divergence":
        output = dp.max_divergence()
    elif measure == "zero_concentrated_divergence":
        output = dp.zero_concentrated_divergence()
    else:
        raise ValueError(
            f"measure must be 'max_divergence' or 'zero_concentrated_divergence', got {measure!r}."
        )
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    measurement = dp.m.make_noisy_max(domain, dp.linf_distance(T=float), output, scale=scale)

    def select(values: np.ndarray) -> int:
        return int(measurement([float(v) for v in np.asarray(values, dtype=float).ravel()]))

    return select, measurement.map
