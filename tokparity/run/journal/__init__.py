"""The journal: a run's results written as they are computed, so an interrupted run loses nothing.

``compare`` and ``fuzz`` append one line per finished case to ``cases.jsonl`` in the report
folder and flush it, so a run killed by SIGINT, SIGKILL or a power cut of the CI runner leaves
every case it finished readable (one JSON object per line), and ``--resume DIR`` continues
where it stopped::

    {"journal": 2, "command": "compare", "tokparity": "0.1.0", "args": {...}, "corpora": {...}}
    {"model": "llama-spm", "n": 0, "case_id": "edge-0001", "corpus": "edge", "oracle": "golden",
     "tally": ["kind=space", "corpus=edge"], "verdicts": {"ref": "agree", "greedy": ["space-prefix", ""]},
     "mismatches": [{…each mismatch's Judgement, with the known divergence it matched as judged…}]}

The first line says what was asked (the command's arguments, so a resume needs none) and
fingerprints the corpus files (a resume on a changed corpus would mix two runs). Every other line
is a ``CaseRecord`` (tokparity.records): the verdict of each compared backend on one case and
the Judgement of each mismatch, as the judge made them (a case run for several ``--ops`` has a
line per op, with an ``"op"`` key unless it is ``encode``); what is diagnosed and decided of them
later is not journaled, but made again. A mismatch's backend ids and pieces are left out where
they equal the oracle's (always so for a decoding op): a reader takes the oracle's. Format 1, which
wrote them all, is read too. A resume adds lines of format 2 to it, which an older tokparity
cannot read. A resumed run replays these records through the very code that applied them the
first time (``Tally.apply``), runs only the cases not in the journal, then diagnoses and decides
as an uninterrupted run does: its reports are those of one.

A line is written whole or not at all as far as a reader cares: a last line cut by a kill (no
newline, or not JSON) is dropped on resume and its case is run again.

A journal is input like any other file a user may be handed, so a resume trusts none of it:

- every line is checked (types, ranges) before it is counted; a damaged one is one error naming
  ``DIR/cases.jsonl:LINE``, and a case written twice (a line duplicated by hand) is counted once;
- records are keyed by the model's position on the command line (``"slot"``), not by its name:
  two folders that both hold a ``tokenizer.json`` are two models, each with its own records;
- the header is signed, and every other line sealed, with a secret of this user's
  (``$TOKPARITY_CACHE/journal-key``, made 0600 on first use): a journal this user's tokparity did
  not write, or a line edited by hand, is resumed only with ``--trust-journal`` (the refusal shows
  the commands the header would run). A line's ``seal`` is its last key. The header's ``run`` is
  random, so a line sealed for another run, even one of the same arguments, does not check.

This module is the file (``Journal``: create, reopen, lock, write, read back); beside it,
``format`` (a line's JSON and its checks), ``signing`` (the header's signature, the lines' seals), ``resume`` (the
stored arguments, the corpora's fingerprints, the positions done) and ``interrupt`` (Ctrl-C held
while a batch is counted and journaled).
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO

from tokparity import __version__
from tokparity.errors import BadJournal, Damaged
from tokparity.records import CaseRecord
from tokparity.run.journal.format import (
    BIGGEST,
    check_record,
    is_count,
    is_name,
    is_seconds,
    is_text,
    read_record,
    record_line,
    shown,
)
from tokparity.run.journal.resume import DoneSet, corpus_fingerprints, model_fingerprints
from tokparity.run.journal.signing import (
    check_signature,
    commands_in,
    engines_in,
    journal_key,
    seal_holds,
    sealed,
    signature,
    unsealed,
)
from tokparity.textview import shown_path
from tokparity.whole_files import open_unfollowed

JOURNAL_FILE = "cases.jsonl"


FORMAT = 2  # (2: a backend's ids and pieces left out where they are the oracle's)
READ_FORMATS = (1, 2)
JOURNAL_START = b'{"journal": '  # (how json.dumps writes a header: the first bytes of every journal)
MAX_HEADER = 64 << 20  # a header's bytes at most (its arguments and fingerprints take kilobytes)


def _identity(folder: Path) -> tuple[int, int] | None:
    """The folder's device and inode (None where it is not there)."""
    try:
        found = os.stat(folder)
    except OSError:
        return None
    return found.st_dev, found.st_ino



