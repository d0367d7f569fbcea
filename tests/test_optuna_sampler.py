"""PrivateGPUCBSampler: privacy at the boundary, statelessness, pending trials, recommendation."""

from __future__ import annotations

import logging
import math
import pickle
import struct
import warnings

import numpy as np
import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

import privtune.optuna
import privtune.optuna_privacy
from privtune import GOUCBSampler, PrivacyError, PrivateGPUCBSampler
from privtune.tuning import ALGORITHMS

optuna.logging.set_verbosity(optuna.logging.WARNING)

# Raw scores no test may find anywhere once privatized: distinct, with many significant digits.
RAW_BASE = 0.6180339887498949


def raw_score(number: int) -> float:
    return RAW_BASE - 1e-7 * number


def objective(trial) -> float:
    x = trial.suggest_float("x", 0.0, 1.0)
    n = trial.suggest_int("n", 1, 64, log=True)
    c = trial.suggest_categorical("c", ["a", "b"])
    # The score depends on the params only through the trial number, so its raw value is known.
    del x, n, c
    return raw_score(trial.number)


def quadratic(trial) -> float:
    x = trial.suggest_float("x", 0.0, 1.0)
    y = trial.suggest_float("y", 0.0, 1.0)
    return 1.0 - (x - 0.3) ** 2 - (y - 0.7) ** 2


#: Algorithms whose objective may return raw scores (all but qff-ldp, which needs privatize).
UNWRAPPED = sorted(set(ALGORITHMS) - {"qff-ldp"})


def make_sampler(algorithm: str, **kwargs) -> PrivateGPUCBSampler:
    """The sampler of ``algorithm``; GO-UCB's Phase I lasts ``n_startup_trials`` trials; the
    qff algorithms, private by construction, get ``epsilon=1`` and the range ``(0, 1)``."""
    if algorithm.startswith("qff"):
        kwargs.setdefault("epsilon", 1.0)
        kwargs.setdefault("value_range", (0.0, 1.0))
    if algorithm == "go-ucb":
        n_explore = max(kwargs.pop("n_startup_trials", 3), 2)
        return GOUCBSampler(n_explore=n_explore, horizon=16, **kwargs)
    return PrivateGPUCBSampler(algorithm, **kwargs)


def private_sampler(**kwargs) -> PrivateGPUCBSampler:
    kwargs.setdefault("seed", 0)
    return make_sampler(
        kwargs.pop("algorithm", "gp-ucb"), epsilon=1.0, value_range=(0.0, 1.0), **kwargs
    )


# -- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 1.0}, "value_range is required"),
        ({"epsilon": 0.0, "value_range": (0, 1)}, "epsilon"),
        ({"epsilon": -1.0, "value_range": (0, 1)}, "epsilon"),
        ({"epsilon": 1.0, "value_range": (1, 0)}, "value_range"),
        ({"epsilon": 1.0, "value_range": (0, math.inf)}, "value_range"),
        ({"n_startup_trials": -1}, "n_startup_trials"),
        ({"n_startup_trials": 2.5}, "n_startup_trials"),
        ({"seed": -1}, "seed must be"),
        ({"seed": 1.5}, "seed must be"),
        ({"noise_seed": -1}, "noise_seed"),
        ({"noise_seed": "a"}, "noise_seed"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    # a value of the wrong type is a TypeError (a seed of 1.5), a bad value a ValueError
    with pytest.raises((TypeError, ValueError), match=match):
        PrivateGPUCBSampler("moma", **kwargs)


def test_unknown_algorithm_lists_the_allowed_names():
    with pytest.raises(ValueError, match="algorithm must be 'auto' or one of"):
        PrivateGPUCBSampler("bogus")


def test_auto_resolves_to_the_measured_default_for_exact_and_for_private_scores():
    from privtune.tuning import AUTO

    assert PrivateGPUCBSampler().algorithm == AUTO["exact"]
    private = PrivateGPUCBSampler(epsilon=1.0, value_range=(0.0, 1.0))
    assert private.algorithm == AUTO["ldp"]


def test_moma_without_privacy_warns_that_its_repeats_are_identical():
    with pytest.warns(UserWarning, match="identical evaluations"):
        PrivateGPUCBSampler("moma")


def test_bad_optimizer_kwargs_fail_at_construction():
    with pytest.raises(ValueError, match="lam"):
        PrivateGPUCBSampler("gp-ucb", optimizer_kwargs={"lam": -1.0})
    with pytest.raises(TypeError, match="optimizer_kwargs"):
        PrivateGPUCBSampler("gp-ucb", optimizer_kwargs=[("lam", 1.0)])


def test_multi_objective_values_are_rejected_by_privatize():
    sampler = private_sampler()
    study = optuna.create_study(sampler=sampler)
    with pytest.raises(ValueError, match="single-objective"):
        study.optimize(sampler.privatize(lambda t: (t.suggest_float("x", 0, 1), 1.0)), n_trials=1)


# -- privacy at the boundary ----------------------------------------------------------------------
def _raw_strings(n: int) -> list[str]:
    return [repr(raw_score(i)) for i in range(n)]


def _raw_bytes(n: int) -> list[bytes]:
    out = []
    for i in range(n):
        v = raw_score(i)
        out += [struct.pack("<d", v), struct.pack(">d", v), repr(v).encode()]
    return out


def _assert_no_raw_in_trials(study, n):
    raws = set(_raw_strings(n))
    raw_values = {raw_score(i) for i in range(n)}
    for t in study.get_trials(deepcopy=True):
        assert t.value not in raw_values
        assert not set(t.intermediate_values.values()) & raw_values
        dump = repr(t) + repr(t.user_attrs) + repr(t.system_attrs)
        assert not any(r in dump for r in raws), f"raw score in trial {t.number}"


def _storages(tmp_path):
    yield "memory", None, None
    path = tmp_path / "study.db"
    yield "sqlite", f"sqlite:///{path}", path
    jpath = tmp_path / "study.log"
    yield "journal", JournalStorage(JournalFileBackend(str(jpath))), jpath


@pytest.mark.parametrize("algorithm", ["moma", "gp-ucb", "go-ucb", "qff-ldp"])
def test_no_raw_score_in_storage_logs_or_warnings(tmp_path, caplog, capsys, algorithm):
    n = 14
    optuna.logging.set_verbosity(optuna.logging.INFO)
    optuna.logging.enable_propagation()
    try:
        for name, storage, path in _storages(tmp_path):
            sampler = private_sampler(algorithm=algorithm, n_startup_trials=4)
            study = optuna.create_study(
                storage=storage, sampler=sampler, direction="maximize", study_name=name
            )
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                study.optimize(sampler.privatize(objective), n_trials=n)
            assert len(study.trials) == n
            assert all(t.state == TrialState.COMPLETE for t in study.trials)
            _assert_no_raw_in_trials(study, n)
            if path is not None:
                blob = path.read_bytes()
                assert not any(b in blob for b in _raw_bytes(n)), f"raw score in {name} file"
            text = caplog.text + capsys.readouterr().err + "".join(str(w.message) for w in caught)
            assert "finished with value" in text  # the logs were captured
            assert not any(r in text for r in _raw_strings(n))
            # ... and each trial records the epsilon it spent.
            assert all(t.user_attrs["privtune:epsilon"] == 1.0 for t in study.trials)
    finally:
        optuna.logging.disable_propagation()
        optuna.logging.set_verbosity(optuna.logging.WARNING)


def test_released_value_is_clip_plus_laplace_with_the_declared_scale():
    # Every trial scores 0.5; the released values minus 0.5 are Laplace(1/epsilon) draws. Over
    # 400 trials the mean absolute deviation estimates the scale 1/epsilon = 0.5 with a standard
    # error of 0.5/sqrt(400) = 0.025; the tolerance 0.1 is four standard errors.
    sampler = PrivateGPUCBSampler(
        "random", epsilon=2.0, value_range=(0.0, 1.0), seed=0, noise_seed=3
    )
    # named: a seeded study's noise is keyed by its name, and an unnamed study gets a random one
    study = optuna.create_study(sampler=sampler, direction="maximize", study_name="laplace")
    study.optimize(sampler.privatize(lambda t: t.suggest_float("x", 0, 1) * 0 + 0.5), n_trials=400)
    noise = np.array([t.value for t in study.trials]) - 0.5
    assert abs(np.mean(np.abs(noise)) - 0.5) < 0.1
    assert abs(np.median(noise)) < 0.1


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.name} {record.levelname} {record.getMessage()}")


