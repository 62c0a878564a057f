"""The reports as plain text for a terminal: the summary ``compare`` and ``regress`` print
(``summary_lines``: aligned tables, no Markdown, no HTML entities), a fuzz run's findings by cause
(``fuzz_lines``), and the write-up ``tokparity explain`` prints; summary.md holds its id tables.

Whitespace and control characters are visible as everywhere in tokparity (``␣`` ``↵`` ``→``
``<0x00>``), pieces are readable text (pieces.py), and the two id lists sit in aligned
columns, ``^`` under what differs (llama-spm, a greedy longest-match engine, "It's raining.")::

    first difference at token 3
    oracle   739 29915 29879 1153 2827  29889
             ␣It '     s     ␣ra  ining .
    backend  739 29915 29879 17251 292  29889
             ␣It '     s     ␣rain ing  .
                             ^^^^^^^^^^
"""

from __future__ import annotations

import shlex
import shutil
import textwrap
import unicodedata
from dataclasses import dataclass

from tokparity.diff.explain import class_info
from tokparity.records import Mismatch
from tokparity.report import overview
from tokparity.report.writeup import (
    Block,
    Fix,
    Token,
    Writeup,
    cause_line,
    comparison,
    fixes_of,
    plural,
    prompt_like,
)
from tokparity.run.results import Results
from tokparity.textview import single_line, visible

LABEL = 15  # width of the "Root cause" column of labels
ROW_LABELS = ("oracle", "backend")
TEXT_SHOWN = 200  # characters of a case's text in a run's write-up (explain CASE shows all)


