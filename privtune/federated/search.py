"""Federated hyperparameter tuning: N parties tune one scikit-learn estimator with DP-FTS-DE.

Each party holds its own ``(X_n, y_n)``, splits it once into a training and a validation part,
and is one agent of DP-FTS-DE (:class:`~privtune.federated.FTSAgent`): its objective fits the
estimator with the proposed parameters on its training part and scores it on its validation
part. What leaves a party is only its vector ``omega_{n,t}``, sent to the server, which
broadcasts the privatized aggregate (:class:`~privtune.federated.DPFTSServer`).

Trust model (the paper's, footnote 2): the server is trusted; the other parties and anyone who
sees the broadcasts are not. The broadcasts are ``(epsilon, delta)`` user-level DP in each
party's contribution: its data, its scores and its vectors. The neighbouring relation is the
paper's: one party's contribution present or replaced by nothing, with the number of parties
and their sub-regions public (the weights are normalized over all N parties, so ``N`` itself
is not hidden). This estimator runs the server and every party; its attributes (each party's
scores and recommendations, the server's log in ``trace_``) are what a trusted server and
each party would hold, not a private release.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, cast

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import train_test_split

from .._checks import check_float, check_int, check_seed
from ..features import RandomFourierFeatures
from ..privacy.accounting import check_user_delta
from ..privacy.errors import check_value_range as _check_value_range
from ..privacy.withhold import describe
from ..scores import check_space_params, known_score_range
from ..space import Real, SearchSpace
from ..tuning import recommend
from .agent import FTSAgent, server_probability
from .regions import SubRegions
from .runner import FederatedRunner
from .server import DPFTSServer

__all__ = ["FederatedSearch"]

_DEFAULT_Q = 0.35


class _PartyObjective:
    """A party's objective on the cube: fit on the training part, score on the validation part,
    map the score in ``value_range`` to a reward in ``[0, 1]``. A failed fit, or a non-finite
    score, counts as the lowest score of the range; :attr:`n_valid` counts the others (it
    travels with the agent to the workers and back)."""

    def __init__(self, estimator, space, scorer, split, value_range, party: int) -> None:
        self.estimator = estimator
        self.space = space
        self.scorer = scorer
        self.split = split
        self.lo, self.hi = value_range
        self.party = party
        #: Evaluations whose fit and score succeeded with a finite score.
        self.n_valid = 0

    def __call__(self, u: np.ndarray) -> float:
        X_train, X_val, y_train, y_val = self.split
        params = self.space.from_unit(u)
        try:
            model = clone(self.estimator).set_params(**params).fit(X_train, y_train)
            score = float(self.scorer(model, X_val, y_val))
        except Exception as exc:
            warnings.warn(
                f"party {self.party}: the fit or score with {params} failed "
                f"({describe(exc)}); it counts as the lowest score {self.lo}.",
                FitFailedWarning,
                stacklevel=2,
            )
            score = self.lo
        else:
            if math.isfinite(score):
                self.n_valid += 1
            else:
                score = self.lo
        score = min(max(score, self.lo), self.hi)
        return (score - self.lo) / (self.hi - self.lo)


def _check_datasets(datasets) -> list[tuple[Any, Any]]:
    if isinstance(datasets, tuple) and len(datasets) == 2 and not isinstance(datasets[0], tuple):
        raise TypeError(
            "datasets must be a list of (X_n, y_n) pairs, one per party; got a single (X, y) "
            "pair. Pass [(X_1, y_1), (X_2, y_2), ...]."
        )
    try:
        pairs = list(datasets)
    except TypeError:
        raise TypeError("datasets must be a list of (X_n, y_n) pairs, one per party.") from None
    if not pairs:
        raise ValueError("datasets must hold at least one party's (X_n, y_n).")
    n_columns = None
    for n, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"datasets[{n}] must be a pair (X_n, y_n), got {type(pair).__name__}.")
        X, y = pair
        if len(X) != len(y):
            raise ValueError(
                f"datasets[{n}]: X has {len(X)} rows but y has {len(y)}; they must agree."
            )
        if len(X) < 2:
            raise ValueError(
                f"datasets[{n}] has {len(X)} samples; a party needs at least 2 (a training and "
                "a validation part)."
            )
        columns = np.shape(X)[1] if len(np.shape(X)) > 1 else 1
        if n_columns is None:
            n_columns = columns
        elif columns != n_columns:
            raise ValueError(
                f"datasets[{n}] has {columns} features (columns) but datasets[0] has "
                f"{n_columns}: every party must hold data of the same task."
            )
    return pairs


def _split(X, y, validation_size: float, classifier: bool, seed: int):
    stratify = None
    if classifier:
        _, counts = np.unique(np.asarray(y), return_counts=True)
        if counts.size > 1 and counts.min() >= 2:
            stratify = y
    return train_test_split(X, y, test_size=validation_size, random_state=seed, stratify=stratify)


class FederatedSearch(BaseEstimator):
    """Tune one estimator for N parties, each on its own data, with DP-FTS-DE.

    The parties run Thompson sampling on shared random Fourier features over the search
    space's unit cube; a server aggregates their posterior samples per sub-region (distributed
    exploration) with Poisson subsampling, clipping and Gaussian noise (Dai, Low & Jaillet
    2021, Alg. 1 and 2). Privacy model (docs/privacy.md, "(epsilon, delta) user-level DP in
    federated tuning"): ``(epsilon, delta)`` user-level DP of the broadcasts; see the module
    docstring for who is trusted.

    Parameters
    ----------
    estimator : estimator object
        The scikit-learn estimator every party tunes.
    space : mapping or SearchSpace
        The hyperparameters, in any form :class:`privtune.space.SearchSpace` accepts.
    n_iter : int, default=60
        Rounds after the ``n_init`` initial evaluations (the paper's 60).
    q : float or None, default=None
        Poisson sampling probability of the server, in ``(0, 1]``. ``None``: 0.35 (the paper's
        real-world value) with privacy, 1 without.
    z : float or None, default=1.0
        Noise multiplier, ``> 0``. ``None`` turns privacy off (FTS-DE, ``epsilon_ = inf``).
    S : float, default=22.0
        Clipping threshold (the paper's real-world value for ``M = 100``).
    P : int, default=4
        Sub-regions of distributed exploration (1: none); at most the number of parties.
    scoring : str, callable or None, default=None
        A scikit-learn scorer; ``None`` uses the estimator's ``score``.
    value_range : (float, float), optional
        The range of the scores; needed when ``scoring``'s range is not known (regression
        errors, custom scorers). Scores are clipped to it and mapped to rewards in
        ``[0, 1]``; a failed fit or a non-finite score counts as its lowest value.
    n_init : int, default=10
        Initial evaluations per party, drawn in its sub-region.
    n_features : int, default=100
        ``M``, the dimension of the shared random Fourier features (even: cos/sin pairs).
    lengthscale : float, default=0.2
        Lengthscale of the squared-exponential kernel on the unit cube.
    lam : float, default=0.01
        ``lambda`` of each party's posterior (eq. 2).
    server_prob : str or callable, default="1/t"
        ``1 - p_t``, the probability of choosing by the server's vectors in round ``t``;
        ``"never"`` is standard Thompson sampling (no communication, ``epsilon_ = 0``). See
        :func:`privtune.federated.server_probability`.
    server_rounds : int or None, default=None
        Use the server in the first ``server_rounds`` rounds only; later rounds are local TS
        and spend no privacy. ``None``: all ``n_iter`` rounds.
    weight_schedule : (int, int), default=(10, 30)
        ``(hold, decay)`` of the weights' temperature (App. B).
    delta : float or None, default=None
        The ``delta`` of ``epsilon_``; ``None`` is 1e-6. A ``delta`` of ``1 / N`` or more is
        refused (:class:`~privtune.privacy.PrivacyError`) and one above ``0.01 / N`` is
        warned about (:func:`privtune.privacy.accounting.check_user_delta` states the rule).
        The paper's ``1 / N^1.1`` (:func:`privtune.privacy.default_delta`) reproduces its
        numbers with a warning: for 4 parties it is 0.22, which guarantees almost nothing.
    validation_size : float, default=0.5
        Fraction of each party's data held out for scoring (the paper's halves).
    n_jobs : int or None, default=None
        Parties' rounds in parallel through joblib (any backend, Dask's included); ``None``
        runs them in this process.
    random_state : int or None, default=None
        Seed of the shared features, the splits and the parties' own randomness.
    noise_random_state : int or None, default=None
        Seed of the server's subsampling and noise. ``None`` (the default) draws it from the
        operating system: anyone who knows the seed can regenerate the noise, so set it only
        for experiments.
    verbose : int, default=0
        Print one line per round when ``> 0``.

    Attributes
    ----------
    recommended_params_ : list of dict or None
        For each party, the evaluated configuration with the best posterior mean; ``None`` for
        a party in :attr:`failed_parties_`.
    best_params_ : list of dict or None
        For each party, the evaluated configuration with the best score (``None`` likewise).
    best_scores_ : ndarray of shape (N,)
        Each party's best score (NaN for a party in :attr:`failed_parties_`).
    failed_parties_ : list of int
        The parties none of whose evaluations succeeded (every fit or score failed, or was
        not finite): nothing is recommended for them.
    scores_ : ndarray of shape (N, n_init + n_iter)
        Each party's scores in order, clipped to ``value_range`` (a failed fit is its lowest
        value; a party skipped in a round has fewer scores: its row ends in NaN).
    epsilon_ : float
        The privacy loss of the broadcasts at ``delta_`` (tightest of dp-accounting's RDP and
        PLD accountants); ``inf`` without privacy, 0 without communication.
    delta_ : float
        The delta of ``epsilon_``.
    trace_ : list of dict
        One entry per round: ``round``, ``n_used_server``, ``n_failed``, ``n_selected``,
        ``n_clipped``, ``phi_max``, ``noise_std``. The server's log, not a private release;
        it holds no score.
    runner_ : FederatedRunner
        The agents and the server, for inspection. It is set before the first round, so after
        an interrupted ``fit`` each agent still holds the rounds it finished (``agent.X``,
        ``agent.y``).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.svm import SVC
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> parties = [(X[i::4], y[i::4]) for i in range(4)]
    >>> search = FederatedSearch(
    ...     SVC(), {"C": (1e-2, 1e2, "log-uniform")}, n_iter=3, P=2, n_init=3, random_state=0
    ... ).fit(parties)
    >>> len(search.recommended_params_)
    4
    """

    def __init__(
        self,
        estimator,
        space,
        *,
        n_iter: int = 60,
        q: float | None = None,
        z: float | None = 1.0,
        S: float = 22.0,
        P: int = 4,
        scoring=None,
        value_range: tuple[float, float] | None = None,
        n_init: int = 10,
        n_features: int = 100,
        lengthscale: float = 0.2,
        lam: float = 0.01,
        server_prob="1/t",
        server_rounds: int | None = None,
        weight_schedule: tuple[int, int] = (10, 30),
        delta: float | None = None,
        validation_size: float = 0.5,
        n_jobs: int | None = None,
        random_state: int | None = None,
        noise_random_state: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.estimator = estimator
        self.space = space
        self.n_iter = n_iter
        self.q = q
        self.z = z
        self.S = S
        self.P = P
        self.scoring = scoring
        self.value_range = value_range
        self.n_init = n_init
        self.n_features = n_features
        self.lengthscale = lengthscale
        self.lam = lam
        self.server_prob = server_prob
        self.server_rounds = server_rounds
        self.weight_schedule = weight_schedule
        self.delta = delta
        self.validation_size = validation_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.noise_random_state = noise_random_state
        self.verbose = verbose

    def _value_range(self) -> tuple[float, float]:
        if self.value_range is not None:
            return _check_value_range(self.value_range)
        known = known_score_range(self.scoring, self.estimator)
        if known is None:
            raise ValueError(
                f"value_range is required: the range of scoring={self.scoring!r} is not known. "
                "Pass value_range=(lo, hi), the scores' range (a failed fit counts as lo)."
            )
        return known

    def _build(self, pairs) -> FederatedRunner:
        n_parties = len(pairs)
        space = SearchSpace(self.space)
        check_space_params(self.estimator, space.names)
        check_int("n_iter", self.n_iter)
        check_int("n_init", self.n_init)
        P = check_int("P", self.P)
        if P > n_parties:
            raise ValueError(
                f"P={P} sub-regions need at least {P} parties to explore them; got {n_parties}."
            )
        m = check_int("n_features", self.n_features, minimum=2)
        if m % 2:
            raise ValueError(f"n_features must be even (cos/sin pairs), got {m}.")
        check_float("validation_size", self.validation_size, low=0.0, high=1.0, closed_high=False)
        schedule = server_probability(self.server_prob)
        private = self.z is not None
        q = (_DEFAULT_Q if private else 1.0) if self.q is None else self.q
        if private and n_parties < 2:
            raise ValueError(
                "user-level DP needs at least 2 parties (it hides one party among others); "
                "pass z=None to run without privacy."
            )
        # refused when it is no guarantee, warned about when weak: before any fit
        self._delta = check_user_delta(self.delta, n_parties, stacklevel=4) if private else 0.0
        value_range = self._value_range()
        scorer = check_scoring(self.estimator, scoring=self.scoring)
        classifier = is_classifier(self.estimator)

        random_state = check_seed("random_state", self.random_state)
        check_seed("noise_random_state", self.noise_random_state)
        seeds = np.random.SeedSequence(random_state).generate_state(3 * n_parties + 1)
        features = RandomFourierFeatures(space.dim, m // 2, self.lengthscale, seed=int(seeds[0]))
        splittable = np.zeros(space.dim, dtype=bool)
        for name, dimension in space.items():
            splittable[space.slices[name]] = isinstance(dimension, Real)
        if P > 1 and not splittable.any():
            raise ValueError(
                f"P={P} sub-regions split the real parameters' ranges, and the space has none; "
                "use P=1."
            )
        regions = SubRegions(space.dim, P, splittable)
        assignment = np.arange(n_parties) % P
        agents = []
        for n, (X, y) in enumerate(pairs):
            split = _split(X, y, self.validation_size, classifier, int(seeds[1 + n]))
            objective = _PartyObjective(self.estimator, space, scorer, split, value_range, n)
            agents.append(
                FTSAgent(
                    features,
                    objective,
                    regions,
                    region=int(assignment[n]),
                    n_init=self.n_init,
                    lam=self.lam,
                    server_prob=schedule,
                    snap=space.snap,
                    seed=int(seeds[1 + n_parties + n]),
                )
            )
        # built (and so checked) even for standard TS, which then leaves it out
        server: DPFTSServer | None = DPFTSServer(
            assignment,
            m,
            n_regions=P,
            q=q,
            z=self.z,
            S=self.S if private else None,
            weight_schedule=self.weight_schedule,
            seed=self.noise_random_state,
        )
        if self.server_prob == "never":
            server = None
        self._space = space
        self._value_range_ = value_range
        return FederatedRunner(agents, server, server_rounds=self.server_rounds, n_jobs=self.n_jobs)

    def fit(self, datasets) -> FederatedSearch:
        """Run DP-FTS-DE for every party.

        Parameters
        ----------
        datasets : list of (X_n, y_n)
            One pair per party.

        Returns
        -------
        self
        """
        pairs = _check_datasets(datasets)
        runner = self._build(pairs)
        lo, hi = self._value_range_
        length = self.n_init + self.n_iter
        self.trace_: list[dict[str, Any]] = []

        def log(r: FederatedRunner, record) -> None:
            # the server's log: counts and noise scales, never a score (those stay with
            # their party, in scores_)
            stats = record.server_stats
            entry = {
                "round": record.t,
                "n_used_server": record.n_used_server,
                "n_failed": len(record.failed),
                "n_selected": None if stats is None else stats.n_selected,
                "n_clipped": None if stats is None else stats.n_clipped,
                "phi_max": None if stats is None else stats.phi_max,
                "noise_std": None if stats is None else stats.noise_std,
            }
            self.trace_.append(entry)
            if self.verbose > 0:
                print(
                    f"[FederatedSearch] round {record.t}/{self.n_iter}: "
                    f"{record.n_used_server} parties chose by the server's vectors, "
                    f"{len(record.failed)} failed"
                )

        # kept before the rounds: an interrupted fit leaves every finished round in the agents
        self.runner_ = runner
        runner.run(self.n_iter, callback=log)
        space = self._space
        self.scores_ = np.full((len(pairs), length), np.nan)
        self.recommended_params_: list[dict[str, Any] | None] = []
        self.best_params_: list[dict[str, Any] | None] = []
        self.failed_parties_ = [
            n
            for n, agent in enumerate(runner.agents)
            if cast(_PartyObjective, agent.objective).n_valid == 0
        ]
        for n, agent in enumerate(runner.agents):
            scores = lo + (hi - lo) * agent.y
            self.scores_[n, : scores.size] = scores
            if n in self.failed_parties_:  # nothing to recommend from: every evaluation failed
                self.best_params_.append(None)
                self.recommended_params_.append(None)
                continue
            self.best_params_.append(space.from_unit(agent.X[int(np.argmax(agent.y))]))
            best = recommend(agent)
            self.recommended_params_.append(space.from_unit(agent.X[best]))
        self.best_scores_ = np.nanmax(self.scores_, axis=1)
        self.best_scores_[self.failed_parties_] = np.nan
        if self.failed_parties_:
            warnings.warn(
                f"parties {self.failed_parties_} got no valid evaluation (every fit or score "
                "failed, see the FitFailedWarnings): they have no recommendation (None in "
                "recommended_params_ and best_params_, NaN in best_scores_).",
                UserWarning,
                stacklevel=2,
            )
        private = runner.server is not None and runner.server.private
        self.delta_ = self._delta if private else 0.0
        self.epsilon_ = runner.epsilon(self.delta_ if private else None)
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "epsilon_")
