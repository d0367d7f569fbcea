"""Tuning tasks the other benchmarks do not use: plateaus, unseen models, heavy-tailed noise.

Nine families, each against the samplers a user would otherwise install, on the same tasks,
seeds and trial budgets:

- ``plateau``: spaces where most of the box gives a chance-level model (fractional
  ``min_samples_*``, tiny learning rates, huge penalties or kernel widths), and the synthetic
  objective of the same shape that the tests use (:func:`plateau_objective`);
- ``unseen``: eight ordinary tuning tasks (a decision tree, a random forest, an SVM, AdaBoost,
  an MLP, k-nearest neighbours, histogram gradient boosting, logistic regression) on
  scikit-learn's data sets;
- ``heavy``: smooth test functions (Branin, Hartmann-6, Rosenbrock-4, Ackley-5) observed with
  Student-t noise of two degrees of freedom;
- ``coco``: four functions of the COCO platform's BBOB suite (f1 sphere, f8 Rosenbrock, f15
  rotated Rastrigin, f21 Gallagher's 101 peaks) in 2 and 5 dimensions, one fixed instance each,
  observed with Student-t noise of two degrees of freedom; held out of the tuning of defaults
  until the noisy-score screens used it (the Student-t switch was measured on it too);
- ``gaussian``: the ``heavy`` family's functions with Gaussian noise of the same scale (what the
  switch to a Student-t likelihood on noisy scores costs where the tails are light);
- ``coco_holdout``: four more BBOB functions (f6 attractive sector, f10 rotated ellipsoid, f17
  Schaffer's F7, f22 Gallagher's 21 peaks) in 2 and 5 dimensions with the ``coco`` family's
  noise, added after the ``coco`` family had been used to screen changes for noisy scores: a
  change for noisy scores is decided on the other noisy families and then reported here;
- ``classic``: nine tasks built the way practitioners write spaces: forests (10 trees) and a
  tree over fractional ``min_samples_*``, ``min_weight_fraction_leaf``, ``max_features`` and
  ``min_impurity_decrease`` (best values often at an end of the range), MLPs with batch size,
  learning rate, penalty and the solver's constants (adam, 9 parameters; SGD, 8), an SVM, k-NN,
  AdaBoost and histogram gradient boosting, on wine, breast cancer and digits;
- ``classic_holdout``: four tasks of the same kinds on Pima and Australian
  (``benchmarks/data``), data sets the tuned tasks do not use. They are kept out of every
  tuning of defaults and reported apart;
- ``ridge``: narrow good regions along ridges (the screens of variants since the spread starts
  have used them; the spread starts were kept for their gain there): the forest over
  fractions (``classic``'s space, where most of the box gives a chance-level forest) on phoneme,
  spambase and a 3,000-row subset of pen digits, and histogram gradient boosting whose learning
  rate, depth and number of rounds interact (a small rate needs many deep rounds) on phoneme
  and spambase.

The scikit-learn tasks score 5-fold stratified CV accuracy with folds fixed per seed; a pick is
credited with its exact CV accuracy (deterministic folds: the study's own raw value). Setting
``none`` gives every sampler the exact scores; setting ``10`` releases each score through the
Laplace curator at a per-report epsilon of 10 (value range [0, 1]): privtune's sampler through
its own ``privatize``, Optuna's samplers on the same released values (the same noise draw per
trial number). The heavy, COCO and Gaussian tasks have their own noise; a pick is credited
with the function's noise-free value.

Methods: ``privtune`` (``PrivateGPUCBSampler()``, the default algorithm), ``tpe``, ``gp``
(Optuna's ``GPSampler``, needs torch), ``random``; ``hebo`` (HEBO behind an Optuna sampler,
:mod:`benchmarks.hebo_sampler`; installed separately, skipped without it); ``tgp``, ``ata``
and ``moma`` (privtune's sampler with those algorithms); a variant of privtune's engine is
``privtune:NAME`` with ``--variant NAME='{"optimizer_kwarg": value}'`` (an acquisition with
arguments as ``{"acquisition": {"logei": {"incumbent": "observed"}}}``, the surrogate's priors
as ``{"priors": {"mean_scale": 0.0}}``; ``{"n_startup_trials": 5}`` sets the sampler's
start-up draws, the first of the shared ones). privtune picks with
``recommend_trial`` (the posterior-mean rule); Optuna's samplers with ``study.best_trial`` (with
noise: the largest released value, what a user of them gets).

Reported per family and budget (20, 40, 60 trials): Bayesmark's normalised score,
``100 (1 - (L - L*) / (L_rand - L*))``, with ``L`` the pick's loss (1 - accuracy, or the
function's regret), ``L*`` the best loss any run of the task reached and ``L_rand`` random
search's mean loss at that budget (0: random search; 100: the best known), its mean and its
median over tasks (the mean swings with a task where random search is already near the best
known); the mean rank of the methods per task; the tasks where a method is below random
search beyond two standard errors; and the trapped studies, a study being trapped when its
pick is below random search's median pick on that task at that budget, with those on a seed
where no study of the summary told a configuration above that median (on that seed every
pick is below it, whatever the search: on the scikit-learn tasks the seed's folds decide it);
the studies short of half way, their pick's normalised score below 50 (a trap misses a study
stuck between random search's median and the good region), in all and per task; and for both
counts the two-sided Fisher exact p-value of each method's against the default's (or
GPSampler's when the default is not in the summary).
For the noisy families also the geometric mean over tasks of the regret relative to random
search's.

``summarize --methods default`` names the current default's stored runs ``default`` in each
family (:data:`DEFAULT_RUNS`), ``share`` those of the default before the trust region's guard
(:data:`SHARE_RUNS`), ``cube`` those of the default before the trust region's share of the
proposals (:data:`CUBE_RUNS`), ``spread`` those of the default before one agreeing repeat
decided (:data:`SPREAD_RUNS`), ``top`` those of the default before the spread starts
(:data:`TOP_RUNS`), ``previous`` those of the default before the Student-t switch on the
noisy families (:data:`PREVIOUS_RUNS`); ``--common-seeds`` keeps, per family, the seeds on
which every method ran every task; ``--name`` writes the summary under another name (several
summaries of one store).

Each run is saved in ``results/tuning_suite/runs.jsonl.gz`` when it ends (resumable; several
``run`` processes share the work), with the versions of Python and of the packages its
numbers depend on and the BLAS kernel (:func:`_versions`): a study replays exactly only under
the same versions and kernel (runs stored before they were recorded carry none, or no
kernel).

Usage::

    python -m benchmarks.tuning_suite run --family plateau unseen --settings none
    python -m benchmarks.tuning_suite run --family heavy
    python -m benchmarks.tuning_suite summarize
    python -m benchmarks.tuning_suite trace --tasks rf_fractions_penbased \
        --methods privtune:TRM --seeds 32 --settings none --variant 'TRM={...}'
    python -m benchmarks.tuning_suite --quick
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import os
import platform
import sys
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import optuna
import threadpoolctl
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.ensemble import (
    AdaBoostClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from benchmarks import harness
from benchmarks.datasets import load_dataset
from benchmarks.optuna_tuning import make_sampler, suggest
from privtune import LaplaceCurator, PrivateGPUCBSampler
from privtune.optuna import ATTR_TURN
from privtune.space import Categorical, Integer, Real, SearchSpace

FAMILIES = [
    "plateau", "unseen", "heavy", "classic", "classic_holdout", "ridge", "coco", "gaussian",
    "coco_holdout",
]  # fmt: skip
#: The families of synthetic functions with their own noise (setting ``none`` only).
NOISY_FAMILIES = ("heavy", "coco", "gaussian", "coco_holdout")
METHODS = ["privtune", "tpe", "gp", "random"]
SETTINGS = ["none", "10"]
CHECKPOINTS = [20, 40, 60]
SEEDS = [0, 1, 2, 3, 4]


# -- the tasks ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One tuning task: a space and a function of its parameters (and the run's seed).

    ``evaluate(params, seed, rng)`` returns ``(observed, true)``: the value the sampler is told
    (before any privacy noise) and the value the pick is credited with. ``best`` is the known
    optimum of a synthetic task (``None`` for a scikit-learn one).
    """

    name: str
    family: str
    space: Callable[[], dict]
    evaluate: Callable[[dict, int, np.random.Generator], tuple[float, float]]
    best: float | None = None


