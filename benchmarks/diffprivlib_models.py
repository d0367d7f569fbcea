"""Every record protected: diffprivlib's models tuned on real data, mode by mode, at a total
epsilon of 0.5, 1 and 3 for every record.

diffprivlib's models are differentially private per fit once the data's bounds are given before
the data is read. This benchmark measures the ways privtune tunes them so that every record of
the data, training and validation, gets one total ``(EPSILON, DELTA)``, against the
alternative a user has (one fit of the untuned model at the whole epsilon), on the same test
records and the same seeds.

Tasks
    Three diffprivlib models on six real data sets (``TASKS``): ``LogisticRegression`` (``C``
    and ``data_norm`` tuned), ``GaussianNB`` (``var_smoothing``, the variance diffprivlib adds
    to each noisy variance) and ``RandomForestClassifier`` (``n_estimators`` and
    ``max_depth``). Every feature goes through a fixed public transform, record by record, onto
    ``[0, 1]`` (clipped; :func:`data`): pen digits' coordinates lie in ``[0, 100]`` and optical
    digits' counts in ``[0, 16]`` by construction; spambase's 54 frequencies are percentages
    (``log1p(x) / log1p(100)``) and its 3 capital-run lengths are ``log1p(x) / 10`` (lengths
    beyond 22,025 clipped); phoneme's 5 features were standardised by the data set's makers
    (``(x + 5) / 10``); MAGIC's 10 telescope features are ``(sign(x) log1p(|x|) + 7) / 14``
    (magnitudes beyond 1,095 clipped); breast cancer's 30 non-negative measurements are
    ``log1p(x) / 8`` (beyond 2,980 clipped). So every bound is public and none is computed
    from the data: ``bounds=(0, 1)``, the classes are the data set's documented labels, and the
    untuned ``data_norm`` is ``sqrt(d)``, the largest norm of a row (``d`` features; the space
    ``data_norm`` in ``[sqrt(d) / 20, sqrt(d)]``, clipping rows for less noise). The untuned
    models are diffprivlib's defaults otherwise (``C=1``, ``var_smoothing=1e-9``, 10 trees of
    depth 5). Phoneme and optical digits are held out (``HELD_OUT``): they were kept out of the
    choice of the library's defaults, and are reported apart.
Seeds
    Each seed draws a stratified test set (20 %) that nobody tunes on; every mode tunes on the
    rest (the tuning records), at every total epsilon of ``EPSILONS``. The splits, the
    candidates, ``K`` and the released scores' noise are seeded by the seed; the models' own
    noise is not: ``random_state=None``, diffprivlib's default, gives every fit fresh
    randomness, as a user has it (with an integer, every candidate of a search and its refit
    would draw the same noise and the same random trees, since scikit-learn's ``clone``
    copies it, and the selection would pick the refit's noise too).
Modes (test accuracy on the same test records)
    - ``untuned_whole``: the untuned model fitted once at the whole epsilon on every tuning
      record (the alternative a user has for the same guarantee);
    - ``composed``: the previous way, fits composed one by one:
      ``PrivateBOSearchCV(estimator_epsilon=eps_fit, privacy_budget=(eps - eps_fit, DELTA),
      n_iter=N_ITER_COMPOSED)``, one permute-and-flip choice among the untuned model and
      ``N_ITER_COMPOSED`` candidates, the pick refitted: a training record pays for
      ``N_ITER_COMPOSED + 2`` fits, so ``eps_fit = eps / (N_ITER_COMPOSED + 2)`` and the
      report's end-to-end total is at most ``eps`` (asserted);
    - ``auto``: the default, ``PrivateBOSearchCV(privacy_unit="record", privacy_budget=(eps,
      DELTA), estimator_epsilon="auto", n_iter=N_ITER)``: a private selection among privately
      trained candidates (a geometric number ``K`` of them, mean ``N_ITER``) with the whole
      budget, the pick's own model deployed;
    - ``auto_logarithmic``, ``auto_baseline``, ``auto_n20`` and ``auto_n50``: ``auto`` with
      ``K`` from the logarithmic law (about two candidates' epsilon instead of three), with
      the untuned model fitted and released once beside the candidates
      (``untuned="baseline"``: kept unless a candidate beats it by the selector's margin, one
      more candidate's cost), or with a mean of ``2 N_ITER`` or ``5 N_ITER`` candidates (the
      geometric law's cost does not depend on its mean; 50 is the searches' default
      ``n_iter``, so ``auto_n50`` is the searches' defaults, the targets' mode);
      :func:`privtune.private_models.select_private_model` on the split the search uses
      (``holdout_split(est, None, 0.2, seed, X, y, stratify=False)``; with ``N_ITER`` this
      reproduces ``auto`` exactly, which the tests check), run apart (:func:`run_own`) and
      merged by seed;
    - ``refit_0.2``, ``refit_0.33`` and ``refit_0.5``: the selection with a share of epsilon
      (0.2, a third, 0.5), the pick refitted on every tuning record with the rest at
      :func:`privtune.private_models.at_epsilon` (the two composed by addition);
      ``refit_logarithmic``: ``refit_0.33`` with the logarithmic law;
    - ``subsampled`` (after Koskela & Kulkarni, "Practical differentially private
      hyperparameter tuning with subsampling", 2023): the selection (geometric ``K``, mean
      ``N_ITER``) runs on a Poisson subsample of the tuning records (each kept independently
      with probability ``SUBSAMPLE_RATE`` = q, by a seeded draw that does not look at them) at
      ``(eps_in, DELTA / q)`` with ``eps_in = log(1 + (e^{eps/3} - 1) / q)``, and the pick is
      refitted on every tuning record at the other two thirds. The total stated is
      ``log(1 + q (e^{eps_sel} - 1)) + eps_refit <= eps`` at ``delta = q (DELTA / q) = DELTA``,
      ``eps_sel`` the selection's epsilon on the subsample (dp-accounting's). **Assumed, not
      proved here**: (i) the amplification theorem for Poisson subsampling, an
      ``(e, d)``-DP mechanism run on a Poisson subsample of rate q being
      ``(log(1 + q (e^e - 1)), q d)``-DP (Li, Qardaji & Su 2012; Balle, Barthe & Gaboardi
      2018), which holds for neighbouring data sets that differ by adding or removing one
      record; (ii) that the selection on the subsample is ``(eps_sel, DELTA / q)``-DP under
      adding or removing a record: privtune proves it for replacing one record at a fixed
      number of validation records, and here that number (the subsample's hold-out) and so
      the scores' noise scale depend on the subsample's size, and diffprivlib states its
      models' guarantees for its own neighbouring relation; (iii) the refit's epsilon adds to
      it (basic composition, as the library composes). Under replacing one record, (i) gives
      at most twice the selection's epsilon instead (a replacement is a removal and an
      addition). The subsample also shrinks the training and validation sets five-fold: the
      mode trades statistical power for the amplification (and for compute);
    - ``exact``: the non-private ceiling: the scikit-learn counterpart (``LogisticRegression``,
      ``GaussianNB``, ``RandomForestClassifier``) and its untuned configuration, plus
      ``N_ITER`` random candidates of its own space (``EXACT_SPACES``), scored exactly on the
      same hold-out, the best refitted on every tuning record; ``untuned_exact`` is the
      counterpart's untuned configuration fitted on every tuning record.

The summary gives, per task and epsilon, each mode's mean test accuracy ± SE over seeds, and
its difference to ``untuned_whole`` paired by seed, in points, with a verdict beyond noise
(mean beyond two standard errors). The targets (at epsilon 3, and the same at 1):
``DEFAULT_MODE`` (the searches' defaults) beats ``untuned_whole`` beyond noise on most tasks
where non-private tuning gains at least 2 points (``exact`` over ``untuned_exact``), and is
never more than a point below ``untuned_whole`` on any task; held-out tasks apart.

Usage::

    python -m benchmarks.diffprivlib_models run          # the missing runs, then the summary
    python -m benchmarks.diffprivlib_models summarize
    python -m benchmarks.diffprivlib_models --quick      # smoke run (tests)

One run is a task at one epsilon and one seed (every private mode; the ``own_*`` variants in
a run of their own), or a task's ``exact`` mode at one seed; the runs are resumable
(``benchmarks/results/diffprivlib_models/runs.jsonl.gz``).
Needs diffprivlib, which needs scikit-learn below 1.8 (``pip install -e ".[diffprivlib]"``).
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from sklearn.model_selection import train_test_split

from benchmarks import harness
from benchmarks.datasets import load_dataset
from privtune import PrivateBOSearchCV
from privtune.private_models import at_epsilon, select_private_model
from privtune.records import holdout_split, record_metric
from privtune.space import as_space

MODELS = ("logistic", "naive_bayes", "random_forest")
#: The data sets the library's defaults may be chosen on, and those held out (reported apart).
TUNING = ("spambase", "penbased", "magic", "breast_cancer")
HELD_OUT = ("phoneme", "optdigits")
TASKS = [
    "logistic/spambase",
    "logistic/magic",
    "logistic/breast_cancer",
    "naive_bayes/spambase",
    "naive_bayes/penbased",
    "naive_bayes/magic",
    "random_forest/spambase",
    "random_forest/penbased",
    "random_forest/magic",
    "logistic/phoneme",
    "naive_bayes/optdigits",
    "random_forest/phoneme",
]
EPSILONS = (0.5, 1.0, 3.0)
DELTA = 1e-6
N_ITER = 10  # the selection's mean number of candidates; exact tuning's random candidates
N_ITER_COMPOSED = 7  # composed: the untuned model, 7 candidates and the refit (9 fits)
VALIDATION = 0.2  # the searches' hold-out fraction
SUBSAMPLE_RATE = 0.2
NOISE_SEED = 10_000  # the score releases' noise: NOISE_SEED + seed
#: The modes, in the tables' order.
PRIVATE_MODES = (
    "untuned_whole",
    "composed",
    "auto",
    "auto_logarithmic",
    "auto_baseline",
    "auto_n20",
    "auto_n50",
    "refit_0.2",
    "refit_0.33",
    "refit_0.5",
    "refit_logarithmic",
    "subsampled",
)
MODES = (*PRIVATE_MODES, "exact", "untuned_exact")
#: The mode the targets are checked on: the searches' defaults (``n_iter=50``).
DEFAULT_MODE = "auto_n50"
#: The modes the plot draws (the tables have them all).
PLOT_MODES = ("untuned_whole", "composed", "auto", DEFAULT_MODE, "refit_0.33", "subsampled")
#: The selection's share of epsilon when the pick is refitted (``refit_0.33``, ``subsampled``).
REFIT_SHARE = 1.0 / 3.0
#: The modes that refit the pick with the rest of the budget: (the selection's share of
#: epsilon, law of K, Poisson subsampling rate or None).
VARIANTS = {
    "refit_0.2": (0.2, "geometric", None),
    "refit_0.33": (REFIT_SHARE, "geometric", None),
    "refit_0.5": (0.5, "geometric", None),
    "refit_logarithmic": (REFIT_SHARE, "logarithmic", None),
    "subsampled": (REFIT_SHARE, "geometric", SUBSAMPLE_RATE),
}
#: The variants of ``auto`` (the pick's own model, the whole budget to the selection),
#: measured in runs of their own, by group (``*-<group>-*``): (law of K, its mean in
#: multiples of ``--n-iter``, how the untuned model takes part).
OWN_RUNS = {
    "own": {
        "auto_logarithmic": ("logarithmic", 1, "candidate"),
        "auto_baseline": ("geometric", 1, "baseline"),
        "auto_n20": ("geometric", 2, "candidate"),
    },
    "own50": {"auto_n50": ("geometric", 5, "candidate")},
}
OWN_VARIANTS = {m: v for group in OWN_RUNS.values() for m, v in group.items()}
LOG = "log-uniform"
#: The targets' thresholds, in points: exact tuning's gain that makes a task tunable, and the
#: largest loss of the default allowed on any task.
TUNABLE, MAX_LOSS = 2.0, 1.0
TARGET_EPSILONS = (3.0, 1.0)

#: Each data set's number of features and classes (public: the data sets' documentation).
SHAPES = {
    "spambase": (57, 2),
    "penbased": (16, 10),
    "magic": (10, 2),
    "breast_cancer": (30, 2),
    "phoneme": (5, 2),
    "optdigits": (64, 10),
}


def data(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """The records of ``dataset`` after its fixed public transform onto ``[0, 1]`` (record by
    record, clipped; module docstring)."""
    X, y = load_dataset(dataset)
    if dataset == "penbased":
        X = X / 100.0
    elif dataset == "optdigits":
        X = X / 16.0
    elif dataset == "spambase":
        X = np.log1p(X) / np.r_[np.full(54, np.log1p(100.0)), np.full(3, 10.0)]
    elif dataset == "phoneme":
        X = (X + 5.0) / 10.0
    elif dataset == "magic":
        X = (np.sign(X) * np.log1p(np.abs(X)) + 7.0) / 14.0
    elif dataset == "breast_cancer":
        X = np.log1p(X) / 8.0
    else:
        raise ValueError(f"no public transform for {dataset!r}")
    if X.shape[1] != SHAPES[dataset][0]:
        raise ValueError(f"{dataset}: {X.shape[1]} features, expected {SHAPES[dataset][0]}")
    return np.clip(X, 0.0, 1.0), y


def dp_model(task: str, epsilon: float, random_state: int | None = None) -> Any:
    """The untuned diffprivlib model of ``task`` at ``epsilon`` per fit, its bounds public.

    ``random_state=None`` (diffprivlib's default, the benchmark's): every fit draws fresh
    noise. An integer makes every clone of the model, so every candidate of a search and its
    refit, draw the same noise (tests only)."""
    from diffprivlib.models import GaussianNB, LogisticRegression, RandomForestClassifier

    name, dataset = task.split("/")
    n_features, n_classes = SHAPES[dataset]
    if name == "logistic":
        norm = math.sqrt(n_features)  # the largest norm of a row in [0, 1]^d
        return LogisticRegression(epsilon=epsilon, data_norm=norm, random_state=random_state)
    if name == "naive_bayes":
        return GaussianNB(epsilon=epsilon, bounds=(0.0, 1.0), random_state=random_state)
    return RandomForestClassifier(
        epsilon=epsilon,
        bounds=(0.0, 1.0),
        classes=list(range(n_classes)),
        random_state=random_state,
    )


def space(task: str) -> dict:
    """The diffprivlib model's search space (fixed before the data is read)."""
    name, dataset = task.split("/")
    if name == "logistic":
        norm = math.sqrt(SHAPES[dataset][0])
        return {"C": (1e-3, 1e2, LOG), "data_norm": (norm / 20.0, norm, LOG)}
    if name == "naive_bayes":
        return {"var_smoothing": (1e-6, 1.0, LOG)}
    return {"n_estimators": (1, 100, LOG), "max_depth": (1, 10)}