@pytest.mark.parametrize("algorithm", ["gp-ucb", "qff-ldp"])
def test_nothing_but_the_released_values_depends_on_the_raw_scores(algorithm, capfd):
    # Two studies whose raw scores differ but clip to the same values (1 against 41, 0 against
    # -40): with the same noise they release the same values, so whatever else a user or an
    # observer can see (parameters, stored attributes, warnings, log lines, printed output, the
    # recommendation and the report) must be identical. A clipping warning, or anything that
    # told in-range scores from out-of-range ones, would make them differ.
    def run(offset: float):
        def objective(trial):
            x = trial.suggest_float("x", 0.0, 1.0)
            return 1.0 + offset if x > 0.5 else -offset

        sampler = PrivateGPUCBSampler(
            algorithm, epsilon=1.0, value_range=(0.0, 1.0), seed=0, noise_seed=3,
            n_startup_trials=3,
        )  # fmt: skip
        study = optuna.create_study(sampler=sampler, study_name="side", direction="maximize")
        records = _Records()
        loggers = [logging.getLogger(name) for name in ("optuna", "privtune")]
        old_levels = [logger.level for logger in loggers]
        for logger in loggers:
            logger.addHandler(records)
            logger.setLevel(logging.DEBUG)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                study.optimize(sampler.privatize(objective), n_trials=8)
                report = sampler.privacy_report(study)
                pick = sampler.recommend(study)
        finally:
            for logger, level in zip(loggers, old_levels, strict=True):
                logger.removeHandler(records)
                logger.setLevel(level)
        printed = capfd.readouterr()
        trials = [(t.state, t.params, t.value, t.user_attrs, t.system_attrs) for t in study.trials]
        warned = [(w.category, str(w.message)) for w in caught]
        return trials, warned, records.lines, printed.out, printed.err, report, pick

    in_range, out_of_range = run(0.0), run(40.0)
    assert in_range[0][0][3]  # the trials carry their receipts (compared too)
    assert in_range[0][-1][4][privtune.optuna.ATTR_TURN]  # and their turns
    assert in_range == out_of_range


