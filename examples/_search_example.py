"""What the examples share: their options, the untuned baseline, the report and the plot."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score

#: Where the examples write their plots (not the current directory).
RESULTS = Path(__file__).resolve().parent / "results"


def options(description: str, n_iter: int = 30) -> argparse.Namespace:
    """``--n-iter``, ``--cv``, ``--out`` and ``--quick`` (a smoke run of a few seconds)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--n-iter", type=int, default=n_iter, help="candidates per search")
    parser.add_argument("--cv", type=int, default=5, help="cross-validation folds")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder of the plot")
    parser.add_argument("--quick", action="store_true", help="6 candidates, 3 folds")
    args = parser.parse_args()
    if args.quick:
        args.n_iter, args.cv = 6, 3
    args.folds = StratifiedKFold(args.cv, shuffle=True, random_state=0)
    return args


def cv_score(estimator, X, y, folds) -> float:
    """The mean CV accuracy: what the data owner, and only the data owner, can compute."""
    return float(cross_val_score(estimator, X, y, cv=folds).mean())


def report(default: float, exact, private, private_true: float) -> None:
    """The untuned estimator next to both searches' picks, all as true CV accuracies."""
    print()
    print(f"untuned defaults            CV accuracy {default:.4f}")
    print(f"tuned, exact scores         CV accuracy {exact.best_score_:.4f}  {exact.best_params_}")
    print(
        f"tuned, epsilon = {private.epsilon:<4g}       CV accuracy {private_true:.4f}  "
        f"{private.best_params_}"
    )
    print(
        f"   (its released estimate, best_score_ = {private.best_score_:.4f}: the posterior "
        "mean from the noisy scores)"
    )
    r = private.privacy_report_
    print(f"   privacy: {r['n_reports']} reports of epsilon {r['epsilon_per_report']:g}")
    print(f"   what it protects: {r['protects']}")


def plot_searches(
    default: float, exact, private, private_true: float, path: Path, title: str
) -> None:
    """The untuned estimator, the exact search's best so far and the private search's pick
    (top); the private search's released scores in a panel of their own (bottom), so that
    their noise does not set the scale of the lines that matter.

    ``private_true`` is the true CV score of the private search's pick, which only the data
    owner can compute (it is not part of the private search's output).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(7, 5.5), sharex=True, gridspec_kw={"height_ratios": (3, 1.4)}
    )
    scores = exact.cv_results_["mean_test_score"]
    n = np.arange(1, len(scores) + 1)
    top.plot(
        n,
        np.fmax.accumulate(scores),
        color="C0",
        marker="o",
        markersize=3,
        label=f"tuned on exact scores: best so far ({scores.max():.4f})",
    )
    # the two horizontal lines often coincide (the private search keeps the untuned
    # estimator): distinct styles and markers keep both visible
    top.plot(
        n,
        np.full(len(n), default),
        color="black",
        ls=":",
        lw=2,
        label=f"untuned defaults ({default:.4f})",
    )
    top.plot(
        n,
        np.full(len(n), private_true),
        color="C1",
        ls="--",
        marker="D",
        markersize=4,
        markevery=max(len(n) // 8, 1),
        markerfacecolor="none",
        label=f"tuned privately, ε = {private.epsilon:g}: its pick ({private_true:.4f})",
    )
    lines = [default, private_true, *np.fmax.accumulate(scores)]
    pad = max(0.002, 0.15 * (max(lines) - min(lines)))
    top.set_ylim(min(lines) - pad, max(lines) + pad)
    top.set_ylabel("mean CV accuracy")
    top.legend(loc="lower right", fontsize=8)
    top.grid(alpha=0.3)
    released = private.cv_results_["mean_test_score"]
    bottom.plot(
        n[: len(released)], released, ".", color="C1", alpha=0.5, label="released scores (noisy)"
    )
    bottom.set_ylabel("released")
    bottom.set_xlabel("candidate")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.legend(loc="best", fontsize=8)
    bottom.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"saved {path}")
