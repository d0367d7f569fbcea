"""Which privacy unit and which private mode pay, at budgets that protect someone.

With the whole score as the secret (the score unit) its noise is the score's range over
the per-report epsilon, far above the differences between configurations. This benchmark
sets beside it the record unit (each validation record is the secret: the score is a mean over
``n_val`` hold-out records, so its noise is ``n_val`` times smaller) and asks, on real data sets
with up to 10,000 validation records, whether tuning then pays at a total epsilon of 0.1, 1 and
10 (delta = 1e-6).

Tasks: a random forest, histogram gradient boosting, an MLP, k-nearest neighbours (these two
behind a ``StandardScaler``) and a decision tree on MAGIC, pen digits, optical digits, phoneme
and spambase (``benchmarks/data``) and two ``make_classification`` sets (three classes, 20
features; 1,500 and 9,000 rows). Each seed draws a fresh test set (20 %, stratified) that no
search sees; of the rest, ``N_VAL[data]`` records are the validation set (from 200 to 10,000)
and at most 2,000 the training set. Every search gets this one hold-out split (``cv`` with one
split), ``n_iter = 20`` candidates, ``random_state = seed``; the spaces are below
(:data:`SPACES`; the untuned values of the forest, gradient boosting and the tree lie outside
them, so the untuned estimator is an arm outside the cube).

Methods:

- ``untuned``: the estimator as constructed;
- ``exact``: ``PrivateBOSearchCV`` without privacy (the default algorithm), the pick the best
  exact validation score;
- for ``unit`` in {``record``, ``score``} and total epsilon in {0.1, 1, 10}:
  ``bo`` (``privacy_budget=(epsilon, delta)``, every score released, the default algorithm),
  ``random`` (the same with ``algorithm="random"``: private random search) and ``selection``
  (``release="best"``: only the pick published), all with the untuned estimator as a candidate
  kept unless beaten.

Each pick is credited with the accuracy on the fresh test set of its model fitted on the
training records, the ones it was tuned on (``test_score_train_fit``); the same model's
validation accuracy minus that test accuracy is the validation set's over-fitting. Each pick is
also refitted on the training and validation records together, as ``refit=True`` does, and
scored on the test set (``score``): with up to 10,000 validation records beside 2,000 training
ones the refit trains on several times more data than the search tuned for, so that score
measures how the tuned values transfer to a larger training set, reported beside the first.

Each run writes one JSON file under ``results/privacy_units/runs`` (resumable; several ``run``
processes share the work). The runs go seed by seed, the record unit first.

Usage::

    python -m benchmarks.privacy_units run          # everything missing (hours; resumable)
    python -m benchmarks.privacy_units summarize    # privacy_units.json, .md and .png
    python -m benchmarks.privacy_units --quick      # smoke run (tests)
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
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from benchmarks import harness
from benchmarks.datasets import load_dataset
from privtune import PrivateBOSearchCV
from privtune.space import Categorical, Integer, Real

MODELS = ["random_forest", "gradient_boosting", "mlp", "knn", "decision_tree"]
#: Validation records per data set (the record unit's n_val).
N_VAL = {
    "synthetic_small": 200,
    "spambase": 1000,
    "phoneme": 2000,
    "optdigits": 2000,
    "penbased": 5000,
    "synthetic_large": 5000,
    "magic": 10000,
}
DATASETS = list(N_VAL)
MAX_TRAIN = 2000
EPSILONS = ["0.1", "1", "10"]
UNITS = ["record", "score"]
MODES = ["bo", "random", "selection"]
DELTA = 1e-6
N_ITER = 20
_LABELS = {
    "untuned": "untuned",
    "exact": "exact tuning (no privacy)",
    "bo": "every score (auto)",
    "random": "every score (random)",
    "selection": "pick only (selection)",
}

SPACES = {
    "random_forest": {
        "max_depth": Integer(2, 40, log=True),
        "min_samples_leaf": Integer(1, 64, log=True),
        "max_features": Real(0.05, 1.0),
    },
    "gradient_boosting": {
        "learning_rate": Real(0.01, 1.0, log=True),
        "max_leaf_nodes": Integer(4, 256, log=True),
        "min_samples_leaf": Integer(2, 200, log=True),
        "l2_regularization": Real(1e-6, 10.0, log=True),
    },
    "mlp": {
        "mlpclassifier__alpha": Real(1e-6, 1.0, log=True),
        "mlpclassifier__learning_rate_init": Real(1e-4, 0.1, log=True),
        "mlpclassifier__hidden_layer_sizes": Categorical([(32,), (100,), (256,)]),
    },
    "knn": {
        "kneighborsclassifier__n_neighbors": Integer(1, 100, log=True),
        "kneighborsclassifier__weights": Categorical(["uniform", "distance"]),
    },
    "decision_tree": {
        "max_depth": Integer(1, 30, log=True),
        "min_samples_leaf": Integer(1, 200, log=True),
        "criterion": Categorical(["gini", "entropy"]),
    },
}


def estimator(model: str, seed: int):
    """The untuned estimator of ``model``."""
    if model == "random_forest":
        return RandomForestClassifier(random_state=seed, n_jobs=1)
    if model == "gradient_boosting":
        return HistGradientBoostingClassifier(random_state=seed)
    if model == "mlp":
        return make_pipeline(StandardScaler(), MLPClassifier(random_state=seed))
    if model == "decision_tree":
        return DecisionTreeClassifier(random_state=seed)
    return make_pipeline(StandardScaler(), KNeighborsClassifier())


def load(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """A benchmark data set (the synthetic ones are fixed: ``random_state=0``)."""
    if dataset.startswith("synthetic"):
        n = 1500 if dataset == "synthetic_small" else 9000
        return make_classification(
            n,
            20,
            n_informative=8,
            n_redundant=4,
            n_classes=3,
            flip_y=0.03,
            class_sep=0.8,
            random_state=0,
        )
    return load_dataset(dataset)


def splits(dataset: str, seed: int, X, y):
    """Indices of the training, validation and fresh test records of ``seed``."""
    rest, test = next(StratifiedShuffleSplit(1, test_size=0.2, random_state=seed).split(X, y))
    n_val = N_VAL[dataset]
    n_train = min(MAX_TRAIN, len(rest) - n_val)
    inner = StratifiedShuffleSplit(1, test_size=n_val, train_size=n_train, random_state=seed)
    train, val = next(inner.split(X[rest], y[rest]))
    return rest[train], rest[val], test


def make_search(model: str, method: str, unit: str, eps: str, seed: int, cv, n_iter: int):
    """The search of ``method`` (``exact``, ``bo``, ``random``, ``selection``)."""
    kwargs: dict = {}
    if method != "exact":
        kwargs.update(
            privacy_budget=(float(eps), DELTA),
            privacy_unit=unit,
            noise_random_state=10_000 + seed,
        )
        if unit == "score":
            kwargs["value_range"] = (0.0, 1.0)
    if method == "random":
        kwargs["algorithm"] = "random"
    elif method == "selection":
        kwargs["release"] = "best"
    return PrivateBOSearchCV(
        estimator(model, seed),
        SPACES[model],
        n_iter=n_iter,
        cv=cv,
        scoring="accuracy",
        refit=False,
        random_state=seed,
        **kwargs,
    )


def run_one(
    model: str, dataset: str, unit: str, eps: str, method: str, seed: int, n_iter: int
) -> dict:
    """One search (or the untuned estimator): its pick's scores, time and privacy report."""
    X, y = load(dataset)
    train, val, test = splits(dataset, seed, X, y)
    tune = np.concatenate([train, val])
    cv = [(np.arange(len(train)), np.arange(len(train), len(tune)))]
    out: dict = {
        "model": model,
        "dataset": dataset,
        "unit": unit,
        "epsilon": eps,
        "method": method,
        "seed": seed,
        "n_iter": n_iter,
        "n_val": len(val),
        "n_train": len(train),
        "n_test": len(test),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        if method == "untuned":
            params: dict = {}
        else:
            search = make_search(model, method, unit, eps, seed, cv, n_iter)
            search.fit(X[tune], y[tune])
            params = search.best_params_
            out["privacy"] = getattr(search, "privacy_report_", None)
        out["seconds"] = time.perf_counter() - t0
        pick = estimator(model, seed).set_params(**params)
        out["params"] = {k: repr(v) for k, v in params.items()}
        fitted = clone(pick).fit(X[train], y[train])
        out["val_score"] = float(fitted.score(X[val], y[val]))
        out["test_score_train_fit"] = float(fitted.score(X[test], y[test]))
        out["score"] = float(pick.fit(X[tune], y[tune]).score(X[test], y[test]))
    return out


def run(args: argparse.Namespace) -> None:
    """Every run of ``args`` not saved yet: seed by seed, the record unit first."""
    tasks = []
    for seed in args.seeds:
        pairs = list(itertools.product(args.models, args.datasets))
        for model, dataset in pairs:
            for method in ("untuned", "exact"):
                tasks.append(_task(model, dataset, "none", "none", method, seed, args.n_iter))
        for unit in args.units:
            for eps, (model, dataset), mode in itertools.product(args.epsilons, pairs, MODES):
                tasks.append(_task(model, dataset, unit, eps, mode, seed, args.n_iter))
    harness.collect_runs(
        harness.runs_dir(args.out, "privacy_units"),
        tasks,
        lambda res: f"{res['score']:.4f} ({res['seconds']:.0f} s)",
    )


def _task(model, dataset, unit, eps, method, seed, n_iter):
    name = f"{model}-{dataset}-{unit}-{eps}-{method}-{seed}.json"
    return name, functools.partial(run_one, model, dataset, unit, eps, method, seed, n_iter)


def _test(run: dict) -> float:
    """A pick's test accuracy, its model fitted on the training records it was tuned on."""
    return float(run["test_score_train_fit"])


def _beyond_noise(diffs: np.ndarray) -> int:
    """+1 / -1 when the paired mean difference is beyond two standard errors of zero (and of
    a tenth of a point, so that identical picks are not called different), else 0."""
    if diffs.size < 2:
        return 0
    mean, se = float(np.mean(diffs)), float(harness.mean_se(diffs)[1])
    if mean - 2 * se > 0.1:
        return 1
    if mean + 2 * se < -0.1:
        return -1
    return 0


def summarize(args: argparse.Namespace) -> harness.Report:
    """The report of the saved runs (``privacy_units.json``, ``.md`` and ``.png``)."""
    rows = harness.load_runs(harness.runs_dir(args.out, "privacy_units"))
    key = lambda r: (r["model"], r["dataset"], r["seed"])  # noqa: E731
    untuned = {key(r): r for r in rows if r["method"] == "untuned"}
    exact = {key(r): r for r in rows if r["method"] == "exact"}
    configs = [("none", "none", "exact")] + [
        (u, e, m) for u in UNITS for e in EPSILONS for m in MODES
    ]
    summary: dict = {}
    for unit, eps, method in configs:
        mine = [r for r in rows if (r["unit"], r["epsilon"], r["method"]) == (unit, eps, method)]
        if not mine:
            continue
        per_task: dict = {}
        for r in mine:
            if key(r) in untuned:
                per_task.setdefault(f"{r['model']}|{r['dataset']}", []).append(r)
        tasks = {}
        for task, runs in sorted(per_task.items()):
            gain = np.array([100 * (_test(r) - _test(untuned[key(r)])) for r in runs])
            refit_gain = np.array([100 * (r["score"] - untuned[key(r)]["score"]) for r in runs])
            behind = [100 * (_test(exact[key(r)]) - _test(r)) for r in runs if key(r) in exact]
            tasks[task] = {
                "n_val": runs[0]["n_val"],
                "n_seeds": len(runs),
                "score": float(np.mean([_test(r) for r in runs])),
                "gain_points": float(np.mean(gain)),
                "gain_se": harness.standard_error(gain),
                "verdict": _beyond_noise(gain),
                "behind_exact_points": float(np.mean(behind)) if behind else None,
                "overfit_gap_points": float(
                    np.mean([100 * (r["val_score"] - _test(r)) for r in runs])
                ),
                "refit_gain_points": float(np.mean(refit_gain)),
                "refit_gain_se": harness.standard_error(refit_gain),
            }
        gains = [t["gain_points"] for t in tasks.values()]
        summary[f"{unit}|{eps}|{method}"] = {
            "unit": unit,
            "epsilon": eps,
            "method": method,
            "n_runs": len(mine),
            "tasks": tasks,
            "mean_gain_points": float(np.mean(gains)) if gains else None,
            "mean_refit_gain_points": float(
                np.mean([t["refit_gain_points"] for t in tasks.values()])
            )
            if tasks
            else None,
            "mean_overfit_gap_points": float(
                np.mean([t["overfit_gap_points"] for t in tasks.values()])
            )
            if tasks
            else None,
            "wins_ties_losses": [
                sum(t["verdict"] == v for t in tasks.values()) for v in (1, 0, -1)
            ],
            "median_seconds": float(np.median([r["seconds"] for r in mine])),
        }
    result = {
        "benchmark": "privacy_units",
        "delta": DELTA,
        "n_iter": args.n_iter,
        "n_runs": len(rows),
        "targets": _targets(summary),
        "summary": summary,
    }
    return harness.Report(
        result,
        _markdown(summary, result["targets"]),
        lambda path: _plot(summary, path),
        result["targets"],
    )


def _targets(summary: dict) -> dict:
    """The issue's targets, measured: at the record unit, total epsilon 1 and n_val >= 5,000,
    on the tasks where exact tuning gains more than one point over the untuned estimator,
    how often each mode beats the untuned estimator beyond noise and how far it trails exact
    tuning; and every (task, mode, budget) that falls below the untuned estimator beyond
    noise."""
    exact = summary.get("none|none|exact", {}).get("tasks", {})
    worth = [t for t, v in exact.items() if v["n_val"] >= 5000 and v["gain_points"] > 1.0]
    out: dict = {"tasks_where_tuning_pays": worth, "record_eps1": {}}
    for mode in MODES:
        entry = summary.get(f"record|1|{mode}")
        if entry is None or not worth:
            continue
        mine = [entry["tasks"][t] for t in worth if t in entry["tasks"]]
        out["record_eps1"][mode] = {
            "beats_untuned_beyond_noise": sum(v["verdict"] == 1 for v in mine),
            "of": len(mine),
            "mean_behind_exact_points": float(
                np.mean(
                    [v["behind_exact_points"] for v in mine if v["behind_exact_points"] is not None]
                )
            )
            if mine
            else None,
        }
    out["below_untuned_beyond_noise"] = [
        f"{name}: {task} ({v['gain_points']:+.2f} ± {v['gain_se'] or 0:.2f})"
        for name, entry in summary.items()
        for task, v in entry["tasks"].items()
        if v["verdict"] == -1
    ]
    return out


def _markdown(summary: dict, targets: dict) -> str:
    lines = [
        f"Gain over the untuned estimator in test-accuracy points, both fitted on the training "
        f"records (mean over seeds; verdict beyond two standard errors), n_iter = {N_ITER}, "
        f"delta = {DELTA:g}.",
        "",
    ]
    for entry in summary.values():
        title = (
            "exact tuning (no privacy)"
            if entry["method"] == "exact"
            else f"{entry['unit']} unit, total epsilon {entry['epsilon']}, "
            f"{_LABELS[entry['method']]}"
        )
        w, t, lo = entry["wins_ties_losses"]
        mean = entry["mean_gain_points"]
        lines.append(
            f"- **{title}**: mean gain {mean:+.2f} points over {len(entry['tasks'])} tasks; "
            f"beyond noise above/level/below the untuned: {w}/{t}/{lo}; after the refit on "
            f"training and validation records {entry['mean_refit_gain_points']:+.2f}; "
            f"validation minus test accuracy of the pick "
            f"{entry['mean_overfit_gap_points']:+.2f}; median "
            f"{entry['median_seconds']:.0f} s per search"
        )
    lines += ["", "Per task (gain over untuned, points ± SE; record unit; n_val in brackets):", ""]
    record = [k for k in summary if k.startswith("record|") or k.startswith("none|")]
    tasks = sorted({t for k in record for t in summary[k]["tasks"]})
    header = ["task"] + [
        "exact" if k.startswith("none") else f"ε={summary[k]['epsilon']} {summary[k]['method']}"
        for k in record
    ]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for t in tasks:
        cells = []
        n_val = ""
        for k in record:
            v = summary[k]["tasks"].get(t)
            if v is None:
                cells.append("–")
                continue
            n_val = v["n_val"]
            cells.append(harness.format_mean_se(v["gain_points"], v["gain_se"], "+.2f"))
        lines.append(f"| {t.replace('|', ' / ')} ({n_val}) | " + " | ".join(cells) + " |")
    lines += ["", "Targets:", "", "```", json.dumps(targets, indent=1), "```", ""]
    return "\n".join(lines)


@harness.figure
def _plot(plt: Any, summary: dict, path: Path) -> None:
    """Gain over the untuned estimator against n_val, one panel per (unit, epsilon)."""
    if not summary:
        return
    panels = [
        (u, e) for u in UNITS for e in EPSILONS if any(k.startswith(f"{u}|{e}|") for k in summary)
    ]
    if not panels:
        return
    fig, axes = harness.panel_grid(len(panels), 4.2, 3.2, ncols=3)
    exact = summary.get("none|none|exact")
    for ax, (unit, eps) in zip(axes, panels, strict=False):
        series = [("exact", exact)] + [(m, summary.get(f"{unit}|{eps}|{m}")) for m in MODES]
        for i, (label, entry) in enumerate(series):
            if entry is None:
                continue
            by_n: dict = {}
            for v in entry["tasks"].values():
                by_n.setdefault(v["n_val"], []).append(v["gain_points"])
            ns = sorted(by_n)
            # each line its colour and marker (the harness's cycle), nudged sideways by a few
            # per cent of n_val: the private modes often coincide at 0
            nudge = 1.07 ** (i - (len(series) - 1) / 2)
            ax.plot([n * nudge for n in ns], [np.mean(by_n[n]) for n in ns], label=_LABELS[label])
        ax.axhline(0.0, color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log")
        ax.set_title(f"{unit} unit, total ε = {eps}")
        ax.set_xlabel("validation records n_val")
        ax.set_ylabel("test accuracy − untuned (points)")
    axes[0].legend(fontsize=7)
    harness.save_figure(
        fig, path, title="Gain over the untuned estimator, mean over models and seeds"
    )


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    parser.add_argument("--epsilons", nargs="+", default=EPSILONS, choices=EPSILONS)
    parser.add_argument("--units", nargs="+", default=UNITS, choices=UNITS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--n-iter", type=int, default=N_ITER)


def _quick(args: argparse.Namespace) -> None:
    args.models, args.datasets, args.seeds, args.n_iter = ["knn"], ["synthetic_small"], [0, 1], 4
    args.epsilons = ["1"]


BENCHMARK = harness.Benchmark(
    name="privacy_units",
    doc=__doc__,
    quick="k-NN on the small synthetic set, epsilon 1, both units, 4 candidates",
    arguments=_arguments,
    quick_settings=_quick,
    run=run,
    summarize=summarize,
)


def main(argv: list[str] | None = None) -> dict | None:
    """Run or summarize; returns the summary written to ``<out>/privacy_units.json``."""
    return harness.main(BENCHMARK, argv)


if __name__ == "__main__":
    main()
