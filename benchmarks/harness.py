"""What the benchmark scripts share: the command line, the results folders, resumable runs,
mean ± standard error, plotting and the ask/tell loop.

Every script runs from the repository root as ``python -m benchmarks.<name>``.

Command line
    :func:`make_parser` gives a script ``--out`` (the results folder, ``benchmarks/results``
    by default) and ``--quick`` (a tiny run, used by the tests); :func:`parse` reads the
    arguments and, with ``--quick``, points ``args.out`` at ``<out>/quick``, so a smoke run
    writes the same file names as a full run without overwriting the saved results.
The template
    A benchmark made of resumable runs declares a :class:`Benchmark`: its options, what
    ``--quick`` narrows them to, ``run`` (the missing runs) and ``summarize`` (a
    :class:`Report` of the saved runs). :func:`main` is its whole command line (``run``,
    ``summarize``, other commands, ``--quick``), and :func:`publish` writes the report's JSON,
    Markdown and plot and prints its headline. A benchmark of several parts (a paper's
    experiments) declares each as a :class:`Part`; :func:`main_parts` is its command line.
Runs
    A benchmark made of many runs keeps them in a :class:`RunStore`, one compressed file
    ``<out>/<benchmark>/runs.jsonl.gz`` of one JSON line per run. A run is appended when it
    ends, so an interrupted benchmark resumes where it stopped; a run in progress is *claimed*
    by a file ``claims/<name>.claim`` holding its process id, so several processes can share
    the work, and the claim of a process that died is taken over (:meth:`RunStore.claim`,
    :func:`run_missing`). :func:`collect_runs` is the loop over a benchmark's runs;
    :func:`load_runs` reads them back. ``python -m benchmarks.harness compact [OUT]`` compacts
    every store of a results folder (:func:`compact_results`).
Statistics
    :func:`mean_se` (mean and standard error over runs), :func:`standard_error` (the latter
    alone, ``None`` under two runs) and :func:`format_mean_se` (the ``mean ± SE`` cell of a
    table).
Plots
    :func:`pyplot` (matplotlib with the file-only ``Agg`` backend, or ``None`` without
    matplotlib), :func:`panel_grid`, :func:`plot_band` and :func:`save_figure`.
Optimizers
    :func:`drive`: ask, evaluate and tell for a number of rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import json
import math
import os
import struct
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

__all__ = [
    "RESULTS",
    "AskTell",
    "Benchmark",
    "Part",
    "Report",
    "RunStore",
    "collect_runs",
    "compact_results",
    "drive",
    "figure",
    "format_mean_se",
    "load_runs",
    "main",
    "main_parts",
    "make_parser",
    "mean_se",
    "panel_grid",
    "parse",
    "plot_band",
    "publish",
    "pyplot",
    "run_missing",
    "sampler_available",
    "save_figure",
    "win_tie_loss",
    "write_json",
]

RESULTS = Path(__file__).resolve().parent / "results"
"""The default results folder, ``benchmarks/results``."""


# -- command line ------------------------------------------------------------------------------


def make_parser(doc: str | None, quick: str = "a tiny run (tests)") -> argparse.ArgumentParser:
    """A script's argument parser with the options every benchmark has.

    Parameters
    ----------
    doc : str or None
        The script's docstring; its first line is the description.
    quick : str, default="a tiny run (tests)"
        What ``--quick`` runs, for the help text.

    Returns
    -------
    argparse.ArgumentParser
        With ``--out`` (a folder, default :data:`RESULTS`) and ``--quick``.
    """
    parser = argparse.ArgumentParser(description=(doc or "").strip().split("\n")[0])
    parser.add_argument(
        "--out", type=Path, default=RESULTS, help="results folder (default: benchmarks/results)"
    )
    parser.add_argument("--quick", action="store_true", help=f"{quick}; written to OUT/quick")
    return parser


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse ``argv``; with ``--quick``, ``args.out`` becomes ``<out>/quick``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A parser from :func:`make_parser`.
    argv : list of str or None
        The arguments (``None``: the command line's).

    Returns
    -------
    argparse.Namespace
        The parsed arguments, ``out`` being the folder the script writes to.
    """
    args = parser.parse_args(argv)
    if args.quick:
        args.out = args.out / "quick"
    return args


# -- the template of a benchmark made of runs ------------------------------------------------


