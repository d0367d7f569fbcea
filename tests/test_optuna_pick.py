"""The Optuna views of the pick: the recommendation as a study runs, and its plot."""

from __future__ import annotations

import contextlib
import io
import math

import matplotlib
import optuna
import pytest

from privtune import PrivateGPUCBSampler
from privtune.optuna_pick import PickTracker, plot_pick

matplotlib.use("Agg")
optuna.logging.set_verbosity(optuna.logging.WARNING)


def objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", 0.0, 1.0)
    return 0.9 - (x - 0.3) ** 2


def run(every: int = 1, show: bool = False, **kwargs):
    sampler = PrivateGPUCBSampler(
        epsilon=5.0, value_range=(0.0, 1.0), seed=0, noise_seed=0, n_startup_trials=4, **kwargs
    )
    # named: the noise of a seeded study depends on its name (privtune.privacy.seeds)
    study = sampler.create_study(direction="maximize", study_name="pick")
    study.enqueue_trial({"x": 0.8})  # the "untuned" configuration
    tracker = PickTracker(sampler, baseline=0, every=every, show=show)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sampler.optimize(study, objective, 12, callbacks=[tracker])
    return sampler, study, tracker, out.getvalue()


def test_the_tracker_follows_the_recommendation_not_the_noisy_maximum():
    sampler, study, tracker, _ = run()
    assert len(tracker.history) == 12
    assert [p.n_complete for p in tracker.history] == list(range(1, 13))
    last = tracker.history[-1]
    assert last.trial == sampler.recommend_trial(study, baseline=0).number
    assert last.params == sampler.recommend(study, baseline=0)
    assert math.isfinite(last.mean) and last.std > 0
    # the stored values are noisy (Laplace of scale 0.2): their maximum is not the pick's score
    assert study.best_value != pytest.approx(last.mean)
    attr = study.user_attrs["privtune_pick"]
    assert attr == {"trial": last.trial, "mean": last.mean, "std": last.std, "n_complete": 12}


def test_every_and_show():
    _, _, tracker, out = run(every=4, show=True)
    assert [p.n_complete for p in tracker.history] == [4, 8, 12]
    lines = out.strip().splitlines()
    assert len(lines) == 3 and lines[-1].startswith("[privtune] 12 trials: pick = trial ")


