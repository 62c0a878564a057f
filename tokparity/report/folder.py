"""A finished run's folder read back into ``Results``, for ``tokparity explain``.

``summary.json`` gives the runs (counts, classes, causes, the root-cause verdicts); the
mismatches come in full from the journal ``cases.jsonl`` of a ``compare`` run
(``tokparity.run.journal``), or, where there is none (``regress``; ``fuzz`` journals keep counts
only), from ``mismatches.csv``. A folder that is not a finished run is a ``NotARun`` error
naming it and what to do.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

from tokparity.checks import ModelCheck
from tokparity.errors import NotARun
from tokparity.records import Mismatch, RootCause
from tokparity.run.journal import JOURNAL_FILE
from tokparity.run.journal.format import read_record
from tokparity.run.results import FuzzSummary, Results, RunSummary

SUMMARY, CSV_FILE = "summary.json", "mismatches.csv"
_RUN_FIELDS = {f.name for f in fields(RunSummary)}
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # csv_report.safe_cell prefixes these with '


@dataclass(frozen=True)
class RunFolder:
    """A finished run's folder, read back once."""

    path: Path
    results: Results
    case_ids: Sequence[tuple[str, str, str]]  # (model, corpus, case_id) of every judged case (journal only)
    source: str  # where the mismatches were read: cases.jsonl or mismatches.csv
    named: Sequence[str]  # the backends the run named with -b (journal only)


OLD_TAG_RATES = "(all)"  # a run written before the rates were counted per model and backend


def _tag_rates(doc: dict) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
    """summary.json's ``tag_rates``: each model's and backend's counts per tag. A run written before
    they were counted so maps each tag to its counts; its rates are shown as one run's, ``(all)``."""
    def counts(r: object) -> bool:
        return isinstance(r, dict) and all(isinstance(r.get(k, 0), int) for k in ("cases", "mismatches"))

    if all(counts(r) and "cases" in r for r in doc.values()):
        return {OLD_TAG_RATES: {OLD_TAG_RATES: dict(doc)}} if doc else {}
    if not all(isinstance(backends, dict) and all(isinstance(rates, dict) and all(counts(r) for r in rates.values())
                                                  for rates in backends.values()) for backends in doc.values()):
        raise TypeError("'tag_rates' must map each model and backend to its counts per tag")
    return {str(model): {str(b): dict(rates) for b, rates in backends.items()} for model, backends in doc.items()}


def _what_to_do(path: Path) -> str:
    return f"give the -o folder of a finished 'tokparity compare' run (e.g. tokparity compare -o {path} …)"


def read_folder(folder: str | Path) -> RunFolder:
    path = Path(folder)
    if path.is_file() and (path.parent / SUMMARY).is_file():  # summary.json or report.html given: its folder
        path = path.parent
    if not path.exists():
        raise NotARun(f"{path}: no such folder; {_what_to_do(path)}")
    if not path.is_dir():
        raise NotARun(f"{path}: not a folder; {_what_to_do(path)}")
    summary_path = path / SUMMARY
    if not summary_path.is_file():
        if (path / JOURNAL_FILE).is_file():
            raise NotARun(f"{path}: no {SUMMARY}: the run did not finish (or still runs); finish it with "
                          f"'tokparity compare --resume {path}', then explain it")
        raise NotARun(f"{path}: not a tokparity run (no {SUMMARY}); {_what_to_do(path)}")
    summary = read_summary(summary_path)  # (a damaged summary is said first; it holds no mismatch)
    journal = path / JOURNAL_FILE
    case_ids: list[tuple[str, str, str]] = []
    header = _journal_header(journal) if journal.is_file() else {}
    args = header.get("args")
    named = args.get("backends") if isinstance(args, dict) else None
    named = [b for b in named if isinstance(b, str)] if isinstance(named, list) else []
    if header.get("command") == "compare":
        judged, case_ids = read_journal(journal)
        mismatches = _final_causes(judged, read_csv(path / CSV_FILE)) if (path / CSV_FILE).is_file() else judged
        source = JOURNAL_FILE
    elif (path / CSV_FILE).is_file():
        mismatches = read_csv(path / CSV_FILE)
        source = CSV_FILE
    else:
        raise NotARun(f"{path}: neither {JOURNAL_FILE} nor {CSV_FILE}, so its mismatches are unknown; run the "
                      "comparison again with -o")
    return RunFolder(path, replace(summary, mismatches=tuple(mismatches)), case_ids, source, named)