@dataclass(frozen=True)
class Report:
    """What a benchmark's summary publishes (:func:`publish`).

    Attributes
    ----------
    result : dict
        Written to ``<out>/<name>.json`` and returned by the benchmark's ``main``.
    markdown : str, optional
        Written to ``<out>/<name>.md``.
    plot : callable, optional
        ``plot(path)`` draws ``<out>/<name>.png``.
    headline : object, optional
        Printed on stdout (``None``: nothing printed): a string as it is (a table, say),
        anything else as JSON.
    compact : bool, default=False
        Whether a JSON headline is printed on one line rather than indented (the parts of the
        paper benchmarks, :func:`main_parts`, print one line each).
    """

    result: dict
    markdown: str | None = None
    plot: Callable[[Path], None] | None = None
    headline: Any = None
    compact: bool = False


def publish(out: Path, name: str, report: Report) -> dict:
    """Write ``report`` as ``<out>/<name>.json`` (and ``.md`` and ``.png`` when it has them);
    print its headline.

    Returns
    -------
    dict
        ``report.result``.
    """
    write_json(out / f"{name}.json", report.result)
    if report.markdown is not None:
        (out / f"{name}.md").write_text(report.markdown)
    if report.plot is not None:
        report.plot(out / f"{name}.png")
    if isinstance(report.headline, str):
        print(report.headline)
    elif report.headline is not None:
        print(json.dumps(report.headline, indent=None if report.compact else 1))
    return report.result


@dataclass(frozen=True)
class Benchmark:
    """What a benchmark made of resumable runs declares; :func:`main` does the rest.

    Attributes
    ----------
    name : str
        The results' name: ``<out>/<name>.json``, ``.md`` and ``.png``.
    doc : str or None
        The module's docstring (the command line's description).
    quick : str
        What ``--quick`` runs, for the help text.
    arguments : callable
        ``arguments(parser)`` adds the benchmark's options.
    quick_settings : callable
        ``quick_settings(args)`` narrows the parsed options to the quick run.
    run : callable
        ``run(args)`` computes the missing runs.
    summarize : callable
        ``summarize(args) -> Report`` from the saved runs.
    commands : dict, optional
        Commands besides ``run`` and ``summarize``, each ``command(args)``, run before the
        summary (``optuna_tuning``'s ``repick``).
    tools : dict, optional
        Commands that read the saved runs and print, each ``tool(args)``, with no summary
        written after them (``tuning_suite``'s ``trace``).
    setup : callable, optional
        ``setup()`` before anything runs (Optuna's log level, say).
    summarize_after_run : bool, default=True
        Whether ``run`` is followed by the summary (always with ``--quick``).
    """

    name: str
    doc: str | None
    quick: str
    arguments: Callable[[argparse.ArgumentParser], None]
    quick_settings: Callable[[argparse.Namespace], None]
    run: Callable[[argparse.Namespace], Any]
    summarize: Callable[[argparse.Namespace], Report]
    commands: dict[str, Callable[[argparse.Namespace], Any]] = field(default_factory=dict)
    tools: dict[str, Callable[[argparse.Namespace], Any]] = field(default_factory=dict)
    setup: Callable[[], None] | None = None
    summarize_after_run: bool = True


def main(benchmark: Benchmark, argv: list[str] | None = None) -> dict | None:
    """The command line of ``benchmark``: ``run`` (the default), ``summarize``, its other
    commands and tools, and ``--quick`` (a smoke run, then its summary, under
    ``<out>/quick``).

    Parameters
    ----------
    benchmark : Benchmark
    argv : list of str, optional
        The arguments (``None``: the command line's).

    Returns
    -------
    dict or None
        The summary's result, or ``None`` when ``run`` is not followed by one and after a
        tool.
    """
    parser = make_parser(benchmark.doc, quick=benchmark.quick)
    commands = ["run", *benchmark.commands, *benchmark.tools, "summarize"]
    parser.add_argument("command", nargs="?", default="run", choices=commands)
    benchmark.arguments(parser)
    args = parse(parser, argv)
    if benchmark.setup is not None:
        benchmark.setup()
    if args.quick:
        benchmark.quick_settings(args)
        benchmark.run(args)
    elif args.command == "run":
        benchmark.run(args)
        if not benchmark.summarize_after_run:
            return None
    elif args.command in benchmark.commands:
        benchmark.commands[args.command](args)
    elif args.command in benchmark.tools:
        benchmark.tools[args.command](args)
        return None
    # a benchmark may let its summary take another name (several summaries of one store)
    return publish(
        args.out, getattr(args, "summary_name", None) or benchmark.name, benchmark.summarize(args)
    )


