"""The user-level accountant of DP-FTS-DE (privtune.privacy.accounting).

The Fig. 2 settings of Dai, Low & Jaillet (2021): N = 200 agents, T = 40 rounds,
delta = 1 / 200**1.1. The paper's privacy losses come from the moments accountant: the RDP of
the subsampled Gaussian at the integer orders 2..64, converted with the classic bound
``RDP(alpha) + log(1/delta) / (alpha - 1)``; that is reproduced below. dp-accounting's RDP
accountant uses fractional orders too and the tighter RDP-to-(epsilon, delta) conversion of
Balle et al. (2020) / Canonne, Kamath & Steinke (2020), so its values are smaller; the PLD
accountant composes the privacy loss distribution numerically (almost exactly) and is smaller
still. All three are valid upper bounds.
"""

from __future__ import annotations

import itertools
import logging
import math

import dp_accounting
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from privtune.privacy import accounting
from privtune.privacy.accounting import default_delta, subsampled_gaussian_epsilon

N_AGENTS = 200
T = 40
DELTA = 1 / N_AGENTS**1.1

# (q, z) -> the paper's printed privacy loss, Fig. 2c (q at z = 1) and 2d (z at q = 0.25).
PAPER = {
    (0.15, 1.0): 5.93,
    (0.25, 1.0): 9.91,
    (0.5, 1.0): 20.12,
    (0.25, 1.2): 7.39,
    (0.25, 1.5): 5.22,
}
# Measured with dp-accounting 0.6.0 (the values the module docstring quotes).
OUR_RDP = {
    (0.15, 1.0): 4.87782,
    (0.25, 1.0): 8.40607,
    (0.5, 1.0): 18.40252,
    (0.25, 1.2): 6.17946,
    (0.25, 1.5): 4.26567,
}
OUR_PLD = {
    (0.15, 1.0): 3.96359,
    (0.25, 1.0): 7.05377,
    (0.5, 1.0): 15.71000,
    (0.25, 1.2): 5.15242,
    (0.25, 1.5): 3.59716,
}
SETTINGS = list(PAPER)
DEFAULT_CHECKED = [(0.15, 1.0), (0.25, 1.5)]


def _event(q: float, z: float, steps: int) -> dp_accounting.DpEvent:
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps
    )


def _moments_accountant(q: float, z: float, steps: int, delta: float) -> float:
    """The paper's conversion: integer orders 2..64, ``min RDP(a) + log(1/delta) / (a - 1)``.

    The RDP values are dp-accounting's, read from the accountant's private ``_orders`` and
    ``_rdp`` after composing (dp-accounting has no public accessor for them).
    """
    acc = dp_accounting.rdp.RdpAccountant(orders=list(range(2, 65)))
    acc.compose(_event(q, z, steps))
    return min(
        float(r) + math.log(1 / delta) / (float(a) - 1)
        for a, r in zip(acc._orders, acc._rdp, strict=True)
    )


@pytest.fixture(scope="module")
def fig2() -> dict[tuple[float, float], dict[str, float]]:
    """The Fig. 2 table, computed once (each PLD call takes about a second)."""
    table = {}
    for q, z in SETTINGS:
        table[q, z] = {
            "classic": _moments_accountant(q, z, T, DELTA),
            "rdp": subsampled_gaussian_epsilon(q, z, T, DELTA, accountant="rdp"),
            "pld": subsampled_gaussian_epsilon(q, z, T, DELTA, accountant="pld"),
        }
    # The default (both accountants) at two settings only: it is the same two calls again.
    for q, z in DEFAULT_CHECKED:
        table[q, z]["default"] = subsampled_gaussian_epsilon(q, z, T, DELTA)
    return table


# -- the paper's numbers and ours --------------------------------------------------------------
def test_default_delta_is_the_papers():
    assert default_delta(N_AGENTS) == DELTA
    assert default_delta(2) == pytest.approx(2**-1.1)


@pytest.mark.parametrize(("q", "z"), SETTINGS)
def test_classic_moments_accountant_reproduces_the_paper(fig2, q, z):
    # The paper prints two decimals (a rounding error up to 0.005): 0.01 allows that and a
    # little numerical difference between RDP implementations. The measured values are 5.934,
    # 9.908, 20.123, 7.391, 5.223.
    assert fig2[q, z]["classic"] == pytest.approx(PAPER[q, z], abs=0.01)


