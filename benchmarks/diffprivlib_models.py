"""Every record protected end to end: diffprivlib's models tuned on real data at a total epsilon
of at most 3.

diffprivlib's models are differentially private per fit once the data's bounds are given before
the data is read. ``PrivateBOSearchCV(privacy_unit="record", estimator_epsilon=EPS_FIT,
privacy_budget=(EPS_CHOICE, 1e-6))`` fits the untuned model and ``N_ITER`` candidates drawn
from the space on the training records (each fit ``EPS_FIT``-DP for a training record), makes
one permute-and-flip choice among them on the validation records (``EPS_CHOICE``) and refits the
pick on all the records (one more fit): its privacy report states the guarantee for every
record (the fits composed for a training record; the choice and the refit for a validation
record), which this benchmark prints.

Tasks (public transforms and bounds fixed before the data is read, as diffprivlib requires):

- ``logistic/spambase``: ``diffprivlib.models.LogisticRegression`` on ``log1p`` of spambase's
  57 counts and frequencies; untuned ``C=1`` (diffprivlib's default) and ``data_norm=10`` (a
  round bound on a row's norm), the space ``C`` in [1e-3, 1e2] and ``data_norm`` in [1, 100],
  both log-scale;
- ``logistic/phoneme``: the same model on phoneme's 5 features (standardised by the data set's
  makers); untuned ``data_norm=5``, the same space;
- ``naive_bayes/penbased``: ``diffprivlib.models.GaussianNB`` on pen digits' 16 coordinates,
  which lie in [0, 100] by construction (``bounds=(0, 100)``); the space ``var_smoothing`` (the
  variance diffprivlib adds to each noisy variance; default 1e-9) in [1e-3, 1e4], log-scale.

Each seed draws a stratified test set (20 %) that no search sees; the search tunes on the rest
(its hold-out: 20 % of it, not stratified, as the end-to-end guarantee requires). Compared, on
the same test records:

- ``untuned``: the model as the user wrote it, one fit at ``EPS_FIT`` on the same records;
- ``untuned_whole``: the untuned model fitted once at the search's whole end-to-end epsilon (the
  alternative a user has for the same guarantee: spend it all on one fit);
- ``tuned``: the search's refitted pick.

Usage::

    python -m benchmarks.diffprivlib_models run          # the missing runs, then the summary
    python -m benchmarks.diffprivlib_models summarize
    python -m benchmarks.diffprivlib_models --quick      # smoke run (tests)

Needs diffprivlib, which needs scikit-learn below 1.8 (``pip install -e ".[diffprivlib]"``).
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
from sklearn.model_selection import train_test_split

from benchmarks import harness
from benchmarks.datasets import load_dataset
from privtune import PrivateBOSearchCV

TASKS = ["logistic/spambase", "logistic/phoneme", "naive_bayes/penbased"]
EPS_FIT = 0.3  # each fit of a model
EPS_CHOICE = 2.0  # the one private choice
N_ITER = 7  # candidates besides the untuned model: 8 fits and the refit, 2.7 in all
DELTA = 1e-6
LOG = "log-uniform"
SPACES = {
    "logistic": {"C": (1e-3, 1e2, LOG), "data_norm": (1.0, 100.0, LOG)},
    "naive_bayes": {"var_smoothing": (1e-3, 1e4, LOG)},
}


def data(task: str) -> tuple[np.ndarray, np.ndarray]:
    """The task's records after its public transform (fixed, record by record)."""
    dataset = task.split("/")[1]
    X, y = load_dataset(dataset)
    if dataset == "spambase":
        X = np.log1p(X)
    return X, y


def model(task: str, epsilon: float, seed: int):
    """The untuned diffprivlib model of ``task`` at ``epsilon`` per fit."""
    from diffprivlib.models import GaussianNB, LogisticRegression

    name, dataset = task.split("/")
    if name == "logistic":
        norm = 10.0 if dataset == "spambase" else 5.0
        return LogisticRegression(epsilon=epsilon, data_norm=norm, random_state=seed)
    return GaussianNB(epsilon=epsilon, bounds=(0.0, 100.0), random_state=seed)


