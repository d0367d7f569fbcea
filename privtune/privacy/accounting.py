"""User-level (epsilon, delta) accounting for DP-FTS-DE (Dai, Low & Jaillet 2021).

What is accounted
-----------------
In every round the DP-FTS-DE server (Algo. 1 of the paper) releases one joint vector
``omega_t^joint = (omega_t^(i))_{i in [P]}``, one vector per sub-region, and that broadcast is the
only thing computed from the agents' vectors that leaves the (trusted) server. Each round is one
Poisson-subsampled Gaussian mechanism:

- every agent is selected independently with probability ``q``;
- every selected agent's vector is clipped to L2 norm ``S / sqrt(P)``, so its joint vector
  ``(N phi_n^(i) omega_n)_{i in [P]}`` has L2 norm at most ``N phi_max S``;
- the joint vectors are summed and divided by ``q N`` (the unbiased estimator of McMahan et al.
  2018), so adding or removing one agent moves the release by at most ``phi_max S / q`` in L2
  norm (their Lemma 1): that is the sensitivity of the joint release;
- Gaussian noise of standard deviation ``z phi_max S / q`` is added to every coordinate.

The ``P`` per-sub-region vectors are therefore one joint Gaussian mechanism whose noise multiplier
(noise standard deviation over L2 sensitivity) is ``z``, whatever ``P``, ``S`` and ``phi_max`` are
(Sec. 3.3 and App. A.1 of the paper). ``T`` rounds are the ``T``-fold composition of the
Poisson-subsampled Gaussian mechanism with parameters ``(q, z)``, which is what
:func:`subsampled_gaussian_epsilon` accounts for: pass as ``steps`` the number of broadcasts the
server actually made. The paper's Fig. 2 values are those of ``steps = T = 40``.

Neighbouring relation: user-level, one agent's vectors over all rounds present or replaced by
nothing (a term of the server's sum added or removed, dp-accounting's ``ADD_OR_REMOVE_ONE``),
with the number of agents and their weights public, as in the paper's analysis. The guarantee
covers the server's broadcasts; the server itself sees the raw vectors and must be trusted.

Why these numbers are smaller than the paper's
----------------------------------------------
The paper uses the moments accountant (Abadi et al. 2016): the Renyi DP (RDP) of the subsampled
Gaussian at the integer orders ``alpha = 2, ..., 64``, converted with the classic bound
``epsilon = min_alpha RDP(alpha) + log(1 / delta) / (alpha - 1)`` (Mironov 2017, Prop. 3). That
reproduces the paper's Fig. 2 values (5.93, 9.91, 20.12 and 9.91, 7.39, 5.22) to the printed two
decimals. dp-accounting's :class:`~dp_accounting.rdp.RdpAccountant` computes the same RDP curve
but (a) also at fractional orders (1.1, 1.2, ..., 10.9), and (b) converts it with the tighter
bound ``epsilon = RDP(alpha) + log(1 - 1/alpha) - log(delta alpha) / (alpha - 1)`` (Balle et al.
2020, Thm. 21; Canonne, Kamath & Steinke 2020, Prop. 12). At the Fig. 2 settings the conversion
lowers epsilon by about 1.0 to 1.4 and the fractional orders by up to 0.3 more, so
``accountant="rdp"`` gives about 4.88, 8.41, 18.40 and 8.41, 6.18, 4.27. Both are valid upper
bounds; the paper's are looser.

The privacy loss distribution (PLD) accountant (Koskela et al. 2020; Doroshenko et al. 2022, as
implemented in dp-accounting) composes the mechanism's privacy loss numerically and almost
exactly. With its default pessimistic discretization (interval ``1e-4``) the result is still a
valid upper bound, and it is tighter still: about 3.96, 7.05, 15.71 and 7.05, 5.15, 3.60 at the
Fig. 2 settings. It costs about a second per call there (more for small ``z``), against a few
milliseconds for RDP.
"""

from __future__ import annotations

import contextlib
import logging
import math
import numbers
import warnings
from collections.abc import Callable, Iterator

from .errors import PrivacyError

__all__ = ["default_delta", "subsampled_gaussian_epsilon"]

_ACCOUNTANTS = (None, "rdp", "pld")


