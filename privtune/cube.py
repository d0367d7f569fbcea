"""The layout of the unit cube: which coordinates belong to one parameter, and of what kind.

The optimizers work on ``[0, 1]^dim`` and know nothing of hyperparameters, but two things below
them need the parameters' boundaries: the surrogate's kernel (one lengthscale per parameter, a
Hamming-type distance on a one-hot block) and the acquisition optimiser (gradient steps on
continuous coordinates only; enumeration of the values of a categorical or small discrete
parameter). A discrete parameter with more than :data:`MAX_GRID` values is a real block: the
kernel treats it as continuous and the acquisition's result is snapped to its grid.
:class:`Block` carries exactly that, and :meth:`privtune.space.SearchSpace.layout` produces it;
without a search space every coordinate is its own continuous block.

Notation
--------
dim    : number of cube coordinates
block  : the coordinates ``start:stop`` of one parameter
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["KINDS", "MAX_GRID", "Block", "check_layout", "continuous_layout"]

#: The kinds of block: a real coordinate; a discrete one whose valid encodings are ``grid`` (an
#: integer parameter, or a real one with a step); a one-hot categorical block.
KINDS = ("real", "discrete", "categorical")

#: The most values a discrete block enumerates; a parameter with more is a real block.
MAX_GRID = 64


@dataclass(frozen=True)
class Block:
    """The cube coordinates ``start:stop`` of one parameter.

    Parameters
    ----------
    start, stop : int
        The coordinates, as a slice; ``stop - start`` is 1 except for a categorical block,
        which has one coordinate per choice.
    kind : {"real", "discrete", "categorical"}
        A real coordinate; a discrete one (its value is the cell a point falls in); a one-hot
        block (its value is the argmax).
    grid : tuple of float, default=()
        The valid encodings of a discrete block's coordinate, increasing (empty otherwise).
    """

    start: int
    stop: int
    kind: str = "real"
    grid: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}.")
        if not 0 <= self.start < self.stop:
            raise ValueError(f"a block needs 0 <= start < stop, got {self.start}:{self.stop}.")
        if self.kind != "categorical" and self.stop - self.start != 1:
            raise ValueError(f"a {self.kind} block has one coordinate, got {self.width}.")
        if (self.kind == "discrete") != bool(self.grid):
            raise ValueError("a discrete block, and only a discrete block, has a grid.")
        object.__setattr__(self, "grid", tuple(float(g) for g in self.grid))

    @property
    def n_values(self) -> int:
        """The number of values of a discrete or categorical block (0 for a real one)."""
        if self.kind == "categorical":
            return self.width
        return len(self.grid)

    @property
    def width(self) -> int:
        """Number of coordinates of the block."""
        return self.stop - self.start

    @property
    def slice(self) -> slice:
        """The block's coordinates as a slice."""
        return slice(self.start, self.stop)

    @property
    def hamming_weight(self) -> float:
        """Divides the block's squared Euclidean distance: 2 for a one-hot block, whose two
        distinct valid encodings are at squared distance 2 (so the distance is Hamming's 0 or
        1), 1 otherwise."""
        return 2.0 if self.kind == "categorical" else 1.0

    def values(self) -> np.ndarray:
        """The block's valid encodings, one per row (discrete: the cells' centres; categorical:
        the one-hot rows). Not defined for a real block."""
        if self.kind == "categorical":
            return np.eye(self.width)
        if self.kind == "discrete":
            return np.array(self.grid)[:, None]
        raise ValueError("a real block has no finite set of values.")


def continuous_layout(dim: int) -> tuple[Block, ...]:
    """``dim`` real coordinates, one block each (the layout without a search space)."""
    return tuple(Block(j, j + 1) for j in range(dim))


def check_layout(layout: Sequence[Block] | None, dim: int) -> tuple[Block, ...]:
    """Validate that ``layout`` tiles ``0:dim`` with blocks in order (``None``: continuous)."""
    if layout is None:
        return continuous_layout(dim)
    blocks = tuple(layout)
    if not all(isinstance(b, Block) for b in blocks):
        raise TypeError("layout must be a sequence of privtune.cube.Block.")
    edges = [0] + [b.stop for b in blocks]
    if [b.start for b in blocks] != edges[:-1] or edges[-1] != dim:
        raise ValueError(f"layout must tile the coordinates 0:{dim} in order, got {blocks!r}.")
    return blocks