def test_each_proposal_says_what_made_it():
    """Every trial the sampler proposes for carries its turn (``"privtune:turn"``). With
    exact scores: the start-up, the repeat after half of it, then the trust region's turns
    (every second proposal, so at even trial numbers) and the acquisition's over the cube.
    Under privacy the trust region never acts, and nothing is a repeat; random search's
    proposals after its start-up are uniform draws."""
    turn = privtune.optuna.ATTR_TURN

    def turns(sampler, objective, n=20):
        study = optuna.create_study(sampler=sampler, direction="maximize")
        study.optimize(objective, n_trials=n)
        return [t.system_attrs.get(turn) for t in study.trials]

    exact = turns(PrivateGPUCBSampler(seed=0), quadratic)
    assert exact[:6] == ["start-up"] * 5 + ["repeat"]
    assert set(exact[6:]) == {"trust-region", "acquisition"}
    assert all(i % 2 == 0 for i, k in enumerate(exact) if k == "trust-region")
    private = private_sampler(n_startup_trials=6)
    noisy = turns(private, private.privatize(quadratic))
    assert noisy[:6] == ["start-up"] * 6 and set(noisy[6:]) <= {"acquisition", "space-filling"}
    uniform = turns(PrivateGPUCBSampler("random", seed=0, n_startup_trials=4), quadratic, 8)
    assert uniform == ["start-up"] * 4 + ["uniform"] * 4


def test_unwrapped_objective_fails_before_its_score_exists():
    sampler = private_sampler()
    study = optuna.create_study(sampler=sampler, direction="maximize")
    with pytest.raises(PrivacyError, match=r"outside sampler\.privatize"):
        study.optimize(objective, n_trials=3)
    # The first suggest raised: the trial failed before the objective computed a score, so the
    # storage holds no value at all.
    (trial,) = study.trials
    assert trial.state == TrialState.FAIL and trial.values is None and trial.params == {}
    # The same for parameters sampled in study.ask (fixed distributions), outside the wrapper.
    with pytest.raises(PrivacyError, match=r"outside sampler\.privatize"):
        study.ask({"x": optuna.distributions.FloatDistribution(0.0, 1.0)})
    # Inside the wrapper, ask-and-tell works.
    trial = study.ask()
    study.tell(trial, sampler.privatize(objective)(trial))
    assert study.trials[-1].state == TrialState.COMPLETE


def test_an_unwrapped_objective_without_suggest_is_caught_when_told():
    # Nothing to sample, so nothing stops it early: the sampler fails closed when the raw value
    # is told (Optuna stores that one value, as the error says).
    sampler = private_sampler()
    study = optuna.create_study(sampler=sampler, direction="maximize")
    with pytest.raises(PrivacyError, match="did not come through"):
        study.optimize(lambda trial: 0.5, n_trials=3)
    assert len(study.trials) == 1


def add_raw_trial(study, params: dict[str, float], value: float) -> None:
    """``study.add_trial`` of a completed trial with a raw value, floats in [0, 1]."""
    dists = {n: optuna.distributions.FloatDistribution(0, 1) for n in params}
    study.add_trial(optuna.create_trial(params=params, distributions=dists, value=value))


def test_added_or_retold_raw_values_fail_closed():
    sampler = private_sampler(n_startup_trials=0)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(sampler.privatize(quadratic), n_trials=3)
    add_raw_trial(study, {"x": 0.5, "y": 0.5}, value=0.9)
    with pytest.raises(PrivacyError, match="Trial 3"):
        study.optimize(sampler.privatize(quadratic), n_trials=1)

    # A tagged trial told with a different (raw) value is caught by the fingerprint.
    sampler = private_sampler(n_startup_trials=0)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    trial = study.ask()
    sampler.privatize(quadratic)(trial)
    with pytest.raises(PrivacyError):
        study.tell(trial, quadratic(optuna.trial.FixedTrial(trial.params)))


def test_a_raw_trial_outside_the_search_space_still_fails_closed():
    # The raw trial shares no parameter with the others, so it never enters the relative search
    # space or the optimizer; it must still stop the study, recommend and privacy_report.
    sampler = private_sampler(n_startup_trials=0)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(sampler.privatize(quadratic), n_trials=2)
    add_raw_trial(study, {"z": 0.3}, value=0.42)
    with pytest.raises(PrivacyError, match="Trial 2"):
        study.optimize(sampler.privatize(quadratic), n_trials=1)
    with pytest.raises(PrivacyError, match="Trial 2"):
        sampler.recommend(study)
    with pytest.raises(PrivacyError, match="Trial 2"):
        sampler.privacy_report(study)
    assert sum(t.state == TrialState.COMPLETE for t in study.trials) == 3  # no trial learned


def test_a_sampler_with_another_epsilon_refuses_the_study():
    storage = optuna.storages.InMemoryStorage()
    first = private_sampler()
    study = optuna.create_study(storage=storage, sampler=first, study_name="s")
    study.optimize(first.privatize(quadratic), n_trials=2)
    other = PrivateGPUCBSampler("gp-ucb", epsilon=2.0, value_range=(0.0, 1.0), seed=0)
    study = optuna.load_study(storage=storage, sampler=other, study_name="s")
    # the error says what happened, not that the storage may hold a raw score
    with pytest.raises(PrivacyError, match=r"another worker's curator \(Laplace, epsilon=1,.*"
                       r"this worker's curator is Laplace, epsilon=2") as err:  # fmt: skip
        study.optimize(other.privatize(quadratic), n_trials=1)
    assert "raw" not in str(err.value)
    # and leaves no FAIL trial: the refused trial went back to the queue, and a worker with
    # the study's settings runs it
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 2 + [TrialState.WAITING]
    again = optuna.load_study(storage=storage, sampler=private_sampler(), study_name="s")
    again.optimize(again.sampler.privatize(quadratic), n_trials=1)
    assert [t.state for t in again.trials] == [TrialState.COMPLETE] * 3
    assert again.sampler.privacy_report(again)["n_reports"] == 3


