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
through the very code that applied them the first time (``Tally.apply``), then runs only the
cases not in the journal; its reports are those of an uninterrupted run.

A line is written whole or not at all as far as a reader cares: a last line cut by a kill (no
newline, or not JSON) is dropped on resume and its case is run again.

A journal is input like any other file a user may be handed, so a resume trusts none of it:

- every line is checked (types, ranges) before it is counted; a damaged one is one error naming
  ``DIR/cases.jsonl:LINE``, and a case written twice (a line duplicated by hand) is counted once;
- records are keyed by the model's position on the command line (``"slot"``), not by its name:
  two folders that both hold a ``tokenizer.json`` are two models, each with its own records;
- the header's commands (``cmd:``/``py:`` backends, run on resume) are signed with a secret of
  this user's (``$TOKPARITY_CACHE/journal-key``, made 0600 on first use): a journal this user's
  tokparity did not write runs them only with ``--trust-journal``, after showing them.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import hmac
import json
import math
import os
import secrets
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO

from tokparity import __version__
from tokparity.errors import TokparityError
from tokparity.known import KnownList
from tokparity.records import ROW_FIELDS, CaseRecord, Mismatch, Verdict
from tokparity.results import json_text

JOURNAL_FILE = "cases.jsonl"
FORMAT = 1


class BadJournal(TokparityError):
    pass


class Damaged(ValueError):
    """A journal line that is JSON but not what tokparity wrote: what is wrong, for the caller to
    place (``DIR/cases.jsonl:LINE: …``)."""


BIGGEST = 2**63  # ids, positions and lengths beyond this are not tokparity's

# -- checking what a journal says (it may have been edited, damaged, or written by someone else) --


def _text(x: object) -> bool:
    """A str that can be written back as UTF-8 (a JSON "\\ud800" loads as a lone surrogate)."""
    if not isinstance(x, str):
        return False
    try:
        x.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _name(x: object) -> bool:
    """A str a header may hold: text, or a file name that is not UTF-8 (its bytes as surrogate
    escapes, which the ASCII header keeps as \\udcXX)."""
    if not isinstance(x, str):
        return False
    try:
        os.fsencode(x)
    except UnicodeEncodeError:
        return False
    return True


def _count(x: object) -> bool:
    return type(x) is int and 0 <= x < BIGGEST


def _ids(x: object) -> bool:
    return isinstance(x, list) and all(type(i) is int and -BIGGEST <= i < BIGGEST for i in x)


def _texts(x: object) -> bool:
    return isinstance(x, list) and all(_text(t) for t in x)


def _tags(x: object) -> bool:
    return isinstance(x, dict) and all(_text(k) and (v is None or _text(v) or type(v) in (int, float, bool))
                                       for k, v in x.items())


def _lists_of_texts(x: object) -> bool:
    return isinstance(x, list) and all(_texts(t) for t in x)


# Each field of a journaled mismatch (tokparity.records.ROW_FIELDS) -> what its value must be, and
# what a message calls that; the judgement's fields are required, the decision's may be left out.
ROW_CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "model": (_text, "str"), "corpus": (_text, "str"), "case_id": (_text, "str"), "tags": (_tags, "dict"),
    "oracle": (_text, "str"), "backend": (_text, "str"), "cls": (_text, "str"), "evidence": (_text, "str"),
    "stage": (_text, "str"), "first_diff": (_count, "int"), "text": (_text, "str"), "oracle_ids": (_ids, "list[int]"),
    "backend_ids": (_ids, "list[int]"), "oracle_pieces": (_texts, "list[str]"),
    "backend_pieces": (_texts, "list[str]"), "known": (_text, "str"), "partition": (_lists_of_texts, "list[list[str]]"),
    "cause": (_text, "str"), "cause_evidence": (_text, "str"), "variants": (_texts, "list[str]"),
    "alternatives": (_lists_of_texts, "list[list[str]]"),
}
ROW_OPTIONAL = ("known", "partition", "cause", "cause_evidence", "variants", "alternatives")


