"""Rounds of DP-FTS-DE: agents step, the server aggregates, the broadcast goes back.

:class:`FederatedRunner` drives Alg. 1's loop. The agents' steps of a round are independent, so
they may run in parallel through joblib (``n_jobs``), on any joblib backend, including Dask's
(``with joblib.parallel_backend("dask"): ...``): an agent travels to a worker, steps, and comes
back with its history; the messages are plain arrays. With ``n_jobs=None`` (the default) every
agent steps in this process.

The switches of the paper's variants:

============  ==================================================================
standard TS   ``server=None`` (or every agent with ``server_prob="never"``)
FTS           a server with ``n_regions=1`` and ``z=None``
FTS-DE        a server with ``n_regions=P > 1`` and ``z=None``
DP-FTS        a server with ``n_regions=1``, ``q``, ``z`` and ``S``
DP-FTS-DE     a server with ``n_regions=P > 1``, ``q``, ``z`` and ``S``
============  ==================================================================

An agent whose step raises is skipped for that round: it keeps its history from before the
round (its generator moves on), sends nothing, and the server counts it, if selected, as a zero
vector (see :mod:`privtune.federated.server` for why the accounting is unchanged). The failure
is logged in the round's record by the exception's type only, and warned about once per agent
and round. A joblib worker process that dies is not an agent's failure: joblib raises, the
round is lost and the run stops, with every agent as it was after the last finished round.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._checks import check_int
from ..privacy.accounting import DEFAULT_USER_DELTA
from ..privacy.withhold import describe
from .agent import FTSAgent
from .server import DPFTSServer, RoundStats

__all__ = ["FederatedRunner", "RoundRecord"]


@dataclass(frozen=True)
class RoundRecord:
    """One round of a federated run.

    Attributes
    ----------
    t : int
        The round (0 is the initialization).
    n_used_server : int
        Agents whose query of this round was chosen by the server's vectors.
    failed : dict of int to str
        Agents that failed in this round, with the type of the exception.
    server_stats : RoundStats or None
        The server's log of the broadcast computed after this round, or ``None`` if the
        server did not run.
    """

    t: int
    n_used_server: int
    failed: dict[int, str] = field(default_factory=dict)
    server_stats: RoundStats | None = None


def _step(agent: FTSAgent, t: int, broadcast, send: bool):
    """One agent's round, wherever it runs: ``(agent, message, error type or None)``.

    A failed agent comes back too: its history is as before the round (``step`` commits last)
    but its generator has moved on, so the next round does not replay the failure, and the
    run is the same on any joblib backend as in this process.
    """
    try:
        message = agent.step(t, broadcast, send=send)
    except Exception as exc:  # an agent's failure must not stop the federation
        return agent, None, describe(exc)
    return agent, message, None


class FederatedRunner:
    """Run (DP-)FTS(-DE) over a list of agents and a server.

    Parameters
    ----------
    agents : sequence of FTSAgent
        The ``N`` agents; they must share one feature map.
    server : DPFTSServer or None
        The central server; ``None`` runs standard Thompson sampling (no communication).
    server_rounds : int or None, default=None
        Use the server only for the broadcasts of the first ``server_rounds`` rounds, after
        which agents run local TS and no privacy is spent (footnote 13 of the paper).
        ``None``: every round.
    n_jobs : int or None, default=None
        Agents' steps in parallel through joblib; ``None`` steps them in this process.

    Attributes
    ----------
    records : list of RoundRecord
        One per round run.
    """

    def __init__(
        self,
        agents: Sequence[FTSAgent],
        server: DPFTSServer | None = None,
        *,
        server_rounds: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        agents = list(agents)
        if not agents:
            raise ValueError("agents must be a non-empty sequence of FTSAgent.")
        first = agents[0].features
        for n, agent in enumerate(agents):
            if not isinstance(agent, FTSAgent):
                raise TypeError(f"agent {n} is a {type(agent).__name__}, not an FTSAgent.")
            if agent.n_features != first.n_features:
                raise ValueError(
                    f"agent {n} has {agent.n_features} features but agent 0 has "
                    f"{first.n_features}: all agents must share one feature map."
                )
            f = agent.features
            if f.dim != first.dim or not np.array_equal(f.omega, first.omega):
                raise ValueError(
                    f"agent {n}'s random features differ from agent 0's: all agents must "
                    "draw their features from the same seed."
                )
        if server is not None:
            if server.n_agents != len(agents):
                raise ValueError(f"the server expects {server.n_agents} agents, got {len(agents)}.")
            if server.n_features != first.n_features:
                raise ValueError(
                    f"the server expects vectors of M={server.n_features} coordinates but the "
                    f"agents' features have {first.n_features}."
                )
            regions = [a.region for a in agents]
            if not np.array_equal(server.assignment, regions):
                raise ValueError("the server's assignment must be each agent's region, in order.")
        self.agents = agents
        self.server = server
        self.server_rounds = (
            None if server_rounds is None else check_int("server_rounds", server_rounds, 0)
        )
        self.n_jobs = n_jobs
        self.records: list[RoundRecord] = []
        self._broadcast: np.ndarray | None = None

    def _sends(self, t: int, n_iter: int) -> bool:
        if self.server is None or t >= n_iter:
            return False
        return self.server_rounds is None or t < self.server_rounds

    def _step_all(self, t: int, send: bool) -> list[tuple]:
        broadcast = self._broadcast
        if self.n_jobs is None:
            return [_step(agent, t, broadcast, send) for agent in self.agents]
        from joblib import Parallel, delayed

        return Parallel(n_jobs=self.n_jobs)(
            delayed(_step)(agent, t, broadcast, send) for agent in self.agents
        )

    def run(
        self, n_iter: int, callback: Callable[[FederatedRunner, RoundRecord], None] | None = None
    ) -> list[RoundRecord]:
        """Run the initialization and ``n_iter`` rounds of Alg. 1 and 2 (``n_iter + 1`` rounds).

        Parameters
        ----------
        n_iter : int
            Rounds after the initialization, ``>= 1``.
        callback : callable, optional
            Called as ``callback(runner, record)`` after every round.

        Returns
        -------
        list of RoundRecord
        """
        n_iter = check_int("n_iter", n_iter)
        if self.records:
            raise RuntimeError("this runner has already run; build a new one.")
        for t in range(n_iter + 1):
            send = self._sends(t, n_iter)
            results = self._step_all(t, send)
            messages: list[np.ndarray | None] = []
            failed: dict[int, str] = {}
            for n, (agent, message, error) in enumerate(results):
                self.agents[n] = agent
                if error is not None:
                    failed[n] = error
                    warnings.warn(
                        f"agent {n} failed in round {t} ({error}); it is skipped for this round.",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                messages.append(message)
            n_used = sum(
                a.used_server[-1] for n, a in enumerate(self.agents) if t > 0 and n not in failed
            )
            stats = None
            if send:
                assert self.server is not None  # _sends is False without a server
                self._broadcast, stats = self.server.aggregate(messages, t)
            else:
                self._broadcast = None
            record = RoundRecord(t, int(n_used), failed, stats)
            self.records.append(record)
            if callback is not None:
                callback(self, record)
        return self.records

    def epsilon(self, delta: float | None = None, accountant: str | None = None) -> float:
        """The privacy loss of the broadcasts actually made so far, at ``delta`` (default
        :data:`~privtune.privacy.accounting.DEFAULT_USER_DELTA`; pass
        ``default_delta(N)`` for the paper's ``1 / N^1.1``).

        0 when the server never ran, ``inf`` when it ran without privacy.
        """
        if self.server is None or self.server.n_releases == 0:
            return 0.0
        if not self.server.private:
            return math.inf
        delta = DEFAULT_USER_DELTA if delta is None else delta
        return self.server.epsilon(delta, accountant)
