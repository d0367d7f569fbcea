"""Sampler overhead: wall time per trial as a user waits for it, per ``sample_relative``, and
the spread of a parallel batch.

Whole trials first: a study of ``max(--trial-sizes) + 5`` trials runs ``study.optimize`` on a
10-parameter mixed space (six floats, a log-scale float, an integer 1-20, two categoricals;
:func:`trial_objective`) with a cheap smooth objective, and the time from one trial's end to the
next one's (ask, the sampler's work, the objective, tell and Optuna's bookkeeping) is
recorded. Reported: the mean of the 5 trials after n completed, n in ``--trial-sizes`` (30,
100, 300), median over ``--repeats`` seeds, for privtune's default sampler
(``PrivateGPUCBSampler(seed=seed)``), TPESampler and GPSampler (needs torch) in the same run.

Then the cost of one proposal. A 10-parameter mixed space (four floats, one of them log-scale
and one with a step; three integers, one log-scale; three categoricals). For each history size
n in {50, 100, 300, 1000} a study is filled with n completed trials at uniform random
parameters (value: a smooth function of them), then each sampler proposes the next trial:

- ``cold``: a new sampler instance (a new worker joining the study): privtune replays the
  whole history into a fresh optimizer;
- ``warm``: the same instance after one more trial completed: privtune extends its cached
  optimizer by one reward (MoMA-GP-UCB: one more epoch of three plays; its histories are
  made of such epochs). Optuna's samplers rebuild from the study either way (GPSampler
  warm-starts its kernel fit from the previous one).

Each time is the median of ``--repeats`` calls, privtune's four algorithms next to Optuna's
TPESampler and GPSampler (needs torch) in the same run. Machines are noisy: compare ratios,
not absolute times.

Batch spread: with 50 completed trials, four trials are asked before any is told (four
parallel workers). Reported: the number of distinct configurations among the four and their
mean pairwise distance in privtune's cube encoding (MoMA-GP-UCB repeats each configuration
k = 3 times by design).

Usage::

    python -m benchmarks.optuna_overhead            # whole trials at 30, 100, 300; proposals
                                                    # at n = 50, 100, 300, 1000
    python -m benchmarks.optuna_overhead --quick    # whole trials at 12, n = 20, 40 (tests)
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from benchmarks import harness
from privtune import PrivateGPUCBSampler
from privtune.space import SearchSpace

SPACE = {
    "f_lin": FloatDistribution(0.0, 1.0),
    "f_log": FloatDistribution(1e-4, 1.0, log=True),
    "f_step": FloatDistribution(-1.0, 1.0, step=0.1),
    "f_wide": FloatDistribution(-5.0, 5.0),
    "i_lin": IntDistribution(1, 20),
    "i_log": IntDistribution(1, 1000, log=True),
    "i_step": IntDistribution(0, 100, step=5),
    "c_two": CategoricalDistribution(["a", "b"]),
    "c_three": CategoricalDistribution(["x", "y", "z"]),
    "c_bool": CategoricalDistribution([True, False]),
}
ENCODER = SearchSpace(SPACE)
PRIVTUNE = ["moma", "ata", "tgp", "gp-ucb"]

TRIAL_SIZES = [30, 100, 300]
#: Trials averaged after each size.
TRIAL_WINDOW = 5


def trial_objective(trial: optuna.Trial) -> float:
    """The whole-trial study: what a forest or an MLP space looks like to a sampler (six
    floats, a log-scale float, an integer, two categoricals), a smooth function with its
    optimum inside the box."""
    v = -sum((trial.suggest_float(f"x{i}", 0.0, 1.0) - 0.1 * i) ** 2 for i in range(6))
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    k = trial.suggest_int("k", 1, 20)
    v -= (math.log10(lr) + 2) ** 2 / 4 + (k - 7) ** 2 / 50
    v += {"a": 0.0, "b": 0.3, "c": -0.2}[trial.suggest_categorical("c1", ["a", "b", "c"])]
    return v + (0.1 if trial.suggest_categorical("c2", ["u", "v"]) == "u" else 0.0)


def time_trials(name: str, sizes: list[int], seed: int) -> dict[str, float]:
    """Mean seconds of the :data:`TRIAL_WINDOW` whole trials after each size in ``sizes``.

    Parameters
    ----------
    name : str
        ``"privtune"`` (the default sampler), ``"tpe"`` or ``"gp"``.
    sizes : list of int
        Completed trials before each timed window.
    seed : int
        The sampler's seed.

    Returns
    -------
    dict
        ``{str(n): seconds}``.
    """
    sampler = (
        PrivateGPUCBSampler(seed=seed) if name == "privtune" else make_sampler(name, seed=seed)
    )
    study = optuna.create_study(direction="maximize", sampler=sampler)
    stamps = [time.perf_counter()]
    study.optimize(
        trial_objective,
        n_trials=max(sizes) + TRIAL_WINDOW,
        callbacks=[lambda study, trial: stamps.append(time.perf_counter())],
    )
    gaps = np.diff(stamps)
    return {str(n): float(np.mean(gaps[n : n + TRIAL_WINDOW])) for n in sizes}


def value(params: dict) -> float:
    """The objective: a smooth function of the parameters' cube encoding."""
    u = ENCODER.to_unit(params)
    return float(np.sin(3 * u[:4].sum()) + np.cos(2 * u[4:7].sum()) + 0.3 * u[7:].sum())


