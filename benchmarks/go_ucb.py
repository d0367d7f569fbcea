"""GO-UCB (Liu & Wang 2023): the synthetic experiments of Sec. 6.1, the tuning experiments of
Sec. 6.2, the calibration of the practical defaults, and the time per ask.

Methods (all on the unit cube; every method's first ``n`` points are the same uniform draws of
the run's seed, GO-UCB's Phase I):

- ``go-ucb``: :class:`privtune.optimizers.GOUCB` with its defaults (``n_explore = n``,
  ``horizon = T``; the joint ascent over ``x`` and ``w``); ``go-ucb-first-order``: the same
  with ``solver="first-order"``; ``go-ucb-d1``: App. D.1's settings taken literally
  (:class:`PaperD1GOUCB`, synthetic only);
- ``gp-ucb``, ``gp-ei``, ``gp-pi``: privtune's exact GP with the tuning defaults of
  :func:`privtune.tuning.make_optimizer` (Matérn-5/2, lengthscale refitted by ML-II at 8, 16,
  32, ... rewards, ``lam = 0.01``), the same for all three; they differ only in the
  acquisition: GP-UCB's ``mu + beta sigma``, expected improvement and probability of
  improvement (``xi = 0.01``) over the best observed reward;
- ``random``: uniform draws.

Synthetic (``synthetic``)
    ``d_x = 20`` on ``[-5, 5]^20``: f1 is the paper's network with every weight and bias 1
    (``n = 5``, ``T = 25``), f2 Styblinski-Tang and f3 Rastrigin as the paper writes them
    (``n = 8``, ``T = 64``). Observations ``y = f(x) + N(0, 0.01^2)`` (App. D.1), told to every
    method as ``2 (y - lo) / (hi - lo) - 1`` with the function's known range ``[lo, hi]``, so
    all of them see rewards in ``[-1, 1]``. Reported: cumulative regret ``sum_t f* - f(x_t)``
    over all ``n + T`` rounds in the function's own units, mean over 5 repetitions with the
    paper's Wald error bar ``1.96 sd / sqrt(5)``.
Tuning (``tuning run`` / ``tuning summarize``)
    Random forest, MLP and gradient boosting with the spaces of App. D.2
    (:mod:`privtune.presets`) on breast_cancer, Australian and Diabetes (Pima). Repetition
    ``k`` of 5 trains on four folds of a stratified 5-fold split (shuffled with seed 0) and
    scores accuracy on fold ``k``; the estimator's ``random_state`` is ``k``. ``n = 8``,
    ``T = 64``. Regret is against the best accuracy any method found on that (task, fold).
Calibration (``calibrate``)
    GO-UCB's ``beta_scale`` and acquisition on problems disjoint from the reported ones:
    realizable random networks in 5 and 10 dimensions, Ackley-10 and Levy-10, seeds 1000+.
Time per ask (``timing``)
    After ``n + T`` told rewards of f2 for ``T`` in 25, 64 and 500, the median wall time of
    one ask, next to Optuna's TPESampler and GPSampler (needs torch) in the same run.

Usage::

    python -m benchmarks.go_ucb synthetic           # 75 runs; go_ucb_synthetic.json / .png
    python -m benchmarks.go_ucb tuning run          # 225 runs, resumable, shareable
    python -m benchmarks.go_ucb tuning summarize    # go_ucb_tuning.json / .md / .png
    python -m benchmarks.go_ucb calibrate           # go_ucb_calibration.json
    python -m benchmarks.go_ucb timing              # go_ucb_timing.json
    python -m benchmarks.go_ucb --quick             # everything, tiny (tests)
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from scipy import special

from benchmarks import harness
from benchmarks.datasets import load_dataset
from privtune.acquisition import ExpectedImprovement, ProbabilityOfImprovement
from privtune.optimizers import GOUCB, GPUCB, BaseOptimizer
from privtune.parametric import TwoLayerNetwork
from privtune.presets import PRESETS, estimator_for
from privtune.tuning import make_optimizer

#: GO-UCB with the changes tried against the vertex pathology (``vertex``): keyword arguments
#: of :class:`~privtune.optimizers.GOUCB` on top of its defaults. ``step_bound = 0.1`` and
#: ``refit_every = 8`` were set before any run, not tuned.
GO_VARIANTS: dict[str, dict[str, Any]] = {
    "go-ucb-observed": {"ascent_starts": "observed"},
    "go-ucb-local": {"ascent_starts": "observed", "step_bound": 0.1},
    "go-ucb-refit": {"refit_every": 8},
    "go-ucb-local-refit": {"ascent_starts": "observed", "step_bound": 0.1, "refit_every": 8},
}
METHODS = [
    "go-ucb",
    "go-ucb-first-order",
    "go-ucb-d1",
    *GO_VARIANTS,
    "gp-ucb",
    "gp-ei",
    "gp-pi",
    "random",
]
NOISE_SD = 0.01  # App. D.1


# -- baselines ------------------------------------------------------------------------------
#: The acquisitions of the GP baselines "gp-ei" and "gp-pi" (the library's): improvement over
#: the best told reward, with the margins the GO-UCB paper's baselines use.
IMPROVEMENT = {
    "gp-ei": lambda: ExpectedImprovement(xi=0.0, incumbent="observed"),
    "gp-pi": lambda: ProbabilityOfImprovement(xi=0.01, incumbent="observed"),
}


class PaperD1GOUCB(GOUCB):
    """GO-UCB with App. D.1's settings taken literally (a diagnostic, not a recommendation).

    - ``beta_t = d_w^3 F^4 t / T`` and ``lam = sqrt(T) ln^2 T`` unscaled;
    - the regression oracle is 2000 SGD steps with learning rate ``1e-11``, which leave the
      network at its initialisation: ``w_hat_0`` is the initialisation;
    - step 5 is 2000 plain gradient-ascent steps with learning rate ``1e-4`` over ``x`` (in
      the paper's units, ``[-5, 5]`` per coordinate: a tenth of the cube's gradient, ten
      times the cube's step) and ``w`` (kept in ``Ball_t``), from a uniform ``x`` and
      ``w_hat_t``; the paper does not say where the ascent starts.
    """

    def __init__(self, dim: int, **kwargs) -> None:
        T = kwargs.get("horizon") or 100
        kwargs.setdefault("lam", math.sqrt(T) * math.log(T) ** 2)
        super().__init__(dim, beta_scale=1.0, **kwargs)

    def fit_oracle(self, X, y, rng):
        return np.asarray(self.model.init_params(rng), dtype=float)

    def _propose(self, C, P):
        if self._uniform or self.phase == 1:
            return self._uniform_point(C)
        w_hat, S = self._given_pending(P)
        Sigma = np.linalg.inv(S)
        radius2 = self.beta
        x = self._rng.random(self.dim)
        w = w_hat.copy()
        for _ in range(2000):
            gx = self.model.grad_x(x[None, :], w)[0] / 100.0  # d f / d x_paper, step / 10
            gw = self.model.grad_w(x[None, :], w)[0]
            x = np.clip(x + 1e-4 * gx, 0.0, 1.0)
            w = w + 1e-4 * gw
            d = w - w_hat
            q = float(d @ Sigma @ d)
            if q > radius2:
                w = w_hat + d * math.sqrt(radius2 / q)
        return x


def make_method(
    method: str,
    dim: int,
    n: int,
    T: int,
    seed: int,
    snap: Callable[[np.ndarray], np.ndarray] | None = None,
    **go_kwargs: Any,
) -> BaseOptimizer:
    """The optimizer of ``method`` for a run with ``n`` uniform and ``T`` adaptive rounds.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    dim : int
        The dimension of the unit cube.
    n, T : int
        The uniform (Phase I) and adaptive rounds.
    seed : int
        The optimizer's seed.
    snap : callable, optional
        Maps points of the cube to valid encodings (a search space's ``snap``).
    **go_kwargs
        Further arguments of :class:`~privtune.optimizers.GOUCB` (``go-ucb`` methods only).

    Returns
    -------
    BaseOptimizer
        The optimizer.
    """
    if method == "go-ucb-d1":
        return PaperD1GOUCB(dim, n_explore=n, horizon=T, seed=seed, snap=snap)
    if method.startswith("go-ucb"):
        kwargs = {"n_explore": n, "horizon": T, "seed": seed, "snap": snap}
        kwargs |= GO_VARIANTS.get(method, {}) | go_kwargs
        if method == "go-ucb-first-order":
            kwargs["solver"] = "first-order"
        return GOUCB(dim, **kwargs)
    if method in ("gp-ei", "gp-pi"):
        base = make_optimizer("gp-ucb", dim, seed=seed, snap=snap)
        return GPUCB(
            dim,
            acquisition=IMPROVEMENT[method](),
            kernel=base.kernel,
            fit_lengthscale=True,
            lam=base.lam,
            B=base.B,
            R=base.R,
            seed=seed,
            snap=snap,
        )
    algorithm = {"gp-ucb": "gp-ucb", "random": "random"}[method]
    return make_optimizer(algorithm, dim, seed=seed, snap=snap)


def run_rounds(
    opt: BaseOptimizer, n: int, rounds: int, evaluate: Callable[[np.ndarray], float], seed: int
) -> list[np.ndarray]:
    """Ask and tell ``rounds`` times; the first ``n`` points are the seed's uniform draws.

    Parameters
    ----------
    opt : BaseOptimizer
        The optimizer (:func:`make_method`).
    n : int
        The uniform rounds, the same points for every method of a seed (GO-UCB's Phase I).
    rounds : int
        All rounds, ``n`` of them uniform.
    evaluate : callable
        The reward of a point of the cube.
    seed : int
        The seed of the uniform points.

    Returns
    -------
    list of ndarray
        The point of every round (:func:`benchmarks.harness.drive`).
    """
    uniform = np.random.default_rng([seed, 12345]).random((n, opt.dim))
    if opt.snap is not None:
        uniform = opt.snap(uniform)
    return harness.drive(opt, rounds, evaluate, warm_start=uniform)


# -- synthetic functions (Sec. 6.1) ------------------------------------------------------------

_NET20 = TwoLayerNetwork(20)
_G2 = np.linspace(-5, 5, 200001)


def f1(Z: np.ndarray) -> np.ndarray:
    """The realizable network, every weight and bias 1, on ``[-5, 5]^20``."""
    return _NET20.value(Z, np.ones(_NET20.n_params))


def f2(Z: np.ndarray) -> np.ndarray:
    """Styblinski-Tang as the paper writes it: ``-1/2 sum x^4 - 16 x^2 + 5 x``."""
    return -0.5 * np.sum(Z**4 - 16 * Z**2 + 5 * Z, axis=-1)


def f3(Z: np.ndarray) -> np.ndarray:
    """Rastrigin as the paper writes it: ``-200 + sum 10 cos(2 pi x) - x^2``."""
    return -200.0 + np.sum(10 * np.cos(2 * np.pi * Z) - Z**2, axis=-1)


def _ranges() -> dict[str, tuple[float, float]]:
    """``(min, max)`` of each function on ``[-5, 5]^20`` (f2 and f3 are separable)."""
    g2 = _G2**4 - 16 * _G2**2 + 5 * _G2
    g3 = 10 * np.cos(2 * np.pi * _G2) - _G2**2
    s = special.expit
    return {
        "f1": (float(25 * s(-99.0) + 1), float(25 * s(101.0) + 1)),
        "f2": (float(-10 * g2.max()), float(-10 * g2.min())),
        "f3": (float(-200 + 20 * g3.min()), float(-200 + 20 * g3.max())),
    }


FUNCTIONS = {"f1": (f1, 5, 25), "f2": (f2, 8, 64), "f3": (f3, 8, 64)}


def synthetic_run(name: str, method: str, seed: int, scale: float = 1.0) -> dict:
    """One repetition: cumulative regret of ``method`` on ``name``."""
    func, n, T = FUNCTIONS[name]
    n, T = max(2, round(n * scale)), max(2, round(T * scale))
    lo, hi = _ranges()[name]
    noise = np.random.default_rng([seed, 777])

    def evaluate(u):
        y = float(func(10 * u[None, :] - 5)[0]) + NOISE_SD * noise.standard_normal()
        return 2 * (y - lo) / (hi - lo) - 1

    t0 = time.perf_counter()
    opt = make_method(method, 20, n, T, seed)
    points = run_rounds(opt, n, n + T, evaluate, seed)
    f_true = func(10 * np.array(points) - 5)
    return {
        "function": name,
        "method": method,
        "seed": seed,
        "n": n,
        "T": T,
        "cumulative_regret": np.cumsum(hi - f_true).tolist(),
        "phase2_at_bounds": at_bounds(np.array(points)[n:]),
        "seconds": time.perf_counter() - t0,
    }


def at_bounds(U: np.ndarray, tol: float = 1e-6) -> float:
    """The fraction of the coordinates of the points ``U`` (rows, in the cube) within ``tol``
    of 0 or 1: how often a method proposes the cube's faces and vertices."""
    U = np.asarray(U, dtype=float)
    return float(np.mean((U <= tol) | (U >= 1.0 - tol))) if U.size else 0.0


def _regret_summary(curves: list[list[float]]) -> dict:
    """Mean cumulative regret over repetitions, with the paper's Wald 95% half-width."""
    R = np.asarray(curves, dtype=float)
    mean, wald95 = harness.mean_se(R, z=1.96, single=0.0)
    return {
        "mean": mean.tolist(),
        "wald95": wald95.tolist(),
        "final_mean": float(R[:, -1].mean()),
        "final_wald95": float(wald95[-1]),
    }


def synthetic(args: argparse.Namespace) -> dict:
    """Sec. 6.1: the runs of ``args`` not saved yet, then the summary and the plot."""
    grid = itertools.product(args.functions, args.methods, args.seeds)
    tasks = [
        (
            f"{name}-{method}-{seed}-{args.scale:g}",
            functools.partial(synthetic_run, name, method, seed, args.scale),
        )
        for name, method, seed in grid
    ]
    runs = harness.collect_runs(
        harness.RunStore(args.out, "go_ucb_synthetic"),
        tasks,
        lambda res: f"R = {res['cumulative_regret'][-1]:.1f} ({res['seconds']:.0f} s)",
    )
    summary = {}
    for name in args.functions:
        for method in args.methods:
            mine = [r for r in runs if r["function"] == name and r["method"] == method]
            bounds = [r["phase2_at_bounds"] for r in mine if "phase2_at_bounds" in r]
            summary.setdefault(name, {})[method] = {
                **_regret_summary([r["cumulative_regret"] for r in mine]),
                "phase2_at_bounds": float(np.mean(bounds)) if bounds else None,
                "seconds_per_run": float(np.mean([r["seconds"] for r in mine])),
            }
    out = {"benchmark": "go_ucb_synthetic", "seeds": list(args.seeds), "summary": summary}
    report = harness.Report(
        out,
        plot=lambda path: _plot_curves(summary, path, "cumulative regret"),
        headline={
            f: {m: round(v["final_mean"], 1) for m, v in s.items()} for f, s in summary.items()
        },
        compact=True,
    )
    return harness.publish(args.out, "go_ucb_synthetic", report)


#: One colour per method in every panel: the ten methods take matplotlib's ten cycle colours,
#: random search is black.
METHOD_COLOURS = {m: f"C{i}" for i, m in enumerate(m for m in METHODS if m != "random")} | {
    "random": "black"
}


def _plot_curves(summary: dict, path: Path, ylabel: str) -> None:
    keys = list(summary)
    fig, axes = harness.panel_grid(len(keys), 4.2, 3.2)
    if fig is None:
        return
    for ax, key in zip(axes, keys, strict=True):
        for method, v in summary[key].items():
            colour = METHOD_COLOURS.get(method)
            harness.plot_band(ax, v["mean"], v["wald95"], alpha=0.15, label=method, color=colour)
        ax.set_title(key.replace("|", " / "), fontsize=9)
        ax.set_xlabel("t")
        ax.set_ylabel(ylabel)
    axes[0].legend(fontsize=7)
    harness.save_figure(fig, path, title=f"GO-UCB against the GP methods: {ylabel}")


# -- calibration -------------------------------------------------------------------------------


def _calibration_problems(seed: int) -> dict:
    """Problems disjoint from the reported ones, as ``name -> (dim, f on the cube, max)``."""
    rng = np.random.default_rng([seed, 31])
    problems = {}
    for d in (5, 10):
        net = TwoLayerNetwork(d, hidden=10)
        w = rng.standard_normal(net.n_params) * 2
        problems[f"net{d}"] = (d, functools.partial(net.value, w=w), _network_max(net, w, rng))

    def ackley(U):
        Z = 4 * U - 2
        return (
            20 * np.exp(-0.2 * np.sqrt(np.mean(Z**2, axis=-1)))
            + np.exp(np.mean(np.cos(2 * np.pi * Z), axis=-1))
            - 20
            - math.e
        )

    def levy(U):
        Z = 1 + (20 * U - 10 - 1) / 4
        t1 = np.sin(np.pi * Z[..., 0]) ** 2
        t2 = np.sum(
            (Z[..., :-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * Z[..., :-1] + 1) ** 2), axis=-1
        )
        t3 = (Z[..., -1] - 1) ** 2 * (1 + np.sin(2 * np.pi * Z[..., -1]) ** 2)
        return -(t1 + t2 + t3)

    problems["ackley10"] = (10, ackley, 0.0)
    problems["levy10"] = (10, levy, 0.0)
    return problems


def _network_max(net: TwoLayerNetwork, w: np.ndarray, rng: np.random.Generator) -> float:
    """``max_x f_w(x)`` over the cube: L-BFGS-B from the 20 best of 10^4 uniform draws."""
    from scipy import optimize

    raw = rng.random((10_000, net.dim))
    best = -math.inf
    for x0 in raw[np.argsort(-net.value(raw, w))[:20]]:
        res = optimize.minimize(
            lambda x: (-net.value(x[None, :], w)[0], -net.grad_x(x[None, :], w)[0]),
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * net.dim,
        )
        best = max(best, -float(res.fun))
    return best


def _normalizer(func, dim: int, seed: int):
    """Affine map of a problem's values to roughly ``[-1, 1]`` from 10^4 uniform draws."""
    v = func(np.random.default_rng([seed, 99]).random((10_000, dim)))
    lo, hi = float(v.min()), float(v.max())
    return lambda y: 2 * (y - lo) / (hi - lo) - 1


def calibrate(args: argparse.Namespace) -> dict:
    """GO-UCB's ``beta_scale`` and acquisition on problems disjoint from the reported ones."""
    grid = [(float(s), lam) for s in args.beta_scales for lam in args.lams]
    n, T = args.n, args.T
    results: dict = {}
    for seed in args.seeds:
        for name, (dim, func, fmax) in _calibration_problems(seed).items():
            if name not in args.problems:
                continue
            norm = _normalizer(func, dim, seed)
            for acq in ("first-order", "joint"):
                for scale, lam in grid:
                    kwargs = {"beta_scale": scale}
                    if lam != "default":
                        kwargs["lam"] = float(lam)
                    key = f"beta_scale={scale:g},lam={lam}"
                    opt = make_method("go-ucb", dim, n, T, seed, solver=acq, **kwargs)
                    pts = run_rounds(
                        opt, n, n + T, lambda u, f=func, g=norm: float(g(f(u[None, :])[0])), seed
                    )
                    regret = float(np.sum(fmax - func(np.array(pts))))
                    results.setdefault(name, {}).setdefault(acq, {}).setdefault(key, []).append(
                        regret
                    )
                    print(name, seed, acq, key, round(regret, 2), file=sys.stderr, flush=True)
            for method in ("gp-ucb", "random"):
                opt = make_method(method, dim, n, T, seed)
                pts = run_rounds(
                    opt, n, n + T, lambda u, f=func, g=norm: float(g(f(u[None, :])[0])), seed
                )
                results.setdefault(name, {}).setdefault(method, []).append(
                    float(np.sum(fmax - func(np.array(pts))))
                )
    # rank each (acquisition, scale) per problem by mean regret, relative to random's
    rel: dict = {}
    for r in results.values():
        base = float(np.mean(r["random"]))
        for acq in ("first-order", "joint"):
            for key, regrets in r[acq].items():
                rel.setdefault(acq, {}).setdefault(key, []).append(float(np.mean(regrets)) / base)
        rel.setdefault("gp-ucb", []).append(float(np.mean(r["gp-ucb"])) / base)
    mean_rel = {
        acq: (
            {s: float(np.mean(v)) for s, v in d.items()}
            if isinstance(d, dict)
            else float(np.mean(d))
        )
        for acq, d in rel.items()
    }
    out = {
        "benchmark": "go_ucb_calibration",
        "n": n,
        "T": T,
        "seeds": list(args.seeds),
        "regret": results,
        "regret_relative_to_random": mean_rel,
    }
    report = harness.Report(out, headline=mean_rel, compact=True)
    return harness.publish(args.out, "go_ucb_calibration", report)


# -- time per ask ------------------------------------------------------------------------------


def timing(args: argparse.Namespace) -> dict:
    """Median seconds per ask after ``n + T`` told rewards of f2, next to Optuna's samplers."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    lo, hi = _ranges()["f2"]
    res: dict = {}
    for T in args.horizons:
        n = max(2, math.ceil(math.sqrt(T)))
        rng = np.random.default_rng(T)
        U = rng.random((n + T, 20))
        y = 2 * (f2(10 * U - 5) - lo) / (hi - lo) - 1
        for method in ("go-ucb", "go-ucb-first-order", "gp-ucb"):
            times = []
            for r in range(args.repeats):
                opt = make_method(method, 20, n, T, seed=r)
                opt.tell(U, y)
                t0 = time.perf_counter()
                opt.ask()
                times.append(time.perf_counter() - t0)
            res.setdefault(str(T), {})[method] = statistics.median(times)
        for name in _optuna_samplers():
            times = []
            for r in range(args.repeats):
                times.append(_optuna_ask_time(name, U, y, r))
            res[str(T)][name] = statistics.median(times)
        print(T, {k: round(v, 3) for k, v in res[str(T)].items()}, file=sys.stderr, flush=True)
    out = {"benchmark": "go_ucb_timing", "repeats": args.repeats, "seconds_per_ask": res}
    return harness.publish(
        args.out, "go_ucb_timing", harness.Report(out, headline=res, compact=True)
    )


def _optuna_samplers() -> list[str]:
    return ["optuna-tpe", *(["optuna-gp"] if harness.sampler_available("gp") else [])]


def _optuna_ask_time(name: str, U: np.ndarray, y: np.ndarray, seed: int) -> float:
    import optuna

    dists = {f"x{i}": optuna.distributions.FloatDistribution(0.0, 1.0) for i in range(U.shape[1])}
    sampler = (
        optuna.samplers.TPESampler(seed=seed)
        if name == "optuna-tpe"
        else optuna.samplers.GPSampler(seed=seed)
    )
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.add_trials(
        [
            optuna.create_trial(
                params=dict(zip(dists, map(float, u), strict=True)),
                distributions=dists,
                value=float(v),
            )
            for u, v in zip(U, y, strict=True)
        ]
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trial = study.ask(dists)
    dt = time.perf_counter() - t0
    study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return dt


# -- hyperparameter tuning (Sec. 6.2) ----------------------------------------------------------

TUNING_MODELS = ["random_forest", "mlp", "gradient_boosting"]
TUNING_DATASETS = ["breast_cancer", "australian", "pima"]
TUNING_METHODS = ["go-ucb", "gp-ucb", "gp-ei", "gp-pi", "random"]


def tuning_run(model: str, dataset: str, method: str, fold: int, n: int, T: int) -> dict:
    """One repetition: ``n + T`` configurations scored on fold ``fold``."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    X, y = load_dataset(dataset)
    train, test = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[fold]
    space = PRESETS[model][0]()
    accuracies: list[float] = []

    def evaluate(u):
        est = estimator_for(model, random_state=fold, **space.from_unit(u))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                acc = float(clone(est).fit(X[train], y[train]).score(X[test], y[test]))
        except ValueError:
            acc = 0.0  # a configuration that cannot be fitted scores as the worst accuracy
        accuracies.append(acc)
        return 2 * acc - 1

    t0 = time.perf_counter()
    opt = make_method(method, space.dim, n, T, seed=fold, snap=space.snap)
    run_rounds(opt, n, n + T, evaluate, seed=fold)
    return {
        "model": model,
        "dataset": dataset,
        "method": method,
        "fold": fold,
        "n": n,
        "T": T,
        "accuracies": accuracies,
        "seconds": time.perf_counter() - t0,
    }


def tuning(args: argparse.Namespace) -> dict | None:
    """Sec. 6.2: ``run`` the runs not saved yet, or ``summarize`` the saved ones."""
    store = harness.RunStore(args.out, "go_ucb_tuning")
    if args.action == "run":
        grid = itertools.product(args.folds, args.models, args.datasets, args.methods)
        tasks = [
            (
                f"{model}-{dataset}-{method}-{fold}",
                functools.partial(tuning_run, model, dataset, method, fold, args.n, args.T),
            )
            for fold, model, dataset, method in grid
        ]
        harness.collect_runs(
            store,
            tasks,
            lambda res: f"best {max(res['accuracies']):.4f} ({res['seconds']:.0f} s)",
        )
        return None
    rows = harness.load_runs(store)
    best: dict = {}
    for r in rows:
        key = (r["model"], r["dataset"], r["fold"])
        best[key] = max(best.get(key, 0.0), max(r["accuracies"]))
    summary: dict = {}
    for model, dataset in itertools.product(TUNING_MODELS, TUNING_DATASETS):
        task = f"{model}|{dataset}"
        for method in [m for m in METHODS if m in TUNING_METHODS or m in GO_VARIANTS]:
            mine = [
                r
                for r in rows
                if (r["model"], r["dataset"], r["method"]) == (model, dataset, method)
            ]
            if not mine:
                continue
            regret = [
                np.cumsum(best[(model, dataset, r["fold"])] - np.array(r["accuracies"]))
                for r in mine
            ]
            summary.setdefault(task, {})[method] = {
                "n_folds": len(mine),
                **_regret_summary(regret),
                "best_accuracy": float(np.mean([max(r["accuracies"]) for r in mine])),
                "seconds_per_run": float(np.mean([r["seconds"] for r in mine])),
            }
    out = {"benchmark": "go_ucb_tuning", "n_runs": len(rows), "summary": summary}
    markdown = _tuning_markdown(summary)
    report = harness.Report(
        out,
        markdown=markdown,
        plot=lambda path: _plot_curves(summary, path, "cumulative regret (accuracy)"),
        headline=markdown,
    )
    return harness.publish(args.out, "go_ucb_tuning", report)


def _tuning_markdown(summary: dict) -> str:
    methods = [m for m in METHODS if any(m in v for v in summary.values())]
    lines = [
        "Cumulative regret after n + T rounds (accuracy units), mean ± Wald 95% over folds;"
        " best accuracy found, mean over folds.",
        "",
        "| model | data | " + " | ".join(methods) + " |",
        "|---|---|" + "---|" * len(methods),
    ]
    for task, v in summary.items():
        model, data = task.split("|")
        cells = [
            f"{v[m]['final_mean']:.2f} ± {v[m]['final_wald95']:.2f} ({v[m]['best_accuracy']:.3f})"
            if m in v
            else "-"
            for m in methods
        ]
        lines.append(f"| {model} | {data} | " + " | ".join(cells) + " |")
    ratios = {
        m: [v[m]["final_mean"] / v["random"]["final_mean"] for v in summary.values() if m in v]
        for m in methods
        if all("random" in v for v in summary.values())
    }
    if ratios:
        lines += [
            "",
            "Cumulative regret relative to random search's, mean over the tasks (min - max):",
            "",
            "| " + " | ".join(methods) + " |",
            "|" + "---|" * len(methods),
            "| "
            + " | ".join(f"{np.mean(r):.2f} ({min(r):.2f} - {max(r):.2f})" for r in ratios.values())
            + " |",
        ]
    return "\n".join(lines) + "\n"


# -- command line ------------------------------------------------------------------------------


def _synthetic_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--functions", nargs="+", default=list(FUNCTIONS))
    p.add_argument("--methods", nargs="+", default=METHODS)
    p.add_argument("--seeds", nargs="+", type=int, default=list(range(5)))
    p.add_argument("--scale", type=float, default=1.0, help="multiplies n and T")


def _tuning_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["run", "summarize"])
    p.add_argument("--models", nargs="+", default=TUNING_MODELS)
    p.add_argument("--datasets", nargs="+", default=TUNING_DATASETS)
    p.add_argument("--methods", nargs="+", default=TUNING_METHODS)
    p.add_argument("--folds", nargs="+", type=int, default=list(range(5)))
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--T", type=int, default=64)


def _calibrate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--beta-scales", nargs="+", default=["1e-10", "1e-9", "1e-8", "1e-7", "1e-6", "1e-5"]
    )
    p.add_argument("--lams", nargs="+", default=["default", "1", "0.01"])
    p.add_argument("--problems", nargs="+", default=["net5", "net10", "ackley10", "levy10"])
    p.add_argument("--seeds", nargs="+", type=int, default=[1000, 1001, 1002])
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--T", type=int, default=64)


def _timing_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--horizons", nargs="+", type=int, default=[25, 64, 500])
    p.add_argument("--repeats", type=int, default=3)


def _quick(args: argparse.Namespace) -> dict | None:
    """A tiny run of every part."""
    out = args.out
    synthetic(
        argparse.Namespace(
            functions=["f1"],
            methods=["go-ucb", "go-ucb-d1", "gp-ei", "random"],
            seeds=[0, 1],
            scale=0.2,
            out=out,
        )
    )
    calibrate(
        argparse.Namespace(
            beta_scales=["1e-8"],
            lams=["default"],
            problems=["net5"],
            seeds=[1000],
            n=3,
            T=4,
            out=out,
        )
    )
    timing(argparse.Namespace(horizons=[4], repeats=1, out=out))
    tun = dict(
        models=["random_forest"],
        datasets=["pima"],
        methods=["go-ucb", "gp-pi"],
        folds=[0, 1],
        n=2,
        T=2,
        out=out,
    )
    tuning(argparse.Namespace(action="run", **tun))
    return tuning(argparse.Namespace(action="summarize", **tun))


PARTS = (
    harness.Part("synthetic", _synthetic_arguments, synthetic),
    harness.Part("tuning", _tuning_arguments, tuning),
    harness.Part("calibrate", _calibrate_arguments, calibrate),
    harness.Part("timing", _timing_arguments, timing),
)


def main(argv: list[str] | None = None) -> dict | None:
    """Run a part (or, with ``--quick``, every part); returns that part's results."""
    return harness.main_parts(__doc__, PARTS, _quick, argv, quick_help="a tiny run of every part")


if __name__ == "__main__":
    main()
