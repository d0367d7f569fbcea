"""Stationary kernels on the unit cube, normalised so that k(x, x) = 1.

The regret bounds of every algorithm in privtune assume a bounded variance, k(x, x) <= 1
(Zhou & Tan 2021, "Regularity Assumptions"); both kernels here satisfy it with equality.

Notation
--------
X : (n, d) array, points in [0, 1]^d
Y : (m, d) array
K : (n, m) array, K[i, j] = k(X[i], Y[j])
s : Euclidean distance ||x - x'||_2
l : lengthscale (``lengthscale``)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import linalg, optimize
from scipy.spatial import distance

from .cube import Block, check_layout

__all__ = [
    "SE",
    "ARDMatern52",
    "Kernel",
    "Matern",
    "fit_lengthscale",
    "kumaraswamy",
    "kumaraswamy_grads",
    "make_kernel",
]

_MATERN_NUS = (0.5, 1.5, 2.5)


def _sq_dist(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Pairwise squared Euclidean distances.

    Computed directly (not as |x|^2 + |y|^2 - 2 x.y) so that k(x, x) is exactly 1: the
    Matérn kernels take a square root, which turns a 1e-16 round-off into a 1e-8 error.
    """
    return distance.cdist(X, Y, "sqeuclidean")


#: A warped coordinate is first moved into ``[eps, 1 - eps]`` so that its logarithms are finite.
WARP_EPS = 1e-7


def _inside(x: np.ndarray) -> np.ndarray:
    """Coordinates in ``[0, 1]`` moved into ``[WARP_EPS, 1 - WARP_EPS]``."""
    return np.clip(x, 0.0, 1.0) * (1.0 - 2.0 * WARP_EPS) + WARP_EPS


def kumaraswamy(x: np.ndarray, a: float, c: float) -> np.ndarray:
    """The Kumaraswamy CDF ``1 - (1 - x^a)^c`` of coordinates ``x`` in ``[0, 1]``: a monotone
    map of the unit interval onto itself, the identity at ``a = c = 1``, that stretches one
    end of the interval and compresses the other (Snoek et al. 2014, "Input warping for
    Bayesian optimization of non-stationary functions", with the CDF of their Beta warping
    replaced by the closed-form Kumaraswamy one, as in BoTorch's ``Warp``)."""
    u = _inside(x)
    return 1.0 - (1.0 - u**a) ** c


