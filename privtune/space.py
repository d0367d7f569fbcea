"""Mixed hyperparameter search spaces and their encoding in the unit cube.

A :class:`SearchSpace` maps named hyperparameters (real, integer or categorical) to points of the
unit cube [0, 1]^d, where the optimizers work, and back. The encoding follows three rules:

- A real parameter takes one coordinate, linear in the value or in its logarithm (``log=True``).
- An integer parameter (and a real parameter with a ``step``) takes one coordinate split into
  cells, one per valid value; a value is encoded at the centre of its cell and any point of the
  cell decodes to it. The cells have equal width, except with ``log=True``, where the cell
  boundaries (the half-integers) are placed in log space, as in Optuna's own Gaussian-process
  search space, so that small values get wider cells.
- A categorical parameter takes one coordinate per choice (one-hot) and decodes by argmax.

Notation
--------
d: ``space.dim``, the number of cube coordinates; a categorical parameter with c choices counts c.
params: one configuration, a mapping from parameter name to value in the user's terms.
u: one point of the cube with the shape of (d,).
U: n points of the cube, one per row, with the shape of (n, d).
block: the columns of U that belong to one parameter, with the shape of (n, width).
"""

from __future__ import annotations

import decimal
import math
import numbers
import operator
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from .cube import MAX_GRID, Block

__all__ = [
    "Categorical",
    "Dimension",
    "Integer",
    "Real",
    "SearchSpace",
    "Space",
    "SpaceUnion",
    "as_space",
]

# Decoding clips points into the cube, but only up to this distance: a coordinate further out is a
# caller's bug (for example raw parameter values passed instead of cube points) and is reported.
_CUBE_TOLERANCE = 1e-6

_PRIORS = {"uniform": False, "log-uniform": True}

# The largest integer bound: every integer up to it is a float, exactly.
_MAX_EXACT_INT = 2**53

_ACCEPTED_FORMS = (
    "a privtune Real, Integer or Categorical; an Optuna FloatDistribution, IntDistribution or "
    "CategoricalDistribution; a frozen scipy.stats distribution with finite support (such as "
    "loguniform(1e-3, 1e2), uniform(0, 1) or randint(1, 10)); a list of choices (categorical); "
    "a (low, high) tuple (Integer if both are ints, else Real); or a (low, high, 'uniform' | "
    "'log-uniform') tuple"
)

#: scipy.stats distributions that are log-uniform on their support (without a ``loc``).
_LOG_UNIFORM = frozenset({"loguniform", "reciprocal"})


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _finite_float(value: Any, name: str, owner: str) -> float:
    if not _is_number(value):
        raise TypeError(f"{owner}: `{name}` must be a real number, got {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{owner}: `{name}` must be finite, got {value!r}.")
    return value


def _check_log_flag(log: Any, owner: str) -> bool:
    if not isinstance(log, (bool, np.bool_)):
        raise TypeError(f"{owner}: `log` must be True or False, got {log!r}.")
    return bool(log)


