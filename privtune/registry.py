"""The algorithms the adapters run: one :class:`AlgorithmSpec` per name, in :data:`REGISTRY`.

A spec says everything the tuning engine (:mod:`privtune.tuning`) and the adapters need to
know about an algorithm, as data: the optimizer class, the privacy model it runs under when a
privacy parameter is set (and whether it needs one), the unit of its rewards, the curator that
releases each score, whether its scores may be published, and its tuning defaults (a function
next to the spec). Adding an algorithm is one module in :mod:`privtune.optimizers` and one
entry here; the adapters' lists of names come from :data:`REGISTRY`.

Examples
--------
>>> from privtune.registry import REGISTRY, PrivacyModel
>>> spec = REGISTRY["qff-ldp"]
>>> spec.privacy_model(1.0) is PrivacyModel.LOCAL_JDP, spec.reward_unit, spec.curator
(True, 'unit', 'gaussian')
>>> REGISTRY["moma"].privacy_model(None) is None
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .acquisition import LogExpectedImprovement
from .gp import Priors
from .kernels import Matern
from .optimizers import (
    ATAGPUCB,
    GOUCB,
    GPUCB,
    QFFGPUCB,
    TGPUCB,
    BaseOptimizer,
    MoMAGPUCB,
    RandomSearch,
)

__all__ = [
    "AUTO",
    "REGISTRY",
    "AlgorithmSpec",
    "BuildSetting",
    "PrivacyModel",
    "check_algorithm",
    "resolve_algorithm",
]


class PrivacyModel(str, Enum):
    """The privacy models of docs/privacy.md (each compares equal to its string)."""

    #: epsilon-LDP on scores: each score released through the Laplace curator where it is
    #: computed (Zhou & Tan 2021).
    LDP = "ldp"
    #: (alpha, beta)-joint DP: a trusted privatizer holds the raw scores; the learner reads
    #: only the tree mechanism's noisy statistics (Dubey 2021, Alg. 2).
    JDP = "jdp"
    #: (alpha, beta)-local joint DP: each score released with Gaussian noise where it is
    #: computed (Dubey 2021, Alg. 3).
    LOCAL_JDP = "local-jdp"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


#: The curator of each privacy model (``None``: raw scores go to a trusted privatizer).
CURATORS: dict[PrivacyModel, str | None] = {
    PrivacyModel.LDP: "laplace",
    PrivacyModel.LOCAL_JDP: "gaussian",
    PrivacyModel.JDP: None,
}


@dataclass(frozen=True)
class BuildSetting:
    """What the engine knows when it builds an optimizer, for a spec's defaults.

    Attributes
    ----------
    dim : int
        Dimension of the cube.
    epsilon : float or None
        The privacy parameter (``alpha`` for the qff algorithms), ``None`` without privacy.
    privacy : PrivacyModel or None
        The privacy model the run is under.
    budget : int or None
        The number of evaluations the run will make, when known (a search's ``n_iter``).
    heavy_tailed : bool
        The user said the scores have heavy-tailed noise.
    """

    dim: int
    epsilon: float | None
    privacy: PrivacyModel | None
    budget: int | None
    heavy_tailed: bool = False


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm as the adapters see it.

    Attributes
    ----------
    name : str
        The name users pass (``algorithm=``).
    optimizer : type of BaseOptimizer
        The optimizer class.
    private_model : PrivacyModel
        The privacy model under which it runs when a privacy parameter is set.
    requires_privacy : bool
        Private by construction: it runs only with a privacy parameter (the qff algorithms).
    reward_unit : {"centred", "unit"}
        Rewards in ``[-1, 1]`` (the GP family, GO-UCB) or in ``[0, 1]`` (Dubey's sensitivities
        assume rewards bounded by 1 in absolute value, so ``[0, 1]``).
    publishable : bool
        Whether the scores it learns from may be published (``False`` for joint DP, whose raw
        scores stay with the trusted privatizer: a search that publishes every candidate's score
        cannot run it).
    repeated_plays : bool
        It evaluates each configuration several times (MoMA-GP-UCB's ``k`` plays): identical
        evaluations without privacy.
    defaults : callable
        ``defaults(setting, overrides) -> dict``: the tuning defaults of the optimizer's
        constructor for a :class:`BuildSetting`, given the user's ``overrides`` (which win; the
        engine adds the seeds, ``snap`` and ``layout``).
    takes_layout : bool
        Whether the optimizer takes a search space's ``layout``.
    """

    name: str
    optimizer: type[BaseOptimizer]
    private_model: PrivacyModel
    defaults: Callable[[BuildSetting, dict[str, Any]], dict[str, Any]]
    requires_privacy: bool = False
    reward_unit: str = "centred"
    publishable: bool = True
    repeated_plays: bool = False
    takes_layout: bool = True

    def privacy_model(self, epsilon: float | None) -> PrivacyModel | None:
        """The privacy model it runs under with ``epsilon`` (``None`` without privacy).

        Raises
        ------
        ValueError
            For an algorithm that is private by construction, when ``epsilon`` is ``None``.
        """
        if epsilon is None:
            if self.requires_privacy:
                raise ValueError(
                    f"algorithm={self.name!r} is private by construction: set epsilon (the "
                    "alpha of Dubey's (alpha, beta)-joint DP) and value_range (the score's range)."
                )
            return None
        return self.private_model

    @property
    def curator(self) -> str | None:
        """``"laplace"``, ``"gaussian"`` or ``None``: the curator of its private model."""
        return CURATORS[self.private_model]


# -- tuning defaults, next to the algorithms -----------------------------------------------------

#: Dubey's privacy failure probability ``beta`` when ``optimizer_kwargs`` gives none (Sec. 6).
QFF_DEFAULT_BETA = 0.1
#: The number of rewards the joint-DP tree holds when the caller does not know its budget.
QFF_DEFAULT_HORIZON = 1024
#: Quadrature nodes per dimension and lengthscale (on the unit cube) of the qff algorithms.
QFF_M_BAR = 10
QFF_LENGTHSCALE = 0.3
#: The fixed surrogate's noise variance for exact (non-private) scores, in reward units.
NON_PRIVATE_LAM = 0.01


def laplace_noise_var(epsilon: float) -> float:
    """The variance ``2 (2 / epsilon)^2 = 8 / epsilon^2`` of the curator's Laplace noise in
    reward units: a score range ``hi - lo`` maps to 2, so the scale ``(hi - lo) / epsilon``
    becomes ``2 / epsilon``."""
    return 8.0 / float(epsilon) ** 2


def default_lengthscale(dim: int) -> float:
    """Initial lengthscale on ``[0, 1]^dim``: ``0.2 sqrt(dim)``, within ``[0.2, 1.0]``.

    A fixed ``0.2`` (the papers' one-dimensional choice) makes every pair of points nearly
    uncorrelated in ten dimensions; the typical distance between uniform points grows as
    ``sqrt(dim / 6)``. ML-II refits it from the data as trials accumulate.
    """
    return float(min(max(0.2 * math.sqrt(dim), 0.2), 1.0))


def gp_defaults(setting: BuildSetting, overrides: dict[str, Any]) -> dict[str, Any]:
    """Tuning defaults of the GP family (``"gp-ucb"``, ``"tgp"``, ``"random"``, ``"ata"``,
    ``"moma"``): see :func:`privtune.tuning.make_optimizer`."""
    epsilon = setting.epsilon
    kwargs: dict[str, Any] = {"B": 0.5, "R": 0.5, "epsilon": epsilon, "raw_sampling": "sobol"}
    if overrides.get("surrogate", "fitted") == "fitted":
        kwargs.update(
            surrogate="fitted",
            noise_var=0.0 if epsilon is None else laplace_noise_var(epsilon),
        )
    else:
        kwargs.update(
            kernel=Matern(default_lengthscale(setting.dim), nu=2.5),
            fit_lengthscale=True,
            lam=NON_PRIVATE_LAM if epsilon is None else 1.0 + 8.0 / float(epsilon) ** 2,
        )
    return kwargs


#: The exact-score defaults of ``"gp-ucb"``, measured on the tuning suite (benchmarks page,
#: "Plateaus, unseen tasks and heavy tails" and "Without privacy, against GPSampler"): the
#: incumbent of :func:`exact_acquisition`, the best told score while the model judges the
#: scores exact and the best posterior mean otherwise (``incumbent="auto"``), and
#: space-filling proposals while the fitted model predicts the told scores no better than
#: this leave-one-out skill and none stands out (a plateau).
EXACT_INCUMBENT = "auto"
EXACT_MIN_SKILL = 0.2
#: The priors of ``"gp-ucb"``'s fitted surrogate on exact scores: Optuna's GPSampler's
#: lengthscale and signal-variance priors (lengthscales pulled to 1 from both sides) and the
#: constant mean fixed at the told scores' mean, the two parts of GPSampler's recipe that
#: carried its lead in the ablation (benchmarks page, "Without privacy, against GPSampler"):
#: the fitted mean sank below the told scores on plateaus and kept the proposals off the faces
#: where the best configurations often lie. With :data:`EXACT_INCUMBENT` they gained 12 and
#: 17 normalised points at 40 and 60 trials on the tuning suite's classic family.
EXACT_PRIORS = Priors(family="optuna", mean_scale=0.0)
#: The degrees of freedom of the Student-t likelihood ``"gp-ucb"`` takes when the user says the
#: scores are heavy-tailed (``heavy_tailed=True``), and without privacy once the start-up's
#: repeat of a configuration returns another score: measured on the tuning suite's heavy-tailed
#: family against the Gaussian nugget, TGP-, ATA- and MoMA-GP-UCB, and on its COCO family
#: (docs/benchmarks/tuning.md, "Heavy tails").
HEAVY_TAILED_DF = 3.0
#: The starts of the acquisition optimiser's local searches for ``"gp-ucb"`` on scores that
#: are not privatized: Optuna's GPSampler's rule (the best raw sample, a draw in proportion to
#: the expected improvement, and the best told point) instead of the best raw samples and the
#: perturbations of the best told points. On ridges the best raw samples all lie next to the
#: incumbent, and the three local searches then never leave its basin. Measured on every
#: family of the tuning suite (docs/benchmarks/tuning.md, "The starts of the local searches").
EXACT_START_RULE = "spread"
#: How many agreeing repeats show ``"gp-ucb"``'s scores deterministic when they are not
#: privatized (``agreeing_repeats``): one, the start-up's own repeat, which already ends the
#: start-up (:meth:`~privtune.tuning.TuningEngine.startup_step`). With two, a jagged
#: deterministic score whose fitted noise exceeds ``EXACT_SHARE`` kept the incumbent at the
#: best posterior mean, and the study spent its trials next to the best told configuration
#: (AdaBoost on breast cancer, seed 1: 27 of 60 trials within 0.05 of the best one's learning
#: rate). Measured on the exact families of the tuning suite (docs/benchmarks/tuning.md, "One
#: agreeing repeat").
EXACT_AGREEING_REPEATS = 1
#: The trust region's share of ``"gp-ucb"``'s proposals on scores that are not privatized
#: (``local_share``): while the scores are exact, every second proposal maximises the
#: acquisition over a box around the best told configuration (TuRBO's trust region) instead
#: of the cube, unless that configuration's score is no better than the median told score
#: (:func:`~privtune.optimizers.base.best_above_median`). The model fits long lengthscales
#: to the parameters that matter little, and the expected improvement over the cube then
#: grows at the faces and corners where it knows least; the trust region's turns refine the
#: best region while the others search the whole cube. It never acts on noisy or privatized scores
#: (:meth:`~privtune.optimizers.base.BaseOptimizer._exact`). Measured on the exact families of
#: the tuning suite at 20 seeds (docs/benchmarks/tuning.md, "A trust region's share of the
#: proposals" and "No trust region around a floor"): ahead on the unseen tasks, level in the
#: mean elsewhere, more trapped studies on the ridges.
EXACT_LOCAL_SHARE = 2


def exact_acquisition() -> LogExpectedImprovement:
    """The acquisition of ``"gp-ucb"`` on exact scores with the fitted surrogate: log expected
    improvement (instead of the papers' UCB) over :data:`EXACT_INCUMBENT`."""
    return LogExpectedImprovement(incumbent=EXACT_INCUMBENT)


def private_acquisition() -> LogExpectedImprovement:
    """The acquisition of ``"gp-ucb"`` on privatized scores with the fitted surrogate: log
    expected improvement over the best *released* score. Noise inflates that incumbent, so
    the improvement a region can still offer is judged against a bar it must clear with its
    uncertainty: a region is not abandoned on a few noisy reports, and a plateau of equal
    scores sends the proposals to where the model knows least. Measured on the tuning suite
    at a per-report epsilon of 10 against UCB (the papers' acquisition), log-EI over the best
    posterior mean, ``min_signal`` and Optuna's samplers on the same released scores
    (benchmarks page, "Plateaus, unseen tasks and heavy tails"). The released scores are
    already private, so reading them is post-processing."""
    return LogExpectedImprovement(incumbent="observed")


#: The priors of ``"gp-ucb"``'s fitted surrogate on privatized scores whose noise is below a
#: quarter of the scores' range (:func:`smooth_prior_applies`): the lengthscale prior's mode at
#: ``exp(-0.131 - 0.75^2) sqrt(G)``, about ``0.5 sqrt(G)`` for ``G`` parameters (1 for four,
#: where Optuna's ``GPSampler`` puts its own), and its scale in ``ln l`` 0.75, where the
#: exact-score default has ``0.2 sqrt(G)`` and ``sqrt(3)``. Under a known noise far above the
#: differences between configurations the likelihood hardly tells lengthscales apart, so the
#: prior decides them: the weak one let the model fit short lengthscales to a few lucky reports
#: and follow them. Measured on the tuning suite at a per-report epsilon of 10 (benchmarks
#: page, "A smoother model under privacy").
PRIVATE_PRIORS = Priors(lengthscale_loc=-0.131, lengthscale_scale=0.75)


def smooth_prior_applies(epsilon: float) -> bool:
    """Whether ``"gp-ucb"`` on scores privatized at ``epsilon`` takes :data:`PRIVATE_PRIORS`:
    while the curator's noise has a standard deviation below a quarter of the score's range,
    ``epsilon > 4 sqrt(2)``, about 5.66 (Laplace of scale ``(hi - lo) / epsilon``).

    Above that noise the reports say little about any one configuration; a smooth model is
    then most uncertain at the box's faces and corners, log-EI over the best released score
    sends the proposals there, and a pick among them is often an extreme configuration. The
    exact-score prior keeps them inside the box. Measured on the tuning suite at per-report
    epsilons of 3, 6 and 10 and on the 12-task benchmark and a one-dimensional quadratic at 1
    (benchmarks page, "A smoother model under privacy"): at 6 and 10 the smoother prior gains
    on the plateaus and is level on ordinary tasks; at 3 it falls behind private random search
    on ordinary tasks at 20 trials, and at 1 below it on the 12 tasks.
    """
    # reward units: the range [-1, 1] has width 2, a quarter of it 0.5
    return laplace_noise_var(epsilon) < 0.5**2


def gp_ucb_defaults(setting: BuildSetting, overrides: dict[str, Any]) -> dict[str, Any]:
    """Tuning defaults of ``"gp-ucb"``: those of the GP family; with the fitted surrogate,
    :func:`exact_acquisition`, :data:`EXACT_MIN_SKILL`, :data:`EXACT_PRIORS`,
    :data:`EXACT_START_RULE`, :data:`EXACT_AGREEING_REPEATS`, :data:`EXACT_LOCAL_SHARE` and
    the switch to a Student-t likelihood with :data:`HEAVY_TAILED_DF` degrees of freedom once
    a repeated configuration returns another score (``student_t_on_repeat``: the scores are
    noisy) when they are not privatized, and :func:`private_acquisition` for privatized ones,
    with :data:`PRIVATE_PRIORS` where :func:`smooth_prior_applies`; for scores the user says
    are heavy-tailed the Student-t likelihood from the start."""
    kwargs = gp_defaults(setting, overrides)
    fitted = kwargs.get("surrogate") == "fitted"
    if setting.epsilon is None and fitted:
        kwargs.update(
            acquisition=exact_acquisition(),
            min_skill=EXACT_MIN_SKILL,
            priors=EXACT_PRIORS,
            student_t_on_repeat=HEAVY_TAILED_DF,
            start_rule=EXACT_START_RULE,
            agreeing_repeats=EXACT_AGREEING_REPEATS,
            local_share=EXACT_LOCAL_SHARE,
        )
    elif fitted and setting.epsilon is not None:
        kwargs["acquisition"] = private_acquisition()
        if smooth_prior_applies(setting.epsilon):
            kwargs["priors"] = PRIVATE_PRIORS
    if setting.heavy_tailed:
        if not fitted:
            raise ValueError(
                "heavy_tailed=True gives the fitted surrogate a Student-t likelihood; the fixed "
                'surrogate (optimizer_kwargs={"surrogate": "fixed"}) has none.'
            )
        kwargs["student_t_df"] = HEAVY_TAILED_DF
        kwargs.pop("student_t_on_repeat", None)
    return kwargs


def go_ucb_defaults(setting: BuildSetting, overrides: dict[str, Any]) -> dict[str, Any]:
    """Tuning defaults of GO-UCB: its own, with ``horizon`` the run's budget when known."""
    kwargs: dict[str, Any] = {"epsilon": setting.epsilon}
    if setting.budget is not None:
        kwargs["horizon"] = int(setting.budget)
    return kwargs


def qff_defaults(setting: BuildSetting, overrides: dict[str, Any]) -> dict[str, Any]:
    """Tuning defaults of Dubey's QFF GP-UCB: see :func:`privtune.tuning.make_optimizer`."""
    model = setting.privacy
    kwargs: dict[str, Any] = {
        "privacy": None if model is None else model.value,
        "alpha": setting.epsilon,
        "additive": setting.dim > 2,
        "m_bar": QFF_M_BAR,
        "lengthscale": QFF_LENGTHSCALE,
        "reward_bound": 1.0,
        "client_noise": model == PrivacyModel.LOCAL_JDP,
        "horizon": QFF_DEFAULT_HORIZON if setting.budget is None else int(setting.budget),
    }
    # the deprecated names, when the user gives them, replace the defaults' new ones
    if "beta" not in overrides:
        kwargs["privacy_beta"] = QFF_DEFAULT_BETA
    if "m" in overrides or "n_frequencies" in overrides:
        del kwargs["m_bar"]
    return kwargs


def _spec(name: str, optimizer: type[BaseOptimizer], **kwargs: Any) -> AlgorithmSpec:
    kwargs.setdefault("private_model", PrivacyModel.LDP)
    kwargs.setdefault("defaults", gp_defaults)
    return AlgorithmSpec(name, optimizer, **kwargs)


#: Algorithm names accepted by the adapters, to their specs.
REGISTRY: dict[str, AlgorithmSpec] = {
    spec.name: spec
    for spec in (
        _spec("moma", MoMAGPUCB, repeated_plays=True),
        _spec("ata", ATAGPUCB),
        _spec("tgp", TGPUCB),
        _spec("gp-ucb", GPUCB, defaults=gp_ucb_defaults),
        _spec("random", RandomSearch),
        _spec("go-ucb", GOUCB, defaults=go_ucb_defaults, takes_layout=False),
        _spec(
            "qff-jdp",
            QFFGPUCB,
            private_model=PrivacyModel.JDP,
            defaults=qff_defaults,
            requires_privacy=True,
            reward_unit="unit",
            publishable=False,
            takes_layout=False,
        ),
        _spec(
            "qff-ldp",
            QFFGPUCB,
            private_model=PrivacyModel.LOCAL_JDP,
            defaults=qff_defaults,
            requires_privacy=True,
            reward_unit="unit",
            takes_layout=False,
        ),
    )
}

#: What ``algorithm="auto"`` resolves to, for exact scores and for scores released with
#: epsilon-LDP: the best measured in the tuning benchmark
#: (docs/benchmarks/tuning-history.md, "The default algorithm").
AUTO = {"exact": "gp-ucb", "ldp": "gp-ucb"}


def check_algorithm(algorithm: str) -> str:
    """Validate an algorithm name (one of :data:`REGISTRY`, or ``"auto"``), once where it
    enters (:func:`resolve_algorithm`, :func:`privtune.tuning.make_optimizer`); what receives
    the resolved name indexes :data:`REGISTRY` directly."""
    if not isinstance(algorithm, str) or (algorithm not in REGISTRY and algorithm != "auto"):
        raise ValueError(
            f"algorithm must be 'auto' or one of {sorted(REGISTRY)}, got {algorithm!r}."
        )
    return algorithm


def resolve_algorithm(algorithm: str, epsilon: float | None) -> str:
    """The algorithm a name stands for: ``"auto"`` is :data:`AUTO`'s choice for exact scores
    (``epsilon`` is None) or for LDP scores; any other name is itself."""
    if check_algorithm(algorithm) == "auto":
        return AUTO["exact" if epsilon is None else "ldp"]
    return algorithm
