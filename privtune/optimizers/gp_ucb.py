"""Exact-GP optimizers: GP-UCB, TGP-UCB (truncated rewards) and random search.

- :class:`GPUCB` — IGP-UCB of Chowdhury & Gopalan (2017), the non-private sub-Gaussian baseline.
- :class:`TGPUCB` — Algorithm 2 of Zhou & Tan (2021), LDP-TGP-UCB: each privatized reward is
  truncated once, ``y_hat_t = y_bar_t 1{|y_bar_t| <= b_t}`` with ``b_t = B + R + L ln t`` and
  ``L = 2 (B + R) / epsilon``; with ``epsilon=None``, the heavy-tailed TGP-UCB of Chowdhury &
  Gopalan (2019), truncating at ``b_t = v^{1/(1+alpha)} t^{1/(2(1+alpha))}``.
- :class:`RandomSearch` — uniform proposals, with the same GP posterior for ``predict`` and
  ``recommend`` (so a private random search and private BO pick by the same rule).

The GP posterior is :class:`privtune.gp.GaussianProcess`: with ``surrogate="fixed"`` the
papers' eqs. 2-3 (zero mean, ``K_t + lambda I``), with ``surrogate="fitted"`` the fitted ARD
model with each reward's known noise variance. Its Cholesky factor grows by one row per reward
(O(t^2) per update) between refits of the hyperparameters.

Notation
--------
y_used : (t,)    the (possibly truncated) rewards the model learns from
gamma_t          empirical information gain 1/2 ln det(I + K_t / noise), the computable stand-in
                 for the maximum information gain gamma_t of the theorems
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..gp import GaussianProcess
from .base import REPEAT_AGREEMENT, KernelOptimizer, check_alpha

__all__ = ["GPUCB", "TGPUCB", "RandomSearch"]


class _ExactGPOptimizer(KernelOptimizer):
    """Shared machinery of the exact-GP optimizers."""

    def __init__(self, dim: int, **kwargs) -> None:
        super().__init__(dim, **kwargs)
        self._gp = self._new_gp()
        self._y_used: list[float] = []
        self._told: set[bytes] = set()  # the configurations told so far

    def _new_gp(self) -> GaussianProcess:
        self._built_df = self.likelihood_df
        if self.surrogate == "fitted":
            return GaussianProcess.fitted(
                self.dim,
                self.layout,
                self.priors,
                student_t_df=self._built_df,
                agreement=(
                    REPEAT_AGREEMENT
                    if self._built_df and self.repeat_discounted_best is not None
                    else None
                ),
                input_warping=self.input_warping,
                output_warping=self.output_warping,
            )
        return GaussianProcess.fixed(self.dim, self.kernel, self.lam)

    def _transform_reward(self, y: float, t: int) -> float:
        """The reward the model learns from at round ``t >= 1`` (identity unless truncating)."""
        return y

    def _observe(self, x: np.ndarray, y: float) -> None:
        y_used = self._transform_reward(y, self.t)
        self._y_used.append(y_used)
        self._gp.add(x, y_used, self._v[-1])
        key = x.tobytes()
        # only a repeated configuration can show a disagreement (the scores are noisy)
        if key in self._told and self.likelihood_df != self._built_df:
            self._rebuild()
        self._told.add(key)

    def _propose(self, C, P):
        x = self._discounted_best(C, P)
        if x is None:
            return super()._propose(C, P)
        self.turn = "repeat"
        return x

    def _discounted_best(self, C: np.ndarray | None, P: np.ndarray | None) -> np.ndarray | None:
        """The best told configuration again when ``repeat_discounted_best`` asks for it: the
        Student-t likelihood discounts its reward by more than that multiplier, it was told
        once, and it is not being evaluated; otherwise ``None``."""
        if (
            self.repeat_discounted_best is None
            or self._uniform
            or C is not None
            or not self._built_df
            or any(self._v)
            or self.t < 2
        ):
            return None
        best = int(np.argmax(self._y_used))
        x = self.X[best]
        key = x.tobytes()
        if sum(row.tobytes() == key for row in self.X) > 1:
            return None
        if P is not None and any(p.tobytes() == key for p in P):
            return None
        if self._gp.nugget_multipliers[best] <= self.repeat_discounted_best:
            return None
        return x.copy()

    def _posterior(self, X, P):
        return self._gp.posterior(X, P)

    def _posterior_given(self, P):
        return self._gp.posterior if P is None else self._gp.with_pending(P, self._lie())

    def _mean(self, X):
        return self._gp.mean(X)

    def _posterior_grad(self, z):
        return self._gp.posterior_grad(z)

    def _difference(self, X, x0):
        return self._gp.difference(X, x0)

    def _block_lengthscales(self):
        if self.surrogate != "fitted" or self.t < 2:
            return None
        return getattr(self._gp.hyper.kernel, "lengthscales", None)

    def model_skill(self) -> float | None:
        return self._gp.loo_skill() if self.surrogate == "fitted" else None

    def signal_share(self) -> float | None:
        if self.surrogate != "fitted" or self.t < 2:
            return None
        h = self._gp.hyper
        noise = float(np.mean(self._gp.noise_var)) / h.scale**2 + h.nugget
        return float(h.signal_var / (h.signal_var + noise))

    def fitted_noise_var(self) -> np.ndarray | None:
        if self.surrogate != "fitted" or self.t < 2:
            return None
        return self._gp.fitted_noise_var()

    def rescale(self, a: float, b: float) -> bool:
        # The fitted model standardises its rewards: an affine map of exact rewards moves the
        # standardisation and nothing else. Not the papers' fixed model, not a truncation, not
        # known noise variances (reward units).
        untruncated = type(self)._transform_reward is _ExactGPOptimizer._transform_reward
        if not (a > 0 and self.surrogate == "fitted" and untruncated and not any(self._v)):
            return False
        if not self._gp.rescale(a, b):
            return False
        self._y = [a * y + b for y in self._y]
        self._y_used = [a * y + b for y in self._y_used]
        return True

    def _rebuild(self) -> None:
        self._gp = self._new_gp()
        for x, y_used, v in zip(self._X, self._y_used, self._v, strict=True):
            self._gp.add(x, y_used, v)

    @property
    def gamma_t(self) -> float:
        """Empirical information gain of the told points (the stand-in for ``gamma_t``)."""
        return self._gp.gamma


class GPUCB(_ExactGPOptimizer):
    """Exact GP-UCB (IGP-UCB of Chowdhury & Gopalan 2017): the non-private baseline.

    ``x_t = argmax mu_{t-1}(x) + beta_t sigma_{t-1}(x)`` with
    ``beta_t = B + R sqrt(2 (gamma_{t-1} + 1 + ln(1/delta)))``, ``gamma`` being the empirical
    information gain of the told points. Privacy model: none (it learns from whatever it is
    told; with privatized rewards it is a baseline, not one of the paper's algorithms).

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    **kwargs
        ``epsilon`` (the curator's epsilon: the LDP version; ``None``: the non-private one),
        ``beta_scale`` (default: the class attribute ``default_beta_scale``, calibrated as
        described in the optimizers guide), ``kernel``, ``lam``, ``delta``, ``B``, ``R``,
        ``seed``, ... as in :class:`~privtune.optimizers.base.KernelOptimizer`.

    Examples
    --------
    >>> import numpy as np
    >>> from privtune.optimizers import GPUCB
    >>> opt = GPUCB(dim=1, seed=0)
    >>> for _ in range(5):
    ...     x = opt.ask()
    ...     opt.tell(x, -float((x[0] - 0.3) ** 2))
    >>> opt.recommend().shape
    (1,)
    """

    default_beta_scale = 0.2
    #: The arguments that enter nothing but ``beta_t`` (an acquisition that does not read
    #: ``beta_t``, such as log-EI, makes them inert; the tuning layer refuses them then).
    beta_only = ("B", "R", "delta")

    def beta_t(self) -> float:
        return self.B + self.R * math.sqrt(2.0 * (self.gamma_t + 1.0 + math.log(1.0 / self.delta)))


class TGPUCB(_ExactGPOptimizer):
    """TGP-UCB: GP-UCB on rewards truncated once (Zhou & Tan 2021, Algorithm 2).

    With ``epsilon`` set this is LDP-TGP-UCB, for rewards privatized by CTL(epsilon):

    - ``L = 2 (B + R) / epsilon`` (the curator's Laplace scale), ``K = B^2 + R^2 + 2 L^2``;
    - ``b_t = B + R + L ln t`` (line 4), ``y_hat_t = y_bar_t 1{|y_bar_t| <= b_t}`` (line 8);
    - ``beta_t = B + 2 sqrt(2/lam) b_{t-1} sqrt(gamma_{t-1} + ln(1/delta))
      + sqrt(K (ln(t-1) + 1) / lam)`` (line 5).

    With ``epsilon=None`` it is the non-private TGP-UCB of Chowdhury & Gopalan (2019) for
    rewards with a bounded ``(1+alpha)``-th moment ``E|y|^{1+alpha} <= v``:
    ``b_t = v^{1/(1+alpha)} t^{1/(2(1+alpha))}``, and ``beta_t`` has the same two terms as
    above, the bias term being ``sqrt(sum_{tau<t} (v / b_tau^alpha)^2 / lam)`` (the bound on
    ``E[y 1{|y| > b}]`` that the same proof decomposition gives for a (1+alpha)-th moment).

    With ``surrogate="fitted"`` the truncation is relative to the surrogate's fitted constant
    mean ``c`` (as fitted before the reward): ``y_hat_t = y_bar_t`` if ``|y_bar_t - c| <= b_t``,
    else ``c``, so a truncated reward carries no information instead of pulling the model
    towards an arbitrary 0; the fixed model's ``c`` is 0, which is line 8 as written. Since
    each reward needs the fit to the rewards before it, telling rewards without asking in
    between (or replaying a study in a new worker) costs one fit per reward while fits run at
    every tell (up to 100 rewards), where ``GPUCB`` needs one.

    ``gamma_{t-1}`` is the empirical information gain of the told points. Privacy model: the
    algorithm sees only privatized rewards; it adds no privacy of its own (ε-LDP comes from the
    curator, docs/privacy.md).

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    alpha : float, default=1.0
        Moment order of the non-private version, in (0, 1].
    v : float, optional
        Bound on ``E|y|^{1+alpha}`` (non-private version); default ``B^2 + R^2``.
    **kwargs
        ``epsilon`` (the curator's epsilon: the LDP version; ``None``: the non-private one),
        ``beta_scale`` (default: the class attribute ``default_beta_scale``, calibrated as
        described in the optimizers guide), ``kernel``, ``lam``, ``delta``, ``B``, ``R``,
        ``seed``, ... as in :class:`~privtune.optimizers.base.KernelOptimizer`.
    """

    default_beta_scale = 0.0005

    #: ``delta`` enters ``beta_t`` only (``B`` and ``R`` set the truncation as well).
    beta_only = ("delta",)

    def __init__(
        self,
        dim: int,
        *,
        alpha: float = 1.0,
        v: float | None = None,
        **kwargs,
    ) -> None:
        super().__init__(dim, **kwargs)
        self.alpha = check_alpha(alpha)
        self.v = float(self.B**2 + self.R**2 if v is None else v)
        if self.v <= 0:
            raise ValueError(f"v must be > 0, got {v!r}.")
        self._bias_sq = 0.0  # sum over told rounds of (v / b_tau^alpha)^2, non-private

    @property
    def L(self) -> float:
        """Laplace scale ``2 (B + R) / epsilon`` of the curator (LDP version)."""
        if self.epsilon is None:
            raise AttributeError("L is defined for the LDP version only (epsilon is None).")
        return 2.0 * (self.B + self.R) / self.epsilon

    def b_t(self, t: int) -> float:
        """Truncation level ``b_t`` for round ``t >= 1`` (``ln 0`` is read as 0)."""
        t = max(int(t), 1)
        if self.epsilon is not None:
            return self.B + self.R + self.L * math.log(t)
        return self.v ** (1.0 / (1.0 + self.alpha)) * t ** (1.0 / (2.0 * (1.0 + self.alpha)))

    def b(self, t: int) -> float:
        """Deprecated alias of :meth:`b_t` (the name of ATA-GP-UCB's and the papers'), for one
        release."""
        warnings.warn(
            "TGPUCB.b is renamed TGPUCB.b_t; the old name will be removed in the next release.",
            FutureWarning,
            stacklevel=2,
        )
        return self.b_t(t)

    def _transform_reward(self, y: float, t: int) -> float:
        b_t = self.b_t(t)
        if self.epsilon is None:
            self._bias_sq += (self.v / b_t**self.alpha) ** 2
        centre = self._gp.centre
        return y if abs(y - centre) <= b_t else centre

    def beta_t(self) -> float:
        t = self.t + 1  # the round the next ask plays
        b_prev = self.b_t(t - 1)
        width = (
            2.0
            * math.sqrt(2.0 / self.lam)
            * b_prev
            * math.sqrt(self.gamma_t + math.log(1.0 / self.delta))
        )
        if self.epsilon is not None:
            K = self.B**2 + self.R**2 + 2.0 * self.L**2
            bias = math.sqrt(K * (math.log(max(t - 1, 1)) + 1.0) / self.lam)
        else:
            bias = math.sqrt(self._bias_sq / self.lam)
        return self.B + width + bias

    def _rebuild(self) -> None:
        self._bias_sq = 0.0
        self._gp = self._new_gp()
        self._y_used = []
        for i, (x, y, v) in enumerate(zip(self._X, self._y, self._v, strict=True), start=1):
            self._y_used.append(self._transform_reward(y, i))
            self._gp.add(x, self._y_used[-1], v)


class RandomSearch(_ExactGPOptimizer):
    """Uniform random search with the exact GP posterior for ``predict`` and ``recommend``.

    The baseline every private method must beat: it spends the same privacy budget per report
    and recommends by the same rule (best posterior mean among evaluated points).

    Parameters
    ----------
    dim : int
        Dimension of the unit cube.
    **kwargs
        ``kernel``, ``lam``, ``seed``, ``snap``, ... as in
        :class:`~privtune.optimizers.base.KernelOptimizer`.
    """

    #: Uniform proposals read no ``beta_t``: its arguments (and ``beta_scale``) are inert
    #: whatever the acquisition.
    beta_only = ("B", "R", "delta")
    proposes_uniformly = True

    def __init__(self, dim: int, **kwargs) -> None:
        super().__init__(dim, **kwargs)
        if self.repeat_discounted_best is not None:  # its proposals never read the model
            raise ValueError(
                "repeat_discounted_best picks the next proposal from the model's discounts; "
                "RandomSearch proposes uniformly and does not use it."
            )

    def beta_t(self) -> float:
        return 0.0

    def _propose(self, C, P):
        self.turn = "uniform"
        return self._uniform_point(C)
