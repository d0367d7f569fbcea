"""Privacy mechanisms and accounting.

- :class:`LaplaceCurator` — Curator 1, CTL(epsilon), of Zhou & Tan (2021): epsilon-LDP on each
  reported score (clip to the declared ``value_range``, add Laplace noise).
- :class:`GaussianCurator` — the client's release of local joint DP (Dubey 2021, Alg. 3) when
  the played point is public: clip to ``value_range``, add Gaussian noise.
- :class:`PrivacyLedger` — a record of every release as a dp-accounting ``DpEvent``, answering
  the per-report epsilon and the composed epsilon over the reports of one data owner.
- :class:`Receipt` — what a release leaves behind (its dp-accounting event, guarantee, range and
  the released value's digest), from which a ledger is rebuilt.
- :class:`PrivacyError` — raised where privtune fails closed; :mod:`privtune.privacy.withhold`
  says what an exception may carry out of a private computation, and
  :mod:`privtune.privacy.seeds` where the noise's randomness comes from.
- :func:`subsampled_gaussian_epsilon` — the user-level (epsilon, delta) of DP-FTS-DE's server
  broadcasts (Dai, Low & Jaillet 2021): the Poisson-subsampled Gaussian mechanism composed over
  rounds, by dp-accounting's RDP and PLD accountants; :func:`default_delta` is the paper's
  ``delta = 1 / N^1.1``.
- :func:`per_report_epsilon` — the per-report epsilon that a total ``(epsilon, delta)`` affords
  over a number of Laplace reports (dp-accounting's PLD accountant, the tightest for them), and
  :func:`laplace_composed_epsilon`, the other way round; :func:`plan_budget`, what a budget buys
  before any score is touched; :class:`PrivacyBudget`, a total ``(epsilon, delta)`` over a
  planned number of reports, which :class:`BudgetMeter` enforces (refusing with
  :class:`BudgetExhaustedError`) (:mod:`privtune.privacy.budget`).
- :func:`private_selection` — publish only the best of a random number of random candidates,
  each scored with Laplace noise inside (Liu & Talwar 2019; Papernot & Steinke 2022), accounted
  with dp-accounting's ``RepeatAndSelectDpEvent`` (:mod:`privtune.privacy.selection`).
- :class:`PrivacyUnit` — whom a release protects: each whole score (the papers' local model,
  sensitivity ``hi - lo``) or each of ``n_val`` validation records (replace-one, sensitivity
  ``(hi - lo) / n_val``) (:mod:`privtune.privacy.units`); :class:`ScoreRelease`, the one path
  from a raw score to a released one that every adapter takes (:mod:`privtune.privacy.release`).
- :func:`set_noise_sampler` — draw the curators' noise with OpenDP's vetted samplers instead of
  numpy's (the ``opendp`` extra; :mod:`privtune.privacy.noise`).
- :mod:`privtune.privacy.gaussian` — the Gaussian mechanisms of Dubey (2021) for the statistics
  of GP-UCB on Fourier features: :class:`TreeAggregation` ((alpha, beta)-joint DP, Alg. 2) and
  the per-client noise of local joint DP (Alg. 3).
"""

from .accounting import default_delta, subsampled_gaussian_epsilon
from .budget import BudgetPlan, plan_budget
from .composition import (
    BudgetMeter,
    PrivacyBudget,
    RepeatDistribution,
    laplace_composed_epsilon,
    per_report_epsilon,
    selection_epsilon,
    selection_per_candidate_epsilon,
)
from .curator import GaussianCurator, LaplaceCurator
from .errors import BudgetExhaustedError, PrivacyError
from .gaussian import TreeAggregation
from .ledger import PrivacyLedger
from .noise import get_noise_sampler, set_noise_sampler
from .receipts import Receipt
from .release import ScoreRelease
from .selection import PrivateSelection, private_selection
from .units import PrivacyUnit

__all__ = [
    "BudgetExhaustedError",
    "BudgetMeter",
    "BudgetPlan",
    "GaussianCurator",
    "LaplaceCurator",
    "PrivacyBudget",
    "PrivacyError",
    "PrivacyLedger",
    "PrivacyUnit",
    "PrivateSelection",
    "Receipt",
    "RepeatDistribution",
    "ScoreRelease",
    "TreeAggregation",
    "default_delta",
    "get_noise_sampler",
    "laplace_composed_epsilon",
    "per_report_epsilon",
    "plan_budget",
    "private_selection",
    "selection_epsilon",
    "selection_per_candidate_epsilon",
    "set_noise_sampler",
    "subsampled_gaussian_epsilon",
]
