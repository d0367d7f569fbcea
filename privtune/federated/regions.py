"""Sub-regions of the unit cube for distributed exploration (Dai et al. 2021, Sec. 3.2).

The cube ``[0, 1]^dim`` is cut into ``P`` hyper-rectangles of equal volume: ``P`` is factored
into primes and each prime factor splits, into equal slabs, the coordinate that has been split
least so far (the first such coordinate on ties). This gives the paper's sub-regions (App. B.1.1
and B.2.1): ``P = 2`` or ``3`` on ``[0, 1]`` gives halves or thirds, and ``P = 4`` in two or
three dimensions halves the first two coordinates, with the regions numbered as
``X_1 = [0, .5] x [0, .5]``, ``X_2 = [0, .5] x [.5, 1]``, ``X_3 = [.5, 1] x [0, .5]``,
``X_4 = [.5, 1] x [.5, 1]``. Slabs are half-open, ``[a, b)``, except the last, which contains 1.

Only coordinates marked ``splittable`` are cut. A search space's integer and categorical
coordinates must not be: a valid point is snapped to a cell centre or a one-hot vector, which
can leave the slab it was drawn in, or no slab may hold a valid encoding at all (a one-hot
coordinate cut in half). :class:`~privtune.federated.FederatedSearch` cuts only the coordinates
of real parameters.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int

__all__ = ["SubRegions"]


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    if n > 1:
        factors.append(n)
    return sorted(factors, reverse=True)


class SubRegions:
    """``P`` equal-volume hyper-rectangles partitioning ``[0, 1]^dim``.

    Parameters
    ----------
    dim : int
        Dimension of the cube, ``>= 1``.
    n_regions : int
        ``P``, the number of sub-regions, ``>= 1``. ``P = 1`` is the whole cube (no
        distributed exploration).
    splittable : array-like of bool, shape (dim,), optional
        The coordinates that may be cut; all by default.

    Attributes
    ----------
    splits : ndarray of int, shape (dim,)
        Number of equal slabs along each coordinate; their product is ``P``.

    Examples
    --------
    >>> regions = SubRegions(dim=2, n_regions=4)
    >>> regions.splits.tolist()
    [2, 2]
    >>> regions.bounds(1).tolist()
    [[0.0, 0.5], [0.5, 1.0]]
    >>> regions.index([[0.7, 0.2], [0.5, 0.5]]).tolist()
    [2, 3]
    """

    def __init__(self, dim: int, n_regions: int, splittable=None) -> None:
        self.dim = check_int("dim", dim)
        self.n_regions = check_int("n_regions", n_regions)
        mask = np.ones(self.dim, dtype=bool) if splittable is None else np.asarray(splittable)
        if mask.shape != (self.dim,) or mask.dtype != bool:
            raise ValueError(f"splittable must be {self.dim} booleans, got {splittable!r}.")
        if self.n_regions > 1 and not mask.any():
            raise ValueError(
                f"n_regions={self.n_regions} sub-regions need a coordinate to split, but none is "
                "splittable (a search space needs a real parameter); use n_regions=1."
            )
        splits = np.ones(self.dim, dtype=int)
        candidates = np.flatnonzero(mask)
        for factor in _prime_factors(self.n_regions):
            splits[candidates[int(np.argmin(splits[candidates]))]] *= factor
        self.splits = splits

    def index(self, X) -> np.ndarray:
        """The sub-region of each row of ``X``, an int in ``[0, P)``.

        Parameters
        ----------
        X : array-like of shape (n, dim) or (dim,)
            Points of the cube.

        Returns
        -------
        ndarray of int, shape (n,)
        """
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.shape[1] != self.dim:
            raise ValueError(f"X must have {self.dim} columns (the regions' dim), got {X.shape}.")
        cells = np.clip(np.floor(X * self.splits).astype(int), 0, self.splits - 1)
        return np.ravel_multi_index(cells.T, tuple(self.splits))

    def bounds(self, i: int) -> np.ndarray:
        """The box of sub-region ``i``: an array ``[[low_1, high_1], ..., [low_dim, high_dim]]``."""
        i = check_int("i", i, minimum=0)
        if i >= self.n_regions:
            raise ValueError(f"i must be < n_regions={self.n_regions}, got {i}.")
        cell = np.array(np.unravel_index(i, tuple(self.splits)))
        return np.stack([cell / self.splits, (cell + 1) / self.splits], axis=1)

    def sample(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` uniform points of sub-region ``i``, shape ``(n, dim)``."""
        box = self.bounds(i)
        return box[:, 0] + rng.random((n, self.dim)) * (box[:, 1] - box[:, 0])

    def __repr__(self) -> str:
        return f"SubRegions(dim={self.dim}, n_regions={self.n_regions})"
