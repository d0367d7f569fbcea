"""Time per ask and per tell of every optimizer at t = 100, 500 and 2000 told rewards.

The history is t uniform points of the cube with noisy rewards of a smooth function (dim = 2,
SE kernel, lengthscale 0.2, LDP parameters with epsilon = 1 where the algorithm has them).
Each timing is the median of ``--repeats`` calls: an ``ask`` over the continuous cube (on a
copy of the optimizer, so the state does not change) and a ``tell`` of one more reward.
Machines are noisy: compare the ratios between algorithms and between t values, not the
absolute times.

Usage::

    python -m benchmarks.speed                 # t = 100, 500, 2000
    python -m benchmarks.speed --quick         # t = 50, 100 (smoke run for the tests)
"""

from __future__ import annotations

import copy
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import harness
from benchmarks.zhou_tan import ALGORITHMS

DIM = 2


def _f(X: np.ndarray) -> np.ndarray:
    return np.sin(6 * X[:, 0]) * np.cos(4 * X[:, 1])


def time_algorithm(name: str, t: int, repeats: int, seed: int = 0) -> dict:
    """Median seconds per ask and per tell of ``name`` after ``t`` told rewards.

    Parameters
    ----------
    name : str
        A key of :data:`benchmarks.zhou_tan.ALGORITHMS`.
    t : int
        The history's length (rounded down to whole epochs for MoMA).
    repeats : int
        Calls timed; the median is reported.
    seed : int, default=0
        The seed of the optimizer and of the history.

    Returns
    -------
    dict
        ``ask_seconds``, ``tell_seconds``, ``history_build_seconds``, ``t`` and, for the
        Nyström algorithms, the number of inducing points ``m``.
    """
    rng = np.random.default_rng(seed)
    kwargs = {"seed": seed}
    if name != "random":
        kwargs["epsilon"] = 1.0
    opt = ALGORITHMS[name](DIM, **kwargs)
    # MoMA learns from complete epochs: the history plays each point k times in a row.
    k = getattr(opt, "k", 1)
    X = np.repeat(rng.random((t // k, DIM)), k, axis=0)
    y = _f(X) + rng.laplace(0.0, 2.0, size=X.shape[0])
    t0 = time.perf_counter()
    opt.tell(X, y)
    build = time.perf_counter() - t0

    # Each ask is timed on a copy, so every repeat does the same work (for MoMA: opening a
    # new epoch, not handing out the current epoch's point again).
    asks = []
    for _ in range(repeats):
        fresh = copy.deepcopy(opt)
        t0 = time.perf_counter()
        fresh.ask()
        asks.append(time.perf_counter() - t0)
    # A tell is timed as the mean over the k tells of one point, so MoMA's once-per-epoch
    # model update is amortised over its epoch (k = 1 for the other algorithms).
    tells = []
    for _ in range(repeats):
        x = rng.random(DIM)
        t0 = time.perf_counter()
        for _ in range(k):
            opt.tell(x, float(_f(x[None])[0]))
        tells.append((time.perf_counter() - t0) / k)
    out = {
        "ask_seconds": statistics.median(asks),
        "tell_seconds": statistics.median(tells),
        "history_build_seconds": build,
        "t": int(X.shape[0]),
    }
    if hasattr(opt, "m"):
        out["m"] = int(opt.m)
    return out


def main(argv: list[str] | None = None) -> dict:
    """Time every algorithm; returns the results written to ``<out>/speed.json``."""
    parser = harness.make_parser(__doc__, quick="t = 50, 100, 2 repeats")
    parser.add_argument("--ts", nargs="+", type=int, default=[100, 500, 2000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--algorithms", nargs="+", default=list(ALGORITHMS), choices=list(ALGORITHMS)
    )
    args = harness.parse(parser, argv)
    if args.quick:
        args.ts, args.repeats = [50, 100], 2
    results: dict = {
        "config": {
            "dim": DIM,
            "ts": args.ts,
            "repeats": args.repeats,
            "machine": platform.machine(),
            "python": platform.python_version(),
        },
        "timings": {},
    }
    for alg in args.algorithms:
        results["timings"][alg] = {}
        for t in args.ts:
            r = time_algorithm(alg, t, args.repeats)
            results["timings"][alg][str(t)] = r
            print(
                f"{alg:8s} t={t:5d} ask {r['ask_seconds'] * 1e3:9.1f} ms  "
                f"tell {r['tell_seconds'] * 1e3:9.1f} ms  m={r.get('m', '-')}",
                file=sys.stderr,
            )
    report = harness.Report(results, plot=lambda path: _plot(results, path), headline=results)
    return harness.publish(args.out, "speed", report)


@harness.figure
def _plot(plt: Any, results: dict, path: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for alg, rows in results["timings"].items():
        ts = [int(t) for t in rows]
        for ax, key in zip(axes, ["ask_seconds", "tell_seconds"], strict=True):
            ax.loglog(ts, [rows[str(t)][key] for t in ts], marker="o", label=alg)
            ax.set_xlabel("t (told rewards)")
            ax.set_ylabel(key.replace("_", " "))
    axes[0].legend(fontsize=8)
    harness.save_figure(fig, path, title="Time per ask and tell, by number of told rewards")


if __name__ == "__main__":
    main()