@dataclass(frozen=True)
class Part:
    """One part of a benchmark made of several (a paper's experiments), for :func:`main_parts`.

    Attributes
    ----------
    name : str
        The part's command (``python -m benchmarks.<module> <name>``).
    arguments : callable
        ``arguments(parser)`` adds the part's options to its sub-command.
    run : callable
        ``run(args)`` runs the part, publishes its summary (:func:`publish`) and returns it.
    check : callable, optional
        ``check(args)`` returns an error message for options the parser cannot check, or
        ``None``.
    """

    name: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], Any]
    check: Callable[[argparse.Namespace], str | None] | None = None


def main_parts(
    doc: str | None,
    parts: Sequence[Part],
    quick: Callable[[argparse.Namespace], Any],
    argv: list[str] | None = None,
    *,
    quick_help: str = "a tiny run (tests)",
) -> Any:
    """The command line of a benchmark of several parts: ``<part> [options]``, or ``--quick``
    (``quick(args)``, which may look at ``args.part``).

    Parameters
    ----------
    doc : str or None
        The module's docstring.
    parts : sequence of Part
    quick : callable
        The smoke run; it returns what ``main`` returns.
    argv : list of str, optional
        The arguments (``None``: the command line's).
    quick_help : str, default="a tiny run (tests)"
        What ``--quick`` runs, for the help text.

    Returns
    -------
    object
        The part's (or the quick run's) summary.
    """
    parser = make_parser(doc, quick=quick_help)
    sub = parser.add_subparsers(dest="part")
    for part in parts:
        part.arguments(sub.add_parser(part.name))
    args = parse(parser, argv)
    if args.quick:
        return quick(args)
    by_name = {part.name: part for part in parts}
    if args.part is None:
        parser.error(f"choose a part: {', '.join(by_name)}")
    chosen = by_name[args.part]
    message = None if chosen.check is None else chosen.check(args)
    if message is not None:
        parser.error(message)
    return chosen.run(args)


# -- runs --------------------------------------------------------------------------------------


def _gzip_member(data: bytes) -> bytes:
    """``data`` as one gzip member without a time stamp or file name: the same bytes every
    time (RFC 1952: no flags, mtime 0, maximum compression, unknown operating system)."""
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<LL", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return header + zlib.compress(data, 9, wbits=-15) + trailer


def _gunzip(data: bytes) -> list[bytes]:
    """The content of each gzip member of ``data``, in order."""
    members = []
    while data:
        inflate = zlib.decompressobj(wbits=31)
        members.append(inflate.decompress(data))
        if not inflate.eof:
            raise EOFError("the last gzip member is truncated")
        data = inflate.unused_data
    return members


def _order(name: str) -> str:
    """The sort key of a run's name: the name followed by ``.json``, so that ``a-cv`` comes
    before ``a`` (``-`` sorts before ``.``); a summary's sums follow this order."""
    return f"{name}.json"


#: A compacted store starts a gzip member at each name whose CRC-32 is a multiple of this
#: (one name in 256, on average). Its members depend on its names alone, so a run added to a
#: large store changes one member and leaves the others' bytes as they were: git keeps the new
#: file as a small delta of the old one, where with one member the bytes would differ from the
#: change on. Compression is nearly that of one member (deflate looks back 32 KiB).
_MEMBER_STARTS = 256


def _members(names: list[str]) -> list[list[str]]:
    """``names`` (in name order) cut into the members of a compacted store."""
    members: list[list[str]] = [[]]
    for name in names:
        if members[-1] and zlib.crc32(name.encode()) % _MEMBER_STARTS == 0:
            members.append([])
        members[-1].append(name)
    return members


def _line(name: str, run: dict) -> bytes:
    """One line of a store: ``{"name": name, "run": run}`` as compact JSON."""
    return (json.dumps({"name": name, "run": run}, separators=(",", ":")) + "\n").encode()


def _name(line: bytes) -> str:
    """The name of a store's line, read from its head: :func:`_line` writes the name first, and
    parsing only that part is what keeps reading a store of many runs fast."""
    head = line.find(b',"run":')
    try:
        return json.loads(line[:head] + b"}")["name"]
    except (ValueError, KeyError):  # not a line of _line's
        return json.loads(line)["name"]


@dataclass
class _Snapshot:
    """What a store's file held when it was last read (:meth:`RunStore._read`)."""

    stat: tuple[int, int, int] | None  # inode, size and mtime; None: no file
    lines: dict[str, bytes]  # each name's last line, in the file's order
    compact: bool  # one line per name, in name order, in the members of _members


