"""Reproduce the real-data experiments of Zhou & Tan (2021): light sensors and stock prices.

Fig. 2(b, c, e, f) and App. E, Fig. 3(b, c). Both follow Chowdhury & Gopalan (2019), whose
settings the paper inherits:

- **Light sensors** (``data/light_sensor.mat``, CMU Intelligent Workplace, Nov 2005): 41 arms,
  one per sensor. ``f`` = the mean of each sensor's 192 test readings, ``B`` = its maximum; the
  kernel is the empirical covariance of the 601 train readings standardised per sensor; a
  round's reward is a uniformly drawn test reading of the played sensor (the real, heavy-tailed
  noise).
- **Stock prices** (``data/stocks.csv``, adjusted closes of 29 Dow stocks, 2016-01-04 to
  2019-04-10, 823 days): 29 arms. ``f`` = each stock's mean price, ``B`` = its maximum; the
  kernel is the empirical covariance of the standardised prices; a reward is the price of a
  uniformly drawn day.

In both, ``R`` is the largest deviation of a reading from its arm's mean, ``alpha = 1``, ``v`` is
the mean squared reading and ``c`` the mean squared deviation (the paper's text). The LDP
versions pass every reward through the curator CTL(epsilon) (clipped to ``[-(B + R), B + R]``,
Laplace of scale ``2 (B + R) / epsilon``); the heavy-tailed versions see the raw readings. The
paper's panels are LDP at epsilon 0.5 (light) and 1 (stocks), App. E the other epsilon, and the
non-private versions; all four LDP cases are run here.

Arms are the points ``i / (n - 1)`` of [0, 1], the decision set of every round; the kernel
looks the covariance up by arm (:class:`ArmCovariance`), so every algorithm uses the paper's
kernel. MoMA-, TGP- and ATA-GP-UCB, GP-UCB and random search, lambda = 1, delta = 0.05 and the
documented defaults otherwise (:func:`benchmarks.zhou_tan.make_algorithm`), 10 trials of
T = 1000; within a trial every algorithm draws the same sequence of reading indices.

Regret is in the data's units (lux-like sensor counts, dollars); the authors' code divides
``f`` by ``B`` for its plots, which divides the regret by ``B``: both are reported.

Two variants: ``defaults`` (the documented ``beta_scale``, calibrated on the synthetic
experiment, whose rewards are of order 1) and ``theorem`` (``beta_scale = 1``: the theorems'
confidence widths, with rewards here in the hundreds), both with the papers' zero-mean model.

Random search has no parameters: it runs under ``defaults`` and is shown in both variants.
Each (data set, setting, variant, algorithm) is one run, saved in
``results/zhou_tan_real/runs.jsonl.gz``; ``run`` skips those saved there, and several processes
can share the work.

Usage::

    python -m benchmarks.zhou_tan_real run         # 54 runs of 10 trials
    python -m benchmarks.zhou_tan_real summarize   # zhou_tan_real.json and .png
    python -m benchmarks.zhou_tan_real --quick     # smoke run (tests)
"""

from __future__ import annotations

import argparse
import functools
import itertools
import time
from pathlib import Path

import numpy as np

from benchmarks import harness
from benchmarks.zhou_tan import ALGORITHMS, make_algorithm, publish_regrets
from privtune.kernels import Kernel
from privtune.privacy import LaplaceCurator

DATA = Path(__file__).parent / "data"
DATASETS = ["light", "stocks"]
SETTINGS = ["ldp-eps1", "ldp-eps0.5", "heavy"]
#: The paper's panels: Fig. 2 (main text) and App. E, Fig. 3.
PAPER_PANELS = {
    ("light", "ldp-eps0.5"): "Fig. 2(b)",
    ("stocks", "ldp-eps1"): "Fig. 2(c)",
    ("light", "heavy"): "Fig. 2(e)",
    ("stocks", "heavy"): "Fig. 2(f)",
    ("light", "ldp-eps1"): "Fig. 3(b)",
    ("stocks", "ldp-eps0.5"): "Fig. 3(c)",
}
CURVE_STEP = 10  # the saved curves keep every 10th round
#: ``defaults``: the documented defaults (``beta_scale`` calibrated on the synthetic
#: experiment); ``theorem``: ``beta_scale = 1``, the theorems' confidence widths.
VARIANTS = {"defaults": {}, "theorem": {"beta_scale": 1.0}}


