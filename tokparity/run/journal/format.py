"""A journal line: what a case record is as JSON (``record_json``, ``read_record``), and the checks
every line passes before a resume counts it: a journal may have been edited, damaged, or
written by someone else (``Damaged`` says what is wrong; ``BadJournal`` is the user's error)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from functools import lru_cache
from json.encoder import encode_basestring  # (how json_text writes a string: ensure_ascii off)

from tokparity.errors import Damaged
from tokparity.records import ROW_FIELDS, CaseRecord, Mismatch, Verdict
from tokparity.run.ops import OPS
from tokparity.run.results import json_text

BIGGEST = 2**63  # ids, positions and lengths beyond this are not tokparity's


def is_text(x: object) -> bool:
    """A str that can be written back as UTF-8 (a JSON "\\ud800" loads as a lone surrogate)."""
    if not isinstance(x, str):
        return False
    try:
        x.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_name(x: object) -> bool:
    """A str a header may hold: text, or a file name that is not UTF-8 (its bytes as surrogate
    escapes, which the ASCII header keeps as \\udcXX)."""
    if not isinstance(x, str):
        return False
    try:
        os.fsencode(x)
    except UnicodeEncodeError:
        return False
    return True


def is_count(x: object) -> bool:
    return type(x) is int and 0 <= x < BIGGEST


def is_ids(x: object) -> bool:
    return isinstance(x, list) and all(type(i) is int and -BIGGEST <= i < BIGGEST for i in x)


def is_texts(x: object) -> bool:
    return isinstance(x, list) and all(is_text(t) for t in x)


def is_tags(x: object) -> bool:
    return isinstance(x, dict) and all(is_text(k) and (v is None or is_text(v) or type(v) in (int, float, bool))
                                       for k, v in x.items())


def is_op(x: object) -> bool:
    return x in OPS


def is_lists_of_texts(x: object) -> bool:
    return isinstance(x, list) and all(is_texts(t) for t in x)


# Each field of a journaled mismatch (tokparity.records.ROW_FIELDS) -> what its value must be, and
# what a message calls that; the judgement's fields are required, the decision's may be left out.
ROW_CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "model": (is_text, "str"), "corpus": (is_text, "str"), "case_id": (is_text, "str"), "tags": (is_tags, "dict"),
    "oracle": (is_text, "str"), "backend": (is_text, "str"), "cls": (is_text, "str"), "evidence": (is_text, "str"),
    "stage": (is_text, "str"), "first_diff": (is_count, "int"), "text": (is_text, "str"), "oracle_ids": (is_ids, "list[int]"),
    "backend_ids": (is_ids, "list[int]"), "oracle_pieces": (is_texts, "list[str]"),
    "backend_pieces": (is_texts, "list[str]"), "known": (is_text, "str"), "partition": (is_lists_of_texts, "list[list[str]]"),
    "cause": (is_text, "str"), "cause_evidence": (is_text, "str"), "variants": (is_texts, "list[str]"),
    "alternatives": (is_lists_of_texts, "list[list[str]]"), "op": (is_op, "op (encode, decode, stream, pieces)"),
    "oracle_output": (is_texts, "list[str]"), "backend_output": (is_texts, "list[str]"), "shape": (is_text, "str"),
}

# A backend's side of a mismatch that equals the oracle's (always so for a decoding op's ids and
# pieces: the same ids judged) is left out of the line. A reader takes the oracle's.
SAME_AS_ORACLE = {"backend_ids": "oracle_ids", "backend_pieces": "oracle_pieces"}

ROW_OPTIONAL = ("known", "partition", "cause", "cause_evidence", "variants", "alternatives", "op", "oracle_output",
                "backend_output", "shape") + tuple(SAME_AS_ORACLE)


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
            raise Damaged(f"{where}: {name!r} is {shown(d[name])}, not a {kind}")
    return d


def is_verdict(x: object) -> bool:
    return x in ("agree", "skipped", "not-applicable") or (isinstance(x, list) and len(x) == 2 and all(is_text(v) for v in x))


def shown(x: object) -> str:
    """A value as a message shows it: short, one line."""
    try:
        text = json.dumps(x, ensure_ascii=True)
    except (TypeError, ValueError):
        text = type(x).__name__
    return text if len(text) <= 40 else text[:37] + "..."


# What each key of a case record must be.
RECORD_CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "model": (is_text, "a string"), "n": (is_count, "a position (an integer from 0)"), "slot": (is_count, "a position"),
    "case_id": (is_text, "a string"), "corpus": (is_text, "a string"), "oracle": (is_text, "a string"),
    "tally": (is_texts, "a list of strings"),
    "verdicts": (lambda x: isinstance(x, dict) and all(is_text(k) and is_verdict(v) for k, v in x.items()),
                 "an object of verdicts (\"agree\", \"skipped\" or [class, known])"),
    "mismatches": (lambda x: isinstance(x, list), "a list"), "too_long": (is_count, "a length"),
    "unread": (lambda x: isinstance(x, bool), "true or false"),
    "causes": (lambda x: isinstance(x, dict) and all(is_text(k) and is_text(v) for k, v in x.items()),
               "an object of causes (backend: cause)"),
    "op": (is_op, "an op (encode, decode, stream, pieces)"),
}


REQUIRED = ("model", "n", "case_id", "corpus")


def record_json(record: CaseRecord, with_mismatches: bool = True, slot: int | None = None) -> dict:
    """A journal line's object for ``record``; ``slot``: the model's position on the command line
    (the journal's key); ``with_mismatches``: each mismatch's fields too (fuzz keeps counts only).
    Each mismatch's verdict and fields carry the known divergence it matched as judged
    (tokparity.run.decide.as_judged); a resume decides again, once diagnosed."""
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
    if record.op != "encode":
        d["op"] = record.op
    if record.causes:
        d["causes"] = record.causes
    if with_mismatches and record.judgements:
        d["mismatches"] = [journaled_fields(m) for m in record.journaled()]
    return d


def journaled_fields(m: Mismatch) -> dict:
    """A mismatch's fields as a line holds them: a backend's side that is the oracle's left out."""
    d = m.fields()
    for backend, oracle in SAME_AS_ORACLE.items():
        if d[backend] == d[oracle]:
            del d[backend]
    return d


def read_mismatch(d: dict) -> Mismatch:
    """A mismatch from a line's fields (``journaled_fields``): a backend's side left out is the oracle's."""
    left_out = {backend: d[oracle] for backend, oracle in SAME_AS_ORACLE.items() if backend not in d and oracle in d}
    return Mismatch.from_fields(d | left_out if left_out else d)


def record_line(record: CaseRecord, with_mismatches: bool = True, slot: int | None = None) -> str:
    """The journal's line for ``record``: ``json_text(record_json(…))``, the same text. A case on
    which no backend differs, most of a run's, is written from its parts, those that repeat
    (names, rate keys, verdicts, the op) encoded once per run."""
    if record.judgements or record.too_long or record.causes:
        return json_text(record_json(record, with_mismatches, slot))
    verdicts = []
    for name, verdict in record.verdicts.items():
        if verdict.kind == "mismatch":  # (a fuzz record keeps the verdict of a mismatch it does not hold)
            return json_text(record_json(record, with_mismatches, slot))
        verdicts.append(f"{_encoded(name)}: {_encoded(verdict.kind)}")
    tally = record.tally if type(record.tally) is tuple else tuple(record.tally)
    keyed = "" if slot is None else f'"slot": {slot}, '
    op = "" if record.op == "encode" else f', "op": {_encoded(record.op)}'
    return (f'{{"model": {_encoded(record.model)}, "n": {record.n}, "case_id": {encode_basestring(record.case_id)}, '
            f'"corpus": {_encoded(record.corpus)}, {keyed}"oracle": {_encoded(record.oracle)}, '
            f'"tally": {_encoded(tally)}, "verdicts": {{{", ".join(verdicts)}}}{op}}}')


@lru_cache(maxsize=4096)
def _encoded(value: str | tuple[str, ...]) -> str:
    return json_text(value)


def read_record(d: dict) -> CaseRecord:
    """The record a journal line holds; ``Damaged`` when a key is missing or of the wrong type."""
    check_record(d)
    mismatches = [read_mismatch(m) for m in d.get("mismatches", ())]
    return CaseRecord(model=d["model"], n=d["n"], case_id=d["case_id"], corpus=d["corpus"],
                      oracle=d.get("oracle", ""), tally=tuple(d.get("tally", ())),
                      verdicts={name: Verdict.from_json(v) for name, v in d.get("verdicts", {}).items()},
                      judgements=tuple(m.judgement for m in mismatches),
                      decisions=tuple(m.decision for m in mismatches),
                      too_long=d.get("too_long", 0), unread=bool(d.get("unread", False)),
                      causes=d.get("causes", {}), op=d.get("op", "encode"))


def check_record(d: dict) -> None:
    for key in REQUIRED:
        if key not in d:
            raise Damaged(f"a case record without {key!r}")
    for key, (check, what) in RECORD_CHECKS.items():
        if key in d and not check(d[key]):
            raise Damaged(f"{key!r} is {shown(d[key])}, not {what}")
    for i, m in enumerate(d.get("mismatches", [])):
        check_mismatch(m, f"mismatch {i + 1}")


def is_seconds(x: object, low: float) -> bool:
    """A finite number of seconds from ``low`` (above it when ``low`` is 0 exclusive: see ARG_KINDS)."""
    return isinstance(x, (int, float)) and type(x) is not bool and math.isfinite(x) and low <= x < 1e9
