"""Private GP-UCB on quadrature Fourier features (Dubey 2021): the paper's and its code's runs.

Sec. 6.1, Table 1 (Sec. 6.2) and the experiment of the authors' code (``environment``).

Set-up (Sec. 6.1): ``d = 2``, squared-exponential kernel with unit lengthscale and variance
1, ``f = sum_{i<=4} a_i k(x_i, .)`` with the ``x_i`` uniform in the ball ``B_2(2)`` and ``a`` in
the unit L1 ball. Each round presents ``n = 25`` arms drawn from ``B_2(2)``: at least one with
``f >= 0.8``, the others with ``f <= 0.6`` (iterative sampling, as the paper does), and the
reward of the played arm is ``Bernoulli(f(x))``. ``T = 1024``, 20 trials.

Choices the paper leaves open, stated:

- ``a`` is drawn uniformly from the simplex (the non-negative part of the unit L1 sphere,
  Dirichlet(1, 1, 1, 1)), so that ``0 <= f <= 1`` is a Bernoulli mean; a draw whose maximum
  over 4000 points of the ball is below 0.85 is redrawn, so that good arms exist;
- the optimizer works on the unit square: ``u = (x + 2) / 4``, so the unit lengthscale is
  ``0.25`` in cube units; QFF use ``m_bar = 16`` nodes per dimension (512 features), whose
  uniform error on the square is ``3e-5`` (``grid_error`` in the JSON);
- rewards are bounded (``reward_bound=1``), which the paper uses for the sensitivity
  (Sec. 6.1); ``B = 1``, ``rho = 1/2``, ``lam = 1``, ``zeta = 0.05``; Theorem 1's
  ``beta_t^{1/2}`` times ``QFFGPUCB``'s calibrated ``beta_scale`` (``calibrate``, on trials
  1000 and up): unscaled, it explores as uniformly as random play at ``T = 1024``.

Settings: uniform play among the arms (``random``, the reference); non-private; JDP (Alg. 2)
with ``alpha`` in {0.1, 0.5, 1, 10} at ``beta = 0.1``
(Fig. 1) and ``beta`` in {0.01, 0.1, 0.5, 0.99} at ``alpha = 1`` (Fig. 2). Reported:
cumulative regret ``sum_t max_{D_t} f - f(x_t)``, mean and standard error over trials.

Table 1 (Sec. 6.2): cumulative regret at ``T = 10^4``, 10 trials, on the Camelback (2-D),
Styblinski-Tang-20 and Michalewicz-10 functions "from Mutny & Krause (2018)"; the paper says
nothing else about the set-up, so the rest is ours:

- the domains of Mutny & Krause's benchmark code: camel on ``[-2, 2] x [-1, 1]``, styb on
  ``[-4, 4]^20``, mw (the standard form, not their rescaled variant) on ``[0, pi]^10``; each
  function is maximized and normalized to ``[0, 1]`` by its minimum and maximum over the domain
  (mw by ``9.6601517``, the sum of the coordinates' maxima, the literature's 9.66015), so that
  it is a Bernoulli mean; rewards ``Bernoulli(f(x_t))``, regret ``1 - f(x_t)`` per round;
- the learner works on the unit cube (``x = lo + u (hi - lo)``) and searches it continuously
  (no finite decision set): QFF with ``m_bar = 8`` nodes per dimension, the product kernel on
  camel (128 features), the additive one on styb (320) and mw (160), lengthscale 0.5 in cube
  units. Theorem 1's ``beta_t^{1/2}`` grows by ``t B eps / rho`` with ``eps`` Theorem 2's
  bound on the features' error, which must stay small at ``t = 10^4``: ``eps = 2e-4``
  (additive) and ``9e-4`` (camel) here. Mutny & Krause's bandwidth, 0.2, needs about 24
  nodes for that (the bound is 3.3 with 16; with 4 or 8 nodes the features do not approximate
  the kernel at all, measured error 0.995 and 0.75), and already 16 nodes make a
  Styblinski-Tang round 20-30 ms; at 0.3 with 8 nodes, ``eps = 3.2`` on camel and the
  non-private learner only explores (regret above random play).
  The default ``beta_scale``; the acquisition is maximized over ``n_raw_samples = 128``
  uniform points plus the optimizer's anchors, without L-BFGS-B restarts (10-15 times slower
  per round at ``d = 20``); JDP with ``beta = 0.1`` and ``horizon = T``; uniform play in the
  cube (``random``) is the reference.

The experiment of the authors' code (``environment``; the notebook of the public repository
``abhimanyudubey/private_gaussian_process_bandits``, which the paper does not describe):
``d = 5``; every round a fresh decision set of ``n = 10`` arms, each uniform in ``[0, 1]^5``
divided by its L2 norm (the unit sphere's non-negative part, inside the unit cube);
``f(x) = sum_{j<=4} a_j exp(-||x - z_j||^2)``, ``a`` uniform in ``[0, 1]^4`` divided by its sum
(on the simplex), the ``z_j`` drawn as the arms; one ``f`` per repetition; rewards
``f(x) + N(0, 1)``; ``T = 5000``; cumulative regret against each round's best arm, 5
repetitions (the notebook runs one). The learner: QFF GP-UCB with ``m_bar = 2`` nodes per
dimension (64 features) of the environment's own kernel ``exp(-||x - y||^2)`` (lengthscale
``1/sqrt(2)`` in privtune's ``exp(-r^2 / (2 nu^2))``; the notebook embeds ``exp(-r^2 / 2)``),
``lambda = 100``, ``B = rho = 1``, ``delta = zeta = 0.01``, unbounded rewards (the sub-Gaussian
sensitivity of Lemma 2). Privacy: none, or (alpha, 0.1)-JDP (Alg. 2) with alpha in
{0.1, 0.5, 1, 10} (Sec. 6.1, Fig. 1) and the notebook's 100, shifted by ``2 Lambda I``
(Lemma 3; the notebook adds a constant to every entry). The confidence width multiplies
``||Phi(x)||_{V_t^{-1}}`` (eq. 8; the notebook uses its square):

- ``theorem1``: Theorem 1's ``beta_t^{1/2}`` (``beta_scale = 1``), whose ``t B eps / rho``
  term, with Theorem 2's ``eps`` for two nodes (``qff_error_bound`` in the JSON), grows
  linearly in ``t``;
- ``theorem1-code``: the same times the notebook's multiplier, 0.1 (non-private) or 0.01 (JDP);
- ``theorem1-default``: the same times ``QFFGPUCB.default_beta_scale``;
- ``code``: the notebook's own width ``rho sqrt(m ln(1 + t B^2 / lambda) - ln delta) +
  sqrt(lambda) B`` (Abbasi-Yadkori et al. 2011) times its multiplier.

Uniform play among the arms (``random``) is the reference. Every setting of a repetition meets
the same ``f``, decision sets and noise sequence.

Usage::

    python -m benchmarks.dubey calibrate        # beta_scale on disjoint trials
    python -m benchmarks.dubey synthetic        # 180 runs, resumable; dubey_synthetic.json/.png
    python -m benchmarks.dubey timing           # seconds per round for m = 64, 256, 1024
    python -m benchmarks.dubey table1           # 150 runs, resumable; dubey_table1.json/.png
    python -m benchmarks.dubey environment      # 125 runs, resumable; dubey_environment.json/.png
    python -m benchmarks.dubey environment --quick   # tiny (tests)
    python -m benchmarks.dubey --quick          # tiny (tests)
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from benchmarks import harness
from privtune.optimizers import QFFGPUCB
from privtune.privacy.gaussian import psd_shift, tree_depth

SETTINGS = {
    "random": "random",
    "non-private": None,
    "alpha=0.1": (0.1, 0.1),
    "alpha=0.5": (0.5, 0.1),
    "alpha=1": (1.0, 0.1),
    "alpha=10": (10.0, 0.1),
    "beta=0.01": (1.0, 0.01),
    "beta=0.5": (1.0, 0.5),
    "beta=0.99": (1.0, 0.99),
}


def _ball(rng: np.random.Generator, k: int, radius: float = 2.0) -> np.ndarray:
    """``k`` points uniform in the disc of ``radius``."""
    r = radius * np.sqrt(rng.random(k))
    phi = 2 * np.pi * rng.random(k)
    return np.stack([r * np.cos(phi), r * np.sin(phi)], axis=1)


def make_function(rng: np.random.Generator) -> Callable[[np.ndarray], np.ndarray]:
    """``f = sum_i a_i k(x_i, .)`` with a maximum above 0.85 on the disc."""
    while True:
        centres = _ball(rng, 4)
        a = rng.dirichlet(np.ones(4))

        def f(X, centres=centres, a=a):
            d2 = np.sum((X[:, None, :] - centres[None, :, :]) ** 2, axis=2)
            return np.exp(-0.5 * d2) @ a

        if f(_ball(rng, 4000)).max() >= 0.85:
            return f


def decision_set(
    f: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator, n: int = 25
) -> np.ndarray:
    """``n`` arms from the disc: one with ``f >= 0.8``, the others with ``f <= 0.6``."""
    good, bad = [], []
    while not good or len(bad) < n - 1:
        X = _ball(rng, 256)
        v = f(X)
        if not good and np.any(v >= 0.8):
            good.append(X[np.argmax(v >= 0.8)])
        bad.extend(X[v <= 0.6][: n - 1 - len(bad)])
    arms = np.vstack([good, bad])
    return arms[rng.permutation(n)]


class UniformPlay:
    """Uniform play, the reference: a uniform row of the decision set, or a uniform point of the
    cube without one, drawn from the run's generator ``rng``; it learns nothing."""

    def __init__(self, dim: int, rng: np.random.Generator) -> None:
        self.dim = dim
        self.rng = rng

    def ask(self, candidates: np.ndarray | None = None) -> np.ndarray:
        """A uniform row of ``candidates``, or a uniform point of the unit cube."""
        if candidates is None:
            return self.rng.random(self.dim)
        return candidates[self.rng.integers(len(candidates))]

    def tell(self, x: np.ndarray, y: float) -> None:
        """Ignore a reward."""


