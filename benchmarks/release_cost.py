"""The cost of the release path per trial: a private Optuna study of 200 trials with the
``"random"`` algorithm (no model to fit, so the release path, the receipts and the checks are
most of the sampler's own time), timed per trial.

Run it against two checkouts of privtune in turns (``PYTHONPATH=<checkout>``), pair by pair,
for a ratio that does not depend on the machine::

    for i in $(seq 7); do
        PYTHONPATH=<other checkout> python -m benchmarks.release_cost >>old.txt
        PYTHONPATH=. python -m benchmarks.release_cost >>new.txt
    done

It prints one JSON line: the milliseconds per trial of the private study and of the same study
without privacy.
"""

from __future__ import annotations

import json
import time

import optuna

from privtune import PrivateGPUCBSampler

N_TRIALS = 200


def objective(trial: optuna.Trial) -> float:
    return trial.suggest_float("x", 0.0, 1.0) * 0.5 + trial.suggest_float("y", 0.0, 1.0) * 0.5


def per_trial_ms(**kwargs) -> float:
    sampler = PrivateGPUCBSampler("random", seed=0, **kwargs)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    start = time.perf_counter()
    study.optimize(sampler.privatize(objective), n_trials=N_TRIALS)
    return 1000 * (time.perf_counter() - start) / N_TRIALS


def main() -> dict:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    out = {
        "private_ms_per_trial": per_trial_ms(epsilon=1.0, value_range=(0.0, 1.0)),
        "exact_ms_per_trial": per_trial_ms(),
    }
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
