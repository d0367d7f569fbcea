"""Tune k-nearest neighbours with Optuna at a total epsilon of 1 that protects each of
1,000 validation records.

Three models side by side, each scored on a fresh test set that no study saw:

- the untuned classifier (scikit-learn's defaults: 5 neighbours, uniform weights);
- exact tuning: an Optuna study whose objective fits on the training records and returns the
  validation accuracy, what one would run without privacy;
- the private study: the same sampler under ``privacy_unit="record"`` with privtune's
  ``RecordObjective``. Its trials store cross-validated accuracies on the training records
  (which this unit does not protect), and ``sampler.recommend(study, baseline=0)`` makes one
  private choice on the validation records, the untuned classifier (trial 0) and the trials that
  score at least as well on the training records as candidates: the whole budget spent once.

    python examples/optuna_private.py            # about 15 seconds on two cores
    python examples/optuna_private.py --quick    # a smoke run of a few seconds
"""

import sys

import optuna
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from privtune import PrivateGPUCBSampler, RecordObjective

quick = "--quick" in sys.argv
n_trials = 6 if quick else 30
X, y = make_classification(
    2000 if quick else 8000,
    20,
    n_informative=6,
    n_redundant=4,
    n_classes=3,
    flip_y=0.15,
    class_sep=0.8,
    random_state=0,
)
X, X_test, y, y_test = train_test_split(X, y, test_size=0.375, stratify=y, random_state=0)
X_train, X_val, y_train, y_val = train_test_split(
    X, y, test_size=0.2, stratify=y, random_state=0
)  # 4,000 training and 1,000 validation records (--quick: a quarter)


def make(trial: optuna.Trial):
    """The classifier of a trial's parameters."""
    return make_pipeline(
        StandardScaler(),
        KNeighborsClassifier(
            n_neighbors=trial.suggest_int("n_neighbors", 1, 300, log=True),
            weights=trial.suggest_categorical("weights", ["uniform", "distance"]),
        ),
    )


def test_accuracy(params: dict) -> float:
    """The test accuracy of the classifier of ``params`` fitted on the training records."""
    model = make(optuna.trial.FixedTrial(params)).fit(X_train, y_train)
    return model.score(X_test, y_test)


optuna.logging.set_verbosity(optuna.logging.WARNING)
untuned = {"n_neighbors": 5, "weights": "uniform"}  # scikit-learn's defaults

# exact tuning: every validation score seen as it is
exact = PrivateGPUCBSampler(seed=0).create_study(direction="maximize")
exact.enqueue_trial(untuned)
exact.optimize(
    lambda t: make(t).fit(X_train, y_train).score(X_val, y_val),
    n_trials=n_trials,
    show_progress_bar=not quick,
)

# the private study: the same code path as without privacy, and one private choice at the end
objective = RecordObjective(make, X_train, y_train, X_val, y_val, scoring="accuracy")
sampler = PrivateGPUCBSampler(
    privacy_unit="record",
    privacy_budget=(1.0, 1e-6),
    n_trials=n_trials,
    value_range=(0.0, 1.0),
    seed=0,
)
study = sampler.create_study(direction="maximize")
study.enqueue_trial(untuned)  # trial 0: the untuned classifier, the choice's candidate 0
sampler.optimize(study, objective, show_progress_bar=not quick)  # stores training scores
private = sampler.recommend(study, baseline=0)  # the one private choice

print()
rows = [("untuned", untuned), ("exact tuning", exact.best_params), ("private", private)]
for name, params in rows:
    print(f"{name:14s} test accuracy {test_accuracy(params):.4f}  {params}")
report = sampler.privacy_report(study)
print(f"privacy: {report['protects']}; {report['candidates']}")