def run_trial(
    setting: str, trial: int, T: int, m_bar: int, beta_scale: float | None = None
) -> dict:
    """One trial of Sec. 6.1: ``T`` rounds of ``setting`` among fresh decision sets.

    Parameters
    ----------
    setting : str
        A key of ``SETTINGS``.
    trial : int
        The seed of the function, the decision sets, the rewards and the optimizer.
    T : int
        Rounds, also the JDP tree's horizon.
    m_bar : int
        QFF nodes per dimension.
    beta_scale : float, optional
        Overrides ``QFFGPUCB``'s default.

    Returns
    -------
    dict
        The settings, the feature count, ``cumulative_regret`` per round and the seconds.
    """
    rng = np.random.default_rng([trial, 2021])
    f = make_function(rng)
    privacy = SETTINGS[setting]
    kwargs = {"m_bar": m_bar, "lengthscale": 0.25, "horizon": T, "rho": 0.5, "reward_bound": 1.0}
    if beta_scale is not None:
        kwargs["beta_scale"] = beta_scale
    if privacy == "random":  # uniform play among the arms: the reference
        kwargs["m_bar"] = 1
        privacy = None
    if privacy is not None:
        kwargs.update(privacy="jdp", alpha=privacy[0], privacy_beta=privacy[1], noise_seed=trial)
    opt = QFFGPUCB(2, seed=trial, **kwargs)
    regret = []
    best = 0.0  # the best arm's value in the current round

    def arms() -> np.ndarray:
        nonlocal best
        D = decision_set(f, rng)
        best = float(f(D).max())
        return (D + 2.0) / 4.0

    def evaluate(u: np.ndarray) -> float:
        fx = float(f((4.0 * u - 2.0)[None, :])[0])
        regret.append(best - fx)
        return float(rng.random() < fx)

    t0 = time.perf_counter()
    harness.drive(UniformPlay(2, rng) if setting == "random" else opt, T, evaluate, candidates=arms)
    return {
        "setting": setting,
        "trial": trial,
        "T": T,
        "m": opt.m,
        "beta_scale": opt.beta_scale,
        "cumulative_regret": np.cumsum(regret).tolist(),
        "seconds": time.perf_counter() - t0,
    }


