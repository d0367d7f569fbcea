"""DP-FTS-DE (Dai, Low & Jaillet 2021): the synthetic experiment (App. B.1), federated SVM tuning.

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

SVM tuning (in the spirit of Sec. 5.2's landmine experiment, whose data are not available
offline): 20 parties share scikit-learn's handwritten digits (1797 images), each holding a
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

Usage::

    python -m benchmarks.dai synthetic      # 70 runs, resumable; dai_synthetic.json/.png
    python -m benchmarks.dai svm            # 70 runs, resumable; dai_svm.json/.png
    python -m benchmarks.dai --quick        # tiny (tests)
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from benchmarks import harness
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
        (f"{name.replace(' ', '_')}-{run}-{tag}.json", functools.partial(compute, name, run))
        for run in runs
        for name in names
    ]
    return harness.collect_runs(harness.runs_dir(out, benchmark), tasks)


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
    harness.write_json(args.out / "dai_synthetic.json", out)
    _plot_synthetic(summary, args.out / "dai_synthetic.png")
    print(json.dumps({k: round(v["final_mean"], 4) for k, v in summary.items()}))
    return out


def _plot_synthetic(summary: dict, path: Path) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
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
    harness.save_figure(fig, path)


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
    harness.write_json(args.out / "dai_svm.json", out)
    _plot_svm(summary, args.n_iter, args.out / "dai_svm.png")
    print(json.dumps({k: round(v["best_auc"][str(args.n_iter)], 4) for k, v in summary.items()}))
    return out


def _plot_svm(summary: dict, n_iter: int, path: Path) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    key = str(n_iter)
    for name, entry in summary.items():
        eps = entry["epsilon"]
        if not (math.isfinite(eps) and eps > 0):
            continue
        color = "tab:green" if name.startswith("z=") else "tab:red"
        left.errorbar(
            eps, 1 - entry["best_auc"][key], yerr=entry["best_auc_se"][key], fmt="o", color=color
        )
        left.annotate(name, (eps, 1 - entry["best_auc"][key]), fontsize=7)
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
    harness.save_figure(fig, path)


def main(argv: list[str] | None = None) -> dict:
    """Run a part (or, with ``--quick``, a tiny run of both); returns its summary."""
    parser = harness.make_parser(__doc__)
    sub = parser.add_subparsers(dest="part")
    p = sub.add_parser("synthetic")
    p.add_argument("--settings", nargs="+", default=list(SYNTHETIC_SETTINGS))
    p.add_argument("--runs", nargs="+", type=int, default=list(range(5)))
    p.add_argument("--N", type=int, default=200)
    p.add_argument("--T", type=int, default=40)
    p = sub.add_parser("svm")
    p.add_argument("--settings", nargs="+", default=list(SVM_SETTINGS))
    p.add_argument("--runs", nargs="+", type=int, default=list(range(5)))
    p.add_argument("--parties", type=int, default=20)
    p.add_argument("--n-iter", type=int, default=60)
    args = harness.parse(parser, argv)
    if args.quick:
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
    if args.part is None:
        parser.error("choose a part: synthetic or svm")
    return {"synthetic": synthetic, "svm": svm}[args.part](args)


if __name__ == "__main__":
    main()
