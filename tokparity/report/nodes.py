"""The report as a tree of typed nodes: what ``build.py`` makes of a run, and what the renderers
(``html.py``, ``markdown.py``, ``plain.py``) lay out, each in its own markup.

A node holds what to show, already worded and counted; it never holds a decision. Whether a run
has a root cause, a tie, a known divergence, which case is the most telling: the builder decides,
and a renderer only shows the nodes it is given, every one of them, in order. So report.html,
summary.md, the terminal and ``tokparity explain`` cannot say different things.

Inline text is a tuple of ``Run``s (plain text, code, a class badge, a corpus text, a tone).
Blocks: ``Paragraph``, ``Title`` (the verdict line), ``Fields`` (label → text rows), ``Table``,
``Items`` (a bulleted list), ``FixList``, ``Comparison`` (two id/piece rows, the differences
marked), ``Alignment`` (the same, as rows of aligned runs), ``Quote`` (a corpus text), ``Sample``
(a case shown whole), ``Listing`` (mismatches, one line each), ``Part`` (a labelled part of a
write-up), ``Article`` (a write-up, a finding, a mismatch), ``Details`` (folded away), ``Filters``
(the page's selects). A ``Document`` is a header and ``Section``s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# -- inline text ----------------------------------------------------------------------------------

# Styles of a run. The tones are hints a renderer may show (the HTML as a class), never content.
CODE = "code"  # a name: a cause, a flag, a module
CLASS = "class"  # a bug class, shown as a badge
KNOWN = "known"  # a known divergence, shown as a badge
TEXT = "text"  # a corpus text, its whitespace already made visible (textview.visible)
STRONG = "strong"
MUTED, OK, BAD, CAUSES = "muted", "ok", "bad", "causes"  # tones
BREAK = "break"  # a line break inside a table cell


@dataclass(frozen=True)
class Run:
    text: str
    style: str = ""
    note: str = ""  # a tooltip: the HTML shows it on hover, text formats leave it out


Inline = tuple[Run, ...]


def runs(*parts: str | Run) -> Inline:
    """``runs("cause ", Run("x", CODE))``: plain strings become plain runs."""
    return tuple(p if isinstance(p, Run) else Run(p) for p in parts if p != "")


def plain(inline: Inline) -> str:
    """The text of ``inline`` without its styles (a line break as a space)."""
    return "".join(" " if r.style == BREAK else r.text for r in inline)


# -- the token comparison -------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    id: int
    piece: str  # readable (pieces.readable)
    stored: str  # as the vocabulary spells it


@dataclass(frozen=True)
class Span:
    """A run of the comparison: ``same`` tokens (both sides), a ``diff`` (each side's own) or a
    ``gap`` of ``skipped`` equal tokens not shown."""

    kind: str
    oracle: tuple[Token, ...] = ()
    backend: tuple[Token, ...] = ()
    skipped: int = 0
    start: int = 0  # index of the span's first token in the oracle's ids


@dataclass(frozen=True)
class Comparison:
    """Two id lists aligned: the first difference (and every later one) in the same column."""

    oracle: str  # the oracle's label, the backend's: what the rows are called where there is room
    backend: str
    spans: tuple[Span, ...]

    @property
    def first(self) -> int | None:
        return next((s.start for s in self.spans if s.kind == "diff"), None)

    @property
    def caption(self) -> str:
        first = self.first
        return f"first difference at token {first}" if first is not None else "the ids are equal"


@dataclass(frozen=True)
class AlignedRow:
    """A row of an ``Alignment``: an ``equal`` run (both sides), a ``diff`` (each side's own), or a
    ``fold`` of a long equal run: its first and last tokens, ``skipped`` between them."""

    kind: str
    oracle: tuple[Token, ...]
    backend: tuple[Token, ...]
    oracle_start: int  # index of the row's first token in each side's ids
    backend_start: int
    skipped: int = 0
    tail: tuple[Token, ...] = ()  # a fold's last tokens (``oracle`` holds its first ones)


@dataclass(frozen=True)
class Alignment:
    """Both id lists as the classifier aligned them, one row per run (the list of mismatches)."""

    oracle: str
    backend: str
    rows: tuple[AlignedRow, ...]


# -- blocks ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paragraph:
    runs: Inline
    tone: str = ""  # "lead" (a write-up's opening sentence), "muted", "bad", "ok", "evidence", "cause"


@dataclass(frozen=True)
class Title:
    """The document's title line: ``tokparity 0.1.0: ❌ 5 mismatches to review``."""

    version: str
    text: str
    ok: bool


@dataclass(frozen=True)
class Fields:
    """Label → text rows (symptom → implication)."""

    rows: tuple[tuple[str, Inline], ...]


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[Inline, ...], ...]
    numeric: frozenset[str] = frozenset()  # columns right-aligned
    row_headers: bool = False  # each row's first cell heads it


@dataclass(frozen=True)
class Items:
    """A bulleted list, one inline text per item."""

    entries: tuple[Inline, ...]


@dataclass(frozen=True)
class Fix:
    cause: str  # one catalogue name (a part of a +-joined cause)
    fix: str  # the flag or stage to change
    spec: str  # the reference module that specifies the right behaviour


@dataclass(frozen=True)
class FixList:
    fixes: tuple[Fix, ...]


@dataclass(frozen=True)
class Quote:
    """A corpus text on its own, whitespace made visible (as in ``Run(…, TEXT)``)."""

    text: str
    more: str = ""  # "… (1,234 characters)" when the text is cut


@dataclass(frozen=True)
class Sample:
    """A case shown whole: which, its text, its ids side by side (a write-up's most telling case)."""

    title: str  # "Most telling case"
    label: str  # the same in a narrow label column: "Case"
    ref: str  # corpus/case_id
    note: str  # "" or a remark on the choice, in parentheses
    text: str  # whitespace made visible
    more: str  # "… (1,234 characters)" when the text is cut
    comparison: Comparison


@dataclass(frozen=True)
class Listed:
    """One mismatch in a short list: who, which case, what it is, its text, why."""

    who: str  # model / backend
    ref: str
    notes: tuple[Inline, ...]  # the class, the known divergence, the cause
    text: Inline
    evidence: str
    shape: str = ""  # what the backend did (tokparity.diff.shape), where the run has no cause for it


@dataclass(frozen=True)
class Listing:
    entries: tuple[Listed, ...]


@dataclass(frozen=True)
class Part:
    """A labelled part of a write-up: "Root cause", "Fix", "Ties"."""

    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Article:
    """A write-up, a finding, a mismatch of the page's list: a title and its blocks."""

    title: Inline
    blocks: tuple[Block, ...]
    kind: str = ""  # "writeup", "finding", "case", "explain-case"
    data: tuple[tuple[str, str], ...] = ()  # what the page's filters select on (data-* attributes)


@dataclass(frozen=True)
class Details:
    """Blocks folded under a summary line (the page's every-class table)."""

    summary: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Filters:
    """The page's filters of its list of mismatches: (name, label, values) per select."""

    selects: tuple[tuple[str, str, tuple[str, ...]], ...]


Block = (Paragraph | Title | Fields | Table | Items | FixList | Comparison | Alignment | Quote | Sample | Listing
         | Part | Article | Details | Filters)


@dataclass(frozen=True)
class Section:
    name: str  # the page's anchor: summary, findings, root-cause, tags, mismatches, …
    title: str  # "" for none
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Document:
    header: tuple[Block, ...] = ()
    sections: tuple[Section, ...] = field(default_factory=tuple)
