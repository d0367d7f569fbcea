"""privtune: Bayesian optimization for hyperparameter tuning with private or heavy-tailed scores.

The layers: :mod:`privtune.space` maps mixed hyperparameter spaces to the unit
cube, :mod:`privtune.kernels` and :mod:`privtune.features` define the surrogate,
:mod:`privtune.optimizers` holds the algorithms (ask/tell on the cube) and
:mod:`privtune.privacy` the curator and the privacy ledger. :mod:`privtune.tuning` holds what the
adapters share; :mod:`privtune.optuna` is the Optuna adapter (:class:`PrivateGPUCBSampler`,
:class:`GOUCBSampler`) and
:mod:`privtune.sklearn` the scikit-learn one (:class:`PrivateBOSearchCV`).
:mod:`privtune.federated` is DP-FTS-DE, federated tuning with user-level DP
(:class:`privtune.federated.FederatedSearch`).
"""

from typing import TYPE_CHECKING

from .kernels import SE, Matern
from .optimizers import ATAGPUCB, GOUCB, GPUCB, TGPUCB, MoMAGPUCB, RandomSearch
from .privacy import LaplaceCurator, PrivacyError, PrivacyLedger
from .space import Categorical, Integer, Real, SearchSpace

if TYPE_CHECKING:
    from .optuna import GOUCBSampler, PrivateGPUCBSampler
    from .records import RecordObjective
    from .sklearn import PrivateBOSearchCV, PrivateSelectionSearchCV

__version__ = "0.1.0.dev0"

__all__ = [
    "ATAGPUCB",
    "GOUCB",
    "GPUCB",
    "SE",
    "TGPUCB",
    "Categorical",
    "GOUCBSampler",
    "Integer",
    "LaplaceCurator",
    "Matern",
    "MoMAGPUCB",
    "PrivacyError",
    "PrivacyLedger",
    "PrivateBOSearchCV",
    "PrivateGPUCBSampler",
    "PrivateSelectionSearchCV",
    "RandomSearch",
    "Real",
    "RecordObjective",
    "SearchSpace",
    "__version__",
]


#: the adapters, imported on first use, not with privtune (the spaces, optimizers and curators
#: need neither scikit-learn's search machinery nor Optuna)
_ADAPTERS = {
    "PrivateBOSearchCV": "sklearn",
    "PrivateSelectionSearchCV": "sklearn",
    "GOUCBSampler": "optuna",
    "PrivateGPUCBSampler": "optuna",
    "RecordObjective": "records",
}


def __getattr__(name: str):
    if name in _ADAPTERS:
        import importlib

        return getattr(importlib.import_module(f".{_ADAPTERS[name]}", __name__), name)
    raise AttributeError(f"module 'privtune' has no attribute {name!r}")