#: The scikit-learn counterparts' spaces (``exact``); GaussianNB's var_smoothing is relative
#: to the largest variance in scikit-learn, absolute in diffprivlib.
EXACT_SPACES = {
    "logistic": {"C": (1e-3, 1e2, LOG)},
    "naive_bayes": {"var_smoothing": (1e-12, 1.0, LOG)},
    "random_forest": {"n_estimators": (10, 100, LOG), "max_depth": (2, 30)},
}


def exact_model(task: str, seed: int) -> Any:
    """The untuned scikit-learn counterpart of ``task``'s model."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    name = task.split("/")[0]
    if name == "logistic":
        return LogisticRegression(max_iter=1000)
    if name == "naive_bayes":
        return GaussianNB()
    return RandomForestClassifier(random_state=seed, n_jobs=1)


def split(task: str, seed: int, n_records: int | None) -> tuple[np.ndarray, ...]:
    """``X_tune, X_test, y_tune, y_test``: a stratified 20 % test set nobody tunes on."""
    X, y = data(task.split("/")[1])
    if n_records is not None:
        X, y = X[:n_records], y[:n_records]
    return tuple(train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y))


def holdout(task: str, seed: int, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The training and validation indices the search uses (not stratified)."""
    ((train, val),) = holdout_split(
        dp_model(task, 1.0), None, VALIDATION, seed, X, y, stratify=False
    )
    return train, val


