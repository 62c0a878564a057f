"""What CI systems read: JUnit XML (``--junit FILE``) and GitHub's job summary.

JUnit, as GitHub, GitLab and Jenkins read it: one ``<testsuite>`` per model, one ``<testcase>``
per model × backend (``classname`` the model, ``name`` the backend, as its label reads in the
reports). A backend with an unexplained mismatch fails; its ``<failure>`` holds the first ones
(at most ``FAILURE_CASES``): case id, the text as a Python literal, the two id lists side by side.
Known divergences and ties of equal score are not failures: they are counted in ``<system-out>``::

    <testsuites name="tokparity compare" tests="2" failures="1">
      <testsuite name="llama-spm" tests="2" failures="1" errors="0" skipped="0">
        <testcase classname="llama-spm" name="mine">
          <failure message="181 mismatches to review against golden/llama.cpp (884 cases) …">…</failure>

Text from corpora and engines may hold characters XML 1.0 cannot carry at all (C0 controls but
tab, CR and LF; lone surrogates; U+FFFE/U+FFFF): they are written as escapes (``\\x01``), so the
file always parses. The file is written whole under a temporary name, then renamed.

``$GITHUB_STEP_SUMMARY``: when the variable names a file, summary.md (Markdown already) is
appended to it, and GitHub shows it on the run's page.
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tokparity.checks import BROKEN
from tokparity.records import Mismatch
from tokparity.report.outputs import mismatch_comparison
from tokparity.report.pieces import PLAIN
from tokparity.report.plain import comparison_lines
from tokparity.report.writeup import TIE, piece_styles, plural
from tokparity.run.results import Results, RunSummary
from tokparity.textview import shown_path

FAILURE_CASES = 10  # unexplained cases written out in a failure; mismatches.csv holds every one
KNOWN_LISTED = 5  # known or tie cases named in <system-out>
STEP_SUMMARY_BYTES = 1_000_000  # GitHub refuses a job summary above 1 MiB

# What XML 1.0 allows: tab, LF, CR, and the planes but surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: object) -> str:
    """``text`` with every character XML 1.0 cannot hold written as an escape: ``"a\\x01b" -> "a\\\\x01b"``."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), str(text))


def _element(parent: ET.Element, tag: str, text: str | None = None, **attrs: object) -> ET.Element:
    el = ET.SubElement(parent, tag, {k: xml_safe(v) for k, v in attrs.items()})
    if text is not None:
        el.text = xml_safe(text)
    return el