@pytest.mark.parametrize(("q", "z"), SETTINGS)
def test_rdp_is_below_the_paper_and_pld_below_rdp(fig2, q, z):
    row = fig2[q, z]
    assert row["rdp"] < PAPER[q, z]
    assert row["rdp"] < row["classic"]
    assert row["pld"] < row["rdp"]


@pytest.mark.parametrize(("q", "z"), DEFAULT_CHECKED)
def test_default_is_the_smaller_of_the_two(fig2, q, z):
    row = fig2[q, z]
    assert row["default"] == pytest.approx(min(row["rdp"], row["pld"]), rel=1e-12)
    assert row["default"] == pytest.approx(row["pld"], rel=1e-12)


@pytest.mark.parametrize(("q", "z"), SETTINGS)
def test_pinned_values(fig2, q, z):
    # RDP is a deterministic closed-form-plus-series computation over fixed orders: rtol 1e-3
    # (0.005 at epsilon = 5) only lets a change of dp-accounting's numerics through that would
    # not show in two decimals.
    assert fig2[q, z]["rdp"] == pytest.approx(OUR_RDP[q, z], rel=1e-3)
    # PLD is deterministic too, but its value depends on the discretization: each of the 40
    # privacy losses is rounded up by at most the interval 1e-4, which moves the composed
    # epsilon by at most 40 * 1e-4 = 0.004; abs 0.01 allows that with a margin.
    assert fig2[q, z]["pld"] == pytest.approx(OUR_PLD[q, z], abs=0.01)


# -- properties --------------------------------------------------------------------------------
def test_monotone_in_q_steps_and_z_rdp():
    def eps(q=0.25, z=1.0, steps=20):
        return subsampled_gaussian_epsilon(q, z, steps, 1e-5, accountant="rdp")

    by_q = [eps(q=q) for q in (0.01, 0.1, 0.5, 1.0)]
    by_steps = [eps(steps=s) for s in (1, 10, 100, 1000)]
    by_z = [eps(z=z) for z in (0.7, 1.5, 3.0, 10.0)]
    assert all(a < b for a, b in itertools.pairwise(by_q))
    assert all(a < b for a, b in itertools.pairwise(by_steps))
    assert all(a > b for a, b in itertools.pairwise(by_z))


def test_monotone_pld(fig2):
    # In q and z on the Fig. 2 table, in steps with one more point (10 rounds against 40).
    qs = [fig2[q, 1.0]["pld"] for q in (0.15, 0.25, 0.5)]
    zs = [fig2[0.25, z]["pld"] for z in (1.0, 1.2, 1.5)]
    assert qs[0] < qs[1] < qs[2]
    assert zs[0] > zs[1] > zs[2]
    fewer = subsampled_gaussian_epsilon(0.25, 1.0, 10, DELTA, accountant="pld")
    assert 0.0 < fewer < fig2[0.25, 1.0]["pld"]


def test_no_steps_is_no_loss_and_calls_no_accountant(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("an accountant was called")

    monkeypatch.setattr(dp_accounting.rdp, "RdpAccountant", boom)
    monkeypatch.setattr(dp_accounting.pld, "PLDAccountant", boom)
    for acc in (None, "rdp", "pld"):
        assert subsampled_gaussian_epsilon(0.5, 1.0, 0, 1e-5, accountant=acc) == 0.0


def _exact_gaussian_epsilon(z: float, steps: int, delta: float) -> float:
    """Exact epsilon of ``steps`` Gaussians of multiplier ``z`` (one Gaussian of multiplier
    ``z / sqrt(steps)``), from the analytic delta(epsilon) of Balle & Wang (2018, Thm. 8)."""
    s = z / math.sqrt(steps)

    def excess(eps: float) -> float:
        return norm.cdf(1 / (2 * s) - eps * s) - math.exp(eps) * norm.cdf(-1 / (2 * s) - eps * s)

    return brentq(lambda eps: excess(eps) - delta, 0.0, 200.0, xtol=1e-12)


@pytest.mark.parametrize(("z", "steps"), [(2.0, 10), (3.0, 40)])
def test_no_subsampling_is_the_composition_of_gaussians(z, steps):
    plain = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(z), steps)
    pld = dp_accounting.pld.PLDAccountant()
    pld.compose(plain)
    rdp = dp_accounting.rdp.RdpAccountant()
    rdp.compose(plain)
    ours = subsampled_gaussian_epsilon(1.0, z, steps, DELTA)
    # The sampled event with q = 1 goes through the discretized PLD, the plain Gaussian through
    # its analytic form: they agree to about 1e-9 relative, pessimistically rounded up.
    assert ours == pytest.approx(pld.get_epsilon(DELTA), rel=1e-6)
    assert ours >= _exact_gaussian_epsilon(z, steps, DELTA) - 1e-9
    assert ours == pytest.approx(_exact_gaussian_epsilon(z, steps, DELTA), rel=1e-6)
    ours_rdp = subsampled_gaussian_epsilon(1, z, steps, DELTA, accountant="rdp")
    assert ours_rdp == pytest.approx(rdp.get_epsilon(DELTA), rel=1e-12)


