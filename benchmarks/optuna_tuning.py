"""Tuning quality: PrivateGPUCBSampler against Optuna's samplers on real models and data.

Random forest, MLP and gradient boosting with the GO-UCB paper's spaces (App. D.2,
:mod:`privtune.presets`) on breast_cancer, wine, Australian and Pima; the score of a
configuration is its 5-fold cross-validated accuracy (stratified folds shuffled with the run's
seed, estimator ``random_state`` = seed, so every sampler of a seed tunes the same function).

Settings
--------
- non-private (``eps = none``): privtune's ``moma``, ``ata``, ``tgp``, ``gp-ucb`` against Optuna's
  ``TPESampler``, ``GPSampler`` (needs torch) and ``RandomSampler``, and HEBO when it is
  installed (:mod:`benchmarks.hebo_sampler`). The scores are exact, so
  every method is credited with its best trial so far (``study.best_trial``);
- private (``eps`` in {10, 1}, ``value_range = (0, 1)``): privtune's four algorithms against the
  honest private baseline, ``random``: uniform proposals whose scores pass through the same
  curator and whose pick uses the same rule, :meth:`PrivateGPUCBSampler.recommend` (posterior
  mean over evaluated configurations); and against what a user would do instead, Optuna's
  ``TPESampler`` and ``GPSampler`` run on the same privatized scores (the same Laplace draws:
  the noise of trial ``i`` comes from the seed ``(10000 + seed, study, i)`` for every method)
  with ``study.best_trial``, the argmax of the noisy values, as the pick. The pick's score is
  its *raw* CV accuracy, which this script (the data owner) keeps outside the study.

Every study's first trial is the estimator's own values of the parameters that lie in the space
(``study.enqueue_trial``, as the docs advise; the forest's ``max_depth=None`` and the boosting's
``None`` and deprecated values lie outside and are sampled), for every method alike. Reported:
the true CV accuracy of the pick after 20, 40 and 60 trials, mean and standard error over
seeds, and how often the pick scores below the untuned estimator (all its scikit-learn
defaults, ``random_state = seed``, on the same folds). Gradient boosting on wine (3 classes)
drops the ``exponential`` loss, which needs two classes.

Each run is saved, when it ends, in ``results/optuna_tuning/runs.jsonl.gz`` (a
:class:`benchmarks.harness.RunStore`); ``run`` skips the runs saved there, so an interrupted
benchmark resumes where it stopped, and several ``run`` processes can share the work (each claims
a run before starting it). Runs are ordered seed first, so a partial benchmark covers every
setting with fewer seeds. The untuned estimator's scores are saved the same way, in
``results/optuna_tuning/defaults/runs.jsonl.gz``.

Usage::

    python -m benchmarks.optuna_tuning run              # everything missing (hours)
    python -m benchmarks.optuna_tuning run --seeds 0 --models mlp
    python -m benchmarks.optuna_tuning summarize        # optuna_tuning.json + .png
    python -m benchmarks.optuna_tuning --quick          # smoke run (tests)
    # a default against an alternative, in a separate results folder:
    python -m benchmarks.optuna_tuning run --models mlp --seeds 0 4 --epsilons none \\
        --samplers gp-ucb --optimizer-kwargs '{"acquisition": "ucb"}' --out /tmp/ucb
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import time
import warnings
import zlib
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import optuna
from sklearn.model_selection import StratifiedKFold, cross_val_score

from benchmarks import harness
from benchmarks.datasets import load_dataset
from benchmarks.hebo_sampler import HEBOSampler
from privtune import LaplaceCurator, PrivateGPUCBSampler
from privtune.acquisition import ACQUISITIONS, BASELINE_LEVEL
from privtune.gp import Priors
from privtune.presets import PRESETS, estimator_for
from privtune.space import Categorical, SearchSpace
from privtune.tuning import AUTO

MODELS = ["random_forest", "mlp", "gradient_boosting"]
DATASETS = ["breast_cancer", "wine", "australian", "pima"]
PRIVTUNE = ["moma", "ata", "tgp", "gp-ucb"]
OPTUNA = ["tpe", "gp", "random-optuna"]
# without privacy also HEBO, when installed (for comparison only: benchmarks.hebo_sampler)
EXACT_ONLY = ["hebo"]
EPSILONS = ["none", "10", "1"]
CHECKPOINTS = [20, 40, 60]
# privtune's picks with privacy: recommend_trial(study, baseline=0), the enqueued defaults kept
# unless beaten with probability 1 - (1 - BASELINE_LEVEL) / m by one of m competitors
PICK_RULE = f"baseline-bonferroni-{BASELINE_LEVEL}"


def samplers_for(eps: str) -> list[str]:
    """Methods compared in one privacy setting."""
    return PRIVTUNE + (OPTUNA + EXACT_ONLY if eps == "none" else ["random", "tpe", "gp"])


def noise_rng(seed: int, study_name: str, number: int) -> np.random.Generator:
    """The curator's noise of one trial, as :class:`PrivateGPUCBSampler` draws it with
    ``noise_seed = 10000 + seed``: every method of a seed sees the same draw at trial ``i``."""
    return np.random.default_rng([10_000 + seed, zlib.crc32(study_name.encode()), number])


def space_for(model: str, dataset: str) -> SearchSpace:
    """The preset space of ``model``, without the two-class ``exponential`` loss on wine."""
    space = dict(PRESETS[model][0]())
    if model == "gradient_boosting" and dataset == "wine":
        space["loss"] = Categorical(["log_loss"])
    return SearchSpace(space)


def suggest(trial: optuna.Trial, space: SearchSpace) -> dict:
    """Suggest every parameter of ``space`` through Optuna's public API."""
    params = {}
    for name, dist in space.to_optuna().items():
        if isinstance(dist, optuna.distributions.CategoricalDistribution):
            params[name] = trial.suggest_categorical(name, dist.choices)
        elif isinstance(dist, optuna.distributions.IntDistribution):
            params[name] = trial.suggest_int(
                name, dist.low, dist.high, step=dist.step, log=dist.log
            )
        else:
            params[name] = trial.suggest_float(
                name, dist.low, dist.high, step=dist.step, log=dist.log
            )
    return params