class RunStore:
    """The saved runs of a benchmark: the gzip file ``<out>/<benchmark>/runs.jsonl.gz``, one
    JSON line per run, shared by the processes that compute them.

    Each line is ``{"name": <the run's name>, "run": <its result>}``. A run is saved when it
    ends, by appending a gzip member holding its line (gzip readers read the members one after
    the other), so an interrupted benchmark resumes where it stopped; a name saved twice keeps
    its last run. Runs are read in name order, each name compared with ``.json`` appended (so
    ``a-cv`` comes before ``a``). :meth:`compact` rewrites the file with one line per name, in
    name order, in gzip members that start at set names: the same bytes for the same runs, and
    a run added changes one member (:func:`collect_runs` compacts when it ends; ``python -m
    benchmarks.harness compact`` compacts every store of a results folder). Writers hold an
    exclusive :func:`fcntl.flock` on ``runs.lock`` beside the file, readers a shared one.

    A run in progress is *claimed* by the file ``claims/<name>.claim`` holding its process id,
    so several processes can share the work; the claim of a process that no longer exists is
    taken over (:meth:`claim`, :func:`run_missing`).

    Parameters
    ----------
    out : Path
        The results folder (``args.out`` after :func:`parse`).
    benchmark : str
        The benchmark's name, e.g. ``"optuna_tuning"`` or ``"dubey_table1"``: its folder in
        ``out``, created when a run is saved or claimed.

    Attributes
    ----------
    folder : Path
        ``<out>/<benchmark>``.
    path : Path
        The file of the runs, ``<folder>/runs.jsonl.gz``.
    """

    def __init__(self, out: Path, benchmark: str) -> None:
        self.folder = Path(out) / benchmark
        self.path = self.folder / "runs.jsonl.gz"
        self._snapshot = _Snapshot(None, {}, True)

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"

    # -- reading

    @contextlib.contextmanager
    def _locked(self, mode: int) -> Iterator[None]:
        """Hold ``flock(mode)`` on ``runs.lock`` (the folder is created)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / "runs.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, mode)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _read(self) -> _Snapshot:
        """The file's content, read again only if it changed (the caller holds a lock)."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._snapshot = _Snapshot(None, {}, True)
            return self._snapshot
        stat = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stat == self._snapshot.stat:
            return self._snapshot
        try:
            members = _gunzip(self.path.read_bytes())
        except (EOFError, zlib.error) as e:
            raise ValueError(f"{self.path}: not a readable gzip file ({e})") from None
        lines: dict[str, bytes] = {}
        found: list[list[str]] = []  # the names of each member, in the file's order
        for member in members:
            found.append([])
            for line in member.splitlines(keepends=True):
                name = _name(line)
                lines.pop(name, None)  # a name saved again moves to its last place
                lines[name] = line
                found[-1].append(name)
        names = list(lines)
        compact = names == sorted(names, key=_order) and found == _members(names)
        self._snapshot = _Snapshot(stat, lines, compact)
        return self._snapshot

    def _lines(self) -> dict[str, bytes]:
        """Each saved name's line, read under a shared lock."""
        if not self.path.exists():
            return {}
        with self._locked(fcntl.LOCK_SH):
            return self._read().lines

    def names(self) -> list[str]:
        """The names of the saved runs, in name order."""
        return sorted(self._lines(), key=_order)

    def __contains__(self, name: object) -> bool:
        return name in self._lines()

    def __len__(self) -> int:
        return len(self._lines())

    def get(self, name: str) -> dict | None:
        """The saved run ``name`` (a new dict), or ``None``."""
        line = self._lines().get(name)
        return None if line is None else json.loads(line)["run"]

    def load(self) -> dict[str, dict]:
        """Every saved run by name, in name order (new dicts)."""
        lines = self._lines()
        return {name: json.loads(lines[name])["run"] for name in sorted(lines, key=_order)}

    # -- writing

    def append(self, name: str, run: dict) -> None:
        """Save ``run`` as ``name`` (replacing a run saved under that name).

        Parameters
        ----------
        name : str
            The run's name, unique in the benchmark (it names its claim file too).
        run : dict
            The run's result, JSON-serialisable.
        """
        member = _gzip_member(_line(name, run))
        with self._locked(fcntl.LOCK_EX):
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                try:
                    if os.write(fd, member) != len(member):
                        raise OSError(f"{self.path}: short write")
                except BaseException:
                    os.ftruncate(fd, size)  # no partial member left behind
                    raise
            finally:
                os.close(fd)

    def _write(self, lines: dict[str, bytes]) -> None:
        """Replace the file by ``lines`` in name order, in the members of :func:`_members`
        (the caller holds the exclusive lock)."""
        members = _members(sorted(lines, key=_order))
        data = b"".join(_gzip_member(b"".join(lines[n] for n in names)) for names in members)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, self.path)

    def compact(self) -> None:
        """Rewrite the file with one line per name (its last run), in name order, in gzip
        members that start at set names (one in 256 on average, by their CRC-32); nothing is
        written if it is so already."""
        if not self.path.exists():
            return
        with self._locked(fcntl.LOCK_EX):
            snapshot = self._read()
            if not snapshot.compact:
                self._write(snapshot.lines)

    def remove(self, names: Iterable[str]) -> None:
        """Delete the runs ``names`` (those saved), compacting the file.

        Parameters
        ----------
        names : iterable of str
            The runs' names.
        """
        names = set(names)
        if not self.path.exists() or not names:
            return
        with self._locked(fcntl.LOCK_EX):
            lines = self._read().lines
            if names & lines.keys():
                self._write({n: line for n, line in lines.items() if n not in names})

    def add_run_files(self, folder: Path) -> int:
        """Move the runs saved one JSON file each in ``folder`` (``<name>.json``) into the
        store, compacted, then delete their files, and ``folder`` if nothing else is left in it.

        A name already in the store must hold the same run. Stale claims and ``.tmp`` files
        are deleted with them; a claim of a live process stops this with an error (its run is
        still being written to ``folder``).

        Parameters
        ----------
        folder : Path
            The folder of run files.

        Returns
        -------
        int
            The number of runs moved.
        """
        claims = sorted(folder.glob("*.claim"))
        for marker in claims:
            if _owner_alive(marker):
                raise RuntimeError(f"{marker}: a live process is computing this run")
        files = sorted(folder.glob("*.json"))
        with self._locked(fcntl.LOCK_EX):
            lines = dict(self._read().lines)
            for path in files:
                name, run = path.name[: -len(".json")], json.loads(path.read_text())
                saved = lines.get(name)
                if saved is not None and json.loads(saved)["run"] != run:
                    raise ValueError(f"{path}: {self.path} holds another run of this name")
                lines[name] = _line(name, run)
            self._write(lines)
            check = self._read().lines
            for path in files:  # read back before any file is deleted
                name = path.name[: -len(".json")]
                if json.loads(check[name])["run"] != json.loads(path.read_text()):
                    raise RuntimeError(f"{path}: the run read back from {self.path} differs")
            for path in [*files, *claims, *folder.glob("*.tmp")]:
                path.unlink(missing_ok=True)
        if folder != self.folder and not any(folder.iterdir()):
            folder.rmdir()
        return len(files)

    # -- claims

    def _marker(self, name: str) -> Path:
        return self.folder / "claims" / f"{name}.claim"

    def claim(self, name: str) -> bool:
        """Claim the run ``name`` for this process.

        Parameters
        ----------
        name : str
            The run's name; the claim is the file ``claims/<name>.claim``.

        Returns
        -------
        bool
            ``True`` if this process owns the run now, ``False`` if a live process owns it.
            The claim of a process that no longer exists is taken over.
        """
        marker = self._marker(name)
        marker.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                if _owner_alive(marker):
                    return False  # another live process owns it
                marker.unlink(missing_ok=True)  # stale: its process is gone
                continue
            with os.fdopen(fd, "w") as f:
                f.write(str(os.getpid()))
            return True
        return False

    def release(self, name: str) -> None:
        """Delete this process's claim of the run ``name``."""
        self._marker(name).unlink(missing_ok=True)


