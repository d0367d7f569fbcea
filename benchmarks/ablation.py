"""The road from GPSampler's recipe to privtune's: one part at a time, on a forest whose best
configuration is a corner of the box.

Optuna's GPSampler and privtune's default sampler are both a fitted Matérn-5/2 GP with log-EI,
built from different parts. Here privtune's engine runs with GPSampler's choice of each part
(configuration ``G``), then with one part at a time put back to privtune's (``G-<part>``), and
privtune's default (``P``) and candidate defaults run beside them (``P+<part>``). The part whose
return to privtune's costs the most is what carries GPSampler's lead.

The parts and GPSampler's choice of each (privtune's default in brackets):

- ``priors``: lengthscales pulled to 1 from both sides, ``s2 ~ Gamma(2, 1)``
  (``Priors(family="optuna")``) [log-normal lengthscales with mode ``0.2 sqrt(G)``, weak
  ``ln s2``];
- ``mean``: zero on standardised scores, i.e. the told scores' mean (``mean_scale=0``) [the
  generalised-least-squares constant];
- ``fit``: one fit from unit lengthscales, signal variance and nugget, gradient tolerance 1e-2
  (``fit_start="unit"``, ``fit_gtol=0.01``) [from the prior's mode and a smoother start,
  scipy's tolerance]; GPSampler also warm-starts each fit from the previous trial's, which a
  replayed model cannot;
- ``optimizer``: 2048 Sobol raw samples, 10 local searches started by GPSampler's roulette and
  at the best told point, 200 iterations (``n_raw_samples=2048``, ``n_restarts=10``,
  ``start_rule="spread"``, ``acq_maxiter=200``) [512, 3 from the best raw samples and anchors,
  50];
- ``incumbent``: log-EI over the best told score [over the best posterior mean];
- ``plateau``: no plateau rule (``min_skill=None``) [space-filling proposals while the model
  has no skill, ``min_skill=0.2``].

The task: a random forest of 5 trees on wine, 3-fold CV accuracy (folds fixed), over
``max_features``, ``min_samples_split``, ``min_samples_leaf``, ``min_weight_fraction_leaf``
(fractions) and ``min_impurity_decrease``; the best configurations have the last four at their
lower bounds, a corner. 30 trials, the first 10 Optuna's ``RandomSampler(seed)`` for every
method (the same start-up). Reported per configuration: the mean best score over the seeds,
its paired difference to GPSampler's (± standard error), and how many studies end with all
four parameters exactly at their lower bounds.

Usage::

    python -m benchmarks.ablation run                 # every configuration, seeds 0-14
    python -m benchmarks.ablation summarize
    python -m benchmarks.ablation --quick
"""

from __future__ import annotations

import argparse
import functools
import os
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import optuna

from benchmarks import harness
from benchmarks.optuna_tuning import from_json
from privtune import PrivateGPUCBSampler

#: GPSampler's choice of each part, as privtune's optimizer arguments.
GPSAMPLER_PARTS: dict[str, dict[str, Any]] = {
    "priors": {"priors": {"family": "optuna"}},
    "mean": {"priors": {"mean_scale": 0.0}},
    "fit": {"priors": {"fit_start": "unit", "fit_gtol": 0.01}},
    "optimizer": {
        "n_raw_samples": 2048,
        "n_restarts": 10,
        "start_rule": "spread",
        "acq_maxiter": 200,
    },
    "incumbent": {"acquisition": {"logei": {"incumbent": "observed"}}},
    "plateau": {"min_skill": None},
}
#: privtune's choice of each part before this comparison (its exact-score default then),
#: spelled out so that the configurations do not move with the registry's defaults.
PRIVTUNE_PARTS: dict[str, dict[str, Any]] = {
    "priors": {"priors": {"family": "lognormal"}},
    "mean": {"priors": {"mean_scale": float("inf")}},
    "fit": {"priors": {"fit_start": "mode", "fit_gtol": None}},
    "optimizer": {"n_raw_samples": 512, "n_restarts": 3, "start_rule": "top", "acq_maxiter": 50},
    "incumbent": {"acquisition": {"logei": {"incumbent": "mean"}}},
    "plateau": {"min_skill": 0.2},
}


def _merge(gpsampler: list[str]) -> dict[str, Any]:
    """The optimizer arguments with GPSampler's choice of the parts ``gpsampler`` and
    privtune's of the others (priors merged into one)."""
    kwargs: dict[str, Any] = {}
    for part in GPSAMPLER_PARTS:
        choice = GPSAMPLER_PARTS[part] if part in gpsampler else PRIVTUNE_PARTS[part]
        for key, value in choice.items():
            if key == "priors":
                kwargs.setdefault("priors", {}).update(value)
            else:
                kwargs[key] = value
    return kwargs


def configurations() -> dict[str, dict[str, Any] | None]:
    """Every configuration: ``gpsampler`` (Optuna's, ``None``), ``G`` (every part
    GPSampler's), ``G-<part>`` (that part privtune's), ``P`` (every part privtune's) and
    ``P+<parts>`` (those parts GPSampler's)."""
    parts = list(GPSAMPLER_PARTS)
    out: dict[str, dict[str, Any] | None] = {"gpsampler": None, "G": _merge(parts), "P": _merge([])}
    for part in parts:
        out[f"G-{part}"] = _merge([p for p in parts if p != part])
    out["P+mean"] = _merge(["mean"])
    out["P+priors+mean"] = _merge(["priors", "mean"])
    out["P+mean+incumbent"] = _merge(["mean", "incumbent"])
    return out


