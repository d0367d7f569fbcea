"""DP-FTS-DE (Dai, Low & Jaillet 2021): the synthetic experiment (App. B.1), federated SVM
tuning on the digits, and the landmine experiment (Sec. 5.2, Fig. 3a).

Synthetic (Sec. 5.1, App. B.1.1): ``N = 200`` agents on a grid of 1000 points of ``[0, 1]``. One
function is drawn from a GP with the SE kernel (lengthscale 0.03) and normalized to ``[0, 1]``;
agent ``n``'s objective is that function plus ``d_n = +-0.02`` (equal odds) everywhere, observed
with Gaussian noise of variance 0.01. ``M = 50`` shared random Fourier features (25 cos/sin
pairs) of the same kernel, ``lambda = 0.01`` (the noise variance), ``1 - p_t = 1/sqrt(t)``,
``N_init = 10``, the temperature schedule of App. B for the synthetic runs
(``(hold, decay) = (5, 5)``), ``T = 40`` rounds. The function and the shifts are drawn once
(seed 0); each of the 5 runs re-draws the agents' initializations and the server's randomness.
Reported: simple regret ``max f^n - max_{s <= t} f^n(x_s)``, averaged over agents and runs (mean
and standard error over runs), and the fraction of selected vectors that were clipped.

Settings: Fig. 2a, TS (no server), FTS (``P = 1``), FTS-DE (``P = 2, 3``), without privacy;
DP-FTS-DE with ``P = 2`` (Fig. 4's choice) for Fig. 2b (``S`` at ``q = 0.25``, ``z = 1``),
Fig. 2c (``q`` at ``z = 1``, ``S = 11``) and Fig. 2d (``z`` at ``q = 0.25``, ``S = 11``), and
Fig. 4's DP-FTS (``P = 1``, ``S = 8``). The paper does not list its ``S`` values for Fig. 2b, nor
``P`` and ``q`` there; those are ours. Each DP setting's privacy loss after ``T = 40`` rounds is
computed at ``delta = 1/N^1.1`` by dp-accounting's RDP and PLD accountants.

SVM tuning on the digits (a task in the spirit of Sec. 5.2's landmine experiment, kept beside
it): 20 parties share scikit-learn's handwritten digits (1797 images), each holding a
disjoint random shard of about 90 images and detecting its own digit (party ``n`` detects digit
``n mod 10``: about 10% positives, imbalanced as the landmine fields are). Each tunes an RBF
SVM (standardized inputs) over the paper's ranges, ``gamma`` in ``[0.01, 10]`` and ``C`` in
``[1e-4, 10]`` (log scale), trains on half its shard and reports the validation AUC of the other
half. ``P = 4``, ``S = 22``, ``M = 100``, ``1 - p_t = 1/t``, ``N_init = 10``, 60 rounds,
schedule ``(10, 30)``: the paper's real-world settings; lengthscale 0.2 on the unit square.
Settings: each party alone with Optuna's TPE (the same split and objective, 70 trials), TS,
FTS-DE (no privacy), and DP-FTS-DE on the paper's grid (``z = 1, 1.6, 2, 3, 4``
at ``q = 0.35``; ``q = 0.1, 0.15, 0.2, 0.25`` at ``z = 1``), plus FTS-DE and DP-FTS-DE
(``q = 0.35, z = 1, S = 9``) with ``M = 20`` features, 5 seeds each. Reported: the mean over
parties of the best validation AUC after 60 rounds (and after 20), against the privacy loss at
``delta = 1/20^1.1``.

Landmine (Sec. 5.2, Fig. 3a, App. B.2.1, with the settings of the authors' code): ``N = 29``
agents, one per landmine field of Xue et al. (2007) (``benchmarks/data/landmine.mat``). Each
splits its field in halves, stratified, ``random_state=0``; its objective is the validation AUC
of ``SVC(kernel="rbf", probability=True)`` (from ``predict_proba``), with ``C`` in
``[1e-4, 10]`` and ``gamma`` in ``[0.01, 10]`` linear (not log) maps of the unit square (``C``
first). ``N_init = 10`` initial points, then 60 rounds (70 evaluations per agent). ``M = 100``
shared random Fourier features, ``1 - p_t = 1/t`` (the first round after the initialization
uses the server's vectors), ``P = 4`` (the square cut in 2 x 2, agent ``n`` in sub-region
``n mod 4``), ``S = 22``, and the weights' schedule ``(hold, decay) = (10, 30)``: ``a_t = 16``
for 10 rounds, then linearly down to ``b = 1`` over 30. Settings: TS (each agent alone, its
initial points in the whole square), FTS (``P = 1``), FTS-DE (``P = 4``), without privacy,
random search (each agent alone, 70 uniform points; one run serves both feature choices), and
DP-FTS-DE on the paper's grid (``z = 1, 1.6, 2, 3, 4`` at ``q = 0.35``; ``q = 0.1, 0.15, 0.2,
0.25`` at ``z = 1``). Two choices of the shared features (``--features``): ``ours``, the
library's defaults (lengthscale 0.2 on the unit square, ``lambda = 0.01``, as on the digits),
and ``authors``, the authors' code (lengthscale 0.01, ``lambda`` = their observation noise
``1e-6``). Either way each agent's own model (line 6 of Alg. 2) is the library's, the
posterior on the shared features, where the authors' code fits a separate GP. The features
are drawn once (seed 0); each run re-draws the agents' initial points and samples and the
server's randomness. Reported like Fig. 3a: the best validation AUC after 70 evaluations,
averaged over the agents, mean and standard error over runs, against the privacy loss at
``delta = 1/N^1.1`` (our RDP and PLD accountants) beside the losses the authors list.

Usage::

    python -m benchmarks.dai synthetic      # 70 runs, resumable; dai_synthetic.json/.png
    python -m benchmarks.dai svm            # 70 runs, resumable; dai_svm.json/.png
    python -m benchmarks.dai landmine       # 125 runs, resumable; dai_landmine.json/.png
    python -m benchmarks.dai landmine --features authors --runs 5 6 7 8 9
    python -m benchmarks.dai --quick        # tiny synthetic and svm (tests)
    python -m benchmarks.dai --quick landmine   # tiny landmine (tests)
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from benchmarks import harness
from benchmarks.datasets import DATA_DIR
from privtune.features import RandomFourierFeatures
from privtune.federated import DPFTSServer, FederatedRunner, FTSAgent, SubRegions
from privtune.privacy import default_delta, subsampled_gaussian_epsilon

#: name -> (P, server: None | "fts" | dict(q, z, S))
SYNTHETIC_SETTINGS = {
    "TS": (1, None),
    "FTS": (1, {}),
    "FTS-DE P=2": (2, {}),
    "FTS-DE P=3": (3, {}),
    "DP-FTS P=1 S=8": (1, {"q": 0.25, "z": 1.0, "S": 8.0}),
    "S=2": (2, {"q": 0.25, "z": 1.0, "S": 2.0}),
    "S=5": (2, {"q": 0.25, "z": 1.0, "S": 5.0}),
    "S=11": (2, {"q": 0.25, "z": 1.0, "S": 11.0}),
    "S=22": (2, {"q": 0.25, "z": 1.0, "S": 22.0}),
    "S=44": (2, {"q": 0.25, "z": 1.0, "S": 44.0}),
    "q=0.15": (2, {"q": 0.15, "z": 1.0, "S": 11.0}),
    "q=0.5": (2, {"q": 0.5, "z": 1.0, "S": 11.0}),
    "z=1.2": (2, {"q": 0.25, "z": 1.2, "S": 11.0}),
    "z=1.5": (2, {"q": 0.25, "z": 1.5, "S": 11.0}),
}
#: the paper's privacy losses after T = 40 (Fig. 2 caption), keyed by our settings
PAPER_EPSILON = {"q=0.15": 5.93, "S=11": 9.91, "q=0.5": 20.12, "z=1.2": 7.39, "z=1.5": 5.22}
PANELS = {
    "Fig. 2a: DE (no privacy)": ["TS", "FTS", "FTS-DE P=2", "FTS-DE P=3"],
    "Fig. 2b: S (P=2, q=0.25, z=1)": ["TS", "S=2", "S=5", "S=11", "S=22", "S=44"],
    "Fig. 2c: q (P=2, z=1, S=11)": ["TS", "FTS-DE P=2", "q=0.15", "S=11", "q=0.5"],
    "Fig. 2d: z (P=2, q=0.25, S=11)": ["TS", "FTS-DE P=2", "S=11", "z=1.2", "z=1.5"],
    "Fig. 4: DP-FTS vs DP-FTS-DE": ["TS", "DP-FTS P=1 S=8", "S=11"],
}
LABELS = {"S=11": "S=11, q=0.25, z=1"}


def gp_sample(n_grid: int = 1000, lengthscale: float = 0.03, seed: int = 0) -> np.ndarray:
    """A GP sample (SE kernel) on a grid of ``[0, 1]``, normalized to ``[0, 1]``."""
    grid = np.linspace(0.0, 1.0, n_grid)
    K = np.exp(-0.5 * (grid[:, None] - grid[None, :]) ** 2 / lengthscale**2)
    L = np.linalg.cholesky(K + 1e-8 * np.eye(n_grid))
    f = L @ np.random.default_rng(seed).standard_normal(n_grid)
    return (f - f.min()) / (f.max() - f.min())


class GridObjective:
    """Agent ``n``'s noisy objective on the grid: ``f(x) + d_n + N(0, noise_std^2)``."""

    def __init__(self, values: np.ndarray, noise_std: float, seed: int) -> None:
        self.values = values
        self.noise_std = noise_std
        self.rng = np.random.default_rng(seed)

    def __call__(self, x: np.ndarray) -> float:
        i = round(float(x[0]) * (self.values.size - 1))
        return float(self.values[i] + self.noise_std * self.rng.standard_normal())