def test_report_is_refused_under_privacy():
    sampler = private_sampler()
    study = optuna.create_study(sampler=sampler)

    def reporting(trial):
        trial.report(0.3, step=0)
        return 0.3

    study.optimize(sampler.privatize(reporting), n_trials=1, catch=(PrivacyError,))
    trial = study.trials[0]
    assert trial.state == TrialState.FAIL
    assert trial.intermediate_values == {}
    # uncaught, the error is privtune's own (it holds no score): it names report(), not withheld
    with pytest.raises(PrivacyError, match=r"trial\.report\(\) is not available") as info:
        study.optimize(sampler.privatize(reporting), n_trials=1)
    assert "withheld" not in str(info.value) and "0.3" not in str(info.value)


@pytest.mark.parametrize(
    "privacy", [{"epsilon": 1.0}, {"privacy_budget": (1.0, 1e-6), "n_trials": 5}]
)
def test_a_suggest_error_keeps_its_message_and_a_withheld_one_names_the_setting_given(privacy):
    """Under privacy an error of ``suggest_*`` (about a distribution the trial stores as it
    is, never a score) leaves the objective with its message; any other error is withheld,
    and its message names the privacy setting the sampler was given."""
    sampler = PrivateGPUCBSampler(value_range=(0.0, 1.0), seed=0, **privacy)
    study = optuna.create_study(sampler=sampler)

    def reversed_range(trial):
        return trial.suggest_float("x", 1.0, 0.0)

    with pytest.raises(ValueError, match="low <= high"):
        study.optimize(sampler.privatize(reversed_range), n_trials=1)

    def leaking(trial):
        raise RuntimeError(f"score was {0.25 + trial.suggest_float('x', 0.0, 1.0)}")

    with pytest.raises(RuntimeError, match="withheld") as info:
        study.optimize(sampler.privatize(leaking), n_trials=1)
    given = next(iter(privacy))
    assert f"Rerun without {given}," in str(info.value) and "score was" not in str(info.value)