class _Numeric:
    """Encoding shared by :class:`Real` and :class:`Integer`: one coordinate per parameter.

    A continuous parameter maps [low, high] (or [log low, log high]) affinely onto [0, 1].
    A discrete one has the grid ``low + k * step`` for k = 0, ..., n_steps and maps the interval
    [low - step/2, top + step/2] (top being the last grid point) onto [0, 1], so that every grid
    point owns a cell of the same width.
    """

    low: Any
    high: Any
    log: bool
    step: Any

    width = 1
    """Number of cube coordinates the parameter takes (always 1 for a numeric parameter)."""

    @property
    def _discrete(self) -> bool:
        return self.step is not None

    @cached_property
    def _n_steps(self) -> int:
        # Number of steps from low to the last grid point not above high. Decimal on the shortest
        # decimal representation makes Real(0.0, 0.3, step=0.1) have 3 steps, as a user expects
        # and as Optuna computes it, where float division would give 2.9999999999999996.
        if isinstance(self.step, int):
            return (self.high - self.low) // self.step
        span = decimal.Decimal(repr(self.high)) - decimal.Decimal(repr(self.low))
        return int(span // decimal.Decimal(repr(self.step)))

    @cached_property
    def _ends(self) -> tuple[float, float]:
        if self._discrete:
            low = self.low - 0.5 * self.step
            high = self.low + self._n_steps * self.step + 0.5 * self.step
        else:
            low, high = self.low, self.high
        if self.log:
            return math.log(low), math.log(high)
        return float(low), float(high)

    def _forward(self, x: np.ndarray) -> np.ndarray:
        a, b = self._ends
        t = np.log(x) if self.log else x
        return np.clip((t - a) / (b - a), 0.0, 1.0)

    def _backward(self, u: np.ndarray) -> np.ndarray:
        a, b = self._ends
        t = a + u * (b - a)
        return np.exp(t) if self.log else t

    def _grid_index(self, u: np.ndarray) -> np.ndarray:
        x = self._backward(u)
        k = np.floor((x - self.low) / self.step + 0.5)
        return np.clip(k, 0, self._n_steps).astype(np.int64)

    def _decode_array(self, u: np.ndarray) -> np.ndarray:
        if not self._discrete:
            # exp(log(low)) need not give back low exactly; the cube's faces should.
            x = np.clip(self._backward(u), self.low, self.high)
            return np.where(u <= 0.0, self.low, np.where(u >= 1.0, self.high, x))
        values = self.low + self._grid_index(u) * self.step
        # low + k * step can land one rounding error above high for a real step (0.1 * 3 > 0.3).
        return np.minimum(values, self.high)

    def _check_value(self, value: Any) -> float | int:
        raise NotImplementedError

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        """Encode values of this parameter as cube coordinates.

        Parameters
        ----------
        values : sequence
            n values, each inside [low, high].

        Returns
        -------
        block : np.ndarray of shape (n, 1)
            Coordinates in [0, 1]. Values off the step grid are encoded where they lie.

        Raises
        ------
        ValueError
            If a value is not a number, not finite, or outside [low, high].
        """
        checked = np.array([self._check_value(v) for v in values], dtype=float)
        return self._forward(checked).reshape(-1, 1)

    def decode(self, block: np.ndarray) -> list[Any]:
        """Decode cube coordinates (already inside [0, 1]) into values of this parameter.

        Parameters
        ----------
        block : np.ndarray of shape (n, 1)
            Coordinates in [0, 1].

        Returns
        -------
        values : list
            n values in [low, high] and on the step grid if there is one: ``float`` for a
            :class:`Real`, ``int`` for an :class:`Integer`.
        """
        return self._decode_array(np.asarray(block, dtype=float)[:, 0]).tolist()

    def snap(self, block: np.ndarray) -> np.ndarray:
        """Move coordinates (already inside [0, 1]) to the canonical encoding of their value.

        Parameters
        ----------
        block : np.ndarray of shape (n, 1)
            Coordinates in [0, 1].

        Returns
        -------
        block : np.ndarray of shape (n, 1)
            For a discrete parameter the centre of the cell each coordinate falls in; a
            continuous coordinate is returned as it is, since it already decodes to its value.
        """
        block = np.asarray(block, dtype=float)
        if not self._discrete:
            return block.copy()
        return self._forward(self._decode_array(block[:, 0]).astype(float)).reshape(-1, 1)


@dataclass(frozen=True)
class Real(_Numeric):
    """A real-valued hyperparameter in the closed interval [low, high].

    Parameters
    ----------
    low, high : float
        Finite bounds with ``low < high``.
    log : bool, default=False
        Encode in log space (requires ``low > 0``): sampling the cube uniformly samples the
        parameter log-uniformly.
    step : float or None, default=None
        If given, the parameter only takes the values ``low + k * step`` that are not above
        ``high``; the last grid point may be below ``high`` when the range is not a multiple of
        ``step``. Cannot be combined with ``log``, as in Optuna.

    Raises
    ------
    TypeError
        If a bound or the step is not a real number, or ``log`` is not a bool.
    ValueError
        If a bound is not finite, ``low >= high``, ``log`` is set with ``low <= 0`` or with a
        step, or ``step <= 0``.

    Examples
    --------
    >>> Real(1e-4, 1e-1, log=True).width
    1
    >>> Real(0.0, 1.0, step=0.25)
    Real(low=0.0, high=1.0, log=False, step=0.25)
    """

    low: float
    high: float
    log: bool = False
    step: float | None = None

    def __post_init__(self) -> None:
        owner = "Real"
        low = _finite_float(self.low, "low", owner)
        high = _finite_float(self.high, "high", owner)
        log = _check_log_flag(self.log, owner)
        if low >= high:
            raise ValueError(
                f"{owner}: `low` must be less than `high`, got low={low}, high={high}."
            )
        if log and low <= 0.0:
            raise ValueError(f"{owner}: `log=True` requires `low > 0`, got low={low}.")
        if not math.isfinite(high - low):
            raise ValueError(
                f"{owner}: the width `high - low` overflows a float (low={low}, high={high}); "
                "rescale the parameter, or use log=True for a range over many decades."
            )
        step = self.step
        if step is not None:
            step = _finite_float(step, "step", owner)
            if step <= 0.0:
                raise ValueError(f"{owner}: `step` must be positive, got step={step}.")
            if log:
                raise ValueError(
                    f"{owner}: `step` cannot be combined with `log=True` (as in Optuna); "
                    "use an Integer or drop the step."
                )
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "log", log)
        object.__setattr__(self, "step", step)

    def _check_value(self, value: Any) -> float:
        if not _is_number(value):
            raise ValueError(f"expected a real number in [{self.low}, {self.high}], got {value!r}.")
        value = float(value)
        if math.isnan(value):
            raise ValueError(f"value is NaN; expected a real number in [{self.low}, {self.high}].")
        if not self.low <= value <= self.high:
            raise ValueError(f"value {value!r} is outside [{self.low}, {self.high}].")
        return value

    def to_optuna(self) -> Any:
        """Return the equivalent ``optuna.distributions.FloatDistribution``.

        A ``high`` off the step grid is replaced by the last grid point, which is what Optuna
        would do itself, with a warning.

        Returns
        -------
        optuna.distributions.FloatDistribution
        """
        from optuna.distributions import FloatDistribution

        if self.step is None:
            return FloatDistribution(self.low, self.high, log=self.log)
        top = decimal.Decimal(repr(self.low)) + self._n_steps * decimal.Decimal(repr(self.step))
        return FloatDistribution(self.low, float(top), step=self.step)


