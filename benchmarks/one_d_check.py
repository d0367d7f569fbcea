"""Where the proposals go on a one-dimensional problem: the papers' fixed surrogate against the
fitted one.

``PrivateGPUCBSampler`` maximises ``f(x) = 1 - (x - 0.3)^2`` over ``x`` in ``[0, 1]`` for 30
trials (10 uniform start-up trials), with ``value_range = (0, 1)`` and epsilon in {none, 1000,
10, 1}, for ``gp-ucb`` and ``tgp``, seeds 0-9. ``fixed`` is the tuning default before the
fitted surrogate (``optimizer_kwargs={"surrogate": "fixed"}``: a Matérn-5/2 kernel with one
refitted lengthscale, zero prior mean and a noise variance of ``1 + 8 / epsilon^2``); ``fitted``
is today's default. Reported per setting: the share of the 20 proposals after the start-up that
lie on the boundary (``x < 0.02`` or ``x > 0.98``), their median distance to the optimum 0.3,
and the recommended ``x`` (:meth:`PrivateGPUCBSampler.recommend`) with its true ``f``.

Usage::

    python benchmarks/one_d_check.py            # 160 studies, about two minutes
    python benchmarks/one_d_check.py --quick    # 2 seeds (tests)
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import optuna

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from privtune import PrivateGPUCBSampler

EPSILONS = ["none", "1000", "10", "1"]
ALGORITHMS = ["gp-ucb", "tgp"]
SURROGATES = ["fixed", "fitted"]
OUT = Path(__file__).resolve().parent / "results"


def f(x: float) -> float:
    return 1.0 - (x - 0.3) ** 2


def run_one(algorithm: str, surrogate: str, eps: str, seed: int, n_trials: int = 30) -> dict:
    kwargs = {} if eps == "none" else {"epsilon": float(eps), "value_range": (0.0, 1.0)}
    sampler = PrivateGPUCBSampler(
        algorithm,
        seed=seed,
        noise_seed=None if eps == "none" else 1000 + seed,
        optimizer_kwargs={"surrogate": surrogate},
        **kwargs,
    )
    study = optuna.create_study(direction="maximize", sampler=sampler)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(sampler.privatize(lambda t: f(t.suggest_float("x", 0.0, 1.0))), n_trials)
    xs = np.array([t.params["x"] for t in study.trials[10:]])
    rec = sampler.recommend(study)["x"]
    return {
        "boundary_share": float(np.mean((xs < 0.02) | (xs > 0.98))),
        "median_distance": float(np.median(np.abs(xs - 0.3))),
        "recommended_x": float(rec),
        "recommended_f": f(rec),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    seeds = range(2) if args.quick else range(10)
    results: dict = {}
    for algorithm in ALGORITHMS:
        for surrogate in SURROGATES:
            for eps in EPSILONS:
                runs = [run_one(algorithm, surrogate, eps, s) for s in seeds]
                cell = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
                cell["recommended_x_runs"] = [round(r["recommended_x"], 4) for r in runs]
                results.setdefault(algorithm, {}).setdefault(surrogate, {})[eps] = cell
                print(
                    f"{algorithm:7s} {surrogate:6s} eps={eps:5s} boundary "
                    f"{cell['boundary_share']:.2f}  |x - 0.3| {cell['median_distance']:.3f}  "
                    f"recommended f {cell['recommended_f']:.4f}",
                    flush=True,
                )
    out = {"benchmark": "one_d_check", "seeds": list(seeds), "results": results}
    args.out.mkdir(parents=True, exist_ok=True)
    name = "one_d_check_quick" if args.quick else "one_d_check"
    (args.out / f"{name}.json").write_text(json.dumps(out, indent=1))
    _plot(results, args.out / f"{name}.png")
    return out


def _plot(results: dict, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - the dev extra has it
        return
    fig, axes = plt.subplots(1, len(ALGORITHMS), figsize=(5 * len(ALGORITHMS), 3.4))
    for ax, algorithm in zip(np.atleast_1d(axes), ALGORITHMS, strict=True):
        for k, surrogate in enumerate(SURROGATES):
            for j, eps in enumerate(EPSILONS):
                xs = results[algorithm][surrogate][eps]["recommended_x_runs"]
                ax.scatter(
                    np.full(len(xs), j + (k - 0.5) * 0.3),
                    xs,
                    s=14,
                    color="tab:red" if surrogate == "fixed" else "tab:green",
                    label=surrogate if j == 0 else None,
                )
        ax.axhline(0.3, color="black", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(EPSILONS)), [f"eps={e}" for e in EPSILONS])
        ax.set_ylabel("recommended x (optimum 0.3)")
        ax.set_title(algorithm)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
