"""Federated Bayesian optimization with user-level DP: DP-FTS-DE (Dai, Low & Jaillet 2021).

- :class:`FTSAgent` — an agent (Alg. 2): Thompson sampling on shared random Fourier features.
- :class:`DPFTSServer` — the central server (Alg. 1): Poisson subsampling, clipping, softmax
  weights per sub-region, Gaussian noise; without privacy, the weighted average of FTS(-DE).
- :class:`SubRegions` — the equal-volume hyper-rectangles of distributed exploration.
- :class:`FederatedRunner` — the rounds, in process or on joblib workers.
- :class:`FederatedSearch` — N parties tune one scikit-learn estimator, each on its own data.

The privacy loss of the broadcasts is accounted by
:func:`privtune.privacy.accounting.subsampled_gaussian_epsilon` (dp-accounting's RDP and PLD
accountants). scikit-learn is imported only with :class:`FederatedSearch`.
"""

from typing import TYPE_CHECKING

from .agent import FTSAgent, server_probability
from .regions import SubRegions
from .runner import FederatedRunner, RoundRecord
from .server import DPFTSServer, RoundStats, inverse_temperature, softmax_weights

if TYPE_CHECKING:
    from .search import FederatedSearch

__all__ = [
    "DPFTSServer",
    "FTSAgent",
    "FederatedRunner",
    "FederatedSearch",
    "RoundRecord",
    "RoundStats",
    "SubRegions",
    "inverse_temperature",
    "server_probability",
    "softmax_weights",
]


def __getattr__(name: str):
    if name == "FederatedSearch":
        from .search import FederatedSearch

        return FederatedSearch
    raise AttributeError(f"module 'privtune.federated' has no attribute {name!r}")