def from_json(optimizer_kwargs: dict | None) -> dict | None:
    """``optimizer_kwargs`` as JSON gives them, with its objects built: an acquisition with
    arguments as ``{"acquisition": {"logei": {"margin": 1.0}}}``
    (:data:`privtune.acquisition.ACQUISITIONS`), the surrogate's priors as
    ``{"priors": {"mean_scale": 0.0}}`` (:class:`privtune.gp.Priors`)."""
    if not optimizer_kwargs:
        return optimizer_kwargs
    kwargs = dict(optimizer_kwargs)
    if isinstance(kwargs.get("acquisition"), dict):  # {"name": {its kwargs}}
        ((name, acq_kwargs),) = kwargs["acquisition"].items()
        kwargs["acquisition"] = ACQUISITIONS[name](**acq_kwargs)
    if isinstance(kwargs.get("priors"), dict):
        kwargs["priors"] = Priors(**kwargs["priors"])
    return kwargs


def make_sampler(
    name: str,
    eps: str,
    seed: int,
    optimizer_kwargs: dict | None = None,
    noise_seed: int | None = None,
    n_startup_trials: int = 10,
) -> optuna.samplers.BaseSampler:
    """The sampler ``name`` of a run: Optuna's (``"tpe"``, ``"gp"``, ``"random-optuna"``), or
    privtune's algorithm ``name`` in the setting ``eps`` (its curator's noise seeded with
    ``noise_seed``, default ``10000 + seed``; ``n_startup_trials`` of its start-up draws);
    ``optimizer_kwargs`` as JSON gives them (:func:`from_json`)."""
    optimizer_kwargs = from_json(optimizer_kwargs)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    if name == "random-optuna":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "hebo":
        return HEBOSampler(seed=seed)
    if eps == "none":
        return PrivateGPUCBSampler(
            name, seed=seed, optimizer_kwargs=optimizer_kwargs, n_startup_trials=n_startup_trials
        )
    return PrivateGPUCBSampler(
        name,
        n_startup_trials=n_startup_trials,
        epsilon=float(eps),
        value_range=(0.0, 1.0),
        seed=seed,
        noise_seed=10_000 + seed if noise_seed is None else noise_seed,
        optimizer_kwargs=optimizer_kwargs,
    )


