"""Tune a random forest with Optuna and LDP-MoMA-GP-UCB: Optuna stores only privatized scores.

python examples/optuna_private.py
"""

import optuna
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score

from privtune import PrivateGPUCBSampler

X, y = load_breast_cancer(return_X_y=True)


def objective(trial: optuna.Trial) -> float:
    model = RandomForestClassifier(
        n_estimators=trial.suggest_int("n_estimators", 10, 60),
        max_depth=trial.suggest_int("max_depth", 1, 10),
        criterion=trial.suggest_categorical("criterion", ["gini", "entropy"]),
        random_state=0,
    )
    return cross_val_score(model, X, y, cv=3).mean()  # the raw accuracy, in [0, 1]


# Each stored value is clip(accuracy, 0, 1) + Laplace(1 / epsilon): epsilon-LDP per trial.
sampler = PrivateGPUCBSampler("moma", epsilon=2.0, value_range=(0.0, 1.0), seed=0)
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(direction="maximize", sampler=sampler)
study.optimize(sampler.privatize(objective), n_trials=24)

params = sampler.recommend(study)  # best posterior mean: pools the noisy values
print("recommended:", params)
print("its true 3-fold accuracy:", round(objective(optuna.trial.FixedTrial(params)), 4))
print("best_trial's params (argmax of noisy values):", study.best_params)
print("privacy:", sampler.privacy_report(study))