def amplified(epsilon: float, q: float) -> float:
    """The epsilon of an ``epsilon``-DP mechanism run on a Poisson subsample of rate ``q``."""
    return math.log1p(q * math.expm1(epsilon))


def unamplified(epsilon: float, q: float) -> float:
    """The inverse of :func:`amplified`: the epsilon on the subsample that ``q`` takes to
    ``epsilon``."""
    return math.log1p(math.expm1(epsilon) / q)


def select_and_refit(
    task: str,
    epsilon: float,
    seed: int,
    X: np.ndarray,
    y: np.ndarray,
    *,
    share: float,
    distribution: str,
    n_iter: int,
    subsample: float | None = None,
    random_state: int | None = None,
    untuned: str = "candidate",
) -> tuple[Any, dict]:
    """``auto`` by hand: :func:`~privtune.private_models.select_private_model` with ``share``
    of ``epsilon`` (on a Poisson subsample of rate ``subsample`` if given, at the epsilon it
    amplifies to that share), then the pick refitted on every record with the rest (with
    ``share=1``, the pick's own model, as ``auto``). Returns the model and what it
    cost."""
    estimator = dp_model(task, 1.0, random_state)
    refit_epsilon = epsilon * (1.0 - share)
    budget = (epsilon * share, DELTA)
    Xs, ys = X, y
    if subsample is not None:  # a seeded draw per record, independent of the records
        keep = np.random.default_rng([seed, 1]).random(len(y)) < subsample
        Xs, ys = X[keep], y[keep]
        budget = (unamplified(epsilon * share, subsample), DELTA / subsample)
    train, val = holdout(task, seed, Xs, ys)
    sample_space = as_space(space(task))
    out = select_private_model(
        estimator,
        lambda rng: sample_space.from_unit(rng.random(sample_space.dim)),
        Xs[train],
        ys[train],
        Xs[val],
        ys[val],
        record_metric("accuracy"),
        privacy_budget=budget,
        mean=n_iter,
        distribution=distribution,
        untuned=untuned,
        seed=seed,
        noise_seed=NOISE_SEED + seed,
    )
    if out.model is None:
        raise RuntimeError(f"{task}: K = 0 candidates drawn")
    selection = out.plan.epsilon
    delta = out.plan.delta
    if subsample is not None:
        selection, delta = amplified(selection, subsample), delta * subsample
    if share == 1.0:
        model = out.model
    else:
        model = at_epsilon(estimator, refit_epsilon, out.parameters)
        model.set_params(**(out.params or {})).fit(X, y)
    cost = {
        "epsilon": selection + refit_epsilon,
        "delta": delta,
        "selection_epsilon": selection,
        "refit_epsilon": refit_epsilon,
        "epsilon_per_candidate": out.plan.epsilon_per_candidate,
        "n_candidates": out.n_candidates,
        "params": out.params,
        "n_select": len(ys),
    }
    return model, cost