def run_one(
    model: str,
    dataset: str,
    eps: str,
    sampler_name: str,
    seed: int,
    n_trials: int,
    checkpoints: list[int],
    optimizer_kwargs: dict | None = None,
    replay: list[float | None] | None = None,
) -> dict:
    """One study. With ``replay`` (a saved run's raw scores, by trial number) trial ``i``
    returns ``replay[i]`` instead of cross-validating: the proposals depend on the told values
    only, so the replay repeats the saved study exactly and only the picks are recomputed."""
    X, y = load_dataset(dataset)
    space = space_for(model, dataset)
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    raw: dict[int, float] = {}

    def objective(trial):
        params = suggest(trial, space)
        if replay is not None:
            if replay[trial.number] is None:
                raise ValueError("this trial failed in the saved run")
            score = replay[trial.number]
        else:
            est = estimator_for(model, random_state=seed, **params)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                score = float(np.mean(cross_val_score(est, X, y, cv=cv, error_score="raise")))
        raw[trial.number] = score
        return score

    sampler = make_sampler(sampler_name, eps, seed, optimizer_kwargs)
    private = eps != "none"
    ours = isinstance(sampler, PrivateGPUCBSampler)
    picks: dict[int, dict] = {}
    best_mean: dict[int, dict] = {}  # privtune's rule without the baseline

    def callback(study, trial):
        n = trial.number + 1
        if n in checkpoints:
            if private and ours:
                first = study.trials[0].state == optuna.trial.TrialState.COMPLETE
                pick = sampler.recommend_trial(study, baseline=0 if first else None)
                plain = sampler.recommend_trial(study)
                best_mean[n] = {"trial": plain.number, "score": raw[plain.number]}
            else:
                pick = study.best_trial  # with privacy: the argmax of the noisy values
            picks[n] = {"trial": pick.number, "score": raw[pick.number]}

    study_name = f"{model}-{dataset}-{seed}"
    study = optuna.create_study(direction="maximize", sampler=sampler, study_name=study_name)
    study.enqueue_trial(defaults_in_space(model, space))  # trial 0, for every method alike
    if not private:
        func = objective
    elif ours:
        func = sampler.privatize(objective)
    else:  # Optuna's samplers on the scores the curator releases
        curator = LaplaceCurator(float(eps), (0.0, 1.0))

        def func(trial):
            rng = noise_rng(seed, study_name, trial.number)
            return float(curator.privatize(objective(trial), rng=rng))

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(func, n_trials=n_trials, callbacks=[callback], catch=(ValueError,))
    elapsed = time.perf_counter() - t0
    out = {
        "model": model,
        "dataset": dataset,
        "epsilon": eps,
        "sampler": sampler_name,
        "seed": seed,
        "n_trials": n_trials,
        "picks": {str(k): v for k, v in sorted(picks.items())},
        "raw_scores": [raw.get(t.number) for t in study.trials],
        "n_failed": sum(t.state != optuna.trial.TrialState.COMPLETE for t in study.trials),
        "seconds": elapsed,
    }
    if private and ours:
        out["privacy"] = sampler.privacy_report(study)
        out["pick_rule"] = PICK_RULE
        out["picks_best_mean"] = {str(k): v for k, v in sorted(best_mean.items())}
    return out


def repick(args: argparse.Namespace) -> None:
    """Recompute the picks of saved private privtune runs under the current rule, by replay.

    Each run is replayed from its raw scores (:func:`run_one` with ``replay``); the replay must
    reproduce the saved picks of the best-posterior-mean rule, or this stops with an error.
    """
    store = harness.RunStore(args.out, "optuna_tuning")
    for name, r in store.load().items():
        ours = r["sampler"] in [*PRIVTUNE, "random"]
        if r["epsilon"] == "none" or not ours or r.get("pick_rule") == PICK_RULE:
            continue
        if args.samplers and r["sampler"] not in args.samplers:
            continue
        new = run_one(
            r["model"],
            r["dataset"],
            r["epsilon"],
            r["sampler"],
            r["seed"],
            r["n_trials"],
            [int(n) for n in r["picks"]],
            replay=r["raw_scores"],
        )
        saved = r.get("picks_best_mean", r["picks"])
        if {n: p["trial"] for n, p in new["picks_best_mean"].items()} != {
            n: p["trial"] for n, p in saved.items()
        }:
            raise RuntimeError(f"{name}: the replay does not reproduce the saved picks.")
        r.update(pick_rule=PICK_RULE, picks=new["picks"], picks_best_mean=new["picks_best_mean"])
        store.append(name, r)
        print(f"{name}: {new['picks']}", flush=True)
    store.compact()


def defaults_in_space(model: str, space: SearchSpace) -> dict:
    """The estimator's own values of the space's parameters that lie in the space (the others,
    ``None`` values such as the forest's ``max_depth``, are left to the sampler)."""
    own = estimator_for(model).get_params()
    inside = {}
    for name in space.names:
        try:
            SearchSpace({name: space[name]}).to_unit({name: own[name]})
        except (TypeError, ValueError):
            continue
        inside[name] = own[name]
    return inside


