"""What the three ``search_*.py`` examples share: their options and their plot."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def options(description: str) -> argparse.Namespace:
    """``--n-iter``, ``--cv``, ``--out`` and ``--quick`` (a smoke run)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--n-iter", type=int, default=40, help="candidates per search")
    parser.add_argument("--cv", type=int, default=5, help="cross-validation folds")
    parser.add_argument("--out", type=Path, default=Path("."), help="folder of the plot")
    parser.add_argument("--quick", action="store_true", help="6 candidates, 3 folds")
    args = parser.parse_args()
    if args.quick:
        args.n_iter, args.cv = 6, 3
    return args


def plot_searches(exact, private, private_true: float, path: Path) -> None:
    """Best-so-far mean CV score of the non-private search; released scores of the private one.

    ``private_true`` is the true CV score of the private search's pick, which only the data
    owner can compute (it is not part of the private search's output).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    scores = exact.cv_results_["mean_test_score"]
    n = np.arange(1, len(scores) + 1)
    ax.plot(n, np.fmax.accumulate(scores), label="non-private: best mean CV score so far")
    released = private.cv_results_["mean_test_score"]
    eps = private.epsilon
    ax.scatter(n, released, s=10, color="C1", label=f"private: released scores (ε = {eps:g})")
    ax.axhline(private_true, color="C1", ls="--", label="private pick: true mean CV score")
    ax.set_ylim(min(0.5, private_true - 0.05), 1.05)
    ax.set_xlabel("candidate")
    ax.set_ylabel("mean CV accuracy")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"saved {path}")
