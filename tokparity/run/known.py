"""Known divergences: reviewed upstream differences that must not drown a new one.

A known-divergence file is TOML, a list of entries:

    [[divergence]]
    id = "hf-gguf-spm-leading-space"          # short, stable, unique
    models = ["llama-spm", "phi-3"]          # fnmatch patterns on model names
    backends = ["hf-gguf"]                   # fnmatch patterns on backend names
    classes = ["space-prefix"]               # the classes the classifier gives these cases
    text = '^\\s'                            # optional: a regex the case text must contain
    evidence = 'unk_surface'                 # optional: a regex the classifier's evidence must contain
    case_ids = ["llama.cpp-*"]               # optional: fnmatch patterns on case ids
    ops = ["decode"]                         # optional: the ops it is about (tokparity.run.ops; default
                                             # encode, or the op its classes belong to: decode-*, stream-*,
                                             # piece-bytes, chat-*)
    cause = "space.dummy-prefix"             # optional: the reviewed root cause, for the cases whose
                                             # cause no variant reproduces (a crash, a dropped text)
    reason = "why the two sides differ"
    upstream = "where it is reported or decided"

A mismatch that an entry matches is reported as *known* and does not fail the run. An entry whose
models and backends were run but which matched nothing is *stale*: the upstream difference is
gone (or the entry is wrong), and the report says so, so the list does not rot.

tokparity ships a reviewed list for its zoo (``known_divergences.toml`` beside this module);
users add their own with ``--known FILE``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import regex

from tokparity.backends.registry import without_release
from tokparity.errors import TokparityError
from tokparity.textview import shown_path

REQUIRED = ("id", "models", "backends", "classes", "reason", "upstream")
LISTS = ("models", "backends", "classes", "case_ids", "ops")  # lists of strings
STRINGS = ("id", "reason", "upstream", "text", "evidence", "cause")

# A file's regexes are its author's: one that backtracks for ever ("(a|a)+$" on "aaa…a!") must not
# hang a run. Each search has this long; an honest regex takes microseconds on a case.
REGEX_SECONDS = 2.0


class Row(Protocol):
    """What an entry is matched against: a Mismatch, or a Judgement as judged (its class the rules')."""

    @property
    def model(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def op(self) -> str: ...
    @property
    def cls(self) -> str: ...
    @property
    def case_id(self) -> str: ...
    @property
    def evidence(self) -> str: ...
    @property
    def text(self) -> str: ...


DECODE_CLASSES = {"decode-cleanup", "decode-roundtrip"}  # an entry of these alone is about the decode op


@dataclass(frozen=True)
class KnownDivergence:
    """One entry of a known-divergences file, as the file says it (its hits are the KnownList's)."""

    id: str
    models: tuple[str, ...]
    backends: tuple[str, ...]
    classes: tuple[str, ...]
    reason: str
    upstream: str
    text: regex.Pattern | None = None
    evidence: regex.Pattern | None = None
    case_ids: tuple[str, ...] = ()
    cause: str = ""  # the reviewed root cause (docs/catalogue/causes.md names, "+"-joined)
    ops: tuple[str, ...] = ("encode",)
    source: str = ""

    def covers_run(self, model: str, backend: str, op: str = "encode") -> bool:
        # (a backend at another release, hf@0.21.4, is covered by the entries of its backend too;
        # an entry may name releases itself: "hf@0.21.*")
        library = without_release(backend)
        return op in self.ops and any(fnmatchcase(model, m) for m in self.models) and \
            any(fnmatchcase(backend, b) or fnmatchcase(library, b) for b in self.backends)

    def matches(self, m: Row) -> bool:
        return self.covers_run(m.model, m.backend, m.op) and self.matches_in_run(m)

    def matches_in_run(self, m: Row) -> bool:
        """``matches`` for a mismatch of a run this entry covers."""
        return (m.cls in self.classes
                and self._search("text", self.text, m.text, m)
                and self._search("evidence", self.evidence, m.evidence, m)
                and (not self.case_ids or any(fnmatchcase(m.case_id, c) for c in self.case_ids)))

    def _search(self, key: str, pattern: regex.Pattern | None, subject: str, m: Row) -> bool:
        if pattern is None:
            return True
        try:
            return _found(pattern, subject)
        except TimeoutError:
            raise TokparityError(f"{self.source}: divergence {self.id!r}: its {key} regex {pattern.pattern!r} ran "
                                 f"over {REGEX_SECONDS:g} s on case {m.case_id!r} (catastrophic backtracking); "
                                 "simplify the regex") from None


@lru_cache(maxsize=1024)
def _found(pattern: regex.Pattern, subject: str) -> bool:
    """Whether ``pattern`` is found in ``subject``: backends that mismatch alike on a case share
    its text and evidence, so one search answers them all."""
    return pattern.search(subject, timeout=REGEX_SECONDS) is not None


class KnownList:
    """A run's known divergences, and what it counted of them: each entry's hits, the runs made."""

    def __init__(self, entries: list[KnownDivergence]):
        ids = [e.id for e in entries]
        dup = {i for i in ids if ids.count(i) > 1}
        if dup:
            first = sorted(dup)[0]
            where = " and ".join(dict.fromkeys(e.source for e in entries if e.id == first))
            raise TokparityError(f"{where}: known divergence id {first!r} is given twice; ids must be unique across "
                                 "the shipped list and the --known files (rename one)")
        self.entries = entries
        self.hits: dict[str, int] = {}  # entry id -> the mismatches decided as that entry
        self._by_id = {e.id: e for e in entries}
        self.runs: set[tuple[str, str, str]] = set()  # (model, backend, op) of the runs made
        self._for_run: dict[tuple[str, str, str], list[KnownDivergence]] = {}
        # What a mismatch matched, by what an entry reads of it: a run matches each mismatch twice,
        # as judged (its journal line) and as decided (the same class, mostly).
        self._matched: dict[tuple, KnownDivergence | None] = {}

    def match(self, m: Row) -> str:
        """The id of the first entry that explains ``m``, or ``""``; that entry's hits count it."""
        entry = self._first(m)
        if entry is None:
            return ""
        self.hits[entry.id] = self.hits.get(entry.id, 0) + 1
        return entry.id

    def find(self, m: Row) -> str:
        """``match`` without counting a hit (what a journal line notes of a case as judged)."""
        entry = self._first(m)
        return entry.id if entry is not None else ""

    def _first(self, m: Row) -> KnownDivergence | None:
        run = (m.model, m.backend, m.op)
        candidates = self._for_run.get(run)
        if candidates is None:  # the model and backend patterns, matched once per run
            candidates = self._for_run[run] = [e for e in self.entries if e.covers_run(*run)]
        if not candidates:
            return None
        key = (run, m.cls, m.case_id, m.evidence, m.text)
        if key not in self._matched:
            if len(self._matched) > 100_000:  # a bound on what a long fuzz run keeps
                self._matched.clear()
            self._matched[key] = next((e for e in candidates if e.matches_in_run(m)), None)
        return self._matched[key]

    def entry(self, entry_id: str) -> KnownDivergence | None:
        return self._by_id.get(entry_id)

    def note_run(self, model: str, backend: str, op: str = "encode") -> None:
        self.runs.add((model, backend, op))

    def not_run(self, model: str, ops: tuple[str, ...]) -> None:
        """Runs of ``model`` for ``ops`` that cannot show what the entries describe (regress judges the
        decoding ops against texts the decoder's own library made): no entry is stale for them."""
        self.runs = {run for run in self.runs if not (run[0] == model and run[2] in ops)}

    def blank(self) -> KnownList:
        """The same entries, nothing counted yet: for another process to count with and hand back
        (``absorb``)."""
        return KnownList(self.entries)

    def absorb(self, used: KnownList) -> None:
        """What a ``blank`` copy counted in another process (a Ray task): its hits and its runs."""
        for entry_id, n in used.hits.items():
            self.hits[entry_id] = self.hits.get(entry_id, 0) + n
        self.runs |= used.runs

    def stale(self) -> list[KnownDivergence]:
        """Entries whose models, backends and ops were run, that matched nothing (an entry about
        the decode op is not stale in a run that only encoded)."""
        return [e for e in self.entries if not self.hits.get(e.id) and any(e.covers_run(*run) for run in self.runs)]

    def report(self) -> dict:
        return {"used": {e.id: self.hits[e.id] for e in self.entries if self.hits.get(e.id)},
                "stale": [{"id": e.id, "source": e.source, "reason": e.reason} for e in self.stale()]}


def parse_known(text: str, source: str) -> list[KnownDivergence]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TokparityError(f"{source}: invalid TOML ({e})") from None
    except RecursionError:  # (tomllib reads nesting by recursion: thousands of '[' deep)
        raise TokparityError(f"{source}: nested too deep to read as TOML; a known-divergences file holds flat "
                             "[[divergence]] entries") from None
    stray = sorted(set(data) - {"divergence"})
    if stray:  # e.g. `models = 5` written above the entries: it would silently apply to nothing
        raise TokparityError(f"{source}: unknown top-level key {stray[0]!r}; a known-divergences file holds only "
                             "[[divergence]] entries (keys such as models go inside an entry)")
    divergences = data.get("divergence", [])
    if not isinstance(divergences, list):
        raise TokparityError(f"{source}: 'divergence' must be a list of tables ([[divergence]] entries), "
                             f"not {_toml_type(divergences)}")
    entries = []
    for n, raw in enumerate(divergences, 1):
        if not isinstance(raw, dict):
            raise TokparityError(f"{source}: divergence #{n} is {_toml_type(raw)}, expected a table ([[divergence]])")
        missing = [k for k in REQUIRED if k not in raw]
        if missing:
            raise TokparityError(f"{source}: divergence #{n} lacks {', '.join(missing)}")
        _check_types(raw, n, source)
        pattern, evidence = (_regex(raw, key, source) for key in ("text", "evidence"))
        cause = str(raw.get("cause", ""))
        unknown = [part for part in cause.split("+") if part and not _is_cause(part)]
        if unknown:
            raise TokparityError(f"{source}: divergence {raw['id']!r}: unknown cause {unknown[0]!r}; the names are "
                                 "those of docs/catalogue/causes.md (tokparity/diagnose/causes.toml)")
        entries.append(KnownDivergence(
            id=raw["id"], models=tuple(raw["models"]), backends=tuple(raw["backends"]), classes=tuple(raw["classes"]),
            reason=raw["reason"], upstream=raw["upstream"], text=pattern, evidence=evidence,
            case_ids=tuple(raw.get("case_ids", ())), cause=cause, ops=_ops(raw, source), source=source))
    return entries


def _ops(raw: dict, source: str) -> tuple[str, ...]:
    from tokparity.run.ops import OPS
    classes = set(raw["classes"])
    default = ["decode"] if classes and classes <= DECODE_CLASSES else \
        ["stream"] if classes and all(c.startswith("stream-") for c in classes) else \
        ["pieces"] if classes == {"piece-bytes"} else \
        ["chat"] if classes and all(c.startswith("chat-") for c in classes) else ["encode"]
    ops = raw.get("ops", default)
    unknown = [op for op in ops if op not in OPS]
    if unknown or not ops:
        raise TokparityError(f"{source}: divergence {raw['id']!r}: ops must name some of {', '.join(OPS)}, not "
                             f"{unknown[0] if unknown else 'none'!r}")
    return tuple(ops)


def _toml_type(value) -> str:
    """``5`` -> ``"an integer"``: what a TOML value is, for a message."""
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a float", list: "an array",
             dict: "a table"}
    return names.get(type(value), f"a {type(value).__name__}")


def _check_types(raw: dict, n: int, source: str) -> None:
    """Each key the type the format says: ``models = 5`` is one line naming the file and entry."""
    name = f"divergence {raw['id']!r}" if isinstance(raw.get("id"), str) else f"divergence #{n}"
    for key in STRINGS:
        if key in raw and not isinstance(raw[key], str):
            raise TokparityError(f"{source}: {name}: {key} must be a string, not {_toml_type(raw[key])}")
    for key in LISTS:
        value = raw.get(key, [])
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise TokparityError(f"{source}: {name}: {key} must be an array of strings (e.g. {key} = [\"x\"]), "
                                 f"not {_toml_type(value) if not isinstance(value, list) else 'an array of other things'}")


def _is_cause(name: str) -> bool:
    from tokparity.diagnose.info import is_declared
    return is_declared(name)


def _regex(raw: dict, key: str, source: str) -> regex.Pattern | None:
    try:
        return regex.compile(raw[key]) if raw.get(key) else None
    except (regex.error, OverflowError, RecursionError, ValueError) as e:
        raise TokparityError(f"{source}: divergence {raw['id']!r}: bad {key} regex ({e})") from None


SHIPPED = "tokparity/known_divergences.toml"  # the source of the shipped list's entries


def load_known(paths: list[str | os.PathLike] | None = None, builtin: bool = True) -> KnownList:
    """The shipped list (unless ``builtin`` is false) plus the user's files."""
    entries = []
    if builtin:
        shipped = resources.files("tokparity").joinpath("known_divergences.toml")
        entries += parse_known(shipped.read_text("utf-8"), SHIPPED)
    for p in paths or []:
        entries += parse_known(_read_known(p), str(p))
    return KnownList(entries)


MAX_KNOWN_BYTES = 64 << 20  # the shipped list is some kilobytes; a file of gigabytes is read whole by tomllib


def _read_known(path: str | os.PathLike) -> str:
    """A --known file's text, or one line saying why it cannot be one."""
    what = "known-divergences file"
    if Path(path).exists() and not Path(path).is_file() and not Path(path).is_dir():  # a FIFO: may never end
        raise TokparityError(f"{path}: not a regular file; --known takes a {what} (TOML)")
    try:
        if Path(path).is_file() and Path(path).stat().st_size > MAX_KNOWN_BYTES:  # (read whole: bounded first)
            raise TokparityError(f"{shown_path(path)}: {Path(path).stat().st_size:,} bytes, more than a {what} "
                                 f"can hold ({MAX_KNOWN_BYTES >> 20} MiB); --known takes a {what} (TOML)")
        return Path(path).read_text("utf-8")
    except FileNotFoundError:
        raise TokparityError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise TokparityError(f"{path}: is a folder; --known takes a {what} (TOML)") from None
    except UnicodeDecodeError as e:
        raise TokparityError(f"{path}: not UTF-8 text (byte {e.start}); --known takes a {what} (TOML)") from None
    except OSError as e:  # permission denied, a device, …
        raise TokparityError(f"{path}: cannot read this {what} ({e.strerror or e})") from None