def default_score(model: str, dataset: str, seed: int) -> dict:
    """The untuned estimator's CV accuracy on the folds of ``seed``, with its fold scores."""
    X, y = load_dataset(dataset)
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    est = estimator_for(model, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folds = cross_val_score(est, X, y, cv=cv, error_score="raise")
    return {
        "model": model,
        "dataset": dataset,
        "seed": seed,
        "score": float(np.mean(folds)),
        "fold_scores": [float(f) for f in folds],
    }


def default_scores(out: Path, rows: list[dict]) -> dict[tuple, dict]:
    """The untuned score of every (model, dataset, seed) of ``rows``, computed once each:
    ``{"score": mean CV accuracy, "se": standard error of that mean over the 5 folds}``."""
    store = harness.RunStore(out / "optuna_tuning", "defaults")
    keys = sorted({(r["model"], r["dataset"], r["seed"]) for r in rows})
    names = ["{}-{}-{}".format(*key) for key in keys]
    saved_before = store.load()
    # saved before fold scores were kept: computed again
    store.remove(n for n in names if n in saved_before and "fold_scores" not in saved_before[n])
    tasks = [(n, functools.partial(default_score, *k)) for n, k in zip(names, keys, strict=True)]
    saved = harness.collect_runs(store, tasks, lambda res: f"{res['score']:.4f}")
    by_key = {(r["model"], r["dataset"], r["seed"]): r for r in saved}
    scores = {}
    for key in keys:
        res = by_key.get(key) or default_score(*key)  # or being computed elsewhere right now
        scores[key] = {"score": res["score"], "se": float(harness.mean_se(res["fold_scores"])[1])}
    return scores


def run(args: argparse.Namespace) -> None:
    """Every study of ``args`` not saved yet, seed first (:mod:`benchmarks.harness`)."""
    kwargs = (args.trials, args.checkpoints, args.optimizer_kwargs)
    tasks = [
        (
            f"{model}-{dataset}-{eps}-{name}-{seed}",
            functools.partial(run_one, model, dataset, eps, name, seed, *kwargs),
        )
        # seed first: a partial benchmark covers every task
        for seed, eps, model, dataset in itertools.product(
            args.seeds, args.epsilons, args.models, args.datasets
        )
        for name in samplers_for(eps)
        if (not args.samplers or name in args.samplers) and harness.sampler_available(name)
    ]

    def describe(res: dict) -> str:
        picks = {k: round(v["score"], 4) for k, v in res["picks"].items()}
        return f"{picks} ({res['seconds']:.0f} s)"

    harness.collect_runs(harness.RunStore(args.out, "optuna_tuning"), tasks, describe)


def summarize(args: argparse.Namespace) -> harness.Report:
    """The report of the saved studies (``optuna_tuning.json``, ``.md`` and ``.png``)."""
    rows = harness.load_runs(harness.RunStore(args.out, "optuna_tuning"))
    if args.samplers:  # the methods asked for
        rows = [r for r in rows if r["sampler"] in args.samplers]
    table: dict[str, dict] = {}
    for r in rows:
        key = f"{r['model']}|{r['dataset']}|{r['epsilon']}"
        cell = table.setdefault(key, {}).setdefault(r["sampler"], {})
        for n, pick in r["picks"].items():
            cell.setdefault(n, []).append(pick["score"])
    summary = {}
    for key, by_sampler in sorted(table.items()):
        model, dataset, eps = key.split("|")
        entry = {}
        for name, by_n in by_sampler.items():
            entry[name] = {}
            for n, v in sorted(by_n.items(), key=lambda kv: int(kv[0])):
                mean, se = harness.mean_se(v)
                entry[name][n] = {
                    "mean": float(mean),
                    "se": None if se is None else float(se),
                    "n_seeds": len(v),
                }
        summary.setdefault(eps, {}).setdefault(model, {})[dataset] = entry
    result = {
        "benchmark": "optuna_tuning",
        "checkpoints": args.checkpoints,
        "n_runs": len(rows),
        "summary": summary,
        "wins": _wins(summary, str(max(args.checkpoints))),
        "paired_vs_random": _paired(rows, [str(c) for c in args.checkpoints]),
        "default_against": _default_against(rows, [str(c) for c in args.checkpoints]),
        "score_spread": _score_spread(rows),
        "evaluated_median": _evaluated_median(rows),
        "below_default": _below_default(
            rows + _best_mean_rows(rows), default_scores(args.out, rows)
        ),
    }
    checkpoints = [str(c) for c in args.checkpoints]
    markdown = (
        _markdown(summary, checkpoints, result["paired_vs_random"])
        + "\n"
        + _default_against_markdown(result["default_against"], checkpoints)
        + "\n"
        + _spread_markdown(result["score_spread"])
        + "\n"
        + _evaluated_markdown(result["evaluated_median"])
        + "\n"
        + _below_default_markdown(result["below_default"], checkpoints)
    )
    return harness.Report(
        result, markdown, lambda path: _plot(summary, path, checkpoints), result["wins"]
    )


def _below_default(rows: list[dict], defaults: dict[tuple, dict]) -> dict:
    """How often each method's pick scores below the untuned estimator on the same folds.

    Per setting, method and checkpoint: the number of runs, how many picks score below the
    default (by more than 1e-9), how many by more than the standard error of the default's CV
    accuracy over its 5 folds (``n_below_beyond_se``: a shortfall larger than the CV's own
    fold-to-fold uncertainty) and the mean of pick minus default in accuracy points.
    """
    out: dict[str, dict] = {}
    for r in rows:
        default = defaults[(r["model"], r["dataset"], r["seed"])]
        for n, pick in r["picks"].items():
            cell = (
                out.setdefault(r["epsilon"], {})
                .setdefault(r["sampler"], {})
                .setdefault(n, {"n_runs": 0, "n_below": 0, "n_below_beyond_se": 0, "diff": []})
            )
            cell["n_runs"] += 1
            cell["n_below"] += int(pick["score"] < default["score"] - 1e-9)
            cell["n_below_beyond_se"] += int(pick["score"] < default["score"] - default["se"])
            cell["diff"].append(100 * (pick["score"] - default["score"]))
    for by_method in out.values():
        for by_n in by_method.values():
            for cell in by_n.values():
                cell["mean_diff_points"] = float(np.mean(cell.pop("diff")))
    return out


def _below_default_markdown(below: dict, checkpoints: list[str]) -> str:
    if not below:
        return ""
    lines = [
        "### Against the untuned estimator",
        "",
        "Picks that score below the estimator's defaults on the same folds (of all runs); in "
        "brackets, how many by more than one standard error of the default's CV accuracy over "
        "its 5 folds, and the mean of pick minus default in accuracy points. With privacy, "
        "privtune's picks keep the enqueued defaults (trial 0) unless another configuration "
        "beats them with posterior probability 1 - (1 - "
        f"{BASELINE_LEVEL}) / m, m the number of configurations competing with them "
        "(privtune.acquisition.baseline_level); 'best posterior mean only' "
        "is the same runs picked without that baseline.",
        "",
    ]
    for eps in [e for e in EPSILONS if e in below]:
        title = "non-private" if eps == "none" else f"epsilon = {eps}"
        lines.append(f"| {title} | " + " | ".join(f"{c} trials" for c in checkpoints) + " |")
        lines.append("|---|" + "---|" * len(checkpoints))
        for m in _order(eps, below[eps]):
            cells = []
            for c in checkpoints:
                v = below[eps][m].get(c)
                cells.append(
                    "–"
                    if v is None
                    else f"{v['n_below']}/{v['n_runs']} "
                    f"({v['n_below_beyond_se']}; {v['mean_diff_points']:+.2f})"
                )
            lines.append(f"| {_label(m)} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _score_spread(rows: list[dict]) -> dict:
    """How much there is to find on each task, next to the curator's noise.

    The non-private RandomSampler's trials are uniform draws from the space, and their raw
    scores are true CV accuracies; pooled over seeds they describe the task. The spread is given
    in accuracy points: the standard deviation, and how far the 90th percentile and the best
    draw lie above the median. The curator's noise with ``value_range=(0, 1)`` has standard
    deviation ``sqrt(2) / epsilon`` (Laplace with scale ``1 / epsilon``): 14 points at
    ``epsilon = 10`` and 141 points at ``epsilon = 1``.
    """
    pooled: dict[str, list[float]] = {}
    for r in rows:
        if r["epsilon"] == "none" and r["sampler"] == baseline_for("none"):
            scores = [v for v in r["raw_scores"] if v is not None and np.isfinite(v)]
            pooled.setdefault(f"{r['model']}|{r['dataset']}", []).extend(scores)
    out: dict[str, dict] = {}
    for key, scores in sorted(pooled.items()):
        model, dataset = key.split("|")
        v = 100 * np.asarray(scores)
        median = float(np.median(v))
        out.setdefault(model, {})[dataset] = {
            "n_configurations": int(v.size),
            "sd_points": float(np.std(v, ddof=1)) if v.size > 1 else None,
            "q90_minus_median_points": float(np.quantile(v, 0.9) - median),
            "max_minus_median_points": float(v.max() - median),
        }
    return {
        "tasks": out,
        "noise_sd_points": {eps: 100 * np.sqrt(2) / float(eps) for eps in EPSILONS[1:]},
    }


def _evaluated_median(rows: list[dict]) -> dict:
    """Where each method spent its trials: the median true score of the configurations it ran.

    Per run, the median raw CV accuracy over its trials (in accuracy points); then the mean of
    those medians over the runs of each (setting, model, method). A method that learns where the
    good configurations are runs better ones than uniform draws do, whether or not its final
    pick is better.
    """
    medians: dict[tuple, list[float]] = {}
    for r in rows:
        scores = [v for v in r["raw_scores"] if v is not None and np.isfinite(v)]
        if scores:
            key = (r["epsilon"], r["model"], r["sampler"])
            medians.setdefault(key, []).append(100 * float(np.median(scores)))
    out: dict[str, dict] = {}
    for (eps, model, sampler), v in sorted(medians.items()):
        out.setdefault(eps, {}).setdefault(model, {})[sampler] = {
            "mean_points": float(np.mean(v)),
            "n_runs": len(v),
        }
    return out


def _evaluated_markdown(evaluated: dict) -> str:
    if not evaluated:
        return ""
    lines = [
        "### Where the trials went",
        "",
        "Median true CV accuracy of the configurations each method evaluated (all trials of a "
        "run), in accuracy points, averaged over the runs of a model (4 data sets × seeds).",
        "",
    ]
    for eps in [e for e in EPSILONS if e in evaluated]:
        methods = _order(eps, {s for by in evaluated[eps].values() for s in by})
        title = "non-private" if eps == "none" else f"epsilon = {eps}"
        lines.append(f"| {title} | " + " | ".join(_label(m) for m in methods) + " |")
        lines.append("|---|" + "---|" * len(methods))
        for model in [m for m in MODELS if m in evaluated[eps]]:
            cells = [
                f"{evaluated[eps][model][m]['mean_points']:.1f}"
                if m in evaluated[eps][model]
                else "–"
                for m in methods
            ]
            lines.append(f"| {model} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _spread_markdown(spread: dict) -> str:
    if not spread["tasks"]:
        return ""
    noise = ", ".join(
        f"{v:.0f} points at epsilon = {e}" for e, v in spread["noise_sd_points"].items()
    )
    lines = [
        "### How much there is to find",
        "",
        "True CV accuracy of the configurations the non-private Random drew (uniform over the "
        "space, pooled over seeds), in accuracy points: standard deviation, 90th percentile "
        f"minus median, best minus median. The curator's noise has standard deviation {noise}.",
        "",
        "| model | data | configurations | sd | q90 - median | best - median |",
        "|---|---|---|---|---|---|",
    ]
    for model in [m for m in MODELS if m in spread["tasks"]]:
        by_data = spread["tasks"][model]
        for dataset in [d for d in DATASETS if d in by_data]:
            v = by_data[dataset]
            sd = f"{v['sd_points']:.1f}" if v["sd_points"] is not None else "–"
            lines.append(
                f"| {model} | {dataset} | {v['n_configurations']} | {sd} | "
                f"{v['q90_minus_median_points']:.1f} | {v['max_minus_median_points']:.1f} |"
            )
    lines.append("")
    return "\n".join(lines)


BEST_MEAN = " (best mean)"  # a privtune method's picks without the baseline


def _label(sampler: str) -> str:
    names = {
        "gp-ucb": "privtune (gp-ucb)",
        "tpe": "Optuna TPE",
        "gp": "Optuna GPSampler",
        "random-optuna": "Optuna random",
        "random": "privtune random",
        "hebo": "HEBO",
    }
    if sampler.endswith(BEST_MEAN):
        return _label(sampler[: -len(BEST_MEAN)]) + ", best posterior mean only"
    return names.get(sampler, sampler)


def _order(eps: str, present) -> list[str]:
    methods = [s for s in samplers_for(eps) if s in present]
    return methods + [s + BEST_MEAN for s in methods if s + BEST_MEAN in present]


def _best_mean_rows(rows: list[dict]) -> list[dict]:
    """Private privtune runs with their picks under the rule without the baseline (the best
    posterior mean alone), as runs of a method ``<name> (best mean)``."""
    return [
        dict(r, sampler=r["sampler"] + BEST_MEAN, picks=r["picks_best_mean"])
        for r in rows
        if "picks_best_mean" in r
    ]


def baseline_for(eps: str) -> str:
    """The random baseline of a privacy setting."""
    return "random-optuna" if eps == "none" else "random"


def _pick_scores(rows: list[dict]) -> dict[tuple, float]:
    """``(eps, sampler, model, dataset, seed, checkpoint) -> true score of the pick``."""
    return {
        (r["epsilon"], r["sampler"], r["model"], r["dataset"], r["seed"], n): p["score"]
        for r in rows
        for n, p in r["picks"].items()
    }


def _differences(score: dict, eps: str, method: str, other: str, n: str, model=None) -> dict:
    """``method`` minus ``other`` on the same (task, seed) at ``n`` trials, in accuracy points
    (on ``model``'s tasks only if given): mean, standard error, pairs and wins/ties/losses."""
    d = np.asarray(
        [
            100 * (v - score[(eps, other, *k[2:])])
            for k, v in score.items()
            if k[0] == eps
            and k[1] == method
            and k[5] == n
            and (model is None or k[2] == model)
            and (eps, other, *k[2:]) in score
        ]
    )
    if not d.size:
        return {}
    mean, se = harness.mean_se(d)
    wins, ties, losses = harness.win_tie_loss(d)
    return {
        "mean_diff_points": float(mean),
        "se_points": None if se is None else float(se),
        "n_pairs": int(d.size),
        "wins": wins,
        "ties": ties,
        "losses": losses,
    }


def _paired(rows: list[dict], checkpoints: list[str]) -> dict:
    """Every method against the random baseline of its setting, paired by (task, seed).

    Within a seed every method tunes the same function (same folds, same estimator seed), so
    the difference of two methods' picks on one (model, dataset, seed) is a paired sample. Per
    setting, method and checkpoint: the mean difference in accuracy points, its standard error,
    the number of pairs and how many the method wins, ties (the same CV accuracy) and loses.
    """
    score = _pick_scores(rows)
    out: dict[str, dict] = {}
    for eps in [e for e in EPSILONS if any(r["epsilon"] == e for r in rows)]:
        base = baseline_for(eps)
        for m in samplers_for(eps):
            if m == base:
                continue
            for n in checkpoints:
                stats = _differences(score, eps, m, base, n)
                if stats:
                    out.setdefault(eps, {}).setdefault(m, {})[n] = stats
    return out


def default_for(eps: str) -> str:
    """privtune's default algorithm (``algorithm="auto"``) in a privacy setting."""
    return AUTO["exact" if eps == "none" else "ldp"]


def _default_against(rows: list[dict], checkpoints: list[str]) -> dict:
    """privtune's default against every other method of its setting, paired by (task, seed),
    per model and over all tasks (``"all"``): :func:`_differences` of default minus other."""
    score = _pick_scores(rows)
    out: dict[str, dict] = {}
    for eps in [e for e in EPSILONS if any(r["epsilon"] == e for r in rows)]:
        default = default_for(eps)
        models = [m for m in MODELS if any(r["model"] == m for r in rows)]
        for other in samplers_for(eps):
            if other == default:
                continue
            for model in [*models, "all"]:
                for n in checkpoints:
                    stats = _differences(
                        score, eps, default, other, n, None if model == "all" else model
                    )
                    if stats:
                        out.setdefault(eps, {}).setdefault(other, {}).setdefault(model, {})[n] = (
                            stats
                        )
    return out


def _diff_cell(v: dict | None) -> str:
    """A :func:`_differences` result as a table cell: mean ± SE (wins/ties/losses)."""
    if not v:
        return "–"
    cell = harness.format_mean_se(v["mean_diff_points"], v["se_points"], "+.2f")
    return f"{cell} ({v['wins']}/{v['ties']}/{v['losses']})"


def _default_against_markdown(against: dict, checkpoints: list[str]) -> str:
    if not against:
        return ""
    lines = [
        "### privtune's default against each alternative",
        "",
        'The default (`algorithm="auto"`) minus the other method on the same (task, seed), '
        "in accuracy points ± SE (wins/ties/losses), per model (4 data sets × seeds) and over "
        "all tasks.",
        "",
    ]
    for eps in [e for e in EPSILONS if e in against]:
        title = "non-private" if eps == "none" else f"epsilon = {eps}"
        lines.append(
            f"| {title}: {default_for(eps)} against | model | "
            + " | ".join(f"{c} trials" for c in checkpoints)
            + " |"
        )
        lines.append("|---|---|" + "---|" * len(checkpoints))
        for other in _order(eps, against[eps]):
            for model, by_n in against[eps][other].items():
                cells = []
                for c in checkpoints:
                    cells.append(_diff_cell(by_n.get(c)))
                lines.append(f"| {_label(other)} | {model} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _markdown(summary: dict, checkpoints: list[str], paired: dict | None = None) -> str:
    """Tables for docs/benchmarks/tuning.md: per task at the last checkpoint, averaged over
    tasks, and paired against the random baseline.

    Cells are the mean true CV accuracy of the pick over seeds, ``± standard error``; the
    aggregate table gives the mean gap to the best method of each task (in accuracy points) and
    the mean rank among the methods of that setting (1 is best); the paired table is
    :func:`_paired`.
    """
    last = checkpoints[-1]
    lines: list[str] = []
    for eps in [e for e in EPSILONS if e in summary]:
        by_model = summary[eps]
        present = {s for d in by_model.values() for e in d.values() for s in e}
        methods = _order(eps, present)
        title = "non-private" if eps == "none" else f"epsilon = {eps}"
        lines += [f"### {title}", ""]
        lines.append(f"True CV accuracy of the pick after {last} trials, mean ± SE over seeds (n).")
        if eps != "none":
            lines.append(
                "TPE and GP are Optuna's samplers run on the same privatized scores, picked by "
                "`study.best_trial` (the argmax of the noisy values); privtune's methods and "
                "`random` pick by `sampler.recommend`."
            )
        lines.append("")
        lines.append("| model | data | " + " | ".join(_label(m) for m in methods) + " |")
        lines.append("|---|---|" + "---|" * len(methods))
        gaps = {m: {c: [] for c in checkpoints} for m in methods}
        ranks = {m: {c: [] for c in checkpoints} for m in methods}
        for model in [m for m in MODELS if m in by_model]:
            for dataset in [d for d in DATASETS if d in by_model[model]]:
                entry = by_model[model][dataset]
                cells = []
                for m in methods:
                    v = entry.get(m, {}).get(last)
                    if v is None:
                        cells.append("–")
                        continue
                    cells.append(f"{harness.format_mean_se(v['mean'], v['se'])} ({v['n_seeds']})")
                lines.append(f"| {model} | {dataset} | " + " | ".join(cells) + " |")
                for c in checkpoints:
                    means = {m: entry[m][c]["mean"] for m in methods if c in entry.get(m, {})}
                    if len(means) != len(methods):
                        continue  # aggregate only over tasks where every method has run
                    best = max(means.values())
                    order = sorted(means.values(), reverse=True)
                    for m, v in means.items():
                        gaps[m][c].append(100 * (best - v))
                        # average rank for ties
                        first = order.index(v) + 1
                        ranks[m][c].append(first + (order.count(v) - 1) / 2)
        n_tasks = len(gaps[methods[0]][last]) if methods else 0
        lines += [
            "",
            f"Averaged over the {n_tasks} tasks where every method has run: mean gap "
            "to the task's best method in accuracy points / mean rank (1 = best).",
            "",
        ]
        lines.append("| method | " + " | ".join(f"{c} trials" for c in checkpoints) + " |")
        lines.append("|---|" + "---|" * len(checkpoints))
        for m in methods:
            cells = [
                f"{np.mean(gaps[m][c]):.2f} / {np.mean(ranks[m][c]):.1f}" if gaps[m][c] else "–"
                for c in checkpoints
            ]
            lines.append(f"| {_label(m)} | " + " | ".join(cells) + " |")
        lines.append("")
        by_method = (paired or {}).get(eps, {})
        if by_method:
            lines += [
                f"Against {_label(baseline_for(eps))} on the same (task, seed): mean difference "
                "in accuracy points ± SE, and wins/ties/losses.",
                "",
                "| method | " + " | ".join(f"{c} trials" for c in checkpoints) + " |",
                "|---|" + "---|" * len(checkpoints),
            ]
            for m in _order(eps, by_method):
                cells = []
                for c in checkpoints:
                    cells.append(_diff_cell(by_method[m].get(c)))
                lines.append(f"| {_label(m)} | " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)


def _wins(summary: dict, n: str) -> dict:
    """Per privacy setting: how often each method has the best mean score at ``n`` trials."""
    out = {}
    for eps, by_model in summary.items():
        counts: dict[str, float] = {}
        for by_data in by_model.values():
            for entry in by_data.values():
                means = {s: v[n]["mean"] for s, v in entry.items() if n in v}
                if not means:
                    continue
                top = max(means.values())
                winners = [s for s, m in means.items() if m == top]
                for s in winners:
                    counts[s] = counts.get(s, 0.0) + 1.0 / len(winners)
        out[eps] = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
    return out


# One colour per method in every panel; the random baseline of each setting is dashed black.
_COLORS = {
    "moma": "tab:red",
    "ata": "tab:blue",
    "tgp": "tab:purple",
    "gp-ucb": "tab:green",
    "tpe": "tab:pink",
    "gp": "tab:orange",
    "hebo": "tab:brown",
}


@harness.figure
def _plot(plt: Any, summary: dict, path: Path, checkpoints: list[str]) -> None:
    settings = [e for e in EPSILONS if e in summary]
    models = [m for m in MODELS if any(m in summary[e] for e in settings)]
    fig, axes = plt.subplots(
        len(settings),
        len(models),
        figsize=(4.2 * len(models), 3.2 * len(settings)),
        squeeze=False,
    )
    for i, eps in enumerate(settings):
        for j, model in enumerate(models):
            ax = axes[i][j]
            by_data = summary[eps].get(model, {})
            # Gap to the best pick of any method on the same data set, averaged over data sets.
            present = {s for e in by_data.values() for s in e}
            for s in _order(eps, present):
                gaps = []
                for n in checkpoints:
                    g = []
                    for entry in by_data.values():
                        if s in entry and n in entry[s]:
                            best = max(v[c]["mean"] for v in entry.values() for c in v)
                            g.append(best - entry[s][n]["mean"])
                    gaps.append(np.mean(g) if g else np.nan)
                baseline = s == baseline_for(eps)
                # the baseline hollow and larger: where privtune keeps the same pick, both show
                ax.plot(
                    [int(c) for c in checkpoints],
                    gaps,
                    label=_label(s),
                    color="black" if baseline else _COLORS[s],
                    linestyle="--" if baseline else "-",
                    markersize=9 if baseline else 5,
                    markerfacecolor="none" if baseline else _COLORS[s],
                )
            setting = "without privacy" if eps == "none" else f"per-report ε = {eps}"
            ax.set_title(f"{model.replace('_', ' ')}, {setting}", fontsize=9)
            ax.set_xlabel("trials")
            if j == 0:
                ax.set_ylabel("gap to the best pick (accuracy)")
            ax.legend(fontsize=6)
    harness.save_figure(
        fig,
        path,
        title="Gap to the best pick of any method on the task (lower is better), mean over "
        "data sets and seeds",
    )


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    parser.add_argument("--epsilons", nargs="+", default=EPSILONS, choices=EPSILONS)
    parser.add_argument("--samplers", nargs="+", default=None)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument(
        "--optimizer-kwargs",
        type=json.loads,
        default=None,
        help="JSON overrides of the privtune samplers' defaults, e.g. "
        '\'{"acquisition": "ucb"}\' or \'{"priors": {"mean_scale": 0.0}}\' (objects as '
        "from_json builds them; use another --out: saved runs do not record them)",
    )
    parser.set_defaults(checkpoints=CHECKPOINTS)


def _quick(args: argparse.Namespace) -> None:
    args.models, args.datasets, args.seeds = ["mlp"], ["wine"], [0]
    args.epsilons, args.trials, args.checkpoints = ["none", "1"], 6, [3, 6]
    args.samplers = args.samplers or ["moma", "gp-ucb", "random", "tpe"]


BENCHMARK = harness.Benchmark(
    name="optuna_tuning",
    doc=__doc__,
    quick="MLP on wine, 6 trials, 1 seed",
    arguments=_arguments,
    quick_settings=_quick,
    run=run,
    summarize=summarize,
    commands={"repick": repick},
    setup=lambda: optuna.logging.set_verbosity(optuna.logging.WARNING),
)


def main(argv: list[str] | None = None) -> dict | None:
    """Run, re-pick or summarize; returns the summary written to ``<out>/optuna_tuning.json``."""
    return harness.main(BENCHMARK, argv)


if __name__ == "__main__":
    main()