def grid_error(m_bar: int) -> float:
    """Sup error of the QFF kernel on a 41 x 41 grid of the unit square (lengthscale 0.25)."""
    from privtune.features import QuadratureFourierFeatures

    q = QuadratureFourierFeatures(2, m_bar, 0.25)
    g = np.linspace(0, 1, 41)
    X = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    P = q(X)
    return float(np.abs(P @ P.T - q.kernel(X, X)).max())


def _describe(res: dict) -> str:
    """A run's progress line: its final cumulative regret and seconds."""
    return f"R = {res['cumulative_regret'][-1]:.1f} ({res['seconds']:.0f} s)"


def synthetic(args: argparse.Namespace) -> dict:
    """Sec. 6.1: the runs of ``args`` not saved yet, then the summary and the plot."""
    tasks = [
        (
            f"{setting}-{trial}-T{args.T}",
            functools.partial(run_trial, setting, trial, args.T, args.m_bar),
        )
        for trial in args.trials
        for setting in args.settings
    ]
    rows = harness.collect_runs(harness.RunStore(args.out, "dubey_synthetic"), tasks, _describe)
    summary = {}
    for setting in args.settings:
        R = np.array([r["cumulative_regret"] for r in rows if r["setting"] == setting])
        if not len(R):
            continue
        k = R.shape[0]
        se = harness.mean_se(R, single=0.0)[1]
        summary[setting] = {
            "n_trials": k,
            "mean": R.mean(axis=0).tolist(),
            "se": se.tolist(),
            "final_mean": float(R[:, -1].mean()),
            "final_se": float(se[-1]),
            "seconds_per_run": float(
                np.mean([r["seconds"] for r in rows if r["setting"] == setting])
            ),
        }
    out = {
        "benchmark": "dubey_synthetic",
        "T": args.T,
        "m_bar": args.m_bar,
        "grid_error": grid_error(args.m_bar),
        "summary": summary,
    }
    report = harness.Report(
        out,
        plot=lambda path: _plot(summary, path),
        headline={s: round(v["final_mean"], 1) for s, v in summary.items()},
        compact=True,
    )
    return harness.publish(args.out, "dubey_synthetic", report)


@harness.figure
def _plot(plt: Any, summary: dict, path: Path) -> None:
    panels = {
        "Fig. 1: alpha (beta = 0.1)": [
            "random",
            "non-private",
            "alpha=10",
            "alpha=1",
            "alpha=0.5",
            "alpha=0.1",
        ],
        "Fig. 2: beta (alpha = 1)": [
            "random",
            "non-private",
            "beta=0.99",
            "beta=0.5",
            "alpha=1",
            "beta=0.01",
        ],
    }
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, (title, keys) in zip(axes, panels.items(), strict=True):
        for key in keys:
            if key not in summary:
                continue
            label = "alpha=1, beta=0.1" if key == "alpha=1" else key
            harness.plot_band(ax, summary[key]["mean"], summary[key]["se"], label=label)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("t")
        ax.set_ylabel("cumulative regret")
        ax.legend(fontsize=7)
    harness.save_figure(
        fig,
        path,
        title="Private GP-UCB on Fourier features: cumulative regret, synthetic functions",
    )


TABLE1_SETTINGS = {
    "random": "random",
    "non-private": None,
    "alpha=10": 10.0,
    "alpha=1": 1.0,
    "alpha=0.1": 0.1,
}
#: Table 1 of the paper: cumulative regret at T = 10^4, mean of 10 trials.
PAPER_TABLE1 = {
    "camel": {"non-private": 519, "alpha=10": 775, "alpha=1": 1029, "alpha=0.1": 3324},
    "styb": {"non-private": 885, "alpha=10": 1667, "alpha=1": 2680, "alpha=0.1": 4493},
    "mw": {"non-private": 901, "alpha=10": 1558, "alpha=1": 2883, "alpha=0.1": 5002},
}


def camelback(X: np.ndarray) -> np.ndarray:
    """Six-hump Camelback, negated (maximized): ``-c(x1, x2)``.

    ``c = (4 - 2.1 x1^2 + x1^4 / 3) x1^2 + x1 x2 + (-4 + 4 x2^2) x2^2``; on
    ``[-2, 2] x [-1, 1]`` the maximum ``1.0316285`` is at ``(0.0898, -0.7127)`` and its mirror,
    the minimum ``-86/15`` at the corners ``(2, 1)`` and ``(-2, -1)``.
    """
    x1, x2 = X[:, 0], X[:, 1]
    c = (4.0 - 2.1 * x1**2 + x1**4 / 3.0) * x1**2 + x1 * x2 + (-4.0 + 4.0 * x2**2) * x2**2
    return -c


def styblinski_tang(X: np.ndarray) -> np.ndarray:
    """Styblinski-Tang, negated: ``-sum_i (x_i^4 - 16 x_i^2 + 5 x_i) / 2``.

    Per coordinate on ``[-4, 4]`` the summand has its minimum ``-39.1661657`` at
    ``x = -2.903534`` and its maximum 10 at ``x = 4``, so in 20-D the function spans
    ``[-200, 783.3233]``.
    """
    return -0.5 * np.sum(X**4 - 16.0 * X**2 + 5.0 * X, axis=1)


def michalewicz(X: np.ndarray) -> np.ndarray:
    """Michalewicz (``m = 10``, standard form, maximized): ``sum_i sin(x_i) sin(i x_i^2/pi)^20``.

    On ``[0, pi]^d`` every summand lies in ``[0, 1]`` and is zero at ``x_i = 0``; the maximum is
    the sum of the coordinates' maxima (9.66015 for ``d = 10``).
    """
    i = np.arange(1, X.shape[1] + 1)
    return np.sum(np.sin(X) * np.sin(i * X**2 / np.pi) ** 20, axis=1)


