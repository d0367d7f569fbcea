"""Maximise an acquisition function over the unit cube or over a finite candidate set.

Continuous maximisation follows the multi-start standard of BoTorch: evaluate many raw samples,
start L-BFGS-B from the best few, keep the best result. When a ``snap`` map is given (the search
space's ``snap``: cube point -> canonical encoding of its decoded params), every raw sample and
every L-BFGS-B result is snapped before it is compared, so the returned point always decodes to
valid params and re-encodes to itself.

Notation
--------
acq : callable, (n, d) -> (n,), the acquisition values (larger is better)
C   : (n, d) candidate points
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import optimize

__all__ = ["argmax_random_tie", "maximize"]

Acquisition = Callable[[np.ndarray], np.ndarray]


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


def maximize(
    acq: Acquisition,
    dim: int,
    rng: np.random.Generator,
    *,
    candidates: np.ndarray | None = None,
    snap: Callable[[np.ndarray], np.ndarray] | None = None,
    n_raw: int = 512,
    n_restarts: int = 3,
    anchors: np.ndarray | None = None,
    maxiter: int = 50,
    batched_gradient: bool = False,
) -> np.ndarray:
    """Return the maximiser of ``acq`` over the candidates or over ``[0, 1]^dim``.

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
    n_raw : int, default=512
        Number of uniform raw samples.
    n_restarts : int, default=3
        Number of L-BFGS-B starts from the best raw samples.
    anchors : ndarray of shape (k, dim), optional
        Extra raw samples, e.g. Gaussian perturbations of the best observed points, so that
        the search looks near the incumbent as well as everywhere.
    maxiter : int, default=50
        L-BFGS-B iterations per start.
    batched_gradient : bool, default=False
        Give L-BFGS-B a forward-difference gradient computed by one call of ``acq`` on the
        ``dim + 1`` points ``x, x + h e_1, ..., x + h e_dim`` (one vectorised call instead of
        ``dim + 1`` single-point calls, for acquisitions whose per-call cost dominates).

    Returns
    -------
    ndarray of shape (dim,)
    """
    if candidates is not None:
        return np.array(candidates[argmax_random_tie(acq(candidates), rng)], dtype=float)

    raw = rng.random((n_raw, dim))
    if anchors is not None and len(anchors):
        raw = np.vstack([raw, np.clip(anchors, 0.0, 1.0)])
    if snap is not None:
        raw = snap(raw)
    values = acq(raw)
    order = np.argsort(-values)
    best_x, best_v = raw[order[0]], float(values[order[0]])

    def neg(x: np.ndarray) -> float:
        return -float(acq(x[None, :])[0])

    h = 1e-6

    def neg_and_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
        # step inwards at the upper bound, so every evaluated point stays in the cube
        steps = np.where(x + h <= 1.0, h, -h)
        v = -acq(np.vstack([x, x + np.diag(steps)]))
        return float(v[0]), (v[1:] - v[0]) / steps

    bounds = [(0.0, 1.0)] * dim
    for i in order[: max(n_restarts, 0)]:
        if batched_gradient:
            fun, jac = neg_and_grad, True
        else:
            fun, jac = neg, None
        res = optimize.minimize(
            fun, raw[i], jac=jac, method="L-BFGS-B", bounds=bounds, options={"maxiter": maxiter}
        )
        x = np.clip(res.x, 0.0, 1.0)
        if snap is not None:
            x = snap(x[None, :])[0]
        v = float(acq(x[None, :])[0])
        if v > best_v:
            best_x, best_v = x, v
    return np.array(best_x, dtype=float)