def _refuse_foreign(path: Path) -> None:
    """A file of the journal's name that is no tokparity journal (a user's own ``cases.jsonl``) is
    not replaced: one line, exit 2. An empty file is no one's."""
    try:  # (not through a link, nor from a FIFO or a device: opening it for writing then says what it is)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # (none there)
        return
    try:
        head = os.read(fd, len(JOURNAL_START)) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    except OSError:
        head = b""
    finally:
        os.close(fd)
    if head and head != JOURNAL_START:
        raise BadJournal(f"{shown_path(path)}: is not a tokparity journal; the run would replace it: give -o a "
                         "folder of its own")

class Journal:
    """``DIR/cases.jsonl``, appended to and flushed after every case."""

    def __init__(self, path: Path, header: dict, fh: IO[str], with_mismatches: bool = True,
                 key: bytes | None = None):
        self.path = path
        self.header = header
        self._fh = fh
        self._key = key  # seals each line written (None: the journal is not signed, see create)
        self.with_mismatches = with_mismatches  # fuzz keeps only counts: its findings are elsewhere
        self.written = 0
        self.resumed = False  # reopened: the run it records goes on
        self.duplicates: set[int] = set()  # lines of cases written twice (by hand): counted once
        self._folder = _identity(path.parent)  # (the folder the run writes into, as it was when opened)

    # opening ------------------------------------------------------------------------------

    @property
    def resume_flags(self) -> str:
        """What ``--resume DIR`` needs beside it: ``--trust-journal`` for a journal this run could not sign."""
        return "" if self._key is not None or self.header.get("signature") else " --trust-journal"

    @classmethod
    def create(cls, out_dir: str | os.PathLike, command: str, args: dict, corpora: list[str] | None = None,
               with_mismatches: bool = True, models: list[str] | None = None) -> Journal:
        """A fresh journal (an earlier one in ``out_dir`` is replaced); ``models``: the model
        arguments, whose local files it fingerprints."""
        path = Path(out_dir) / JOURNAL_FILE
        args = json.loads(json.dumps(args))  # as a resume will read them (and the signature covers them)
        header = {"journal": FORMAT, "command": command, "tokparity": __version__, "args": args,
                  "corpora": corpus_fingerprints(corpora or []), "models": model_fingerprints(models or []),
                  "run": secrets.token_hex(16),  # (two runs of the same arguments: each its own signature, own seals)
                  "cwd": os.getcwd()}  # (where its cmd:/py: engines' relative paths point: a resume runs them there)
        key = _signing_key(args)
        if key is not None:
            header["signature"] = signature(key, header)
        _make_folder(Path(out_dir))
        _refuse_foreign(path)
        try:
            fh = open_unfollowed(path, "a", encoding="utf-8")
        except OSError as e:
            raise _unwritable(path, e) from None
        _lock(fh, path)  # before emptying it: a run still writing there keeps its journal
        try:
            if path.is_file():
                fh.truncate(0)
            fh.write(json.dumps(header) + "\n")  # ASCII: a file name that is not UTF-8 round-trips as \udcXX
            fh.flush()
        except OSError as e:
            _close_quietly(fh)
            raise _unwritable(path, e) from None
        return cls(path, header, fh, with_mismatches, key)

    @classmethod
    def reopen(cls, out_dir: str | os.PathLike, command: str, with_mismatches: bool = True,
               arg_checks: dict[str, str] | None = None, trust: bool = False) -> Journal:
        """The journal of an interrupted run, ready to append to (a cut last line removed).
        ``arg_checks``: what each stored argument must be (``ARG_CHECKS``); ``trust``: run the
        commands it names even if this user's tokparity did not write it (``--trust-journal``)."""
        path = Path(out_dir) / JOURNAL_FILE
        if not path.is_file():
            raise BadJournal(f"{path}: no journal to resume from; --resume takes the -o folder of an earlier "
                             f"'tokparity {command}' run")
        header = read_header(path, command, arg_checks)
        key = None if trust else check_signature(path, header)  # (a trusted journal's new lines: not sealed)
        if engines_in(header["args"]) and "cwd" not in header and not trust:
            raise BadJournal(f"{shown_path(path)}: made before journals held the folder a run began in, so its "
                             "cmd:/py: engines would start in this one; resume it from the folder the run began "
                             "in, with --trust-journal")
        try:
            fh = open_unfollowed(path, "r+", encoding="utf-8")
        except OSError as e:
            raise _unwritable(path, e) from None
        _lock(fh, path)
        try:
            good = _good_length(path)  # again, now that no one else writes it
            fh.truncate(good)
            fh.seek(good)
        except OSError as e:
            _close_quietly(fh)
            raise _unwritable(path, e) from None
        journal = cls(path, header, fh, with_mismatches, key)
        journal.resumed = True
        try:
            journal.check_lines()
            if key is not None:
                journal.check_seals(key)
            journal.check_corpora()
            journal.check_models()
        except BadJournal:
            journal.close()
            raise
        return journal

    def check_lines(self) -> None:
        """Every line read once before anything runs: a damaged one is an error now, naming its line,
        not after the first models have run again."""
        for lineno, d in self._entries():
            try:
                if "n" in d:
                    check_record(d)
            except Damaged as e:
                raise self.damaged(lineno, str(e)) from None

    def check_seals(self, key: bytes) -> None:
        """Every line sealed with this user's key: an edited record would claim a verdict no engine gave."""
        for lineno, raw in _raw_lines(self.path):
            if lineno > 1 and not seal_holds(key, self.header["signature"], raw):
                raise unsealed(self.path, lineno)

    def check_corpora(self) -> None:
        stored = self.header.get("corpora", {})
        now = corpus_fingerprints(list(stored))
        for name, digest in stored.items():
            if name not in now:
                raise BadJournal(f"{self.path}: corpus {name} is missing (not a file any more); put it back, or "
                                 "start a new run (without --resume)")
            if now[name] != digest:
                raise BadJournal(f"{self.path}: corpus {name} changed since the run started; a resume would mix two "
                                 "corpora: start a new run (without --resume)")

    def check_models(self) -> None:
        stored = self.header.get("models", {})
        if not isinstance(stored, dict) or not all(isinstance(files, dict) for files in stored.values()):
            raise self.damaged(1, "its models' fingerprints are not a mapping of files")
        now = model_fingerprints(list(stored))
        for spec, files in stored.items():
            current = now.get(spec, {})
            changed = sorted(f for f in set(files) | set(current) if files.get(f) != current.get(f))
            if changed:
                raise BadJournal(f"{self.path}: the model {shown_path(spec)} changed since the run started "
                                 f"({shown_path(changed[0])}{' and more' if len(changed) > 1 else ''}); a resume would "
                                 "judge some cases by the old files and some by the new: start a new run (without "
                                 "--resume)")

    # writing -------------------------------------------------------------------------------

    def write(self, record: CaseRecord, slot: int | None = None) -> None:
        self.write_many([record], slot)

    def write_many(self, records: list[CaseRecord], slot: int | None = None) -> None:
        """One write and one flush for a batch of records (each on its own line); ``slot``: the
        model's position on the command line, which keys its records (two models may share a name)."""
        if records:
            text = "".join(self._sealed(record_line(r, self.with_mismatches, slot)) + "\n" for r in records)
            self._write(text)
            self.written += len(records)

    def note(self, entry: dict) -> None:
        """A line that is not a case (fuzz: a finding, the time used), flushed at once."""
        self._write(self._sealed(json.dumps({"note": entry}, ensure_ascii=False)) + "\n")

    def _sealed(self, line: str) -> str:
        return line if self._key is None else sealed(self._key, self.header["signature"], line)

    def _write(self, text: str) -> None:
        try:
            self._fh.write(text)
            self._fh.flush()  # to the kernel: a SIGKILL of this process loses nothing written
        except OSError as e:
            raise BadJournal(f"{self.path}: cannot write the journal ({e.strerror or e}; is the disk full?); the cases "
                             f"judged before are in it: free space, then resume with "
                             f"'tokparity {self.header.get('command')} --resume {self.path.parent}'") from None

    def gone(self) -> str:
        """Why the journal is no longer at its path (its folder deleted, the file removed or replaced
        while the run wrote it), or "" while it is: the cases it holds could not be resumed."""
        try:
            if self._fh.closed or os.stat(self.path).st_ino == os.fstat(self._fh.fileno()).st_ino:
                return ""
            return f"{self.path} was replaced during the run"
        except OSError:
            return f"{self.path} was deleted during the run (its folder, or the file)"

    def folder_replaced(self) -> bool:
        """Whether the journal's folder is now another one (a link planted where it was): the
        reports must not go there."""
        return _identity(self.path.parent) != self._folder

    def close(self) -> None:
        if not self._fh.closed:
            _close_quietly(self._fh)  # after a failed write (reported already) its flush fails again

    # reading -------------------------------------------------------------------------------

    def records(self, model: str | None = None, slot: int | None = None) -> Iterator[CaseRecord]:
        """The case records (of the model at position ``slot`` named ``model``), streamed from the
        file, each case once: a later line for a case already read (a line duplicated by hand) is
        skipped, and its line noted in ``duplicates``."""
        seen: dict[object, DoneSet] = {}
        for lineno, d in self._entries():
            if "n" not in d:
                continue
            if model is not None and not self._mine(d, model, slot):
                continue
            try:  # (check_lines read them all when the journal was reopened; a file may change since)
                record = replace(read_record(d), line=lineno)
            except Damaged as e:
                raise self.damaged(lineno, str(e)) from None
            done = seen.setdefault((d.get("slot"), record.op), DoneSet())  # (a case has a record per op)
            if record.n in done:
                self.duplicates.add(lineno)
                continue
            done.add(record.n)
            yield record

    @staticmethod
    def _mine(d: dict, model: str, slot: int | None) -> bool:
        if "slot" in d and slot is not None:
            return d["slot"] == slot
        return d.get("model") == model  # a journal from before slots: its records name their model

    def notes(self) -> Iterator[tuple[int, dict]]:
        """``(line, note)`` of each note (a note that is not an object is a damaged line)."""
        for lineno, d in self._entries():
            if "note" in d:
                if not isinstance(d["note"], dict):
                    raise self.damaged(lineno, f"a note that is {shown(d['note'])}, not an object")
                yield lineno, d["note"]

    def damaged(self, lineno: int, problem: str) -> BadJournal:
        return BadJournal(f"{self.path}:{lineno}: {problem}; the file was edited or damaged: delete that line, or "
                          "start a new run without --resume")

    def _entries(self) -> Iterator[tuple[int, dict]]:
        """``(line, object)`` for every line after the header: each a case record or a note."""
        for lineno, d in _lines(self.path):
            if lineno == 1:
                continue
            if not isinstance(d, dict) or ("n" not in d and "note" not in d):
                raise self.damaged(lineno, f"{shown(d)} is neither a case record nor a note")
            yield lineno, d