#: Per coordinate of Styblinski-Tang: the minimum of ``(x^4 - 16 x^2 + 5 x) / 2`` on [-4, 4].
_STYB_G_MIN = -39.166165703771426
#: Table 1's functions: the function, the box, its range over the box, the learner's features.
FUNCTIONS = {
    "camel": {
        "f": camelback,
        "lo": [-2.0, -1.0],
        "hi": [2.0, 1.0],
        "f_min": -86.0 / 15.0,
        "f_max": 1.0316284534898774,
        "m_bar": 8,
        "additive": False,
        "lengthscale": 0.5,
    },
    "styb": {
        "f": styblinski_tang,
        "lo": [-4.0] * 20,
        "hi": [4.0] * 20,
        "f_min": -20 * 10.0,
        "f_max": -20 * _STYB_G_MIN,
        "m_bar": 8,
        "additive": True,
        "lengthscale": 0.5,
    },
    "mw": {
        "f": michalewicz,
        "lo": [0.0] * 10,
        "hi": [math.pi] * 10,
        "f_min": 0.0,
        "f_max": 9.660151715641339,  # the coordinates' maxima summed; 9.66015 in the literature
        "m_bar": 8,
        "additive": True,
        "lengthscale": 0.5,
    },
}


def normalized(name: str, U: np.ndarray) -> np.ndarray:
    """Table 1's function ``name`` at the unit-cube points ``U``, normalized to ``[0, 1]``.

    Parameters
    ----------
    name : {"camel", "styb", "mw"}
        The function.
    U : ndarray of shape (n, d)
        Points of the unit cube, mapped to the box by ``x = lo + u (hi - lo)``.

    Returns
    -------
    ndarray of shape (n,)
        ``(f(x) - min f) / (max f - min f)``: 1 at the maximizer, 0 at the minimizer.
    """
    spec = FUNCTIONS[name]
    lo, hi = np.asarray(spec["lo"]), np.asarray(spec["hi"])
    X = lo + np.atleast_2d(U) * (hi - lo)
    return (spec["f"](X) - spec["f_min"]) / (spec["f_max"] - spec["f_min"])


#: Table 1's learners: ``paper`` (Theorem 1's width times the calibrated ``beta_scale``,
#: ``lam = 1``) and ``code`` (what the authors' notebook teaches: ``lam = 100`` and its own
#: width, :class:`CodeQFFGPUCB`, times 0.1 without privacy and 0.01 with JDP).
TABLE1_LEARNERS = ("paper", "code")


def run_table1(
    function: str,
    setting: str,
    trial: int,
    T: int,
    n_raw: int,
    every: int = 50,
    learner: str = "paper",
) -> dict:
    """One run of Table 1: ``T`` rounds of ``setting`` on ``function``.

    Parameters
    ----------
    function : {"camel", "styb", "mw"}
        The function.
    setting : str
        A key of ``TABLE1_SETTINGS``.
    trial : int
        The seed of the optimizer, its privacy noise and (with the function) the rewards.
    T : int
        Rounds, also the JDP tree's horizon.
    n_raw : int
        Uniform raw samples of the acquisition's search per round.
    every : int, default=50
        The cumulative regret is stored every ``every`` rounds and at ``T``.
    learner : {"paper", "code"}, default="paper"
        A key of :data:`TABLE1_LEARNERS`.

    Returns
    -------
    dict
        The settings, the feature count, ``t`` and ``cumulative_regret`` at those rounds,
        and the seconds the run took.
    """
    spec = FUNCTIONS[function]
    d = len(spec["lo"])
    rng = np.random.default_rng([trial, list(FUNCTIONS).index(function), 2021])
    privacy = TABLE1_SETTINGS[setting]
    opt = None  # uniform play
    if privacy != "random":
        kwargs = {}
        if privacy is not None:
            kwargs = {"privacy": "jdp", "alpha": privacy, "privacy_beta": 0.1, "noise_seed": trial}
        cls = QFFGPUCB
        if learner == "code":
            cls = CodeQFFGPUCB
            multiplier = CODE_MULTIPLIERS["non-private" if privacy is None else "jdp"]
            kwargs |= {"lam": ENV_LAM, "beta_scale": multiplier, "zeta": ENV_DELTA}
        opt = cls(
            d,
            m_bar=spec["m_bar"],
            additive=spec["additive"],
            lengthscale=spec["lengthscale"],
            horizon=T,
            reward_bound=1.0,
            rho=0.5,
            seed=trial,
            n_raw_samples=n_raw,
            n_restarts=0,
            **kwargs,
        )
    ts = sorted({*range(every, T + 1, every), T})
    values = []

    def evaluate(u: np.ndarray) -> float:
        values.append(float(normalized(function, u[None, :])[0]))
        return float(rng.random() < values[-1])

    t0 = time.perf_counter()
    harness.drive(UniformPlay(d, rng) if opt is None else opt, T, evaluate)
    curve, total = [], 0.0
    for t, fx in enumerate(values, start=1):
        total += 1.0 - fx
        if t == ts[len(curve)]:
            curve.append(total)
    return {
        "function": function,
        "setting": setting,
        "learner": learner,
        "trial": trial,
        "T": T,
        "n_raw_samples": n_raw,
        "m_bar": spec["m_bar"],
        "additive": spec["additive"],
        "lengthscale": spec["lengthscale"],
        "n_features": None if opt is None else opt.m,
        "beta_scale": None if opt is None else opt.beta_scale,
        "t": ts,
        "cumulative_regret": curve,
        "seconds": time.perf_counter() - t0,
    }


