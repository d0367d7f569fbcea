"""The acquisition portfolio (``acquisition="portfolio"``): log EI, log PI or UCB per proposal."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from privtune.acquisition import (
    ACQUISITIONS,
    AcquisitionState,
    LogExpectedImprovement,
    LogProbabilityOfImprovement,
    Portfolio,
    make_acquisition,
)
from privtune.optimizers import GPUCB


def _state(best: float) -> AcquisitionState:
    return AcquisitionState(
        beta=lambda: 2.0,
        best_observed=lambda: best,
        best_mean=lambda: best,
        noise_sd=lambda: 0.0,
        exact=lambda: True,
    )


def test_log_pi_is_the_log_of_phi_and_finite_where_phi_underflows():
    mean = np.array([0.0, 1.0, -50.0])
    var = np.array([1.0, 4.0, 1.0])
    values = LogProbabilityOfImprovement()(mean, var, _state(0.5))
    expected = np.log(special.ndtr((mean[:2] - 0.5) / np.sqrt(var[:2])))
    np.testing.assert_allclose(values[:2], expected, rtol=1e-12)
    assert np.isfinite(values[2]) and values[2] < -1000


@pytest.mark.parametrize("member", [0, 1, 2])
@pytest.mark.parametrize("mean, var", [(0.2, 0.3), (-3.0, 0.05), (1.5, 2.0)])
def test_each_members_derivatives_match_finite_differences(member, mean, var):
    """The analytic gradient the acquisition optimiser uses, against central differences
    (step 1e-6; tolerance 1e-5 relative, 1e-7 absolute: the differences' own error)."""
    portfolio = Portfolio(incumbent="mean")
    portfolio._ucb.kappa = portfolio.width(20, 4)
    acq = portfolio.members[member]
    state = _state(0.4)
    value, d_mean, d_var = acq.derivatives(mean, var, state)
    h = 1e-6

    def f(m, v):
        return float(acq(np.array([m]), np.array([v]), state)[0])

    assert value == pytest.approx(f(mean, var), rel=1e-12)
    assert d_mean == pytest.approx((f(mean + h, var) - f(mean - h, var)) / (2 * h), 1e-5, 1e-7)
    assert d_var == pytest.approx((f(mean, var + h) - f(mean, var - h)) / (2 * h), 1e-5, 1e-7)


def test_the_ucb_width_is_hebos():
    """HEBO's ``kappa = sqrt(upsi 2 ln(t^(2 + d/2) 3 pi^2 / (3 delta)))`` (its commented form,
    equal to the expanded one it uses), with ``t`` floored at 1."""
    portfolio = Portfolio()
    for t, d in [(1, 2), (10, 4), (59, 6)]:
        expected = math.sqrt(0.5 * 2 * math.log(t ** (2.0 + d / 2.0) * 3 * math.pi**2 / 0.03))
        assert portfolio.width(t, d) == pytest.approx(expected, rel=1e-12)
    assert portfolio.width(0, 3) == portfolio.width(1, 3)
    assert Portfolio(upsilon=2.0).width(10, 4) == pytest.approx(2 * portfolio.width(10, 4))


def test_draw_picks_every_member_from_the_generator_and_sets_the_width():
    portfolio = Portfolio()
    picks = [portfolio.draw(np.random.default_rng(s), t=30, dim=4).name for s in range(300)]
    again = [portfolio.draw(np.random.default_rng(s), t=30, dim=4).name for s in range(300)]
    assert picks == again
    counts = {name: picks.count(name) for name in ("logei", "logpi", "ucb")}
    # 300 fair draws of three: each count is 100 +- 8.2 (one sd); 60 is below 4.8 sds
    assert min(counts.values()) > 60, counts
    assert portfolio._ucb.kappa == pytest.approx(portfolio.width(30, 4))
    assert isinstance(portfolio.members[0], LogExpectedImprovement)


def test_the_portfolio_is_taken_by_name_and_refuses_bad_arguments():
    assert "portfolio" in ACQUISITIONS
    assert isinstance(make_acquisition("portfolio"), Portfolio)
    assert make_acquisition("portfolio").incumbent == "auto"
    with pytest.raises(ValueError, match="upsilon"):
        Portfolio(upsilon=0.0)
    with pytest.raises(ValueError, match="delta"):
        Portfolio(delta=1.0)
    with pytest.raises(ValueError, match="incumbent"):
        Portfolio(incumbent="best")


def test_each_proposal_maximises_the_member_drawn_for_it(monkeypatch, told_gpucb):
    """Over finite candidates the proposal is the argmax of the member the optimizer drew for
    it (with its own generator, after ``t`` told points in ``d`` dimensions); across seeds
    every member is drawn, and the members' argmaxes differ on these candidates."""
    C = np.random.default_rng(0).random((400, 2))
    drawn_names = set()
    for seed in range(12):
        opt = told_gpucb(12, acquisition=Portfolio())
        opt.reseed(seed)
        drawn = []
        real = opt.acquisition.draw

        def spy(rng, t, dim, real=real, drawn=drawn):
            member = real(rng, t=t, dim=dim)
            drawn.append((member, t, dim))
            return member

        monkeypatch.setattr(opt.acquisition, "draw", spy)
        x = opt.ask(candidates=C)
        assert len(drawn) == 1
        member, t, dim = drawn[0]
        assert (t, dim) == (12, 2)
        mean, var = opt._posterior_given(None)(C)
        state = opt._acquisition_state()
        argmaxes = {m.name: int(np.argmax(m(mean, var, state))) for m in opt.acquisition.members}
        assert len(set(argmaxes.values())) == 3, argmaxes
        np.testing.assert_array_equal(x, C[argmaxes[member.name]])
        drawn_names.add(member.name)
    assert drawn_names == {"logei", "logpi", "ucb"}


def test_a_start_up_or_uniform_turn_draws_no_member(monkeypatch, told_gpucb):
    """The start-up's uniform draws (the adapters' ``ask(uniform=True)``) and the uniform
    share's turns are not the acquisition's: no member is drawn for them."""
    opt = GPUCB(2, seed=0, surrogate="fitted", acquisition="portfolio", n_raw_samples=64)
    monkeypatch.setattr(opt.acquisition, "draw", lambda *a, **k: pytest.fail("drawn"))
    opt.ask(uniform=True)
    opt = told_gpucb(12, acquisition="portfolio", uniform_share=3)
    monkeypatch.setattr(opt.acquisition, "draw", lambda *a, **k: pytest.fail("drawn"))
    opt.ask()


def test_a_study_with_the_portfolio_is_reproducible(studied_twice):
    values = studied_twice({"acquisition": "portfolio"}, n_trials=18, categorical=False)
    assert values[0] == values[1]
    assert max(values[0]) > -0.01