def _params(params: dict | None) -> dict | None:
    return None if params is None else {k: repr(v) for k, v in params.items()}


def run_own(
    task: str, epsilon: float, seed: int, n_iter: int, n_records: int | None, group: str
) -> dict:
    """One seed of ``task`` at a total ``epsilon``: the variants of ``auto`` of
    ``OWN_RUNS[group]``, on the test records of :func:`run_private`."""
    X, X_test, y, y_test = split(task, seed, n_records)
    modes: dict[str, dict] = {}
    for mode, (law, times, untuned) in OWN_RUNS[group].items():
        mean = times * n_iter
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy's deprecations inside diffprivlib
            model, cost = select_and_refit(
                task,
                epsilon,
                seed,
                X,
                y,
                share=1.0,
                distribution=law,
                n_iter=mean,
                untuned=untuned,
            )
            accuracy = float(model.score(X_test, y_test))
        _check_spent(task, mode, cost, epsilon)
        cost["params"] = _params(cost.get("params"))
        modes[mode] = {"accuracy": accuracy, **cost, "seconds": time.perf_counter() - t0}
    return {
        "kind": group,
        "task": task,
        "epsilon": epsilon,
        "seed": seed,
        "modes": modes,
        "seconds": sum(m["seconds"] for m in modes.values()),
    }


def _check_spent(task: str, mode: str, cost: dict, epsilon: float) -> None:
    if cost["epsilon"] > epsilon + 1e-9 or cost["delta"] > DELTA * (1 + 1e-9):
        raise AssertionError(f"{task} {mode}: {cost} spends more than ({epsilon}, {DELTA})")


