"""Renderers: ``Results`` in, files out. They only read the run's data (see tokparity.results)."""

from __future__ import annotations

import json
from pathlib import Path

from tokparity.results import Results


def write_reports(results: Results, out_dir: str | Path) -> dict[str, Path]:
    """Write report.html, mismatches.csv, summary.md and summary.json into ``out_dir``."""
    from tokparity.report import csv_report, html, markdown

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in ("report.html", "mismatches.csv", "summary.md", "summary.json")}
    paths["summary.json"].write_text(json.dumps(results.to_json(), indent=1, ensure_ascii=False) + "\n", "utf-8")
    csv_report.write_csv(results.mismatches, paths["mismatches.csv"])
    paths["summary.md"].write_text(markdown.render(results, full=True), "utf-8")
    paths["report.html"].write_text(html.render(results), "utf-8")
    return paths