def _owner_alive(marker: Path) -> bool:
    """Whether the process whose id the claim file ``marker`` holds is alive (``True`` when it
    cannot be told: a process of another user)."""
    try:
        pid = int(marker.read_text() or "0")
        if pid <= 0:  # written by no process (a crash before the pid was written)
            return False
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError, FileNotFoundError):
        return False
    except PermissionError:
        return True
    return True


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically (its folder is created).

    Parameters
    ----------
    path : Path
        The file.
    data : Any
        A JSON-serialisable value.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def run_missing(store: RunStore, name: str, compute: Callable[[], dict]) -> dict | None:
    """Compute and save the run ``name``, unless it is saved or claimed by another process.

    Parameters
    ----------
    store : RunStore
        The benchmark's runs.
    name : str
        The run's name.
    compute : callable
        Computes the run; called without arguments, returns a JSON-serialisable dict.

    Returns
    -------
    dict or None
        The run's result, or ``None`` when this process did not run it.
    """
    if name in store or not store.claim(name):
        return None
    try:
        if name in store:  # saved by another process since it was looked up
            return None
        result = compute()
        store.append(name, result)
    finally:
        store.release(name)
    return result


def collect_runs(
    store: RunStore,
    runs: Iterable[tuple[str, Callable[[], dict]]],
    describe: Callable[[dict], str] | None = None,
) -> list[dict]:
    """Compute the runs missing from ``store``, in order, and return those saved there.

    The store is compacted at the end (:meth:`RunStore.compact`).

    Parameters
    ----------
    store : RunStore
        The benchmark's runs.
    runs : iterable of (str, callable)
        Each run's name and the function that computes it (:func:`run_missing`).
    describe : callable, optional
        A run's result to the progress line printed (on stderr) after its name when this
        process computed it; by default its seconds.

    Returns
    -------
    list of dict
        The saved runs, in the order of ``runs``: those computed here, those saved before, and
        not those another process is computing (their names are printed on stderr).
    """
    rows, elsewhere = [], []
    for name, compute in runs:
        result = run_missing(store, name, compute)
        if result is not None:
            line = describe(result) if describe else f"{result['seconds']:.0f} s"
            print(f"{name}: {line}", file=sys.stderr, flush=True)
        saved = store.get(name)
        if saved is not None:
            rows.append(saved)
        else:
            elsewhere.append(name)
    store.compact()
    if elsewhere:
        print(
            f"{len(elsewhere)} run(s) are being computed by another process and are left out "
            f"({', '.join(elsewhere)}); summarize again when it has finished.",
            file=sys.stderr,
            flush=True,
        )
    return rows