def test_show_says_when_the_pick_s_posterior_mean_is_clipped_to_the_range():
    """A few noisy reports can put the model's mean of an accuracy above 1: the line shows it
    clipped to ``value_range`` and says so, and a mean inside the range is shown as it is. The
    objective sits at the top of the range, so the model's mean falls on both sides of it."""
    sampler = PrivateGPUCBSampler(epsilon=5.0, value_range=(0.0, 1.0), seed=0, noise_seed=0)
    study = sampler.create_study(direction="maximize", study_name="pick")
    tracker = PickTracker(sampler, show=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sampler.optimize(study, lambda t: 1.0 - 0.001 * t.suggest_float("x", 0, 1), 8,
                         callbacks=[tracker])  # fmt: skip
    for pick, line in zip(tracker.history, out.getvalue().splitlines(), strict=True):
        if pick.mean > 1.0:
            assert "mean 1.0000 +- " in line
            clipped = f"clipped to the score's range [0.0, 1.0]; the estimate is {pick.mean:.6g}"
            assert clipped in line
        else:
            assert f"mean {pick.mean:.4f} +- {pick.std:.4f} {{" in line and "clipped" not in line
    assert any(p.mean > 1.0 for p in tracker.history)  # seeded: the case is exercised
    assert any(p.mean <= 1.0 for p in tracker.history)


def test_show_does_not_clip_an_exact_score():
    """Without privacy a score may lie outside a declared ``value_range``: shown as it is."""
    sampler = PrivateGPUCBSampler(value_range=(0.0, 1.0), seed=0)
    study = sampler.create_study(direction="maximize")
    tracker = PickTracker(sampler, show=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sampler.optimize(study, lambda t: 1.5 + t.suggest_float("x", 0, 1), 3, callbacks=[tracker])
    last = tracker.history[-1]
    assert last.mean > 1.5 and "clipped" not in out.getvalue()
    assert f"mean {last.mean:.4f} +- " in out.getvalue().splitlines()[-1]


def test_the_tracker_refuses_what_it_cannot_follow():
    with pytest.raises(TypeError, match="sampler must be a PrivateGPUCBSampler"):
        PickTracker(optuna.samplers.TPESampler())
    with pytest.raises(ValueError, match="every must be an integer >= 1"):
        PickTracker(PrivateGPUCBSampler(), every=0)
    with pytest.raises(ValueError, match="history is empty"):
        plot_pick([])


def test_the_plot_has_the_pick_and_the_stored_values_in_their_own_panels():
    _, study, tracker, _ = run()
    fig = plot_pick(tracker.history, study)
    pick_ax, values_ax = fig.axes
    assert fig._suptitle.get_text() == "The recommendation as the study ran"
    # the pick's panel holds the pick (its line and band) and the value range only; the stored
    # values, whose noise would set its scale, are in their own panel
    lines = {line.get_label(): line for line in pick_ax.get_lines()}
    line = lines["pick's posterior mean, clipped"]
    assert list(line.get_ydata()) == [min(max(p.mean, 0.0), 1.0) for p in tracker.history]
    bounds = [
        ln for ln in pick_ax.get_lines() if ln.get_linestyle() == "--" and len(ln.get_ydata())
    ]
    assert sorted(ln.get_ydata()[0] for ln in bounds) == [0.0, 1.0]
    assert "value_range" in lines and pick_ax.get_ylabel() == "score (clipped to value_range)"
    (dots,) = values_ax.get_lines()
    assert list(dots.get_ydata()) == [t.value for t in study.trials]
    assert all(float(t).is_integer() for t in values_ax.get_xticks())
    assert values_ax.get_xlabel() == "completed trials"


def test_the_plot_clips_to_the_range_the_text_names_and_only_with_privacy_or_when_asked():
    """A private pick's posterior mean beyond ``value_range`` is drawn clipped, as the
    tracker's line prints it; an exact study's is drawn as it is unless a range is given."""
    from privtune.optuna import Pick

    history = [Pick(trial=0, params={}, mean=1.8, std=0.9, n_complete=1)]
    private = PrivateGPUCBSampler(epsilon=1.0, value_range=(0.0, 1.0), seed=0).create_study()
    exact = PrivateGPUCBSampler(seed=0).create_study()
    cases = [(private, {}, True), (exact, {}, False), (exact, {"value_range": (0, 1)}, True)]
    for study, kwargs, clipped in cases:
        ax = plot_pick(history, study, **kwargs).axes[0]
        (mean,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("pick's")]
        band = ax.collections[0].get_paths()[0].vertices[:, 1]
        if clipped:
            assert mean.get_ydata()[0] == 1.0 and 0.0 <= band.min() and band.max() <= 1.0
        else:
            assert mean.get_ydata()[0] == 1.8
            assert band.max() == pytest.approx(1.8 + 1.96 * 0.9)
    with pytest.raises(ValueError, match="value_range must be a pair"):
        plot_pick(history, exact, value_range=(1.0, 0.0))


def test_the_plot_draws_the_untuned_configuration():
    # Given the tracker, the plot marks the picks that are the untuned configuration (its
    # baseline) and draws the untuned trial's stored value in the values' panel.
    _, study, tracker, _ = run()
    pick_ax, values_ax = plot_pick(tracker, study).axes
    marked = [ln for ln in pick_ax.get_lines() if "untuned configuration" in ln.get_label()]
    kept = [p.n_complete for p in tracker.history if p.trial == 0]
    assert len(marked) == 1 and list(marked[0].get_xdata()) == kept
    [line] = [ln for ln in values_ax.get_lines() if "untuned" in ln.get_label()]
    assert list(line.get_ydata()) == [study.trials[0].value] * 2
    # given the history alone, nothing is marked unless baseline is named
    bare = plot_pick(tracker.history, study).axes[0]
    assert not [ln for ln in bare.get_lines() if "untuned" in ln.get_label()]


@pytest.mark.parametrize("unit", ["score", "record"])
def test_a_private_studys_progress_bar_shows_the_pick_not_the_largest_stored_value(unit, capsys):
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression

    from privtune import RecordObjective

    if unit == "score":
        sampler = PrivateGPUCBSampler(epsilon=0.5, value_range=(0.0, 1.0), seed=0, noise_seed=0)
        objective = objective_for_bar
    else:
        X, y = load_breast_cancer(return_X_y=True)

        def make(trial):
            return LogisticRegression(C=trial.suggest_float("C", 1e-3, 1e2, log=True))

        objective = RecordObjective(make, X[:300] / 100, y[:300], X[300:] / 100, y[300:])
        sampler = PrivateGPUCBSampler(
            privacy_budget=(1.0, 1e-6), value_range=(0.0, 1.0), privacy_unit="record", seed=0
        )
    study = sampler.create_study(direction="maximize")
    sampler.optimize(study, objective, 5, show_progress_bar=True)
    err = capsys.readouterr().err
    assert "Best value" not in err and "pick: trial" in err
    assert ("training-record score" in err) == (unit == "record")


def objective_for_bar(trial):
    return trial.suggest_float("x", 0.0, 1.0)
