"""What tests read back from a report folder, for comparing two runs of the same cases."""

from __future__ import annotations

import csv
import json
from pathlib import Path


def summary_without_timing(out: Path) -> dict:
    """summary.json without its seconds (never the same twice)."""
    d = json.loads((out / "summary.json").read_text("utf-8"))
    d.pop("seconds")
    d.pop("timing")
    return d


def csv_rows(out: Path) -> list[list[str]]:
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        return list(csv.reader(f))