def load_runs(store: RunStore) -> list[dict]:
    """The runs saved in ``store``, in the order of their names.

    Parameters
    ----------
    store : RunStore
        The benchmark's runs.

    Returns
    -------
    list of dict
        One dict per run.
    """
    return list(store.load().values())


def compact_results(out: Path) -> dict[str, int]:
    """Compact every store under ``out``; a folder of run files, one JSON file per run, is
    moved into its store first (:meth:`RunStore.add_run_files`).

    The folders of run files are ``<benchmark>/runs/`` (the store ``<benchmark>``) and
    ``optuna_tuning/defaults/`` (the untuned scores, a store of its own).

    Parameters
    ----------
    out : Path
        A results folder.

    Returns
    -------
    dict
        The number of runs moved into each store from files, by the store's folder.
    """
    moved = {}
    folders = [p for p in sorted(out.rglob("runs")) if p.is_dir()]
    folders += [p for p in sorted(out.rglob("optuna_tuning/defaults")) if p.is_dir()]
    for folder in folders:
        if folder.name == "runs":
            store = RunStore(folder.parent.parent, folder.parent.name)
        else:
            store = RunStore(folder.parent, folder.name)
        if any(folder.glob("*.json")):
            moved[str(store.folder)] = store.add_run_files(folder)
    for path in sorted(out.rglob("runs.jsonl.gz")):
        RunStore(path.parent.parent, path.parent.name).compact()
    return moved


# -- statistics --------------------------------------------------------------------------------


def mean_se(
    values: Any, *, axis: int = 0, z: float = 1.0, single: float | None = None
) -> tuple[Any, Any]:
    """Mean and standard error of ``values`` along ``axis``.

    Parameters
    ----------
    values : array_like
        The samples, e.g. one row per run.
    axis : int, default=0
        The axis of the samples.
    z : float, default=1.0
        The error is ``z`` standard errors, ``z sd / sqrt(n)`` (``1.96``: the Wald 95%
        half-width).
    single : float, optional
        The error with a single sample (a float, or an array of that value); ``None`` by
        default.

    Returns
    -------
    mean : float or ndarray
        The mean along ``axis``.
    error : float, ndarray or None
        ``z`` times the sample standard deviation (``ddof=1``) over ``sqrt(n)``.
    """
    v = np.asarray(values, dtype=float)
    n = v.shape[axis]
    mean = v.mean(axis=axis)
    if n > 1:
        return mean, z * v.std(axis=axis, ddof=1) / math.sqrt(n)
    if single is None:
        return mean, None
    return mean, np.full_like(mean, single) if np.ndim(mean) else single


