"""Which private mode at equal total budget: every score released, or only the pick.

Random forest, MLP and gradient boosting with the GO-UCB paper's spaces (App. D.2, as in
``optuna_tuning.py``) on breast_cancer, wine, Australian and Pima, 5-fold CV accuracy
(stratified folds shuffled with the run's seed, estimator ``random_state`` = seed), at a total
budget ``(epsilon, delta = 1e-6)`` with ``epsilon`` in {1, 10, 100}, spent by:

- ``ldp-default``: ``PrivateBOSearchCV(privacy_budget=(epsilon, delta), n_iter=N)``, the
  per-score LDP default (``algorithm="auto"``, the untuned estimator evaluated first and kept
  unless beaten with posterior probability 0.95); every score is released, each at the PLD
  share of the budget;
- ``ldp-random``: the same with ``algorithm="random"``: private random search under the same
  curator and the same pick rule;
- ``selection``: ``release="best"``, private selection of the best of a geometric number of
  random candidates with mean ``N``, each scored at the per-candidate epsilon that the budget
  affords under RDP accounting of ``RepeatAndSelectDpEvent``; only the pick is published.

and ``default``, the untuned estimator. Each method is credited with the true mean CV accuracy
of its pick on the same folds (the data owner's check; the searches only released noisy
scores). Reported: per task and budget, mean ± SE over seeds, and per budget the mean
difference to the untuned default paired by (task, seed) with wins/ties/losses.

Each run writes one JSON file under ``results/budget_modes/runs``; ``run`` skips runs whose file
exists, and several ``run`` processes can share the work (:mod:`benchmarks.harness`).

Usage::

    python -m benchmarks.budget_modes run          # everything missing (several hours)
    python -m benchmarks.budget_modes summarize    # budget_modes.json, .md and .png
    python -m benchmarks.budget_modes --quick      # smoke run (tests)
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score

from benchmarks import harness
from benchmarks.datasets import load_dataset
from benchmarks.optuna_tuning import space_for
from privtune import PrivateBOSearchCV
from privtune.presets import estimator_for

MODELS = ["random_forest", "mlp", "gradient_boosting"]
DATASETS = ["breast_cancer", "wine", "australian", "pima"]
EPSILONS = ["1", "10", "100"]
DELTA = 1e-6
METHODS = ["ldp-default", "ldp-random", "selection"]
_LABELS = {
    "default": "untuned default",
    "ldp-default": "every score (auto)",
    "ldp-random": "every score (random)",
    "selection": "pick only (selection)",
}


def make_search(model: str, dataset: str, eps: str, method: str, seed: int, n_iter: int, cv):
    """The search of ``method`` at total budget ``(eps, DELTA)``."""
    kwargs: dict = {}
    if method == "ldp-random":
        kwargs["algorithm"] = "random"
    elif method == "selection":
        kwargs["release"] = "best"
    return PrivateBOSearchCV(
        estimator_for(model, random_state=seed),
        space_for(model, dataset),
        privacy_budget=(float(eps), DELTA),
        n_iter=n_iter,
        cv=cv,
        random_state=seed,
        noise_random_state=10_000 + seed,
        **kwargs,
    )


def run_one(model: str, dataset: str, eps: str, method: str, seed: int, n_iter: int) -> dict:
    """One search (or the untuned default, ``method="default"``, ``eps="none"``): the true
    CV accuracy of its pick, its fit time and its privacy report."""
    X, y = load_dataset(dataset)
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    out: dict = {
        "model": model,
        "dataset": dataset,
        "epsilon": eps,
        "method": method,
        "seed": seed,
        "n_iter": n_iter,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        if method == "default":
            params: dict = {}
        else:
            search = make_search(model, dataset, eps, method, seed, n_iter, cv)
            search.set_params(refit=False)
            search.fit(X, y)
            params = search.best_params_
            out["privacy"] = search.privacy_report_
            out["n_candidates"] = int(getattr(search, "n_candidates_", n_iter))
        out["seconds"] = time.perf_counter() - t0
        pick = estimator_for(model, random_state=seed).set_params(**params)
        out["score"] = float(np.mean(cross_val_score(pick, X, y, cv=cv, error_score="raise")))
    return out


def run(args: argparse.Namespace) -> None:
    """Every run of ``args`` not saved yet, seed first (:mod:`benchmarks.harness`)."""
    tasks = []
    for seed in args.seeds:
        for model, dataset in itertools.product(args.models, args.datasets):
            tasks.append(
                (
                    f"{model}-{dataset}-none-default-{seed}.json",
                    functools.partial(run_one, model, dataset, "none", "default", seed, 0),
                )
            )
        for eps, model, dataset, method in itertools.product(
            args.epsilons, args.models, args.datasets, METHODS
        ):
            tasks.append(
                (
                    f"{model}-{dataset}-{eps}-{method}-{seed}.json",
                    functools.partial(run_one, model, dataset, eps, method, seed, args.n_iter),
                )
            )
    harness.collect_runs(
        harness.runs_dir(args.out, "budget_modes"),
        tasks,
        lambda res: f"{res['score']:.4f} ({res['seconds']:.0f} s)",
    )


def summarize(args: argparse.Namespace) -> dict:
    """Summarize the saved runs into ``budget_modes.json``, ``.md`` and ``.png``."""
    rows = harness.load_runs(harness.runs_dir(args.out, "budget_modes"))
    default = {(r["model"], r["dataset"], r["seed"]): r for r in rows if r["method"] == "default"}
    summary: dict = {}
    for eps in EPSILONS:
        for method in ["default", *METHODS]:
            mine = [
                r
                for r in rows
                if r["method"] == method and (method == "default" or r["epsilon"] == eps)
            ]
            if not mine or not any(r["epsilon"] == eps for r in rows):
                continue
            tasks: dict = {}
            for r in mine:
                tasks.setdefault(f"{r['model']}|{r['dataset']}", []).append(r["score"])
            diffs = np.array(
                [
                    100 * (r["score"] - default[(r["model"], r["dataset"], r["seed"])]["score"])
                    for r in mine
                    if (r["model"], r["dataset"], r["seed"]) in default
                ]
            )
            entry = {
                "tasks": {
                    t: {
                        "mean": float(np.mean(v)),
                        "se": harness.standard_error(v),
                        "n_seeds": len(v),
                    }
                    for t, v in sorted(tasks.items())
                },
                "mean_score": float(np.mean([r["score"] for r in mine])),
                "n_runs": len(mine),
            }
            if method != "default" and diffs.size:
                entry.update(
                    diff_to_default_points=float(diffs.mean()),
                    diff_to_default_se=harness.standard_error(diffs),
                    wins_ties_losses=[
                        int(np.sum(diffs > 1e-9)),
                        int(np.sum(np.abs(diffs) <= 1e-9)),
                        int(np.sum(diffs < -1e-9)),
                    ],
                    epsilon_per_score=float(
                        np.mean(
                            [
                                r["privacy"].get("epsilon_per_candidate")
                                or r["privacy"]["epsilon_per_report"]
                                for r in mine
                            ]
                        )
                    ),
                    median_seconds=float(np.median([r["seconds"] for r in mine])),
                )
            summary.setdefault(eps, {})[method] = entry
    result = {
        "benchmark": "budget_modes",
        "delta": DELTA,
        "n_iter": args.n_iter,
        "n_runs": len(rows),
        "summary": summary,
    }
    harness.write_json(args.out / "budget_modes.json", result)
    (args.out / "budget_modes.md").write_text(_markdown(summary))
    _plot(summary, args.out / "budget_modes.png")
    print(json.dumps({e: {m: v["mean_score"] for m, v in s.items()} for e, s in summary.items()}))
    return result


def _markdown(summary: dict) -> str:
    """Per budget: per-task means, then each mode against the untuned default."""
    lines: list[str] = []
    for eps, by_method in summary.items():
        methods = list(by_method)
        tasks = sorted({t for v in by_method.values() for t in v["tasks"]})
        lines += [
            f"### total epsilon = {eps}, delta = {DELTA:g}",
            "",
            "True CV accuracy of the pick, mean ± SE over seeds (n).",
            "",
            "| model | data | " + " | ".join(_LABELS[m] for m in methods) + " |",
            "|---|---|" + "---|" * len(methods),
        ]
        for t in tasks:
            cells = []
            for m in methods:
                v = by_method[m]["tasks"].get(t)
                cells.append(
                    "–"
                    if v is None
                    else f"{harness.format_mean_se(v['mean'], v['se'])} ({v['n_seeds']})"
                )
            lines.append("| " + " | ".join(t.split("|")) + " | " + " | ".join(cells) + " |")
        lines += [
            "",
            "Against the untuned default on the same (task, seed): mean difference in accuracy "
            "points ± SE, wins/ties/losses, the epsilon each score got, and the median fit time.",
            "",
            "| mode | difference | W/T/L | epsilon per score | fit time (s) |",
            "|---|---|---|---|---|",
        ]
        for m in methods:
            v = by_method[m]
            if "diff_to_default_points" not in v:
                continue
            diff = harness.format_mean_se(
                v["diff_to_default_points"], v["diff_to_default_se"], "+.2f"
            )
            wtl = "/".join(str(x) for x in v["wins_ties_losses"])
            lines.append(
                f"| {_LABELS[m]} | {diff} | {wtl} | {v['epsilon_per_score']:.3g} | "
                f"{v['median_seconds']:.0f} |"
            )
        lines.append("")
    return "\n".join(lines)


def _plot(summary: dict, path: Path) -> None:
    """Mean difference to the untuned default per mode, against the total epsilon."""
    plt = harness.pyplot()
    if plt is None or not summary:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    epsilons = list(summary)
    for m in METHODS:
        means = [summary[e].get(m, {}).get("diff_to_default_points", np.nan) for e in epsilons]
        ses = [summary[e].get(m, {}).get("diff_to_default_se") or 0.0 for e in epsilons]
        ax.errorbar([float(e) for e in epsilons], means, yerr=ses, marker="o", label=_LABELS[m])
    ax.axhline(0.0, color="grey", linestyle="--", label=_LABELS["default"])
    ax.set_xscale("log")
    ax.set_xlabel("total epsilon (delta = 1e-6)")
    ax.set_ylabel("true CV accuracy - untuned default (points)")
    ax.set_title("Equal total budget: every score or the pick only")
    ax.legend(fontsize=8)
    harness.save_figure(fig, path, dpi=120)


def main(argv: list[str] | None = None) -> dict:
    """Run or summarize; returns the summary written to ``<out>/budget_modes.json``."""
    parser = harness.make_parser(
        __doc__, quick="random forest on wine, total epsilon 10, 3 candidates, 1 seed"
    )
    parser.add_argument("command", nargs="?", default="run", choices=["run", "summarize"])
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--epsilons", nargs="+", default=EPSILONS, choices=EPSILONS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--n-iter", type=int, default=20)
    args = harness.parse(parser, argv)
    if args.quick:
        args.models, args.datasets, args.seeds, args.n_iter = ["random_forest"], ["wine"], [0], 3
        args.epsilons = ["10"]
        run(args)
        return summarize(args)
    if args.command == "run":
        run(args)
    return summarize(args)


if __name__ == "__main__":
    main()