def read_summary(path: Path) -> Results:
    """summary.json read back: everything of the run but its mismatches, which it does not hold."""
    try:
        doc = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise NotARun(f"{path}: not readable as JSON ({type(e).__name__}: {str(e)[:120]}); the run's summary is "
                      "damaged: run it again") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list) or "tokparity" not in doc:
        raise NotARun(f"{path}: not a tokparity summary.json (no 'tokparity' and 'runs' keys); "
                      f"{_what_to_do(path.parent)}")
    try:
        runs = [_run_summary(r) for r in doc["runs"]]
    except (TypeError, AttributeError, KeyError, ValueError) as e:
        raise NotARun(f"{path}: a run in 'runs' is not a tokparity run summary ({e}); run it again") from None
    try:
        for key in ("backends", "tag_rates", "options", "known"):
            if not isinstance(doc.get(key, {}), dict):
                raise TypeError(f"'{key}' is {type(doc[key]).__name__}, not an object")
        if not isinstance(doc.get("seconds", 0.0), (int, float)) or isinstance(doc.get("seconds"), bool):
            raise TypeError("'seconds' is not a number")
        tag_rates = _tag_rates(doc.get("tag_rates", {}))
        options = dict(doc.get("options") or {})
        fuzz = options.pop("fuzz", None)
        checks = doc.get("checks", [])
        if not isinstance(checks, list):
            raise TypeError(f"'checks' is {type(checks).__name__}, not a list")
        return Results(tokparity=str(doc["tokparity"]), backends=dict(doc.get("backends", {})), runs=runs,
                       tag_rates=tag_rates, options=options,
                       known=dict(doc.get("known", {})), seconds=float(doc.get("seconds", 0.0)),
                       interrupted=not doc.get("complete", True),
                       fuzz=FuzzSummary.from_json(fuzz) if isinstance(fuzz, dict) else None,
                       checks=[ModelCheck.from_json(c) for c in checks],
                       nothing_compared=str(doc.get("nothing_compared") or ""))
    except (TypeError, AttributeError, KeyError, ValueError) as e:
        raise NotARun(f"{path}: not a tokparity summary.json as written ({e}); the file was edited or damaged: "
                      "run it again") from None


# What each field of a run summary must be, read back (a hand-edited summary.json: one line, not a traceback).
_RUN_KINDS = {"model": str, "oracle": str, "backend": str, "oracle_why": str, "op": str, "cases": int,
              "mismatches": int, "unexplained": int, "skipped": int, "not_applicable": int, "ties": int}


def _run_summary(d: dict) -> RunSummary:
    """One of summary.json's ``runs``, read back, each field of the kind the run wrote."""
    if not isinstance(d, dict):
        raise TypeError(f"a run is {type(d).__name__}, not an object")
    for key, kind in _RUN_KINDS.items():
        if key in d and (not isinstance(d[key], kind) or isinstance(d[key], bool)):
            raise TypeError(f"'{key}' is {type(d[key]).__name__}, not {kind.__name__}")
    for key in ("classes", "causes"):
        counts = d.get(key, {})
        if not (isinstance(counts, dict) and all(isinstance(n, int) and not isinstance(n, bool)
                                                 for n in counts.values())):
            raise TypeError(f"'{key}' must map each name to a count")
    if not (isinstance(d.get("not_applicable_cases", []), list)
            and all(isinstance(c, str) for c in d.get("not_applicable_cases", []))):
        raise TypeError("'not_applicable_cases' must be a list of case ids")
    fields_: dict = {k: v for k, v in d.items() if k in _RUN_FIELDS}
    if fields_.get("root_cause"):
        if not isinstance(fields_["root_cause"], dict):
            raise TypeError("'root_cause' is not an object")
        fields_["root_cause"] = RootCause.from_json(fields_["root_cause"])
    return RunSummary(**fields_)


def _journal_header(path: Path) -> dict:
    """The journal's first line, or {} where it is none."""
    with open(path, "rb") as f:
        first = f.readline()
    try:
        header = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return {}
    return header if isinstance(header, dict) and "journal" in header else {}


