"""A second surrogate for a share of the proposals: a forest of randomised trees.

A stationary Gaussian process fitted to a few good configurations and many failed ones can
be confidently wrong. On a forest over fractional ``min_samples_*`` the good region is where
*every* size limit is small at once, and the kernel, which sees a failure at each lower bound
it has tried (the other limits were large there), spreads those failures over the good corner:
the proposals then refine a thin ridge and never try the corner. Trees split on one parameter
at a time and model such "all of these below a threshold" regions directly, and the spread of
their predictions is large exactly where the data do not decide between splits. SMAC's random
forest surrogate is the model of this kind in hyperparameter tuning.

:func:`forest_proposal` picks, among candidate points, the one of largest expected improvement
under an ensemble of extremely randomised trees (:class:`_Tree`; mean and standard deviation
across the trees). The kernel optimizers take every ``forest_share``-th proposal from it while
their rewards are exact (:class:`privtune.optimizers.base.BaseOptimizer`); the rest follow the
Gaussian process.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .acquisition import coordinate_moves, expected_improvement, raw_samples, with_faces
from .cube import Block

#: Trees of the ensemble: a stable spread on a few dozen told points (a proposal took about
#: 0.3 s at 60 told points and six parameters, on a loaded machine).
N_TREES = 64
#: Raw samples of the cube per proposal (as many again with coordinates pushed to faces).
N_RAW = 2048
#: Perturbations per top told point, and their scale in the unit cube.
N_LOCAL, LOCAL_SCALE, N_TOP = 50, 0.1, 5


def forest_candidates(
    X: np.ndarray,
    y: np.ndarray,
    layout: Sequence[Block],
    rng: np.random.Generator,
    raw_sampling: str = "uniform",
) -> np.ndarray:
    """The points a forest proposal chooses among (before snapping).

    Raw samples of the cube, the same with each coordinate pushed to a face with probability
    1/2 (the ends of ranges, where the best value of a size limit often is), Gaussian
    perturbations of the best told points and the best point's one-parameter moves
    (:func:`privtune.acquisition.coordinate_moves`).
    """
    dim = X.shape[1]
    cube = with_faces(raw_samples(rng, N_RAW, dim, raw_sampling), rng)
    top = X[np.argsort(-y, kind="stable")[:N_TOP]]
    local = np.repeat(top, N_LOCAL, axis=0)
    local = np.clip(local + LOCAL_SCALE * rng.standard_normal(local.shape), 0.0, 1.0)
    moves = coordinate_moves(X[int(np.argmax(y))], layout)
    return np.vstack([cube, local, moves])


class _Tree:
    """One extremely randomised regression tree (Geurts, Ernst & Wehenkel 2006): at each node
    every parameter gets a threshold drawn uniformly between its smallest and largest value
    there, and the split with the smallest sum of squared errors is kept; a node of fewer than
    two points or of equal rewards is a leaf holding their mean."""

    def __init__(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> None:
        self.feature: list[int] = []
        self.threshold: list[float] = []
        self.children: list[tuple[int, int]] = []
        self.value: list[float] = []
        self._grow(X, y, rng)

    def _node(self) -> int:
        self.feature.append(-1)
        self.threshold.append(0.0)
        self.children.append((-1, -1))
        self.value.append(0.0)
        return len(self.value) - 1

    def _grow(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> None:
        stack = [(self._node(), np.arange(y.size))]
        while stack:
            node, rows = stack.pop()
            yy = y[rows]
            self.value[node] = float(np.mean(yy))
            if rows.size < 2 or np.ptp(yy) == 0.0:
                continue
            Xn = X[rows]
            lo, hi = Xn.min(axis=0), Xn.max(axis=0)
            varies = hi > lo
            if not varies.any():
                continue
            t = lo + (hi - lo) * rng.random(lo.size)
            left = Xn <= t  # (rows, features)
            n_left = left.sum(axis=0)
            s_left = yy @ left
            q_left = (yy * yy) @ left
            n_right = rows.size - n_left
            s_right, q_right = yy.sum() - s_left, (yy * yy).sum() - q_left
            with np.errstate(divide="ignore", invalid="ignore"):
                sse = (q_left - s_left**2 / n_left) + (q_right - s_right**2 / n_right)
            sse = np.where(varies & (n_left > 0) & (n_right > 0), sse, np.inf)
            j = int(np.argmin(sse))
            if not np.isfinite(sse[j]):
                continue
            self.feature[node], self.threshold[node] = j, float(t[j])
            a, b = self._node(), self._node()
            self.children[node] = (a, b)
            stack += [(a, rows[left[:, j]]), (b, rows[~left[:, j]])]

    def predict(self, Z: np.ndarray) -> np.ndarray:
        feature, threshold = np.array(self.feature), np.array(self.threshold)
        children, value = np.array(self.children), np.array(self.value)
        node = np.zeros(Z.shape[0], dtype=int)
        inner = feature[node] >= 0
        while inner.any():
            i = np.flatnonzero(inner)
            go_left = Z[i, feature[node[i]]] <= threshold[node[i]]
            node[i] = np.where(go_left, children[node[i], 0], children[node[i], 1])
            inner = feature[node] >= 0
        return value[node]


def forest_proposal(X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator) -> int:
    """The row of ``Z`` with the largest expected improvement over ``max(y)`` under an
    ensemble of :data:`N_TREES` extremely randomised trees fitted to ``(X, y)`` (mean and
    standard deviation of the trees' predictions).

    Parameters
    ----------
    X : ndarray of shape (n, dim)
        The told points, ``n >= 2``.
    y : ndarray of shape (n,)
        Their rewards (exact: the improvement is over the best told one).
    Z : ndarray of shape (m, dim)
        The candidates, ``m >= 1``.
    rng : numpy.random.Generator
        Draws the trees' thresholds.

    Returns
    -------
    int
        The index of the chosen candidate (the first of ties).
    """
    per_tree = np.stack([_Tree(X, y, rng).predict(Z) for _ in range(N_TREES)])
    mean = per_tree.mean(axis=0)
    sd = per_tree.std(axis=0) + 1e-9
    ei = expected_improvement(sd, (mean - float(np.max(y))) / sd)
    return int(np.argmax(ei))
