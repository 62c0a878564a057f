"""summary.md: short, for CI logs, pull requests and GitHub's job summary.

``render(results)`` is summary.md: build.py's summary view (the verdict and counts, the table of
classes and causes per model and backend, a fuzz run's findings by cause, the root-cause
write-up of each model and backend with mismatches, the first unexplained cases), laid out in
Markdown by ``markdown(document)``: a block is a paragraph of its own, a blank line between two.
What ``compare`` prints in the terminal is plain text (plain.py), from the same builder.

Markdown is rendered by whatever shows it (GitHub, a CI log viewer), so text from corpora and
engines is escaped: table pipes, backticks, angle brackets, newlines, CRs, control characters and
line separators cannot break out; the
id tables are fenced code blocks, whose fence is longer than any run of backticks inside.
"""

from __future__ import annotations

import re

from tokparity.report import nodes as n
from tokparity.report.build import SUMMARY, build
from tokparity.report.plain import alignment_lines, comparison_lines
from tokparity.run.results import Results
from tokparity.textview import single_line

_MD_SPECIAL = str.maketrans({"|": "\\|", "`": "\\`", "<": "&lt;", ">": "&gt;", "*": "\\*", "_": "\\_",
                             "[": "\\[", "]": "\\]", "\\": "\\\\"})


def md(text: object) -> str:
    """Text from a corpus, an engine or a file, as one Markdown line: no CR, control character
    or line separator can start a line of its own (a heading, a list), no markup is active."""
    return single_line(text).translate(_MD_SPECIAL)


def code(text: str) -> str:
    """An inline code span that no backtick in ``text`` can close, nor a line break end."""
    text = single_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"`{text}`"


def fenced(lines: list[str]) -> list[str]:
    body = "\n".join(lines)
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    return [fence] + lines + [fence]


def table(columns: tuple[str, ...], rows: list[tuple[str, ...]], numeric: frozenset[str] = frozenset()) -> list[str]:
    """A Markdown table of plain-text cells (each escaped), numbers right-aligned."""
    return (["| " + " | ".join(columns) + " |", "|" + "|".join("---:" if c in numeric else "---" for c in columns) + "|"]
            + ["| " + " | ".join(md(c) for c in row) + " |" for row in rows])


def inline(runs: n.Inline) -> str:
    """Inline text in Markdown: names as code spans, everything else escaped."""
    out = []
    for r in runs:
        if r.style in (n.CODE, n.CLASS):
            out.append(code(r.text))
        elif r.style == n.TEXT:  # (made visible by the builder)
            out.append(r.text.translate(_MD_SPECIAL))
        elif r.style == n.STRONG:
            out.append(f"**{md(r.text)}**")
        elif r.style == n.BREAK:
            out.append(" ")
        else:
            out.append(md(r.text))
    return "".join(out)


def markdown(doc: n.Document) -> str:
    """``doc`` as Markdown: the header, then each section under its ``##`` title."""
    parts = [blocks(doc.header)]
    for s in doc.sections:
        body = blocks(s.blocks)
        parts.append(f"## {md(s.title)}\n\n{body}" if s.title else body)
    return "\n\n".join(p for p in parts if p) + "\n"


def blocks(bs: tuple[n.Block, ...], level: int = 3) -> str:
    return "\n\n".join(shown for b in bs if (shown := block(b, level)))


def block(b: n.Block, level: int = 3) -> str:
    if isinstance(b, n.Paragraph):
        text = inline(b.runs)
        return f"**{text}**" if b.tone == "lead" else text
    if isinstance(b, n.Title):
        return f"# tokparity {md(b.version)}: {md(b.text)}"
    if isinstance(b, n.Fields):
        return "\n".join(f"- **{md(label)}**: {inline(text)}" for label, text in b.rows)
    if isinstance(b, n.Table):
        return "\n".join(table(b.columns, [tuple(n.plain(c) for c in row) for row in b.rows], b.numeric))
    if isinstance(b, n.Items):
        return "\n".join(f"- {inline(e)}" for e in b.entries)
    if isinstance(b, n.FixList):
        return "\n".join(f"- {code(f.cause)}: {md(f.fix)}" + (f" (specified by {code(f.spec)})" if f.spec else "")
                         for f in b.fixes)
    if isinstance(b, n.Comparison):
        return "\n".join(fenced(comparison_lines(b, indent=0)))
    if isinstance(b, n.Alignment):
        return "\n".join(fenced(alignment_lines(b)))
    if isinstance(b, n.Quote):
        return (b.text.translate(_MD_SPECIAL) + md(b.more)) or "(empty)"
    if isinstance(b, n.Sample):
        note = f" {md(b.note)}" if b.note else ""
        return (f"**{md(b.title)}** {md(b.ref)}{note}: {b.text.translate(_MD_SPECIAL)}{md(b.more)}\n\n"
                + "\n".join(fenced(comparison_lines(b.comparison, indent=0))))
    if isinstance(b, n.Listing):
        return "\n".join(f"- **{md(e.who)}** {md(e.ref)} ({', '.join(inline(x) for x in e.notes)}): "
                         f"{inline(e.text)} — {md(e.evidence)}" + (f" What it did: {md(e.shape)}." if e.shape else "")
                         for e in b.entries)
    if isinstance(b, n.Part):
        return part(b, level)
    if isinstance(b, n.Article):
        return "\n\n".join(x for x in (f"{'#' * level} {inline(b.title)}", blocks(b.blocks, level + 1)) if x)
    if isinstance(b, n.Details):
        return f"<details><summary>{md(b.summary)}</summary>\n\n{blocks(b.blocks, level)}\n\n</details>"
    if isinstance(b, n.Filters):
        return ""  # the page's selects: nothing to select in Markdown
    raise TypeError(f"no Markdown form for {type(b).__name__}")


def part(p: n.Part, level: int) -> str:
    """``**Root cause** first paragraph``, then the part's other blocks; a list goes on the line
    after the title."""
    lead = f"**{md(p.title)}**"
    rest = p.blocks
    if rest and isinstance(rest[0], n.Paragraph):
        lead += " " + block(rest[0], level)
        rest = rest[1:]
    elif rest and isinstance(rest[0], n.FixList):
        lead += "\n" + block(rest[0], level)
        rest = rest[1:]
    return "\n\n".join([lead] + [shown for b in rest if (shown := block(b, level))])


def render(results: Results, examples: int = 5) -> str:
    """summary.md."""
    return markdown(build(results, SUMMARY, examples=examples))