def win_tie_loss(differences, tol: float = 1e-9) -> tuple[int, int, int]:
    """How many paired ``differences`` are above ``tol``, within it, and below ``-tol``.

    Parameters
    ----------
    differences : array_like
        One method minus another, pair by pair.
    tol : float, default=1e-9
        What counts as a tie (equal scores up to rounding).

    Returns
    -------
    tuple of int
        Wins, ties and losses.
    """
    d = np.asarray(differences, dtype=float)
    return int(np.sum(d > tol)), int(np.sum(np.abs(d) <= tol)), int(np.sum(d < -tol))


def standard_error(values) -> float | None:
    """The standard error of ``values`` as a float, ``None`` with fewer than two."""
    if len(values) < 2:
        return None
    return float(mean_se(values)[1])


def format_mean_se(mean: float, se: float | None, spec: str = ".3f") -> str:
    """A ``mean ± SE`` table cell (the mean alone when ``se`` is ``None``).

    Parameters
    ----------
    mean : float
        The mean.
    se : float or None
        Its standard error.
    spec : str, default=".3f"
        The format of the mean; the error uses it without a sign flag.

    Returns
    -------
    str
        E.g. ``"0.953 ± 0.004"``.
    """
    error = "" if se is None else f" ± {se:{spec.replace('+', '')}}"
    return f"{mean:{spec}}{error}"


# -- plots -------------------------------------------------------------------------------------


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the file-only ``Agg`` backend, or ``None`` without matplotlib.

    Returns
    -------
    module or None
        ``matplotlib.pyplot``; ``None`` (with a note on stderr) if matplotlib is not
        installed, in which case the script writes no plot.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from cycler import cycler
    except ImportError:
        print("matplotlib is not installed: no plot (pip install privtune[bench])", file=sys.stderr)
        return None
    # every line of a panel its own colour and marker, so that coinciding lines stay visible
    colors = plt.rcParamsDefault["axes.prop_cycle"].by_key()["color"]
    plt.rcParams["axes.prop_cycle"] = cycler(color=colors[: len(MARKERS)]) + cycler(marker=MARKERS)
    return plt


#: The markers of the lines of a panel, in order (see :func:`pyplot`).
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")

#: Words of an axis label that count things: its ticks are integers (:func:`save_figure`).
_COUNTS = ("trial", "round", "candidate", "iteration", "evaluation", "step", "agent", "party")


