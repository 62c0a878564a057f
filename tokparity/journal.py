"""The journal: a run's results written as they are computed, so an interrupted run loses nothing.

``compare`` and ``fuzz`` append one line per finished case to ``cases.jsonl`` in the report
folder and flush it, so a run killed by SIGINT, SIGKILL or a power cut of the CI runner leaves
every case it finished readable (one JSON object per line), and ``--resume DIR`` continues
where it stopped::

    {"journal": 1, "command": "compare", "tokparity": "0.1.0", "args": {...}, "corpora": {...}}
    {"model": "llama-spm", "n": 0, "case_id": "edge-0001", "corpus": "edge", "oracle": "golden",
     "tally": ["kind=space", "corpus=edge"], "verdicts": {"ref": "agree", "greedy": ["space-prefix", ""]},
     "mismatches": [{…the full Mismatch record…}]}

The first line says what was asked (the command's arguments, so a resume needs none) and
fingerprints the corpus files (a resume on a changed corpus would mix two runs). Every other line
is a ``CaseRecord``: the verdict of each compared backend on one case, which is everything the
summaries, the tag rates and the reports are made from. A resumed run replays these records
through the very code that applied them the first time (``ModelRun.apply``), then runs only the
cases not in the journal; its reports are those of an uninterrupted run.

A line is written whole or not at all as far as a reader cares: a last line cut by a kill (no
newline, or not JSON) is dropped on resume and its case is run again.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO

from tokparity import __version__
from tokparity.errors import TokparityError
from tokparity.results import Mismatch, json_text

JOURNAL_FILE = "cases.jsonl"
FORMAT = 1
AGREE, SKIPPED, TOO_LONG = "agree", "skipped", "too-long"


class BadJournal(TokparityError):
    pass


_MISMATCH_FIELDS = [f.name for f in fields(Mismatch)]  # a flat copy: asdict's deep copy costs more than JSON


@dataclass
class CaseRecord:
    """One case of one model, judged: what ``ModelRun.apply`` needs to count it, and no more.

    ``verdicts`` maps each compared backend to ``"agree"``, ``"skipped"`` (it has no answer for
    this text, like golden ids) or ``[class, known-id]`` for a mismatch. ``too_long`` is the
    text's length when the case was not run for ``--max-chars``."""

    model: str
    n: int  # the case's position in the model's stream of cases (corpora in order)
    case_id: str
    corpus: str
    oracle: str = ""
    tally: list[str] = field(default_factory=list)  # the tag keys of the report's rate table
    verdicts: dict[str, object] = field(default_factory=dict)
    mismatches: list[Mismatch] = field(default_factory=list)
    too_long: int = 0
    unread: bool = False  # too_long counts the bytes of a corpus line not read (too long for any text under the cap)
    seconds: dict[str, float] = field(default_factory=dict)  # each backend's own time (not journaled)

    def to_json(self, with_mismatches: bool = True) -> dict:
        d = {"model": self.model, "n": self.n, "case_id": self.case_id, "corpus": self.corpus}
        if self.too_long:
            d["too_long"] = self.too_long
            if self.unread:
                d["unread"] = True
            return d
        d.update(oracle=self.oracle, tally=self.tally, verdicts=self.verdicts)
        if with_mismatches and self.mismatches:
            d["mismatches"] = [{name: getattr(m, name) for name in _MISMATCH_FIELDS} for m in self.mismatches]
        return d

    @classmethod
    def from_json(cls, d: dict) -> CaseRecord:
        return cls(model=d["model"], n=int(d["n"]), case_id=d["case_id"], corpus=d["corpus"],
                   oracle=d.get("oracle", ""), tally=list(d.get("tally", [])), verdicts=dict(d.get("verdicts", {})),
                   mismatches=[Mismatch(**m) for m in d.get("mismatches", [])], too_long=int(d.get("too_long", 0)),
                   unread=bool(d.get("unread", False)))


def corpus_fingerprints(corpora: list[str]) -> dict[str, str]:
    """sha256 of each corpus that is a file (named corpora included): a resume checks them."""
    from tokparity.corpus import COMMITTED, corpora_dir, open_corpus

    prints = {}
    for spec in corpora:
        names = COMMITTED if spec == "all" else (spec,)
        for name in names:
            path = corpora_dir() / f"{name}.jsonl" if name in COMMITTED else Path(name)
            if path.is_file():
                h = hashlib.sha256()
                with open_corpus(path) as f:  # (an unreadable corpus: one line, not a traceback)
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                prints[name] = h.hexdigest()
    return prints