def table1(args: argparse.Namespace) -> dict:
    """Table 1: every (function, setting, trial) run not saved yet, then the summary and plot."""
    learner = args.learner
    name = "dubey_table1" if learner == "paper" else f"dubey_table1_{learner}"
    tasks = [
        (
            f"{function}-{setting}-{trial}-T{args.T}",
            functools.partial(
                run_table1, function, setting, trial, args.T, args.n_raw, learner=learner
            ),
        )
        for trial in args.trials
        for function in args.functions
        for setting in args.settings
    ]
    rows = harness.collect_runs(harness.RunStore(args.out, name), tasks, _describe)
    summary: dict = {}
    for function in args.functions:
        for setting in args.settings:
            sel = [r for r in rows if r["function"] == function and r["setting"] == setting]
            if not sel:
                continue
            R = np.array([r["cumulative_regret"] for r in sel])
            k = R.shape[0]
            se = harness.mean_se(R, single=0.0)[1]
            ts = sel[0]["t"]
            tail = args.T // 10  # regret per round over the last tenth of the rounds
            start = ts.index(args.T - tail) if args.T - tail in ts else None
            summary.setdefault(function, {})[setting] = {
                "n_trials": k,
                "final_mean": float(R[:, -1].mean()),
                "final_se": float(se[-1]),
                "last_tenth_per_round": (
                    None if start is None else float((R[:, -1] - R[:, start]).mean() / tail)
                ),
                "paper": PAPER_TABLE1[function].get(setting),
                "n_features": sel[0]["n_features"],
                "seconds_per_run": float(np.mean([r["seconds"] for r in sel])),
                "t": ts,
                "mean": R.mean(axis=0).tolist(),
                "se": se.tolist(),
            }
    out = {
        "benchmark": name,
        "learner": learner,
        "T": args.T,
        "n_raw_samples": args.n_raw,
        "lengthscales": {f: FUNCTIONS[f]["lengthscale"] for f in args.functions},
        "domains": {f: [FUNCTIONS[f]["lo"][0], FUNCTIONS[f]["hi"][0]] for f in args.functions},
        "ranges": {f: [FUNCTIONS[f]["f_min"], FUNCTIONS[f]["f_max"]] for f in args.functions},
        "summary": summary,
    }
    headline = {
        f: {
            s: [round(v["final_mean"], 1), round(v["final_se"], 1), v["paper"]]
            for s, v in cells.items()
        }
        for f, cells in summary.items()
    }
    report = harness.Report(
        out, plot=lambda path: _plot_table1(summary, args.T, path), headline=headline, compact=True
    )
    return harness.publish(args.out, name, report)


@harness.figure
def _plot_table1(plt: Any, summary: dict, T: int, path: Path) -> None:
    titles = {"camel": "Camelback (2-D)", "styb": "Styblinski-Tang-20", "mw": "Michalewicz-10"}
    fig, axes = plt.subplots(1, len(summary), figsize=(4 * len(summary), 3.6), squeeze=False)
    for ax, (function, cells) in zip(axes[0], summary.items(), strict=True):
        for i, (setting, v) in enumerate(cells.items()):
            label = f"{setting} (n={v['n_trials']})"
            line = harness.plot_band(ax, v["mean"], v["se"], v["t"], label=label, color=f"C{i}")
            if v["paper"] is not None and T == 10_000:
                ax.plot([T], [v["paper"]], "x", color=line.get_color(), ms=7)
        ax.set_title(f"{titles.get(function, function)}; x: paper's Table 1", fontsize=9)
        ax.set_xlabel("t")
        ax.set_ylabel("cumulative regret")
        ax.legend(fontsize=7)
    harness.save_figure(
        fig, path, title="Dubey (2021), Table 1: cumulative regret per privacy level"
    )


def calibrate(args: argparse.Namespace) -> dict:
    """``beta_scale`` on trials disjoint from the reported ones (1000 and up)."""
    res: dict = {}
    for setting in args.settings:
        for scale in args.beta_scales:
            finals = [
                run_trial(setting, trial, args.T, args.m_bar, scale)["cumulative_regret"][-1]
                for trial in args.trials
            ]
            res.setdefault(setting, {})[str(scale)] = float(np.mean(finals))
            print(setting, scale, round(float(np.mean(finals)), 1), file=sys.stderr, flush=True)
    best = min(args.beta_scales, key=lambda sc: sum(res[s][str(sc)] for s in args.settings))
    out = {
        "benchmark": "dubey_calibration",
        "T": args.T,
        "trials": list(args.trials),
        "mean_cumulative_regret": res,
        "best_beta_scale": best,
    }
    return harness.publish(
        args.out, "dubey_calibration", harness.Report(out, headline=out, compact=True)
    )


def timing(args: argparse.Namespace) -> dict:
    """Seconds per round (one ask among 25 arms and one tell) for ``m`` features.

    Random Fourier features with ``m / 2`` frequencies give exactly ``m`` features. Measured
    after ``args.history`` told rewards, mean of 20 rounds, for each privacy model, next to
    privtune's exact GP-UCB (whose round grows with the history instead).
    """
    from privtune.optimizers import GPUCB

    rng = np.random.default_rng(0)
    res: dict = {}
    for m in args.m:
        for privacy in (None, "jdp", "local-jdp"):
            opt = QFFGPUCB(
                2,
                features="rff",
                n_frequencies=m // 2,
                privacy=privacy,
                horizon=4096,
                seed=0,
                noise_seed=0,
            )
            opt.tell(rng.random((args.history, 2)), rng.random(args.history))
            t0 = time.perf_counter()
            for _ in range(20):
                x = opt.ask(candidates=rng.random((25, 2)))
                opt.tell(x, float(rng.random()))
            res.setdefault(str(m), {})[str(privacy)] = (time.perf_counter() - t0) / 20
        print(m, res[str(m)], file=sys.stderr, flush=True)
    gp = GPUCB(2, seed=0)
    gp.tell(rng.random((args.history, 2)), rng.random(args.history))
    t0 = time.perf_counter()
    for _ in range(20):
        x = gp.ask(candidates=rng.random((25, 2)))
        gp.tell(x, float(rng.random()))
    out = {
        "benchmark": "dubey_timing",
        "history": args.history,
        "seconds_per_round": res,
        "exact_gp_ucb_seconds_per_round": (time.perf_counter() - t0) / 20,
    }
    return harness.publish(
        args.out, "dubey_timing", harness.Report(out, headline=out, compact=True)
    )


# -- the environment of the authors' notebook (d = 5, fresh arms on the unit sphere) -------------