def _subset(X: np.ndarray, y: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` rows of a fixed stratified third of ``(X, y)``."""
    keep = StratifiedKFold(3, shuffle=True, random_state=0).split(X, y)
    idx = next(keep)[1][:n]
    return X[idx], y[idx]


@functools.cache
def _data(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "digits":
        return load_digits(return_X_y=True)
    if name == "digits600":  # a 600-row stratified subset: SVMs and MLPs in a fraction of a s
        return _subset(*load_digits(return_X_y=True), 600)
    if name == "wine":
        return load_wine(return_X_y=True)
    if name in ("australian", "pima", "phoneme", "spambase"):
        return load_dataset(name)
    if name == "penbased3000":  # a 3,000-row stratified subset of pen digits
        return _subset(*load_dataset("penbased"), 3000)
    return load_breast_cancer(return_X_y=True)


def _cv_task(name, family, data, make, space) -> Task:
    def evaluate(params, seed, rng):
        X, y = _data(data)
        folds = StratifiedKFold(5, shuffle=True, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            score = float(np.mean(cross_val_score(make(params, seed), X, y, cv=folds)))
        return score, score

    return Task(name, family, space, evaluate)


def _scaled(estimator):
    return make_pipeline(StandardScaler(), estimator)


#: The plateau objective's good region: ``x_1..x_4`` below these widths.
PLATEAU_WIDTHS = np.array([0.6, 0.5, 0.5, 0.15])


def plateau_objective(x) -> float:
    """A 6-parameter objective shaped like a random forest with fractional ``min_samples_*``.

    ``0.1`` plus a deterministic jitter below ``0.003`` (uncorrelated between nearby points,
    like chance-level CV accuracies) on most of the cube, and ``0.1 + 0.8 g (0.7 + 0.3 x_0)``
    where ``g = prod_j max(0, 1 - x_j / w_j)`` over ``x_1..x_4`` is positive: a corner region of
    2.25 % of the volume (:data:`PLATEAU_WIDTHS`), so ten uniform start-up points all miss it
    with probability 0.80. The maximum is 0.9 plus the jitter, at ``x_0 = 1``,
    ``x_1..x_4 = 0``.
    """
    x = np.asarray(x, dtype=float)
    good = float(np.prod(np.maximum(0.0, 1.0 - x[1:5] / PLATEAU_WIDTHS)))
    weights = np.array([12.9898, 78.233, 37.719, 4.1414, 91.37, 55.51])
    jitter = 0.003 * ((math.sin(float(x @ weights) * 437.5453) * 43758.5453) % 1.0)
    return 0.1 + jitter + 0.8 * good * (0.7 + 0.3 * x[0])


def _synthetic(name, family, dim, fn, best, noise: float = 0.0, tails: bool = True) -> Task:
    """A task on ``[0, 1]^dim`` maximising ``fn``; ``noise`` scales Student-t(2) noise (with
    ``tails=False``, standard normal noise)."""

    def evaluate(params, seed, rng):
        x = np.array([params[f"x{i}"] for i in range(dim)])
        true = float(fn(x))
        if not noise:
            return true, true
        draw = rng.standard_t(2) if tails else rng.standard_normal()
        return true + noise * float(draw), true

    return Task(name, family, lambda: {f"x{i}": Real(0.0, 1.0) for i in range(dim)}, evaluate, best)


def _branin(x):
    a, b = 15.0 * x[0] - 5.0, 15.0 * x[1]
    r = (b - 5.1 / (4 * math.pi**2) * a**2 + 5 / math.pi * a - 6) ** 2
    return -(r + 10 * (1 - 1 / (8 * math.pi)) * math.cos(a) + 10)


_H6_A = np.array(
    [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8],
     [17, 8, 0.05, 10, 0.1, 14]]
)  # fmt: skip
_H6_P = 1e-4 * np.array(
    [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
     [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]
)  # fmt: skip


def _hartmann6(x):
    return float(np.array([1.0, 1.2, 3.0, 3.2]) @ np.exp(-np.sum(_H6_A * (x - _H6_P) ** 2, 1)))


def _rosenbrock4(x):
    z = 4.0 * x - 2.0  # [-2, 2]^4, scaled to about [-1, 0] on most of it
    return -float(np.sum(100 * (z[1:] - z[:-1] ** 2) ** 2 + (1 - z[:-1]) ** 2)) / 1000.0


def _ackley5(x):
    z = 4.0 * x - 1.5  # the optimum at 0 lies off-centre, at x = 0.375
    n = z.size
    a = -20 * math.exp(-0.2 * math.sqrt(float(z @ z) / n))
    return -(a - math.exp(float(np.sum(np.cos(2 * math.pi * z))) / n) + 20 + math.e)


# -- COCO-style functions (the BBOB suite's definitions, one fixed instance each) ---------------


def _t_osz(v: np.ndarray) -> np.ndarray:
    """BBOB's oscillation transformation, elementwise."""
    v = np.asarray(v, dtype=float)
    xh = np.log(np.abs(v), out=np.zeros_like(v), where=v != 0)
    c1, c2 = np.where(v > 0, 10.0, 5.5), np.where(v > 0, 7.9, 3.1)
    return np.sign(v) * np.exp(xh + 0.049 * (np.sin(c1 * xh) + np.sin(c2 * xh)))


def _t_asy(v: np.ndarray, beta: float) -> np.ndarray:
    """BBOB's asymmetry transformation ``T_asy^beta``."""
    d = v.size
    e = 1.0 + beta * np.arange(d) / max(d - 1, 1) * np.sqrt(np.maximum(v, 0.0))
    return np.where(v > 0, np.abs(v) ** e, v)


def _lambda(alpha: float, d: int) -> np.ndarray:
    """BBOB's diagonal conditioning ``Lambda^alpha`` (its diagonal)."""
    return alpha ** (0.5 * np.arange(d) / max(d - 1, 1))


def _rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def _coco(fid: int, d: int) -> Callable[[np.ndarray], float]:
    """BBOB function ``fid`` (1 sphere, 8 Rosenbrock, 15 rotated Rastrigin, 21 Gallagher's 101
    peaks; for the held-out family 6 attractive sector, 10 rotated ellipsoid, 17 Schaffer's F7,
    22 Gallagher's 21 peaks) in ``d`` dimensions, as a function to maximise on ``[0, 1]^d``
    (the negated value on BBOB's ``[-5, 5]^d``; the optimum 0). One instance, drawn from a
    generator seeded by ``(fid, d)``: the optimum uniform in ``[-4, 4]^d`` (``[-3, 3]^d`` for
    Rosenbrock; for f22 too, where BBOB draws it in ``[-3.92, 3.92]^d``), random rotations and
    peaks."""
    rng = np.random.default_rng([fid, d])
    x_opt = rng.uniform(-4.0, 4.0, d) * (0.75 if fid == 8 else 1.0)
    if fid == 1:
        return lambda u: -float(np.sum((10.0 * u - 5.0 - x_opt) ** 2))
    if fid == 8:
        scale = max(1.0, math.sqrt(d) / 8.0)

        def rosenbrock(u):
            z = scale * (10.0 * u - 5.0 - x_opt) + 1.0
            return -float(np.sum(100 * (z[:-1] ** 2 - z[1:]) ** 2 + (z[:-1] - 1) ** 2))

        return rosenbrock
    if fid == 15:
        r, q, lam = _rotation(rng, d), _rotation(rng, d), _lambda(10.0, d)

        def rastrigin(u):
            z = r @ (lam * (q @ _t_asy(_t_osz(r @ (10.0 * u - 5.0 - x_opt)), 0.2)))
            return -float(10 * (d - np.sum(np.cos(2 * math.pi * z))) + z @ z)

        return rastrigin
    if fid == 21:
        return _gallagher(rng, d, x_opt, 101, 1000.0, 5.0)
    if fid == 22:
        return _gallagher(rng, d, x_opt, 21, 1000.0**2, 4.9)
    if fid == 6:
        r, q, lam = _rotation(rng, d), _rotation(rng, d), _lambda(10.0, d)

        def attractive_sector(u):
            z = q @ (lam * (r @ (10.0 * u - 5.0 - x_opt)))
            s = np.where(z * x_opt > 0, 100.0, 1.0)
            return -float(_t_osz(np.array([float(np.sum((s * z) ** 2))]))[0] ** 0.9)

        return attractive_sector
    if fid == 10:
        r = _rotation(rng, d)
        weights = 10.0 ** (6.0 * np.arange(d) / max(d - 1, 1))

        def ellipsoid(u):
            z = _t_osz(r @ (10.0 * u - 5.0 - x_opt))
            return -float(weights @ z**2)

        return ellipsoid
    if fid == 17:
        r, q, lam = _rotation(rng, d), _rotation(rng, d), _lambda(10.0, d)

        def schaffer(u):
            z = lam * (q @ _t_asy(r @ (10.0 * u - 5.0 - x_opt), 0.5))
            s = np.sqrt(z[:-1] ** 2 + z[1:] ** 2)
            return -float(np.mean(np.sqrt(s) + np.sqrt(s) * np.sin(50.0 * s**0.2) ** 2) ** 2)

        return schaffer
    raise ValueError(f"fid: 1, 6, 8, 10, 15, 17, 21 or 22, got {fid}")


def _gallagher(
    rng: np.random.Generator, d: int, x_opt: np.ndarray, n: int, alpha: float, spread: float
) -> Callable[[np.ndarray], float]:
    """BBOB's Gallagher function with ``n`` peaks (f21: 101, f22: 21): the first at ``x_opt``
    with height 10 and condition ``alpha``, the others uniform in ``[-spread, spread]^d``."""
    r = _rotation(rng, d)
    w = np.concatenate([[10.0], 1.1 + 8.0 * np.arange(n - 1) / (n - 2)])
    alphas = np.concatenate([[alpha], rng.permutation(1000.0 ** (2 * np.arange(n - 1) / (n - 2)))])
    conds = np.array([rng.permutation(_lambda(a, d)) / a**0.25 for a in alphas])
    peaks = np.vstack([x_opt, rng.uniform(-spread, spread, (n - 1, d))])

    def gallagher(u):
        diff = (r @ ((10.0 * u - 5.0) - peaks).T).T
        g = float(np.max(w * np.exp(-np.sum(conds * diff**2, 1) / (2 * d))))
        return -float(_t_osz(np.array([10.0 - g]))[0] ** 2)

    return gallagher


def _coco_task(fid: int, d: int, family: str = "coco") -> Task:
    """A COCO-style task: BBOB function ``fid`` in ``d`` dimensions (:func:`_coco`) observed
    with Student-t(2) noise whose scale is 1 % of the function's median gap to its optimum over
    1,024 uniform points of the cube (fixed per task): on most of the eight problems the noise's
    typical size is then near random search's regret after 60 trials, where the search is
    decided."""
    fn = _coco(fid, d)
    u = np.random.default_rng([fid, d, 1]).random((1024, d))
    scale = 0.01 * -float(np.median([fn(p) for p in u]))
    return _synthetic(f"coco_f{fid}_{d}d_t2", family, d, fn, 0.0, noise=scale)


# -- the classic family's models and spaces ---------------------------------------------------


def _fractions_space() -> dict:
    """A tree's or forest's size limits as fractions of the data, as practitioners write them:
    the best values are often at an end of the range (no limit)."""
    return {
        "max_depth": Integer(1, 15),
        "max_features": Real(0.01, 0.99),
        "min_samples_split": Real(0.01, 0.99),
        "min_samples_leaf": Real(0.01, 0.49),
        "min_weight_fraction_leaf": Real(0.01, 0.49),
        "min_impurity_decrease": Real(0.0, 0.5),
    }


def _forest(p, s):
    return RandomForestClassifier(n_estimators=10, random_state=s, **p)


def _tree(p, s):
    return DecisionTreeClassifier(random_state=s, **p)


def _mlp_adam_space() -> dict:
    return {
        "hidden_layer_sizes": Integer(50, 200),
        "alpha": Real(1e-5, 10.0, log=True),
        "batch_size": Integer(10, 250),
        "learning_rate_init": Real(1e-5, 1e-1, log=True),
        "tol": Real(1e-5, 1e-1, log=True),
        "validation_fraction": Real(0.1, 0.9),
        "beta_1": Real(0.5, 0.99),
        "beta_2": Real(0.9, 1.0 - 1e-6),
        "epsilon": Real(1e-9, 1e-6, log=True),
    }


def _mlp_adam(p, s):
    return _scaled(MLPClassifier(solver="adam", early_stopping=True, random_state=s, **p))


def _mlp_sgd_space() -> dict:
    return {
        "hidden_layer_sizes": Integer(50, 200),
        "alpha": Real(1e-5, 10.0, log=True),
        "batch_size": Integer(10, 250),
        "learning_rate_init": Real(1e-5, 1e-1, log=True),
        "power_t": Real(0.1, 0.9),
        "tol": Real(1e-5, 1e-1, log=True),
        "momentum": Real(0.001, 0.999),
        "validation_fraction": Real(0.1, 0.9),
    }


def _mlp_sgd(p, s):
    return _scaled(
        MLPClassifier(
            solver="sgd", learning_rate="invscaling", early_stopping=True, random_state=s, **p
        )
    )


def _svm_space() -> dict:
    return {
        "C": Real(1e-2, 1e3, log=True),
        "gamma": Real(1e-4, 1.0, log=True),
        "tol": Real(1e-5, 1e-1, log=True),
    }


def _svm(p, s):
    return _scaled(SVC(**p))


def _knn_space() -> dict:
    return {
        "n_neighbors": Integer(1, 25),
        "p": Integer(1, 4),
        "weights": Categorical(["uniform", "distance"]),
    }


def _knn(p, s):
    return _scaled(KNeighborsClassifier(**p))


def _ada_space() -> dict:
    return {"n_estimators": Integer(10, 100), "learning_rate": Real(1e-4, 10.0, log=True)}


def _ada(p, s):
    return AdaBoostClassifier(random_state=s, **p)


def _hgb_space() -> dict:
    return {
        "learning_rate": Real(1e-3, 1.0, log=True),
        "max_leaf_nodes": Integer(2, 64, log=True),
        "min_samples_leaf": Integer(1, 60),
        "l2_regularization": Real(1e-6, 10.0, log=True),
        "max_features": Real(0.1, 1.0),
    }


def _hgb(p, s):
    return HistGradientBoostingClassifier(max_iter=50, random_state=s, **p)


def _hgb_depth_space() -> dict:
    """Gradient boosting whose learning rate, depth and number of rounds interact: a small
    rate needs many deep rounds, a large one few shallow ones (a ridge in the box)."""
    return {
        "learning_rate": Real(1e-4, 1.0, log=True),
        "max_depth": Integer(1, 12),
        "max_iter": Integer(5, 200, log=True),
        "min_samples_leaf": Integer(1, 200, log=True),
    }


def _hgb_depth(p, s):
    return HistGradientBoostingClassifier(random_state=s, early_stopping=False, **p)


TASKS: dict[str, Task] = {
    t.name: t
    for t in [
        # -- plateaus ------------------------------------------------------------------------
        _cv_task(
            "rf_fractions_digits",
            "plateau",
            "digits",
            _forest,
            _fractions_space,
        ),
        _cv_task(
            "hgb_penalties_breast_cancer",
            "plateau",
            "breast_cancer",
            lambda p, s: HistGradientBoostingClassifier(max_iter=30, random_state=s, **p),
            lambda: {
                "learning_rate": Real(1e-6, 1.0, log=True),
                "l2_regularization": Real(0.0, 1e4),
                "min_samples_leaf": Integer(1, 300),
            },
        ),
        _cv_task(
            "svc_widths_digits",
            "plateau",
            "digits600",
            lambda p, s: SVC(**p),
            lambda: {"C": Real(1e-6, 1e4, log=True), "gamma": Real(1e-7, 1e3, log=True)},
        ),
        _cv_task(
            "mlp_tiny_steps_wine",
            "plateau",
            "wine",
            lambda p, s: _scaled(MLPClassifier(max_iter=60, random_state=s, **p)),
            lambda: {
                "learning_rate_init": Real(1e-7, 1e-1, log=True),
                "alpha": Real(1e-5, 1e4, log=True),
                "hidden_layer_sizes": Integer(1, 100),
            },
        ),
        _synthetic("plateau_synthetic", "plateau", 6, plateau_objective, None),
        # -- unseen ----------------------------------------------------------------------------
        _cv_task(
            "tree_breast_cancer",
            "unseen",
            "breast_cancer",
            lambda p, s: DecisionTreeClassifier(random_state=s, **p),
            lambda: {
                "max_depth": Integer(1, 20),
                "min_samples_split": Integer(2, 60),
                "min_samples_leaf": Integer(1, 60),
                "max_features": Real(0.05, 1.0),
                "criterion": Categorical(["gini", "entropy"]),
            },
        ),
        _cv_task(
            "forest_wine",
            "unseen",
            "wine",
            lambda p, s: RandomForestClassifier(random_state=s, **p),
            lambda: {
                "n_estimators": Integer(5, 60),
                "max_depth": Integer(1, 15),
                "max_features": Real(0.05, 1.0),
                "min_samples_leaf": Integer(1, 30),
            },
        ),
        _cv_task(
            "svm_breast_cancer",
            "unseen",
            "breast_cancer",
            lambda p, s: _scaled(SVC(**p)),
            lambda: {
                "C": Real(1e-3, 1e3, log=True),
                "gamma": Real(1e-5, 10.0, log=True),
                "kernel": Categorical(["rbf", "sigmoid", "poly"]),
            },
        ),
        _cv_task(
            "adaboost_breast_cancer",
            "unseen",
            "breast_cancer",
            lambda p, s: AdaBoostClassifier(random_state=s, **p),
            lambda: {
                "n_estimators": Integer(5, 100),
                "learning_rate": Real(1e-3, 10.0, log=True),
            },
        ),
        _cv_task(
            "mlp_digits",
            "unseen",
            "digits600",
            lambda p, s: _scaled(MLPClassifier(max_iter=100, random_state=s, **p)),
            lambda: {
                "hidden_layer_sizes": Integer(10, 200, log=True),
                "alpha": Real(1e-6, 1.0, log=True),
                "learning_rate_init": Real(1e-4, 1e-1, log=True),
            },
        ),
        _cv_task(
            "knn_digits",
            "unseen",
            "digits600",
            lambda p, s: _scaled(KNeighborsClassifier(**p)),
            lambda: {
                "n_neighbors": Integer(1, 60),
                "weights": Categorical(["uniform", "distance"]),
                "p": Integer(1, 2),
            },
        ),
        _cv_task(
            "hgb_wine",
            "unseen",
            "wine",
            lambda p, s: HistGradientBoostingClassifier(max_iter=50, random_state=s, **p),
            lambda: {
                "learning_rate": Real(1e-3, 1.0, log=True),
                "max_leaf_nodes": Integer(2, 64, log=True),
                "min_samples_leaf": Integer(1, 60),
                "l2_regularization": Real(1e-6, 10.0, log=True),
            },
        ),
        _cv_task(
            "logistic_digits",
            "unseen",
            "digits600",
            lambda p, s: _scaled(LogisticRegression(max_iter=300, **p)),
            lambda: {
                "C": Real(1e-5, 1e4, log=True),
                "class_weight": Categorical([None, "balanced"]),
                "fit_intercept": Categorical([True, False]),
            },
        ),
        # -- classic: the spaces practitioners write (fractions, penalties, batch sizes) -------
        _cv_task("rf_wine", "classic", "wine", _forest, _fractions_space),
        _cv_task("rf_breast_cancer", "classic", "breast_cancer", _forest, _fractions_space),
        _cv_task("dt_digits", "classic", "digits", _tree, _fractions_space),
        _cv_task("mlp_adam_wine", "classic", "wine", _mlp_adam, _mlp_adam_space),
        _cv_task("mlp_sgd_breast_cancer", "classic", "breast_cancer", _mlp_sgd, _mlp_sgd_space),
        _cv_task("svm_wine", "classic", "wine", _svm, _svm_space),
        _cv_task("knn_breast_cancer", "classic", "breast_cancer", _knn, _knn_space),
        _cv_task("ada_wine", "classic", "wine", _ada, _ada_space),
        _cv_task("hgb_breast_cancer", "classic", "breast_cancer", _hgb, _hgb_space),
        # -- ridges: narrow good regions along a ridge (none of these tunes a default) --------
        _cv_task("rf_fractions_phoneme", "ridge", "phoneme", _forest, _fractions_space),
        _cv_task("rf_fractions_spambase", "ridge", "spambase", _forest, _fractions_space),
        _cv_task("rf_fractions_penbased", "ridge", "penbased3000", _forest, _fractions_space),
        _cv_task("hgb_depth_phoneme", "ridge", "phoneme", _hgb_depth, _hgb_depth_space),
        _cv_task("hgb_depth_spambase", "ridge", "spambase", _hgb_depth, _hgb_depth_space),
        # held out of every tuning of defaults: data sets the tuned tasks do not use
        _cv_task("rf_pima", "classic_holdout", "pima", _forest, _fractions_space),
        _cv_task("dt_australian", "classic_holdout", "australian", _tree, _fractions_space),
        _cv_task(
            "mlp_adam_australian", "classic_holdout", "australian", _mlp_adam, _mlp_adam_space
        ),
        _cv_task("svm_pima", "classic_holdout", "pima", _svm, _svm_space),
        # -- heavy tails (noise scale: about 5 % of the function's range on the cube) --------
        _synthetic("branin_t2", "heavy", 2, _branin, -0.397887, noise=15.0),
        _synthetic("hartmann6_t2", "heavy", 6, _hartmann6, 3.32237, noise=0.15),
        _synthetic("rosenbrock4_t2", "heavy", 4, _rosenbrock4, 0.0, noise=0.2),
        _synthetic("ackley5_t2", "heavy", 5, _ackley5, 0.0, noise=0.4),
        # -- the same functions with Gaussian noise of the same scale ------------------------
        _synthetic("branin_n", "gaussian", 2, _branin, -0.397887, noise=15.0, tails=False),
        _synthetic("hartmann6_n", "gaussian", 6, _hartmann6, 3.32237, noise=0.15, tails=False),
        _synthetic("rosenbrock4_n", "gaussian", 4, _rosenbrock4, 0.0, noise=0.2, tails=False),
        _synthetic("ackley5_n", "gaussian", 5, _ackley5, 0.0, noise=0.4, tails=False),
        # -- COCO-style functions with heavy tails (used by the noisy-score screens) ----------
        *(_coco_task(fid, d) for fid in (1, 8, 15, 21) for d in (2, 5)),
        # -- four more, held out of the noisy screens' decisions (run after they were written)
        *(_coco_task(fid, d, "coco_holdout") for fid in (6, 10, 17, 22) for d in (2, 5)),
    ]
}


# -- one run -----------------------------------------------------------------------------------


def _noise_rng(seed: int, task: str, number: int) -> np.random.Generator:
    """The released score's noise at trial ``number``: the same for every method of a seed.

    privtune's sampler draws it itself: its study is named after the task and its
    ``noise_seed`` is ``20000 + seed``, so its curator's generator for trial ``number``
    (:func:`privtune.privacy.seeds.report_generator`) is this one."""
    return np.random.default_rng([20_000 + seed, zlib.crc32(task.encode()), number])


def _sampler(method: str, setting: str, seed: int, variants: dict[str, dict]):
    """The sampler of ``method`` (see the module) in ``setting``: Optuna's and privtune's as
    the tuning benchmark builds them (:func:`benchmarks.optuna_tuning.make_sampler`), the
    curator's noise seeded with ``20000 + seed`` (:func:`_noise_rng`). A variant's
    ``"n_startup_trials"`` goes to the sampler (its start-up draws, the first of the shared
    ones), the rest to the optimizer."""
    base, _, variant = method.partition(":")
    kwargs = dict(variants.get(variant, {})) if variant else None
    startup = kwargs.pop("n_startup_trials", 10) if kwargs else 10
    # "privtune" is the default algorithm; "tgp", "ata", "moma" privtune's others
    name = {"privtune": "auto", "random": "random-optuna"}.get(base, base)
    return make_sampler(
        name, setting, seed, kwargs, noise_seed=20_000 + seed, n_startup_trials=startup
    )


def run_one(
    task_name: str,
    setting: str,
    method: str,
    seed: int,
    n_trials: int,
    checkpoints: list[int],
    variants: dict[str, dict] | None = None,
    on_trial: Callable[[optuna.trial.FrozenTrial, float], None] | None = None,
) -> dict:
    """One study of ``method`` on a task; the picks at each checkpoint with their true values.
    ``on_trial(trial, true_value)`` is called after each trial (:func:`trace`)."""
    task = TASKS[task_name]
    space = SearchSpace(task.space())
    observed: dict[int, float] = {}
    true: dict[int, float] = {}

    def objective(trial):
        params = suggest(trial, space)
        rng = np.random.default_rng([seed, zlib.crc32(task_name.encode()), trial.number])
        observed[trial.number], true[trial.number] = task.evaluate(params, seed, rng)
        return observed[trial.number]

    sampler = _sampler(method, setting, seed, variants or {})
    ours = isinstance(sampler, PrivateGPUCBSampler)
    picks: dict[str, dict] = {}

    def callback(study, trial):
        if on_trial is not None:
            on_trial(trial, true[trial.number])
        n = trial.number + 1
        if n in checkpoints:
            pick = sampler.recommend_trial(study) if ours else study.best_trial
            picks[str(n)] = {"trial": pick.number, "true": true[pick.number]}

    # named after the task: privtune's noise stream is keyed by it (see _noise_rng)
    study = optuna.create_study(direction="maximize", sampler=sampler, study_name=task_name)
    if setting == "none":
        func = objective
    elif ours:
        func = sampler.privatize(objective)
    else:
        curator = LaplaceCurator(float(setting), (0.0, 1.0))

        def func(trial):
            value = objective(trial)
            return float(curator.privatize(value, rng=_noise_rng(seed, task_name, trial.number)))

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(func, n_trials=n_trials, callbacks=[callback])
    return {
        "task": task_name,
        "family": task.family,
        "setting": setting,
        "method": method,
        "seed": seed,
        "n_trials": n_trials,
        "picks": picks,
        "true_values": [true.get(t.number) for t in study.trials],
        "seconds": time.perf_counter() - t0,
        "versions": _versions(),
    }


def _versions() -> dict[str, str]:
    """The versions of Python and of the packages a run's numbers depend on, the BLAS
    libraries numpy and scipy load with the kernel each chose for this CPU (``"blas"``), and,
    when the run imported torch (GPSampler, HEBO), the CPU capability torch's own BLAS uses
    (``"torch_cpu"``): a study's floating-point path, and so its proposals after the first
    few, changes with numpy's and scipy's versions, with the BLAS kernel (the same packages
    on another CPU can take another one), and the samplers with Optuna's."""
    found = {"python": platform.python_version()}
    for package in ("numpy", "scipy", "scikit-learn", "optuna", "hebo", "torch"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            continue
    blas = sorted(
        {
            " ".join(str(lib[k]) for k in ("internal_api", "version", "architecture") if lib.get(k))
            for lib in threadpoolctl.threadpool_info()
            if lib.get("user_api") == "blas"
        }
    )
    if blas:
        found["blas"] = "; ".join(blas)
    if "torch" in sys.modules:
        found["torch_cpu"] = sys.modules["torch"].backends.cpu.get_cpu_capability()
    return found


def _variants(args: argparse.Namespace) -> dict[str, dict]:
    """The optimizer kwargs of each ``--variant NAME=JSON``."""
    return {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.variant)}


def _check_variant(method: str, variants: dict[str, dict]) -> None:
    """A clear exit when a ``privtune:NAME`` method has no ``--variant NAME=JSON``."""
    if method.startswith("privtune:") and method.partition(":")[2] not in variants:
        raise SystemExit(f"{method}: give its optimizer_kwargs with --variant NAME=JSON")


def _run_name(task: str, setting: str, method: str, seed: int) -> str:
    """A run's name in the store."""
    return f"{task}-{setting}-{method.replace(':', '~')}-{seed}"


def _runs(args: argparse.Namespace):
    variants = _variants(args)
    for family, setting, seed, method in itertools.product(
        args.family, args.settings, args.seeds, args.methods
    ):
        if family in NOISY_FAMILIES and setting != "none":
            continue  # these tasks carry their own noise
        if not harness.sampler_available(method):
            continue
        for name, task in TASKS.items():
            if task.family != family or (args.tasks and name not in args.tasks):
                continue
            _check_variant(method, variants)
            run_name = _run_name(name, setting, method, seed)
            yield run_name, functools.partial(
                run_one, name, setting, method, seed, max(args.checkpoints), args.checkpoints,
                variants,
            )  # fmt: skip


def run(args: argparse.Namespace) -> None:
    """Compute every missing run."""
    harness.collect_runs(
        harness.RunStore(args.out, "tuning_suite"),
        _runs(args),
        describe=lambda r: (
            " ".join(f"{k}:{v['true']:.4g}" for k, v in r["picks"].items())
            + f" ({r['seconds']:.0f} s)"
        ),
    )


def trace(args: argparse.Namespace) -> None:
    """Replay one stored study (``--tasks``, ``--methods``, ``--seeds`` and ``--settings``
    naming one each, with the method's ``--variant``) and print it as JSON: each trial's
    turn (what made privtune's proposal, ``"privtune:turn"``: ``"trust-region"``,
    ``"acquisition"``, ...; ``null`` for the other samplers), parameters, told value and true
    value beside the stored true value, the first trial where the replay departs from the
    stored study (``null``: none), and the versions of both. A study replays exactly only
    under the versions and BLAS kernel it ran with."""
    one = {"--tasks": args.tasks, "--methods": args.methods, "--seeds": args.seeds,
           "--settings": args.settings}  # fmt: skip
    for flag, given in one.items():
        if len(given) != 1:
            raise SystemExit(f"trace: {flag} must name exactly one, got {given!r}")
    (task,), (method,), (seed,), (setting,) = one.values()
    name = _run_name(task, setting, method, seed)
    stored = next(
        (r for r in harness.load_runs(harness.RunStore(args.out, "tuning_suite"))
         if r["task"] == task and r["method"] == method and r["seed"] == seed
         and r["setting"] == setting),
        None,
    )  # fmt: skip
    if stored is None:
        raise SystemExit(f"trace: no stored run {name} in {args.out}")
    variants = _variants(args)
    _check_variant(method, variants)
    trials: list[dict] = []

    def on_trial(trial: optuna.trial.FrozenTrial, true_value: float) -> None:
        told = stored["true_values"]
        before = told[trial.number] if trial.number < len(told) else None
        trials.append(
            {"number": trial.number, "turn": trial.system_attrs.get(ATTR_TURN),
             "params": trial.params, "value": trial.value, "true": true_value,
             "stored_true": before}
        )  # fmt: skip

    replay = run_one(
        task, setting, method, seed, stored["n_trials"], sorted(map(int, stored["picks"])),
        variants, on_trial,
    )  # fmt: skip
    departs = next(
        (t["number"] for t in trials if t["true"] != t["stored_true"]),
        None,
    )
    print(
        json.dumps(
            {
                "run": name,
                "departs_at": departs,
                "picks": {"stored": stored["picks"], "replay": replay["picks"]},
                "versions": {"stored": stored.get("versions"), "replay": replay["versions"]},
                "trials": trials,
            },
            indent=1,
        )
    )


# -- the summary -------------------------------------------------------------------------------


def _loss(task: Task, value: float) -> float:
    """Loss of a true value: 1 - accuracy, or the synthetic function's regret."""
    return (task.best if task.best is not None else 1.0) - value


#: The stored runs that are the current default's studies, per family and setting: the
#: default's code at the time of the runs, under the name it was measured as. Without privacy
#: the default starts its acquisition optimiser's local searches by the spread rule
#: (``start_rule="spread"``) and takes one agreeing repeat as evidence of exact scores
#: (``agreeing_repeats=1``), and while the scores are exact it maximises every second
#: proposal's acquisition over a trust region around the best told point (``local_share=2``),
#: unless that point's score is no better than the median told score: measured as ``TRM`` on
#: exact scores (the optimizer arguments of ``TR2`` run by the code with that guard). On the
#: noisy families, whose repeats never agree, it
#: switches to a Student-t likelihood at the start-up's disagreeing repeat
#: (``student_t_on_repeat``) and from then on neither judges the scores exact nor fills the
#: space by the plateau rule for exact scores (``BaseOptimizer._shown_noisy``): measured as
#: ``SPX``, the optimizer arguments of ``SPA`` (the previous default's studies there) run by
#: the code with that rule; exact scores never disagree, and their studies are unchanged. The
#: trust region acts only on exact scores, so the noisy families' studies are ``SPX``'s trial
#: for trial (rerun with ``local_share=2``: heavy seeds 0 and 1, gaussian and coco seed 0,
#: every study the same). On the held-out COCO functions, run later, they are ``SPR``: ``SPX``'s
#: optimizer arguments under the versions of that run. ``summarize --methods default``
#: reports them as ``default``; under
#: privacy the default's runs are ``privtune`` (the trust region never acts on privatized
#: scores).
DEFAULT_RUNS = {
    ("classic", "none"): "privtune:TRM",
    ("classic_holdout", "none"): "privtune:TRM",
    ("plateau", "none"): "privtune:TRM",
    ("unseen", "none"): "privtune:TRM",
    ("ridge", "none"): "privtune:TRM",
    ("heavy", "none"): "privtune:SPX",
    ("coco", "none"): "privtune:SPX",
    ("gaussian", "none"): "privtune:SPX",
    ("coco_holdout", "none"): "privtune:SPR",
}


#: The runs of the default before the guard on the trust region (a trust region around a
#: best told score no better than the median too): ``TR2``, run by the code before it.
#: ``summarize --methods share``.
SHARE_RUNS = {
    ("classic", "none"): "privtune:TR2",
    ("classic_holdout", "none"): "privtune:TR2",
    ("plateau", "none"): "privtune:TR2",
    ("unseen", "none"): "privtune:TR2",
    ("ridge", "none"): "privtune:TR2",
}


#: The runs of the default before the trust region's share, every proposal over the whole
#: cube: ``A1`` on exact scores (the noisy families' studies are the default's, above).
#: ``summarize --methods cube``.
CUBE_RUNS = {
    ("classic", "none"): "privtune:A1",
    ("classic_holdout", "none"): "privtune:A1",
    ("plateau", "none"): "privtune:A1",
    ("unseen", "none"): "privtune:A1",
    ("ridge", "none"): "privtune:A1",
}


#: The runs of the default before one agreeing repeat decided (two did): ``SP`` (the spread
#: starts) on exact scores, and on the noisy families ``SPA``, the default's studies there
#: until a disagreeing repeat turned off the exact-score rules (one agreeing repeat did not
#: change them). ``summarize --methods spread``.
SPREAD_RUNS = {
    ("classic", "none"): "privtune:SP",
    ("classic_holdout", "none"): "privtune:SP",
    ("plateau", "none"): "privtune:SP",
    ("unseen", "none"): "privtune:SP",
    ("ridge", "none"): "privtune:SP",
    ("heavy", "none"): "privtune:SPA",
    ("coco", "none"): "privtune:SPA",
    ("gaussian", "none"): "privtune:SPA",
}


#: The runs of the default before the spread rule, which started its local searches from the
#: best raw samples and the perturbations of the best told points (``start_rule="top"``):
#: ``KP`` (an empty variant, that default's code) on exact scores, ``privtune`` on the ridges
#: and ``AR`` (the Student-t switch) on the noisy families. ``summarize --methods top``.
TOP_RUNS = {
    ("classic", "none"): "privtune:KP",
    ("classic_holdout", "none"): "privtune:KP",
    ("plateau", "none"): "privtune:KP",
    ("unseen", "none"): "privtune:KP",
    ("ridge", "none"): "privtune",
    ("heavy", "none"): "privtune:AR",
    ("coco", "none"): "privtune:AR",
    ("gaussian", "none"): "privtune:AR",
}


#: The runs of the default before the Student-t switch on the noisy families, the Gaussian
#: likelihood throughout (and the top starts): ``summarize --methods previous``.
PREVIOUS_RUNS = {
    ("heavy", "none"): "privtune:KP2",
    ("coco", "none"): "privtune",
    ("gaussian", "none"): "privtune:G",
}
#: The names ``summarize`` gives stored runs: ``default`` (:data:`DEFAULT_RUNS`; ``privtune``
#: under privacy), ``share`` (:data:`SHARE_RUNS`), ``cube`` (:data:`CUBE_RUNS`), ``spread``
#: (:data:`SPREAD_RUNS`), ``top`` (:data:`TOP_RUNS`) and ``previous`` (:data:`PREVIOUS_RUNS`).
ALIASES = {
    "default": DEFAULT_RUNS,
    "share": SHARE_RUNS,
    "cube": CUBE_RUNS,
    "spread": SPREAD_RUNS,
    "top": TOP_RUNS,
    "previous": PREVIOUS_RUNS,
}


def _aliased(row: dict, names: list[str]) -> dict:
    """``row`` with its method renamed to the first of ``names`` (keys of :data:`ALIASES`)
    whose runs it is."""
    for name in names:
        runs = ALIASES[name]
        fallback = "privtune" if name == "default" and row["setting"] != "none" else None
        if row["method"] == runs.get((row["family"], row["setting"]), fallback):
            return {**row, "method": name}
    return row


def _common_seeds(group: list[dict]) -> list[dict]:
    """The runs of the seeds on which every method of ``group`` ran every task of it; a method
    that has not run every task on any one seed is left out first."""
    tasks = {r["task"] for r in group}
    done: dict[tuple, set] = {}
    for r in group:
        done.setdefault((r["method"], r["seed"]), set()).add(r["task"])
    complete = {k for k, ran in done.items() if ran == tasks}
    methods = {m for m, _ in complete}
    seeds = {s for _, s in complete}
    full = {s for s in seeds if all((m, s) in complete for m in methods)}
    return [r for r in group if r["method"] in methods and r["seed"] in full]


def summarize(args: argparse.Namespace) -> harness.Report:
    """Normalised scores, mean ranks and losses to random search, per family and setting
    (``tuning_suite.json``, ``.md`` and ``.png``)."""
    rows = [
        r
        for r in harness.load_runs(harness.RunStore(args.out, "tuning_suite"))
        if r["seed"] in args.seeds
        and r["family"] in args.family
        and r["setting"] in args.settings
        and (not args.tasks or r["task"] in args.tasks)
    ]
    aliases = [m for m in args.methods if m in ALIASES]
    if aliases:
        rows = [_aliased(r, aliases) for r in rows]
    # the methods asked for (random search, the reference, always)
    rows = [r for r in rows if r["method"] in {*args.methods, "random"}]
    summary: dict = {}
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["family"], r["setting"]), []).append(r)
    for (family, setting), group in sorted(groups.items()):
        if args.common_seeds:
            group = _common_seeds(group)
            if not group:
                continue
        methods = sorted({r["method"] for r in group})
        tasks = sorted({r["task"] for r in group})
        out: dict = {"methods": methods, "tasks": tasks, "budgets": {}}
        for n in map(str, args.checkpoints):
            per_task: dict[str, dict] = {}
            scales: dict[str, tuple[float, float]] = {}  # random's mean loss, the best known
            table = _pick_losses(group, n)
            for name in tasks:
                task = TASKS[name]
                runs = [r for r in group if r["task"] == name and n in r["picks"]]
                best_known = min(
                    _loss(task, v) for r in runs for v in r["true_values"] if v is not None
                )
                if task.best is not None:
                    best_known = min(best_known, 0.0)
                loss = {m: list(table.get(name, {}).get(m, {}).values()) for m in methods}
                if not loss.get("random"):
                    continue
                l_rand = float(np.mean(loss["random"]))
                spread = l_rand - best_known
                scales[name] = (l_rand, best_known)
                per_task[name] = {
                    m: {
                        "loss": float(np.mean(v)),
                        "score": float(np.mean([100 * (1 - (x - best_known) / spread) for x in v]))
                        if spread > 0
                        else 100.0,
                        "vs_random": _paired(table[name], m, "random"),
                    }
                    for m, v in loss.items()
                    if v
                }
            seed_scores = _seed_scores(group, scales, n)
            ranks = {m: [] for m in methods}
            for cells in per_task.values():
                order = sorted(cells, key=lambda m: cells[m]["loss"])
                for m in cells:
                    tied = [o for o in order if cells[o]["loss"] == cells[m]["loss"]]
                    ranks[m].append(np.mean([order.index(o) + 1 for o in tied]))
            out["budgets"][n] = {
                "per_task": per_task,
                "score": {
                    m: float(np.mean([c[m]["score"] for c in per_task.values() if m in c]))
                    for m in methods
                    if any(m in c for c in per_task.values())
                },
                "median_score": {
                    m: float(np.median([c[m]["score"] for c in per_task.values() if m in c]))
                    for m in methods
                    if any(m in c for c in per_task.values())
                },
                "mean_rank": {m: float(np.mean(v)) for m, v in ranks.items() if v},
                "family_score": {
                    m: {
                        "mean": float(np.mean(list(s.values()))),
                        "se": harness.standard_error(list(s.values())),
                        "seeds": len(s),
                    }
                    for m, s in seed_scores.items()
                    if s
                },
                "versus": {
                    m: {
                        o: _difference(seed_scores[m], seed_scores[o])
                        for o in methods
                        if o != m and seed_scores.get(o) and seed_scores.get(m)
                    }
                    for m in methods
                },
                "rank_versus": _rank_versus(group, methods, list(per_task), n),
                "behind": _behind(group, methods, list(per_task), n),
                "trapped": _trapped(group, methods, list(per_task), n),
                "short": _short(group, methods, scales, n),
                "below_random": {
                    m: [t for t, c in per_task.items() if m in c and c[m]["vs_random"] == "below"]
                    for m in methods
                },
            }
            budget = out["budgets"][n]
            ref = next((m for m in ("default", "gp") if m in methods), None)
            budget["fisher"] = {
                key: {
                    "against": ref,
                    "p": {
                        m: _fisher(budget[key][m], budget[key][ref], key)
                        for m in methods
                        if ref is not None and m != ref
                    },
                }
                for key in ("trapped", "short")
            }
            if family in NOISY_FAMILIES:
                out["budgets"][n]["regret_vs_random"] = {
                    m: float(
                        np.exp(
                            np.mean(
                                [
                                    np.log(
                                        max(c[m]["loss"], 1e-12) / max(c["random"]["loss"], 1e-12)
                                    )
                                    for c in per_task.values()
                                    if m in c
                                ]
                            )
                        )
                    )
                    for m in methods
                }
        summary[f"{family}|{setting}"] = out
    result = {"benchmark": "tuning_suite", "n_runs": len(rows), "summary": summary}
    return harness.Report(result, _markdown(summary), lambda path: _plot(summary, path))


def _seed_scores(
    group: list[dict], scales: dict[str, tuple[float, float]], n: str
) -> dict[str, dict[int, float]]:
    """Per method, the family's mean normalised score at budget ``n`` for each seed the method
    ran on every task of ``scales`` (each task scored against random search's mean loss and the
    best known loss, as the table is)."""
    table = _pick_losses(group, n)
    out: dict[str, dict[int, float]] = {}
    for m in {r["method"] for r in group}:
        by_seed: dict[int, dict[str, float]] = {}
        for t, (l_rand, best) in scales.items():
            spread = l_rand - best
            for seed, loss in table.get(t, {}).get(m, {}).items():
                score = 100 * (1 - (loss - best) / spread) if spread > 0 else 100.0
                by_seed.setdefault(seed, {})[t] = score
        out[m] = {
            s: float(np.mean(list(v.values()))) for s, v in by_seed.items() if len(v) == len(scales)
        }
    return out


def _behind(
    group: list[dict], methods: list[str], tasks: list[str], n: str
) -> dict[str, dict[str, list[str]]]:
    """Per method, the tasks on which its loss at budget ``n`` is above another method's beyond
    two standard errors (paired by seed), with those methods."""
    table = _pick_losses(group, n)
    out: dict[str, dict[str, list[str]]] = {m: {} for m in methods}
    for t in tasks:
        for m in methods:
            ahead = [o for o in methods if o != m and _paired(table.get(t, {}), m, o) == "below"]
            if ahead:
                out[m][t] = ahead
    return out


def _trapped(group: list[dict], methods: list[str], tasks: list[str], n: str) -> dict[str, dict]:
    """Per method, its trapped studies at budget ``n``: a study is trapped when its pick is
    below random search's median pick on that task at that budget (its loss above the median
    of random search's losses). The count, the studies counted, and the trapped ones as
    ``task:seed``; and ``floor``, how many of them are on a seed where no study of the
    summary's methods told a configuration above that median in its first ``n`` trials: on
    that seed every pick is below it, whatever the search."""
    table = _pick_losses(group, n)
    out: dict[str, dict] = {
        m: {"trapped": 0, "floor": 0, "studies": 0, "where": []} for m in methods
    }
    for t in tasks:
        picks = table.get(t, {})
        if not picks.get("random"):
            continue
        median = float(np.median(list(picks["random"].values())))
        reached: dict[int, float] = {}  # per seed, the lowest loss any study told by trial n
        for r in group:
            if r["task"] == t and n in r["picks"]:
                told = [_loss(TASKS[t], v) for v in r["true_values"][: int(n)] if v is not None]
                reached[r["seed"]] = min([reached.get(r["seed"], math.inf), *told])
        for m, by_seed in picks.items():
            cell = out[m]
            for seed, loss in by_seed.items():
                cell["studies"] += 1
                if loss > median:
                    cell["trapped"] += 1
                    cell["floor"] += reached[seed] > median
                    cell["where"].append(f"{t}:{seed}")
    return out


def _short(
    group: list[dict], methods: list[str], scales: dict[str, tuple[float, float]], n: str
) -> dict[str, dict]:
    """Per method, its studies that end short of half way at budget ``n``: the pick's
    normalised score below 50, less than half of the way from random search's mean loss to the
    best known loss. A trap (below random search's median pick) misses a study stuck between
    that median and the good region; this count does not depend on a threshold chosen per
    task. The count, the studies counted, and the count per task."""
    table = _pick_losses(group, n)
    out: dict[str, dict] = {m: {"short": 0, "studies": 0, "per_task": {}} for m in methods}
    for t, (l_rand, best) in scales.items():
        for m, by_seed in table.get(t, {}).items():
            cell = out[m]
            for loss in by_seed.values():
                cell["studies"] += 1
                if l_rand > best and 100 * (1 - (loss - best) / (l_rand - best)) < 50:
                    cell["short"] += 1
                    cell["per_task"][t] = cell["per_task"].get(t, 0) + 1
    return out


def _fisher(a: dict, b: dict, key: str) -> float | None:
    """Two-sided Fisher exact test of ``a[key] of a["studies"]`` against ``b``'s: the
    p-value, or None when either has no study."""
    from scipy.stats import fisher_exact

    if not a["studies"] or not b["studies"]:
        return None
    table = [[a[key], a["studies"] - a[key]], [b[key], b["studies"] - b[key]]]
    return float(fisher_exact(table)[1])


def _rank_versus(
    group: list[dict], methods: list[str], tasks: list[str], n: str, *, n_boot: int = 2000
) -> dict[str, dict[str, dict]]:
    """Per pair of methods, the difference of their mean ranks at budget ``n`` (``m`` minus
    ``o``; negative: ``m`` ranks better) with its standard error over a bootstrap of the seeds
    and the share of replicates on the other side of zero.

    Each replicate draws the seeds with replacement (the same draw for every task and method,
    so the pairing by seed is kept), ranks the methods per task by their mean loss over the
    drawn seeds (ties averaged, as :func:`summarize` ranks them) and averages over ``tasks``.
    The methods compared are those with a pick on every task, on the seeds they all share
    (with ``--common-seeds``, every method and seed of the summary, so ``difference`` is the
    difference of the table's mean ranks); the draws are seeded (0), so a summary is
    reproducible. A mean rank is a statistic of the whole family, with no standard error of
    its own: this says whether the seeds resolve a difference in it. It takes few values, so
    ``opposite`` (the share of replicates whose difference has the other sign, or is zero
    where the observed one is not) is given too; with few seeds a standard error of 0 only
    says that every replicate kept each task's order."""
    from scipy.stats import rankdata

    losses = _pick_losses(group, n)
    methods = [m for m in methods if all(losses.get(t, {}).get(m) for t in tasks)]
    cells = [set(losses[t][m]) for t in tasks for m in methods]
    seeds = sorted(set.intersection(*cells)) if cells else []
    if len(seeds) < 2 or len(methods) < 2:
        return {}
    L = np.array([[[losses[t][m][s] for s in seeds] for m in methods] for t in tasks])
    draws = np.random.default_rng(0).integers(0, len(seeds), size=(n_boot, len(seeds)))
    # (n_boot, tasks, methods): each replicate's mean loss, ranked over the methods
    boot = L[:, :, draws].mean(axis=-1).transpose(2, 0, 1)
    mean_rank = rankdata(boot, axis=-1).mean(axis=1)
    observed = rankdata(L.mean(axis=-1), axis=-1).mean(axis=0)
    out: dict[str, dict[str, dict]] = {m: {} for m in methods}
    for i, m in enumerate(methods):
        for j, o in enumerate(methods):
            if i == j:
                continue
            diff, boot_diff = float(observed[i] - observed[j]), mean_rank[:, i] - mean_rank[:, j]
            out[m][o] = {
                "difference": diff,
                "se": float(np.std(boot_diff, ddof=1)),
                "opposite": float(np.mean(np.sign(boot_diff) != np.sign(diff))) if diff else None,
                "seeds": len(seeds),
            }
    return out


def _difference(a: dict[int, float], b: dict[int, float]) -> dict:
    """Mean and standard error of ``a - b`` over the seeds both have."""
    diffs = [a[s] - b[s] for s in sorted(set(a) & set(b))]
    if not diffs:
        return {"mean": None, "se": None, "seeds": 0}
    return {"mean": float(np.mean(diffs)), "se": harness.standard_error(diffs), "seeds": len(diffs)}


def _pick_losses(group: list[dict], n: str) -> dict[str, dict[str, dict[int, float]]]:
    """Per task and method, the loss of each seed's pick at budget ``n`` (runs without one
    left out), in the order of ``group``: the table that the summary's paired comparisons,
    counts and bootstrap all read. A store holds one run per task, setting, method and seed
    (its name), so a group of one setting has no two runs for one cell."""
    out: dict[str, dict[str, dict[int, float]]] = {}
    for r in group:
        if n in r["picks"]:
            loss = _loss(TASKS[r["task"]], r["picks"][n]["true"])
            out.setdefault(r["task"], {}).setdefault(r["method"], {})[r["seed"]] = loss
    return out


def _paired(losses: dict[str, dict[int, float]], method: str, other: str) -> str:
    """``above``/``below``/``level``: the method's loss against ``other``'s on one task (the
    task's entry of :func:`_pick_losses`), paired by seed, beyond two standard errors."""
    mine, theirs = losses.get(method, {}), losses.get(other, {})
    diffs = [theirs[s] - mine[s] for s in mine if s in theirs]
    if len(diffs) < 2:
        return "level"
    mean, se = float(np.mean(diffs)), harness.standard_error(diffs)
    if se is not None and abs(mean) > 2 * se and abs(mean) > 1e-9:
        return "above" if mean > 0 else "below"
    return "level"


def _rank_table(out: dict, budgets: list[str]) -> list[str]:
    """Markdown lines: each method's mean rank minus the reference's (``default``, else
    ``gp``) per budget, from :func:`_rank_versus`; none when no method has one."""
    ref = next((m for m in ("default", "gp") if m in out["methods"]), None)
    rows = []
    for m in out["methods"]:
        vs = [out["budgets"][n]["rank_versus"].get(m, {}).get(ref) for n in budgets]
        if m == ref or not any(vs):
            continue
        cells = [
            f"{harness.format_mean_se(v['difference'], v['se'], '+.2f')}"
            + ("" if v["opposite"] is None else f", {v['opposite']:.2f}")
            + f" ({v['seeds']})"
            if v
            else ""
            for v in vs
        ]
        rows.append(f"| {m} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    return [
        "",
        f"Mean rank minus {ref}'s (negative: ranked better) ± the standard error of a bootstrap"
        " of the seeds, the share of its replicates on the other side of zero, (the seeds):",
        "",
        "| method | " + " | ".join(budgets) + " |",
        "|---" * (len(budgets) + 1) + "|",
        *rows,
    ]


def _counts(out: dict, budgets: list[str], key: str, title: str, cell: str) -> list[str]:
    """Markdown lines: each method's count (``trapped`` or ``short``) per budget, formatted by
    ``cell``, then the two-sided Fisher exact p-value of each against the reference's
    (``default``, else ``gp``)."""
    lines = ["", title, ""]
    lines += ["| method | " + " | ".join(budgets) + " |", "|---" * (len(budgets) + 1) + "|"]
    for m in out["methods"]:
        cells = [cell.format(**out["budgets"][n][key][m]) for n in budgets]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    ref = out["budgets"][budgets[-1]]["fisher"][key]["against"]
    if ref is None:
        return lines
    lines += ["", f"Two-sided Fisher exact p-value against {ref}'s count:", ""]
    lines += ["| method | " + " | ".join(budgets) + " |", "|---" * (len(budgets) + 1) + "|"]
    for m in out["methods"]:
        if m == ref:
            continue
        ps = [out["budgets"][n]["fisher"][key]["p"].get(m) for n in budgets]
        lines.append(f"| {m} | " + " | ".join("" if p is None else f"{p:.3g}" for p in ps) + " |")
    return lines


def _markdown(summary: dict) -> str:
    lines = []
    for key, out in summary.items():
        family, setting = key.split("|")
        title = "exact scores" if setting == "none" else f"per-report epsilon {setting}"
        lines += [f"## {family}, {title}", ""]
        budgets = list(out["budgets"])
        head = " | ".join(f"score (median) / rank, {n}" for n in budgets)
        lines += [f"| method | {head} | below random (last budget) |"]
        lines += ["|---" * (len(budgets) + 2) + "|"]
        for m in out["methods"]:
            cells = []
            for n in budgets:
                b = out["budgets"][n]
                if m in b["score"]:
                    cells.append(
                        f"{b['score'][m]:.1f} ({b['median_score'][m]:.1f}) / "
                        f"{b['mean_rank'][m]:.2f}"
                    )
                else:
                    cells.append("")
            below = out["budgets"][budgets[-1]]["below_random"].get(m, [])
            lines.append(f"| {m} | {' | '.join(cells)} | {', '.join(below) or 'none'} |")
        lines += ["", "Per task (mean loss at the last budget):", ""]
        last = out["budgets"][budgets[-1]]["per_task"]
        lines += ["| task | " + " | ".join(out["methods"]) + " |"]
        lines += ["|---" * (len(out["methods"]) + 1) + "|"]
        for t, cells in last.items():
            vals = [f"{cells[m]['loss']:.4f}" if m in cells else "" for m in out["methods"]]
            lines.append(f"| {t} | " + " | ".join(vals) + " |")
        lines += ["", "Family score over the seeds each method ran on every task (mean ± SE):", ""]
        lines += ["| method | " + " | ".join(budgets) + " |", "|---" * (len(budgets) + 1) + "|"]
        for m in out["methods"]:
            cells = []
            for n in budgets:
                fs = out["budgets"][n]["family_score"].get(m)
                cells.append(
                    f"{harness.format_mean_se(fs['mean'], fs['se'], '.1f')} ({fs['seeds']})"
                    if fs
                    else ""
                )
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        for ref in ("default", "spread", "top", "gp", "tpe"):
            if ref not in out["methods"]:
                continue
            lines += ["", f"Family score minus {ref}'s, paired by seed (mean ± SE):", ""]
            lines += ["| method | " + " | ".join(budgets) + " |"]
            lines += ["|---" * (len(budgets) + 1) + "|"]
            for m in out["methods"]:
                vs = [out["budgets"][n]["versus"].get(m, {}).get(ref) for n in budgets]
                if m == ref or not any(v and v["seeds"] for v in vs):
                    continue
                cells = [
                    f"{harness.format_mean_se(v['mean'], v['se'], '+.1f')} ({v['seeds']})"
                    if v and v["seeds"]
                    else ""
                    for v in vs
                ]
                lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines += _rank_table(out, budgets)
        lines += _counts(
            out,
            budgets,
            "trapped",
            "Trapped studies (the pick below random search's median pick on the task; in"
            " parentheses those on a seed where no study here told a configuration above it):",
            "{trapped} of {studies} ({floor})",
        )
        lines += _counts(
            out,
            budgets,
            "short",
            "Studies short of half way (the pick's normalised score below 50, less than half"
            " of the way from random search's mean loss to the best known):",
            "{short} of {studies}",
        )
        short = out["budgets"][budgets[-1]]["short"]
        lines += ["", "Per task, studies short of half way (last budget):", ""]
        lines += ["| task | " + " | ".join(out["methods"]) + " |"]
        lines += ["|---" * (len(out["methods"]) + 1) + "|"]
        for t in out["budgets"][budgets[-1]]["per_task"]:
            counts = [short[m]["per_task"].get(t, 0) for m in out["methods"]]
            if any(counts):
                lines.append(f"| {t} | " + " | ".join(map(str, counts)) + " |")
        behind = out["budgets"][budgets[-1]]["behind"]
        lines += ["", "Behind another method beyond two standard errors (last budget):", ""]
        for m in out["methods"]:
            found = "; ".join(f"{t} ({', '.join(o)})" for t, o in behind.get(m, {}).items())
            lines.append(f"- {m}: {found or 'none'}")
        if "regret_vs_random" in out["budgets"][budgets[-1]]:
            reg = out["budgets"][budgets[-1]]["regret_vs_random"]
            lines += ["", "Regret relative to random search (geometric mean over tasks): "
                      + ", ".join(f"{m} {v:.2f}" for m, v in reg.items())]  # fmt: skip
        lines.append("")
    return "\n".join(lines)


@harness.figure
def _plot(plt: Any, summary: dict, path: Path) -> None:
    """The median normalised score against the trials, one panel per family and setting, one
    colour per method across panels."""
    if not summary:
        return
    methods = sorted({m for out in summary.values() for m in out["methods"]})
    colours = {m: plt.get_cmap("tab10" if len(methods) <= 10 else "tab20")(i)
               for i, m in enumerate(methods)}  # fmt: skip
    # each method its own marker too, so that lines which coincide stay visible
    markers = {m: harness.MARKERS[i % len(harness.MARKERS)] for i, m in enumerate(methods)}
    fig, axes = harness.panel_grid(len(summary), 4.2, 3.2)
    for ax, (key, out) in zip(axes, summary.items(), strict=False):
        budgets = [int(n) for n in out["budgets"]]
        for m in out["methods"]:
            ys = [out["budgets"][str(n)]["median_score"].get(m, np.nan) for n in budgets]
            main = m in ("privtune", "default")  # the default, drawn on top
            ax.plot(
                budgets,
                ys,
                marker=markers[m],
                color="black" if main else colours[m],
                lw=2.5 if main else 1.2,
                zorder=3 if main else 2,
                label=m,
            )
        ax.axhline(0.0, color="grey", lw=0.8)
        family, setting = key.split("|")
        ax.set_title(
            f"{family}, " + ("exact scores" if setting == "none" else f"epsilon {setting}")
        )
        ax.set_xlabel("trials")
        ax.set_ylabel("median normalised score")
        ax.set_xticks(budgets)
    handles = [
        plt.Line2D(
            [],
            [],
            color="black" if m in ("privtune", "default") else colours[m],
            marker=markers[m],
            label=m,
        )
        for m in methods
    ]
    fig.legend(handles=handles, loc="lower right", fontsize=7, ncol=2)
    harness.save_figure(
        fig, path, title="Normalised score (0: random search; 100: the best loss any run reached)"
    )


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--family", nargs="+", default=FAMILIES, choices=FAMILIES)
    parser.add_argument("--tasks", nargs="+", default=[], choices=sorted(TASKS))
    parser.add_argument("--settings", nargs="+", default=SETTINGS)
    parser.add_argument("--methods", nargs="+", default=METHODS)
    parser.add_argument("--seeds", nargs="+", type=int, default=SEEDS)
    parser.add_argument("--checkpoints", nargs="+", type=int, default=CHECKPOINTS)
    parser.add_argument("--variant", action="append", default=[], help="NAME=JSON kwargs")
    parser.add_argument(
        "--name",
        dest="summary_name",
        default="tuning_suite",
        help="the summary's files: NAME.json, .md and .png in the results folder",
    )
    parser.add_argument(
        "--common-seeds",
        action="store_true",
        help="summarize each family on the seeds every method ran on every task of it",
    )


def _quick(args: argparse.Namespace) -> None:
    args.family, args.tasks = ["plateau", "heavy"], ["plateau_synthetic", "branin_t2"]
    args.settings, args.methods, args.seeds = ["none", "10"], ["privtune", "random"], [0, 1]
    args.checkpoints = [4, 8]


BENCHMARK = harness.Benchmark(
    name="tuning_suite",
    doc=__doc__,
    quick="two tasks, 8 trials, privtune and random",
    arguments=_arguments,
    quick_settings=_quick,
    run=run,
    summarize=summarize,
    tools={"trace": trace},
    setup=lambda: optuna.logging.set_verbosity(optuna.logging.WARNING),
    summarize_after_run=False,
)


def main(argv: list[str] | None = None) -> dict | None:
    """Run or summarize; returns the summary written to ``<out>/tuning_suite.json``."""
    return harness.main(BENCHMARK, argv)


if __name__ == "__main__":
    main()