def width(s: str) -> int:
    """Terminal columns: East Asian wide characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def pad(s: str, n: int) -> str:
    return s + " " * (n - width(s))


def quoted(text: str, limit: int | None = None) -> str:
    shown = visible(text if limit is None or len(text) <= limit else text[:limit])
    more = "" if limit is None or len(text) <= limit else f"… ({len(text):,} characters)"
    return f"'{shown}'{more}"


# -- the aligned comparison ---------------------------------------------------------------------


@dataclass
class _Column:
    cells: tuple[str, str, str, str]  # oracle ids, oracle pieces, backend ids, backend pieces
    differs: bool

    @property
    def width(self) -> int:
        return max(width(c) for c in self.cells)


def _side(tokens: list[Token]) -> tuple[str, str]:
    if not tokens:
        return "(none)", ""
    widths = [max(width(str(t.id)), width(t.piece)) for t in tokens]
    return (" ".join(pad(str(t.id), w) for t, w in zip(tokens, widths)).rstrip(),
            " ".join(pad(t.piece, w) for t, w in zip(tokens, widths)).rstrip())


def _chunks(tokens: list[Token], room: int) -> list[list[Token]]:
    """Tokens cut into runs no wider than ``room`` (one token per run at least)."""
    runs: list[list[Token]] = [[]]
    used = 0
    for t in tokens:
        w = max(width(str(t.id)), width(t.piece)) + 1
        if runs[-1] and used + w > room:
            runs.append([])
            used = 0
        runs[-1].append(t)
        used += w
    return runs


def _columns(blocks: list[Block], room: int) -> list[_Column]:
    cols = []
    for b in blocks:
        if b.kind == "gap":
            gap = f"… {b.skipped} same"
            cols.append(_Column((gap, "", gap, ""), False))
        elif b.kind == "same":
            for t in b.oracle:
                cols.append(_Column((str(t.id), t.piece, str(t.id), t.piece), False))
        else:  # a difference wider than the line is cut into pieces that fit, side by side
            a_runs, b_runs = _chunks(b.oracle, room), _chunks(b.backend, room)
            for k in range(max(len(a_runs), len(b_runs))):
                a = _side(a_runs[k] if k < len(a_runs) else [])
                z = _side(b_runs[k] if k < len(b_runs) else [])
                cols.append(_Column((a[0], a[1], z[0], z[1]), True))
    return cols


def comparison_lines(m: Mismatch, style: str, columns: int = 100, indent: int = 2) -> list[str]:
    """The two id lists of ``m`` with their readable pieces, aligned, wrapped at ``columns``."""
    head = " " * indent
    label_w = max(len(s) for s in ROW_LABELS) + 2
    room = max(20, columns - indent - label_w)
    blocks = comparison(m, style)
    first = next((b.start for b in blocks if b.kind == "diff"), None)
    lines = [f"{head}first difference at token {first}" if first is not None else f"{head}the ids are equal"]
    cols = _columns(blocks, room)
    rows: list[list[_Column]] = [[]]
    used = 0
    for c in cols:
        if rows[-1] and used + c.width > room:
            rows.append([])
            used = 0
        rows[-1].append(c)
        used += c.width + 1
    for n, row in enumerate(rows):
        if n:
            lines.append("")
        for k in range(4):
            label = ROW_LABELS[k // 2] if k % 2 == 0 else ""
            line = (head + pad(label, label_w) + " ".join(pad(c.cells[k], c.width) for c in row)).rstrip()
            if line or k % 2 == 0:  # a side with no tokens has no pieces row
                lines.append(line)
        if any(c.differs for c in row):
            marks = " ".join(("^" if c.differs else " ") * c.width for c in row)
            lines.append((head + " " * label_w + marks).rstrip())
    return lines


# -- aligned tables -----------------------------------------------------------------------------


def table_lines(columns: tuple[str, ...], rows: list[tuple[str, ...]], numeric: frozenset[str] = frozenset(),
                indent: int = 0) -> list[str]:
    """A table for a terminal: a header, a rule, one line per row, every column as wide as its
    widest cell (in terminal columns: wide characters count two), numbers right-aligned."""
    cells = [tuple(single_line(c) for c in row) for row in [columns, *rows]]
    widths = [max(width(row[k]) for row in cells) for k in range(len(columns))]

    def line(row: tuple[str, ...]) -> str:
        shown = [" " * (w - width(c)) + c if name in numeric else pad(c, w)
                 for name, c, w in zip(columns, row, widths)]
        return (" " * indent + "  ".join(shown)).rstrip()

    return [line(cells[0]), " " * indent + "  ".join("─" * w for w in widths)] + [line(row) for row in cells[1:]]


# -- the summary compare and regress print -----------------------------------------------------


def terminal_columns() -> int:
    """Where the printed summary wraps: the terminal's width ($COLUMNS first), 100 when not a terminal."""
    return max(60, shutil.get_terminal_size((100, 24)).columns)


def summary_lines(results: Results, columns: int = 100, examples: int = 5) -> list[str]:
    """What ``compare`` and ``regress`` print: the verdict and counts (overview.totals, the numbers
    of summary.json), the model × backend table, a fuzz run's findings, one line per root cause,
    the first unexplained mismatches. Plain text: the write-ups are in summary.md and report.html."""
    from tokparity.report.writeup import writeups

    t = overview.totals(results)
    lines = [f"tokparity {results.tokparity}: {t.verdict}", overview.count_line(t),
             single_line(f"backends: {overview.backend_versions(results)}"), ""]
    lines += table_lines(overview.RUN_COLUMNS, overview.run_rows(results), overview.NUMERIC)
    lines += ["", *(single_line(line) for line in overview.oracle_lines(results))]
    lines += fuzz_lines(results, columns)
    ws = writeups(results)
    if ws:
        lines += ["", "Root causes"]
        for w in ws:
            lines += textwrap.wrap(single_line(f"{w.model} / {w.backend}: {cause_line(w)}"), columns,
                                   initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False)
        lines += textwrap.wrap("Each one written up (symptom → implication, the most telling case's ids, the fix): "
                               "summary.md and report.html in the report folder, or tokparity explain DIR", columns)
    listed = overview.examples(results, examples)
    if listed is not None:
        lines += ["", listed.heading]
        for m in listed.cases:
            lines += example_lines(m, columns)
        lines += ["", f"Classes: {overview.run_classes(results)}"]
    lines += known_lines(results)
    return lines