def test_non_finite_scores_fail_the_trial_and_release_nothing():
    sampler = private_sampler(algorithm="random")
    study = optuna.create_study(sampler=sampler)
    scores = iter([float("nan"), float("inf"), 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(
            sampler.privatize(lambda t: t.suggest_float("x", 0, 1) * 0 + next(scores)), n_trials=3
        )
    states = [t.state for t in study.trials]
    assert states == [TrialState.FAIL, TrialState.FAIL, TrialState.COMPLETE]
    assert "privtune:epsilon" not in study.trials[0].user_attrs
    assert sampler.privacy_report(study)["n_reports"] == 1


def test_privacy_report_composes_over_the_study():
    sampler = private_sampler(algorithm="random")
    study = optuna.create_study(sampler=sampler)
    study.optimize(sampler.privatize(quadratic), n_trials=12)
    report = sampler.privacy_report(study, delta=1e-6)
    assert report["n_reports"] == 12
    assert report["epsilon_per_report"] == 1.0
    assert report["composed_epsilon_basic"] == pytest.approx(12.0)
    # PLD and advanced composition are (epsilon, delta) bounds, never above the basic sum.
    assert report["composed_epsilon_pld"] <= 12.0 + 1e-9
    assert report["composed_epsilon_advanced"] <= 12.0 + 1e-9


def test_privatize_without_epsilon_returns_the_objective():
    sampler = PrivateGPUCBSampler("gp-ucb")
    assert sampler.privatize(quadratic) is quadratic


# -- directions, NaN, dynamic spaces ---------------------------------------------------------------
@pytest.mark.parametrize("algorithm", UNWRAPPED)
def test_minimizing_the_negation_proposes_the_same_points(algorithm):
    def run(direction, sign, value_range):
        sampler = make_sampler(
            algorithm, seed=1, n_startup_trials=3, value_range=value_range, noise_seed=0
        )
        study = optuna.create_study(direction=direction, sampler=sampler, study_name="s")
        study.optimize(lambda t: sign * quadratic(t), n_trials=8)
        return [t.params for t in study.trials]

    assert run("maximize", 1.0, (0.0, 1.0)) == run("minimize", -1.0, (-1.0, 0.0))


def test_failed_and_pruned_trials_are_ignored():
    sampler = PrivateGPUCBSampler("gp-ucb", seed=0, n_startup_trials=2)
    study = optuna.create_study(sampler=sampler, direction="maximize")

    def flaky(trial):
        v = quadratic(trial)
        if trial.number % 3 == 1:
            raise optuna.TrialPruned()
        if trial.number % 3 == 2:
            return float("nan")
        return v

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(flaky, n_trials=12)
    # Trials 0, 3, 6 and 9 completed; the model of the last sample (trial 11) was told those.
    assert [t.number for t in study.get_trials(states=(TrialState.COMPLETE,))] == [0, 3, 6, 9]
    opt = sampler.engine.replay((study._study_id, study.study_name)).optimizer
    assert opt.t == 4


def test_dynamic_parameter_warns_once(caplog):
    sampler = PrivateGPUCBSampler("gp-ucb", seed=0, n_startup_trials=1)
    study = optuna.create_study(sampler=sampler)

    def conditional(trial):
        x = trial.suggest_float("x", 0, 1)
        if trial.number % 2:
            return x + trial.suggest_float("z", 0, 1)
        return x

    optuna.logging.enable_propagation()
    try:
        with caplog.at_level(logging.WARNING):
            study.optimize(conditional, n_trials=8)
    finally:
        optuna.logging.disable_propagation()
    msgs = [r.getMessage() for r in caplog.records if "sampled independently" in r.getMessage()]
    assert len(msgs) == 1 and "`z`" in msgs[0]


def _start_up(sampler, objective, n_trials):
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(objective, n_trials=n_trials)
    return [t.params for t in study.trials]


@pytest.mark.parametrize("algorithm", ["auto", "ata", "random"])
def test_start_up_trials_are_the_independent_samplers_as_in_optunas_samplers(algorithm):
    # With the same seed GPSampler, TPESampler and this sampler start from the same trials:
    # a comparison of samplers then compares their searches, not their start-up draws.
    # With exact scores the default ("auto": gp-ucb) asks after half of them whether the
    # objective is deterministic (the best of those trials again; TuningEngine.startup_step).
    ours = _start_up(PrivateGPUCBSampler(algorithm, seed=3, n_startup_trials=6), quadratic, 6)
    theirs = _start_up(optuna.samplers.RandomSampler(seed=3), quadratic, 6)
    shared = 3 if algorithm == "auto" else 6
    assert ours[:shared] == theirs[:shared]
    if algorithm == "auto":
        best = max(theirs[:3], key=lambda p: -((p["x"] - 0.3) ** 2 + (p["y"] - 0.7) ** 2))
        assert ours[3] == best
    after = _start_up(PrivateGPUCBSampler(algorithm, seed=3, n_startup_trials=6), quadratic, 8)
    assert after[:6] == ours


def test_a_noisy_objective_keeps_the_whole_start_up_of_independent_draws():
    """The repeat after half the start-up returns another value: the objective is noisy, the
    start-up goes on to ``n_startup_trials`` with the independent sampler's draws (its next
    ones: the repeat drew none)."""
    rng = np.random.default_rng(0)

    def noisy(trial) -> float:
        return quadratic(trial) + 0.1 * rng.standard_normal()

    ours = _start_up(PrivateGPUCBSampler(seed=3, n_startup_trials=10), noisy, 11)
    theirs = _start_up(optuna.samplers.RandomSampler(seed=3), quadratic, 9)
    assert ours[5] in ours[:5]  # the repeat
    assert ours[:5] + ours[6:10] == theirs
    assert ours[10] not in theirs  # the acquisition's


def test_start_up_trials_of_a_finite_space_are_distinct_and_unwarned(caplog):
    # Every parameter discrete: the engine's draws, which never repeat a configuration
    # (RandomSampler(seed=0)'s 4 draws hold 2 of the 4 configurations).
    def finite(trial):
        a = trial.suggest_categorical("a", ["u", "v"])
        b = trial.suggest_int("b", 0, 1)
        return float(a == "u") + b

    optuna.logging.enable_propagation()
    try:
        with caplog.at_level(logging.WARNING):
            params = _start_up(PrivateGPUCBSampler(seed=0, n_startup_trials=4), finite, 4)
    finally:
        optuna.logging.disable_propagation()
    assert len({(p["a"], p["b"]) for p in params}) == 4
    assert not [r for r in caplog.records if "sampled independently" in r.getMessage()]


def test_start_up_trials_left_to_the_independent_sampler_do_not_warn(caplog):
    optuna.logging.enable_propagation()
    try:
        with caplog.at_level(logging.WARNING):
            _start_up(PrivateGPUCBSampler(seed=0, n_startup_trials=5), quadratic, 7)
    finally:
        optuna.logging.disable_propagation()
    assert not [r for r in caplog.records if "sampled independently" in r.getMessage()]


# -- statelessness, pending trials, reproducibility ----------------------------------------
@pytest.mark.parametrize("algorithm", UNWRAPPED)
def test_a_fresh_sampler_proposes_what_the_cached_one_does(algorithm):
    storage = optuna.storages.InMemoryStorage()
    # A fixed value_range fixes the reward scale (the observed range would move with new
    # extremes and force rebuilds, which are correct but not what this test counts).
    sampler = make_sampler(algorithm, seed=0, n_startup_trials=3, value_range=(0, 1))
    study = optuna.create_study(storage=storage, sampler=sampler, study_name="s")
    study.optimize(quadratic, n_trials=10)
    replay = sampler.engine.replay((study._study_id, study.study_name))
    assert replay.n_rebuilds == 1  # a sequential study only ever extends the cached model

    space = sampler.infer_relative_search_space(study, study.trials[-1])
    frozen = study._storage.get_trial(study._storage.create_new_trial(study._study_id))
    cached = sampler.sample_relative(study, frozen, space)
    fresh_sampler = make_sampler(algorithm, seed=0, n_startup_trials=3, value_range=(0, 1))
    fresh = fresh_sampler.sample_relative(study, frozen, space)
    assert cached == fresh
    # Pickled samplers drop the cache and rebuild it.
    revived = pickle.loads(pickle.dumps(sampler))
    assert revived.sample_relative(study, frozen, space) == cached


@pytest.mark.parametrize("algorithm", ["gp-ucb", "tgp", "ata", "go-ucb"])
def test_running_trials_are_pending_points(algorithm):
    # Four asks before any tell, as four workers would: the proposals must differ.
    sampler = make_sampler(algorithm, seed=0, n_startup_trials=5)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(quadratic, n_trials=12)
    batch = [study.ask() for _ in range(4)]
    points = [(t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)) for t in batch]
    assert len(set(points)) == 4


def test_moma_hands_out_repeated_plays_to_parallel_workers():
    sampler = PrivateGPUCBSampler("moma", seed=0, n_startup_trials=0)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(quadratic, n_trials=1)  # the relative search space needs one completed trial
    first = (study.trials[0].params["x"], study.trials[0].params["y"])
    batch = [study.ask() for _ in range(6)]
    points = [(t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)) for t in batch]
    # k = 3 plays per epoch: the told point's epoch needs two more plays, the next epoch three.
    assert points[:2] == [first, first]
    assert points[2] == points[3] == points[4] != first
    assert points[5] not in (first, points[2])