def _close_quietly(fh: IO[str]) -> None:
    """Close after a failed write: the flush of what is still buffered fails the same way."""
    try:
        fh.close()
    except OSError:
        pass


def _make_folder(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise BadJournal(f"-o {out}: a file, not a folder; give a folder for the reports (it is made if missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BadJournal(f"-o {out}: cannot make the report folder ({e.strerror or e}); choose another -o folder") \
            from None


def _unwritable(path: Path, e: OSError) -> BadJournal:
    if path.is_dir():
        return BadJournal(f"{path}: a folder, not a journal file; remove it or choose another -o folder")
    return BadJournal(f"{path}: cannot write the journal ({e.strerror or e}); choose another -o folder (one you can "
                      "write, on a disk with space)")


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


def read_header(path: Path, command: str, arg_checks: dict[str, str] | None = None) -> dict:
    """The first line, checked: a tokparity journal of ``command`` whose arguments are of the
    kinds ``arg_checks`` says (keys not there are not taken)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(MAX_HEADER + 1)  # (bounded: a file of gigabytes with no newline is no journal)
    except OSError as e:
        raise BadJournal(f"{path}: cannot read the journal ({e.strerror or e})") from None
    if len(first) > MAX_HEADER:
        raise BadJournal(f"{path}:1: a first line of more than {MAX_HEADER >> 20} MiB is not a tokparity journal's "
                         "header; start a new run without --resume")
    try:
        header = json.loads(first)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, a number too long, nesting too deep
        header = None
    if not isinstance(header, dict) or type(header.get("journal")) is not int or header["journal"] not in READ_FORMATS:
        raise BadJournal(f"{path}:1: not a tokparity journal (format {' or '.join(map(str, READ_FORMATS))}); start a "
                         "new run without --resume")
    if header.get("command") != command:
        other = header.get("command")
        if not isinstance(other, str) or other not in ("compare", "fuzz"):
            raise BadJournal(f"{path}:1: the header names no tokparity command; start a new run without --resume")
        raise BadJournal(f"{path}: the journal of a '{other}' run, not '{command}'; resume it with "
                         f"'tokparity {other} --resume {path.parent}'")
    problem = _header_problem(header, arg_checks or {})
    if problem:
        raise BadJournal(f"{path}:1: {problem}; the header was edited or damaged: start a new run without --resume")
    return header


def _header_problem(header: dict, arg_checks: dict[str, str]) -> str:
    args, corpora = header.get("args"), header.get("corpora", {})
    if not isinstance(args, dict):
        return f"'args' is {shown(args)}, not an object of the run's arguments"
    if not isinstance(corpora, dict) or not all(is_name(k) and is_text(v) for k, v in corpora.items()):
        return f"'corpora' is {shown(corpora)}, not an object of corpus fingerprints"
    if "cwd" in header and not (is_text(header["cwd"]) and os.path.isabs(header["cwd"])):
        return f"'cwd' is {shown(header['cwd'])}, not the folder the run began in"
    if "signature" in header and not isinstance(header["signature"], str):
        return f"'signature' is {shown(header['signature'])}, not a string"
    for key, kind in arg_checks.items():
        if key in args and not ARG_KINDS[kind][0](args[key]):
            return f"argument {key!r} is {shown(args[key])}, not {ARG_KINDS[kind][1]}"
    return ""


# What a stored argument may be: kind -> (check, words for a message).
ARG_KINDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "bool": (lambda x: type(x) is bool, "true or false"),
    "str?": (lambda x: x is None or is_name(x), "a string or null"),
    "strs": (lambda x: isinstance(x, list) and all(map(is_name, x)), "a list of strings"),
    "strs?": (lambda x: x is None or (isinstance(x, list) and all(map(is_name, x))), "a list of strings or null"),
    "int?": (lambda x: x is None or (type(x) is int and -BIGGEST <= x < BIGGEST), "an integer or null"),
    "count?": (lambda x: x is None or is_count(x), "an integer from 0, or null"),
    "fraction?": (lambda x: x is None or (isinstance(x, (int, float)) and type(x) is not bool and 0 < x <= 1),
                  "a number above 0 and at most 1, or null"),
    "seconds?": (lambda x: x is None or (is_seconds(x, 0) and x != 0), "a number of seconds above 0, or null"),
    "seconds0?": (lambda x: x is None or is_seconds(x, 0), "a number of seconds from 0, or null"),
}


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


def _signing_key(args: dict) -> bytes | None:
    """The key that signs a new journal. A run whose journal names commands needs one; another run
    goes on without it (a cache folder it cannot write), and its resume needs ``--trust-journal``."""
    try:
        return journal_key(create=True)
    except BadJournal:
        if commands_in(args):
            raise
        return None


def _raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes without the newline)`` of each complete line."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                return  # a line cut by a kill: its case runs again
            yield lineno, raw[:-1]


def _lines(path: Path) -> Iterator[tuple[int, object]]:
    for lineno, raw in _raw_lines(path):
        try:
            d = json.loads(raw)
        except (ValueError, RecursionError) as e:  # not JSON or UTF-8, an integer too long, nesting too deep
            raise BadJournal(f"{path}:{lineno}: not a journal line ({type(e).__name__}: {str(e)[:80]}); the file "
                             "was edited or damaged: delete that line, or start a new run without --resume") \
                from None
        yield lineno, d