def check_mismatch(d: object, where: str = "a mismatch") -> dict:
    """``d`` if it is a mismatch as a journal writes it (every field the right type), else ``Damaged``."""
    if not isinstance(d, dict):
        raise Damaged(f"{where} is not an object")
    unknown = set(d) - set(ROW_FIELDS)
    if unknown:
        raise Damaged(f"{where} has unknown fields {sorted(unknown)[:3]}")
    for name in ROW_FIELDS:
        if name not in d:
            if name not in ROW_OPTIONAL:
                raise Damaged(f"{where} lacks {name!r}")
            continue
        check, kind = ROW_CHECKS[name]
        if not check(d[name]):
            raise Damaged(f"{where}: {name!r} is {_shown(d[name])}, not a {kind}")
    return d


def _verdict(x: object) -> bool:
    return x in ("agree", "skipped") or (isinstance(x, list) and len(x) == 2 and all(_text(v) for v in x))


def _shown(x: object) -> str:
    """A value as a message shows it: short, one line."""
    try:
        text = json.dumps(x, ensure_ascii=True)
    except (TypeError, ValueError):
        text = type(x).__name__
    return text if len(text) <= 40 else text[:37] + "..."


# What each key of a case record must be.
RECORD_CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "model": (_text, "a string"), "n": (_count, "a position (an integer from 0)"), "slot": (_count, "a position"),
    "case_id": (_text, "a string"), "corpus": (_text, "a string"), "oracle": (_text, "a string"),
    "tally": (_texts, "a list of strings"),
    "verdicts": (lambda x: isinstance(x, dict) and all(_text(k) and _verdict(v) for k, v in x.items()),
                 "an object of verdicts (\"agree\", \"skipped\" or [class, known])"),
    "mismatches": (lambda x: isinstance(x, list), "a list"), "too_long": (_count, "a length"),
    "unread": (lambda x: isinstance(x, bool), "true or false"),
    "causes": (lambda x: isinstance(x, dict) and all(_text(k) and _text(v) for k, v in x.items()),
               "an object of causes (backend: cause)"),
}
REQUIRED = ("model", "n", "case_id", "corpus")


def record_json(record: CaseRecord, with_mismatches: bool = True, slot: int | None = None,
                known: KnownList | None = None) -> dict:
    """A journal line's object for ``record``; ``slot``: the model's position on the command line
    (the journal's key); ``with_mismatches``: each mismatch's fields too (fuzz keeps counts only).
    ``known``: the list whose entry each mismatch matches as judged is noted in its verdict and its
    fields (a resume decides again, once diagnosed; fuzz records carry their decisions already)."""
    if known is not None and record.mismatches:
        found = {m.backend: known.find(m) for m in record.mismatches}
        record = replace(record, verdicts={name: Verdict.differs(v.cls, found[name]) if name in found else v
                                           for name, v in record.verdicts.items()},
                         mismatches=tuple(Mismatch(m.judgement, replace(m.decision, known=found[m.backend]))
                                          for m in record.mismatches))
    d = {"model": record.model, "n": record.n, "case_id": record.case_id, "corpus": record.corpus}
    if slot is not None:
        d["slot"] = slot
    if record.too_long:
        d["too_long"] = record.too_long
        if record.unread:
            d["unread"] = True
        return d
    d.update(oracle=record.oracle, tally=record.tally,
             verdicts={name: verdict.to_json() for name, verdict in record.verdicts.items()})
    if record.causes:
        d["causes"] = record.causes
    if with_mismatches and record.mismatches:
        d["mismatches"] = [m.fields() for m in record.mismatches]
    return d


def read_record(d: dict) -> CaseRecord:
    """The record a journal line holds; ``Damaged`` when a key is missing or of the wrong type."""
    check_record(d)
    return CaseRecord(model=d["model"], n=d["n"], case_id=d["case_id"], corpus=d["corpus"],
                      oracle=d.get("oracle", ""), tally=tuple(d.get("tally", ())),
                      verdicts={name: Verdict.from_json(v) for name, v in d.get("verdicts", {}).items()},
                      mismatches=tuple(Mismatch.from_fields(m) for m in d.get("mismatches", ())),
                      too_long=d.get("too_long", 0), unread=bool(d.get("unread", False)),
                      causes=dict(d.get("causes", {})))