def run_one(task: str, seed: int, n_iter: int, n_records: int | None) -> dict:
    """One seed of ``task``: the untuned model, the untuned model at the whole budget, and the
    tuned one, on the same fresh test records."""
    X, y = data(task)
    if n_records is not None:
        X, y = X[:n_records], y[:n_records]
    X_tune, X_test, y_tune, y_test = train_test_split(
        X, y, test_size=0.2, random_state=seed, stratify=y
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's deprecations inside diffprivlib
        search = PrivateBOSearchCV(
            model(task, EPS_FIT, seed),
            SPACES[task.split("/")[0]],
            privacy_unit="record",
            privacy_budget=(EPS_CHOICE, DELTA),
            estimator_epsilon=EPS_FIT,
            n_iter=n_iter,
            random_state=seed,
            noise_random_state=10_000 + seed,
        ).fit(X_tune, y_tune)
        total = search.privacy_report_["end_to_end"]
        untuned = model(task, EPS_FIT, seed).fit(X_tune, y_tune).score(X_test, y_test)
        whole = model(task, total["epsilon"], seed).fit(X_tune, y_tune).score(X_test, y_test)
        tuned = search.score(X_test, y_test)
    return {
        "task": task,
        "seed": seed,
        "n_iter": n_iter,
        "n_tune": len(y_tune),
        "n_test": len(y_test),
        "untuned": float(untuned),
        "untuned_whole": float(whole),
        "tuned": float(tuned),
        "params": {k: repr(v) for k, v in search.best_params_.items()},
        "end_to_end": total,
        "protects": search.privacy_report_["protects"],
        "seconds": time.perf_counter() - t0,
    }


def run(args: argparse.Namespace) -> None:
    """Every missing run, seed by seed."""
    tasks = [
        (
            f"{task.replace('/', '-')}-{seed}",
            functools.partial(run_one, task, seed, args.n_iter, args.n_records),
        )
        for seed, task in itertools.product(args.seeds, args.tasks)
    ]
    harness.collect_runs(harness.RunStore(args.out, "diffprivlib_models"), tasks)


def _verdict(diffs: np.ndarray) -> int:
    """+1 / -1 when the mean of ``diffs`` is beyond two standard errors of zero, else 0."""
    mean, se = harness.mean_se(diffs)
    if diffs.size < 2:
        return 0
    return int(np.sign(mean)) if abs(mean) > 2 * se else 0


def summarize(args: argparse.Namespace) -> harness.Report:
    """Test accuracy per task (mean ± SE over seeds) and the tuned model's gain over each
    untuned one, paired by seed."""
    runs = [
        r
        for r in harness.load_runs(harness.RunStore(args.out, "diffprivlib_models"))
        if r["task"] in args.tasks and r["seed"] in args.seeds
    ]
    rows = []
    for task in args.tasks:
        mine = [r for r in runs if r["task"] == task]
        if not mine:
            continue
        row: dict[str, Any] = {"task": task, "n_seeds": len(mine)}
        for key in ("untuned", "untuned_whole", "tuned"):
            values = np.array([r[key] for r in mine])
            row[key], row[f"{key}_se"] = map(float, harness.mean_se(values))
        for key in ("untuned", "untuned_whole"):
            diffs = 100.0 * np.array([r["tuned"] - r[key] for r in mine])
            row[f"gain_over_{key}"] = float(np.mean(diffs))
            row[f"gain_over_{key}_se"] = harness.standard_error(diffs)
            row[f"gain_over_{key}_verdict"] = _verdict(diffs)
        row["end_to_end_epsilon"] = max(r["end_to_end"]["epsilon"] for r in mine)
        row["protects"] = mine[0]["protects"]
        rows.append(row)
    result = {
        "benchmark": "diffprivlib_models",
        "estimator_epsilon": EPS_FIT,
        "choice_epsilon": EPS_CHOICE,
        "n_iter": args.n_iter,
        "n_runs": len(runs),
        "tasks": rows,
    }
    return harness.Report(result, _markdown(rows), lambda path: _plot(rows, path), _headline(rows))


def _headline(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        lines.append(
            f"{r['task']}: tuned {100 * r['tuned']:.2f}, untuned {100 * r['untuned']:.2f} "
            f"(gain {r['gain_over_untuned']:+.2f} ± {r['gain_over_untuned_se'] or 0:.2f}), "
            f"untuned at the whole epsilon {100 * r['untuned_whole']:.2f} "
            f"(gain {r['gain_over_untuned_whole']:+.2f} ± "
            f"{r['gain_over_untuned_whole_se'] or 0:.2f}); {r['protects']}"
        )
    return "\n".join(lines)


def _markdown(rows: list[dict]) -> str:
    header = (
        "| task | seeds | untuned (ε per fit) | untuned, whole ε in one fit | tuned | "
        "tuned − untuned (points) | tuned − untuned, whole ε | guarantee for every record |"
    )
    lines = [header, "|" + "---|" * 8]
    for r in rows:
        cells = [
            r["task"],
            str(r["n_seeds"]),
            *(
                harness.format_mean_se(100 * r[k], 100 * r[f"{k}_se"], ".2f")
                for k in ("untuned", "untuned_whole", "tuned")
            ),
            harness.format_mean_se(r["gain_over_untuned"], r["gain_over_untuned_se"], "+.2f"),
            harness.format_mean_se(
                r["gain_over_untuned_whole"], r["gain_over_untuned_whole_se"], "+.2f"
            ),
            f"ε = {r['end_to_end_epsilon']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@harness.figure
def _plot(plt: Any, rows: list[dict], path: Path) -> None:
    """Test accuracy of the three models per task, with standard errors."""
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(2.4 * len(rows) + 1.5, 3.4))
    keys = [
        ("untuned", f"untuned (ε = {EPS_FIT:g} per fit)"),
        ("untuned_whole", "untuned, the whole ε in one fit"),
        ("tuned", "tuned end to end"),
    ]
    x = np.arange(len(rows))
    for i, (key, label) in enumerate(keys):
        ax.bar(
            x + (i - 1) * 0.27,
            [100 * r[key] for r in rows],
            0.27,
            yerr=[100 * r[f"{key}_se"] for r in rows],
            label=label,
        )
    ax.set_xticks(x, [f"{r['task']}\nε ≤ {r['end_to_end_epsilon']:.2f}" for r in rows])
    low = min(100 * min(r[k] for k, _ in keys) for r in rows)
    ax.set_ylim(max(0.0, low - 10), None)
    ax.set_ylabel("test accuracy (%)")
    ax.legend(fontsize=7)
    harness.save_figure(fig, path, title="diffprivlib models tuned with every record protected")


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", nargs="+", default=TASKS, choices=TASKS)
    parser.add_argument("--seeds", nargs="+", type=int, default=list(range(10)))
    parser.add_argument("--n-iter", type=int, default=N_ITER)
    parser.add_argument("--n-records", type=int, default=None, help="the first records only")


def _quick(args: argparse.Namespace) -> None:
    args.tasks, args.seeds, args.n_iter, args.n_records = ["logistic/phoneme"], [0, 1], 2, 1500


BENCHMARK = harness.Benchmark(
    name="diffprivlib_models",
    doc=__doc__,
    quick="diffprivlib's logistic regression on 1,500 phoneme records, 2 candidates, two seeds",
    arguments=_arguments,
    quick_settings=_quick,
    run=run,
    summarize=summarize,
)


def main(argv: list[str] | None = None) -> dict | None:
    """Run or summarize; returns the summary written to ``<out>/diffprivlib_models.json``."""
    return harness.main(BENCHMARK, argv)


if __name__ == "__main__":
    main()
