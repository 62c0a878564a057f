"""The report as plain text for a terminal: ``lines(document, columns)`` lays out a document of
build.py (aligned tables, no Markdown, no HTML entities). ``compare`` and ``regress`` print the
digest view (``summary_lines``), ``tokparity explain`` the explain view and one case whole
(``run_lines``, ``case_lines``); summary.md holds its id tables as this module writes them.

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

import shutil
import textwrap
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from tokparity.records import Mismatch
from tokparity.report import nodes as n
from tokparity.report.build import DIGEST, EXPLAIN, build
from tokparity.report.case import case_document
from tokparity.report.nodes import Comparison, Fix, Span, Token
from tokparity.run.results import Results
from tokparity.textview import single_line

LABEL = 15  # width of the "Root cause" column of labels
ROW_LABELS = ("oracle", "backend")


def width(s: str) -> int:
    """Terminal columns: East Asian wide characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def pad(s: str, n: int) -> str:
    return s + " " * (n - width(s))


def quoted(shown: str, more: str = "") -> str:
    """A corpus text (made visible by the builder) in quotes, ``… (1,234 characters)`` after when cut."""
    return f"'{shown}'{more}"


# -- the aligned comparison ---------------------------------------------------------------------


@dataclass
class _Column:
    cells: tuple[str, str, str, str]  # oracle ids, oracle pieces, backend ids, backend pieces
    differs: bool

    @property
    def width(self) -> int:
        return max(width(c) for c in self.cells)


def _side(tokens: Sequence[Token]) -> tuple[str, str]:
    if not tokens:
        return "(none)", ""
    widths = [max(width(str(t.id)), width(t.piece)) for t in tokens]
    return (" ".join(pad(str(t.id), w) for t, w in zip(tokens, widths)).rstrip(),
            " ".join(pad(t.piece, w) for t, w in zip(tokens, widths)).rstrip())


def _chunks(tokens: tuple[Token, ...], room: int) -> list[list[Token]]:
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


def _columns(spans: tuple[Span, ...], room: int) -> list[_Column]:
    cols = []
    for b in spans:
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


def comparison_lines(comp: Comparison, columns: int = 100, indent: int = 2) -> list[str]:
    """The two id lists of ``comp`` with their readable pieces, aligned, wrapped at ``columns``."""
    head = " " * indent
    label_w = max(len(s) for s in ROW_LABELS) + 2
    room = max(20, columns - indent - label_w)
    lines = [head + comp.caption]
    cols = _columns(comp.spans, room)
    rows: list[list[_Column]] = [[]]
    used = 0
    for c in cols:
        if rows[-1] and used + c.width > room:
            rows.append([])
            used = 0
        rows[-1].append(c)
        used += c.width + 1
    for k, row in enumerate(rows):
        if k:
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




# -- labelled paragraphs ------------------------------------------------------------------------


def labelled(label: str, text: str, columns: int) -> list[str]:
    """``Label        text`` wrapped with a hanging indent (text from files and engines made one line).
    A label as wide as the column (``template+llama.cpp``) keeps one space before its text."""
    head = pad(label, LABEL) if width(label) < LABEL else label + " "
    return textwrap.wrap(single_line(text), max(40, columns), initial_indent=head,
                         subsequent_indent=" " * LABEL,
                         break_long_words=False, break_on_hyphens=False) or [label]


def fix_lines(fixes: tuple[Fix, ...], columns: int, label: str = "Fix") -> list[str]:
    lines: list[str] = []
    for k, f in enumerate(fixes):
        lines += labelled(label if k == 0 else "", f"{f.cause}: {f.fix}", columns)
        if f.spec:
            lines += labelled("", f"specified by {f.spec}", columns)
    return lines


def title(text: str, columns: int) -> list[str]:
    text = single_line(text)
    return [text, "━" * min(columns, max(width(text), 20))]


def wrapped(text: str, columns: int, indent: str = "", hanging: str = "") -> list[str]:
    return textwrap.wrap(single_line(text), columns, initial_indent=indent, subsequent_indent=hanging,
                         break_on_hyphens=False)


# -- a document -----------------------------------------------------------------------------------


def terminal_columns() -> int:
    """Where the printed summary wraps: the terminal's width ($COLUMNS first), 100 when not a terminal."""
    return max(60, shutil.get_terminal_size((100, 24)).columns)


def inline(runs: n.Inline) -> str:
    """Inline text as a terminal shows it: a corpus text in quotes, every style else plain."""
    return "".join(quoted(r.text) if r.style == n.TEXT else " " if r.style == n.BREAK else r.text for r in runs)


def lines(doc: n.Document, columns: int = 100) -> list[str]:
    """``doc`` for a terminal: the header one line each (never wrapped: a CI log greps them), then
    each section after a blank line, its title on a line of its own."""
    out = [line for b in doc.header for line in header_lines(b, columns)]
    for s in doc.sections:
        body = ([single_line(s.title)] if s.title else []) + blocks(s.blocks, columns)
        if out and body:
            out.append("")
        out += body
    return out


