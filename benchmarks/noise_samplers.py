"""The cost of a curator's release with numpy's sampler and with OpenDP's, in the same run.

A curator releases one score per trial (``privatize(y)``): this times that call, and a release
of a vector of scores, for the Laplace and the Gaussian curator, with each sampler. The ratio
OpenDP / numpy is what travels between machines; the absolute times are this machine's.

Usage::

    python -m benchmarks.noise_samplers            # about 20 s
    python -m benchmarks.noise_samplers --quick    # smoke run (tests)
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from benchmarks import harness
from privtune.privacy import GaussianCurator, LaplaceCurator, set_noise_sampler


def _curator(kind: str):
    if kind == "laplace":
        return LaplaceCurator(1.0, (0.0, 1.0))
    return GaussianCurator(1.0, (0.0, 1.0), epsilon=1.0, delta=1e-5)


def time_release(kind: str, sampler: str, n: int, vector: bool, repeats: int) -> float:
    """The median over ``repeats`` of the seconds per released score."""
    previous = set_noise_sampler(sampler)
    try:
        curator = _curator(kind)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            if vector:
                curator.privatize(np.full(n, 0.5))
            else:
                for _ in range(n):
                    curator.privatize(0.5)
            times.append((time.perf_counter() - t0) / n)
        return statistics.median(times)
    finally:
        set_noise_sampler(previous)


def main(argv: list[str] | None = None) -> dict:
    """Time both samplers; write ``noise_samplers.json``."""
    parser = harness.make_parser(__doc__, quick="200 draws, 2 repeats")
    args = harness.parse(parser, argv)
    n, repeats = (200, 2) if args.quick else (5000, 5)
    rows = []
    for kind in ("laplace", "gaussian"):
        for vector in (False, True):
            cost = {s: time_release(kind, s, n, vector, repeats) for s in ("numpy", "opendp")}
            rows.append(
                {
                    "curator": kind,
                    "call": "vector of scores" if vector else "one score per call",
                    "numpy_us": 1e6 * cost["numpy"],
                    "opendp_us": 1e6 * cost["opendp"],
                    "ratio": cost["opendp"] / cost["numpy"],
                }
            )
    result = {"benchmark": "noise_samplers", "draws": n, "repeats": repeats, "rows": rows}
    return harness.publish(args.out, "noise_samplers", harness.Report(result, headline=result))


if __name__ == "__main__":
    main()