LOWER = {
    "min_samples_split": (0.01, 0.99),
    "min_samples_leaf": (0.01, 0.49),
    "min_weight_fraction_leaf": (0.01, 0.49),
    "min_impurity_decrease": (0.0, 0.5),
}
N_TRIALS = 30
SEEDS = list(range(15))


@functools.cache
def _wine() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_wine

    return load_wine(return_X_y=True)


def objective(trial: optuna.Trial) -> float:
    """3-fold CV accuracy of a 5-tree forest on wine (folds and trees fixed)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    X, y = _wine()
    params = {"max_features": trial.suggest_float("max_features", 0.01, 0.99)}
    params.update({k: trial.suggest_float(k, lo, hi) for k, (lo, hi) in LOWER.items()})
    forest = RandomForestClassifier(n_estimators=5, random_state=0, **params)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    return float(np.mean(cross_val_score(forest, X, y, cv=folds)))


def run_one(name: str, seed: int, n_trials: int = N_TRIALS) -> dict:
    """One study of configuration ``name``; its best score and whether it ends at the
    corner."""
    kwargs = configurations()[name]
    sampler = (
        optuna.samplers.GPSampler(seed=seed)
        if kwargs is None
        else PrivateGPUCBSampler(seed=seed, optimizer_kwargs=from_json(kwargs))
    )
    study = optuna.create_study(direction="maximize", sampler=sampler)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=n_trials)
    best = study.best_trial
    return {
        "config": name,
        "seed": seed,
        "best": best.value,
        "corner": int(sum(best.params[k] == lo for k, (lo, _) in LOWER.items())),
        "values": [t.value for t in study.trials],
        "seconds": time.perf_counter() - t0,
    }


def run(args: argparse.Namespace) -> None:
    """Compute every missing run."""
    harness.collect_runs(
        harness.RunStore(args.out, "ablation"),
        (
            (f"{name}-{seed}", functools.partial(run_one, name, seed, args.n_trials))
            for seed in args.seeds
            for name in args.configs
        ),
        describe=lambda r: f"best {r['best']:.4f}, corner {r['corner']}/4 ({r['seconds']:.0f} s)",
    )


def summarize(args: argparse.Namespace) -> harness.Report:
    """Mean best score, paired difference to GPSampler's, studies ending at the corner."""
    runs = harness.load_runs(harness.RunStore(args.out, "ablation"))
    by = {(r["config"], r["seed"]): r for r in runs if r["seed"] in args.seeds}
    table = {}
    for name in args.configs:
        mine = {s: by[(name, s)] for s in args.seeds if (name, s) in by}
        if not mine:
            continue
        ref = [s for s in mine if ("gpsampler", s) in by]
        diffs = [100 * (mine[s]["best"] - by[("gpsampler", s)]["best"]) for s in ref]
        table[name] = {
            "n": len(mine),
            "best": float(np.mean([r["best"] for r in mine.values()])),
            "vs_gpsampler_points": float(np.mean(diffs)) if diffs else None,
            "se_points": harness.standard_error(diffs),
            "at_corner": sum(r["corner"] == 4 for r in mine.values()),
            "seconds": float(np.mean(secs))
            if (secs := [r["seconds"] for r in mine.values() if r["seconds"] is not None])
            else None,
            "kwargs": configurations()[name],
        }
    lines = [
        "| configuration | studies | mean best | minus GPSampler (points) | at the corner |",
        "|---|---|---|---|---|",
    ]
    for name, row in table.items():
        diff = (
            "–"
            if row["vs_gpsampler_points"] is None or name == "gpsampler"
            else harness.format_mean_se(row["vs_gpsampler_points"], row["se_points"], "+.2f")
        )
        lines.append(
            f"| {name} | {row['n']} | {row['best']:.4f} | {diff} | {row['at_corner']}/{row['n']} |"
        )
    result = {"benchmark": "ablation", "n_trials": args.n_trials, "table": table}
    return harness.Report(result, "\n".join(lines) + "\n", lambda path: _plot(table, path))


@harness.figure
def _plot(plt: Any, table: dict, path: Path) -> None:
    names = [n for n, r in table.items() if r["vs_gpsampler_points"] is not None]
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(names) + 1.5))
    means = [table[n]["vs_gpsampler_points"] for n in names]
    errs = [2 * (table[n]["se_points"] or 0.0) for n in names]
    ax.barh(range(len(names)), means, xerr=errs, color="tab:blue", alpha=0.7)
    ax.set_yticks(range(len(names)), names)
    ax.axvline(0.0, color="k", lw=0.8)
    ax.invert_yaxis()
    ax.set_xlabel("best CV accuracy minus GPSampler's, points (± 2 SE, paired by seed)")
    title = "From GPSampler's recipe to privtune's, one part at a time"
    harness.save_figure(fig, path, title=title)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--configs", nargs="+", default=list(configurations()))
    parser.add_argument("--seeds", nargs="+", type=int, default=SEEDS)
    parser.add_argument("--n-trials", type=int, default=N_TRIALS)


def _quick(args: argparse.Namespace) -> None:
    args.configs, args.seeds, args.n_trials = ["P", "G"], [0], 12


BENCHMARK = harness.Benchmark(
    name="ablation",
    doc=__doc__,
    quick="P and G, one seed, 12 trials",
    arguments=_arguments,
    quick_settings=_quick,
    run=run,
    summarize=summarize,
    setup=lambda: optuna.logging.set_verbosity(optuna.logging.WARNING),
)


def main(argv: list[str] | None = None) -> dict | None:
    """Run or summarize; returns the summary written to ``<out>/ablation.json``."""
    return harness.main(BENCHMARK, argv)


if __name__ == "__main__":
    main()