ENV_DIM = 5  #: ``d``
ENV_ARMS = 10  #: ``n``, arms per decision set
ENV_CENTRES = 4  #: ``|I|``, the kernel centres of ``f``
ENV_T = 5000  #: rounds
ENV_NOISE_SD = 1.0  #: the rewards' Gaussian noise, ``N(0, 1)``
ENV_M_BAR = 2  #: QFF nodes per dimension: ``2 m_bar^d = 64`` features
ENV_LAM = 100.0  #: ``lambda``
ENV_DELTA = 0.01  #: failure probability of ``beta_t`` (the notebook's ``delta``), also ``zeta``
ENV_PRIVACY_BETA = 0.1  #: ``beta`` of (alpha, beta)-JDP (Sec. 6.1 and the notebook)
#: ``nu`` of privtune's ``exp(-||x - y||^2 / (2 nu^2))`` for the environment's ``exp(-||x - y||^2)``
ENV_LENGTHSCALE = 1.0 / math.sqrt(2.0)
#: ``alpha`` of (alpha, 0.1)-JDP: Sec. 6.1 (Fig. 1: 0.1, 0.5, 1, 10) and the notebook's 100.
ENV_PRIVACY = {
    "non-private": None,
    "alpha=0.1": 0.1,
    "alpha=0.5": 0.5,
    "alpha=1": 1.0,
    "alpha=10": 10.0,
    "alpha=100": 100.0,
}
#: The notebook's multipliers of its ``beta_t``: without privacy and with JDP.
CODE_MULTIPLIERS = {"non-private": 0.1, "jdp": 0.01}
#: The confidence widths compared (the multiplier of ``||Phi(x)||_{V_t^{-1}}`` in eq. 8).
ENV_BETAS = {
    "theorem1": "Theorem 1's beta_t^{1/2} (QFFGPUCB.beta_t), beta_scale = 1",
    "theorem1-code": "Theorem 1's beta_t^{1/2} times the notebook's multiplier "
    "(0.1 non-private, 0.01 JDP)",
    "theorem1-default": "Theorem 1's beta_t^{1/2} times QFFGPUCB.default_beta_scale",
    "code": "the notebook's width rho sqrt(m ln(1 + t B^2 / lambda) - ln delta) + sqrt(lambda) B "
    "(Abbasi-Yadkori et al. 2011) times its multiplier (0.1 non-private, 0.01 JDP)",
}
#: Every setting: uniform play, then each (privacy, width) as ``"<privacy>_<width>"``.
ENV_SETTINGS = ["random"] + [f"{p}_{b}" for b in ENV_BETAS for p in ENV_PRIVACY]


