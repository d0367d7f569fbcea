"""PrivateBOSearchCV against scikit-learn's and Optuna's searches, on the same budget.

Random forest, MLP and gradient boosting with the GO-UCB paper's spaces (App. D.2, as in
``optuna_tuning.py``) on breast_cancer and Pima, 5-fold CV accuracy (stratified folds shuffled
with the run's seed, estimator ``random_state`` = seed, so every method of a seed tunes the same
function), ``n_iter`` candidates per search.

Settings
--------
- non-private (``eps = none``): ``PrivateBOSearchCV(algorithm="gp-ucb")`` against
  ``RandomizedSearchCV`` (the same space as scipy distributions) and optuna-integration's
  ``OptunaSearchCV`` (its default TPE sampler, seeded). Each is credited with its
  ``best_score_``, an exact mean CV accuracy;
- private (``eps = 1``): ``PrivateBOSearchCV`` with ``"moma"`` and ``"gp-ucb"`` against
  ``algorithm="random"``: randomized search whose scores pass through the same curator and
  whose pick uses the same rule (the best posterior mean). Each is credited with the true mean
  CV accuracy of its ``best_params_``, which this script (the data owner) computes on the same
  folds; the search itself only released noisy scores.

Reported: the true CV accuracy of the pick, mean and standard error over seeds, the mean
difference to the random baseline of the setting paired by (task, seed), and the wall time of
``fit`` relative to the random baseline's, measured in the same run.

Each run is saved in ``results/sklearn_search/runs.jsonl.gz`` when it ends; ``run`` skips the
runs saved there, and several ``run`` processes can share the work (:mod:`benchmarks.harness`).

Usage::

    python -m benchmarks.sklearn_search run            # seeds 0 to 2 (about 1.5 h)
    python -m benchmarks.sklearn_search run --epsilons none --seeds 3 4 5 6 7 8 9
                                                       # seeds 3 to 9 without privacy (2 h)
    python -m benchmarks.sklearn_search summarize      # sklearn_search.json, .md and .png
    python -m benchmarks.sklearn_search --quick        # smoke run (tests)
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import optuna
from scipy import stats
from sklearn.base import BaseEstimator
from sklearn.model_selection import RandomizedSearchCV, StratifiedKFold, cross_val_score

from benchmarks import harness
from benchmarks.datasets import load_dataset
from benchmarks.optuna_tuning import space_for
from privtune import PrivateBOSearchCV
from privtune.presets import estimator_for
from privtune.space import Categorical, Integer, Real, SearchSpace

MODELS = ["random_forest", "mlp", "gradient_boosting"]
DATASETS = ["breast_cancer", "pima"]
METHODS = {
    "none": ["gp-ucb", "randomized", "optuna"],
    "1": ["moma", "gp-ucb", "random"],
}
BASELINE = {"none": "randomized", "1": "random"}


def scipy_distributions(space: SearchSpace) -> dict:
    """The space for ``RandomizedSearchCV``: the same distributions, drawn by scipy."""
    out = {}
    for name, dim in space.items():
        if isinstance(dim, Categorical):
            out[name] = list(dim.choices)
        elif isinstance(dim, Integer) and not dim.log and dim.step == 1:
            out[name] = stats.randint(dim.low, dim.high + 1)
        elif isinstance(dim, Real) and dim.step is None:
            dist = stats.loguniform if dim.log else stats.uniform
            out[name] = dist(dim.low, dim.high) if dim.log else dist(dim.low, dim.high - dim.low)
        else:
            raise ValueError(f"{name}: no scipy equivalent of {dim!r} in this benchmark")
    return out


def make_search(
    model: str,
    dataset: str,
    eps: str,
    method: str,
    seed: int,
    n_iter: int,
    cv: StratifiedKFold,
) -> BaseEstimator:
    """The search of ``method`` over the space of ``model``, with ``n_iter`` candidates."""
    est = estimator_for(model, random_state=seed)
    space = space_for(model, dataset)
    if method == "randomized":
        return RandomizedSearchCV(
            est, scipy_distributions(space), n_iter=n_iter, cv=cv, random_state=seed
        )
    if method == "optuna":
        from optuna_integration import OptunaSearchCV

        return OptunaSearchCV(
            est, space.to_optuna(), n_trials=n_iter, cv=cv, random_state=seed, verbose=0
        )
    return PrivateBOSearchCV(
        est,
        space,
        algorithm=method,
        epsilon=None if eps == "none" else float(eps),
        n_iter=n_iter,
        cv=cv,
        random_state=seed,
        noise_random_state=None if eps == "none" else 10_000 + seed,
    )


def run_one(model: str, dataset: str, eps: str, method: str, seed: int, n_iter: int) -> dict:
    """One search: its pick's true CV accuracy, its own best score and its fit time.

    Parameters
    ----------
    model, dataset : str
        The task.
    eps : str
        ``"none"`` or the privacy budget epsilon.
    method : str
        One of ``METHODS[eps]``.
    seed : int
        The seed of the folds, the estimator, the search and (``10000 + seed``) its noise.
    n_iter : int
        Candidates evaluated.

    Returns
    -------
    dict
        The run's settings, ``score``, ``best_score``, ``seconds`` and, with privacy, the
        search's privacy report.
    """
    X, y = load_dataset(dataset)
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    search = make_search(model, dataset, eps, method, seed, n_iter, cv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        search.fit(X, y)
        seconds = time.perf_counter() - t0
        # The data owner's check of the pick: its mean CV accuracy on the same folds.
        pick = estimator_for(model, random_state=seed).set_params(**search.best_params_)
        true = float(np.mean(cross_val_score(pick, X, y, cv=cv, error_score="raise")))
    out = {
        "model": model,
        "dataset": dataset,
        "epsilon": eps,
        "method": method,
        "seed": seed,
        "n_iter": n_iter,
        "score": true,
        "best_score": float(search.best_score_),
        "seconds": seconds,
    }
    if eps != "none":
        out["privacy"] = search.privacy_report_
    return out


def run(args: argparse.Namespace) -> None:
    """Every search of ``args`` not saved yet, seed first (:mod:`benchmarks.harness`)."""
    tasks = [
        (
            f"{model}-{dataset}-{eps}-{method}-{seed}",
            functools.partial(run_one, model, dataset, eps, method, seed, args.n_iter),
        )
        for seed, eps in itertools.product(args.seeds, args.epsilons)
        for model, dataset, method in itertools.product(args.models, args.datasets, METHODS[eps])
    ]
    harness.collect_runs(
        harness.RunStore(args.out, "sklearn_search"),
        tasks,
        lambda res: f"{res['score']:.4f} ({res['seconds']:.0f} s)",
    )


def summarize(args: argparse.Namespace) -> harness.Report:
    """The report of the saved searches (``sklearn_search.json``, ``.md`` and ``.png``)."""
    rows = harness.load_runs(harness.RunStore(args.out, "sklearn_search"))
    by: dict = {}
    for r in rows:
        by[(r["epsilon"], r["model"], r["dataset"], r["method"], r["seed"])] = r
    summary: dict = {}
    for eps, methods in METHODS.items():
        base = BASELINE[eps]
        for m in methods:
            mine = [r for k, r in by.items() if k[0] == eps and k[3] == m]
            if not mine:
                continue
            pairs = [
                (r, by[(eps, r["model"], r["dataset"], base, r["seed"])])
                for r in mine
                if (eps, r["model"], r["dataset"], base, r["seed"]) in by
            ]
            diffs = np.array([100 * (a["score"] - b["score"]) for a, b in pairs])
            ratios = np.array([a["seconds"] / b["seconds"] for a, b in pairs])
            tasks: dict = {}
            for r in mine:
                tasks.setdefault(f"{r['model']}|{r['dataset']}", []).append(r["score"])
            summary.setdefault(eps, {})[m] = {
                "tasks": {
                    t: {
                        "mean": float(np.mean(v)),
                        "se": harness.standard_error(v),
                        "n_seeds": len(v),
                    }
                    for t, v in sorted(tasks.items())
                },
                "mean_score": float(np.mean([r["score"] for r in mine])),
                "paired_diff_points": float(diffs.mean()) if diffs.size else None,
                "paired_diff_se": harness.standard_error(diffs),
                "wins_ties_losses": list(harness.win_tie_loss(diffs)),
                "time_ratio_to_baseline_median": float(np.median(ratios)) if ratios.size else None,
                "n_runs": len(mine),
            }
    result = {"benchmark": "sklearn_search", "n_runs": len(rows), "summary": summary}
    return harness.Report(
        result,
        _markdown(summary),
        lambda path: _plot(summary, path),
        {e: {m: v["mean_score"] for m, v in s.items()} for e, s in summary.items()},
    )


_LABELS = {
    "gp-ucb": "PrivateBOSearchCV gp-ucb",
    "moma": "PrivateBOSearchCV moma",
    "random": "PrivateBOSearchCV random",
    "randomized": "RandomizedSearchCV",
    "optuna": "OptunaSearchCV (TPE)",
}


def _markdown(summary: dict) -> str:
    """Per setting: per-task means, and the paired comparison with the random baseline."""
    lines: list[str] = []
    for eps, by_method in summary.items():
        methods = list(by_method)
        tasks = sorted({t for v in by_method.values() for t in v["tasks"]})
        title = "non-private" if eps == "none" else f"epsilon = {eps}"
        lines += [f"### {title}", "", "True CV accuracy of the pick, mean ± SE over seeds (n).", ""]
        lines.append("| model | data | " + " | ".join(_LABELS[m] for m in methods) + " |")
        lines.append("|---|---|" + "---|" * len(methods))
        for t in tasks:
            cells = []
            for m in methods:
                v = by_method[m]["tasks"].get(t)
                if v is None:
                    cells.append("–")
                    continue
                cells.append(f"{harness.format_mean_se(v['mean'], v['se'])} ({v['n_seeds']})")
            lines.append("| " + " | ".join(t.split("|")) + " | " + " | ".join(cells) + " |")
        lines += [
            "",
            f"Against {_LABELS[BASELINE[eps]]} on the same (task, seed): mean difference in "
            "accuracy points ± SE, wins/ties/losses, and the median ratio of fit times.",
            "",
            "| method | difference | W/T/L | time ratio |",
            "|---|---|---|---|",
        ]
        for m in methods:
            v = by_method[m]
            if m == BASELINE[eps] or v["paired_diff_points"] is None:
                continue
            diff = harness.format_mean_se(v["paired_diff_points"], v["paired_diff_se"], "+.2f")
            wtl = "/".join(str(x) for x in v["wins_ties_losses"])
            lines.append(
                f"| {_LABELS[m]} | {diff} | {wtl} | {v['time_ratio_to_baseline_median']:.2f} |"
            )
        lines.append("")
    return "\n".join(lines)


@harness.figure
def _plot(plt: Any, summary: dict, path: Path) -> None:
    """Per task, each method's pick against the setting's baseline (RandomizedSearchCV without
    privacy, private random search with it), in accuracy points: the methods differ by
    fractions of a point, which a plot of the accuracies themselves would hide."""
    fig, axes = plt.subplots(1, len(summary), figsize=(6 * len(summary), 4), squeeze=False)
    for ax, (eps, by_method) in zip(axes[0], summary.items(), strict=True):
        tasks = sorted({t for v in by_method.values() for t in v["tasks"]})
        base = by_method[BASELINE[eps]]["tasks"]
        width = 0.8 / max(len(by_method), 1)
        for i, (m, v) in enumerate(by_method.items()):
            cells = [v["tasks"].get(t, {}) for t in tasks]
            diff = [
                100 * (c.get("mean", np.nan) - base[t]["mean"])
                for c, t in zip(cells, tasks, strict=True)
            ]
            ses = [100 * (c.get("se") or 0.0) for c in cells]
            x = np.arange(len(tasks)) + i * width
            ax.errorbar(x, diff, yerr=ses, linestyle="none", capsize=2, label=_LABELS[m])
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_xticks(np.arange(len(tasks)) + 0.4 - width / 2)
        ax.set_xticklabels([t.replace("|", "\n").replace("_", "\n") for t in tasks], fontsize=7)
        for edge in np.arange(len(tasks) - 1) + 0.9 - width / 2:  # between the tasks
            ax.axvline(edge, color="0.85", linewidth=0.8)
        ax.set_title(
            ("non-private" if eps == "none" else f"epsilon = {eps}")
            + f": against {_LABELS[BASELINE[eps]]}"
        )
        ax.set_ylabel("pick's CV accuracy − baseline's (points)\n(bars: SE over seeds)")
        ax.legend(fontsize=7, loc="best")
    harness.save_figure(
        fig,
        path,
        title="PrivateBOSearchCV against RandomizedSearchCV and OptunaSearchCV: the pick",
        dpi=120,
    )


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--epsilons", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--n-iter", type=int, default=40)


def _quick(args: argparse.Namespace) -> None:
    args.models, args.datasets, args.seeds, args.n_iter = ["random_forest"], ["wine"], [0], 4


BENCHMARK = harness.Benchmark(
    name="sklearn_search",
    doc=__doc__,
    quick="random forest on wine, 4 candidates, 1 seed",
    arguments=_arguments,
    quick_settings=_quick,
    run=run,
    summarize=summarize,
    setup=lambda: optuna.logging.set_verbosity(optuna.logging.WARNING),
)


def main(argv: list[str] | None = None) -> dict | None:
    """Run or summarize; returns the summary written to ``<out>/sklearn_search.json``."""
    return harness.main(BENCHMARK, argv)


if __name__ == "__main__":
    main()