class Journal:
    """``DIR/cases.jsonl``, appended to and flushed after every case."""

    def __init__(self, path: Path, header: dict, fh: IO[str], with_mismatches: bool = True):
        self.path = path
        self.header = header
        self._fh = fh
        self.with_mismatches = with_mismatches  # fuzz keeps only counts: its findings are elsewhere
        self.written = 0
        self.resumed = False  # reopened: the run it records goes on

    # opening ------------------------------------------------------------------------------

    @classmethod
    def create(cls, out_dir: str | os.PathLike, command: str, args: dict, corpora: list[str] | None = None,
               with_mismatches: bool = True) -> Journal:
        """A fresh journal (an earlier one in ``out_dir`` is replaced)."""
        path = Path(out_dir) / JOURNAL_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {"journal": FORMAT, "command": command, "tokparity": __version__, "args": args,
                  "corpora": corpus_fingerprints(corpora or [])}
        fh = open(path, "a", encoding="utf-8")
        _lock(fh, path)  # before emptying it: a run still writing there keeps its journal
        fh.truncate(0)
        fh.write(json.dumps(header) + "\n")  # ASCII: a file name that is not UTF-8 round-trips as \udcXX
        fh.flush()
        return cls(path, header, fh, with_mismatches)

    @classmethod
    def reopen(cls, out_dir: str | os.PathLike, command: str, with_mismatches: bool = True) -> Journal:
        """The journal of an interrupted run, ready to append to (a cut last line removed)."""
        path = Path(out_dir) / JOURNAL_FILE
        if not path.is_file():
            raise BadJournal(f"{path}: no journal to resume from; --resume takes the -o folder of an earlier "
                             f"'tokparity {command}' run")
        header = read_header(path, command)
        fh = open(path, "r+", encoding="utf-8")
        _lock(fh, path)
        good = _good_length(path)  # again, now that no one else writes it
        fh.truncate(good)
        fh.seek(good)
        journal = cls(path, header, fh, with_mismatches)
        journal.resumed = True
        try:
            journal.check_corpora()
        except BadJournal:
            journal.close()
            raise
        return journal

    def check_corpora(self) -> None:
        stored = self.header.get("corpora", {})
        now = corpus_fingerprints(list(stored))
        for name, digest in stored.items():
            if now.get(name) != digest:
                raise BadJournal(f"{self.path}: corpus {name} changed since the run started; a resume would mix two "
                                 "corpora: start a new run (without --resume)")

    # writing -------------------------------------------------------------------------------

    def write(self, record: CaseRecord) -> None:
        self.write_many([record])

    def write_many(self, records: list[CaseRecord]) -> None:
        """One write and one flush for a batch of records (each on its own line)."""
        if records:
            self._fh.write("".join(json_text(r.to_json(self.with_mismatches)) + "\n"
                                   for r in records))
            self._fh.flush()  # to the kernel: a SIGKILL of this process loses nothing written
            self.written += len(records)

    def note(self, entry: dict) -> None:
        """A line that is not a case (fuzz: a finding, the time used), flushed at once."""
        self._fh.write(json.dumps({"note": entry}, ensure_ascii=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    # reading -------------------------------------------------------------------------------

    def records(self, model: str | None = None) -> Iterator[CaseRecord]:
        """The case records (of ``model``), streamed from the file."""
        for d in _lines(self.path):
            if "n" in d and (model is None or d.get("model") == model):
                yield CaseRecord.from_json(d)

    def notes(self) -> Iterator[dict]:
        for d in _lines(self.path):
            if "note" in d:
                yield d["note"]


def _lock(fh: IO[str], path: Path) -> None:
    """One run per folder: a second one (a resume while the first still runs) is refused."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; a second run there is the user's business
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise BadJournal(f"{path}: another tokparity run is writing this folder; wait for it to end (or stop it) "
                         "before resuming, or choose another -o folder") from None


def read_header(path: Path, command: str) -> dict:
    with open(path, "rb") as f:
        first = f.readline()
    try:
        header = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError):
        header = None
    if not isinstance(header, dict) or header.get("journal") != FORMAT:
        raise BadJournal(f"{path}:1: not a tokparity journal (format {FORMAT}); start a new run without --resume")
    if header.get("command") != command:
        raise BadJournal(f"{path}: the journal of a '{header.get('command')}' run, not '{command}'; resume it with "
                         f"'tokparity {header.get('command')} --resume {path.parent}'")
    return header


def _good_length(path: Path) -> int:
    """Bytes up to the end of the last complete line (a kill can cut the last one short)."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        if size == 0:
            return 0
        # Walk back from the end to the last newline; what follows it is a cut line.
        pos, tail = size, b""
        while pos > 0:
            step = min(1 << 16, pos)
            f.seek(pos - step)
            tail = f.read(step)
            k = tail.rfind(b"\n")
            if k >= 0:
                return pos - step + k + 1
            pos -= step
    return 0


def _lines(path: Path) -> Iterator[dict]:
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                return  # a line cut by a kill: its case runs again
            try:
                d = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise BadJournal(f"{path}:{lineno}: not a journal line ({e}); the file was edited or damaged: "
                                 "start a new run without --resume") from None
            if isinstance(d, dict):
                yield d


class _Holding:
    """Ctrl-C inside the block takes effect at its end: a case is counted in the reports and
    written to the journal, or neither (the reports of an interrupted run match its journal).
    Within ``deferring_ctrl_c()`` (a whole run) entering and leaving is two attribute writes;
    elsewhere the SIGINT handler is swapped for the block."""

    def __init__(self) -> None:
        self.installed = False  # deferring_ctrl_c's handler is in place
        self.holding = False
        self.pending = False
        self._swapped = False

    def __enter__(self) -> None:
        if self.installed:
            self.holding = True
        elif (threading.current_thread() is threading.main_thread()
              and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self._swapped, self.pending = True, False
            signal.signal(signal.SIGINT, self._defer)

    def __exit__(self, *exc: object) -> None:
        if self.installed:
            self.holding = False
        elif self._swapped:
            self._swapped = False
            signal.signal(signal.SIGINT, signal.default_int_handler)
        else:
            return
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt

    def _defer(self, signum: int, frame: object) -> None:
        if self.installed and not self.holding:
            raise KeyboardInterrupt
        self.pending = True


_HOLDING = _Holding()


def holding_ctrl_c() -> _Holding:
    return _HOLDING


@contextlib.contextmanager
def deferring_ctrl_c() -> Iterator[None]:
    """For a whole run: one SIGINT handler that acts as Python's own except inside
    ``holding_ctrl_c()`` blocks, which then cost nothing to enter (one per case)."""
    if (_HOLDING.installed or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    _HOLDING.installed, _HOLDING.holding, _HOLDING.pending = True, False, False
    signal.signal(signal.SIGINT, _HOLDING._defer)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _HOLDING.installed = False


class DoneSet:
    """Positions of finished cases, small even for millions: everything below ``prefix`` is done,
    plus the few out of order above it."""

    def __init__(self) -> None:
        self.prefix = 0
        self.extra: set[int] = set()

    def add(self, n: int) -> None:
        if n < self.prefix:
            return
        self.extra.add(n)
        while self.prefix in self.extra:
            self.extra.discard(self.prefix)
            self.prefix += 1

    def __contains__(self, n: int) -> bool:
        return n < self.prefix or n in self.extra

    def __len__(self) -> int:
        return self.prefix + len(self.extra)


# -- the command's arguments, stored in the header so that ``--resume DIR`` needs none ----------


def _absolute(spec: object) -> object:
    """A path argument as an absolute path (a resume may start elsewhere); names stay names."""
    if not isinstance(spec, str):
        return spec
    path = Path(spec)
    return str(path.resolve()) if ("/" in spec or path.suffix) and path.exists() else spec


def stored_args(args: object, keys: tuple[str, ...], paths: tuple[str, ...] = ()) -> dict:
    """The arguments ``keys`` of an argparse namespace, those in ``paths`` made absolute."""
    stored = {}
    for key in keys:
        value = getattr(args, key)
        if key in paths:
            value = [_absolute(v) for v in value] if isinstance(value, list) else _absolute(value)
        stored[key] = value
    return stored


def take_args(args: argparse.Namespace, header: dict, folder: str, command: str, paths: tuple[str, ...] = ()) -> None:
    """Give ``args`` the interrupted run's arguments; one the user gives again must be the same."""
    if getattr(args, "out", None) and Path(args.out).resolve() != Path(folder).resolve():
        raise TokparityError(f"--resume {folder} writes its reports there; drop -o {args.out}")
    for key, value in header.get("args", {}).items():
        given = getattr(args, key, None)
        if given not in (None, [], False) and given != value and stored_args(args, (key,), paths)[key] != value:
            raise TokparityError(f"--resume {folder}: the {command} run was started with {key}={value!r}, not "
                                 f"{given!r}; resume without it, or start a new run in another folder")
        setattr(args, key, value)
    args.out = folder