def read_journal(path: Path) -> tuple[list[Mismatch], list[tuple[str, str, str]]]:
    """Every mismatch the journal holds, and the id of every case it judged."""
    mismatches: list[Mismatch] = []
    case_ids = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                break  # a line cut by a kill: not part of the run's reports either
            try:
                d = json.loads(raw)
                if not isinstance(d, dict) or "n" not in d:
                    continue
                record = read_record(d)
            except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError, RecursionError) as e:
                raise NotARun(f"{path}:{lineno}: not a journal line ({type(e).__name__}: {e}); the file was edited "
                              "or damaged: run the comparison again") from None
            case_ids.append((record.model, record.corpus, record.case_id))
            mismatches.extend(record.journaled())
    return mismatches, case_ids


def _final_causes(mismatches: list[Mismatch], final: list[Mismatch]) -> list[Mismatch]:
    """The journal has each case as it was judged; the CSV what the run decided of it once
    diagnosed (class, stage, cause, known): each journaled judgement with the CSV's decision."""
    by_key = {(m.model, m.backend, m.corpus, m.case_id, m.op): m for m in final}
    out = []
    for m in mismatches:
        f = by_key.get((m.model, m.backend, m.corpus, m.case_id, m.op))
        out.append(m if f is None else Mismatch(m.judgement, replace(
            m.decision, cls=f.cls, stage=f.stage, cause=f.cause, cause_evidence=f.cause_evidence, known=f.known)))
    return out


def _cell(value: str) -> str:
    """Undo csv_report.safe_cell's formula guard."""
    return value[1:] if value.startswith("'") and value[1:].startswith(_FORMULA_START) else value


def _exact_text(row: dict[str, str]) -> str:
    """The case's text: exact from ``text_json``; a CSV written before that column has ``text`` only."""
    if row.get("text_json"):
        text = json.loads(row["text_json"])
        if not isinstance(text, str):
            raise ValueError("text_json is not a JSON string")
        return text
    return row["text"]


MAX_CSV_FIELD = 1 << 30  # a case's text, its ids and outputs: up to --max-chars 1,000,000 by default, or more


def _csv_rows(path: Path, rows: Iterator[dict]) -> Iterator[tuple[int, dict]]:
    """The rows, numbered as lines; a row the csv module cannot read is one line."""
    lineno = 1
    try:
        for lineno, row in enumerate(rows, 2):
            yield lineno, row
    except (csv.Error, UnicodeDecodeError) as e:
        raise NotARun(f"{path}:{lineno + 1}: not a mismatches.csv row ({e}); the file was edited or damaged: run "
                      "the comparison again") from None


def _listed(cell: str, kind: type) -> list:
    """A cell's JSON list of ``kind`` (ids: integers; pieces and outputs: strings); else a ValueError."""
    value = json.loads(cell)
    if not isinstance(value, list) or not all(isinstance(v, kind) and not isinstance(v, bool) for v in value):
        raise ValueError(f"not a JSON list of {'integers' if kind is int else 'strings'}: {cell[:40]!r}")
    return value


def read_csv(path: Path) -> list[Mismatch]:
    """mismatches.csv back into records (without the agreement partition and the variants,
    which it does not hold)."""
    out = []
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CSV_FIELD))  # (a mismatching text may be long)
    with open(path, encoding="utf-8", newline="") as f:
        rows = csv.DictReader(f)
        for lineno, row in _csv_rows(path, rows):
            try:
                r = {k: _cell(v or "") for k, v in row.items()}
                tags = dict(kv.split("=", 1) for kv in r["tags"].split(";") if "=" in kv)
                out.append(Mismatch.of(
                    model=r["model"], corpus=r["corpus"], case_id=r["case_id"], tags=tags, oracle=r["oracle"],
                    backend=r["backend"], cls=r["class"], evidence=r["evidence"], stage=r["stage"],
                    first_diff=int(r["first_diff"] or 0), text=_exact_text(r),
                    oracle_ids=_listed(r["oracle_ids"], int), backend_ids=_listed(r["backend_ids"], int),
                    oracle_pieces=_listed(r["oracle_pieces"], str), backend_pieces=_listed(r["backend_pieces"], str),
                    known=r.get("known", ""), cause=r.get("cause", ""), cause_evidence=r.get("cause_evidence", ""),
                    op=r.get("op") or "encode", oracle_output=_listed(r.get("oracle_output") or "[]", str),
                    backend_output=_listed(r.get("backend_output") or "[]", str), shape=r.get("shape", "")))
            except (KeyError, ValueError, TypeError, AttributeError, RecursionError) as e:
                raise NotARun(f"{path}:{lineno}: not a mismatches.csv row ({type(e).__name__}: {e}); the file was "
                              "edited or damaged: run the comparison again") from None
    return out