def run_synthetic(
    setting: str, run: int, N: int, T: int, n_grid: int = 1000, n_init: int = 10
) -> dict:
    """One run of one setting; simple regret per round, averaged over agents."""
    t0 = time.perf_counter()
    P, server_kw = SYNTHETIC_SETTINGS[setting]
    f = gp_sample(n_grid)
    shifts = np.random.default_rng(1).choice([-0.02, 0.02], size=N)
    grid = np.linspace(0.0, 1.0, n_grid)[:, None]
    features = RandomFourierFeatures(1, 25, 0.03, seed=2)  # M = 50, shared
    regions = SubRegions(1, P)
    seeds = np.random.SeedSequence([run, 7]).generate_state(2 * N + 1)
    agents = [
        FTSAgent(
            features,
            GridObjective(f + shifts[n], math.sqrt(0.01), int(seeds[N + n])),
            regions,
            region=n % P,
            n_init=n_init,
            lam=0.01,
            server_prob="1/sqrt(t)",
            candidates=grid,
            seed=int(seeds[n]),
        )
        for n in range(N)
    ]
    server = None
    if server_kw is not None:
        server = DPFTSServer(
            np.arange(N) % P,
            features.n_features,
            n_regions=P,
            weight_schedule=(5, 5),
            seed=int(seeds[-1]),
            **server_kw,
        )
    runner = FederatedRunner(agents, server)
    records = runner.run(T)
    regret = np.zeros(n_init + T)
    final = []
    for agent in runner.agents:
        idx = np.rint(agent.X[:, 0] * (n_grid - 1)).astype(int)
        curve = f.max() - np.maximum.accumulate(f[idx])  # the shift cancels
        regret += curve / N
        final.append(float(curve[-1]))
    selected = sum(r.server_stats.n_selected for r in records if r.server_stats)
    clipped = sum(r.server_stats.n_clipped for r in records if r.server_stats)
    return {
        "setting": setting,
        "run": run,
        "N": N,
        "T": T,
        # round 0 is the initialization: report its last point, then one value per round
        "simple_regret": regret[n_init - 1 :].tolist(),
        "final_regret_per_agent": final,
        "clipped_fraction": clipped / selected if selected else 0.0,
        "used_server_fraction": float(
            np.mean([r.n_used_server / N for r in records[1:]]) if T else 0.0
        ),
        "n_releases": 0 if server is None else server.n_releases,
        "seconds": time.perf_counter() - t0,
    }