@dataclass(frozen=True)
class Integer(_Numeric):
    """An integer hyperparameter taking the values ``low, low + step, ...`` up to ``high``.

    Parameters
    ----------
    low, high : int
        Bounds with ``low <= high`` (equal bounds make a constant).
    log : bool, default=False
        Encode in log space (requires ``low >= 1`` and ``step == 1``).
    step : int, default=1
        Grid spacing; the last grid point may be below ``high`` when the range is not a
        multiple of ``step``.

    Raises
    ------
    TypeError
        If a bound or the step is not an int, or ``log`` is not a bool.
    ValueError
        If ``low > high``, ``step < 1``, or ``log`` is set with ``low < 1`` or ``step != 1``.

    Notes
    -----
    The coordinate covers [low - step/2, top + step/2], ``top`` being the last grid point, so
    that each valid value owns a cell of equal width; values are encoded at the centres of their
    cells and decoding rounds to the nearest grid point. Uniform sampling of the cube then gives
    every value the same probability, which rounding a coordinate over [low, high] would not (the
    two end values would get half cells). With ``log=True`` the same interval is mapped in log
    space, as Optuna's Gaussian-process search space does: the cell of value k spans
    [log(k - 1/2), log(k + 1/2)], so sampling is close to log-uniform over the integers.

    Examples
    --------
    >>> Integer(1, 10).encode([1, 10]).ravel().tolist()
    [0.05, 0.95]
    """

    low: int
    high: int
    log: bool = False
    step: int = 1

    def __post_init__(self) -> None:
        owner = "Integer"
        for name in ("low", "high", "step"):
            value = getattr(self, name)
            if not _is_integer(value):
                raise TypeError(f"{owner}: `{name}` must be an int, got {value!r}.")
            object.__setattr__(self, name, int(value))
        log = _check_log_flag(self.log, owner)
        object.__setattr__(self, "log", log)
        for name in ("low", "high"):
            if abs(getattr(self, name)) > _MAX_EXACT_INT:
                raise ValueError(
                    f"{owner}: `{name}` must lie within +-2**53 (the integers a float, and so "
                    f"the cube, holds exactly), got {name}={getattr(self, name)}."
                )
        if self.low > self.high:
            raise ValueError(
                f"{owner}: `low` must not exceed `high`, got low={self.low}, high={self.high}."
            )
        if self.step < 1:
            raise ValueError(f"{owner}: `step` must be a positive int, got step={self.step}.")
        if log and self.low < 1:
            raise ValueError(f"{owner}: `log=True` requires `low >= 1`, got low={self.low}.")
        if log and self.step != 1:
            raise ValueError(f"{owner}: `log=True` requires `step == 1` (as in Optuna).")

    def _check_value(self, value: Any) -> int:
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        if not _is_integer(value):
            raise ValueError(f"expected an integer in [{self.low}, {self.high}], got {value!r}.")
        if not self.low <= value <= self.high:
            raise ValueError(f"value {value!r} is outside [{self.low}, {self.high}].")
        return int(value)

    def to_optuna(self) -> Any:
        """Return the equivalent ``optuna.distributions.IntDistribution``.

        Returns
        -------
        optuna.distributions.IntDistribution
        """
        from optuna.distributions import IntDistribution

        top = self.low + self._n_steps * self.step
        return IntDistribution(self.low, top, log=self.log, step=self.step)


