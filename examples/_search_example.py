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


def plot_searches(default: float, exact, private, private_true: float, path: Path) -> None:
    """Best-so-far mean CV score of the exact search; every released score of the private one.

    ``private_true`` is the true CV score of the private search's pick, which only the data
    owner can compute (it is not part of the private search's output). The axis shows every
    released score, however far the noise took it.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    scores = exact.cv_results_["mean_test_score"]
    n = np.arange(1, len(scores) + 1)
    ax.plot(n, np.fmax.accumulate(scores), label="exact scores: best mean CV score so far")
    released = private.cv_results_["mean_test_score"]
    ax.scatter(
        n[: len(released)],
        released,
        s=10,
        color="C1",
        label=f"private: released scores (ε = {private.epsilon:g})",
    )
    ax.axhline(private_true, color="C1", ls="--", label="private pick: true mean CV score")
    ax.axhline(default, color="black", ls=":", label="untuned defaults")
    ax.set_xlabel("candidate")
    ax.set_ylabel("mean CV accuracy")
    ax.legend(loc="best", fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"saved {path}")
