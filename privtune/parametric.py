"""Parametric function families ``f_w(x)`` for GO-UCB (Liu & Wang 2023).

GO-UCB models the objective as ``f_{w*}(x)`` for a member of a differentiable family and needs,
for batches of points, the values ``f_w(x)``, the parameter gradients ``grad_w f_x(w)`` (they
build ``Sigma_t``, eq. 3) and the input gradients ``grad_x f_w(x)`` (the joint maximisation over
``x`` and ``w``, Algorithm 1, Phase II, step 5). :class:`ParametricModel` is that protocol;
:class:`TwoLayerNetwork` is the paper's family, ``linear2(sigmoid(linear1(x)))`` (Sec. 6), with
analytic gradients in numpy.

Notation
--------
X   : (n, d_x)         points in the unit cube
w   : (d_w,) or (n, d_w)  parameters, one vector for every row or one per row
d_x : input dimension (``dim``)
d_w : number of parameters (``n_params``)
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
from scipy import special

from ._checks import check_int

__all__ = ["ParametricModel", "TwoLayerNetwork", "check_model"]


@runtime_checkable
class ParametricModel(Protocol):
    """What GO-UCB needs from a parametric family ``{f_w : w in R^{d_w}}`` on ``[0, 1]^dim``.

    Every method takes a batch ``X`` of shape ``(n, dim)`` and parameters ``w`` of shape
    ``(n_params,)`` (the same for every row) or ``(n, n_params)`` (one per row).

    Attributes
    ----------
    dim : int
        Input dimension ``d_x``.
    n_params : int
        Number of parameters ``d_w``.
    """

    dim: int
    n_params: int

    def value(self, X: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``f_w(x)`` for every row, shape ``(n,)``."""
        ...

    def grad_w(self, X: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``grad_w f_x(w)`` for every row, shape ``(n, n_params)``."""
        ...

    def grad_x(self, X: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``grad_x f_w(x)`` for every row, shape ``(n, dim)``."""
        ...

    def init_params(self, rng: np.random.Generator) -> np.ndarray:
        """A random starting point of the regression oracle, shape ``(n_params,)``."""
        ...


class TwoLayerNetwork:
    """``f_w(x) = w_2^T sigmoid(W_1 x + b_1) + b_2``: the paper's ``linear2(sigmoid(linear1(x)))``.

    Liu & Wang (2023, Sec. 6) use ``hidden = 25`` units. The parameter vector is
    ``w = [vec(W_1), b_1, w_2, b_2]`` (``W_1`` row-major, shape ``(hidden, dim)``), so
    ``n_params = hidden * (dim + 2) + 1``.

    Parameters
    ----------
    dim : int
        Input dimension ``d_x >= 1``.
    hidden : int, default=25
        Number of hidden units, ``>= 1``.

    Examples
    --------
    >>> import numpy as np
    >>> net = TwoLayerNetwork(dim=2, hidden=3)
    >>> net.n_params
    13
    >>> net.value(np.zeros((1, 2)), np.ones(13))  # 3 * sigmoid(1) + 1
    array([3.19317574])
    """

    def __init__(self, dim: int, hidden: int = 25) -> None:
        self.dim = check_int("dim", dim)
        self.hidden = check_int("hidden", hidden)
        self.n_params = self.hidden * (self.dim + 2) + 1

    def unpack(self, w: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(W_1, b_1, w_2, b_2)`` of ``w`` with a leading batch axis when ``w`` is 2-D."""
        w = np.asarray(w, dtype=float)
        h, d = self.hidden, self.dim
        lead = w.shape[:-1]
        W1 = w[..., : h * d].reshape(*lead, h, d)
        b1 = w[..., h * d : h * (d + 1)]
        w2 = w[..., h * (d + 1) : h * (d + 2)]
        b2 = w[..., -1]
        return W1, b1, w2, b2

    def _hidden(self, X: np.ndarray, w: np.ndarray):
        W1, b1, w2, b2 = self.unpack(w)
        if W1.ndim == 2:
            a = X @ W1.T + b1
        else:
            a = np.einsum("nhd,nd->nh", W1, X) + b1
        s = special.expit(a)
        return W1, w2, b2, s

    def value(self, X: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``f_w(x)`` for every row of ``X``, shape ``(n,)``."""
        _, w2, b2, s = self._hidden(X, w)
        return np.sum(s * w2, axis=-1) + b2

    def grad_w(self, X: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``grad_w f_x(w)`` for every row of ``X``, shape ``(n, n_params)``."""
        _, w2, _, s = self._hidden(X, w)
        n = X.shape[0]
        delta = s * (1.0 - s) * w2  # d f / d a, (n, hidden)
        dW1 = delta[:, :, None] * X[:, None, :]
        return np.concatenate(
            [dW1.reshape(n, -1), delta, s, np.ones((n, 1))],
            axis=1,
        )

    def grad_x(self, X: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``grad_x f_w(x)`` for every row of ``X``, shape ``(n, dim)``."""
        W1, w2, _, s = self._hidden(X, w)
        delta = s * (1.0 - s) * w2
        if W1.ndim == 2:
            return delta @ W1
        return np.einsum("nh,nhd->nd", delta, W1)

    def init_params(self, rng: np.random.Generator) -> np.ndarray:
        """PyTorch's default initialisation of ``nn.Linear``: ``U(-1/sqrt(fan_in), +)``."""
        h, d = self.hidden, self.dim
        a1, a2 = 1.0 / np.sqrt(d), 1.0 / np.sqrt(h)
        return np.concatenate([rng.uniform(-a1, a1, h * d + h), rng.uniform(-a2, a2, h + 1)])

    def __repr__(self) -> str:
        return f"TwoLayerNetwork(dim={self.dim}, hidden={self.hidden})"


def check_model(model, dim: int) -> ParametricModel:
    """Validate a parametric model against ``dim`` by evaluating it at two probe points.

    Parameters
    ----------
    model : ParametricModel
        The family to check.
    dim : int
        The optimizer's dimension.

    Returns
    -------
    ParametricModel
        ``model``, unchanged.

    Raises
    ------
    TypeError
        When a method of the protocol is missing.
    ValueError
        When its dimension differs from ``dim`` or an output has the wrong shape (a gradient
        whose length disagrees with ``n_params``, for instance).
    """
    missing = [m for m in ("value", "grad_w", "grad_x", "init_params") if not hasattr(model, m)]
    if missing or not hasattr(model, "n_params") or not hasattr(model, "dim"):
        raise TypeError(
            "model must provide dim, n_params, value(X, w), grad_w(X, w), grad_x(X, w) and "
            f"init_params(rng) (the ParametricModel protocol); {type(model).__name__} lacks "
            f"{missing or ['dim or n_params']}."
        )
    if int(model.dim) != dim:
        raise ValueError(f"model.dim is {model.dim}, but the optimizer's dim is {dim}.")
    p = int(model.n_params)
    if p < 1:
        raise ValueError(f"model.n_params must be >= 1, got {model.n_params!r}.")
    rng = np.random.default_rng(0)
    w = np.asarray(model.init_params(rng), dtype=float)
    if w.shape != (p,):
        raise ValueError(f"model.init_params returned shape {w.shape}; n_params={p} needs ({p},).")
    X = rng.random((2, dim))
    shapes = {
        "value": ((2,), model.value(X, w)),
        "grad_w": ((2, p), model.grad_w(X, w)),
        "grad_x": ((2, dim), model.grad_x(X, w)),
    }
    for name, (want, out) in shapes.items():
        got = np.shape(out)
        if got != want:
            raise ValueError(
                f"model.{name} returned shape {got} for 2 points; expected {want} "
                f"(n_params={p}, dim={dim})."
            )
    return model