def _choice_key(value: Any) -> tuple[Any, Any]:
    # Python has True == 1 == 1.0 (with equal hashes), so equality alone would make the choices
    # [1, True] indistinguishable. Keying on the type as well keeps them apart; NaN gets a key of
    # its own because it is not equal to itself.
    if isinstance(value, float) and math.isnan(value):
        return (float, "nan")
    return (type(value), value)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class Categorical:
    """A categorical hyperparameter, encoded one-hot.

    Parameters
    ----------
    choices : sequence
        The possible values, at least one, all distinct and hashable (typically ``str``,
        ``int``, ``float``, ``bool`` or ``None``; tuples work too, for example for
        ``hidden_layer_sizes``). NumPy scalars are stored as the equivalent Python objects.

    Raises
    ------
    TypeError
        If ``choices`` is a string or not a sequence, or a choice is not hashable.
    ValueError
        If ``choices`` is empty or contains a duplicate.

    Notes
    -----
    Choices are told apart by type as well as by value, so ``Categorical([1, True, 1.0])`` has
    three distinct choices and each decodes to itself, although ``1 == True == 1.0`` in Python.
    The same rule applies when encoding: ``1.0`` is not accepted for the choices ``[1, 2]``.

    Decoding takes the argmax of the parameter's coordinates; ties go to the lowest index.

    Examples
    --------
    >>> c = Categorical(["gini", "entropy"])
    >>> c.width, c.encode(["entropy"]).tolist()
    (2, [[0.0, 1.0]])
    """

    choices: Sequence[Any] = field(compare=False)
    _keys: tuple[tuple[Any, Any], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "Categorical"
        choices = self.choices
        if isinstance(choices, (str, bytes)) or not isinstance(choices, (Sequence, np.ndarray)):
            raise TypeError(
                f"{owner}: `choices` must be a list or tuple of values, got {choices!r}."
            )
        choices = tuple(_plain(c) for c in choices)
        if not choices:
            raise ValueError(f"{owner}: `choices` must contain at least one value.")
        keys = []
        for choice in choices:
            try:
                hash(choice)
            except TypeError:
                raise TypeError(
                    f"{owner}: every choice must be hashable, got {choice!r}; "
                    "use a tuple instead of a list."
                ) from None
            key = _choice_key(choice)
            if key in keys:
                raise ValueError(f"{owner}: `choices` contains {choice!r} more than once.")
            keys.append(key)
        object.__setattr__(self, "choices", choices)
        object.__setattr__(self, "_keys", tuple(keys))

    @property
    def width(self) -> int:
        """Number of cube coordinates the parameter takes: one per choice."""
        return len(self.choices)

    @cached_property
    def _index(self) -> dict[tuple[Any, Any], int]:
        return {key: i for i, key in enumerate(self._keys)}

    def index_of(self, value: Any) -> int:
        """Return the position of ``value`` among the choices.

        Parameters
        ----------
        value : object
            One of the choices (matched by type and value; a NumPy scalar matches the
            equivalent Python object).

        Returns
        -------
        int

        Raises
        ------
        ValueError
            If ``value`` is not one of the choices.
        """
        value = _plain(value)
        try:
            return self._index[_choice_key(value)]
        except (KeyError, TypeError):
            raise ValueError(
                f"value {value!r} is not among the choices {list(self.choices)!r} "
                "(choices are matched by type as well as value)."
            ) from None

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        """Encode values as one-hot rows.

        Parameters
        ----------
        values : sequence
            n values, each one of the choices.

        Returns
        -------
        block : np.ndarray of shape (n, len(choices))

        Raises
        ------
        ValueError
            If a value is not one of the choices.
        """
        indices = [self.index_of(v) for v in values]
        block = np.zeros((len(indices), self.width))
        block[np.arange(len(indices)), indices] = 1.0
        return block

    def decode(self, block: np.ndarray) -> list[Any]:
        """Decode rows of coordinates by argmax (ties go to the lowest index).

        Parameters
        ----------
        block : np.ndarray of shape (n, len(choices))

        Returns
        -------
        values : list
            n choices (the choice objects themselves).
        """
        return [self.choices[i] for i in np.argmax(block, axis=1)]

    def snap(self, block: np.ndarray) -> np.ndarray:
        """Replace each row by the one-hot encoding of the choice it decodes to.

        Parameters
        ----------
        block : np.ndarray of shape (n, len(choices))

        Returns
        -------
        block : np.ndarray of shape (n, len(choices))
        """
        block = np.asarray(block, dtype=float)
        snapped = np.zeros_like(block)
        snapped[np.arange(block.shape[0]), np.argmax(block, axis=1)] = 1.0
        return snapped

    def to_optuna(self) -> Any:
        """Return the equivalent ``optuna.distributions.CategoricalDistribution``.

        Optuna looks choices up by equality only, so choices such as ``[1, True]`` that this
        class tells apart are ambiguous there.

        Returns
        -------
        optuna.distributions.CategoricalDistribution
        """
        from optuna.distributions import CategoricalDistribution

        return CategoricalDistribution(self.choices)


Dimension = Real | Integer | Categorical
"""Any one hyperparameter of a :class:`SearchSpace`."""


def _from_optuna(value: Any) -> Dimension | None:
    # Only an object created with Optuna can be an Optuna distribution, and then Optuna is
    # already imported: looking it up in sys.modules keeps this module free of the import cost.
    distributions = sys.modules.get("optuna.distributions")
    if distributions is None:
        return None
    if isinstance(value, distributions.FloatDistribution):
        return Real(value.low, value.high, log=value.log, step=value.step)
    if isinstance(value, distributions.IntDistribution):
        return Integer(value.low, value.high, log=value.log, step=value.step)
    if isinstance(value, distributions.CategoricalDistribution):
        return Categorical(value.choices)
    return None


def _from_scipy(value: Any) -> Dimension | None:
    # A frozen scipy.stats distribution, as RandomizedSearchCV takes it: the dimension over its
    # support. scipy.stats is imported if such an object exists (see _from_optuna).
    stats = sys.modules.get("scipy.stats")
    if stats is None or not isinstance(value, stats.distributions.rv_frozen):
        return None
    low, high = (float(v) for v in value.support())
    name = value.dist.name
    if math.isnan(low) or math.isnan(high):
        raise ValueError(
            f"scipy.stats.{name} with these arguments ({value.args}, {value.kwds}) is not a "
            "valid distribution (scipy gives it no support): check its shape, loc and scale."
        )
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(
            f"scipy.stats.{name} has the unbounded support [{low}, {high}]; a search space "
            "needs finite bounds: use a distribution with finite support, such as "
            "scipy.stats.loguniform(a, b), uniform(loc, scale) or randint(low, high), or "
            "Real(low, high) / Integer(low, high)."
        )
    if isinstance(value.dist, stats.rv_discrete):
        return Integer(int(low), int(high))
    # log-uniform on [low, high] exactly when the median is the bounds' geometric mean (a loc
    # shifts the support without shifting the log scale, and is searched linearly)
    log = name in _LOG_UNIFORM and math.isclose(
        float(value.median()), math.sqrt(low * high), rel_tol=1e-9
    )
    return Real(low, high, log=log)


def _as_dimension(value: Any) -> Dimension:
    if isinstance(value, (Real, Integer, Categorical)):
        return value
    dimension = _from_optuna(value)
    if dimension is not None:
        return dimension
    dimension = _from_scipy(value)
    if dimension is not None:
        return dimension
    if isinstance(value, list):
        return Categorical(value)
    if isinstance(value, tuple) and len(value) in (2, 3):
        low, high = value[:2]
        log = False
        if len(value) == 3:
            prior = value[2]
            if not (isinstance(prior, str) and prior in _PRIORS):
                raise ValueError(
                    f"the third element of a (low, high, prior) tuple must be one of "
                    f"{sorted(_PRIORS)}, got {prior!r}."
                )
            log = _PRIORS[prior]
        if not (_is_number(low) and _is_number(high)):
            raise TypeError(f"a (low, high) tuple needs two numbers, got {value!r}.")
        if _is_integer(low) and _is_integer(high):
            return Integer(low, high, log=log)
        return Real(low, high, log=log)
    raise TypeError(f"unsupported specification {value!r}; expected {_ACCEPTED_FORMS}.")


class SearchSpace(Mapping[str, Dimension]):
    """An ordered mapping from hyperparameter names to dimensions, encoded in [0, 1]^d.

    Parameters
    ----------
    mapping : Mapping[str, object]
        Parameter names (non-empty strings) to specifications, each one of: a :class:`Real`,
        :class:`Integer` or :class:`Categorical`; an Optuna ``FloatDistribution``,
        ``IntDistribution`` or ``CategoricalDistribution``; a frozen ``scipy.stats``
        distribution with finite support, as ``RandomizedSearchCV`` takes it (below); a list
        (categorical choices); a ``(low, high)`` tuple (an :class:`Integer` if both bounds are
        ints, else a :class:`Real`); or a ``(low, high, "uniform" | "log-uniform")`` tuple. A
        tuple is never categorical. Another ``SearchSpace`` is copied. Conditional parameters
        are not supported.

    Notes
    -----
    A ``scipy.stats`` distribution becomes the dimension over its support: a discrete one an
    :class:`Integer` over its support (``randint(1, 10)`` is ``Integer(1, 9)``), a continuous
    one a :class:`Real` over its support, on a log scale for ``loguniform`` (``reciprocal``).
    ``uniform``, ``loguniform`` and ``randint``, the distributions ``RandomizedSearchCV`` users
    write, are then exactly the same distribution on the cube; for any other (``beta``,
    ``binom``, ...) the support is searched and the shape of the density is not used. A
    distribution with an infinite support (``norm``, ``expon``, ``poisson``) is refused.

    Attributes
    ----------
    names : tuple of str
        Parameter names in order.
    dim : int
        Number of cube coordinates ``d``.
    slices : Mapping[str, slice]
        For each parameter, its columns in a cube point.

    Raises
    ------
    TypeError
        If ``mapping`` is not a mapping, a name is not a string, or a specification has an
        unsupported type. The message names the parameter.
    ValueError
        If ``mapping`` is empty, a name is empty, or a specification is invalid (for example
        ``low >= high``). The message names the parameter.

    See Also
    --------
    Real, Integer, Categorical

    Examples
    --------
    >>> space = SearchSpace({"C": (1e-3, 1e3, "log-uniform"), "kernel": ["rbf", "linear"]})
    >>> space.dim
    3
    >>> u = space.to_unit({"C": 1.0, "kernel": "linear"})
    >>> u.round(3).tolist()
    [0.5, 0.0, 1.0]
    >>> space.from_unit(u)
    {'C': 1.0, 'kernel': 'linear'}
    """

    def __init__(self, mapping: Mapping[str, Any]) -> None:
        if not isinstance(mapping, Mapping):
            raise TypeError(
                f"SearchSpace expects a mapping from parameter names to dimensions, "
                f"got {type(mapping).__name__}."
            )
        if not mapping:
            raise ValueError("SearchSpace needs at least one parameter; got an empty mapping.")
        dimensions: dict[str, Dimension] = {}
        for name, spec in mapping.items():
            if not isinstance(name, str):
                raise TypeError(f"parameter names must be strings, got {name!r}.")
            if not name:
                raise ValueError("parameter names must be non-empty strings.")
            try:
                dimensions[name] = _as_dimension(spec)
            except (TypeError, ValueError) as err:
                # The dimension classes do not know the parameter's name; add it.
                raise type(err)(f"parameter {name!r}: {err}") from None
        self._dimensions = dimensions
        self._names = tuple(dimensions)
        slices = {}
        start = 0
        for name, dimension in dimensions.items():
            slices[name] = slice(start, start + dimension.width)
            start += dimension.width
        self._slices = slices
        self._dim = start

    def __getitem__(self, name: str) -> Dimension:
        return self._dimensions[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"SearchSpace({self._dimensions!r})"

    def __eq__(self, other: object) -> bool:
        # The order of the parameters fixes the layout of the cube, so it is part of equality
        # between spaces (a plain Mapping's equality ignores it).
        if isinstance(other, SearchSpace):
            return list(self.items()) == list(other.items())
        return super().__eq__(other)

    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names in order."""
        return self._names

    @property
    def dim(self) -> int:
        """Number of cube coordinates ``d`` (a categorical parameter counts one per choice)."""
        return self._dim

    @property
    def slices(self) -> Mapping[str, slice]:
        """For each parameter, the slice of its columns in a cube point."""
        return MappingProxyType(self._slices)

    @cached_property
    def layout(self) -> tuple[Block, ...]:
        """The parameters' blocks of cube coordinates, in order (see :mod:`privtune.cube`).

        A categorical parameter is a one-hot block; an integer parameter (or a real one with a
        step) with at most :data:`privtune.cube.MAX_GRID` values is a discrete block whose grid
        holds the encodings of its values; every other parameter is a real block.
        """
        blocks = []
        for name, dimension in self._dimensions.items():
            columns = self._slices[name]
            if isinstance(dimension, Categorical):
                blocks.append(Block(columns.start, columns.stop, "categorical"))
            elif dimension._discrete and dimension._n_steps + 1 <= MAX_GRID:
                assert dimension.step is not None  # a discrete parameter has a step
                values = dimension.low + np.arange(dimension._n_steps + 1) * dimension.step
                grid = dimension._forward(np.minimum(values, dimension.high).astype(float))
                blocks.append(Block(columns.start, columns.stop, "discrete", tuple(grid)))
            else:
                blocks.append(Block(columns.start, columns.stop))
        return tuple(blocks)

    @cached_property
    def n_configurations(self) -> int | None:
        """The number of distinct configurations when every parameter takes finitely many
        values (categorical, or discrete with a grid); ``None`` when one is real."""
        if any(b.kind == "real" for b in self.layout):
            return None
        return math.prod(b.n_values for b in self.layout)

    def covered_by(self, U: np.ndarray) -> bool:
        """Whether the cube points ``U`` (rows) hold every configuration of a finite space
        (:attr:`n_configurations`); ``False`` for a space with a real parameter."""
        return _covered(self, U)

    def to_unit(self, params: Mapping[str, Any]) -> np.ndarray:
        """Encode one configuration as a point of the cube.

        Parameters
        ----------
        params : Mapping[str, object]
            A value for every parameter of the space and nothing else. NumPy scalars are
            accepted.

        Returns
        -------
        u : np.ndarray of shape (d,)

        Raises
        ------
        ValueError
            If a parameter is missing or unknown, a numeric value is outside [low, high] or not
            a number, or a categorical value is not among the choices.
        """
        return self.to_unit_many([params])[0]

    def to_unit_many(self, params_list: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Encode several configurations, one per row.

        Parameters
        ----------
        params_list : sequence of Mapping[str, object]
            n configurations, as for :meth:`to_unit`.

        Returns
        -------
        U : np.ndarray of shape (n, d)

        Raises
        ------
        ValueError
            As :meth:`to_unit`; the message names the row and the parameter.
        """
        params_list = list(params_list)
        for row, params in enumerate(params_list):
            self._check_keys(params, row if len(params_list) > 1 else None)
        U = np.empty((len(params_list), self._dim))
        for name, dimension in self._dimensions.items():
            values = [params[name] for params in params_list]
            try:
                U[:, self._slices[name]] = dimension.encode(values)
            except ValueError as err:
                raise ValueError(f"parameter {name!r}: {err}") from None
        return U

    def _check_keys(self, params: Any, row: int | None) -> None:
        where = "" if row is None else f" (row {row})"
        if not isinstance(params, Mapping):
            raise TypeError(
                f"expected a mapping from parameter names to values{where}, "
                f"got {type(params).__name__}."
            )
        missing = [name for name in self._names if name not in params]
        if missing:
            raise ValueError(f"missing value for parameter(s) {missing}{where}.")
        unknown = [name for name in params if name not in self._dimensions]
        if unknown:
            raise ValueError(
                f"unknown parameter(s) {unknown}{where}; the space has {list(self._names)}."
            )

    def _as_points(self, U: Any, ndim: int, method: str) -> np.ndarray:
        U = np.asarray(U, dtype=float)
        expected = f"({self._dim},)" if ndim == 1 else f"(n, {self._dim})"
        if U.ndim != ndim or U.shape[-1] != self._dim:
            raise ValueError(f"{method} expects an array of shape {expected}, got shape {U.shape}.")
        if np.isnan(U).any():
            raise ValueError(f"{method} got NaN coordinates; cube points must be numbers.")
        outside = (U < -_CUBE_TOLERANCE) | (U > 1.0 + _CUBE_TOLERANCE)
        if outside.any():
            position = tuple(int(i) for i in np.argwhere(outside)[0])
            raise ValueError(
                f"{method} got the coordinate {float(U[position])!r} at index {position}, "
                f"outside the unit cube [0, 1] (tolerance {_CUBE_TOLERANCE})."
            )
        return np.clip(U, 0.0, 1.0)

    def from_unit(self, u: np.ndarray) -> dict[str, Any]:
        """Decode one point of the cube into a configuration.

        Parameters
        ----------
        u : array-like of shape (d,)
            A point of [0, 1]^d; coordinates off the cube by rounding error are clipped.

        Returns
        -------
        params : dict
            A valid value for every parameter: ``float`` for a :class:`Real`, ``int`` for an
            :class:`Integer`, the choice itself for a :class:`Categorical`.

        Raises
        ------
        ValueError
            If ``u`` has the wrong shape, contains NaN, or lies outside the cube by more than
            rounding error.
        """
        return self._decode(self._as_points(u, 1, "from_unit")[np.newaxis, :])[0]

    def from_unit_many(self, U: np.ndarray) -> list[dict[str, Any]]:
        """Decode n points of the cube, one per row.

        Parameters
        ----------
        U : array-like of shape (n, d)

        Returns
        -------
        params_list : list of dict
            One configuration per row, as for :meth:`from_unit`.

        Raises
        ------
        ValueError
            As :meth:`from_unit`.
        """
        return self._decode(self._as_points(U, 2, "from_unit_many"))

    def _decode(self, U: np.ndarray) -> list[dict[str, Any]]:
        columns = {
            name: dimension.decode(U[:, self._slices[name]])
            for name, dimension in self._dimensions.items()
        }
        return [{name: columns[name][i] for name in self._names} for i in range(U.shape[0])]

    def snap(self, U: np.ndarray) -> np.ndarray:
        """Map cube points to the canonical encoding of the configurations they decode to.

        This is ``to_unit(from_unit(u))`` row by row, vectorised: discrete coordinates move to
        the centre of their cell, categorical blocks become one-hot, and continuous coordinates
        stay where they are (re-encoding them would only add rounding error). The result
        decodes to the same configuration as ``U`` and is a fixed point of ``snap``.

        Parameters
        ----------
        U : array-like of shape (d,) or (n, d)
            Points of the cube; coordinates off the cube by rounding error are clipped.

        Returns
        -------
        np.ndarray of the same shape as ``U``

        Raises
        ------
        ValueError
            If ``U`` has the wrong shape, contains NaN, or lies outside the cube by more than
            rounding error.
        """
        U = np.asarray(U, dtype=float)
        if U.ndim not in (1, 2):
            raise ValueError(
                f"snap expects shape ({self._dim},) or (n, {self._dim}), got {U.shape}."
            )
        points = self._as_points(U.reshape(-1, U.shape[-1]), 2, "snap")
        snapped = np.empty_like(points)
        for name, dimension in self._dimensions.items():
            columns = self._slices[name]
            snapped[:, columns] = dimension.snap(points[:, columns])
        return snapped.reshape(U.shape)

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> list[dict[str, Any]]:
        """Draw n configurations by decoding uniform points of the cube.

        Real parameters are sampled uniformly (log-uniformly with ``log=True``), integers
        uniformly over their values (log-uniformly over cells with ``log=True``) and categorical
        parameters uniformly over their choices.

        Parameters
        ----------
        n : int
            Number of configurations (zero or more).
        rng : np.random.Generator, int or None, default=None
            A generator, or a seed for ``np.random.default_rng``.

        Returns
        -------
        params_list : list of dict
        """
        return _sample(self, n, rng)

    def to_optuna(self) -> dict[str, Any]:
        """Return the equivalent Optuna search space, name -> distribution.

        Returns
        -------
        dict of str to optuna.distributions.BaseDistribution
        """
        return {name: dimension.to_optuna() for name, dimension in self._dimensions.items()}


class SpaceUnion:
    """Several search spaces searched as one, as ``RandomizedSearchCV`` takes a list of dicts.

    Parameters
    ----------
    spaces : sequence of Mapping
        At least two spaces, each anything :class:`SearchSpace` accepts. A parameter may appear
        in several of them, with different ranges.

    Notes
    -----
    The cube holds a one-hot block that chooses the space, then each space's coordinates in
    order. A point decodes to the chosen space's configuration only, as
    ``RandomizedSearchCV`` draws a dict and then its parameters: the parameters of the other
    spaces are left out (the estimator keeps its own values of them). Their coordinates carry
    nothing, and :meth:`snap` moves them to a fixed point, so that the points of one
    configuration are one point. A uniform point of the cube chooses each space with the same
    probability, then decodes as that space's uniform point does.

    Examples
    --------
    >>> union = SpaceUnion([{"kernel": ["linear"], "C": (0.1, 10.0)},
    ...                     {"kernel": ["rbf"], "gamma": (0.0, 1.0)}])
    >>> union.names
    ('kernel', 'C', 'gamma')
    >>> union.from_unit(union.to_unit({"kernel": "rbf", "gamma": 0.25}))
    {'kernel': 'rbf', 'gamma': 0.25}
    """

    def __init__(self, spaces: Sequence[Mapping[str, Any]]) -> None:
        spaces = list(spaces)
        if len(spaces) < 2:
            raise ValueError(f"SpaceUnion needs at least two spaces, got {len(spaces)}.")
        subs = []
        for i, s in enumerate(spaces):
            try:
                subs.append(SearchSpace(s))
            except (TypeError, ValueError) as err:
                raise type(err)(f"space {i} of the list: {err}") from None
        self.spaces: tuple[SearchSpace, ...] = tuple(subs)
        k = len(subs)
        self._starts = [k + sum(s.dim for s in subs[:i]) for i in range(k)]
        self._dim = k + sum(s.dim for s in subs)
        # the unused spaces' coordinates go to one fixed point: the snap of each one's centre
        self._rest = [s.snap(np.full(s.dim, 0.5)) for s in subs]
        names: dict[str, None] = {}
        for s in subs:
            names.update(dict.fromkeys(s.names))
        self._names = tuple(names)

    def __repr__(self) -> str:
        return f"SpaceUnion({[dict(s) for s in self.spaces]!r})"

    @property
    def names(self) -> tuple[str, ...]:
        """Every parameter of every space, in order of first appearance."""
        return self._names

    @property
    def dim(self) -> int:
        """Number of cube coordinates: one per space, then each space's."""
        return self._dim

    def values(self) -> list[Dimension]:
        """Every space's dimensions."""
        return [d for s in self.spaces for d in s.values()]

    @cached_property
    def layout(self) -> tuple[Block, ...]:
        """The choosing block (categorical), then each space's blocks, shifted."""
        blocks = [Block(0, len(self.spaces), "categorical")]
        for s, start in zip(self.spaces, self._starts, strict=True):
            blocks += [Block(b.start + start, b.stop + start, b.kind, b.grid) for b in s.layout]
        return tuple(blocks)

    @cached_property
    def n_configurations(self) -> int | None:
        """The sum of the spaces' numbers of configurations; ``None`` when one is infinite."""
        counts = [s.n_configurations for s in self.spaces]
        return sum(c for c in counts if c is not None) if None not in counts else None

    def covered_by(self, U: np.ndarray) -> bool:
        """Whether the cube points ``U`` hold every configuration of a finite union."""
        return _covered(self, U)

    def _columns(self, i: int) -> slice:
        return slice(self._starts[i], self._starts[i] + self.spaces[i].dim)

    def to_unit(self, params: Mapping[str, Any]) -> np.ndarray:
        """Encode a configuration in the first space that holds every one of its own
        parameters at the values given (``params`` may name more parameters).

        Raises
        ------
        ValueError
            If no space holds it.
        """
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a mapping, got {type(params).__name__}.")
        for i, s in enumerate(self.spaces):
            if not set(s.names) <= set(params):
                continue
            try:
                inner = s.to_unit({name: params[name] for name in s.names})
            except (TypeError, ValueError):
                continue
            u = np.concatenate([np.eye(len(self.spaces))[i], *self._rest])
            u[self._columns(i)] = inner
            return u
        raise ValueError(f"no space of the list holds {dict(params)!r}.")

    def to_unit_many(self, params_list: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Encode several configurations, one per row (:meth:`to_unit`)."""
        return np.array([self.to_unit(p) for p in params_list]).reshape(-1, self._dim)

    def _chosen(self, U: np.ndarray) -> np.ndarray:
        return np.argmax(U[:, : len(self.spaces)], axis=1)

    def from_unit(self, u: np.ndarray) -> dict[str, Any]:
        """Decode one point: the chosen space's configuration."""
        return self.from_unit_many(np.asarray(u, dtype=float).reshape(1, -1))[0]

    def from_unit_many(self, U: np.ndarray) -> list[dict[str, Any]]:
        """Decode n points, one per row (:meth:`from_unit`)."""
        U = np.asarray(U, dtype=float)
        if U.ndim != 2 or U.shape[1] != self._dim:
            raise ValueError(f"expected points of {self._dim} coordinates, got shape {U.shape}.")
        return [
            self.spaces[i].from_unit(u[self._columns(i)])
            for u, i in zip(U, self._chosen(U), strict=True)
        ]

    def snap(self, U: np.ndarray) -> np.ndarray:
        """The canonical encoding of each point's configuration: the choice one-hot, the
        chosen space's coordinates snapped, the others at their fixed point."""
        U = np.asarray(U, dtype=float)
        rows = np.atleast_2d(U)
        out = np.empty_like(rows)
        k = len(self.spaces)
        chosen = self._chosen(rows)
        out[:, :k] = np.eye(k)[chosen]
        for i, s in enumerate(self.spaces):
            cols = self._columns(i)
            out[:, cols] = self._rest[i]
            mine = chosen == i
            if mine.any():
                out[mine, cols] = s.snap(rows[mine, cols])
        return out.reshape(U.shape)

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> list[dict[str, Any]]:
        """Draw n configurations: each a uniform choice of space, then that space's draw."""
        return _sample(self, n, rng)


Space = SearchSpace | SpaceUnion
"""What a search searches: one space, or a union of several."""


def _covered(space: Space, U: np.ndarray) -> bool:
    """Whether the points ``U`` snap to at least ``space.n_configurations`` distinct points."""
    n = space.n_configurations
    U = np.asarray(U, dtype=float).reshape(-1, space.dim)
    return n is not None and len({u.tobytes() for u in space.snap(U)}) >= n


def _sample(space: Space, n: int, rng: np.random.Generator | int | None) -> list[dict[str, Any]]:
    """``n`` configurations decoded from uniform points of ``space``'s cube."""
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"`n` must be non-negative, got {n}.")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return space.from_unit_many(rng.random((n, space.dim)))


def as_space(spec: Any) -> Space:
    """A search space from what a search takes: a mapping, or a list of mappings.

    Parameters
    ----------
    spec : Mapping or list of Mapping
        One space (anything :class:`SearchSpace` accepts), or a list of them, as
        ``RandomizedSearchCV`` takes ``param_distributions``: a list of one is that space, of
        several a :class:`SpaceUnion`.

    Returns
    -------
    SearchSpace or SpaceUnion
    """
    if isinstance(spec, list):
        if not spec:
            raise ValueError("space is an empty list; give a dict, or a list of dicts.")
        for i, s in enumerate(spec):
            if not isinstance(s, Mapping):
                raise TypeError(
                    f"space[{i}] is a {type(s).__name__}; a list given as space holds dicts "
                    "(one space each), as RandomizedSearchCV's param_distributions does."
                )
        return SearchSpace(spec[0]) if len(spec) == 1 else SpaceUnion(spec)
    return SearchSpace(spec)