def sphere_points(rng: np.random.Generator, k: int, d: int = ENV_DIM) -> np.ndarray:
    """``k`` points uniform in ``[0, 1]^d``, each divided by its L2 norm, as the notebook draws.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of the draws.
    k : int
        The number of points.
    d : int, default=5
        The dimension.

    Returns
    -------
    ndarray of shape (k, d)
        Points of the unit sphere in the non-negative orthant (so inside the unit cube).
    """
    X = rng.random((k, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


class SphereEnvironment:
    """The environment of the authors' notebook: ``f(x) = sum_{j<=4} a_j exp(-||x - z_j||^2)``.

    The weights ``a`` are uniform in ``[0, 1]^4`` divided by their sum (on the simplex); the
    centres ``z_j`` and the arms are :func:`sphere_points` (``B = 1``). Every round brings a
    fresh decision set of ``n`` arms; the reward of an arm is ``f(x) + N(0, noise_sd^2)``. On
    such arms ``||x - z||^2 = 2 - 2 x^T z`` lies in ``[0, 2]``, so ``exp(-2) <= f <= 1``.

    Parameters
    ----------
    rep : int
        The repetition. It seeds three streams: ``f``, the decision sets and the reward noise,
        so every setting of a repetition meets the same ``f``, the same decision sets and the
        same noise sequence.
    d : int, default=5
        The dimension.
    n : int, default=10
        Arms per decision set.
    noise_sd : float, default=1.0
        The standard deviation of the reward noise.
    """

    def __init__(
        self, rep: int, d: int = ENV_DIM, n: int = ENV_ARMS, noise_sd: float = ENV_NOISE_SD
    ) -> None:
        self.d, self.n, self.noise_sd = d, n, noise_sd
        rng = np.random.default_rng([rep, 2021, 0])
        a = rng.random(ENV_CENTRES)
        #: The weights ``a``, on the simplex.
        self.a = a / a.sum()
        #: The centres ``z_j``, shape ``(4, d)``, on the unit sphere.
        self.Z = sphere_points(rng, ENV_CENTRES, d)
        self._sets = np.random.default_rng([rep, 2021, 1])
        self._noise = np.random.default_rng([rep, 2021, 2])

    def f(self, X: np.ndarray) -> np.ndarray:
        """``f`` at the rows of ``X`` (shape ``(k, d)`` or ``(d,)``), shape ``(k,)``."""
        X = np.atleast_2d(X)
        d2 = np.sum((X[:, None, :] - self.Z[None, :, :]) ** 2, axis=2)
        return np.exp(-d2) @ self.a

    def decision_set(self) -> np.ndarray:
        """The next round's decision set ``D_t``, shape ``(n, d)``."""
        return sphere_points(self._sets, self.n, self.d)

    def noise(self) -> float:
        """The next reward's noise, a draw of ``N(0, noise_sd^2)``."""
        return float(self.noise_sd * self._noise.standard_normal())


class CodeQFFGPUCB(QFFGPUCB):
    """QFF GP-UCB with the notebook's confidence width in place of Theorem 1's.

    ``beta_t^{1/2} = rho sqrt(m ln(1 + t B^2 / lambda) - ln delta) + sqrt(lambda) B``, the width
    of Abbasi-Yadkori et al. (2011) for ``m``-dimensional linear bandits, with ``t`` the
    rewards told so far and ``delta = zeta``. It has no term for the privacy noise or the
    features' error; the notebook scales it by 0.1 (non-private) or 0.01 (JDP).
    """

    def beta_t(self) -> float:
        """The notebook's ``beta_t^{1/2}`` for the next round."""
        log_term = self.m * math.log1p(self.t * self.B**2 / self.lam) - math.log(self.zeta)
        return self.rho * math.sqrt(log_term) + math.sqrt(self.lam) * self.B


def environment_learner(setting: str, seed: int, T: int) -> QFFGPUCB:
    """The QFF GP-UCB learner of an environment ``setting`` (not ``"random"``).

    Parameters
    ----------
    setting : str
        ``"<privacy>_<width>"``: a key of ``ENV_PRIVACY`` and one of ``ENV_BETAS``.
    seed : int
        The seed of the learner's tie-breaks and of its privacy noise.
    T : int
        The horizon (the JDP tree's size and the ``T`` of Lemmas 2 and 3).

    Returns
    -------
    QFFGPUCB
        64 quadrature features of ``exp(-||x - y||^2)``, ``lambda = 100``, ``B = rho = 1``,
        ``zeta = 0.01``, sub-Gaussian rewards (no clipping), and (alpha, 0.1)-JDP if private.
    """
    privacy, width = setting.split("_")
    alpha = ENV_PRIVACY[privacy]
    multiplier = CODE_MULTIPLIERS["non-private" if alpha is None else "jdp"]
    beta_scale = {
        "theorem1": 1.0,
        "theorem1-code": multiplier,
        "theorem1-default": None,
        "code": multiplier,
    }[width]
    kwargs = {}
    if alpha is not None:
        kwargs = {
            "privacy": "jdp",
            "alpha": alpha,
            "privacy_beta": ENV_PRIVACY_BETA,
            "noise_seed": seed,
        }
    cls = CodeQFFGPUCB if width == "code" else QFFGPUCB
    with warnings.catch_warnings():
        # two nodes per dimension approximate the kernel coarsely, as in the notebook; the
        # measured error is reported in the summary (qff_coordinate_error, qff_error_on_arms)
        warnings.filterwarnings("ignore", "Quadrature features", RuntimeWarning)
        return cls(
            ENV_DIM,
            m_bar=ENV_M_BAR,
            lengthscale=ENV_LENGTHSCALE,
            lam=ENV_LAM,
            horizon=T,
            B=1.0,
            rho=ENV_NOISE_SD,
            zeta=ENV_DELTA,
            beta_scale=beta_scale,
            seed=seed,
            **kwargs,
        )


def _jdp_shift(opt: QFFGPUCB) -> float:
    """``2 Lambda`` of Lemma 3, added to the released ``Sigma`` block with JDP (0 without)."""
    if opt.privacy != "jdp":
        return 0.0
    return psd_shift(opt.noise_std, tree_depth(opt.horizon), opt.m, opt.horizon, opt.zeta)


def run_environment(setting: str, rep: int, T: int = ENV_T, every: int = 50) -> dict:
    """One repetition of the notebook's experiment: ``T`` rounds of ``setting``.

    Parameters
    ----------
    setting : str
        A key of ``ENV_SETTINGS``.
    rep : int
        The repetition: the seed of the environment (:class:`SphereEnvironment`), of the
        learner and of its privacy noise.
    T : int, default=5000
        Rounds, also the JDP tree's horizon.
    every : int, default=50
        The cumulative regret is kept every ``every`` rounds and at ``T``.

    Returns
    -------
    dict
        The setting, ``t`` and the cumulative regret ``sum_{s<=t} max_{D_s} f - f(x_s)`` at
        those rounds, the learner's ``beta_scale``, noise and confidence width at the end, and
        the seconds the run took.
    """
    env = SphereEnvironment(rep)
    opt = None if setting == "random" else environment_learner(setting, rep, T)
    player = UniformPlay(ENV_DIM, np.random.default_rng([rep, 2021, 3])) if opt is None else opt
    regret = []
    best = 0.0  # the best arm's value in the current round

    def arms() -> np.ndarray:
        nonlocal best
        D = env.decision_set()
        best = float(env.f(D).max())
        return D

    def evaluate(x: np.ndarray) -> float:
        fx = float(env.f(x)[0])
        regret.append(best - fx)
        return fx + env.noise()

    t0 = time.perf_counter()
    harness.drive(player, T, evaluate, candidates=arms)
    seconds = time.perf_counter() - t0
    ts = sorted({*range(every, T + 1, every), T})
    R = np.cumsum(regret)
    return {
        "setting": setting,
        "rep": rep,
        "T": T,
        "t": ts,
        "cumulative_regret": R[np.array(ts) - 1].tolist(),
        "n_features": None if opt is None else opt.m,
        "beta_scale": None if opt is None else opt.beta_scale,
        "noise_std": None if opt is None else opt.noise_std,
        "shift": None if opt is None else _jdp_shift(opt),
        "width_at_T": None if opt is None else opt.beta,
        "seconds": seconds,
    }


def _environment_config(T: int) -> dict:
    """The environment's and the learners' settings, and the features' error on the arms."""
    from privtune.features import QuadratureFourierFeatures

    q = QuadratureFourierFeatures(ENV_DIM, ENV_M_BAR, ENV_LENGTHSCALE)
    X = sphere_points(np.random.default_rng(0), 400)
    P = q(X)
    d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=2)
    return {
        "T": T,
        "d": ENV_DIM,
        "n": ENV_ARMS,
        "n_centres": ENV_CENTRES,
        "noise_sd": ENV_NOISE_SD,
        "kernel": "exp(-||x - y||^2)",
        "lengthscale": ENV_LENGTHSCALE,
        "m_bar": ENV_M_BAR,
        "m": q.n_features,
        "lambda": ENV_LAM,
        "B": 1.0,
        "rho": ENV_NOISE_SD,
        "delta": ENV_DELTA,
        "zeta": ENV_DELTA,
        "jdp_beta": ENV_PRIVACY_BETA,
        "jdp_alpha": ENV_PRIVACY,
        "beta_forms": ENV_BETAS,
        "code_multipliers": CODE_MULTIPLIERS,
        "default_beta_scale": QFFGPUCB.default_beta_scale,
        "qff_error_bound": q.error_bound(),
        "qff_coordinate_error": q.coordinate_error(),
        "qff_error_on_arms": float(np.abs(P @ P.T - np.exp(-d2)).max()),
    }


def environment(args: argparse.Namespace) -> dict:
    """The notebook's experiment: the runs of ``args`` not saved yet, the summary and the plot."""
    tasks = [
        (
            f"{setting}-{rep}-T{args.T}",
            functools.partial(run_environment, setting, rep, args.T, args.every),
        )
        for rep in range(args.reps)
        for setting in args.settings
    ]
    rows = harness.collect_runs(harness.RunStore(args.out, "dubey_environment"), tasks, _describe)
    ts = sorted({*range(args.every, args.T + 1, args.every), args.T})
    summary = {}
    for setting in args.settings:
        sel = [r for r in rows if r["setting"] == setting and r["t"] == ts]
        if not sel:
            continue
        R = np.array([r["cumulative_regret"] for r in sel])
        se = harness.mean_se(R, single=0.0)[1]
        tail = args.T // 10  # regret per round over the last tenth of the rounds
        start = ts.index(args.T - tail) if args.T - tail in ts else None
        summary[setting] = {
            "n_reps": len(sel),
            "final_mean": float(R[:, -1].mean()),
            "final_se": float(se[-1]),
            "last_tenth_per_round": (
                None if start is None else float((R[:, -1] - R[:, start]).mean() / tail)
            ),
            "beta_scale": sel[0]["beta_scale"],
            "noise_std": sel[0]["noise_std"],
            "shift": sel[0]["shift"],
            "width_at_T": (
                None
                if sel[0]["width_at_T"] is None
                else float(np.mean([r["width_at_T"] for r in sel]))
            ),
            "seconds_per_run": float(np.mean([r["seconds"] for r in sel])),
            "t": ts,
            "mean": R.mean(axis=0).tolist(),
            "se": se.tolist(),
        }
    out = {
        "benchmark": "dubey_environment",
        "config": {**_environment_config(args.T), "reps": args.reps, "every": args.every},
        "summary": summary,
    }
    report = harness.Report(
        out,
        plot=lambda path: _plot_environment(summary, path),
        headline={
            s: harness.format_mean_se(v["final_mean"], v["final_se"], ".1f")
            for s, v in summary.items()
        },
        compact=True,
    )
    return harness.publish(args.out, "dubey_environment", report)


def _plot_environment(summary: dict, path: Path) -> None:
    """One panel per confidence width: the privacy levels' mean curves, uniform play in each."""
    widths = [w for w in ENV_BETAS if any(s.endswith(f"_{w}") for s in summary)]
    fig, axes = harness.panel_grid(max(len(widths), 1), 4.4, 3.4, ncols=2)
    if fig is None:
        return
    colours = {p: f"C{i}" for i, p in enumerate(ENV_PRIVACY)}
    for ax, width in zip(axes, widths or ["random"], strict=True):
        if "random" in summary:
            v = summary["random"]
            harness.plot_band(ax, v["mean"], v["se"], v["t"], label="random", color="grey")
        for privacy, colour in colours.items():
            v = summary.get(f"{privacy}_{width}")
            if v is not None:
                label = f"{privacy} (n={v['n_reps']})"
                harness.plot_band(ax, v["mean"], v["se"], v["t"], label=label, color=colour)
        ax.set_title(f"width: {width}", fontsize=9)
        ax.set_xlabel("t")
        ax.set_ylabel("cumulative regret")
        ax.legend(fontsize=7)
    harness.save_figure(
        fig, path, title="In the authors' environment: cumulative regret per privacy level"
    )


def _synthetic_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--settings", nargs="+", default=list(SETTINGS))
    p.add_argument("--trials", nargs="+", type=int, default=list(range(20)))
    p.add_argument("--T", type=int, default=1024)
    p.add_argument("--m-bar", type=int, default=16)


def _calibrate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--settings", nargs="+", default=["non-private", "alpha=1"])
    p.add_argument("--beta-scales", nargs="+", type=float, default=[1.0, 0.1, 0.03, 0.01, 0.003])
    p.add_argument("--trials", nargs="+", type=int, default=list(range(1000, 1005)))
    p.add_argument("--T", type=int, default=1024)
    p.add_argument("--m-bar", type=int, default=16)


def _table1_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--functions", nargs="+", default=list(FUNCTIONS))
    p.add_argument("--settings", nargs="+", default=list(TABLE1_SETTINGS))
    p.add_argument("--trials", nargs="+", type=int, default=list(range(10)))
    p.add_argument("--T", type=int, default=10_000)
    p.add_argument("--n-raw", type=int, default=128)
    p.add_argument(
        "--learner",
        choices=TABLE1_LEARNERS,
        default="paper",
        help="code: lam = 100 and the notebook's width (written to dubey_table1_code.*)",
    )


def _timing_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--m", nargs="+", type=int, default=[64, 256, 1024])
    p.add_argument("--history", type=int, default=1000)


def _environment_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--settings", nargs="+", default=ENV_SETTINGS, choices=ENV_SETTINGS)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--T", type=int, default=ENV_T)
    p.add_argument("--every", type=int, default=50)
    # --out and --quick also after the part's name; SUPPRESS keeps the main parser's values
    p.add_argument("--out", type=Path, default=argparse.SUPPRESS, help="results folder")
    p.add_argument("--quick", action="store_true", default=argparse.SUPPRESS, help="tiny run")