def header_lines(b: n.Block, columns: int) -> list[str]:
    if isinstance(b, n.Paragraph):
        return [single_line(inline(b.runs))]
    return block(b, columns)


def blocks(bs: tuple[n.Block, ...], columns: int) -> list[str]:
    """Blocks one after the other, a blank line between two; the labelled parts of a write-up
    (Root cause, Fix) form one column of labels, apart from one that holds a token comparison."""
    out: list[str] = []
    prev: n.Block | None = None
    for b in bs:
        shown = block(b, columns)
        if not shown:
            continue
        if out and not (_tight(prev) and _tight(b)):
            out.append("")
        out += shown
        prev = b
    return out


def _tight(b: n.Block | None) -> bool:
    return isinstance(b, n.Part) and not any(isinstance(x, n.Comparison) for x in b.blocks)


def block(b: n.Block, columns: int) -> list[str]:
    if isinstance(b, n.Paragraph):
        return wrapped(inline(b.runs), columns)
    if isinstance(b, n.Title):
        return [single_line(f"tokparity {b.version}: {b.text}")]
    if isinstance(b, n.Fields):
        return [line for label, text in b.rows for line in labelled(label, inline(text), columns)]
    if isinstance(b, n.Table):
        return table_lines(b.columns, [tuple(inline(c) for c in row) for row in b.rows], b.numeric)
    if isinstance(b, n.Items):
        return [line for e in b.entries for line in wrapped(inline(e), columns, "  ", "      ")]
    if isinstance(b, n.FixList):
        return fix_lines(b.fixes, columns, "")
    if isinstance(b, n.Comparison):
        return comparison_lines(b, columns)
    if isinstance(b, n.Alignment):
        return alignment_lines(b)
    if isinstance(b, n.Quote):
        return wrapped(quoted(b.text, b.more), columns)
    if isinstance(b, n.Sample):
        note = f" {b.note}" if b.note else ""
        return labelled(b.label, f"{b.ref} {quoted(b.text, b.more)}{note}", columns) + comparison_lines(b.comparison,
                                                                                                        columns)
    if isinstance(b, n.Listing):
        return [line for e in b.entries for line in listed_lines(e, columns)]
    if isinstance(b, n.Part):
        return part_lines(b, columns)
    if isinstance(b, n.Article):
        return title(inline(b.title), columns) + blocks(b.blocks, columns)
    if isinstance(b, n.Details):
        return [single_line(b.summary)] + blocks(b.blocks, columns)
    if isinstance(b, n.Filters):
        return []  # the page's selects: nothing to select in a terminal
    raise TypeError(f"no plain-text form for {type(b).__name__}")


def part_lines(p: n.Part, columns: int) -> list[str]:
    """The part's title in the column of labels, beside its first paragraph (or over a block of
    its own, such as the ids side by side)."""
    out: list[str] = []
    label = p.title
    for x in p.blocks:
        if isinstance(x, n.Paragraph):
            out += labelled(label, inline(x.runs), columns)
        elif isinstance(x, n.FixList):
            out += fix_lines(x.fixes, columns, label)
        else:
            out += ([label] if label else []) + block(x, columns)
        label = ""
    return out


def listed_lines(e: n.Listed, columns: int) -> list[str]:
    """One listed mismatch: who, the case, the class and cause; its text; the evidence."""
    notes = ", ".join(inline(x) for x in e.notes)
    return (wrapped(f"{e.who}  {e.ref}  ({notes})", columns, "  ", "      ")
            + labelled("    text", inline(e.text), columns) + labelled("    why", e.evidence, columns)
            + (labelled("    did", e.shape, columns) if e.shape else []))


def alignment_lines(a: n.Alignment) -> list[str]:
    """The aligned runs, one line each: the oracle's ids | the backend's."""
    out = []
    for row in a.rows:
        if row.kind == "fold":
            out.append(f"  {' '.join(str(t.id) for t in row.oracle)} … {row.skipped} equal … "
                       f"{' '.join(str(t.id) for t in row.tail)}")
        else:
            out.append(f"  {' '.join(str(t.id) for t in row.oracle) or '(none)'} | "
                       f"{' '.join(str(t.id) for t in row.backend) or '(none)'}")
    return out


# -- what the commands print ----------------------------------------------------------------------


def summary_lines(results: Results, columns: int = 100, examples: int = 5) -> list[str]:
    """What ``compare`` and ``regress`` print: the digest view (the verdict and counts, the model ×
    backend table, one line per root cause, the first mismatches to review)."""
    return lines(build(results, DIGEST, examples=examples), columns)


def run_lines(results: Results, folder: str, columns: int = 100) -> list[str]:
    """``tokparity explain DIR``: a header, then one write-up per (model, backend) with mismatches."""
    return lines(build(results, EXPLAIN, folder=folder), columns)


def case_lines(cases: list[Mismatch], styles: dict[str, str], columns: int = 100, diagnosed: bool = True
               ) -> list[str]:
    """``tokparity explain DIR CASE``: each mismatch of the case, whole (``diagnosed``: False for a
    run made with --no-diagnose)."""
    return lines(case_document(cases, styles, diagnosed), columns)