def test_seeded_studies_are_reproducible():
    def run():
        sampler = private_sampler(algorithm="moma", noise_seed=7, n_startup_trials=4)
        # The noise is keyed by (noise_seed, study name, trial number).
        study = optuna.create_study(sampler=sampler, direction="maximize", study_name="repro")
        study.optimize(sampler.privatize(quadratic), n_trials=15)
        return [(t.params, t.value) for t in study.trials]

    assert run() == run()


def test_n_jobs_2_completes_every_trial():
    sampler = private_sampler(algorithm="ata", n_startup_trials=4)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(sampler.privatize(quadratic), n_trials=16, n_jobs=2)
    assert len(study.trials) == 16
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert sampler.privacy_report(study)["n_reports"] == 16


# -- recommendation ----------------------------------------------------------------------
def test_recommend_returns_an_evaluated_configuration():
    sampler = private_sampler(algorithm="moma", n_startup_trials=4)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    with pytest.raises(ValueError, match="at least one completed trial"):
        sampler.recommend(study)
    study.optimize(sampler.privatize(quadratic), n_trials=15)
    params = sampler.recommend(study)
    assert params in [t.params for t in study.trials]
    assert sampler.recommend_trial(study).params == params


def test_recommend_beats_best_trial_under_heavy_noise():
    # epsilon = 1 on scores in [0, 1]: Laplace noise of scale 1, above the objective's spread of
    # 0.49. Over 20 seeded studies of 60 uniform proposals (algorithm "random", so both rules
    # choose among the same points), the mean true score of the posterior-mean pick must exceed
    # that of the argmax of noisy values. Seeds are fixed (seed, noise_seed, study name); with
    # them the margin is 0.06 at 1.7 standard errors of the paired difference. The claim tested
    # is the direction of the effect, not its size.
    def f(trial):
        return 1.0 - (trial.suggest_float("x", 0.0, 1.0) - 0.3) ** 2

    rec, best = [], []
    for seed in range(20):
        sampler = PrivateGPUCBSampler(
            "random", epsilon=1.0, value_range=(0.0, 1.0), seed=seed, noise_seed=100 + seed
        )
        study = optuna.create_study(sampler=sampler, direction="maximize", study_name=f"s{seed}")
        study.optimize(sampler.privatize(f), n_trials=60)
        rec.append(f(optuna.trial.FixedTrial(sampler.recommend(study))))
        best.append(f(optuna.trial.FixedTrial(study.best_params)))
    assert np.mean(rec) > np.mean(best)


def test_recommend_keeps_an_enqueued_baseline_unless_beaten():
    def f(trial):
        return 1.0 - (trial.suggest_float("x", 0.0, 1.0) - 0.3) ** 2

    # epsilon = 0.05 on scores in [0, 1]: noise of standard deviation 28, under which 20 trials
    # rarely show anything better than the enqueued trial with probability 0.95. Over 10 noise
    # seeds the baseline was kept in 8 (the default acquisition) and 10 (UCB); the two
    # replacements were truly better configurations (f = 0.95 against f(0.9) = 0.64). The test
    # asks for at least 7 of 10 kept, and that a replacement is never worse than the baseline.
    kept = 0
    for seed in range(10):
        sampler = PrivateGPUCBSampler(
            "gp-ucb", epsilon=0.05, value_range=(0.0, 1.0), seed=seed, noise_seed=seed
        )
        study = optuna.create_study(sampler=sampler, direction="maximize", study_name="baseline")
        study.enqueue_trial({"x": 0.9})
        study.optimize(sampler.privatize(f), n_trials=20)
        pick = sampler.recommend(study, baseline=0)
        if pick == {"x": 0.9}:
            kept += 1
            assert sampler.recommend_trial(study, baseline=0).number == 0
        assert f(optuna.trial.FixedTrial(pick)) >= f(optuna.trial.FixedTrial({"x": 0.9}))
    assert kept >= 7
    # with little noise (epsilon = 1000) the better configurations replace it
    sampler = PrivateGPUCBSampler(
        "gp-ucb", epsilon=1000.0, value_range=(0.0, 1.0), seed=0, noise_seed=0
    )
    study = optuna.create_study(sampler=sampler, direction="maximize", study_name="baseline")
    study.enqueue_trial({"x": 0.9})
    study.optimize(sampler.privatize(f), n_trials=20)
    assert abs(sampler.recommend(study, baseline=0)["x"] - 0.3) < 0.1
    for bad in (20, -1, "0", True):
        with pytest.raises(ValueError, match="baseline must be the number"):
            sampler.recommend(study, baseline=bad)


@pytest.mark.parametrize("algorithm", ["moma", "gp-ucb", "go-ucb", "qff-jdp", "qff-ldp"])
def test_a_private_sampler_pickles_and_proposes_as_before(algorithm):
    sampler = private_sampler(algorithm=algorithm, n_startup_trials=3, noise_seed=1)
    study = optuna.create_study(sampler=sampler, direction="maximize", study_name="p")
    study.optimize(sampler.privatize(quadratic), n_trials=8)
    revived = pickle.loads(pickle.dumps(sampler))
    frozen = study._storage.get_trial(study._storage.create_new_trial(study._study_id))
    # Sample as inside the trial's privatized objective.
    token = privtune.optuna_privacy._PRIVATIZED_TRIAL.set(frozen._trial_id)
    try:
        space = sampler.infer_relative_search_space(study, frozen)
        assert revived.sample_relative(study, frozen, space) == sampler.sample_relative(
            study, frozen, space
        )
    finally:
        privtune.optuna_privacy._PRIVATIZED_TRIAL.reset(token)
    # The revived sampler's curator works: the study goes on through it.
    study.sampler = revived
    study.optimize(revived.privatize(quadratic), n_trials=2)
    assert revived.privacy_report(study)["n_reports"] == 10


