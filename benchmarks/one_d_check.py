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

    python -m benchmarks.one_d_check            # 160 studies, about two minutes
    python -m benchmarks.one_d_check --quick    # 2 seeds (tests)
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import optuna

from benchmarks import harness
from privtune import PrivateGPUCBSampler

EPSILONS = ["none", "1000", "10", "1"]
ALGORITHMS = ["gp-ucb", "tgp"]
SURROGATES = ["fixed", "fitted"]


def f(x: float) -> float:
    """The objective, ``1 - (x - 0.3)^2``."""
    return 1.0 - (x - 0.3) ** 2


def run_one(algorithm: str, surrogate: str, eps: str, seed: int, n_trials: int = 30) -> dict:
    """One study: where its proposals after the start-up went, and its recommendation.

    Parameters
    ----------
    algorithm : {"gp-ucb", "tgp"}
        The sampler's algorithm.
    surrogate : {"fixed", "fitted"}
        The surrogate (``optimizer_kwargs={"surrogate": surrogate}``).
    eps : str
        ``"none"`` or the privacy budget epsilon.
    seed : int
        The sampler's seed (and ``1000 + seed`` for its noise).
    n_trials : int, default=30
        Trials of the study, the first 10 uniform.

    Returns
    -------
    dict
        ``boundary_share``, ``median_distance``, ``recommended_x`` and ``recommended_f``.
    """
    kwargs = {} if eps == "none" else {"epsilon": float(eps), "value_range": (0.0, 1.0)}
    sampler = PrivateGPUCBSampler(
        algorithm,
        seed=seed,
        noise_seed=None if eps == "none" else 1000 + seed,
        optimizer_kwargs={"surrogate": surrogate},
        **kwargs,
    )
    # the noise is keyed by (noise_seed, study name, trial number): a fixed name makes it
    # reproducible, and every (algorithm, surrogate) of one seed sees the same draws
    study = optuna.create_study(
        direction="maximize", sampler=sampler, study_name=f"one_d_check-{seed}"
    )
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


def main(argv: list[str] | None = None) -> dict:
    """Run every cell; returns the results written to ``<out>/one_d_check.json``."""
    args = harness.parse(harness.make_parser(__doc__, quick="2 seeds"), argv)
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
    return harness.publish(
        args.out, "one_d_check", harness.Report(out, plot=lambda path: _plot(results, path))
    )


@harness.figure
def _plot(plt: Any, results: dict, path: Path) -> None:
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
    harness.save_figure(
        fig, path, title="One dimension, optimum at 0.3: where each algorithm recommends"
    )


if __name__ == "__main__":
    main()
