"""A total budget over many reports: the per-report epsilon it affords."""

from __future__ import annotations

import pytest

from privtune.privacy import LaplaceCurator
from privtune.privacy.budget import RTOL, laplace_composed_epsilon, per_report_epsilon

CASES = [(1.0, 20), (1.0, 60), (10.0, 60), (100.0, 60), (10.0, 1000)]


def test_without_delta_a_budget_is_split_evenly():
    assert per_report_epsilon(10.0, 0.0, 60) == pytest.approx(10.0 / 60)
    assert laplace_composed_epsilon(0.5, 60, 0.0) == pytest.approx(30.0)


@pytest.mark.parametrize("epsilon, n", CASES)
def test_the_per_report_epsilon_fits_the_budget_and_is_nearly_the_largest(epsilon, n):
    delta = 1e-6
    eps0 = per_report_epsilon(epsilon, delta, n)
    assert eps0 >= epsilon / n  # never worse than an even split
    assert laplace_composed_epsilon(eps0, n, delta) <= epsilon
    # within RTOL of the largest that fits: a little more no longer does
    assert laplace_composed_epsilon(eps0 * (1 + RTOL), n, delta) > epsilon


def test_the_ledger_of_those_reports_stays_within_the_budget():
    # what a study's report will say of 60 releases at the calibrated epsilon
    eps0 = per_report_epsilon(10.0, 1e-6, 60)
    curator = LaplaceCurator(eps0, (0.0, 1.0), seed=0)
    for _ in range(60):
        curator.privatize(0.5)
    assert curator.ledger.composed_epsilon("pld", 1e-6) <= 10.0
    assert curator.ledger.composed_epsilon("basic") > 10.0  # PLD is what makes it fit


def test_more_reports_buy_less_each_and_a_larger_budget_more():
    assert per_report_epsilon(10.0, 1e-6, 120) < per_report_epsilon(10.0, 1e-6, 60)
    assert per_report_epsilon(20.0, 1e-6, 60) > per_report_epsilon(10.0, 1e-6, 60)
    assert per_report_epsilon(10.0, 1e-6, 1) == 10.0  # one report: capped at the total


def test_pld_is_the_tightest_of_the_accountants_for_laplace():
    # 50 reports of epsilon0 = 1 at delta = 1e-6: dp-accounting's RDP gives 42.8, basic 50
    assert laplace_composed_epsilon(1.0, 50, 1e-6) == pytest.approx(41.6, abs=0.05)


def test_a_delta_that_pays_for_everything_is_capped_at_the_total():
    assert per_report_epsilon(1.0, 0.5, 60) <= 1.0
    assert laplace_composed_epsilon(per_report_epsilon(1.0, 0.5, 60), 60, 0.5) <= 1.0


@pytest.mark.parametrize(
    "args, match",
    [
        ((0.0, 1e-6, 10), "epsilon must be in"),
        ((1.0, 1.0, 10), "delta must be in"),
        ((1.0, -1e-6, 10), "delta must be in"),
        ((1.0, 1e-6, 0), "n_reports must be an integer >= 1"),
    ],
)
def test_bad_input_is_named(args, match):
    with pytest.raises(ValueError, match=match):
        per_report_epsilon(*args)