def _quick(args: argparse.Namespace) -> dict:
    """A tiny run of the environment part if it is named, else of timing, Table 1 and
    Sec. 6.1."""
    if args.part == "environment":
        quick = argparse.Namespace(
            settings=["random", "non-private_code", "alpha=1_theorem1"],
            reps=1,
            T=100,
            every=10,
            out=args.out,
        )
        return environment(quick)
    quick = argparse.Namespace(
        settings=["non-private", "alpha=1"], trials=[0, 1], T=16, m_bar=12, out=args.out
    )
    timing(argparse.Namespace(m=[8], history=10, out=args.out))
    for learner in TABLE1_LEARNERS:
        table1(
            argparse.Namespace(
                functions=list(FUNCTIONS),
                settings=["non-private", "alpha=1"],
                trials=[0],
                T=20,
                n_raw=32,
                learner=learner,
                out=args.out,
            )
        )
    return synthetic(quick)


PARTS = (
    harness.Part("synthetic", _synthetic_arguments, synthetic),
    harness.Part("calibrate", _calibrate_arguments, calibrate),
    harness.Part("timing", _timing_arguments, timing),
    harness.Part("table1", _table1_arguments, table1),
    harness.Part("environment", _environment_arguments, environment),
)


def main(argv: list[str] | None = None) -> dict:
    """Run a part (or, with ``--quick``, a tiny run of timing, Table 1 and Sec. 6.1, or of the
    environment part if it is named)."""
    return harness.main_parts(__doc__, PARTS, _quick, argv)


if __name__ == "__main__":
    main()