def example_lines(m: Mismatch, columns: int) -> list[str]:
    """One listed mismatch: who, the class and cause, the case; its text; the evidence."""
    notes = [m.cls] + ([f"known: {m.known}"] if m.known else []) + ([f"cause {m.cause}"] if m.cause else [])
    lines = textwrap.wrap(single_line(f"{m.model} / {m.backend}  {m.corpus}/{m.case_id}  ({', '.join(notes)})"),
                          columns, initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False)
    lines += labelled("    text", quoted(m.text, 80), columns)
    return lines + labelled("    why", m.evidence[:300], columns)


def known_lines(results: Results) -> list[str]:
    lines = []
    if results.known.get("used"):
        lines += ["", single_line("Known divergences (do not fail the run): " + ", ".join(
            f"{k} {n:,}" for k, n in results.known["used"].items()))]
    for entry in results.known.get("stale", []):
        lines.append(single_line(f"⚠ stale known divergence {entry['id']} ({entry['source']}): it matched nothing; "
                                 "the upstream difference may be fixed, remove or correct the entry"))
    return lines


# -- a fuzz run's findings by cause --------------------------------------------------------------


def fuzz_lines(results: Results, columns: int = 100) -> list[str]:
    """A fuzz run's "Findings by cause" (overview.fuzz_section): a table of causes, then each
    cause's shrunk text with the ids side by side, then the seams covered; none for another run."""
    section = overview.fuzz_section(results)
    if section is None:
        return []
    lines = ["", "Findings by cause", *textwrap.wrap(single_line(section.run_line), columns, break_on_hyphens=False)]
    if section.findings:
        lines += [""] + table_lines(overview.FINDING_COLUMNS, [overview.finding_row(f) for f in section.findings],
                                    overview.FINDING_NUMERIC, indent=2)
    style = section.style
    for f in section.findings:
        lines += ["", single_line(f"  {f.title}"), *labelled("    case", f.id, columns),
                  *labelled("    text", quoted(f.text), columns)]
        if f.case is not None:
            lines += comparison_lines(f.case, style, columns, indent=4)
    if section.seams_line:
        lines += [""] + textwrap.wrap(single_line(section.seams_line), columns, break_on_hyphens=False)
    return lines


# -- labelled paragraphs ------------------------------------------------------------------------


def labelled(label: str, text: str, columns: int) -> list[str]:
    """``Label        text`` wrapped with a hanging indent (text from files and engines made one line)."""
    return textwrap.wrap(single_line(text), max(40, columns), initial_indent=pad(label, LABEL),
                         subsequent_indent=" " * LABEL,
                         break_long_words=False, break_on_hyphens=False) or [label]


def fix_lines(fixes: list[Fix], columns: int) -> list[str]:
    lines: list[str] = []
    for n, f in enumerate(fixes):
        lines += labelled("Fix" if n == 0 else "", f"{f.cause}: {f.fix}", columns)
        if f.spec:
            lines += labelled("", f"specified by {f.spec}", columns)
    return lines


# -- a run's write-up ---------------------------------------------------------------------------


def title(text: str, columns: int) -> list[str]:
    text = single_line(text)
    return [text, "━" * min(columns, max(width(text), 20))]