# -- bad input ---------------------------------------------------------------------------------
GOOD = {"q": 0.25, "z": 1.0, "steps": 5, "delta": 1e-5, "accountant": "rdp"}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("q", 0.0),
        ("q", -0.1),
        ("q", 1.5),
        ("q", math.nan),
        ("q", math.inf),
        ("q", "0.5"),
        ("q", True),
        ("q", None),
        ("z", 0.0),
        ("z", -1.0),
        ("z", math.inf),
        ("z", math.nan),
        ("z", "1"),
        ("steps", -1),
        ("steps", 2.0),
        ("steps", 2.5),
        ("steps", True),
        ("steps", "3"),
        ("delta", 0.0),
        ("delta", 1.0),
        ("delta", -1e-5),
        ("delta", math.nan),
        ("delta", None),
        ("accountant", "moments"),
        ("accountant", "RDP"),
        ("accountant", 1),
    ],
)
def test_bad_input_names_the_parameter(name, value):
    kwargs = {**GOOD, name: value}
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        subsampled_gaussian_epsilon(**kwargs)


def test_error_messages_state_the_allowed_range():
    with pytest.raises(ValueError, match=r"q must be a finite float in \(0, 1\]"):
        subsampled_gaussian_epsilon(0.0, 1.0, 1, 1e-5)
    with pytest.raises(ValueError, match=r"z must be a finite float > 0"):
        subsampled_gaussian_epsilon(0.5, 0.0, 1, 1e-5)
    with pytest.raises(ValueError, match=r"steps must be an integer >= 0"):
        subsampled_gaussian_epsilon(0.5, 1.0, -1, 1e-5)
    with pytest.raises(ValueError, match=r"delta must be .*\(0, 1\)"):
        subsampled_gaussian_epsilon(0.5, 1.0, 1, 1.0)
    with pytest.raises(ValueError, match=r"accountant must be one of \(None, 'rdp', 'pld'\)"):
        subsampled_gaussian_epsilon(0.5, 1.0, 1, 1e-5, accountant="gdp")


@pytest.mark.parametrize("n_agents", [0, -3, 2.0, True, "200", None])
def test_default_delta_bad_input(n_agents):
    with pytest.raises(ValueError, match=r"^n_agents must be an integer >= 1"):
        default_delta(n_agents)


def test_default_delta_needs_two_agents():
    with pytest.raises(ValueError, match=r"n_agents=1 .*not a valid delta.*at least 2 agents"):
        default_delta(1)


# -- logging -----------------------------------------------------------------------------------
def test_rdp_convergence_warnings_are_silenced_and_the_filter_removed(caplog):
    absl_logger = logging.getLogger("absl")
    filters_before = list(absl_logger.filters)
    caplog.set_level(logging.DEBUG, logger="absl")
    # Positive control: dp-accounting does log them for these parameters.
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(_event(0.25, 1.0, T))
    assert any("failed to converge" in r.getMessage() for r in caplog.records)
    caplog.clear()

    eps = subsampled_gaussian_epsilon(0.25, 1.0, T, DELTA, accountant="rdp")
    assert eps == pytest.approx(acc.get_epsilon(DELTA), rel=1e-12)
    assert caplog.records == []
    assert absl_logger.filters == filters_before
    # Afterwards the same warnings come through again.
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(_event(0.25, 1.0, T))
    assert any("failed to converge" in r.getMessage() for r in caplog.records)


def test_the_filter_drops_only_those_records_and_is_removed_on_error(caplog):
    absl_logger = logging.getLogger("absl")
    filters_before = list(absl_logger.filters)
    caplog.set_level(logging.DEBUG, logger="absl")
    with pytest.raises(RuntimeError, match="inside"):
        with accounting._quiet_rdp_convergence_warnings():
            absl_logger.warning("_compute_log_a_frac failed to converge after %d iterations", 9)
            absl_logger.warning("another absl warning")
            raise RuntimeError("inside")
    assert [r.getMessage() for r in caplog.records] == ["another absl warning"]
    assert absl_logger.filters == filters_before