def run_private(
    task: str,
    epsilon: float,
    seed: int,
    n_iter: int,
    n_iter_composed: int,
    n_records: int | None,
) -> dict:
    """One seed of ``task`` at a total ``epsilon`` for every record: every private mode but
    ``OWN_VARIANTS`` (:func:`run_own`), on the same test records."""
    X, X_test, y, y_test = split(task, seed, n_records)
    modes: dict[str, dict] = {}

    def timed(mode: str, compute) -> None:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy's deprecations inside diffprivlib
            model, cost = compute()
            accuracy = float(model.score(X_test, y_test))
        _check_spent(task, mode, cost, epsilon)
        cost["params"] = _params(cost.get("params"))
        modes[mode] = {"accuracy": accuracy, **cost, "seconds": time.perf_counter() - t0}

    def whole() -> tuple[Any, dict]:
        model = dp_model(task, epsilon).fit(X, y)
        return model, {"epsilon": epsilon, "delta": 0.0}

    def search(model_epsilon: float, **kwargs: Any) -> PrivateBOSearchCV:
        return PrivateBOSearchCV(
            dp_model(task, model_epsilon),
            space(task),
            privacy_unit="record",
            random_state=seed,
            noise_random_state=NOISE_SEED + seed,
            **kwargs,
        ).fit(X, y)

    def composed() -> tuple[Any, dict]:
        fit = epsilon / (n_iter_composed + 2)  # the untuned model, the candidates, the refit
        s = search(  # a number states each fit's guarantee: the model's own epsilon is it
            fit,
            privacy_budget=(epsilon - fit, DELTA),
            estimator_epsilon=fit,
            n_iter=n_iter_composed,
        )
        if s.best_estimator_.epsilon != fit:
            raise AssertionError(f"{task} composed: the refit is not at epsilon {fit}")
        total = s.privacy_report_["end_to_end"]
        cost = {
            "epsilon": total["epsilon"],
            "delta": total.get("delta", 0.0),
            "epsilon_per_fit": fit,
            "params": s.best_params_,
        }
        return s.best_estimator_, cost

    def auto() -> tuple[Any, dict]:
        s = search(  # the search sets the model's own epsilon
            1.0,
            privacy_budget=(epsilon, DELTA),
            estimator_epsilon="auto",
            n_iter=n_iter,
        )
        report = s.privacy_report_
        if not math.isclose(s.best_estimator_.epsilon, report["fit_epsilon"]):
            raise AssertionError(f"{task} auto: the model is not the pick's own")
        cost = {
            "epsilon": report["epsilon"],
            "delta": report["delta"],
            "selection_epsilon": report["epsilon"],
            "refit_epsilon": 0.0,
            "epsilon_per_candidate": report["fit_epsilon"],
            "n_candidates": s.n_candidates_,
            "params": s.best_params_,
        }
        return s.best_estimator_, cost

    timed("untuned_whole", whole)
    timed("composed", composed)
    timed("auto", auto)
    for mode, (share, law, q) in VARIANTS.items():
        timed(
            mode,
            functools.partial(
                select_and_refit,
                task,
                epsilon,
                seed,
                X,
                y,
                share=share,
                distribution=law,
                n_iter=n_iter,
                subsample=q,
            ),
        )
    return {
        "kind": "private",
        "task": task,
        "epsilon": epsilon,
        "seed": seed,
        "n_iter": n_iter,
        "n_iter_composed": n_iter_composed,
        "n_tune": len(y),
        "n_test": len(y_test),
        "modes": modes,
        "seconds": sum(m["seconds"] for m in modes.values()),
    }


