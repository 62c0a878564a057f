"""mismatches.csv: one row per mismatching case and backend.

Columns (``tokparity.run.results.CSV_COLUMNS``, listed in docs/contracts.md): ``model, corpus, case_id, tags,
oracle, backend, class, stage, first_diff, text, oracle_ids, backend_ids, oracle_pieces,
backend_pieces``, then ``evidence`` (why the class), ``known`` (the known-divergence id that
explains the row, else empty), ``cause`` (the root causes that reproduce the backend's ids,
``+``-joined in pipeline order; empty when nothing does), ``cause_evidence`` (how it was shown)
``text_json``, then ``op`` (what was asked: encode, decode, stream, pieces) and, for the three that
turn ids into text, ``oracle_output`` and ``backend_output`` (JSON lists: the decoded text, the
deltas, each id's bytes in hex), then ``shape`` (what the backend did, read off the two answers).
``tags`` is ``key=value`` pairs joined by ``;``.

Cells are untrusted text: a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return would run as a formula in a spreadsheet, so it is prefixed with ``'`` (OWASP's advice).
The case's text is therefore in two columns:

``text``       for reading: the text as it is, but with that ``'`` in front when it starts with one
               of those characters, so it is not always the exact input.
``text_json``  for programs: the exact text as a JSON string literal (``"\tx = 1\n"``), which
               ``json.loads`` gives back character for character. It always starts with ``"``, so
               no spreadsheet reads it as a formula, and it is never prefixed.

Id and piece lists are JSON too, so they parse back exactly.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from tokparity.records import Mismatch
from tokparity.run.results import CSV_COLUMNS, json_text

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> str:
    text = value if isinstance(value, str) else json_text(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def row(m: Mismatch) -> list[str]:
    d = m.row()
    d["tags"] = ";".join(f"{k}={v}" for k, v in sorted(m.tags.items()))
    d["text_json"] = json_text(m.text)  # starts with '"': never a formula, so safe_cell leaves it whole
    return [safe_cell(d[c]) for c in CSV_COLUMNS]


def write_csv(mismatches: Sequence[Mismatch], path: Path) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for m in mismatches:
            w.writerow(row(m))
