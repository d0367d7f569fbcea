"""The Bayesian optimization of a search that evaluates candidates in batches.

A search (:class:`privtune.PrivateBOSearchCV`) evaluates its candidates in rounds: a batch is
proposed, evaluated together (cross-validated in parallel), and the results come back as one
score per candidate. :class:`BatchOptimization` is that search's model side, with no knowledge
of scikit-learn: what the optimizer was told (one row per proposal: its point in the unit cube,
its score, its row among the evaluated candidates), the next proposals, and the pick.

The untuned estimator is evaluated first. When its values lie in the space it is the first
proposal and the model learns from it; when they do not (a ``None``, a value outside a range or
off a step grid) it is an arm outside the cube, evaluated all the same and not told to the
model: the pick keeps it unless a told point beats it with posterior probability
:func:`~privtune.acquisition.baseline_level` (``1 - 0.05 / m`` for ``m`` told points), judged
from its released score and the known noise of that release
(:meth:`privtune.tuning.TuningEngine.recommend`).

Notation
--------
U: proposals in the unit cube, shape (n_rows, dim).
values: their scores as the search reports them (released with privacy), shape (n_rows,);
    NaN for a failure, told as the lowest reward of the scale.
candidate: each row's index among the evaluated candidates, shape (n_rows,); -1 for a batch
    that left no result (every fit failed).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .privacy.seeds import draw_seed, stream_seed
from .registry import PrivacyModel
from .space import Space
from .tuning import OutsideArm, TuningEngine

__all__ = ["BatchOptimization", "default_point"]


class BatchOptimization:
    """What a batch search's optimizer was told, its next proposals and its pick.

    Parameters
    ----------
    engine : TuningEngine
    space : SearchSpace or SpaceUnion
    seed : int
        Seed of the optimizer and of the proposals.
    noise_seed : int, optional
        The qff algorithms' own privacy-noise seed (kept by every rebuild).
    default_u : ndarray of shape (dim,), optional
        The untuned estimator's point when its values lie in the space: the first proposal.
    default_params : dict, optional
        The untuned estimator's values (an arm outside the cube when ``default_u`` is
        ``None``).
    """

    def __init__(
        self,
        engine: TuningEngine,
        space: Space,
        *,
        seed: int,
        noise_seed: int | None = None,
        default_u: np.ndarray | None = None,
        default_params: dict | None = None,
    ) -> None:
        self.engine = engine
        self.space = space
        self.seed = int(seed)
        self.noise_seed = noise_seed
        self.default_u = default_u
        self.default_params = default_params
        self.U = np.zeros((0, space.dim))
        self.values = np.zeros(0)
        self.candidate = np.zeros(0, dtype=int)
        #: What made each told row's proposal (:attr:`BaseOptimizer.turn`; ``"untuned"`` for
        #: the untuned estimator's point), parallel to :attr:`U`.
        self.turns: list[str] = []
        self._asked: list[str] = []  # the last proposals' turns, until they are recorded
        #: The candidate index of the untuned estimator when it lies outside the cube (an arm
        #: the optimizer is not told), else ``None``.
        self.outside: int | None = None

    @classmethod
    def start(
        cls,
        engine: TuningEngine,
        space: Space,
        *,
        seed: int | None,
        noise_seed: int | None,
        default_params: dict | None,
    ) -> BatchOptimization:
        """One fit's optimization: seeded by ``seed`` (fresh entropy for ``None``); for the
        qff algorithms (local joint DP), their own privacy noise seeded once per fit from
        ``noise_seed`` (fresh for ``None``); the untuned estimator's values
        ``default_params`` as the first proposal when they lie in the space."""
        noise = None
        if engine.privacy == PrivacyModel.LOCAL_JDP:
            noise = draw_seed() if noise_seed is None else stream_seed(noise_seed, "fit")
        default_u = None if default_params is None else default_point(space, default_params)
        seed = draw_seed() if seed is None else seed
        return cls(
            engine,
            space,
            seed=seed,
            noise_seed=noise,
            default_u=default_u,
            default_params=default_params,
        )

    @property
    def default_outside(self) -> bool:
        """Whether the untuned estimator is evaluated as an arm outside the cube."""
        return self.default_params is not None and self.default_u is None

    def params_at(self, u: np.ndarray) -> dict:
        """The configuration at cube point ``u``; at the untuned estimator's point, its own
        values as the estimator holds them (a log scale's decoding of ``1e-4`` is
        ``1.0000000000000009e-4``, which would read as a tuned value)."""
        params = self.space.from_unit(u)
        if self.default_u is not None and np.array_equal(u, self.default_u):
            assert self.default_params is not None
            params = {name: self.default_params[name] for name in params}
        return params

    def n_candidates(self, n_iter: int, *, repeats_help: bool) -> int:
        """``n_iter``, or the number of distinct candidates (the space's configurations and
        the arm outside it) when a repeat tells nothing new (``repeats_help`` false: exact
        scores) and the space has fewer, with scikit-learn's ``RandomizedSearchCV`` warning.
        Under privacy a repeat is a fresh noisy report, so every candidate is kept."""
        n_space = self.space.n_configurations
        n_distinct = None if n_space is None else n_space + int(self.default_outside)
        if repeats_help or n_distinct is None or n_iter <= n_distinct:
            return n_iter
        warnings.warn(
            f"The total space of parameters {n_space} is smaller than n_iter={n_iter}. "
            f"Running {n_distinct} iterations. For exhaustive searches, use GridSearchCV.",
            UserWarning,
            stacklevel=7,  # the user's fit: through the search's run and fit
        )
        return n_distinct

    def batch(self, r: int, q: int, size: int) -> tuple[list[np.ndarray], list[dict], int]:
        """Round ``r``'s candidates (``q`` per round, ``size`` in this one): the untuned
        estimator first when it is an arm outside the cube (round 0), then the proposals.

        Returns
        -------
        (U, candidates, n_extra)
            The proposals' cube points, every candidate's parameters, and how many arms
            outside the cube come first (for :meth:`record`).
        """
        extra = [self.default_params] if self.default_outside and r == 0 else []
        U = self.propose(r * q, size - len(extra))
        candidates = [*(p for p in extra if p is not None), *(self.params_at(u) for u in U)]
        return U, candidates, len(extra)

    def __len__(self) -> int:
        return len(self.values)

    # -- what was told ------------------------------------------------------------------------
    def record(self, U, scores, n_extra: int = 0) -> None:
        """Record a batch: ``scores`` is every evaluated candidate's score so far, the batch's
        last; ``n_extra`` arms outside the cube (the untuned estimator) came before ``U``."""
        scores = np.asarray(scores, dtype=float)
        n, k = len(scores), len(U)
        if n_extra:
            self.outside = n - k - 1
        if k:
            self._add(U, scores[n - k :], np.arange(n - k, n))

    def record_failed(self, U) -> None:
        """Record a batch whose every fit failed (no candidate row): each told the penalty."""
        if len(U):
            self._add(U, np.full(len(U), np.nan), np.full(len(U), -1))

    def _add(self, U, scores, candidates) -> None:
        if len(self._asked) != len(U):
            raise RuntimeError(
                f"{len(U)} points recorded where the last proposal made {len(self._asked)}: "
                "record the points batch() returned, once."
            )
        self.turns += self._asked
        self._asked = []
        self.U = np.vstack([self.U, np.asarray(U, dtype=float)])
        self.values = np.concatenate([self.values, np.asarray(scores, dtype=float)])
        self.candidate = np.concatenate([self.candidate, np.asarray(candidates, dtype=int)])

    @property
    def best(self) -> float:
        """The best finite score told so far (``-inf`` for none)."""
        finite = self.values[np.isfinite(self.values)]
        return float(finite.max()) if finite.size else -math.inf

    def has_finite(self, scores) -> bool:
        """Whether some candidate, the arm outside the cube included, has a finite score."""
        if np.isfinite(self.values).any():
            return True
        return self.outside is not None and bool(np.isfinite(float(scores[self.outside])))

    # -- the model ----------------------------------------------------------------------------
    def synced(self):
        """The engine's optimizer told the history so far, and its reward scale."""
        return self.engine.sync(
            "fit",
            self.space,
            list(range(len(self))),
            self.U,
            self.values,
            failed=~np.isfinite(self.values),  # a failure's penalty, told as an exact value
            seed=self.seed,
            noise_seed=self.noise_seed,
        )

    def propose(self, n_proposed: int, size: int) -> list[np.ndarray]:
        """The next ``size`` proposals (``n_proposed`` came before); the untuned estimator's
        point, when it lies in the space, is the first of all."""
        opt, _ = self.synced()
        first = n_proposed == 0
        U = [self.default_u] if first and self.default_u is not None and size else []
        self._asked = ["untuned"] * len(U)
        for j in range(len(U), size):
            pending = np.array(U) if first and U else None  # asked ones are pending already
            key = [self.seed, n_proposed + j]
            u = self.engine.ask(self.space, opt, n_told=len(self) + j, key=key, pending=pending)
            U.append(self.space.snap(u))  # one point per configuration (a union's spaces)
            self._asked.append(str(opt.turn))
        return U

    def turn_column(self, n_candidates: int) -> np.ndarray:
        """What made each of ``n_candidates`` candidates (``cv_results_["turn"]``): the
        optimizer's :attr:`~privtune.optimizers.base.BaseOptimizer.turn` for its proposals,
        ``"untuned"`` for the untuned estimator (its point or the arm outside the cube)."""
        column = np.full(n_candidates, "", dtype=object)
        rows = np.flatnonzero((self.candidate >= 0) & (self.candidate < n_candidates))
        column[self.candidate[rows]] = [self.turns[i] for i in rows]
        if self.outside is not None:
            column[self.outside] = "untuned"
        return column

    def recommend(self, scores, noise_var: float) -> tuple[np.ndarray, int]:
        """Every candidate's posterior mean (score units; NaN for a failed one) and the pick.

        The engine's recommendation among the candidates with a finite score. The untuned
        estimator is the baseline, kept unless a candidate beats it with posterior probability
        :func:`~privtune.acquisition.baseline_level`: inside the cube it is row 0; outside it
        is an arm whose value is its score with noise variance ``noise_var`` (score units).

        Parameters
        ----------
        scores : array_like of shape (n_candidates,)
            Every evaluated candidate's score (released, with privacy).
        noise_var : float
            The variance of a score's noise (0 for exact scores).
        """
        scores = np.asarray(scores, dtype=float)
        posterior = np.full(len(scores), np.nan)
        rows = np.flatnonzero((self.candidate >= 0) & (self.candidate < len(scores)))
        eligible = np.zeros(len(self), dtype=bool)
        eligible[rows] = np.isfinite(scores[self.candidate[rows]])  # a failure is not a pick
        arm = None if self.outside is None else OutsideArm(float(scores[self.outside]), noise_var)
        if arm is not None:
            posterior[self.outside] = arm.score if np.isfinite(arm.score) else np.nan
        opt, scale = self.synced() if eligible.any() else (None, None)
        if opt is not None:
            assert scale is not None
            posterior[self.candidate[eligible]] = self.engine.posterior_scores(
                opt, scale, self.U[eligible]
            )
        inside = self.default_u is not None and bool(eligible[0]) and arm is None
        row = self.engine.recommend(
            opt, scale, baseline=0 if inside else None, outside=arm, eligible=eligible
        )
        if row < 0:
            assert self.outside is not None
            return posterior, self.outside
        return posterior, int(self.candidate[row])


def default_point(space: Space, values: dict) -> np.ndarray | None:
    """The point of ``values`` (an estimator's own parameters) in ``space``'s cube when each
    decodes to itself; ``None`` when one lies outside the space (a ``None`` where the space has
    numbers, a value outside a range or off a step grid, a choice not listed)."""
    try:
        u = space.to_unit(values)
    except (TypeError, ValueError):
        return None
    # a union decodes to one of its spaces' parameters; the estimator keeps the others
    for name, back in space.from_unit(u).items():
        value = values[name]
        numeric = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not (back == value or (numeric and math.isclose(back, value, rel_tol=1e-9))):
            return None
    return u