def check_record(d: dict) -> None:
    for key in REQUIRED:
        if key not in d:
            raise Damaged(f"a case record without {key!r}")
    for key, (check, what) in RECORD_CHECKS.items():
        if key in d and not check(d[key]):
            raise Damaged(f"{key!r} is {_shown(d[key])}, not {what}")
    for i, m in enumerate(d.get("mismatches", [])):
        check_mismatch(m, f"mismatch {i + 1}")


def corpus_fingerprints(corpora: list[str]) -> dict[str, str]:
    """A fingerprint of each corpus file (named corpora included), keyed by its absolute path
    (a resume may start in another folder): a resume checks them. A JSONL or text file: its
    sha256. A Parquet, Arrow or compressed file, which may be many GB: its size, modification
    time and a digest of its ends (``pipeline.fingerprint``), not a second reading. A folder or a
    glob: also the list of its files, so that a file added or removed is seen."""
    from tokparity.corpus import COMMITTED, corpora_dir
    from tokparity.corpus.pipeline import corpus_files, file_kind, fingerprint, split_options

    prints = {}
    for spec in corpora:
        spec, _ = split_options(spec)
        if spec == "all" or spec in COMMITTED:
            for name in COMMITTED if spec == "all" else (spec,):
                prints[name] = _sha256(corpora_dir() / f"{name}.jsonl")
            continue
        if spec == "llama.cpp-tests" or (not Path(spec).exists() and not glob.has_magic(spec)):
            continue  # (an unknown name: the run says so, naming it)
        files = [path for path, _ in corpus_files(spec)]
        if len(files) != 1 or not Path(spec).is_file():
            listing = "\n".join(f"{path.resolve()} {path.stat().st_size}" for path in files)
            prints[str(Path(spec).absolute())] = "files-sha256=" + hashlib.sha256(listing.encode()).hexdigest()
        for path in files:
            kind = file_kind(path)
            prints[str(path.resolve())] = _sha256(path) if kind == "plain" else fingerprint(path)
    return prints


def _sha256(path: Path) -> str:
    from tokparity.corpus import open_corpus

    h = hashlib.sha256()
    with open_corpus(path) as f:  # (an unreadable corpus: one line, not a traceback)
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# -- who wrote the header: commands a resume would run are signed with this user's secret ---------

KEY_FILE = "journal-key"
SIGNED = ("backends", "oracle")  # the stored arguments that name programs a resume runs


def commands_in(args: dict) -> list[str]:
    """The programs (``cmd:``) and Python code (``py:``) the stored arguments would run: every
    backend or oracle that is not one of tokparity's own; and a Ray cluster a resume would attach
    to (``--ray ADDRESS``): the driver unpickles what that cluster's actors send back, so a cluster
    named by a journal someone else wrote could run code here."""
    from tokparity.backends.registry import BUILTIN

    named: list[str] = []
    for key in SIGNED:
        value = args.get(key)
        for spec in value if isinstance(value, list) else [value]:
            if isinstance(spec, str) and _backend_of(spec) not in BUILTIN and spec not in named:
                named.append(spec)
    ray = args.get("ray")
    if isinstance(ray, str) and ray not in ("", "local"):  # (a Ray started here runs nothing of the file's)
        named.append(f"--ray {ray}")
    return named


def _backend_of(spec: str) -> str:
    """``"fast=hf" -> "hf"``: a named built-in runs nothing of a user's; a name that does not parse
    is taken for a command (and must be signed)."""
    from tokparity.backends.registry import split_label

    try:
        return split_label(spec)[1].strip()
    except TokparityError:
        return spec


def key_path() -> Path:
    from tokparity.zoo.fetch import cache_dir

    return cache_dir() / KEY_FILE


def journal_key(create: bool) -> bytes | None:
    """This user's secret, made (0600, in the cache folder) on first use; None if there is none yet."""
    path = key_path()
    try:
        try:
            key = path.read_bytes().strip()
        except FileNotFoundError:
            if not create:
                return None
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # another run made it just now
                return path.read_bytes().strip()
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
            key = path.read_bytes().strip()
    except OSError as e:
        raise BadJournal(f"{path}: cannot {'create' if create else 'read'} the journal key ({e.strerror or e}); "
                         "set TOKPARITY_CACHE to a folder you can write") from None
    if not key:  # a run killed between making the file and writing it
        raise BadJournal(f"{path}: the journal key is empty; delete the file (a new key is made on the next run, "
                         "and journals signed with the old one need --trust-journal)")
    return key


