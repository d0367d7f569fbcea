"""Optimizers on the unit cube with the ask/tell contract of :class:`.base.BaseOptimizer`.

Pure numpy/scipy: nothing here imports Optuna or scikit-learn.

=================  =====================================================================
class              algorithm
=================  =====================================================================
``GPUCB``          exact GP-UCB (non-private, sub-Gaussian baseline)
``TGPUCB``         LDP-TGP-UCB (Zhou & Tan, Alg. 2) / heavy-tailed TGP-UCB
``ATAGPUCB``       LDP-ATA-GP-UCB (Zhou & Tan, Alg. 1) / ATA-GP-UCB
``MoMAGPUCB``      LDP-MoMA-GP-UCB / MoMA-GP-UCB (Zhou & Tan, Alg. 3)
``RandomSearch``   uniform proposals, GP posterior for recommendations
``GOUCB``          GO-UCB (Liu & Wang, Alg. 1), a parametric model instead of a GP
``QFFGPUCB``       GP-UCB on Fourier features, non-private, JDP or local JDP (Dubey, Alg. 1-3)
=================  =====================================================================
"""

from .ata_gp_ucb import ATAGPUCB
from .base import BaseOptimizer
from .go_ucb import GOUCB
from .gp_ucb import GPUCB, TGPUCB, RandomSearch
from .moma_gp_ucb import MoMAGPUCB
from .qff_gp_ucb import QFFGPUCB

__all__ = [
    "ATAGPUCB",
    "GOUCB",
    "GPUCB",
    "QFFGPUCB",
    "TGPUCB",
    "BaseOptimizer",
    "MoMAGPUCB",
    "RandomSearch",
]
