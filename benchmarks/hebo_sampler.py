"""HEBO (Cowen-Rivers et al. 2022, the winner of the 2020 black-box optimisation challenge) as an
Optuna sampler, for comparisons only.

HEBO is not a dependency of privtune or of its benchmarks: install it with
``pip install --no-deps hebo`` and its own dependencies (``pymoo catboost disjoint-set
gpytorch``). HEBO 0.3.6 still uses numpy aliases that numpy 2 removed; they are restored here,
in this module, never in the library.

The sampler keeps one ``HEBO`` instance per study (its quasi-random start-up sequence runs on),
tells it every completed trial it has not seen (as a loss: the value negated when the study
maximises) and asks it for one point per trial. HEBO draws from numpy's and torch's global
generators: both are seeded from the sampler's seed and the trial number before each ask.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import optuna
from optuna.distributions import (
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.trial import TrialState

__all__ = ["HEBOSampler", "hebo_available"]

for _alias, _target in (("float_", "float64"), ("complex_", "complex128"), ("int_", "int64")):
    if not hasattr(np, _alias):
        setattr(np, _alias, getattr(np, _target))


def hebo_available() -> bool:
    """Whether HEBO imports; if not, says so on stderr."""
    try:
        import hebo.optimizers.hebo  # noqa: F401
    except Exception as exc:  # an ImportError, or an incompatibility of its pins
        print(f"HEBO is not available ({exc}): its runs are skipped", file=sys.stderr)
        return False
    return True


def _design(space: dict) -> tuple[list[dict], dict]:
    """HEBO's design-space records of Optuna distributions, and each categorical's choices
    (HEBO gets their indices, so any hashable choice, ``None`` included, round-trips)."""
    records, choices = [], {}
    for name, dist in space.items():
        if isinstance(dist, CategoricalDistribution):
            choices[name] = list(dist.choices)
            records.append(
                {"name": name, "type": "cat", "categories": list(range(len(dist.choices)))}
            )
        elif isinstance(dist, IntDistribution):
            kind = "pow_int" if dist.log else "int"
            if dist.step != 1:
                records.append(
                    {
                        "name": name,
                        "type": "int",
                        "lb": 0,
                        "ub": (dist.high - dist.low) // dist.step,
                    }
                )
                choices[name] = ("step", dist.low, dist.step)
            else:
                records.append({"name": name, "type": kind, "lb": dist.low, "ub": dist.high})
        elif isinstance(dist, FloatDistribution):
            kind = "pow" if dist.log else "num"
            records.append({"name": name, "type": kind, "lb": dist.low, "ub": dist.high})
        else:  # pragma: no cover - Optuna has no other distribution
            raise TypeError(f"unsupported distribution {dist!r}")
    return records, choices


class HEBOSampler(BaseSampler):
    """HEBO behind Optuna's sampler interface (see the module).

    Parameters
    ----------
    seed : int
        Seeds HEBO's start-up sequence and, with the trial number, each ask.
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        self._random = RandomSampler(seed=seed)
        self._space = IntersectionSearchSpace()
        self._hebo = None
        self._choices: dict = {}
        self._seen: set[int] = set()

    def infer_relative_search_space(self, study, trial) -> dict:
        return self._space.calculate(study)

    def sample_relative(self, study, trial, search_space) -> dict:
        if not search_space:
            return {}
        import pandas as pd
        import torch
        from hebo.design_space.design_space import DesignSpace
        from hebo.optimizers.hebo import HEBO

        if self._hebo is None:
            records, self._choices = _design(search_space)
            self._hebo = HEBO(DesignSpace().parse(records), scramble_seed=self.seed)
        sign = -1.0 if study.direction == optuna.study.StudyDirection.MAXIMIZE else 1.0
        new = [
            t
            for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if t.number not in self._seen and all(n in t.params for n in search_space)
        ]
        if new:
            rows = [{n: self._encode(n, t.params[n]) for n in search_space} for t in new]
            losses = np.array([[sign * float(t.value)] for t in new])
            self._hebo.observe(pd.DataFrame(rows), losses)
            self._seen.update(t.number for t in new)
        np.random.seed((self.seed * 100_003 + trial.number) % 2**32)  # noqa: NPY002 (HEBO's)
        torch.manual_seed(self.seed * 100_003 + trial.number)
        suggestion = self._hebo.suggest(n_suggestions=1).iloc[0].to_dict()
        return {n: self._decode(n, suggestion[n], search_space[n]) for n in search_space}

    def _encode(self, name, value):
        spec = self._choices.get(name)
        if spec is None:
            return value
        if isinstance(spec, tuple):  # a stepped integer: its index on the grid
            return (value - spec[1]) // spec[2]
        return spec.index(value)

    def _decode(self, name, value, dist):
        spec = self._choices.get(name)
        if isinstance(spec, list):
            return spec[round(float(value))]
        if isinstance(spec, tuple):
            return int(spec[1] + spec[2] * round(float(value)))
        if isinstance(dist, IntDistribution):
            return int(min(max(round(float(value)), dist.low), dist.high))
        value = float(value)
        return min(max(value, dist.low), dist.high) if math.isfinite(value) else dist.low

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self._random.sample_independent(study, trial, param_name, param_distribution)