def signature(key: bytes, command: str, args: dict) -> str:
    """HMAC-SHA256 of the command and its arguments, as the header stores them (canonical JSON)."""
    text = json.dumps({"command": command, "args": args}, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()


class Journal:
    """``DIR/cases.jsonl``, appended to and flushed after every case."""

    def __init__(self, path: Path, header: dict, fh: IO[str], with_mismatches: bool = True):
        self.path = path
        self.header = header
        self._fh = fh
        self.with_mismatches = with_mismatches  # fuzz keeps only counts: its findings are elsewhere
        self.written = 0
        self.resumed = False  # reopened: the run it records goes on
        self.duplicates: set[int] = set()  # lines of cases written twice (by hand): counted once

    # opening ------------------------------------------------------------------------------

    @classmethod
    def create(cls, out_dir: str | os.PathLike, command: str, args: dict, corpora: list[str] | None = None,
               with_mismatches: bool = True) -> Journal:
        """A fresh journal (an earlier one in ``out_dir`` is replaced)."""
        path = Path(out_dir) / JOURNAL_FILE
        args = json.loads(json.dumps(args))  # as a resume will read them (and the signature covers them)
        header = {"journal": FORMAT, "command": command, "tokparity": __version__, "args": args,
                  "corpora": corpus_fingerprints(corpora or [])}
        if commands_in(args):
            header["signature"] = signature(journal_key(create=True) or b"", command, args)
        _make_folder(Path(out_dir))
        try:
            fh = open(path, "a", encoding="utf-8")
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
        return cls(path, header, fh, with_mismatches)

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
        if not trust:
            check_signature(path, header)
        try:
            fh = open(path, "r+", encoding="utf-8")
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
        journal = cls(path, header, fh, with_mismatches)
        journal.resumed = True
        try:
            journal.check_lines()
            journal.check_corpora()
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

    # writing -------------------------------------------------------------------------------

    def write(self, record: CaseRecord, slot: int | None = None) -> None:
        self.write_many([record], slot)

    def write_many(self, records: list[CaseRecord], slot: int | None = None, known: KnownList | None = None) -> None:
        """One write and one flush for a batch of records (each on its own line); ``slot``: the
        model's position on the command line, which keys its records (two models may share a name);
        ``known``: see ``record_json``."""
        if records:
            text = "".join(json_text(record_json(r, self.with_mismatches, slot, known)) + "\n" for r in records)
            self._write(text)
            self.written += len(records)

    def note(self, entry: dict) -> None:
        """A line that is not a case (fuzz: a finding, the time used), flushed at once."""
        self._write(json.dumps({"note": entry}, ensure_ascii=False) + "\n")

    def _write(self, text: str) -> None:
        try:
            self._fh.write(text)
            self._fh.flush()  # to the kernel: a SIGKILL of this process loses nothing written
        except OSError as e:
            raise BadJournal(f"{self.path}: cannot write the journal ({e.strerror or e}; is the disk full?); the cases "
                             f"judged before are in it: free space, then resume with "
                             f"'tokparity {self.header.get('command')} --resume {self.path.parent}'") from None

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
            done = seen.setdefault(d.get("slot"), DoneSet())
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
                    raise self.damaged(lineno, f"a note that is {_shown(d['note'])}, not an object")
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
                raise self.damaged(lineno, f"{_shown(d)} is neither a case record nor a note")
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


def check_signature(path: Path, header: dict) -> None:
    """Refuse a journal whose commands this user's tokparity did not sign: resuming runs them."""
    commands = commands_in(header["args"])
    if not commands:
        return
    key = journal_key(create=False)
    stored = header.get("signature")
    if key is not None and isinstance(stored, str) and hmac.compare_digest(
            stored, signature(key, header["command"], header["args"])):
        return
    shown = ", ".join(json.dumps(c, ensure_ascii=True) for c in commands)  # escaped: one line, nothing hidden
    raise BadJournal(f"{path}: this journal was not written by your tokparity (its header is not signed with your "
                     f"key {key_path()}), and resuming it would run {shown}; read them, and resume with "
                     "--trust-journal only if you trust them")


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
            first = f.readline()
    except OSError as e:
        raise BadJournal(f"{path}: cannot read the journal ({e.strerror or e})") from None
    try:
        header = json.loads(first)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, a number too long, nesting too deep
        header = None
    if not isinstance(header, dict) or type(header.get("journal")) is not int or header["journal"] != FORMAT:
        raise BadJournal(f"{path}:1: not a tokparity journal (format {FORMAT}); start a new run without --resume")
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
        return f"'args' is {_shown(args)}, not an object of the run's arguments"
    if not isinstance(corpora, dict) or not all(_name(k) and _text(v) for k, v in corpora.items()):
        return f"'corpora' is {_shown(corpora)}, not an object of corpus fingerprints"
    if "signature" in header and not isinstance(header["signature"], str):
        return f"'signature' is {_shown(header['signature'])}, not a string"
    for key, kind in arg_checks.items():
        if key in args and not ARG_KINDS[kind][0](args[key]):
            return f"argument {key!r} is {_shown(args[key])}, not {ARG_KINDS[kind][1]}"
    return ""


def _seconds(x: object, low: float) -> bool:
    """A finite number of seconds from ``low`` (above it when ``low`` is 0 exclusive: see ARG_KINDS)."""
    return isinstance(x, (int, float)) and type(x) is not bool and math.isfinite(x) and low <= x < 1e9


# What a stored argument may be: kind -> (check, words for a message).
ARG_KINDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "bool": (lambda x: type(x) is bool, "true or false"),
    "str?": (lambda x: x is None or _name(x), "a string or null"),
    "strs": (lambda x: isinstance(x, list) and all(map(_name, x)), "a list of strings"),
    "strs?": (lambda x: x is None or (isinstance(x, list) and all(map(_name, x))), "a list of strings or null"),
    "int?": (lambda x: x is None or (type(x) is int and -BIGGEST <= x < BIGGEST), "an integer or null"),
    "count?": (lambda x: x is None or _count(x), "an integer from 0, or null"),
    "fraction?": (lambda x: x is None or (isinstance(x, (int, float)) and type(x) is not bool and 0 < x <= 1),
                  "a number above 0 and at most 1, or null"),
    "seconds?": (lambda x: x is None or (_seconds(x, 0) and x != 0), "a number of seconds above 0, or null"),
    "seconds0?": (lambda x: x is None or _seconds(x, 0), "a number of seconds from 0, or null"),
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


def _lines(path: Path) -> Iterator[tuple[int, object]]:
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                return  # a line cut by a kill: its case runs again
            try:
                d = json.loads(raw)
            except (ValueError, RecursionError) as e:  # not JSON or UTF-8, an integer too long, nesting too deep
                raise BadJournal(f"{path}:{lineno}: not a journal line ({type(e).__name__}: {str(e)[:80]}); the file "
                                 "was edited or damaged: delete that line, or start a new run without --resume") \
                    from None
            yield lineno, d


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
    if glob.has_magic(spec) and "/" in spec:  # a glob tokparity expands (-c 'data/*.parquet')
        return os.path.abspath(os.path.expanduser(spec))
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


def take_args(args: argparse.Namespace, header: dict, folder: str, command: str, paths: tuple[str, ...] = (),
              keys: tuple[str, ...] | None = None) -> None:
    """Give ``args`` the interrupted run's arguments (only ``keys``, those a journal stores: a
    header cannot set any other); one the user gives again must be the same."""
    if getattr(args, "out", None) and Path(args.out).resolve() != Path(folder).resolve():
        raise TokparityError(f"--resume {folder} writes its reports there; drop -o {args.out}")
    for key, value in header.get("args", {}).items():
        if keys is not None and key not in keys:
            continue
        given = getattr(args, key, None)
        if given not in (None, [], False) and given != value and stored_args(args, (key,), paths)[key] != value:
            raise TokparityError(f"--resume {folder}: the {command} run was started with {key}={value!r}, not "
                                 f"{given!r}; resume without it, or start a new run in another folder")
        setattr(args, key, value)
    args.out = folder
