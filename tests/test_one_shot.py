"""One-shot private selection: the choice among candidates fixed in advance, epsilon paid once
(permute-and-flip and the exponential mechanism)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from privtune.privacy import plan_budget, set_noise_sampler
from privtune.privacy.budget import resolution_advice
from privtune.privacy.noise import opendp_noisy_max
from privtune.privacy.oneshot import (
    MECHANISMS,
    OneShotPlan,
    choice_shortfall,
    noise_scale,
    one_shot_choice,
    pick_probability,
    pick_shortfall,
    untuned_head_start,
)
from privtune.records import record_metric


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_opendp_proves_the_stated_epsilon_at_the_noise_scale_used(mechanism):
    # At scale 2 Delta / epsilon OpenDP's map of the L-infinity sensitivity Delta is epsilon
    # (permute-and-flip, max divergence) or epsilon^2 / 8 (Gumbel noise, zCDP), as the module
    # states.
    epsilon, delta = 0.7, 1 / 500
    measure = (
        "max_divergence" if mechanism == "permute-and-flip" else ("zero_concentrated_divergence")
    )
    _, privacy_map = opendp_noisy_max(measure, noise_scale(epsilon, delta))
    expected = epsilon if mechanism == "permute-and-flip" else epsilon**2 / 8
    assert privacy_map(delta) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("noise", ["exponential", "gumbel", "laplace"])
def test_the_pick_probability_matches_simulation(noise):
    # 100,000 seeded draws of 10 candidates, one leading by 1.5 scales: the closed forms (and
    # the Laplace integral) within 4 standard errors (about 0.006) of the frequency.
    rng = np.random.default_rng(0)
    draws = {
        "exponential": lambda n: rng.exponential(1.0, (n, 10)),
        "gumbel": lambda n: rng.gumbel(0.0, 1.0, (n, 10)),
        "laplace": lambda n: rng.laplace(0.0, 1.0, (n, 10)),
    }[noise](100_000)
    draws[:, 3] += 1.5
    frequency = float(np.mean(draws.argmax(1) == 3))
    p = pick_probability(1.5, 10, noise=noise, scale=1.0)
    assert abs(frequency - p) < 4 * math.sqrt(p * (1 - p) / 100_000)


def test_permute_and_flip_resolves_more_than_the_exponential_mechanism_and_releases():
    kw = dict(epsilon=1.0, sensitivity=1 / 500, max_lead=1.0)
    pf = choice_shortfall(31, mechanism="permute-and-flip", **kw)
    em = choice_shortfall(31, mechanism="exponential", **kw)
    # 31 scores each released at the PLD share of a total epsilon of 1 (0.045 each)
    released = pick_shortfall(31, noise="laplace", scale=(1 / 500) / 0.0448, max_lead=1.0)
    assert pf < em < released
    assert pf < 0.01 < released  # one accuracy point: resolved by the choice only
    # a single candidate loses nothing; the shortfall never exceeds the range
    assert choice_shortfall(1, epsilon=1.0, sensitivity=1.0) == 0.0
    assert choice_shortfall(7, epsilon=1.0, sensitivity=1.0, max_lead=1.0) < 1.0


def _neighbouring_validation_sets():
    """Two validation sets of 100 records that differ in one record, and two fitted models:
    on the first, model B is right on 4 more records than model A; replacing one record where
    only B is right by one where only A is right moves A up and B down by 1 / 100 each."""
    X, y = make_classification(3000, 8, n_informative=4, random_state=0)
    a = LogisticRegression(max_iter=500).fit(X[:1000], y[:1000])
    b = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X[:1000], y[:1000])
    pool = np.arange(1000, 3000)
    right_a, right_b = a.predict(X[pool]) == y[pool], b.predict(X[pool]) == y[pool]
    both = pool[right_a & right_b]
    only_a, only_b = pool[right_a & ~right_b], pool[~right_a & right_b]
    assert len(only_a) >= 3 and len(only_b) >= 6 and len(both) >= 92
    val = np.concatenate([only_b[:6], only_a[:2], both[:92]])  # B ahead by 4
    neighbour = val.copy()
    neighbour[0] = only_a[2]  # one record replaced: now B ahead by 2
    metric = record_metric("accuracy")
    scores = [np.array([metric(m, X[v], y[v]) for m in (a, b)]) for v in (val, neighbour)]
    assert scores[1] - scores[0] == pytest.approx([0.01, -0.01])
    return scores


@pytest.mark.parametrize("mechanism, head", [(m, 0.0) for m in MECHANISMS] + [(MECHANISMS[0], 1.0)])
def test_an_empirical_audit_keeps_the_choice_within_epsilon(mechanism, head):
    # The choice on two neighbouring validation sets, 40,000 seeded draws each. For each
    # outcome, the Clopper-Pearson interval (99.99 %, Bonferroni over the 4 ratios) gives a
    # lower bound on the log-ratio of its probabilities, which an epsilon-DP choice keeps at or
    # below epsilon. Here the lead is 2 scales on one side and 1 on the other, where the
    # exponential mechanism's log-ratio is 0.81 epsilon: the point estimate must come near it
    # (above 0.6 epsilon), so that the audit can see a leak. A head start (a shift fixed
    # before the data are read, here one noise scale for model A) leaves the guarantee as it
    # is.
    epsilon, n, N = 1.0, 100, 40_000
    first, second = _neighbouring_validation_sets()
    counts = []
    for q, offset in ((first, 0), (second, N)):
        picks = [
            one_shot_choice(
                q,
                epsilon=epsilon,
                sensitivity=1 / n,
                mechanism=mechanism,
                noise_seed=offset + i,
                head_start=[head * noise_scale(epsilon, 1 / n), 0.0],
            ).index
            for i in range(N)
        ]
        counts.append(np.bincount(picks, minlength=2))
    alpha = 1e-4 / 4
    worst_lower, worst_point = -math.inf, -math.inf
    for x, z in ((counts[0], counts[1]), (counts[1], counts[0])):
        for k in range(2):
            p_low = stats.beta.ppf(alpha / 2, x[k], N - x[k] + 1)
            q_high = stats.beta.ppf(1 - alpha / 2, z[k] + 1, N - z[k])
            worst_lower = max(worst_lower, math.log(p_low / q_high))
            worst_point = max(worst_point, math.log(x[k] / z[k]))
    assert worst_lower <= epsilon
    assert worst_point >= 0.6 * epsilon


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_opendp_picks_with_the_stated_law(mechanism):
    # OpenDP's sampler (unseeded) on three scores, one 1.5 scales ahead: 2,000 draws, the
    # frequency of the leader within 4 standard errors (0.044) of the law's probability. A
    # wrong scale or a minimum instead of a maximum would be far off.
    previous = set_noise_sampler("opendp")
    try:
        scale = noise_scale(1.0, 0.01)
        q = np.array([0.5, 0.5 + 1.5 * scale, 0.5])
        picks = [
            one_shot_choice(q, epsilon=1.0, sensitivity=0.01, mechanism=mechanism)
            for _ in range(2000)
        ]
    finally:
        set_noise_sampler(previous)
    assert {c.sampler for c in picks} == {"opendp"}
    noise = "exponential" if mechanism == "permute-and-flip" else "gumbel"
    p = pick_probability(1.5 * scale, 3, noise=noise, scale=scale)
    frequency = np.mean([c.index == 1 for c in picks])
    assert abs(frequency - p) < 4 * math.sqrt(p * (1 - p) / 2000)


def test_bad_scores_are_refused_without_quoting_them():
    with pytest.raises(ValueError, match="finite") as info:
        one_shot_choice([0.8123456, math.nan], epsilon=1.0, sensitivity=0.01)
    assert "0.812" not in str(info.value)
    with pytest.raises(ValueError, match="at least one"):
        one_shot_choice([], epsilon=1.0, sensitivity=0.01)
    with pytest.raises(ValueError, match="mechanism must be one of"):
        one_shot_choice([0.5], epsilon=1.0, sensitivity=0.01, mechanism="laplace")
    with pytest.raises(ValueError, match="epsilon"):
        one_shot_choice([0.5], epsilon=0.0, sensitivity=0.01)


def test_the_untuned_head_start_is_a_prior_weight_that_shrinks_with_the_data():
    # h s ln k: 2.0 accuracy points for 31 candidates at epsilon 1 and 500 validation records,
    # ten times less with ten times the records
    assert untuned_head_start(31, epsilon=1.0, sensitivity=1 / 500) == pytest.approx(
        1.5 * 0.004 * math.log(31)
    )
    assert untuned_head_start(31, epsilon=1.0, sensitivity=1 / 5000) == pytest.approx(
        0.1 * untuned_head_start(31, epsilon=1.0, sensitivity=1 / 500)
    )
    # for the exponential mechanism, a base measure: with all scores equal the untuned
    # estimator (h = 1) has k times each other candidate's weight, so P = k / (2k - 1)
    k, eps, delta = 11, 1.0, 0.01
    shift = [untuned_head_start(k, epsilon=eps, sensitivity=delta, h=1.0)] + [0.0] * (k - 1)
    picks = [
        one_shot_choice(
            [0.5] * k,
            epsilon=eps,
            sensitivity=delta,
            mechanism="exponential",
            noise_seed=s,
            head_start=shift,
        ).index
        for s in range(20_000)
    ]
    # 20,000 seeded draws: the frequency within 4 standard errors (0.014) of 11 / 21
    assert abs(np.mean(np.array(picks) == 0) - 11 / 21) < 4 * math.sqrt(0.25 / 20_000)
    with pytest.raises(ValueError, match="one finite shift per candidate"):
        one_shot_choice([0.5, 0.6], epsilon=1.0, sensitivity=0.01, head_start=[0.1])


def test_minimising_picks_the_smallest_score():
    picks = {
        one_shot_choice(
            [0.9, 0.1, 0.5], epsilon=1e4, sensitivity=0.01, maximize=False, noise_seed=s
        ).index
        for s in range(20)
    }
    assert picks == {1}


def test_the_plan_splits_the_budget_between_the_choice_and_the_score():
    plan = OneShotPlan.from_args("exponential", None, (1.0, 1e-6), 0.2, 30)
    assert plan.epsilon_choice == pytest.approx(0.8) and plan.epsilon_score == pytest.approx(0.2)
    assert plan.epsilon == pytest.approx(1.0) and plan.n_choices == 31
    with pytest.raises(ValueError, match="one of them"):
        OneShotPlan.from_args("exponential", 1.0, (1.0, 1e-6), 0.0, 30)
    with pytest.raises(ValueError, match="score_share"):
        OneShotPlan.from_args("exponential", 1.0, None, 1.0, 30)


def test_plan_budget_states_what_each_mechanism_resolves():
    plans = {
        m: plan_budget(1.0, 1e-6, (0.0, 1.0), 31, m, n_val=500)
        for m in ("laplace", "selection", "one-shot")
    }
    shortfall = {m: float(p.shortfall[0]) for m, p in plans.items()}
    # the one-shot choice resolves below a point at 500 records and epsilon 1; the others not
    assert shortfall["one-shot"] < 0.01 < shortfall["selection"] < shortfall["laplace"]
    assert "pick shortfall" in str(plans["one-shot"])


def test_a_budget_that_cannot_resolve_a_point_says_what_would():
    def shortfall(e, k):
        return choice_shortfall(k, epsilon=e, sensitivity=1 / 360, max_lead=1.0)

    def advice(e):
        return resolution_advice(
            shortfall(e, 31),
            n_val=360,
            epsilon=e,
            n_candidates=31,
            width=1.0,
            what="the choice",
            shortfall_with=lambda k: shortfall(e, k),
        )

    assert advice(1.0) is None
    text = advice(0.3)
    assert text is not None and "n_val=360, epsilon=0.3 and 31 candidates" in text
    # each way out is enough on its own (the shortfall scales as 1 / (n_val epsilon))
    needed_n = int(text.split("about ")[1].split(" validation")[0])
    assert choice_shortfall(31, epsilon=0.3, sensitivity=1 / needed_n, max_lead=1.0) <= 0.01
    needed_eps = float(text.split("epsilon of about ")[1].split(",")[0])
    assert shortfall(needed_eps * 1.001, 31) <= 0.01 < shortfall(needed_eps * 0.99, 31)
    fewer = int(text.split("at most ")[1].split(" candidates")[0])
    assert shortfall(0.3, fewer) <= 0.01 < shortfall(0.3, fewer + 1)