class ArmCovariance(Kernel):
    """A kernel given as a covariance matrix over ``n`` arms, arm ``i`` at ``i / (n - 1)``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semi-definite, with a unit diagonal (a correlation matrix), as the
        regret bounds assume ``k(x, x) <= 1``.
    """

    def __init__(self, K: np.ndarray) -> None:
        K = np.asarray(K, dtype=float)
        if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] < 2:
            raise ValueError(f"K must be a square matrix over 2 or more arms, got {K.shape}.")
        object.__setattr__(self, "lengthscale", 1.0)  # unused: the matrix is the kernel
        object.__setattr__(self, "K", K)

    def arms(self, X: np.ndarray) -> np.ndarray:
        """The arm index of each row of ``X`` (points of [0, 1], first coordinate)."""
        x = np.atleast_2d(np.asarray(X, dtype=float))[:, 0]
        return np.rint(x * (self.K.shape[0] - 1)).astype(int)

    def __call__(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        """``K[i, j]`` for the arms of the rows of ``X`` and ``Y`` (``Y = X`` when omitted)."""
        i = self.arms(X)
        j = i if Y is None else self.arms(Y)
        return self.K[np.ix_(i, j)]

    def diag(self, X: np.ndarray) -> np.ndarray:
        """``K[i, i]`` for the arm of every row of ``X``."""
        i = self.arms(X)
        return self.K[i, i]

    def with_lengthscale(self, lengthscale: float) -> Kernel:
        """Refused: the matrix is the kernel, there is no lengthscale to refit."""
        raise TypeError("an ArmCovariance has no lengthscale; do not refit it.")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"ArmCovariance(n_arms={self.K.shape[0]})"


def standardised_covariance(readings: np.ndarray) -> np.ndarray:
    """The empirical covariance of ``readings`` (rows: observations, columns: arms) after
    standardising each column, with ``n - 1`` in both, so the diagonal is 1."""
    z = (readings - readings.mean(axis=0)) / readings.std(axis=0, ddof=1)
    return np.cov(z, rowvar=False)


def load_problem(name: str) -> dict:
    """The arms of data set ``name``: ``f``, the kernel matrix, the readings rewards are drawn
    from (rows: observations, columns: arms), and ``B``, ``R``, ``v``, ``c``."""
    if name == "light":
        from scipy.io import loadmat

        data = loadmat(DATA / "light_sensor.mat", squeeze_me=True, struct_as_record=False)["data"]
        train = np.asarray(data.train.sensordata, dtype=float)
        readings = np.asarray(data.test.sensordata, dtype=float)
        K = standardised_covariance(train)
    elif name == "stocks":
        raw = np.genfromtxt(DATA / "stocks.csv", delimiter=",", skip_header=1)[:, 1:]
        readings = raw[:, ~np.isnan(raw).any(axis=0)]  # drop a stock with a missing price
        K = standardised_covariance(readings)
    else:
        raise ValueError(f"unknown data set {name!r}; expected one of {DATASETS}.")
    f = readings.mean(axis=0)
    return {
        "f": f,
        "K": K,
        "readings": readings,
        "B": float(f.max()),
        "R": float(np.abs(readings - f).max()),
        "v": float(np.mean(readings**2)),
        "c": float(np.mean((readings - f) ** 2)),
    }


def run_trial(
    problem: dict, algorithm: str, setting: str, variant: str, T: int, trial: int
) -> np.ndarray:
    """The cumulative regret curve of one trial (every round)."""
    f, readings = problem["f"], problem["readings"]
    n_arms = f.size
    B, R = problem["B"], problem["R"]
    epsilon = float(setting.removeprefix("ldp-eps")) if setting.startswith("ldp") else None
    kernel = ArmCovariance(problem["K"])
    opt = make_algorithm(
        algorithm,
        "ldp" if epsilon is not None else "heavy",
        kernel,
        B=B,
        R=R,
        epsilon=epsilon,
        v=problem["v"],
        c=problem["c"],
        horizon=T,
        seed=trial,
        overrides=None if algorithm == "random" else VARIANTS[variant],
    )
    curator = None
    if epsilon is not None:
        curator = LaplaceCurator(epsilon, value_range=(-(B + R), B + R), seed=trial)
    rows = np.random.default_rng([trial, 11]).integers(0, readings.shape[0], size=T)
    f_star = float(f.max())
    regret: list[float] = []

    def evaluate(x: np.ndarray) -> float:
        arm = int(kernel.arms(x)[0])
        regret.append(f_star - f[arm])
        reading = float(readings[rows[len(regret) - 1], arm])
        return reading if curator is None else curator.privatize(reading)

    grid = (np.arange(n_arms) / (n_arms - 1))[:, None]
    harness.drive(opt, T, evaluate, candidates=grid)
    return np.cumsum(regret)


def run_one(dataset: str, setting: str, variant: str, algorithm: str, T: int, trials: int) -> dict:
    """Every trial of one (data set, setting, variant, algorithm): final regrets and curves."""
    problem = load_problem(dataset)
    t0 = time.perf_counter()
    curves = np.array(
        [run_trial(problem, algorithm, setting, variant, T, k) for k in range(trials)]
    )
    keep = np.unique(np.r_[np.arange(CURVE_STEP - 1, T, CURVE_STEP), T - 1])
    return {
        "dataset": dataset,
        "setting": setting,
        "variant": variant,
        "algorithm": algorithm,
        "T": T,
        "trials": trials,
        "B": problem["B"],
        "final_regret": curves[:, -1].tolist(),
        "curve_rounds": (keep + 1).tolist(),
        "curve_mean": curves[:, keep].mean(axis=0).round(4).tolist(),
        "seconds": time.perf_counter() - t0,
    }


def run(args: argparse.Namespace) -> None:
    """Every run of ``args`` not saved yet (:mod:`benchmarks.harness`)."""
    tasks = [
        (
            f"{d}-{s}-{v}-{a}",
            functools.partial(run_one, d, s, v, a, args.T, args.trials),
        )
        for v, d, s, a in itertools.product(
            args.variants, args.datasets, args.settings, args.algorithms
        )
        if a != "random" or v == "defaults"  # random search has no parameters to vary
    ]
    harness.collect_runs(
        harness.RunStore(args.out, "zhou_tan_real"),
        tasks,
        lambda r: f"R_T = {np.mean(r['final_regret']):.1f} ({r['seconds']:.0f} s)",
    )


def summarize(args: argparse.Namespace) -> dict:
    """Per (data set, setting): each algorithm's final regret, mean ± SE, raw and over B, and
    the ranking; written to ``zhou_tan_real.json`` with the curves' plot."""
    rows = harness.load_runs(harness.RunStore(args.out, "zhou_tan_real"))
    settings: dict = {}
    variants = sorted({r["variant"] for r in rows})
    for r in rows:
        mean, se = harness.mean_se(r["final_regret"], single=0.0)
        for variant in variants if r["algorithm"] == "random" else [r["variant"]]:
            key = f"{r['dataset']}-{r['setting']}-{variant}"
            entry = settings.setdefault(
                key, {"panel": PAPER_PANELS.get((r["dataset"], r["setting"])), "algorithms": {}}
            )
            entry["algorithms"][r["algorithm"]] = {
                "final_regret_mean": float(mean),
                "final_regret_se": float(se),
                "final_regret_over_B": float(mean / r["B"]),
                "trials": r["trials"],
                "T": r["T"],
                "seconds": r["seconds"],
                "curve_rounds": r["curve_rounds"],
                "curve_mean": r["curve_mean"],
            }
    for entry in settings.values():
        algs = entry["algorithms"]
        entry["ranking"] = sorted(algs, key=lambda a: algs[a]["final_regret_mean"])
    result = {"benchmark": "zhou_tan_real", "settings": dict(sorted(settings.items()))}
    return publish_regrets(args.out, "zhou_tan_real", result, "ranking")


def main(argv: list[str] | None = None) -> dict:
    """Run or summarize; returns the summary written to ``<out>/zhou_tan_real.json``."""
    parser = harness.make_parser(__doc__, quick="T=40, 2 trials, light sensors, LDP at 1 and heavy")
    parser.add_argument("command", nargs="?", default="run", choices=["run", "summarize"])
    parser.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    parser.add_argument("--settings", nargs="+", default=SETTINGS, choices=SETTINGS)
    parser.add_argument(
        "--algorithms", nargs="+", default=list(ALGORITHMS), choices=list(ALGORITHMS)
    )
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--T", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=10)
    args = harness.parse(parser, argv)
    if args.quick:
        args.T, args.trials, args.datasets = 40, 2, ["light"]
        args.settings, args.variants = ["ldp-eps1", "heavy"], ["defaults"]
        run(args)
        return summarize(args)
    if args.command == "run":
        run(args)
    return summarize(args)


if __name__ == "__main__":
    main()