def subsampled_gaussian_epsilon(
    q: float, z: float, steps: int, delta: float, accountant: str | None = None
) -> float:
    """Epsilon at ``delta`` of ``steps`` rounds of the Poisson-subsampled Gaussian mechanism.

    This is the user-level (epsilon, delta)-DP guarantee of DP-FTS-DE's server broadcasts
    (Proposition 1 of Dai, Low & Jaillet 2021) under the add-or-remove-one-agent relation; see
    the module docstring for why the noise multiplier of the joint release is ``z``.

    Parameters
    ----------
    q : float
        Probability with which each agent is selected in a round, in (0, 1]. ``q = 1`` is no
        subsampling (every agent in every round).
    z : float
        Noise multiplier, the noise standard deviation over the L2 sensitivity, > 0. In DP-FTS-DE
        the noise standard deviation is ``z phi_max S / q`` and the sensitivity ``phi_max S / q``.
    steps : int
        Number of rounds (releases) composed, >= 0.
    delta : float
        Target delta, in (0, 1); :func:`default_delta` gives the paper's ``1 / N**1.1``.
    accountant : {None, "rdp", "pld"}, default=None
        ``"rdp"``: dp-accounting's :class:`~dp_accounting.rdp.RdpAccountant` with its default
        orders (fast). ``"pld"``: dp-accounting's :class:`~dp_accounting.pld.PLDAccountant` with
        its default pessimistic discretization (tighter, about a second per call). ``None``:
        both, returning the smaller: each is a valid upper bound on the mechanism's epsilon at
        ``delta``, so their minimum is one too.

    Returns
    -------
    float
        The epsilon; 0.0 when ``steps == 0`` (nothing released, no accountant is called).

    Notes
    -----
    For some fractional orders dp-accounting's RDP computation of the subsampled Gaussian does
    not converge; it then excludes the order (its RDP is set to infinity, which only removes a
    candidate from the minimum, so the bound stays valid) and logs an absl warning. These
    warnings are dropped during the call; the logging configuration is left as it was.

    Examples
    --------
    >>> from privtune.privacy.accounting import default_delta, subsampled_gaussian_epsilon
    >>> eps = subsampled_gaussian_epsilon(0.25, 1.0, 40, default_delta(200), accountant="rdp")
    >>> round(eps, 2)
    8.41
    """
    q = _check_real(q, "q", "a finite float in (0, 1]", lambda v: 0.0 < v <= 1.0)
    z = _check_real(z, "z", "a finite float > 0", lambda v: math.isfinite(v) and v > 0.0)
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        raise ValueError(f"steps must be an integer >= 0, got {steps!r}.")
    steps = int(steps)
    delta = _check_real(
        delta, "delta", "a float in the open interval (0, 1)", lambda v: 0.0 < v < 1.0
    )
    if not (accountant is None or (isinstance(accountant, str) and accountant in _ACCOUNTANTS)):
        raise ValueError(f"accountant must be one of {_ACCOUNTANTS}, got {accountant!r}.")
    if steps == 0:
        return 0.0
    import dp_accounting  # here, not with privtune

    relation = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps
    )
    epsilons = []
    if accountant in (None, "rdp"):
        with _quiet_rdp_convergence_warnings():
            rdp = dp_accounting.rdp.RdpAccountant(neighboring_relation=relation)
            rdp.compose(event)
            epsilons.append(float(rdp.get_epsilon(delta)))
    if accountant in (None, "pld"):
        pld = dp_accounting.pld.PLDAccountant(neighboring_relation=relation)
        pld.compose(event)
        epsilons.append(float(pld.get_epsilon(delta)))
    return min(epsilons)


def default_delta(n_agents: int) -> float:
    """The paper's delta for ``n_agents`` agents, ``1 / n_agents**1.1``.

    Dai, Low & Jaillet (2021, Sec. 5) follow McMahan et al. (2018): delta a little below one over
    the number of users, so that the guarantee does not allow one agent's data to be released.

    Parameters
    ----------
    n_agents : int
        Number of agents ``N``, >= 2 (the formula gives 1.0 for one agent, which is no delta).

    Returns
    -------
    float
        ``1 / n_agents**1.1``, in (0, 1).

    Examples
    --------
    >>> from privtune.privacy.accounting import default_delta
    >>> round(default_delta(200), 6)
    0.002944
    """
    if isinstance(n_agents, bool) or not isinstance(n_agents, numbers.Integral) or n_agents < 1:
        raise ValueError(f"n_agents must be an integer >= 1, got {n_agents!r}.")
    if n_agents == 1:
        raise ValueError(
            "n_agents=1 gives delta = 1 / 1**1.1 = 1.0, which is not a valid delta: user-level DP "
            "protects one agent among others and needs at least 2 agents."
        )
    return 1.0 / int(n_agents) ** 1.1


