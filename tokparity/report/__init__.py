"""Renderers: ``Results`` in, files out. They only read the run's data (see tokparity.run.results)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from tokparity.errors import TokparityError
from tokparity.run.results import Results
from tokparity.textview import shown_path
from tokparity.whole_files import write_text_whole, write_whole

REPORT_FILES = ("report.html", "mismatches.csv", "summary.md", "summary.json")


def clear_reports(out_dir: str | Path) -> None:
    """Remove an earlier run's reports from ``out_dir`` as a new run starts there. A run that then
    stops before it writes its own must not leave another run's verdict in its folder."""
    found = [path for name in REPORT_FILES if (path := Path(out_dir) / name).is_file() and not path.is_symlink()]
    for path in found:  # (all checked before any is removed)
        if not _ours(path):
            raise TokparityError(f"{shown_path(path)}: not a tokparity report, and a run writes one there; name "
                                 "another folder for the reports (one that holds only tokparity's)")
    for path in found:
        path.unlink()


# How each report begins (its first 4 KiB hold this): a file of that name that does not is not ours
REPORT_STARTS = {"report.html": "<title>tokparity report</title>", "mismatches.csv": "model,corpus,case_id,",
                 "summary.md": "# tokparity ", "summary.json": '"tokparity": '}


def _ours(path: Path) -> bool:
    """Whether ``path`` is a report tokparity wrote (an empty file is no one's: it may go)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return not head or REPORT_STARTS[path.name] in head


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