def test_reseed_rng_keeps_the_cached_model():
    # Optuna reseeds the sampler per trial when n_jobs > 1: that must not cost a replay.
    sampler = PrivateGPUCBSampler("ata", seed=0, n_startup_trials=3, value_range=(0, 1))
    study = optuna.create_study(sampler=sampler, direction="maximize", study_name="k")
    study.optimize(quadratic, n_trials=8)
    replay = sampler.engine.replay((study._study_id, study.study_name))
    for _ in range(4):
        sampler.reseed_rng()
        study.optimize(quadratic, n_trials=1)
    assert replay.n_rebuilds == 1


def test_categorical_choices_of_another_type_but_equal_value_are_accepted():
    # Optuna treats CategoricalDistribution((1, 2)) and ((1.0, 2.0)) as the same distribution.
    def f(trial, choices):
        c = trial.suggest_categorical("c", choices)
        x = trial.suggest_float("x", 0.0, 1.0)
        return x * c

    sampler = PrivateGPUCBSampler("gp-ucb", seed=0, n_startup_trials=2)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(lambda t: f(t, [1, 2]), n_trials=3)
    study.optimize(lambda t: f(t, [1.0, 2.0]), n_trials=3)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert sampler.recommend(study)["c"] in (1, 2)


def test_reseed_rng_draws_new_proposals():
    def first_proposals(reseed: bool):
        sampler = PrivateGPUCBSampler("gp-ucb", seed=0, n_startup_trials=3)
        if reseed:
            sampler.reseed_rng()
        study = optuna.create_study(sampler=sampler, direction="maximize", study_name="r")
        study.optimize(quadratic, n_trials=6)
        return [t.params for t in study.trials[1:]]  # trial 0 is Optuna's independent sample

    assert first_proposals(False) == first_proposals(False)
    assert first_proposals(True) != first_proposals(False)


# -- Dubey (2021): GP-UCB on quadrature Fourier features, joint and local joint DP ----------------
def _qff_model(sampler, study):
    return sampler.engine.replay((study._study_id, study.study_name)).optimizer


def test_qff_algorithms_need_epsilon():
    for algorithm in ("qff-jdp", "qff-ldp"):
        with pytest.raises(ValueError, match="epsilon"):
            PrivateGPUCBSampler(algorithm)


def test_qff_jdp_stores_raw_scores_and_learns_from_released_statistics_only():
    # Joint DP's trust model: the storage and the sampler are the trusted privatizer (raw
    # values), the model that proposes holds only the tree mechanism's noisy sums.
    sampler = make_sampler("qff-jdp", seed=0, n_startup_trials=3)
    assert sampler.privatize(objective) is objective
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(objective, n_trials=8)
    assert [t.value for t in study.trials] == [raw_score(i) for i in range(8)]
    opt = _qff_model(sampler, study)
    assert opt.privacy == "jdp" and opt.t == 7  # the model of the last proposal
    u_r = opt.private_parameters()[1]
    F = opt.phi(opt.X)
    rewards = np.array([raw_score(i) for i in range(7)])  # in [0, 1] = value_range
    assert np.abs(u_r - F.T @ rewards).max() > 1e-3  # noise was added ...
    report = sampler.privacy_report(study)
    assert report["privacy_model"] == "jdp" and report["n_reports"] == 8
    assert report["epsilon_per_report"] == 1.0 and report["delta_per_report"] == 0.1


def test_qff_noise_seed_is_kept_by_every_worker_that_rebuilds():
    # Workers that rebuild the model must add the same noise to the same scores: the seed is
    # drawn once and kept in the study, so a fresh sampler releases the same statistics.
    storage = optuna.storages.InMemoryStorage()
    sampler = make_sampler("qff-jdp", seed=0, n_startup_trials=3)
    study = optuna.create_study(storage=storage, sampler=sampler, study_name="q")
    study.optimize(quadratic, n_trials=6)
    seed = storage.get_study_system_attrs(study._study_id)[privtune.optuna_privacy.ATTR_NOISE_SEED]
    first = _qff_model(sampler, study)
    assert first.noise_seed == seed
    other = make_sampler("qff-jdp", seed=5, n_startup_trials=3)
    other_study = optuna.load_study(study_name="q", storage=storage, sampler=other)
    other_study.optimize(quadratic, n_trials=1)  # rebuilds from the six trials, then a 7th
    rebuilt = _qff_model(other, other_study)
    assert rebuilt.noise_seed == seed
    # A model rebuilt from the first five scores with the study's seed, by the engine any
    # worker runs, releases what the first worker's did.
    assert first.t == 5
    space = privtune.space.SearchSpace(study.trials[0].distributions)
    trials = study.trials[:5]
    again, _ = other.engine.sync(
        "rebuilt",
        space,
        [t.number for t in trials],
        space.to_unit_many([t.params for t in trials]),
        np.array([t.value for t in trials]),
        maximize=study.direction == optuna.study.StudyDirection.MAXIMIZE,
        seed=5,
        noise_seed=seed,
    )
    np.testing.assert_allclose(again.private_parameters()[1], first.private_parameters()[1])


def test_a_changed_noise_seed_fails_closed():
    sampler = make_sampler("qff-jdp", seed=0, n_startup_trials=2)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=4)
    study._storage.set_study_system_attr(
        study._study_id, privtune.optuna_privacy.ATTR_NOISE_SEED, 12345
    )
    with pytest.raises(PrivacyError, match="noise seed"):
        study.optimize(quadratic, n_trials=1)


