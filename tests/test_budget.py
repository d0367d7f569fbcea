"""A total budget over many reports: the per-report epsilon it affords."""

from __future__ import annotations

import pytest

from privtune.privacy import LaplaceCurator
from privtune.privacy.composition import RTOL, laplace_composed_epsilon, per_report_epsilon

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
        ((0.0, 1e-6, 10), "epsilon must be a finite number > 0"),
        ((1.0, 1.0, 10), "delta must be in"),
        ((1.0, -1e-6, 10), "delta must be in"),
        ((1.0, 1e-6, 0), "n_reports must be an integer >= 1"),
    ],
)
def test_bad_input_is_named(args, match):
    with pytest.raises(ValueError, match=match):
        per_report_epsilon(*args)


def test_a_plan_states_the_noise_and_the_resolvable_difference_of_each_run_length():
    import math

    import numpy as np

    from privtune.privacy import plan_budget

    plan = plan_budget(100.0, 1e-6, (0.5, 1.0), [20, 60])
    eps0 = np.array([per_report_epsilon(100.0, 1e-6, n) for n in (20, 60)])
    np.testing.assert_allclose(plan.epsilon_per_report, eps0)
    np.testing.assert_allclose(plan.noise_std, math.sqrt(2) * 0.5 / eps0)
    np.testing.assert_allclose(
        plan.resolvable_difference, 1.959963984540054 * plan.noise_std * np.sqrt(4 / plan.n_trials)
    )
    assert [r["n_trials"] for r in plan.rows()] == [20, 60]
    assert "resolvable diff" in str(plan) and "epsilon=100" in str(plan)
    # a single count is a plan of one row; a wider range means proportionally more noise
    wide = plan_budget(100.0, 1e-6, (0.0, 1.0), 60)
    assert wide.noise_std[0] == pytest.approx(2 * plan.noise_std[1])


def test_the_resolvable_difference_is_the_critical_difference_of_the_best_comparison():
    # Two configurations, n / 2 Laplace reports each at the plan's per-report epsilon: a
    # two-sided z-test at 95 % detects a true difference of Delta half the time and flags
    # no difference 5 % of the time. 4000 simulated runs, seed fixed: the proportions' standard
    # error is at most 0.008, and the tolerance of 0.03 is four of them (the Laplace means of
    # 30 reports are close to normal, but not exactly).
    import numpy as np

    from privtune.privacy import plan_budget

    n = 60
    plan = plan_budget(100.0, 1e-6, (0.0, 1.0), n)
    sigma, delta_ = plan.noise_std[0], plan.resolvable_difference[0]
    scale = 1.0 / plan.epsilon_per_report[0]
    rng = np.random.default_rng(0)

    def detected(true_difference: float) -> float:
        a = rng.laplace(0.0, scale, size=(4000, n // 2)).mean(axis=1)
        b = rng.laplace(true_difference, scale, size=(4000, n // 2)).mean(axis=1)
        return float(np.mean(np.abs(b - a) > 1.959963984540054 * sigma * np.sqrt(4 / n)))

    assert detected(delta_) == pytest.approx(0.5, abs=0.03)
    assert detected(0.0) == pytest.approx(0.05, abs=0.03)
    assert detected(2 * delta_) == pytest.approx(0.98, abs=0.03)


def test_a_plan_plots_and_names_its_bad_input(tmp_path):
    from privtune.privacy import plan_budget

    path = tmp_path / "plan.png"
    plan_budget(10.0, 1e-6, (0.0, 1.0), [10, 30]).plot(str(path))
    assert path.stat().st_size > 0
    with pytest.raises(ValueError, match="mechanism must be one of"):
        plan_budget(10.0, 1e-6, (0.0, 1.0), 10, mechanism="gaussian")
    with pytest.raises(ValueError, match="n_trials must be an integer >= 1"):
        plan_budget(10.0, 1e-6, (0.0, 1.0), [10, 0])
    with pytest.raises(ValueError, match="value_range"):
        plan_budget(10.0, 1e-6, (1.0, 0.0), 10)


def test_a_selection_plan_gives_each_candidate_its_share_and_compares_two_single_scores():
    import math

    import numpy as np

    from privtune.privacy import (
        RepeatDistribution,
        plan_budget,
        selection_per_candidate_epsilon,
    )

    plan = plan_budget(10.0, 1e-6, (0.0, 1.0), [10, 40], "selection", distribution="logarithmic")
    eps0 = [
        selection_per_candidate_epsilon(10.0, 1e-6, RepeatDistribution(n, "logarithmic"))
        for n in (10, 40)
    ]
    np.testing.assert_allclose(plan.epsilon_per_report, eps0)
    # two candidates, one noisy score each: the critical difference of their difference
    np.testing.assert_allclose(
        plan.resolvable_difference, 1.959963984540054 * plan.noise_std * math.sqrt(2)
    )
    # at the same total, a selection's score is far less noisy than a released one
    laplace = plan_budget(10.0, 1e-6, (0.0, 1.0), [10, 40])
    assert np.all(plan.noise_std < laplace.noise_std / 3)
    with pytest.raises(ValueError, match="delta must be > 0"):
        plan_budget(10.0, 0.0, (0.0, 1.0), 10, "selection")
