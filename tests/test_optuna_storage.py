"""Many workers, one storage: two processes on a journal file, and on a real PostgreSQL server.

The PostgreSQL test needs ``PRIVTUNE_TEST_POSTGRES_URL`` (``.ci/run`` starts a server on
127.0.0.1 and sets it). Without it the test is skipped, unless ``PRIVTUNE_REQUIRE_SERVERS=1``
(set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from privtune import GOUCBSampler, PrivateGPUCBSampler

ROOT = Path(__file__).resolve().parents[1]
N_PER_WORKER = 12

WORKER = textwrap.dedent(
    """
    import sys, time
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    from privtune import GOUCBSampler, PrivateGPUCBSampler

    kind, where, name = sys.argv[1:4]
    seed, n, algorithm = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = JournalStorage(JournalFileBackend(where)) if kind == "journal" else where

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        n_est = trial.suggest_int("n", 1, 64, log=True)
        c = trial.suggest_categorical("c", ["a", "b", "c"])
        time.sleep(0.02)
        return 1.0 - (x - 0.3) ** 2 - 0.01 * abs(n_est - 8) - (0.1 if c != "b" else 0.0)

    if algorithm == "go-ucb":
        sampler = GOUCBSampler(
            epsilon=2.0, value_range=(0.0, 1.0), seed=seed, n_explore=4, horizon=24
        )
    else:
        sampler = PrivateGPUCBSampler(
            algorithm, epsilon=2.0, value_range=(0.0, 1.0), seed=seed, n_startup_trials=4
        )
    study = optuna.load_study(study_name=name, storage=storage, sampler=sampler)
    study.optimize(sampler.privatize(objective), n_trials=n)
    """
)


def _run_two_workers(kind: str, where: str, name: str, algorithm: str = "moma") -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                kind,
                where,
                name,
                str(seed),
                str(N_PER_WORKER),
                algorithm,
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]


def _check_study(storage, name: str, algorithm: str = "moma") -> None:
    if algorithm == "go-ucb":
        sampler = GOUCBSampler(epsilon=2.0, value_range=(0.0, 1.0), n_explore=4, horizon=24)
    else:
        sampler = PrivateGPUCBSampler(algorithm, epsilon=2.0, value_range=(0.0, 1.0))
    study = optuna.load_study(study_name=name, storage=storage, sampler=sampler)
    trials = study.get_trials(deepcopy=False)
    assert len(trials) == 2 * N_PER_WORKER  # no lost trial
    assert all(t.state == TrialState.COMPLETE for t in trials)
    assert sorted(t.number for t in trials) == list(range(2 * N_PER_WORKER))
    # Every value came through a curator (the sampler verifies each tag) and is counted.
    assert sampler.privacy_report(study)["n_reports"] == 2 * N_PER_WORKER
    sampler.recommend(study)


@pytest.mark.parametrize("algorithm", ["moma", "go-ucb", "qff-jdp"])
def test_two_processes_share_a_journal_file(tmp_path, algorithm):
    path = str(tmp_path / "journal.log")
    storage = JournalStorage(JournalFileBackend(path))
    created = optuna.create_study(study_name="shared", storage=storage, direction="maximize")
    if algorithm == "qff-jdp":
        # As the docs advise: the noise seed exists before the workers start (two workers
        # that draw it at the same moment are refused, which would make this test racy).
        storage.set_study_system_attr(created._study_id, "privtune:qff_noise_seed", 12345)
    _run_two_workers("journal", path, "shared", algorithm)
    _check_study(JournalStorage(JournalFileBackend(path)), "shared", algorithm)
    if algorithm == "qff-jdp":
        # Both workers rebuilt the joint-DP model under the one noise seed of the study (a
        # worker that found another seed after learning from scores would have failed).
        study = optuna.load_study(study_name="shared", storage=storage)
        attrs = storage.get_study_system_attrs(study._study_id)
        assert isinstance(attrs["privtune:qff_noise_seed"], int)


def test_two_processes_share_a_postgresql_server(postgres_url):
    url = postgres_url
    name = f"shared-{uuid.uuid4().hex[:8]}"
    optuna.create_study(study_name=name, storage=url, direction="maximize")
    _run_two_workers("rdb", url, name)
    storage = optuna.storages.RDBStorage(url)
    try:
        _check_study(storage, name)
    finally:
        optuna.delete_study(study_name=name, storage=storage)
        storage.remove_session()
        storage.engine.dispose()


KILLED_WORKER = textwrap.dedent(
    """
    import pathlib, sys, time
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    from privtune import PrivateGPUCBSampler

    path, marker, stage = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if sys.argv[4] == "budget":
        privacy = dict(privacy_budget=(10.0, 1e-6), n_trials=8)
    else:
        privacy = dict(epsilon=1.0)
    sampler = PrivateGPUCBSampler(
        "gp-ucb", value_range=(0.0, 1.0), seed=0, n_startup_trials=3, **privacy
    )
    study = optuna.load_study(
        study_name="killed", storage=JournalStorage(JournalFileBackend(path)), sampler=sampler
    )

    def f(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        if stage == "objective" and trial.number == 3:
            marker.write_text("in the objective")  # killed here: no score released
            time.sleep(120)
        return 1.0 - (x - 0.3) ** 2

    if stage == "objective":
        study.optimize(sampler.privatize(f), n_trials=5)
    else:  # released, then killed before Optuna stores the value
        trial = study.ask()
        sampler.privatize(f)(trial)
        marker.write_text("released")
        time.sleep(120)
    """
)


def _kill_worker_at(path: Path, stage: str, tmp_path: Path, privacy: str = "epsilon") -> None:
    """Run a worker on the journal at ``path`` and SIGKILL it once it reaches ``stage``."""
    import signal
    import time

    marker = tmp_path / f"{stage}.marker"
    worker = subprocess.Popen(
        [sys.executable, "-c", KILLED_WORKER, str(path), str(marker), stage, privacy],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():  # bounded: the worker's start takes seconds
            assert worker.poll() is None, f"the worker exited with {worker.returncode}"
            assert time.monotonic() < deadline, "the worker never reached the kill point"
            time.sleep(0.05)
        os.kill(worker.pid, signal.SIGKILL)
    finally:
        worker.kill()
        worker.wait(timeout=30)
    assert worker.returncode == -signal.SIGKILL


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_killed_worker_loses_no_release_and_counts_none_twice(tmp_path):
    path = tmp_path / "journal.log"
    storage = JournalStorage(JournalFileBackend(str(path)))
    optuna.create_study(study_name="killed", storage=storage, direction="maximize")

    def report_and_states():
        # no start-up trials: every proposal is the model's, which the last check reads
        sampler = PrivateGPUCBSampler(
            "gp-ucb", epsilon=1.0, value_range=(0.0, 1.0), seed=1, n_startup_trials=0
        )
        study = optuna.load_study(study_name="killed", storage=storage, sampler=sampler)
        return sampler, study, sampler.privacy_report(study), [t.state for t in study.trials]

    # Killed inside the objective of trial 3: three reports released, trial 3 released nothing.
    _kill_worker_at(path, "objective", tmp_path)
    _, study, report, states = report_and_states()
    assert states == [TrialState.COMPLETE] * 3 + [TrialState.RUNNING]
    assert report["n_reports"] == 3
    assert "privtune:digest" not in study.trials[3].user_attrs
    # Killed after trial 4's release, before Optuna stored its value: the receipt is stored,
    # so the release counts although the trial never completes.
    _kill_worker_at(path, "released", tmp_path)
    _, study, report, states = report_and_states()
    assert states == [TrialState.COMPLETE] * 3 + [TrialState.RUNNING] * 2
    assert study.trials[4].value is None and "privtune:digest" in study.trials[4].user_attrs
    assert report["n_reports"] == 4
    # The journal storage has no heartbeat: the stale trials are failed by hand (docs/optuna.md).
    for trial in study.get_trials(states=(TrialState.RUNNING,)):
        study.tell(trial.number, state=TrialState.FAIL)
    sampler, study, report, states = report_and_states()
    assert states == [TrialState.COMPLETE] * 3 + [TrialState.FAIL] * 2
    assert report["n_reports"] == 4  # each release once, failed or not
    # A new worker goes on: the failed trials are neither pending nor learned from.
    study.optimize(sampler.privatize(lambda t: 1.0 - (t.suggest_float("x", 0, 1) - 0.3) ** 2), 2)
    report = sampler.privacy_report(study)
    assert report["n_reports"] == 6
    assert sum(t.state == TrialState.COMPLETE for t in study.trials) == 5
    # the last proposal's model was told the four completed trials before it
    assert sampler.engine.replay((study._study_id, study.study_name)).optimizer.t == 4


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_killed_worker_holds_its_share_of_a_budget_until_failed_and_counts_once(tmp_path):
    path = tmp_path / "journal.log"
    storage = JournalStorage(JournalFileBackend(str(path)))
    optuna.create_study(study_name="killed", storage=storage, direction="maximize")

    def report():
        sampler = PrivateGPUCBSampler(
            "gp-ucb", privacy_budget=(10.0, 1e-6), n_trials=8, value_range=(0.0, 1.0), seed=1
        )
        study = optuna.load_study(study_name="killed", storage=storage, sampler=sampler)
        return sampler, study, sampler.privacy_report(study)

    # Killed inside trial 3's objective: its claim holds a share while the trial is RUNNING.
    _kill_worker_at(path, "objective", tmp_path, "budget")
    _, study, r = report()
    assert (r["released_reports"], r["reserved_reports"], r["remaining_reports"]) == (3, 4, 4)
    # Killed after trial 4's release: counted once, by its receipt.
    _kill_worker_at(path, "released", tmp_path, "budget")
    _, study, r = report()
    assert (r["released_reports"], r["reserved_reports"], r["remaining_reports"]) == (4, 5, 3)
    for trial in study.get_trials(states=(TrialState.RUNNING,)):
        study.tell(trial.number, state=TrialState.FAIL)
    sampler, study, r = report()
    # trial 3 failed without a release: its share is back; trial 4's release still counts
    assert (r["released_reports"], r["reserved_reports"], r["remaining_reports"]) == (4, 4, 4)
    # the rest of the budget is four more trials, then the study stops
    study.optimize(sampler.privatize(lambda t: 1.0 - (t.suggest_float("x", 0, 1) - 0.3) ** 2), 10)
    r = sampler.privacy_report(study)
    assert (r["released_reports"], r["remaining_reports"]) == (8, 0)
    assert r["spent_epsilon"] <= 10.0
    assert sum(t.state == TrialState.COMPLETE for t in study.trials) == 7


RECORD_WORKER = textwrap.dedent(
    """
    import json, random, sys, time
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    from sklearn.datasets import load_breast_cancer
    from sklearn.tree import DecisionTreeClassifier
    from privtune import PrivateGPUCBSampler, RecordObjective
    from privtune.privacy import PrivacyError

    kind, where, name, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = JournalStorage(JournalFileBackend(where)) if kind == "journal" else where
    X, y = load_breast_cancer(return_X_y=True)

    def make(trial):
        return DecisionTreeClassifier(
            max_depth=trial.suggest_int("max_depth", 1, 12), random_state=0
        )

    objective = RecordObjective(make, X[:400], y[:400], X[400:], y[400:])
    sampler = PrivateGPUCBSampler(
        privacy_budget=(1.0, 1e-6), value_range=(0.0, 1.0), privacy_unit="record", seed=seed
    )
    study = optuna.load_study(study_name=name, storage=storage, sampler=sampler)
    sampler.optimize(study, objective, n_trials=4)
    while len(study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))) < 8:
        time.sleep(0.05)  # the other worker's trials: the choice is among all eight
    deadline = time.monotonic() + 120  # a loaded machine (tests side by side) chooses slowly
    while True:
        try:
            pick = sampler.recommend(study)
            break
        except PrivacyError:  # the other claimed at the same moment, or is choosing
            if time.monotonic() > deadline:
                raise
            time.sleep(random.random() * 0.2)
    print(json.dumps({"pick": pick, "report": sampler.privacy_report(study)}))
    """
)


def _record_choice_by_two_workers(kind: str, where: str, name: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RECORD_WORKER, kind, where, name, str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for seed in (0, 1)
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        outs.append(__import__("json").loads(out.strip().splitlines()[-1]))
    return outs


def _check_one_choice(storage, name: str, outs: list[dict]) -> None:
    # Both workers proposed; at most one choice was made, and both report it.
    study = optuna.load_study(study_name=name, storage=storage)
    assert len(study.get_trials(states=(TrialState.COMPLETE,))) == 8
    claims = [
        v
        for k, v in storage.get_study_system_attrs(study._study_id).items()
        if k.startswith("privtune:record_choice:")
    ]
    assert [c["state"] for c in claims].count("done") == 1
    assert all(c["state"] in ("done", "withdrawn") for c in claims)
    assert outs[0]["pick"] == outs[1]["pick"]
    assert outs[0]["report"] == outs[1]["report"] and outs[0]["report"]["epsilon"] == 1.0
    assert "8 completed trials" in outs[0]["report"]["candidates"]


def test_two_processes_make_one_record_choice_on_a_journal_file(tmp_path):
    path = str(tmp_path / "record.log")
    storage = JournalStorage(JournalFileBackend(path))
    optuna.create_study(study_name="record", storage=storage, direction="maximize")
    outs = _record_choice_by_two_workers("journal", path, "record")
    _check_one_choice(JournalStorage(JournalFileBackend(path)), "record", outs)


def test_two_processes_make_one_record_choice_on_a_postgresql_server(postgres_url):
    url = postgres_url
    name = f"record-{uuid.uuid4().hex[:8]}"
    optuna.create_study(study_name=name, storage=url, direction="maximize")
    outs = _record_choice_by_two_workers("rdb", url, name)
    storage = optuna.storages.RDBStorage(url)
    try:
        _check_one_choice(storage, name, outs)
    finally:
        optuna.delete_study(study_name=name, storage=storage)
        storage.remove_session()
        storage.engine.dispose()