def _load_runs(
    out: Path, benchmark: str, names: list[str], runs: list[int], tag: str, compute: Callable
) -> list[dict]:
    """The runs ``compute(name, run)`` of ``benchmark`` saved under ``out``, computing the
    missing ones here (:func:`benchmarks.harness.collect_runs`)."""
    tasks = [
        (f"{name.replace(' ', '_')}-{run}-{tag}", functools.partial(compute, name, run))
        for run in runs
        for name in names
    ]
    return harness.collect_runs(harness.RunStore(out, benchmark), tasks)


def _epsilons(q: float, z: float, steps: int, delta: float) -> dict:
    return {
        "rdp": subsampled_gaussian_epsilon(q, z, steps, delta, "rdp"),
        "pld": subsampled_gaussian_epsilon(q, z, steps, delta, "pld"),
    }


def synthetic(args: argparse.Namespace) -> dict:
    """App. B.1: the runs of ``args`` not saved yet, then the summary and the plot."""
    tag = f"N{args.N}-T{args.T}"
    compute = functools.partial(run_synthetic, N=args.N, T=args.T)
    rows = _load_runs(args.out, "dai_synthetic", args.settings, args.runs, tag, compute)
    delta = default_delta(args.N)
    summary = {}
    for name in args.settings:
        mine = [r for r in rows if r["setting"] == name]
        if not mine:
            continue
        mean, se = harness.mean_se([r["simple_regret"] for r in mine], single=0.0)
        entry = {
            "n_runs": len(mine),
            "mean": mean.tolist(),
            "se": se.tolist(),
            "final_mean": float(mean[-1]),
            "final_se": float(se[-1]),
            "final_per_run": [r["simple_regret"][-1] for r in mine],
            "final_median_over_runs": float(np.median([r["simple_regret"][-1] for r in mine])),
            # agents that end more than 0.01 below the best (on a lower peak), per run
            "stuck_fraction_per_run": [
                float(np.mean(np.array(r["final_regret_per_agent"]) > 0.01)) for r in mine
            ],
            "clipped_fraction": float(np.mean([r["clipped_fraction"] for r in mine])),
            "used_server_fraction": float(np.mean([r["used_server_fraction"] for r in mine])),
            "seconds_per_run": float(np.mean([r["seconds"] for r in mine])),
        }
        server_kw = SYNTHETIC_SETTINGS[name][1]
        if server_kw and "z" in server_kw:
            entry["epsilon"] = _epsilons(server_kw["q"], server_kw["z"], args.T, delta)
            entry["paper_epsilon"] = PAPER_EPSILON.get(name)
        summary[name] = entry
    out = {"benchmark": "dai_synthetic", "N": args.N, "T": args.T, "delta": delta}
    out["summary"] = summary
    report = harness.Report(
        out,
        plot=lambda path: _plot_synthetic(summary, path),
        headline={k: round(v["final_mean"], 4) for k, v in summary.items()},
        compact=True,
    )
    return harness.publish(args.out, "dai_synthetic", report)


@harness.figure
def _plot_synthetic(plt: Any, summary: dict, path: Path) -> None:
    fig, axes = plt.subplots(1, len(PANELS), figsize=(4 * len(PANELS), 3.4))
    for ax, (title, keys) in zip(axes, PANELS.items(), strict=True):
        for key in keys:
            if key not in summary:
                continue
            mean, se = summary[key]["mean"], summary[key]["se"]
            label = LABELS.get(key, key)
            if "epsilon" in summary[key]:
                label += f" (eps {summary[key]['epsilon']['pld']:.2f})"
            harness.plot_band(ax, mean, se, np.arange(len(mean)), label=label)
        ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("round t (0: after initialization)")
        ax.set_ylabel("simple regret")
        ax.legend(fontsize=6)
    harness.save_figure(
        fig, path, title="DP-FTS-DE on the synthetic functions: simple regret per round"
    )