def render_junit(results: Results, command: str) -> str:
    """The JUnit XML document of a finished (or interrupted) run."""
    by_run: dict[tuple[str, str, str], list[Mismatch]] = {}
    for m in results.mismatches:
        by_run.setdefault((m.model, m.backend, m.op), []).append(m)
    styles = piece_styles(results.mismatches)
    suites: dict[str, list[RunSummary]] = {}
    for r in results.runs:
        suites.setdefault(r.model, []).append(r)

    root = ET.Element("testsuites", name=f"tokparity {command}")
    total = failed = 0
    for model, runs in suites.items():
        suite = _element(root, "testsuite", name=model, tests=len(runs), errors=0, skipped=0, failures=0,
                         time=f"{sum(_seconds(results, r) for r in runs):.3f}")
        if results.interrupted:
            props = _element(suite, "properties")
            _element(props, "property", name="complete", value="false (interrupted: the counts cover the cases done)")
        failures = skipped = 0
        for r in runs:
            case = _element(suite, "testcase", classname=model, name=r.label, time=f"{_seconds(results, r):.3f}")
            mismatches = by_run.get((r.model, r.backend, r.op), [])
            if r.unexplained:
                failures += 1
                _element(case, "failure", _failure_body(r, mismatches, styles.get(model, PLAIN)),
                         message=_failure_message(r), type=_main_class(r))
            elif not r.cases:
                skipped += 1
                declared = f", {r.not_applicable} not applicable to it (declared)" if r.not_applicable else ""
                _element(case, "skipped", message=f"no case judged ({r.skipped} the backend cannot answer{declared})")
            _element(case, "system-out", _system_out(r, mismatches))
        checked = [c for c in results.checks if c.model == model]
        for c in checked:  # (compare --check: the model's files, one testcase)
            case = _element(suite, "testcase", classname=model, name="files", time="0.000")
            broken = [p for p in c.properties if p.status == BROKEN]
            if broken:
                failures += 1
                _element(case, "failure", "\n".join(f"{p.name}: {f.said} ({f.where})" for p in broken
                                                     for f in p.findings if f.broken),
                         message=f"{', '.join(p.name for p in broken)} broken", type="files")
        suite.set("tests", str(len(runs) + len(checked)))
        suite.set("failures", str(failures))
        suite.set("skipped", str(skipped))
        total += len(runs) + len(checked)
        failed += failures
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("errors", "0")
    root.set("time", f"{results.seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _seconds(results: Results, r: RunSummary) -> float:
    return float(results.timing.get(r.model, {}).get("backends", {}).get(r.backend, 0.0))


def _main_class(r: RunSummary) -> str:
    return max(r.classes.items(), key=lambda kv: kv[1])[0] if r.classes else "mismatch"


def _failure_message(r: RunSummary) -> str:
    classes = ", ".join(f"{c} {n}" for c, n in sorted(r.classes.items(), key=lambda kv: (-kv[1], kv[0])))
    causes = f"; causes: {', '.join(f'{c} {n}' for c, n in r.causes.items())}" if r.causes else ""
    return (f"{plural(r.unexplained, 'mismatch')} to review against {r.oracle} ({plural(r.cases, 'case')}; "
            f"classes: {classes or 'none'}{causes})")


def _unexplained(m: Mismatch) -> bool:
    return not m.known and m.cause != TIE


def _failure_body(r: RunSummary, mismatches: list[Mismatch], style: str) -> str:
    shown = [m for m in mismatches if _unexplained(m)][:FAILURE_CASES]
    lines = []
    for m in shown:
        cause = f", cause {m.cause}" if m.cause else ""
        lines += [f"{m.corpus}/{m.case_id} ({m.cls}{cause}): {m.text[:200]!r}{'…' if len(m.text) > 200 else ''}",
                  f"  oracle {m.oracle}, backend {m.backend}"]
        lines += comparison_lines(mismatch_comparison(m, style), columns=120, indent=2) + [""]
    rest = r.unexplained - len(shown)
    if rest > 0:
        lines.append(f"… and {plural(rest, 'more mismatch')} to review: every one in mismatches.csv")
    return "\n".join(lines).rstrip() + "\n"


def _system_out(r: RunSummary, mismatches: list[Mismatch]) -> str:
    known = [m for m in mismatches if m.known]
    ties = [m for m in mismatches if not m.known and m.cause == TIE]
    lines = [f"{r.model} · {r.label} against {r.oracle}: {plural(r.cases, 'case')}, "
             f"{plural(r.mismatches, 'mismatch')}, {r.unexplained} to review, {r.ties} ties of equal score, "
             f"{len(known)} known divergences, {r.skipped} skipped"
             + (f", {r.not_applicable} not applicable (declared)" if r.not_applicable else "")]
    for m in (known + ties)[:KNOWN_LISTED]:
        why = f"known: {m.known}" if m.known else f"tie: {TIE}"
        lines.append(f"  {m.corpus}/{m.case_id} ({m.cls}; {why}): {m.text[:80]!r}")
    return "\n".join(lines) + "\n"


def write_junit(results: Results, path: str | Path, command: str) -> Path:
    """``path`` written whole, atomically (a temporary file renamed over it)."""
    from tokparity.errors import TokparityError
    from tokparity.whole_files import write_text_whole

    path = Path(path)
    try:
        write_text_whole(path, render_junit(results, command))
    except OSError as e:
        raise TokparityError(f"--junit {shown_path(path)}: cannot write it ({e.strerror or e}); the reports are "
                             "written: choose a path in a folder you can write") from None
    return path


def append_step_summary(markdown: str, environ: dict[str, str] | os._Environ = os.environ) -> Path | None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` when set; a failure is a warning, never the
    run's verdict (the reports are written, the exit status says how the run went)."""
    target = environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    data = markdown.encode("utf-8", "backslashreplace")
    if len(data) > STEP_SUMMARY_BYTES:
        cut = data[:STEP_SUMMARY_BYTES].decode("utf-8", "ignore").rsplit("\n", 1)[0]
        data = (cut + "\n\n… cut here (GitHub keeps 1 MiB): the whole summary is summary.md in the report "
                      "folder\n").encode("utf-8")
    if Path(target).exists() and not Path(target).is_file():  # a FIFO would block until someone reads it
        print(f"tokparity: warning: GITHUB_STEP_SUMMARY {shown_path(target)}: not a regular file; the summary is "
              "not appended", file=sys.stderr)
        return None
    try:
        with open(target, "ab") as f:
            f.write(data if data.endswith(b"\n") else data + b"\n")
    except OSError as e:
        print(f"tokparity: warning: GITHUB_STEP_SUMMARY {shown_path(target)}: cannot append the summary "
              f"({e.strerror or e})", file=sys.stderr)
        return None
    return Path(target)


def write_ci_outputs(results: Results, paths: dict[str, Path], junit: str | None, command: str) -> None:
    """After the reports: the JUnit file if asked for, the job summary if GitHub set its variable."""
    if junit:
        write_junit(results, junit, command)
    append_step_summary(paths["summary.md"].read_text("utf-8"))