def writeup_lines(w: Writeup, columns: int = 100) -> list[str]:
    lines = title(f"{w.model} · {w.backend} against {w.oracle}", columns)
    lines += textwrap.wrap(single_line(w.sentence), columns, break_on_hyphens=False) + [""]
    if w.cls and not w.only_ties:
        lines += labelled("Symptom", f"{w.cls} ({w.share}): "
                                     f"{w.symptom}", columns)
        lines += labelled("→ Implication", w.implication, columns)
        lines.append("")
    if w.case is not None and not w.only_ties:
        shape = "" if prompt_like(w.case.text, w.case.tags) else " (no short prompt-like case; the shortest)"
        lines += labelled("Case", f"{w.case.corpus}/{w.case.case_id} {quoted(w.case.text, TEXT_SHOWN)}{shape}",
                          columns)
        lines += comparison_lines(w.case, w.style, columns) + [""]
    if w.cause:
        lines += labelled("Root cause", f"{w.cause}: {w.proof}", columns)
        if w.narrower:
            lines += labelled("", f"(the named deviation would also change {w.narrower:,} agreeing cases: the "
                                  "engine deviates on fewer texts than the variant does)", columns)
    elif not w.only_ties:
        lines += labelled("Root cause", "not reproduced: no variant of the reference gives the backend's ids", columns)
    per_case = ", ".join(f"{c} {n:,}" for c, n in w.case_causes)
    if per_case:
        lines += labelled("", f"case by case: {per_case}", columns)
    if w.not_reproduced and not w.only_ties:
        lines += labelled("", f"no cause reproduced for {plural(w.not_reproduced, 'mismatch')}", columns)
    if not w.only_ties:
        lines += fix_lines(w.fixes, columns) if w.fixes else labelled("Fix", "none named without a cause", columns)
    if w.ties:
        t = w.ties[0]
        lines += labelled("Ties", f"{plural(len(w.ties), 'tie')} of equal score (model.viterbi-tie): reported apart, not "
                                  "failures; "
                                  f"e.g. {t.corpus}/{t.case_id} {quoted(t.text, 60)}", columns)
        if w.only_ties:
            lines += comparison_lines(t, w.style, columns)
    for known, n in w.known:
        lines += labelled("Known", f"{known}: {plural(n, 'case')} (a reviewed divergence: reported, not failing)", columns)
    return lines


def run_lines(results: Results, folder: str, columns: int = 100) -> list[str]:
    """``tokparity explain DIR``: a header, then one write-up per (model, backend) with mismatches."""
    from tokparity.report.writeup import writeups

    ws = writeups(results)
    agreeing = [single_line(f"{r.model}/{r.backend}") for r in results.runs if not r.mismatches]
    t = overview.totals(results)
    lines = [f"{single_line(folder)}: tokparity {results.tokparity}, {len(results.runs)} model × backend runs, "
             f"{overview.count_line(t)}"]
    if agreeing:
        lines += textwrap.wrap("agree on every case: " + ", ".join(agreeing), columns, break_on_hyphens=False)
    if not ws:
        lines.append("every backend agrees with its oracle on every case: nothing to explain")
    for w in ws:
        lines += [""] + writeup_lines(w, columns)
    return lines


# -- one case -----------------------------------------------------------------------------------


def case_lines(m: Mismatch, style: str, columns: int = 100) -> list[str]:
    """``tokparity explain DIR CASE``: one mismatch, whole."""
    lines = title(f"{m.corpus}/{m.case_id} · {m.model} · {m.backend} against {m.oracle}", columns)
    lines += labelled("Text", f"{quoted(m.text)} ({len(m.text):,} characters)", columns)
    info = class_info(m.cls)
    lines += labelled("Class", f"{m.cls}: {info['symptom']}", columns)
    lines += labelled("", f"→ {info['implication']}", columns)
    lines += labelled("Evidence", m.evidence, columns)
    if m.cause:
        lines += labelled("Cause", m.cause, columns)
        if m.cause_evidence:
            lines += labelled("", m.cause_evidence, columns)
    else:
        lines += labelled("Cause", f"not reproduced{': ' + m.cause_evidence if m.cause_evidence else ''}", columns)
    if m.known:
        lines += labelled("Known", f"{m.known} (a reviewed divergence: reported, not failing)", columns)
    lines += ["", "Tokens"] + comparison_lines(m, style, columns) + [""]
    if m.cause:
        lines += fix_lines(fixes_of(m.cause), columns)
    else:
        text = shlex.quote(m.text) if m.text.isprintable() and len(m.text) <= 200 else "TEXT"
        lines += labelled("Fix", f"none named without a cause; see how the reference gets its ids: "
                                 f"tokparity encode {shlex.quote(m.model)} {text} --trace", columns)
    return lines