def make_sampler(name: str, seed: int = 0) -> optuna.samplers.BaseSampler:
    """The sampler ``name``: ``"tpe"``, ``"gp"`` or a privtune algorithm."""
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    return PrivateGPUCBSampler(name, seed=seed)


def available() -> list[str]:
    """The samplers timed: privtune's, TPE, and GPSampler if torch is installed."""
    return [*PRIVTUNE, "tpe", *(["gp"] if harness.sampler_available("gp") else [])]


def filled_study(n: int, seed: int, plays: int = 1) -> optuna.Study:
    """n completed trials: uniform configurations, each played ``plays`` times in a row."""
    rng = np.random.default_rng(seed)
    study = optuna.create_study(direction="maximize")
    trials = []
    for u in rng.random((-(-n // plays), ENCODER.dim)):
        params = ENCODER.from_unit(ENCODER.snap(u))
        for _ in range(plays):
            trials.append(
                optuna.create_trial(params=params, distributions=SPACE, value=value(params))
            )
    study.add_trials(trials[:n])
    return study


def plays_of(name: str) -> int:
    """MoMA-GP-UCB's history is made of epochs of k = 3 plays; with single plays it would
    only hand out the missing plays of old configurations, the cheap path."""
    return 3 if name == "moma" else 1


def _time_one(sampler, study) -> float:
    trial_id = study._storage.create_new_trial(study._study_id)
    frozen = study._storage.get_trial(trial_id)
    space = sampler.infer_relative_search_space(study, frozen)
    t0 = time.perf_counter()
    sampler.sample_relative(study, frozen, space)
    dt = time.perf_counter() - t0
    study._storage.set_trial_state_values(trial_id, optuna.trial.TrialState.FAIL)
    return dt


def time_sampler(name: str, n: int, repeats: int) -> dict:
    """Median seconds of a cold and of a warm ``sample_relative`` after ``n`` trials.

    Parameters
    ----------
    name : str
        The sampler (:func:`make_sampler`).
    n : int
        Completed trials in the study.
    repeats : int
        Studies timed (seeds ``0 .. repeats - 1``).

    Returns
    -------
    dict
        ``cold_s`` and ``warm_s``.
    """
    cold, warm = [], []
    for r in range(repeats):
        study = filled_study(n, seed=r, plays=plays_of(name))
        sampler = make_sampler(name, seed=r)
        cold.append(_time_one(sampler, study))
        # One more trial completes; for MoMA, a whole epoch (so its model is refitted).
        u = np.random.default_rng(99 + r).random(ENCODER.dim)
        params = ENCODER.from_unit(ENCODER.snap(u))
        for _ in range(plays_of(name)):
            study.add_trial(
                optuna.create_trial(params=params, distributions=SPACE, value=value(params))
            )
        warm.append(_time_one(sampler, study))
    return {"cold_s": statistics.median(cold), "warm_s": statistics.median(warm)}


def batch_spread(name: str, n_history: int = 50, batch: int = 4, seed: int = 0) -> dict:
    """How far apart ``batch`` trials asked before any is told lie, after ``n_history``.

    Parameters
    ----------
    name : str
        The sampler (:func:`make_sampler`).
    n_history : int, default=50
        Completed trials first (rounded down to whole epochs for MoMA).
    batch : int, default=4
        Trials asked in a row.
    seed : int, default=0
        The seed of the history and of the sampler.

    Returns
    -------
    dict
        ``distinct`` configurations and their ``mean_pairwise_distance`` in the cube.
    """
    study = filled_study(
        n_history - n_history % 3 if name == "moma" else n_history, seed, plays=plays_of(name)
    )
    study.sampler = make_sampler(name, seed)
    points = []
    for _ in range(batch):
        trial = study.ask(SPACE)
        points.append(ENCODER.to_unit(trial.params))
    P = np.array(points)
    dists = [np.linalg.norm(P[i] - P[j]) for i in range(batch) for j in range(i + 1, batch)]
    distinct = len({tuple(np.round(p, 12)) for p in P})
    return {"distinct": distinct, "mean_pairwise_distance": float(np.mean(dists))}


def run(sizes: list[int], repeats: int, out: Path, trial_sizes: list[int] = TRIAL_SIZES) -> dict:
    """Time whole trials, every sampler's proposal at every history size, and the batch spread.

    Parameters
    ----------
    sizes : list of int
        The numbers of completed trials before one ``sample_relative``.
    repeats : int
        Timings per (sampler, size); the median is reported.
    out : Path
        The folder of ``optuna_overhead.json`` and ``.png``.
    trial_sizes : list of int
        The numbers of completed trials before each timed window of whole trials.

    Returns
    -------
    dict
        The results written to ``optuna_overhead.json``.
    """
    whole_names = ["privtune", "tpe", *(["gp"] if harness.sampler_available("gp") else [])]
    runs = {s: [time_trials(s, trial_sizes, seed) for seed in range(repeats)] for s in whole_names}
    per_trial = {
        s: {str(n): statistics.median(r[str(n)] for r in rs) for n in trial_sizes}
        for s, rs in runs.items()
    }
    for s, by_n in per_trial.items():
        print(
            f"whole trial {s:8s} "
            + "  ".join(f"n={n}: {v * 1e3:7.1f} ms" for n, v in by_n.items()),
            flush=True,
        )
    names = available()
    timings: dict[str, dict] = {s: {} for s in names}
    for n in sizes:
        for s in names:
            timings[s][str(n)] = time_sampler(s, n, repeats)
            t = timings[s][str(n)]
            print(
                f"n={n:5d} {s:7s} cold {t['cold_s'] * 1e3:8.1f} ms  "
                f"warm {t['warm_s'] * 1e3:8.1f} ms",
                flush=True,
            )
    spread = {s: batch_spread(s) for s in names}
    result = {
        "benchmark": "optuna_overhead",
        "python": platform.python_version(),
        "optuna": optuna.__version__,
        "machine": platform.machine(),
        "sizes": sizes,
        "repeats": repeats,
        "trial_sizes": trial_sizes,
        "seconds_per_trial": per_trial,
        "trial_ratio": {
            other: {
                n: per_trial["privtune"][n] / per_trial[other][n] for n in per_trial["privtune"]
            }
            for other in per_trial
            if other != "privtune"
        },
        "seconds_per_sample_relative": timings,
        "ratio_to_tpe_warm": {
            s: {n: timings[s][n]["warm_s"] / timings["tpe"][n]["warm_s"] for n in timings[s]}
            for s in names
        },
        "batch_of_4_after_50_trials": spread,
    }
    report = harness.Report(
        result,
        plot=lambda path: _plot(result, path),
        headline={"privtune whole trial / other's": result["trial_ratio"], "batch": spread},
    )
    return harness.publish(out, "optuna_overhead", report)


@harness.figure
def _plot(plt: Any, result: dict, path: Path) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8), sharey=True)
    for s, by_n in result["seconds_per_trial"].items():
        ns = [int(n) for n in by_n]
        axes[0].plot(ns, [by_n[str(n)] for n in ns], marker="o", label=s)
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("completed trials")
    axes[0].set_title("whole trial in study.optimize")
    axes[0].legend(fontsize=8)
    for ax, kind in zip(axes[1:], ["cold_s", "warm_s"], strict=True):
        for s, by_n in result["seconds_per_sample_relative"].items():
            ns = [int(n) for n in by_n]
            ax.plot(ns, [by_n[str(n)][kind] for n in ns], marker="o", label=s)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("completed trials")
        ax.set_title(kind.replace("_s", "") + " sample_relative")
    axes[0].set_ylabel("seconds")
    axes[2].legend(fontsize=8)
    harness.save_figure(
        fig, path, title="Time per trial and per proposal, Optuna's samplers in the same run"
    )


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; returns the results written to ``<out>/optuna_overhead.json``."""
    parser = harness.make_parser(__doc__, quick="n = 20, 40, whole trials at 12, one repeat")
    parser.add_argument("--sizes", nargs="+", type=int, default=[50, 100, 300, 1000])
    parser.add_argument("--trial-sizes", nargs="+", type=int, default=TRIAL_SIZES)
    parser.add_argument("--repeats", type=int, default=3)
    args = harness.parse(parser, argv)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
    if args.quick:
        args.sizes, args.repeats, args.trial_sizes = [20, 40], 1, [12]
    return run(args.sizes, args.repeats, args.out, args.trial_sizes)


if __name__ == "__main__":
    main()