#: privtune's default delta of user-level DP: the paper's ``1 / N^1.1`` is a weak guarantee for
#: the federations of a few parties that tuning has (0.22 for 4 parties); see
#: :func:`check_user_delta`.
DEFAULT_USER_DELTA = 1e-6

#: :func:`check_user_delta` warns above this expected number of parties published in full.
WEAK_DELTA_PARTIES = 0.01


def check_user_delta(delta: float | None, n_agents: int, *, stacklevel: int = 3) -> float:
    """The delta of user-level DP among ``n_agents`` parties: refused when it is no guarantee,
    with a warning when it is a weak one.

    The rule: the mechanism that publishes each party's whole data independently with
    probability ``delta`` is ``(0, delta)``-DP, and publishes ``delta * N`` parties in
    expectation. So ``delta >= 1 / N`` guarantees nothing (a ``PrivacyError`` is raised), and
    ``delta * N`` above :data:`WEAK_DELTA_PARTIES` (0.01) is warned about: it allows more
    than a 1 % expected chance of a party published in full. The paper's ``1 / N^1.1``
    (:func:`default_delta`) passes the first test and fails the second for every ``N`` below
    ``10^20``.

    Parameters
    ----------
    delta : float or None
        ``None``: :data:`DEFAULT_USER_DELTA`.
    n_agents : int
        ``N``, >= 2.
    stacklevel : int, default=3
        Of the warning.

    Returns
    -------
    float
    """
    n = int(n_agents)
    if delta is None:
        delta = DEFAULT_USER_DELTA
    delta = _check_real(delta, "delta", "a float in (0, 1)", lambda d: 0.0 < d < 1.0)
    if delta * n >= 1.0:
        raise PrivacyError(
            f"delta={delta:g} among {n} parties is no guarantee: a mechanism that publishes each "
            f"party's whole data with probability delta satisfies it and publishes "
            f"delta * N = {delta * n:.3g} parties in expectation. Pass delta well below "
            f"1 / N = {1.0 / n:.3g} (the default is {DEFAULT_USER_DELTA:g})."
        )
    if delta * n > WEAK_DELTA_PARTIES:
        warnings.warn(
            f"delta={delta:g} among {n} parties is a weak guarantee: it allows publishing a "
            f"party's whole data with expected count delta * N = {delta * n:.3g} (above "
            f"{WEAK_DELTA_PARTIES:g}). The paper's 1 / N^1.1 reproduces its numbers; for a "
            f"guarantee, pass delta below {WEAK_DELTA_PARTIES / n:.3g} (the default is "
            f"{DEFAULT_USER_DELTA:g}).",
            UserWarning,
            stacklevel=stacklevel,
        )
    return delta


def _check_real(value, name: str, allowed: str, ok: Callable[[float], bool]) -> float:
    """``value`` as a float when it is a real number (not a bool) for which ``ok`` holds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not ok(float(value)):
        raise ValueError(f"{name} must be {allowed}, got {value!r}.")
    return float(value)


class _DropNonConvergence(logging.Filter):
    """Drop dp-accounting's "failed to converge ... Excluding this order" RDP warnings."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "failed to converge" not in record.getMessage()


@contextlib.contextmanager
def _quiet_rdp_convergence_warnings() -> Iterator[None]:
    """Silence the RDP non-convergence warnings on the ``absl`` logger inside the block.

    A filter is added to ``logging.getLogger("absl")`` and removed on exit, whatever happens;
    levels, handlers and other records are untouched. While it is in place it also drops such
    records logged by other threads (only records containing "failed to converge").
    """
    logger = logging.getLogger("absl")
    drop = _DropNonConvergence()
    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)