def test_qff_ldp_releases_clip_plus_gaussian_and_reports_gaussian_composition():
    # 39 start-up trials: the 40th proposal builds the model the last check reads
    sampler = make_sampler("qff-ldp", seed=0, n_startup_trials=39, noise_seed=3)
    # named: the noise is keyed by (noise_seed, study name), so only a named study has it fixed
    study = optuna.create_study(sampler=sampler, direction="maximize", study_name="gaussian")
    study.optimize(sampler.privatize(lambda t: quadratic(t) * 0 + 0.5), n_trials=40)
    curator = sampler.plan.curator()
    # sigma_u of Lemma 5 for rewards in [0, 1] at alpha = 1, beta = 0.1, times hi - lo = 1.
    assert curator.scale == pytest.approx(math.sqrt(8 * math.log(5 / 0.1)))
    noise = np.array([t.value for t in study.trials]) - 0.5
    # 40 draws: the sample standard deviation is within 35% of the scale (over 3 standard
    # errors, scale / sqrt(80) each, at this fixed noise seed).
    assert abs(noise.std() - curator.scale) < 0.35 * curator.scale
    assert all(t.user_attrs["privtune:delta"] == 0.1 for t in study.trials)
    report = sampler.privacy_report(study)
    assert report["n_reports"] == 40 and report["delta_per_report"] == 0.1
    assert report["composed_delta_basic"] == pytest.approx(4.0)
    assert report["composed_epsilon_pld"] < report["composed_epsilon_basic"]
    opt = _qff_model(sampler, study)
    assert opt.privacy == "local-jdp" and opt.client_noise


def test_qff_ldp_refuses_a_laplace_release():
    # A trial released by a Laplace curator at the same epsilon is not a qff-ldp release.
    lap = private_sampler(algorithm="random")
    study = optuna.create_study(sampler=lap)
    study.optimize(lap.privatize(quadratic), n_trials=2)
    study.sampler = make_sampler("qff-ldp", seed=0)
    with pytest.raises(PrivacyError, match="curator"):
        study.optimize(study.sampler.privatize(quadratic), n_trials=1)


def test_the_jdp_horizon_is_named_when_a_study_outgrows_it():
    sampler = make_sampler("qff-jdp", seed=0, n_startup_trials=2, optimizer_kwargs={"horizon": 4})
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=4)
    with pytest.raises(ValueError, match="horizon"):
        study.optimize(quadratic, n_trials=2)


@pytest.mark.parametrize("value_range", ["19", {0: 0, 1: 1}, (0.0, 1.0, 2.0), (True, 2), b"01"])
def test_value_range_accepts_only_a_pair_of_numbers(value_range):
    with pytest.raises(ValueError, match=r"value_range must be a pair \(lo, hi\)"):
        PrivateGPUCBSampler("gp-ucb", epsilon=1.0, value_range=value_range)


def test_an_unknown_optimizer_kwarg_names_the_algorithm_and_the_allowed_keys():
    with pytest.raises(ValueError, match=r"optimizer_kwargs has \['lamb'\].*'gp-ucb'.*'lam'"):
        PrivateGPUCBSampler("gp-ucb", optimizer_kwargs={"lamb": 1.0})


def test_the_recommended_untuned_values_come_back_exactly_as_enqueued():
    # the recommendation is a stored trial's parameters: an enqueued 1e-4 on a log scale stays
    # 1e-4 (a cube decoding would give 1.0000000000000009e-4)
    # the noise is seeded (and the study named, which keys it): every configuration scores the
    # same, and the pick replaces the enqueued trial by chance now and then (5 of 200 noise seeds)
    sampler = PrivateGPUCBSampler(
        "gp-ucb", epsilon=1.0, value_range=(0.0, 1.0), seed=0, noise_seed=0, n_startup_trials=2
    )
    study = optuna.create_study(direction="maximize", sampler=sampler, study_name="untuned")
    study.enqueue_trial({"tol": 1e-4})
    objective = sampler.privatize(
        lambda t: 0.5 + 0.0 * t.suggest_float("tol", 1e-6, 1e-2, log=True)
    )
    study.optimize(objective, 6)
    assert sampler.recommend(study, baseline=0) == {"tol": 1e-4}


def test_a_new_extreme_score_maps_the_cached_model_instead_of_rebuilding_it():
    """Without a declared value_range the reward scale is the observed range: each new best
    or worst score moves it. The default model standardises its rewards, so the cached
    optimizer's rewards are mapped to the new scale instead of the whole history being
    replayed and refitted; a fresh sampler (which replays) proposes the same configuration
    (to 1e-6: the two fits agree up to rounding)."""
    sampler = PrivateGPUCBSampler(seed=0, n_startup_trials=3)
    study = optuna.create_study(sampler=sampler, direction="maximize", study_name="r")
    study.optimize(quadratic, n_trials=15)
    values = [t.value for t in study.trials]
    assert len({max(values[:i]) for i in range(4, 16)}) > 1  # the range moved
    assert sampler.engine.replay((study._study_id, study.study_name)).n_rebuilds == 1
    space = sampler.infer_relative_search_space(study, study.trials[-1])
    frozen = study._storage.get_trial(study._storage.create_new_trial(study._study_id))
    cached = sampler.sample_relative(study, frozen, space)
    fresh = PrivateGPUCBSampler(seed=0, n_startup_trials=3).sample_relative(study, frozen, space)
    assert cached == pytest.approx(fresh, abs=1e-6)
