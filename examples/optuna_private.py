"""Tune an MLP with Optuna at a total epsilon of 1 that protects each validation record.

The objective is privtune's ``RecordObjective``: it fits the network on the training records
and returns its accuracy on the 5,200 validation records, which the sampler releases with
Laplace noise scaled to one record's share (1 / n_val). The study runs through
``sampler.optimize``, so the objective cannot be left unprivatized, and Optuna stores only
released values. The untuned network is enqueued first and is the recommendation's baseline:
``sampler.recommend(study, baseline=0)`` keeps it unless another configuration beats it with
posterior probability ``1 - 0.05 / m`` for ``m`` competitors. Every pick is then scored on a
fresh test set that the study never saw, which only the data owner can do.

    python examples/optuna_private.py            # about 25 seconds
    python examples/optuna_private.py --quick    # a smoke run of a few seconds
"""

import sys

import optuna
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from privtune import PrivateGPUCBSampler, RecordObjective
from privtune.optuna_pick import PickTracker

quick = "--quick" in sys.argv
n_trials = 6 if quick else 20
X, y = make_classification(
    1500 if quick else 9000,
    20,
    n_informative=8,
    n_redundant=4,
    n_classes=3,
    flip_y=0.03,
    class_sep=0.8,
    random_state=0,
)
X, X_test, y, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
X_train, X_val, y_train, y_val = train_test_split(
    X, y, train_size=2000 if not quick else 600, stratify=y, random_state=0
)


def make(trial: optuna.Trial):
    """The network of a trial's parameters (the defaults: alpha 1e-4, learning rate 1e-3)."""
    return make_pipeline(
        StandardScaler(),
        MLPClassifier(
            alpha=trial.suggest_float("alpha", 1e-6, 1.0, log=True),
            learning_rate_init=trial.suggest_float("learning_rate_init", 1e-4, 0.1, log=True),
            max_iter=60 if quick else 200,
            random_state=0,
        ),
    )


objective = RecordObjective(make, X_train, y_train, X_val, y_val, scoring="accuracy")
sampler = PrivateGPUCBSampler(
    privacy_unit="record",
    privacy_budget=(1.0, 1e-6),
    n_trials=n_trials,
    value_range=(0.0, 1.0),
    seed=0,
)
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = sampler.create_study(direction="maximize")
untuned = {"alpha": 1e-4, "learning_rate_init": 1e-3}
study.enqueue_trial(untuned)  # the network's own values, first
# progress: the recommendation after each trial (Optuna's own "best value" would be the
# largest noisy value), computed from the released values only
tracker = PickTracker(sampler, baseline=0, show=True)
sampler.optimize(study, objective, callbacks=[tracker])


def test_accuracy(params: dict) -> float:
    """The test accuracy of the network of ``params`` fitted on the training records."""
    model = make(optuna.trial.FixedTrial(params)).fit(X_train, y_train)
    return model.score(X_test, y_test)


recommended = sampler.recommend(study, baseline=0)  # trial 0: the untuned network
picks = {
    "untuned network": untuned,
    "recommend(study, baseline=0)": recommended,
    "study.best_trial (noisy argmax)": study.best_params,
}
print()
for name, params in picks.items():
    print(f"{name:32s} test accuracy {test_accuracy(params):.4f}")
print("recommended:", recommended)
report = sampler.privacy_report(study)
print(f"privacy: {report['n_reports']} reports of epsilon {report['epsilon_per_report']:.3g}")
print(f"what it protects: {report['protects']}")
