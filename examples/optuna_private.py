"""Tune a random forest with Optuna on privatized scores: Optuna stores only released values.

The untuned forest is enqueued as the first trial and is the baseline of the recommendation:
``sampler.recommend(study, baseline=0)`` keeps it unless another configuration beats it with
posterior probability 0.95 (computed from released values). The recommendation is compared
with the best posterior mean alone, with ``study.best_trial`` (the argmax of the noisy values)
and with the untuned forest, all by their true CV accuracy, which only the data owner can
compute.

    python examples/optuna_private.py            # about a minute on two cores
    python examples/optuna_private.py --quick    # a smoke run of a few seconds
"""

import sys

import optuna
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_score

from privtune import PrivateGPUCBSampler

quick = "--quick" in sys.argv
n_trials = 6 if quick else 40
X, y = load_breast_cancer(return_X_y=True)
folds = StratifiedKFold(3 if quick else 5, shuffle=True, random_state=0)


def objective(trial: optuna.Trial) -> float:
    model = RandomForestClassifier(
        n_estimators=trial.suggest_int("n_estimators", 20, 300),
        min_samples_leaf=trial.suggest_int("min_samples_leaf", 1, 20),
        max_features=trial.suggest_categorical("max_features", ["sqrt", "log2"]),
        random_state=0,
        n_jobs=2,
    )
    return cross_val_score(model, X, y, cv=folds).mean()  # the raw accuracy, in [0, 1]


def progress(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
    if (trial.number + 1) % 10 == 0 or trial.number + 1 == n_trials:
        print(f"{trial.number + 1}/{n_trials} trials", flush=True)


# Each stored value is clip(accuracy, 0, 1) + Laplace(1 / epsilon): epsilon-LDP per trial.
sampler = PrivateGPUCBSampler(epsilon=10.0, value_range=(0.0, 1.0), seed=0)
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(direction="maximize", sampler=sampler)
untuned = {"n_estimators": 100, "min_samples_leaf": 1, "max_features": "sqrt"}
study.enqueue_trial(untuned)  # the forest's own values, first
study.optimize(sampler.privatize(objective), n_trials=n_trials, callbacks=[progress])

recommended = sampler.recommend(study, baseline=0)  # trial 0: the untuned forest
best_mean = sampler.recommend(study)
true = {
    "untuned forest": objective(optuna.trial.FixedTrial(untuned)),
    "recommend(study, baseline=0)": objective(optuna.trial.FixedTrial(recommended)),
    "recommend(study): best posterior mean": objective(optuna.trial.FixedTrial(best_mean)),
    "study.best_trial (noisy argmax)": objective(optuna.trial.FixedTrial(study.best_params)),
}
print()
for name, score in true.items():
    print(f"{name:38s} true CV accuracy {score:.4f}")
print("recommended:", recommended)
report = sampler.privacy_report(study)
print(f"privacy: {report['n_reports']} reports of epsilon {report['epsilon_per_report']:g}")
print(f"what it protects: {report['protects']}")
