"""Renderers: ``Results`` in, files out. They only read the run's data (see tokparity.run.results)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from tokparity.run.results import Results
from tokparity.whole_files import write_text_whole, write_whole

REPORT_FILES = ("report.html", "mismatches.csv", "summary.md", "summary.json")


def clear_reports(out_dir: str | Path) -> None:
    """Remove an earlier run's reports from ``out_dir`` as a new run starts there. A run that then
    stops before it writes its own must not leave another run's verdict in its folder."""
    for name in REPORT_FILES:
        path = Path(out_dir) / name
        if path.is_file() and not path.is_symlink():
            path.unlink()


def write_reports(results: Results, out_dir: str | Path) -> dict[str, Path]:
    """Write report.html, mismatches.csv, summary.md and summary.json into ``out_dir``.

    Each file is written whole under a temporary name in the same folder, then renamed over the
    old one (a rename is atomic): a kill while writing leaves the earlier file or the new one,
    never a cut one. summary.json, the file that says whether the run is ``complete``, comes last,
    so it never vouches for reports that are not there."""
    from tokparity.report import csv_report, html, markdown

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in REPORT_FILES}
    for name in paths:  # what a run killed while writing left behind
        for stale in out.glob(f".{name}.*.tmp"):  # (a fresh name each time: mkstemp's random part)
            with contextlib.suppress(OSError):
                stale.unlink()
    write_whole(paths["mismatches.csv"], lambda tmp: csv_report.write_csv(results.mismatches, tmp))
    write_text_whole(paths["summary.md"], markdown.render(results))
    write_text_whole(paths["report.html"], html.render(results))
    write_text_whole(paths["summary.json"], json.dumps(results.to_json(), indent=1, ensure_ascii=False) + "\n")
    return paths
