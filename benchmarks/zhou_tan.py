"""Reproduce the synthetic experiments of Zhou & Tan (2021): Fig. 2 and Fig. 3(a) of App. E.

Domain: 100-point grid on [0, 1]. Objective: f = sum_{i<=100} a_i k(., x_i) with a_i ~ U[-1, 1]
and support points x_i drawn from the grid, a new f for each trial; B = max |f|. Kernels: SE
with l = 0.2 and Matérn with l = 0.2, nu = 2.5 (the algorithms use the same kernel).

Settings
- ``ldp``: noise U[-1, 1] (R = 1), then the curator CTL(epsilon) (Laplace of scale
  2 (B + R) / epsilon); the LDP versions of the algorithms.
- ``heavy``: Student-t noise with 3 degrees of freedom, no privacy; the non-private heavy-tailed
  versions with v = B^2 + 3 and c = 3 (the paper's values).

Algorithms: MoMA-, TGP- and ATA-GP-UCB, plus GP-UCB and random search for reference, each with
its documented defaults. Output: a JSON summary (final cumulative regret, mean and standard
error over trials, and the mean curves) and a PNG of the curves.

Usage::

    python -m benchmarks.zhou_tan                 # full run (10 trials, T = 1000)
    python -m benchmarks.zhou_tan --quick         # smoke run used by the test suite
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks import harness
from privtune.kernels import SE, Kernel, Matern
from privtune.optimizers import ATAGPUCB, GPUCB, TGPUCB, MoMAGPUCB, RandomSearch
from privtune.privacy import LaplaceCurator

ALGORITHMS = {
    "moma": MoMAGPUCB,
    "tgp": TGPUCB,
    "ata": ATAGPUCB,
    "gp-ucb": GPUCB,
    "random": RandomSearch,
}
KERNELS = {"se": lambda: SE(0.2), "matern": lambda: Matern(0.2, nu=2.5)}
GRID = np.linspace(0.0, 1.0, 100)[:, None]


#: How ``f`` is drawn: ``"paper"`` as the paper's text reads (support points on the grid, ``B =
#: max |f|``); ``"authors"`` as the authors' code does it (support points ``U[0, 1]``, off the
#: grid, then ``f / max |f|``, so ``B = 1``).
OBJECTIVES = ("paper", "authors")


def make_objective(
    kernel: Kernel, rng: np.random.Generator, objective: str = "paper"
) -> np.ndarray:
    """f on the grid: a sum of 100 kernel bumps with U[-1, 1] weights (see :data:`OBJECTIVES`)."""
    if objective == "paper":
        support = GRID[rng.integers(0, GRID.shape[0], size=100)]
    elif objective == "authors":
        support = rng.uniform(0.0, 1.0, size=(100, 1))
    else:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}.")
    a = rng.uniform(-1.0, 1.0, size=100)
    f = kernel(GRID, support) @ a
    return f if objective == "paper" else f / np.max(np.abs(f))


def make_algorithm(
    algorithm: str,
    setting: str,
    kernel: Kernel,
    *,
    B: float,
    R: float,
    epsilon: float | None,
    v: float,
    c: float,
    horizon: int,
    seed: int,
    overrides: dict | None = None,
    algorithms: dict | None = None,
):
    """One algorithm on a one-dimensional domain with the paper's settings.

    ``setting="ldp"``: the LDP version at ``epsilon`` (bounded noise ``R``); ``"heavy"``: the
    non-private heavy-tailed version, with the moment bound ``v`` (TGP, ATA) or ``c`` (MoMA).
    lambda = 1, delta = 0.05, the documented defaults otherwise; ``overrides`` replaces any of
    these keyword arguments, and ``algorithms`` (name to class) any of :data:`ALGORITHMS`.
    """
    kwargs: dict = {"kernel": kernel, "B": B, "R": R, "lam": 1.0, "delta": 0.05, "seed": seed}
    if setting == "ldp":
        kwargs["epsilon"] = epsilon
    elif algorithm in ("tgp", "ata"):
        kwargs["v"] = v
    elif algorithm == "moma":
        kwargs["c"] = c
    if algorithm in ("ata", "moma"):
        kwargs["horizon"] = horizon
    kwargs.update(overrides or {})
    return (ALGORITHMS | (algorithms or {}))[algorithm](1, **kwargs)


def run_trial(
    algorithm: str,
    setting: str,
    kernel_name: str,
    epsilon: float,
    T: int,
    trial: int,
    overrides: dict | None = None,
    objective: str = "paper",
    algorithms: dict | None = None,
) -> np.ndarray:
    """Cumulative regret curve of one algorithm on one random objective (:data:`OBJECTIVES`);
    ``overrides`` and ``algorithms`` as in :func:`make_algorithm`."""
    kernel = KERNELS[kernel_name]()
    # The objective and the noise depend on the trial only, so every algorithm faces the
    # same f and the same noise sequence in a trial.
    f = make_objective(kernel, np.random.default_rng([trial, 7]), objective)
    B = float(np.max(np.abs(f)))
    noise_rng = np.random.default_rng([trial, 11])
    curator = None
    if setting == "ldp":
        curator = LaplaceCurator(epsilon, value_range=(-(B + 1.0), B + 1.0), seed=trial)
    opt = make_algorithm(
        algorithm,
        setting,
        kernel,
        B=B,
        R=1.0,
        epsilon=epsilon,
        v=B**2 + 3.0,
        c=3.0,
        horizon=T,
        seed=trial,
        overrides=overrides,
        algorithms=algorithms,
    )

    regret = []
    f_star = float(f.max())

    def evaluate(x: np.ndarray) -> float:
        i = round(float(x[0]) * (GRID.shape[0] - 1))
        regret.append(f_star - f[i])
        if setting == "ldp":
            return curator.privatize(f[i] + noise_rng.uniform(-1.0, 1.0))
        return f[i] + noise_rng.standard_t(3)

    harness.drive(opt, T, evaluate, candidates=GRID)
    return np.cumsum(regret)


def run(args: argparse.Namespace) -> dict:
    """Every setting and algorithm of ``args``: the summary of their trials."""
    settings = []
    for kernel_name in args.kernels:
        for eps in args.epsilons:
            settings.append(("ldp", kernel_name, eps))
        settings.append(("heavy", kernel_name, None))
    overrides = json.loads(args.overrides) if args.overrides else {}
    results: dict = {
        "config": {
            "T": args.T,
            "trials": args.trials,
            "algorithms": args.algorithms,
            "overrides": overrides,
        },
        "settings": {},
    }
    for setting, kernel_name, eps in settings:
        key = f"{setting}-{kernel_name}" + (f"-eps{eps:g}" if eps is not None else "")
        entry = {}
        for alg in args.algorithms:
            t0 = time.perf_counter()
            curves = np.array(
                [
                    run_trial(alg, setting, kernel_name, eps, args.T, trial, overrides.get(alg))
                    for trial in range(args.trial_offset, args.trial_offset + args.trials)
                ]
            )
            mean, se = harness.mean_se(curves[:, -1], single=0.0)
            entry[alg] = {
                "final_regret_mean": float(mean),
                "final_regret_se": float(se),
                "curve_mean": curves.mean(axis=0).round(4).tolist(),
                "seconds": round(time.perf_counter() - t0, 2),
            }
            print(
                f"{key:24s} {alg:8s} R_T = {mean:9.1f}"
                f" ± {entry[alg]['final_regret_se']:.1f}"
                f"  ({entry[alg]['seconds']} s)",
                file=sys.stderr,
            )
        ranking = sorted(args.algorithms, key=lambda a: entry[a]["final_regret_mean"])
        results["settings"][key] = {"algorithms": entry, "ranking": ranking}
    return results


def plot(results: dict, path: Path) -> None:
    """The mean cumulative-regret curves, one panel per setting.

    A curve is plotted against its ``curve_rounds`` when it has them (every round otherwise),
    and a setting's ``panel``, when given, names the paper's figure in the title. Every
    algorithm keeps its colour in every panel.
    """
    keys = list(results["settings"])
    fig, axes = harness.panel_grid(len(keys), 4.2, 3.4)
    if fig is None:
        return
    for ax, key in zip(axes, keys, strict=True):
        setting = results["settings"][key]
        algorithms = setting["algorithms"]
        order = list(ALGORITHMS)
        for alg in sorted(algorithms, key=lambda a: order.index(a) if a in order else len(order)):
            entry = algorithms[alg]
            rounds = entry.get("curve_rounds") or np.arange(1, len(entry["curve_mean"]) + 1)
            color = f"C{order.index(alg)}" if alg in order else None
            ax.plot(rounds, entry["curve_mean"], label=alg, color=color)
        panel = setting.get("panel")
        ax.set_title(key if panel is None else f"{key} (paper: {panel})", fontsize=9)
        ax.set_xlabel("t")
        ax.set_ylabel("cumulative regret")
    # the legend goes where every algorithm of the figure is drawn, or the most of them
    max(axes[: len(keys)], key=lambda ax: len(ax.get_lines())).legend(fontsize=8)
    harness.save_figure(
        fig, path, title=f"Zhou & Tan (2021): cumulative regret of the GP-UCB family ({path.stem})"
    )


def publish_regrets(out: Path, name: str, result: dict, ranking: str) -> dict:
    """Write a reproduction's ``result`` (``<name>.json`` and ``.png``) and print, per setting,
    each algorithm's final mean regret and the setting's ``ranking``."""
    headline = {
        k: {a: round(v["final_regret_mean"], 1) for a, v in s["algorithms"].items()}
        | {ranking: s[ranking]}
        for k, s in result["settings"].items()
    }
    report = harness.Report(result, plot=lambda path: plot(result, path), headline=headline)
    return harness.publish(out, name, report)


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; returns the results written to ``<out>/<name>.json``."""
    parser = harness.make_parser(__doc__, quick="T=40, 2 trials, SE only")
    parser.add_argument("--T", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--kernels", nargs="+", default=["se", "matern"], choices=list(KERNELS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 0.5])
    parser.add_argument(
        "--algorithms", nargs="+", default=list(ALGORITHMS), choices=list(ALGORITHMS)
    )
    parser.add_argument(
        "--overrides", default="", help='JSON {"alg": {"param": value}} to vary a default'
    )
    parser.add_argument(
        "--trial-offset", type=int, default=0, help="first trial seed (calibration uses 1000+)"
    )
    parser.add_argument("--name", default="zhou_tan")
    args = harness.parse(parser, argv)
    if args.quick:
        args.T, args.trials, args.kernels, args.epsilons = 40, 2, ["se"], [1.0]
    results = run(args)
    summary = {
        k: {
            a: {kk: vv for kk, vv in e.items() if kk != "curve_mean"}
            for a, e in s["algorithms"].items()
        }
        | {"ranking": s["ranking"]}
        for k, s in results["settings"].items()
    }
    report = harness.Report(
        results,
        plot=lambda path: plot(results, path),
        headline={"config": results["config"], "summary": summary},
    )
    return harness.publish(args.out, args.name, report)


if __name__ == "__main__":
    main()