# -- federated SVM tuning ----------------------------------------------------------------------
#: name -> FederatedSearch keyword arguments ("TPE": each party alone with Optuna's TPE)
SVM_SETTINGS = {
    "TPE": None,
    "TS": {"server_prob": "never"},
    "FTS-DE": {"z": None},
    **{f"z={z:g}": {"q": 0.35, "z": z} for z in (1.0, 1.6, 2.0, 3.0, 4.0)},
    **{f"q={q:g}": {"q": q, "z": 1.0} for q in (0.1, 0.15, 0.2, 0.25)},
    # fewer features, S re-chosen for them (the 99th percentile of the vectors' norms is 5.2,
    # so S / sqrt(P) = 4.5 clips a few percent): less noise per coordinate
    "FTS-DE M=20": {"z": None, "n_features": 20},
    "z=1 M=20 S=9": {"q": 0.35, "z": 1.0, "n_features": 20, "S": 9.0},
}


def svm_parties(n_parties: int = 20, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Disjoint random shards of the digits; party ``n`` detects digit ``n mod 10``."""
    from sklearn.datasets import load_digits

    X, digit = load_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(digit))
    return [
        (X[order[n::n_parties]], (digit[order[n::n_parties]] == n % 10).astype(int))
        for n in range(n_parties)
    ]


def _tpe_alone(search, pairs, run: int, n_trials: int) -> np.ndarray:
    """Each party tunes alone with Optuna's TPE on the same split and objective as in the
    federation (the agents' objectives); returns the scores, shape (N, n_trials)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    runner = search._build(pairs)
    space = search._space
    lo, hi = search._value_range_
    scores = np.empty((len(pairs), n_trials))
    distributions = space.to_optuna()
    for n, agent in enumerate(runner.agents):
        sampler = optuna.samplers.TPESampler(seed=1000 * run + n)
        study = optuna.create_study(direction="maximize", sampler=sampler)

        def objective(trial, objective=agent.objective):
            params = {  # the space's parameters are log-uniform floats
                k: trial.suggest_float(k, d.low, d.high, log=d.log)
                for k, d in distributions.items()
            }
            return lo + (hi - lo) * objective(space.to_unit(params))

        study.optimize(objective, n_trials=n_trials)
        scores[n] = [t.value for t in study.trials]
    return scores


def run_svm(setting: str, run: int, n_parties: int, n_iter: int) -> dict:
    """One run of the federated SVM tuning: each party's best validation AUC per evaluation.

    Parameters
    ----------
    setting : str
        A key of ``SVM_SETTINGS``.
    run : int
        The seed of the search and of its noise (and of TPE's samplers).
    n_parties : int
        Parties (shards of the digits).
    n_iter : int
        Rounds after each party's 10 initial evaluations.

    Returns
    -------
    dict
        ``best_auc`` (mean over parties, per evaluation), the privacy loss and clipping counts.
    """
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from privtune.federated import FederatedSearch

    t0 = time.perf_counter()
    search = FederatedSearch(
        make_pipeline(StandardScaler(), SVC()),
        {"svc__gamma": (0.01, 10.0, "log-uniform"), "svc__C": (1e-4, 10.0, "log-uniform")},
        n_iter=n_iter,
        scoring="roc_auc",
        P=min(4, n_parties),
        delta=default_delta(n_parties),  # the paper's 1 / N^1.1 (weak: see docs/federated.md)
        random_state=run,
        noise_random_state=run,
        **(SVM_SETTINGS[setting] or {"server_prob": "never"}),
    )
    if SVM_SETTINGS[setting] is None:
        scores = _tpe_alone(search, svm_parties(n_parties), run, search.n_init + n_iter)
        return {
            "setting": setting,
            "run": run,
            "best_auc": np.maximum.accumulate(scores, axis=1).mean(axis=0).tolist(),
            "epsilon": 0.0,
            "delta": 0.0,
            "clipped": 0,
            "selected": 0,
            "seconds": time.perf_counter() - t0,
        }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search.fit(svm_parties(n_parties))
    best = np.fmax.accumulate(search.scores_, axis=1)  # each party's best so far
    return {
        "setting": setting,
        "run": run,
        "best_auc": best.mean(axis=0).tolist(),  # mean over parties, per evaluation
        "epsilon": search.epsilon_,
        "delta": search.delta_,
        "clipped": sum(e["n_clipped"] or 0 for e in search.trace_),
        "selected": sum(e["n_selected"] or 0 for e in search.trace_),
        "seconds": time.perf_counter() - t0,
    }


def svm(args: argparse.Namespace) -> dict:
    """Federated SVM tuning: the runs of ``args`` not saved yet, then the summary and plot."""
    tag = f"N{args.parties}-T{args.n_iter}"
    compute = functools.partial(run_svm, n_parties=args.parties, n_iter=args.n_iter)
    rows = _load_runs(args.out, "dai_svm", args.settings, args.runs, tag, compute)
    n_init = 10
    summary = {}
    for name in args.settings:
        mine = [r for r in rows if r["setting"] == name]
        if not mine:
            continue
        mean, se = harness.mean_se([r["best_auc"] for r in mine], single=0.0)
        at = {"20": n_init + min(20, args.n_iter) - 1, str(args.n_iter): mean.size - 1}
        summary[name] = {
            "n_runs": len(mine),
            "mean": mean.tolist(),
            "se": se.tolist(),
            "best_auc": {k: float(mean[i]) for k, i in at.items()},
            "best_auc_se": {k: float(se[i]) for k, i in at.items()},
            "epsilon": mine[0]["epsilon"],
            "clipped_fraction": float(
                sum(r["clipped"] for r in mine) / max(1, sum(r["selected"] for r in mine))
            ),
            "seconds_per_run": float(np.mean([r["seconds"] for r in mine])),
        }
    out = {
        "benchmark": "dai_svm",
        "parties": args.parties,
        "n_iter": args.n_iter,
        "delta": default_delta(args.parties),
        "summary": summary,
    }
    report = harness.Report(
        out,
        plot=lambda path: _plot_svm(summary, args.n_iter, path),
        headline={k: round(v["best_auc"][str(args.n_iter)], 4) for k, v in summary.items()},
        compact=True,
    )
    return harness.publish(args.out, "dai_svm", report)


@harness.figure
def _plot_svm(plt: Any, summary: dict, n_iter: int, path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    key = str(n_iter)
    points = sorted(
        (entry["epsilon"], name, entry)
        for name, entry in summary.items()
        if math.isfinite(entry["epsilon"]) and entry["epsilon"] > 0
    )
    for i, (eps, name, entry) in enumerate(points):
        color = "tab:green" if name.startswith("z=") else "tab:red"
        y = 1 - entry["best_auc"][key]
        left.errorbar(eps, y, yerr=entry["best_auc_se"][key], fmt="o", color=color)
        # labels alternate above and below their points, so that neighbours do not overlap
        left.annotate(
            name, (eps, y), xytext=(4, 8 if i % 2 else -12), textcoords="offset points",
            fontsize=7, color=color, bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
        )  # fmt: skip
    if points:
        left.set_xlim(0, 1.25 * points[-1][0])  # room for the last point's label
    for name, style in (("TPE", "tab:gray"), ("TS", "tab:blue"), ("FTS-DE", "black")):
        if name in summary:
            left.axhline(1 - summary[name]["best_auc"][key], color=style, ls="--", label=name)
    left.set_xlabel("privacy loss epsilon (delta = 1/N^1.1)")
    left.set_ylabel(f"1 - best validation AUC after {n_iter} rounds")
    left.set_title("privacy vs utility (green: z at q=0.35, red: q at z=1)", fontsize=9)
    left.legend(fontsize=7)
    for name in ("TPE", "TS", "FTS-DE", "z=1", "z=4", "q=0.1"):
        if name in summary:
            mean = np.array(summary[name]["mean"])
            right.plot(np.arange(1, mean.size + 1), 1 - mean, label=name)
    right.set_xlabel("evaluations per party (10 initial)")
    right.set_ylabel("1 - best validation AUC")
    right.set_yscale("log")
    right.legend(fontsize=7)
    harness.save_figure(
        fig, path, title="Federated SVM tuning: privacy against utility, and progress per party"
    )


# -- landmine detection (Sec. 5.2, Fig. 3a) ----------------------------------------------------
LANDMINE_DATA = DATA_DIR / "landmine.mat"
#: name -> (P, server): None is no server (TS), {} a server without privacy, else q, z and S
LANDMINE_SETTINGS: dict[str, tuple[int, dict | None]] = {
    "TS": (1, None),
    "FTS": (1, {}),
    "FTS-DE": (4, {}),
    **{f"z={z:g}": (4, {"q": 0.35, "z": z, "S": 22.0}) for z in (1.0, 1.6, 2.0, 3.0, 4.0)},
    **{f"q={q:g}": (4, {"q": q, "z": 1.0, "S": 22.0}) for q in (0.1, 0.15, 0.2, 0.25)},
}
#: the privacy losses the authors list for Fig. 3a (their delta is not stated)
LANDMINE_PAPER_EPSILON = {
    "z=1": 15.17,
    "z=1.6": 7.12,
    "z=2": 5.14,
    "z=3": 3.05,
    "z=4": 2.16,
    "q=0.1": 3.75,
    "q=0.15": 5.98,
    "q=0.2": 7.69,
    "q=0.25": 9.82,
}
#: the shared features: name -> (lengthscale on the unit square, lambda)
LANDMINE_FEATURES = {"ours": (0.2, 0.01), "authors": (0.01, 1e-6)}
#: M, the shared features' dimension (50 cos/sin pairs)
LANDMINE_M = 100
#: the ranges of C and gamma, linear maps of the unit square's two coordinates
LANDMINE_RANGES = {"C": (1e-4, 10.0), "gamma": (1e-2, 10.0)}


def landmine_fields(path: Path = LANDMINE_DATA) -> list[tuple[np.ndarray, np.ndarray]]:
    """The 29 landmine fields of Xue et al. (2007).

    Parameters
    ----------
    path : Path, default=benchmarks/data/landmine.mat
        The MATLAB file (cells ``feature`` and ``label``).

    Returns
    -------
    list of (ndarray, ndarray)
        Per field, the features ``X_n`` of shape ``(n_n, 9)`` (float64, as stored) and the
        labels ``y_n`` of shape ``(n_n,)`` (int64, 1 for a landmine).
    """
    from scipy.io import loadmat

    data = loadmat(path)
    return [
        (np.asarray(X, dtype=float), np.asarray(y, dtype=np.int64).ravel())
        for X, y in zip(data["feature"].ravel(), data["label"].ravel(), strict=True)
    ]


def landmine_split(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """A field's halves: stratified by the label, ``random_state=0`` (the authors' split).

    Parameters
    ----------
    X : ndarray of shape (n, 9)
        The field's features.
    y : ndarray of shape (n,)
        Its labels.

    Returns
    -------
    tuple of ndarray
        ``(X_train, X_val, y_train, y_val)``, as ``train_test_split`` returns them.
    """
    from sklearn.model_selection import train_test_split

    return tuple(train_test_split(X, y, test_size=0.5, stratify=y, random_state=0))


class LandmineObjective:
    """Agent ``n``'s objective: the validation AUC of an RBF SVM at a point of the unit square.

    ``u = (u_1, u_2)`` maps linearly to ``C = 1e-4 + u_1 (10 - 1e-4)`` and ``gamma = 0.01 + u_2
    (10 - 0.01)``; the SVM (``probability=True``, Platt scaling with ``random_state=0``) is fit
    on the training half and scored by the AUC of its ``predict_proba`` on the validation half.

    Parameters
    ----------
    X_train, X_val : ndarray of shape (n, 9)
        The field's halves.
    y_train, y_val : ndarray of shape (n,)
        Their labels.
    """

    def __init__(
        self, X_train: np.ndarray, X_val: np.ndarray, y_train: np.ndarray, y_val: np.ndarray
    ) -> None:
        self.X_train, self.X_val, self.y_train, self.y_val = X_train, X_val, y_train, y_val

    @staticmethod
    def params(u: np.ndarray) -> dict[str, float]:
        """``C`` and ``gamma`` of the point ``u`` of the unit square (clipped into it)."""
        u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
        return {
            name: lo + float(ui) * (hi - lo)
            for ui, (name, (lo, hi)) in zip(u, LANDMINE_RANGES.items(), strict=True)
        }

    def __call__(self, u: np.ndarray) -> float:
        from sklearn.metrics import roc_auc_score
        from sklearn.svm import SVC

        model = SVC(kernel="rbf", probability=True, random_state=0, **self.params(u))
        with warnings.catch_warnings():
            # scikit-learn 1.9 deprecates probability=True (removal in 1.11); it is the
            # authors' model, kept while it exists
            warnings.filterwarnings("ignore", "The `probability` parameter", FutureWarning)
            model.fit(self.X_train, self.y_train)
        return float(roc_auc_score(self.y_val, model.predict_proba(self.X_val)[:, 1]))


def run_landmine(
    setting: str, features: str, run: int, n_fields: int = 29, n_iter: int = 60, n_init: int = 10
) -> dict:
    """One run of one setting of the landmine experiment.

    Parameters
    ----------
    setting : str
        A key of ``LANDMINE_SETTINGS``.
    features : str
        A key of ``LANDMINE_FEATURES``: the shared features' lengthscale and ``lambda``.
    run : int
        The seed of the agents' initial points and samples and of the server's randomness.
    n_fields : int, default=29
        ``N``: the agents are the first ``n_fields`` fields.
    n_iter : int, default=60
        Rounds after the initialization.
    n_init : int, default=10
        ``N_init``, each agent's initial points.

    Returns
    -------
    dict
        ``best_auc``: the best validation AUC so far per evaluation, averaged over the agents
        (length ``n_init + n_iter``); ``final_per_agent``: each agent's best after the last
        evaluation; ``epsilon`` (``None`` without privacy) at ``delta = 1/N^1.1``; the clipping
        and server counts and the run's seconds.
    """
    t0 = time.perf_counter()
    P, server_kw = LANDMINE_SETTINGS[setting]
    lengthscale, lam = LANDMINE_FEATURES[features]
    fields = landmine_fields()[:n_fields]
    N = len(fields)
    phi = RandomFourierFeatures(2, LANDMINE_M // 2, lengthscale, seed=0)  # shared, every run
    regions = SubRegions(2, P)
    seeds = np.random.SeedSequence([run, 29]).generate_state(N + 1)
    agents = [
        FTSAgent(
            phi,
            LandmineObjective(*landmine_split(X, y)),
            regions,
            region=n % P,
            n_init=n_init,
            lam=lam,
            server_prob="never" if server_kw is None else "1/t",
            seed=int(seeds[n]),
        )
        for n, (X, y) in enumerate(fields)
    ]
    server = None
    if server_kw is not None:
        server = DPFTSServer(
            np.arange(N) % P,
            phi.n_features,
            n_regions=P,
            weight_schedule=(10, 30),
            seed=int(seeds[-1]),
            **server_kw,
        )
    runner = FederatedRunner(agents, server)
    records = runner.run(n_iter)
    scores = np.full((N, n_init + n_iter), np.nan)  # an agent skipped in a round ends in NaN
    for n, agent in enumerate(runner.agents):
        scores[n, : agent.y.size] = agent.y
    best = np.fmax.accumulate(scores, axis=1)
    delta = default_delta(N)
    private = server is not None and server.private
    stats = [r.server_stats for r in records if r.server_stats is not None]
    return {
        "setting": setting,
        "features": features,
        "run": run,
        "N": N,
        "n_init": n_init,
        "n_iter": n_iter,
        "lengthscale": lengthscale,
        "lam": lam,
        "best_auc": np.nanmean(best, axis=0).tolist(),
        "final_per_agent": best[:, -1].tolist(),
        "n_failed": sum(len(r.failed) for r in records),
        "epsilon": runner.epsilon(delta) if private else None,
        "delta": delta if private else None,
        "n_releases": 0 if server is None else server.n_releases,
        "selected": sum(s.n_selected for s in stats),
        "clipped": sum(s.n_clipped for s in stats),
        "used_server_fraction": float(np.mean([r.n_used_server / N for r in records[1:]])),
        "seconds": time.perf_counter() - t0,
    }


def run_landmine_random(run: int, n_fields: int = 29, n_iter: int = 60, n_init: int = 10) -> dict:
    """One run of random search on the landmine fields: each agent alone, uniform points.

    Each agent evaluates ``n_init + n_iter`` uniform points of the unit square, nothing shared,
    so nothing is released: the baseline a field that tunes alone without a model would use.

    Parameters
    ----------
    run : int
        The seed of the agents' points.
    n_fields : int, default=29
        ``N``: the agents are the first ``n_fields`` fields.
    n_iter, n_init : int, default=60 and 10
        Together, the evaluations per agent.

    Returns
    -------
    dict
        The keys of :func:`run_landmine`'s result, with ``setting = "random"`` and
        ``features = None``.
    """
    t0 = time.perf_counter()
    fields = landmine_fields()[:n_fields]
    N, n = len(fields), n_init + n_iter
    rng = np.random.default_rng([run, 29, 1])
    scores = np.empty((N, n))
    for i, (X, y) in enumerate(fields):
        objective = LandmineObjective(*landmine_split(X, y))
        scores[i] = [objective(u) for u in rng.random((n, 2))]
    best = np.maximum.accumulate(scores, axis=1)
    return {
        "setting": "random",
        "features": None,
        "run": run,
        "N": N,
        "n_init": n_init,
        "n_iter": n_iter,
        "best_auc": best.mean(axis=0).tolist(),
        "final_per_agent": best[:, -1].tolist(),
        "n_failed": 0,
        "epsilon": None,
        "delta": None,
        "n_releases": 0,
        "selected": 0,
        "clipped": 0,
        "used_server_fraction": 0.0,
        "seconds": time.perf_counter() - t0,
    }


def landmine(args: argparse.Namespace) -> dict:
    """Sec. 5.2's landmine experiment: the runs of ``args`` not saved yet, then the summary
    (``dai_landmine.json``) and the plot (``dai_landmine.png``).

    Parameters
    ----------
    args : argparse.Namespace
        ``settings`` (keys of ``LANDMINE_SETTINGS``), ``features`` (keys of
        ``LANDMINE_FEATURES``), ``runs`` (run indices), ``fields`` (``N``), ``n_iter`` and
        ``out`` (the results folder).

    Returns
    -------
    dict
        The summary written: per feature choice and setting, the mean curve of the best AUC
        and its standard error over runs, the final best AUC, and for a private setting our
        privacy loss beside the authors'.
    """
    n_init = 10
    tag = f"N{args.fields}-T{args.n_iter}"
    tasks = [
        (
            f"{name}-{features}-{run}-{tag}",
            functools.partial(
                run_landmine, name, features, run, n_fields=args.fields, n_iter=args.n_iter
            ),
        )
        for run in args.runs
        for features in args.features
        for name in args.settings
        if name != "random"
    ]
    if "random" in args.settings:  # one run serves both feature choices
        tasks += [
            (
                f"random-{run}-{tag}",
                functools.partial(
                    run_landmine_random, run, n_fields=args.fields, n_iter=args.n_iter
                ),
            )
            for run in args.runs
        ]
    rows = harness.collect_runs(
        harness.RunStore(args.out, "dai_landmine"),
        tasks,
        describe=lambda r: f"{r['seconds']:.0f} s, best AUC {r['best_auc'][-1]:.4f}",
    )
    delta = default_delta(args.fields)
    summary: dict[str, dict] = {}
    for features in args.features:
        summary[features] = {}
        for name in args.settings:
            mine = [r for r in rows if r["setting"] == name and r["features"] in (features, None)]
            if not mine:
                continue
            mean, se = harness.mean_se([r["best_auc"] for r in mine], single=0.0)
            P, server_kw = LANDMINE_SETTINGS.get(name, (None, None))
            entry = {
                "P": P,
                **(server_kw or {}),
                "n_runs": len(mine),
                "mean": mean.tolist(),
                "se": se.tolist(),
                "best_auc": float(mean[-1]),
                "best_auc_se": float(se[-1]),
                "best_auc_per_run": [r["best_auc"][-1] for r in mine],
                "n_failed": sum(r["n_failed"] for r in mine),
                "clipped_fraction": sum(r["clipped"] for r in mine)
                / max(1, sum(r["selected"] for r in mine)),
                "used_server_fraction": float(np.mean([r["used_server_fraction"] for r in mine])),
                "seconds_per_run": float(np.mean([r["seconds"] for r in mine])),
            }
            if server_kw and "z" in server_kw:
                steps = mine[0]["n_releases"]
                entry["epsilon"] = {
                    "tightest": mine[0]["epsilon"],  # the run's: the smaller of RDP and PLD
                    **_epsilons(server_kw["q"], server_kw["z"], steps, delta),
                    "steps": steps,
                }
                entry["paper_epsilon"] = LANDMINE_PAPER_EPSILON[name]
            summary[features][name] = entry
    out = {
        "benchmark": "dai_landmine",
        "N": args.fields,
        "n_init": n_init,
        "n_iter": args.n_iter,
        "delta": delta,
        "delta_rule": "1/N^1.1",
        "features": {
            name: {"M": LANDMINE_M, "lengthscale": ls, "lam": lam}
            for name, (ls, lam) in LANDMINE_FEATURES.items()
            if name in args.features
        },
        "summary": summary,
    }
    report = harness.Report(
        out,
        plot=lambda path: _plot_landmine(summary, n_init + args.n_iter, path),
        headline={
            f: {k: round(v["best_auc"], 4) for k, v in s.items()} for f, s in summary.items()
        },
        compact=True,
    )
    return harness.publish(args.out, "dai_landmine", report)


def _plot_landmine(summary: dict, n_evaluations: int, path: Path) -> None:
    """Fig. 3a (privacy loss against 1 - AUC) and 3d (convergence), per feature choice."""
    panels = [f for f in summary if summary[f]]
    if not panels:
        return
    fig, axes = harness.panel_grid(2 * len(panels), 5.0, 3.6, ncols=2)
    if fig is None:
        return
    for features, left, right in zip(panels, axes[::2], axes[1::2], strict=True):
        entries = summary[features]
        for name, entry in entries.items():
            if "epsilon" not in entry:
                continue
            color = "tab:green" if name.startswith("z=") else "tab:red"
            error = 1 - entry["best_auc"]
            left.errorbar(
                entry["epsilon"]["tightest"], error, yerr=entry["best_auc_se"], fmt="o", color=color
            )
            left.plot(entry["paper_epsilon"], error, "x", color=color, alpha=0.5)
            left.annotate(name, (entry["epsilon"]["tightest"], error), fontsize=7)
        baselines = (
            ("random", "grey"),
            ("TS", "tab:blue"),
            ("FTS", "tab:orange"),
            ("FTS-DE", "black"),
        )
        for name, color in baselines:
            if name in entries:
                left.axhline(1 - entries[name]["best_auc"], color=color, ls="--", label=name)
        left.set_xlabel("privacy loss epsilon (o: ours at delta = 1/N^1.1, x: authors')")
        left.set_ylabel(f"1 - best validation AUC after {n_evaluations} evaluations")
        left.set_title(f"{features} features (green: z at q=0.35, red: q at z=1)", fontsize=9)
        left.legend(fontsize=7)
        curves = {**dict(baselines), "z=1": "tab:green", "z=4": "tab:olive", "q=0.1": "tab:red"}
        for name, color in curves.items():
            if name in entries:
                mean, se = np.array(entries[name]["mean"]), np.array(entries[name]["se"])
                harness.plot_band(right, 1 - mean, se, label=name, color=color)
        right.set_xlabel("evaluations per agent (10 initial)")
        right.set_ylabel("1 - best validation AUC")
        right.set_yscale("log")
        right.set_title(f"{features} features", fontsize=9)
        right.legend(fontsize=7)
    harness.save_figure(
        fig, path, title="DP-FTS-DE on the landmine fields: validation AUC per evaluation"
    )


def _synthetic_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--settings", nargs="+", default=list(SYNTHETIC_SETTINGS))
    p.add_argument("--runs", nargs="+", type=int, default=list(range(5)))
    p.add_argument("--N", type=int, default=200)
    p.add_argument("--T", type=int, default=40)


def _svm_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--settings", nargs="+", default=list(SVM_SETTINGS))
    p.add_argument("--runs", nargs="+", type=int, default=list(range(5)))
    p.add_argument("--parties", type=int, default=20)
    p.add_argument("--n-iter", type=int, default=60)


def _landmine_arguments(p: argparse.ArgumentParser) -> None:
    landmine_settings = ["random", *LANDMINE_SETTINGS]
    p.add_argument(
        "--settings",
        nargs="+",
        default=landmine_settings,
        choices=landmine_settings,
        help="random: each agent alone with uniform points (one run serves both --features)",
    )
    p.add_argument(
        "--features",
        nargs="+",
        default=list(LANDMINE_FEATURES),
        choices=list(LANDMINE_FEATURES),
        help="the shared features' lengthscale and lambda: ours (0.2, 0.01), authors' (0.01, 1e-6)",
    )
    p.add_argument(
        "--runs", nargs="+", type=int, default=list(range(5)), help="run indices (default 0..4)"
    )
    p.add_argument("--fields", type=int, default=29, help="N, the first fields (1 to 29)")
    p.add_argument("--n-iter", type=int, default=60)


def _check_fields(args: argparse.Namespace) -> str | None:
    if not 1 <= args.fields <= 29:
        return f"--fields must be in 1..29 (the landmine fields), got {args.fields}"
    return None


def _quick(args: argparse.Namespace) -> dict:
    """A tiny run of the landmine part if it is named, else of the synthetic and SVM parts."""
    if args.part == "landmine":
        return landmine(
            argparse.Namespace(
                settings=["random", "TS", "FTS-DE", "z=1"],
                features=list(LANDMINE_FEATURES),
                runs=[0],
                fields=4,
                n_iter=3,
                out=args.out,
            )
        )
    svm(
        argparse.Namespace(
            settings=["TPE", "TS", "z=1"], runs=[0], parties=4, n_iter=3, out=args.out
        )
    )
    return synthetic(
        argparse.Namespace(
            settings=["TS", "FTS-DE P=2", "S=11"], runs=[0, 1], N=8, T=4, out=args.out
        )
    )


PARTS = (
    harness.Part("synthetic", _synthetic_arguments, synthetic),
    harness.Part("svm", _svm_arguments, svm),
    harness.Part("landmine", _landmine_arguments, landmine, _check_fields),
)


def main(argv: list[str] | None = None) -> dict:
    """Run a part (with ``--quick``, a tiny run of the landmine part or of the two others);
    returns its summary."""
    return harness.main_parts(__doc__, PARTS, _quick, argv)


if __name__ == "__main__":
    main()