def run_exact(task: str, seed: int, n_iter: int, n_records: int | None) -> dict:
    """The non-private ceiling of ``task`` at one seed: the scikit-learn counterpart, its
    untuned configuration and ``n_iter`` random candidates scored exactly on the search's
    hold-out, the best refitted on every tuning record; and the untuned counterpart."""
    from sklearn.base import clone

    t0 = time.perf_counter()
    X, X_test, y, y_test = split(task, seed, n_records)
    train, val = holdout(task, seed, X, y)
    untuned = exact_model(task, seed)
    exact_space = as_space(EXACT_SPACES[task.split("/")[0]])
    rng = np.random.default_rng(seed)
    candidates = [{}] + [exact_space.from_unit(rng.random(exact_space.dim)) for _ in range(n_iter)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings
        scores = [
            clone(untuned).set_params(**p).fit(X[train], y[train]).score(X[val], y[val])
            for p in candidates
        ]
        best = candidates[int(np.argmax(scores))]
        exact = clone(untuned).set_params(**best).fit(X, y).score(X_test, y_test)
        plain = clone(untuned).fit(X, y).score(X_test, y_test)
    return {
        "kind": "exact",
        "task": task,
        "seed": seed,
        "n_iter": n_iter,
        "exact": float(exact),
        "untuned_exact": float(plain),
        "params": _params(best),
        "seconds": time.perf_counter() - t0,
    }


def _name(task: str, what: str, seed: int) -> str:
    return f"{task.replace('/', '-')}-{what}-{seed}"


def _describe(result: dict) -> str:
    if result["kind"] == "exact":
        return f"exact {100 * result['exact']:.1f} ({result['seconds']:.0f} s)"
    modes = result["modes"]
    if result["kind"] in OWN_RUNS:
        return ", ".join(f"{m} {100 * v['accuracy']:.1f}" for m, v in modes.items())
    return (
        f"untuned_whole {100 * modes['untuned_whole']['accuracy']:.1f}, "
        f"auto {100 * modes['auto']['accuracy']:.1f} ({result['seconds']:.0f} s)"
    )


def run(args: argparse.Namespace) -> None:
    """Every missing run, seed by seed (so that a partial run covers every task)."""
    runs = []
    for seed in args.seeds:
        for task in args.tasks:
            runs.append(
                (
                    _name(task, "exact", seed),
                    functools.partial(run_exact, task, seed, args.n_iter, args.n_records),
                )
            )
            for eps in args.epsilons:
                runs.append(
                    (
                        _name(task, f"eps{eps:g}", seed),
                        functools.partial(
                            run_private,
                            task,
                            eps,
                            seed,
                            args.n_iter,
                            args.n_iter_composed,
                            args.n_records,
                        ),
                    )
                )
                runs.extend(
                    (
                        _name(task, f"eps{eps:g}-{group}", seed),
                        functools.partial(
                            run_own, task, eps, seed, args.n_iter, args.n_records, group
                        ),
                    )
                    for group in OWN_RUNS
                )
    harness.collect_runs(harness.RunStore(args.out, "diffprivlib_models"), runs, _describe)


# -- summary -----------------------------------------------------------------------------------


def _verdict(diffs: np.ndarray) -> int:
    """+1 / -1 when the mean of ``diffs`` is beyond two standard errors of zero, else 0."""
    if diffs.size < 2:
        return 0
    mean, se = harness.mean_se(diffs)
    return int(np.sign(mean)) if abs(mean) > 2 * se else 0


def _rows(runs: list[dict], args: argparse.Namespace) -> list[dict]:
    """One row per task and epsilon: every mode's accuracy and its paired difference to
    ``untuned_whole``, over the seeds that have both the private run and the exact one."""
    exact = {(r["task"], r["seed"]): r for r in runs if r["kind"] == "exact"}
    own: dict[tuple, dict] = {}  # the variants of auto, merged by task, epsilon and seed
    for r in runs:
        if r["kind"] in OWN_RUNS:
            own.setdefault((r["task"], r["epsilon"], r["seed"]), {}).update(r["modes"])
    runs = [  # a seed counts when it has every private mode
        {**r, "modes": {**r["modes"], **own[(r["task"], r["epsilon"], r["seed"])]}}
        for r in runs
        if r["kind"] == "private"
        and set(OWN_VARIANTS) <= set(own.get((r["task"], r["epsilon"], r["seed"]), ()))
    ]
    rows = []
    for task in args.tasks:
        for eps in args.epsilons:
            mine = [
                r
                for r in runs
                if r["kind"] == "private"
                and r["task"] == task
                and r["epsilon"] == eps
                and (task, r["seed"]) in exact
            ]
            if not mine:
                continue
            acc = {m: np.array([r["modes"][m]["accuracy"] for r in mine]) for m in PRIVATE_MODES}
            for m in ("exact", "untuned_exact"):
                acc[m] = np.array([exact[(task, r["seed"])][m] for r in mine])
            row: dict[str, Any] = {
                "task": task,
                "held_out": task.split("/")[1] in HELD_OUT,
                "epsilon": eps,
                "n_seeds": len(mine),
                "seeds": sorted(r["seed"] for r in mine),
            }
            gain = 100.0 * (acc["exact"] - acc["untuned_exact"])
            row["nonprivate_gain"] = float(np.mean(gain))
            row["nonprivate_gain_se"] = harness.standard_error(gain)
            for m in MODES:
                mean, se = harness.mean_se(100.0 * acc[m])
                row[m] = {"accuracy": float(mean), "se": None if se is None else float(se)}
                if m != "untuned_whole":
                    diffs = 100.0 * (acc[m] - acc["untuned_whole"])
                    row[m]["minus_untuned_whole"] = float(np.mean(diffs))
                    row[m]["minus_untuned_whole_se"] = harness.standard_error(diffs)
                    row[m]["verdict"] = _verdict(diffs)
                if m in PRIVATE_MODES:
                    row[m]["max_epsilon"] = max(r["modes"][m]["epsilon"] for r in mine)
                    row[m]["mean_seconds"] = float(
                        np.mean([r["modes"][m]["seconds"] for r in mine])
                    )
            rows.append(row)
    return rows


def _targets(rows: list[dict], mode: str = DEFAULT_MODE) -> dict:
    """The targets, per epsilon of ``TARGET_EPSILONS`` and per group of data sets: ``mode``
    beats ``untuned_whole`` beyond noise on most tasks where non-private tuning gains at
    least ``TUNABLE`` points (``exact`` over ``untuned_exact``), and is never more than
    ``MAX_LOSS`` points below it."""
    out: dict[str, Any] = {"mode": mode}
    for eps in TARGET_EPSILONS:
        for held, group in ((False, "tuning"), (True, "held_out")):
            mine = [r for r in rows if r["epsilon"] == eps and r["held_out"] == held]
            if not mine:
                continue
            tunable = [r for r in mine if r["nonprivate_gain"] >= TUNABLE]
            wins = [r["task"] for r in tunable if r[mode]["verdict"] == 1]
            losses = {
                r["task"]: round(r[mode]["minus_untuned_whole"], 2)
                for r in mine
                if r[mode]["minus_untuned_whole"] < -MAX_LOSS
            }
            out[f"eps{eps:g}_{group}"] = {
                "tasks": len(mine),
                "tunable": [r["task"] for r in tunable],
                "wins_beyond_noise": wins,
                "most_won": len(wins) > len(tunable) / 2 if tunable else None,
                "more_than_a_point_below": losses,
                "never_a_point_below": not losses,
                "below_beyond_noise": [r["task"] for r in mine if r[mode]["verdict"] == -1],
            }
    return out


def _mode_tally(rows: list[dict]) -> dict:
    """Per mode and epsilon, over the tuning tasks and the held-out ones apart: wins, ties and
    losses against ``untuned_whole`` (beyond noise) and the mean difference in points."""
    out: dict[str, Any] = {}
    for m in MODES[1:]:
        for eps in sorted({r["epsilon"] for r in rows}):
            for held, group in ((False, "tuning"), (True, "held_out")):
                mine = [r for r in rows if r["epsilon"] == eps and r["held_out"] == held]
                if not mine:
                    continue
                verdicts = [r[m]["verdict"] for r in mine]
                out.setdefault(m, {})[f"eps{eps:g}_{group}"] = {
                    "wins": verdicts.count(1),
                    "ties": verdicts.count(0),
                    "losses": verdicts.count(-1),
                    "mean_difference": float(np.mean([r[m]["minus_untuned_whole"] for r in mine])),
                    "worst_difference": float(min(r[m]["minus_untuned_whole"] for r in mine)),
                }
    return out


def summarize(args: argparse.Namespace) -> harness.Report:
    """Test accuracy per task, epsilon and mode (mean ± SE over seeds), the paired differences
    to ``untuned_whole``, the targets, and the tally of every mode."""
    runs = [
        r
        for r in harness.load_runs(harness.RunStore(args.out, "diffprivlib_models"))
        if r.get("kind") in ("private", "exact", *OWN_RUNS)
        and r["task"] in args.tasks
        and r["seed"] in args.seeds
    ]
    rows = _rows(runs, args)
    result = {
        "benchmark": "diffprivlib_models",
        "delta": DELTA,
        "n_iter": args.n_iter,
        "n_iter_composed": args.n_iter_composed,
        "subsample_rate": SUBSAMPLE_RATE,
        "refit_share": REFIT_SHARE,
        "held_out": list(HELD_OUT),
        "n_runs": len(runs),
        "targets": _targets(rows),
        "modes": _mode_tally(rows),
        "rows": rows,
    }
    return harness.Report(
        result, _markdown(result), lambda path: _plot(rows, path), _headline(result)
    )


def _cell(entry: dict, key: str = "accuracy", se: str = "se") -> str:
    return harness.format_mean_se(entry[key], entry[se], "+.2f" if key != "accuracy" else ".2f")


def _difference(entry: dict) -> str:
    mark = {1: " ▲", -1: " ▼", 0: ""}[entry["verdict"]]
    return _cell(entry, "minus_untuned_whole", "minus_untuned_whole_se") + mark


def _headline(result: dict) -> str:
    lines = []
    mode = result["targets"]["mode"]
    for r in result["rows"]:
        lines.append(
            f"{r['task']} eps={r['epsilon']:g} ({r['n_seeds']} seeds): untuned_whole "
            f"{r['untuned_whole']['accuracy']:.2f}, {mode} {_difference(r[mode])}, "
            f"composed {_difference(r['composed'])}, exact {r['exact']['accuracy']:.2f}"
        )
    for key, t in result["targets"].items():
        if key == "mode":
            continue
        lines.append(
            f"{key}: {mode} wins beyond noise on {len(t['wins_beyond_noise'])} of "
            f"{len(t['tunable'])} tunable tasks; more than a point below on "
            f"{len(t['more_than_a_point_below'])} of {t['tasks']}"
        )
    return "\n".join(lines)


def _markdown(result: dict) -> str:
    rows = result["rows"]
    lines = [
        "# diffprivlib's models tuned with every record protected",
        "",
        f"Test accuracy in %, mean ± SE over seeds; differences in points to `untuned_whole` "
        f"(the untuned model fitted once at the whole ε), paired by seed, ▲/▼ beyond two "
        f"standard errors. δ = {DELTA:g}; `auto` and the refit modes: about "
        f"{result['n_iter']} candidates (`auto_n20`, `auto_n50`: 20, 50); `composed`: "
        f"{result['n_iter_composed']} candidates and the untuned model; `subsampled`: Poisson "
        f"rate {SUBSAMPLE_RATE:g}. Held out: {', '.join(HELD_OUT)}.",
        "",
        f"## Targets (`{result['targets']['mode']}`, the searches' defaults)",
        "",
        "| ε, data sets | tasks | tunable (non-private tuning gains ≥ 2) | wins beyond noise "
        "| more than a point below | below beyond noise |",
        "|---|---|---|---|---|---|",
    ]
    for key, t in result["targets"].items():
        if key == "mode":
            continue
        below = ", ".join(f"{k} ({v:+.2f})" for k, v in t["more_than_a_point_below"].items())
        lines.append(
            f"| {key} | {t['tasks']} | {len(t['tunable'])} | "
            f"{len(t['wins_beyond_noise'])}"
            f"{' (most)' if t['most_won'] else ' (not most)' if t['tunable'] else ''} | "
            f"{below or 'none'} | {', '.join(t['below_beyond_noise']) or 'none'} |"
        )
    lines += [
        "",
        "## Every mode against `untuned_whole`: tasks won, tied, lost beyond noise "
        "(mean difference; worst)",
        "",
        "| mode | " + " | ".join(k for k in next(iter(result["modes"].values()), {})) + " |",
        "|---|" + "---|" * len(next(iter(result["modes"].values()), {})),
    ]
    for m, tally in result["modes"].items():
        cells = [
            f"{t['wins']}/{t['ties']}/{t['losses']} ({t['mean_difference']:+.2f}; "
            f"{t['worst_difference']:+.2f})"
            for t in tally.values()
        ]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    for eps in sorted({r["epsilon"] for r in rows}):
        mine = [r for r in rows if r["epsilon"] == eps]
        lines += [
            "",
            f"## ε = {eps:g}: test accuracy",
            "",
            "| task | seeds | non-private tuning's gain | " + " | ".join(MODES) + " |",
            "|---|---|---|" + "---|" * len(MODES),
        ]
        for r in mine:
            name = r["task"] + (" (held out)" if r["held_out"] else "")
            gain = harness.format_mean_se(r["nonprivate_gain"], r["nonprivate_gain_se"], "+.2f")
            cells = [_cell(r[m]) for m in MODES]
            lines.append(f"| {name} | {r['n_seeds']} | {gain} | " + " | ".join(cells) + " |")
        lines += [
            "",
            f"## ε = {eps:g}: difference to `untuned_whole` (points)",
            "",
            "| task | " + " | ".join(MODES[1:]) + " | largest ε spent |",
            "|---|" + "---|" * len(MODES),
        ]
        for r in mine:
            name = r["task"] + (" (held out)" if r["held_out"] else "")
            spent = max(r[m]["max_epsilon"] for m in PRIVATE_MODES)
            cells = [_difference(r[m]) for m in MODES[1:]]
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {spent:.3f} |")
    return "\n".join(lines) + "\n"


@harness.figure
def _plot(plt: Any, rows: list[dict], path: Path) -> None:
    """Test accuracy against the total epsilon, one panel per task, one line per mode of
    ``PLOT_MODES``, the exact (non-private) ceiling a horizontal line."""
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    if not tasks:
        return
    # one panel per task, and one for the legend
    fig, axes = harness.panel_grid(len(tasks) + 1, 3.4, 2.9, ncols=5)
    for ax, task in zip(axes, tasks, strict=False):
        mine = sorted((r for r in rows if r["task"] == task), key=lambda r: r["epsilon"])
        eps = [r["epsilon"] for r in mine]
        for i, m in enumerate(PLOT_MODES):  # shifted a little apart, so bars stay visible
            shift = 1.0 + 0.025 * (i - (len(PLOT_MODES) - 1) / 2)
            ax.errorbar(
                [e * shift for e in eps],
                [r[m]["accuracy"] for r in mine],
                yerr=[r[m]["se"] or 0.0 for r in mine],
                label=m,
                capsize=2,
                linewidth=2.0 if m in (DEFAULT_MODE, "untuned_whole") else 1.0,
                linestyle="-" if m in (DEFAULT_MODE, "untuned_whole", "composed") else ":",
            )
        ceiling = float(np.mean([r["exact"]["accuracy"] for r in mine]))
        ax.axhline(ceiling, color="black", linestyle="--", linewidth=1.0, label="exact")
        ax.set_xscale("log")
        ax.set_xticks(eps, [f"{e:g}" for e in eps])
        ax.minorticks_off()
        ax.set_title(task + (" (held out)" if mine[0]["held_out"] else ""), fontsize=9)
        ax.set_xlabel("total ε for every record")
        ax.set_ylabel("test accuracy (%)")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[-1].axis("off")
    axes[-1].legend(handles, labels, loc="center", fontsize=8)
    harness.save_figure(
        fig, path, title="diffprivlib models tuned with every record protected, mode by mode"
    )


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", nargs="+", default=TASKS, choices=TASKS)
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(range(10)))
    parser.add_argument("--n-iter", type=int, default=N_ITER)
    parser.add_argument("--n-iter-composed", type=int, default=N_ITER_COMPOSED)
    parser.add_argument("--n-records", type=int, default=None, help="the first records only")


def _quick(args: argparse.Namespace) -> None:
    args.tasks = ["logistic/phoneme", "random_forest/penbased"]
    args.epsilons, args.seeds = [1.0], [0, 1]
    args.n_iter, args.n_iter_composed, args.n_records = 3, 2, 1500


BENCHMARK = harness.Benchmark(
    name="diffprivlib_models",
    doc=__doc__,
    quick=(
        "diffprivlib's logistic regression and random forest on 1,500 phoneme and pen-digit "
        "records, epsilon 1, about 3 candidates, two seeds"
    ),
    arguments=_arguments,
    quick_settings=_quick,
    run=run,
    summarize=summarize,
)


def main(argv: list[str] | None = None) -> dict | None:
    """Run or summarize; returns the summary written to ``<out>/diffprivlib_models.json``."""
    return harness.main(BENCHMARK, argv)


if __name__ == "__main__":
    main()
