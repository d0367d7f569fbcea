"""Views of the pick for Optuna users: follow the recommendation as a study runs, and plot it.

With privacy, everything Optuna shows of a study's progress follows the stored values: the
progress bar's "Best value", ``study.best_trial`` and every ``optuna.visualization`` plot track
the largest *noisy* value, which is mostly the luckiest draw (often above the score's range).
What the user will use is the sampler's recommendation
(:meth:`privtune.PrivateGPUCBSampler.pick`): a trial chosen by the model's posterior mean, with
the model's estimate of its score. :class:`PickTracker` computes it after every trial, keeps its
history, stores it in the study's user attributes (where Optuna's dashboard shows it) and prints
it if asked; :func:`plot_pick` draws it against the stored values. Both read only stored values,
so with privacy they are post-processing and cost no privacy.

Example
-------
>>> import optuna
>>> from privtune import PrivateGPUCBSampler
>>> from privtune.optuna_pick import PickTracker
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> sampler = PrivateGPUCBSampler(epsilon=10.0, value_range=(0.0, 1.0), seed=0, noise_seed=0)
>>> study = sampler.create_study(direction="maximize")
>>> tracker = PickTracker(sampler)
>>> _ = sampler.optimize(study, lambda t: t.suggest_float("x", 0, 1), 12, callbacks=[tracker])
>>> len(tracker.history), tracker.history[-1].n_complete
(12, 12)
>>> sorted(study.user_attrs["privtune_pick"])
['mean', 'n_complete', 'std', 'trial']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from ._checks import check_bool, check_int
from ._display import estimate_text
from .optuna import Pick, PrivateGPUCBSampler
from .privacy.errors import check_value_range

__all__ = ["PickProgress", "PickTracker", "plot_pick"]

#: The user attribute in which :class:`PickTracker` stores the latest pick.
USER_ATTR = "privtune_pick"


class PickTracker:
    """An Optuna callback that follows the sampler's recommendation as the study runs.

    Pass it to ``study.optimize(..., callbacks=[tracker])`` (or
    :meth:`PrivateGPUCBSampler.optimize`). After every ``every``-th completed trial it asks the
    sampler for its pick (:meth:`PrivateGPUCBSampler.pick`), appends it to :attr:`history`,
    stores its trial number, posterior mean and standard deviation in the study's user
    attribute ``"privtune_pick"`` (shown by optuna-dashboard with the study), and with
    ``show=True`` prints one line (with privacy, a posterior mean outside the sampler's
    ``value_range`` is shown clipped to it, and the line says so). Use it in place of Optuna's
    progress bar, whose "Best value" is the largest stored value (with privacy, the luckiest
    noise draw):
    ``show_progress_bar=False`` and ``PickTracker(sampler, show=True)``.

    Parameters
    ----------
    sampler : PrivateGPUCBSampler
        The study's sampler (or a :class:`~privtune.GOUCBSampler`).
    baseline : int, optional
        The number of the trial to keep unless beaten (the untuned configuration, enqueued
        first), as for :meth:`PrivateGPUCBSampler.recommend`; used once it has completed.
    every : int, default=1
        Recompute the pick after every ``every``-th completed trial (each costs one model
        update, a small fraction of a trial's time for a cross-validated objective).
    show : bool, default=False
        Print one line per update.

    Attributes
    ----------
    history : list of privtune.optuna.Pick
        The picks, in order.
    """

    def __init__(
        self,
        sampler: PrivateGPUCBSampler,
        *,
        baseline: int | None = None,
        every: int = 1,
        show: bool = False,
    ) -> None:
        if not isinstance(sampler, PrivateGPUCBSampler):
            raise TypeError(
                f"sampler must be a PrivateGPUCBSampler (or GOUCBSampler), got {sampler!r}."
            )
        if baseline is not None and (isinstance(baseline, bool) or not isinstance(baseline, int)):
            raise TypeError(f"baseline must be a trial number (an int) or None, got {baseline!r}.")
        self.sampler = sampler
        self.baseline = baseline
        self.every = check_int("every", every)
        self.show = check_bool("show", show)
        self.history: list[Pick] = []

    def __call__(self, study: Study, trial: FrozenTrial) -> None:
        if trial.state != TrialState.COMPLETE:
            return
        complete = study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if len(complete) % self.every:
            return
        done = {t.number for t in complete}
        baseline = self.baseline if self.baseline in done else None
        pick = self.sampler.pick(study, baseline=baseline)
        self.history.append(pick)
        study.set_user_attr(
            USER_ATTR,
            {"trial": pick.trial, "mean": pick.mean, "std": pick.std, "n_complete": len(done)},
        )
        if self.show:
            # clipped to the range only with privacy: an exact score may lie outside it
            private = self.sampler.epsilon is not None
            bounds = self.sampler.value_range if private else None
            mean = estimate_text(pick.mean, bounds, pick.std)
            print(
                f"[privtune] {pick.n_complete} trial{'' if pick.n_complete == 1 else 's'}: "
                f"pick = trial {pick.trial}, posterior "
                f"mean {mean} {pick.params}",
                flush=True,
            )


class PickProgress(PickTracker):
    """A progress bar for a private study, in place of Optuna's: it shows the pick, not the
    largest stored value.

    Optuna's bar shows "Best value", the largest stored value: with privacy the luckiest noise
    draw (a stored 1.3 for an accuracy), under the record unit's choice the best score on the
    training records. :meth:`PrivateGPUCBSampler.optimize` uses this bar instead when a
    private study is run with ``show_progress_bar=True``: one bar (tqdm's, as Optuna's), whose
    description is the pick after each completed trial, its posterior mean clipped to the
    score's range under the score unit, labelled as the training records' under the record
    unit (whose private choice :meth:`~PrivateGPUCBSampler.recommend` makes at the end).

    Parameters
    ----------
    sampler : PrivateGPUCBSampler
    n_trials : int, optional
        The bar's length (``None``: a count without a total).
    """

    def __init__(self, sampler: PrivateGPUCBSampler, n_trials: int | None = None) -> None:
        super().__init__(sampler)
        from tqdm.auto import tqdm

        self._bar = tqdm(total=n_trials, unit="trial")

    def __call__(self, study: Study, trial: FrozenTrial) -> None:
        self._bar.update(1)
        super().__call__(study, trial)
        if trial.state != TrialState.COMPLETE or not self.history:
            return
        pick = self.history[-1]
        if self.sampler.plan.chooses:
            text = f"training-record score {pick.mean:.4g} (the private choice: recommend)"
        else:
            text = f"posterior mean {estimate_text(pick.mean, self.sampler.value_range, pick.std)}"
        self._bar.set_description(f"pick: trial {pick.trial}, {text}")

    def close(self) -> None:
        """Close the bar."""
        self._bar.close()


@contextmanager
def pick_progress(
    sampler: PrivateGPUCBSampler, n_trials: int | None, kwargs: dict[str, Any], *, private: bool
) -> Iterator[dict[str, Any]]:
    """``study.optimize``'s keyword arguments with :class:`PickProgress` in place of Optuna's
    bar when ``private`` and ``show_progress_bar`` is set (the bar closed on leaving);
    ``kwargs`` unchanged otherwise."""
    if not (private and kwargs.get("show_progress_bar")):
        yield kwargs
        return
    progress = PickProgress(sampler, n_trials)
    callbacks = [*(kwargs.get("callbacks") or []), progress]
    try:
        yield {**kwargs, "show_progress_bar": False, "callbacks": callbacks}
    finally:
        progress.close()


def plot_pick(
    history: Sequence[Pick] | PickTracker,
    study: Study | None = None,
    *,
    title: str | None = None,
    axes: Any = None,
    value_range: tuple[float, float] | None = None,
    baseline: int | None = None,
) -> Any:
    """Plot the pick's posterior mean, with a 95 % band, against the number of trials.

    The stored values (with privacy, the released noisy scores) go to their own panel below,
    so their spread does not set the scale of the pick's; the trial axis has integer ticks.
    With a ``value_range`` (by default the study's sampler's when it is private), the mean and
    the band are drawn clipped to it, as :class:`PickTracker` prints them, and its bounds are
    drawn as dashed lines: a score cannot leave the range, though the model's estimate can.

    Parameters
    ----------
    history : sequence of Pick, or PickTracker
        :attr:`PickTracker.history`, or the tracker itself (its ``baseline`` then marked).
    study : optuna.study.Study, optional
        The study, for the panel of stored values.
    title : str, optional
        The figure's title (default: says what is plotted).
    axes : sequence of two matplotlib Axes, optional
        Where to draw (the pick's, the values'); default: a new figure.
    value_range : tuple of float, optional
        ``(lo, hi)`` to clip the pick's mean and band to and to draw. Default: the
        ``value_range`` of ``study``'s sampler when it is a private
        :class:`~privtune.PrivateGPUCBSampler`; otherwise nothing is clipped.
    baseline : int, optional
        The number of the untuned configuration's trial (the tracker's ``baseline`` by
        default, when ``history`` is a :class:`PickTracker`'s): the picks that are it are
        marked, and its stored value is drawn as a line in the values' panel.

    Returns
    -------
    matplotlib.figure.Figure
    """
    try:
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        raise ImportError(
            "plot_pick needs matplotlib: pip install matplotlib (or privtune[bench])."
        ) from None
    if isinstance(history, PickTracker):
        baseline = history.baseline if baseline is None else baseline
        history = history.history
    if not history:
        raise ValueError("history is empty: run the study with the PickTracker first.")
    sampler = getattr(study, "sampler", None)
    if value_range is None and isinstance(sampler, PrivateGPUCBSampler) and sampler.epsilon:
        value_range = sampler.value_range
    bounds = None if value_range is None else check_value_range(value_range)
    if axes is None:
        height = (3, 1.6) if study is not None else (3,)
        fig, axes = plt.subplots(
            len(height),
            1,
            figsize=(7, sum(height) + 0.8),
            sharex=True,
            gridspec_kw={"height_ratios": height},
            squeeze=False,
        )
        axes = list(axes[:, 0])
    fig = axes[0].figure
    n = [p.n_complete for p in history]
    mean = np.array([p.mean for p in history], dtype=float)
    std = np.array([p.std for p in history], dtype=float)
    low, high = mean - 1.96 * std, mean + 1.96 * std
    if bounds is not None:
        mean, low, high = (np.clip(v, *bounds) for v in (mean, low, high))
    clipped = "" if bounds is None else ", clipped"
    ax = axes[0]
    ax.fill_between(n, low, high, step="post", alpha=0.25, color="C0", label="95 % band" + clipped)
    ax.step(
        n,
        mean,
        where="post",
        color="C0",
        marker="o",
        markersize=3,
        label="pick's posterior mean" + clipped,
    )
    if baseline is not None:
        kept = [i for i, p in enumerate(history) if p.trial == baseline]
        ax.plot(
            [n[i] for i in kept],
            mean[kept],
            "s",
            color="C1",
            markersize=5,
            linestyle="none",
            label=f"pick = the untuned configuration (trial {baseline})",
        )
    if bounds is not None:
        for bound in bounds:
            ax.axhline(bound, color="0.3", linestyle="--", linewidth=0.8)
        ax.plot([], [], color="0.3", linestyle="--", linewidth=0.8, label="value_range")
    ax.set_ylabel("score" if bounds is None else "score (clipped to value_range)")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    if study is not None and len(axes) > 1:
        done = [t for t in study.trials if t.state == TrialState.COMPLETE]
        values = axes[1]
        values.plot(
            [i + 1 for i in range(len(done))],
            [t.value for t in done],
            ".",
            color="0.5",
            alpha=0.6,
            label="stored values",
        )
        untuned = [t for t in done if t.number == baseline]
        if untuned:
            values.axhline(
                untuned[0].value,
                color="C1",
                linestyle=":",
                linewidth=1.2,
                label=f"untuned configuration (trial {baseline})",
            )
        values.set_ylabel("stored value")
        values.legend(loc="best", fontsize=8)
        values.grid(alpha=0.3)
    axes[-1].set_xlabel("completed trials")
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(title or "The recommendation as the study ran")
    fig.tight_layout()
    return fig