def figure(draw: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a plotting function ``draw(plt, *args, **kwargs)``: it is called with
    ``matplotlib.pyplot`` (:func:`pyplot`), or not at all without matplotlib.

    Parameters
    ----------
    draw : callable
        The function; its first argument is ``plt``, which its callers do not pass.

    Returns
    -------
    callable
        ``draw`` without its first argument, returning ``None`` without matplotlib.
    """

    @functools.wraps(draw)
    def drawn(*args: Any, **kwargs: Any) -> Any:
        plt = pyplot()
        return None if plt is None else draw(plt, *args, **kwargs)

    return drawn


def panel_grid(n: int, width: float, height: float, ncols: int = 3) -> tuple[Any, list]:
    """A figure of ``n`` panels in rows of at most ``ncols``, the unused cells hidden.

    Parameters
    ----------
    n : int
        The number of panels (at least 1).
    width, height : float
        The size of one panel, in inches.
    ncols : int, default=3
        Panels per row at most.

    Returns
    -------
    fig : matplotlib.figure.Figure
        The figure (``None`` without matplotlib).
    axes : list of matplotlib.axes.Axes
        The ``n`` panels, row by row.
    """
    plt = pyplot()
    if plt is None:
        return None, []
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def plot_band(
    ax: Any, mean: Any, error: Any, t: Any = None, *, alpha: float = 0.2, **kwargs: Any
) -> Any:
    """Plot a mean curve and, in its colour, the band ``mean ± error`` around it.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    mean, error : array_like of shape (n,)
        The curve and the half-width of its band.
    t : array_like of shape (n,), optional
        The abscissae; ``1, ..., n`` by default.
    alpha : float, default=0.2
        The band's opacity.
    **kwargs
        Passed to ``ax.plot`` (``label``, ``color``, ...).

    Returns
    -------
    matplotlib.lines.Line2D
        The curve.
    """
    mean, error = np.asarray(mean, dtype=float), np.asarray(error, dtype=float)
    t = np.arange(1, mean.size + 1) if t is None else np.asarray(t)
    (line,) = ax.plot(t, mean, **kwargs)
    ax.fill_between(t, mean - error, mean + error, alpha=alpha, color=line.get_color())
    return line


def save_figure(fig: Any, path: Path, *, title: str, dpi: int = 110) -> None:
    """Title ``fig``, lay it out, save it to ``path`` and close it.

    An axis whose label counts things (trials, rounds, candidates, ...) gets integer ticks; a
    curve of many points gets a marker every tenth of its length (the markers tell coinciding
    curves apart, see :func:`pyplot`).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    path : Path
        The image file.
    title : str
        What the figure shows, in a sentence (every figure has one).
    dpi : int, default=110
        Its resolution.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    for ax in fig.axes:
        for line in ax.get_lines():  # a long curve: a marker every tenth of it, not per point
            n = len(line.get_xdata())
            if n > 25 and line.get_linestyle() not in ("None", "") and line.get_marker():
                line.set_markevery(max(n // 10, 1))
        label = ax.get_xlabel().lower()
        counts = label == "t" or label.startswith("t ") or any(w in label for w in _COUNTS)
        if counts and ax.get_xscale() == "linear":  # a log axis keeps its own ticks
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


# -- optimizers --------------------------------------------------------------------------------


class AskTell(Protocol):
    """What :func:`drive` needs of an optimizer (privtune's optimizers have it)."""

    def ask(self, candidates: Any = None, **kwargs: Any) -> np.ndarray:
        """Propose a point (a row of ``candidates`` if given)."""
        ...

    def tell(self, x: Any, y: Any) -> None:
        """Learn the reward ``y`` observed at ``x``."""
        ...


def drive(
    optimizer: AskTell,
    rounds: int,
    evaluate: Callable[[np.ndarray], float],
    *,
    candidates: np.ndarray | Callable[[], np.ndarray] | None = None,
    warm_start: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Run ``optimizer`` on ``evaluate`` for ``rounds`` rounds of ask, evaluate and tell.

    Parameters
    ----------
    optimizer : AskTell
        The optimizer (anything with ``ask(candidates=...)`` and ``tell(x, y)``).
    rounds : int
        The number of rounds.
    evaluate : callable
        The reward told for a point; called once per round, in order.
    candidates : ndarray or callable, optional
        The decision set of every round: an array of shape ``(n, dim)``, or a function called
        once per round (before the ask) that returns that round's set. By default the
        optimizer searches its whole domain.
    warm_start : ndarray of shape (n, dim), optional
        Points told first, one per round, in place of the optimizer's proposals. The optimizer
        is still asked for a uniform point in each of these rounds (``ask(uniform=True)``),
        which it then forgets (``clear_pending``), so its own stream of random draws advances
        as if it had proposed them.

    Returns
    -------
    list of ndarray
        The point of every round, in order.
    """
    points = []
    n_start = 0 if warm_start is None else len(warm_start)
    for t in range(rounds):
        C = candidates() if callable(candidates) else candidates
        if t < n_start:
            x = warm_start[t]
            optimizer.ask(C, uniform=True)
            optimizer.clear_pending()
        else:
            x = optimizer.ask() if C is None else optimizer.ask(candidates=C)
        optimizer.tell(x, evaluate(x))
        points.append(np.array(x))
    return points


@functools.cache
def sampler_available(name: str) -> bool:
    """Whether the comparison sampler ``name`` can run here.

    Optuna's ``GPSampler`` (``"gp"``) needs torch; HEBO (``"hebo"``) is installed apart
    (:mod:`benchmarks.hebo_sampler`); any other name can. Says why not on stderr, once per
    name.

    Parameters
    ----------
    name : str
        The sampler's name in the benchmarks (``"gp"``, ``"hebo"``, ``"tpe"``, ...).

    Returns
    -------
    bool
        ``True`` if the sampler can be built here.
    """
    if name == "gp":
        try:
            import torch  # noqa: F401
        except ImportError:
            print("torch is not installed: GPSampler is skipped", file=sys.stderr)
            return False
        return True
    if name == "hebo":
        from benchmarks.hebo_sampler import hebo_available

        return hebo_available()
    return True


def _command(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.harness compact [OUT]``: :func:`compact_results` on ``OUT``
    (default ``benchmarks/results``)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.harness", description="The benchmarks' saved runs."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    compact = sub.add_parser(
        "compact",
        help="compact every store of a results folder, moving folders of run files into them",
    )
    compact.add_argument(
        "out", nargs="?", type=Path, default=RESULTS, help="default: benchmarks/results"
    )
    args = parser.parse_args(argv)
    for folder, n in compact_results(args.out).items():
        print(f"{folder}: {n} run files moved into runs.jsonl.gz")


if __name__ == "__main__":
    _command()