def kumaraswamy_grads(x: np.ndarray, a: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """The derivatives of :func:`kumaraswamy` in ``ln a`` and ``ln c``."""
    u = _inside(x)
    ua = u**a
    rest = 1.0 - ua
    d_ln_a = c * rest ** (c - 1.0) * ua * np.log(u) * a
    d_ln_c = -c * rest**c * np.log(rest)
    return d_ln_a, d_ln_c


@dataclass(frozen=True)
class Kernel:
    """Base class of stationary kernels with unit variance.

    Parameters
    ----------
    lengthscale : float
        The lengthscale ``l > 0`` in units of the unit cube.
    """

    lengthscale: float = 0.2

    def __post_init__(self) -> None:
        ls = self.lengthscale
        if isinstance(ls, bool) or not isinstance(ls, (int, float, np.floating, np.integer)):
            raise TypeError(f"lengthscale must be a positive float, got {type(ls).__name__}.")
        if not (math.isfinite(float(ls)) and float(ls) > 0.0):
            raise ValueError(f"lengthscale must be a finite float > 0, got {ls!r}.")
        object.__setattr__(self, "lengthscale", float(ls))

    def _from_sq_dist(self, d2: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        """Return the Gram matrix ``K[i, j] = k(X[i], Y[j])`` (``Y = X`` when omitted)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        Y = X if Y is None else np.atleast_2d(np.asarray(Y, dtype=float))
        return self._from_sq_dist(_sq_dist(X, Y))

    def diag(self, X: np.ndarray) -> np.ndarray:
        """Return ``k(x, x)`` for every row of ``X`` (all ones: the kernels are normalised)."""
        return np.ones(np.atleast_2d(X).shape[0])

    def with_lengthscale(self, lengthscale: float) -> Kernel:
        """Return a copy of this kernel with another lengthscale."""
        return replace(self, lengthscale=lengthscale)


@dataclass(frozen=True)
class SE(Kernel):
    """Squared-exponential kernel ``k(x, x') = exp(-s^2 / (2 l^2))``.

    Parameters
    ----------
    lengthscale : float, default=0.2
        The lengthscale ``l > 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from privtune.kernels import SE
    >>> float(SE(0.2)(np.zeros((1, 2)))[0, 0])
    1.0
    """

    def _from_sq_dist(self, d2: np.ndarray) -> np.ndarray:
        return np.exp(-0.5 * d2 / self.lengthscale**2)


@dataclass(frozen=True)
class Matern(Kernel):
    """Matérn kernel with smoothness ``nu`` in {0.5, 1.5, 2.5}.

    For half-integer ``nu`` the Bessel-function form of Zhou & Tan (2021) has the closed forms
    used here, e.g. for ``nu = 2.5``: ``(1 + r + r^2 / 3) exp(-r)`` with ``r = sqrt(5) s / l``.

    Parameters
    ----------
    lengthscale : float, default=0.2
        The lengthscale ``l > 0``.
    nu : {0.5, 1.5, 2.5}, default=2.5
        Smoothness. Other values are rejected: their Bessel form is slower and no algorithm in
        privtune needs them.
    """

    nu: float = 2.5

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.nu not in _MATERN_NUS:
            raise ValueError(
                f"nu must be one of {_MATERN_NUS} for the Matern kernel, got {self.nu!r}."
            )
        object.__setattr__(self, "nu", float(self.nu))

    def _from_sq_dist(self, d2: np.ndarray) -> np.ndarray:
        s = np.sqrt(d2)
        if self.nu == 0.5:
            return np.exp(-s / self.lengthscale)
        if self.nu == 1.5:
            r = math.sqrt(3.0) * s / self.lengthscale
            return (1.0 + r) * np.exp(-r)
        r = math.sqrt(5.0) * s / self.lengthscale
        return (1.0 + r + r * r / 3.0) * np.exp(-r)


@dataclass(frozen=True, eq=False)
class ARDMatern52:
    """Matérn-5/2 kernel with one lengthscale per parameter (automatic relevance determination).

    ``k(x, x') = (1 + r + r^2 / 3) exp(-r)`` with ``r = sqrt(5 s2)`` and
    ``s2 = sum_b ||x_b - x'_b||^2 / (w_b l_b^2)``, the sum running over the layout's blocks
    (:mod:`privtune.cube`): ``x_b`` are the coordinates of parameter ``b``, ``l_b`` its
    lengthscale, and ``w_b`` is 2 for a one-hot block (two distinct choices are then at
    distance 1, as in a Hamming kernel) and 1 otherwise. A discrete parameter is measured
    between its cells' centres, like a real one. ``k(x, x) = 1``: the signal variance is the
    surrogate's, not the kernel's. With ``warping``, the coordinate of a real or discrete
    block ``b`` enters as its :func:`kumaraswamy` warp ``w_b(x_b)`` (input warping: the
    kernel stays stationary in the warped coordinates, so a parameter whose effect
    concentrates at one end of its range is modelled with one lengthscale).

    Parameters
    ----------
    lengthscales : sequence of float
        One lengthscale ``l_b > 0`` per block, in units of the cube.
    layout : sequence of Block
        The blocks; their widths sum to the dimension.
    warping : sequence of (float, float) or None, default=()
        Empty (no warping), or one entry per block: the Kumaraswamy concentrations
        ``(a_b, c_b)`` of a warped block, ``None`` for one that is not warped (a categorical
        block is never warped).

    Examples
    --------
    >>> import numpy as np
    >>> from privtune.cube import continuous_layout
    >>> k = ARDMatern52((0.2, 1.0), continuous_layout(2))
    >>> float(k(np.zeros((1, 2)))[0, 0])
    1.0
    """

    lengthscales: tuple[float, ...]
    layout: tuple[Block, ...]
    warping: tuple[tuple[float, float] | None, ...] = ()
    _scale: np.ndarray = field(init=False, repr=False, compare=False)  # set by __post_init__

    def __post_init__(self) -> None:
        ls = np.asarray(self.lengthscales, dtype=float).reshape(-1)
        if ls.size != len(self.layout):
            raise ValueError(
                f"lengthscales must have one value per block ({len(self.layout)}), got {ls.size}."
            )
        if not np.all(np.isfinite(ls) & (ls > 0)):
            raise ValueError(f"lengthscales must be finite floats > 0, got {self.lengthscales!r}.")
        layout = tuple(self.layout)
        check_layout(layout, layout[-1].stop if layout else 0)
        object.__setattr__(self, "lengthscales", tuple(float(v) for v in ls))
        object.__setattr__(self, "layout", layout)
        warping = tuple(None if w is None else (float(w[0]), float(w[1])) for w in self.warping)
        if warping and len(warping) != len(layout):
            raise ValueError(f"warping must be empty or have one entry per block ({len(layout)}).")
        for block, w in zip(layout, warping, strict=False):
            if w is not None and (block.kind == "categorical" or not (w[0] > 0 and w[1] > 0)):
                raise ValueError("a warped block is real or discrete, with concentrations > 0.")
        object.__setattr__(self, "warping", warping)
        dim = layout[-1].stop
        scale = np.empty(dim)
        for block, l_b in zip(layout, ls, strict=True):
            scale[block.slice] = 1.0 / (l_b * math.sqrt(block.hamming_weight))
        object.__setattr__(self, "_scale", scale)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ARDMatern52)
            and self.lengthscales == other.lengthscales
            and self.layout == other.layout
            and self.warping == other.warping
        )

    def __hash__(self) -> int:
        return hash((self.lengthscales, self.layout, self.warping))

    @property
    def dim(self) -> int:
        """Number of cube coordinates."""
        return self.layout[-1].stop

    @staticmethod
    def from_sq_dist(s2: np.ndarray) -> np.ndarray:
        """``k`` as a function of the scaled squared distance ``s2``."""
        r = np.sqrt(5.0 * s2)
        return (1.0 + r + r * r / 3.0) * np.exp(-r)

    @staticmethod
    def d_sq_dist(s2: np.ndarray) -> np.ndarray:
        """The derivative ``dk / ds2 = -(5/6) (1 + r) exp(-r)``, finite at ``s2 = 0``."""
        r = np.sqrt(5.0 * s2)
        return -(5.0 / 6.0) * (1.0 + r) * np.exp(-r)

    def warp(self, X: np.ndarray) -> np.ndarray:
        """The points as the kernel sees them: ``X`` with every warped block's coordinate
        replaced by its warp (``X`` itself without warping)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if not self.warping:
            return X
        W = X.copy()
        for block, w in zip(self.layout, self.warping, strict=True):
            if w is not None:
                W[:, block.start] = kumaraswamy(X[:, block.start], *w)
        return W

    def sq_dist(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        """The scaled squared distances ``s2[i, j]`` between the rows of ``X`` and ``Y``."""
        X = self.warp(X) * self._scale
        Y = X if Y is None else self.warp(Y) * self._scale
        return _sq_dist(X, Y)

    def block_sq_dists(self, X: np.ndarray) -> np.ndarray:
        """Unscaled per-block squared distances ``||x_b - x'_b||^2 / w_b`` (warped coordinates),
        shape ``(n_blocks, n, n)``: the derivative of ``s2`` in ``ln l_b`` is ``-2`` times block
        ``b`` divided by ``l_b^2``."""
        X = self.warp(X)
        return np.stack(
            [_sq_dist(X[:, b.slice], X[:, b.slice]) / b.hamming_weight for b in self.layout]
        )

    def __call__(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        """Return the Gram matrix ``K[i, j] = k(X[i], Y[j])`` (``Y = X`` when omitted)."""
        return self.from_sq_dist(self.sq_dist(X, Y))

    def diag(self, X: np.ndarray) -> np.ndarray:
        """Return ``k(x, x) = 1`` for every row of ``X``."""
        return np.ones(np.atleast_2d(X).shape[0])

    def value_and_grad(self, z: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """``k(z, X[i])`` and its gradient in ``z``, shapes ``(n,)`` and ``(n, dim)``: with
        ``s2_i = sum_d (z_d - X_id)^2 c_d^2`` (``c`` the coordinates' inverse scaled
        lengthscales), ``dk_i / dz = 2 dk/ds2 (s2_i) c^2 (z - X_i)``. Not for a warped kernel
        (``None`` is returned: the caller differences instead).

        Parameters
        ----------
        z : ndarray of shape (dim,)
        X : ndarray of shape (n, dim)

        Returns
        -------
        (ndarray, ndarray) or None
        """
        if self.warping:
            return None
        diff = np.asarray(z, dtype=float)[None, :] - X
        c2 = self._scale**2
        s2 = (diff * diff) @ c2
        dk = (2.0 * self.d_sq_dist(s2))[:, None] * (diff * c2)
        return self.from_sq_dist(s2), dk

    def with_lengthscales(self, lengthscales, warping=None) -> ARDMatern52:
        """Return a copy with other lengthscales (and, when given, another warping)."""
        return ARDMatern52(
            tuple(lengthscales), self.layout, self.warping if warping is None else tuple(warping)
        )


_KERNEL_NAMES = {
    "se": lambda ls: SE(ls),
    "rbf": lambda ls: SE(ls),
    "matern12": lambda ls: Matern(ls, nu=0.5),
    "matern32": lambda ls: Matern(ls, nu=1.5),
    "matern52": lambda ls: Matern(ls, nu=2.5),
}


def make_kernel(kernel: Kernel | str, lengthscale: float = 0.2) -> Kernel:
    """Return a :class:`Kernel` from an instance or a name.

    Parameters
    ----------
    kernel : Kernel or {"se", "rbf", "matern12", "matern32", "matern52"}
        A kernel instance (returned unchanged) or the name of one.
    lengthscale : float, default=0.2
        Lengthscale used when ``kernel`` is a name.

    Returns
    -------
    Kernel
    """
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, str) and kernel.lower() in _KERNEL_NAMES:
        return _KERNEL_NAMES[kernel.lower()](lengthscale)
    raise ValueError(
        f"kernel must be a privtune.kernels.Kernel instance or one of {sorted(_KERNEL_NAMES)}, "
        f"got {kernel!r}."
    )


def _neg_log_marginal_likelihood(kernel: Kernel, X: np.ndarray, y: np.ndarray, lam: float) -> float:
    K = kernel(X)
    K[np.diag_indices_from(K)] += lam
    try:
        L = linalg.cholesky(K, lower=True)
    except linalg.LinAlgError:
        return math.inf
    alpha = linalg.cho_solve((L, True), y)
    return float(
        0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(y) * math.log(2 * math.pi)
    )


def fit_lengthscale(
    kernel: Kernel,
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    bounds: tuple[float, float] = (0.02, 2.0),
) -> Kernel:
    """Fit the lengthscale by type-II maximum likelihood (ML-II).

    Maximises the GP log marginal likelihood of ``y`` under a zero-mean GP prior with kernel
    ``kernel`` and Gaussian noise variance ``lam`` over ``log(lengthscale)`` within ``bounds``:
    a coarse grid first (the likelihood is often multi-modal), then a bounded scalar search
    around the best grid point. Values ``y`` may be privatized: the fit is post-processing.

    Parameters
    ----------
    kernel : Kernel
        The kernel whose lengthscale is fitted; other parameters (``nu``) are kept.
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    lam : float
        Noise variance of the surrogate likelihood (the algorithms' ``lam``).
    bounds : tuple of float, default=(0.02, 2.0)
        Search interval for the lengthscale.

    Returns
    -------
    Kernel
        A copy of ``kernel`` with the fitted lengthscale.
    """
    lo, hi = bounds
    if not (0 < lo < hi):
        raise ValueError(f"bounds must satisfy 0 < low < high, got {bounds!r}.")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    y = y - y.mean()

    def objective(log_ls: float) -> float:
        return _neg_log_marginal_likelihood(kernel.with_lengthscale(math.exp(log_ls)), X, y, lam)

    grid = np.linspace(math.log(lo), math.log(hi), 16)
    values = [objective(g) for g in grid]
    i = int(np.argmin(values))
    a = grid[max(i - 1, 0)]
    b = grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(objective, bounds=(a, b), method="bounded")
    best = float(res.x) if res.fun <= values[i] else float(grid[i])
    return kernel.with_lengthscale(math.exp(best))
