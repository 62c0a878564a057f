"""summary.md: short, for CI logs, pull requests and GitHub's job summary.

``render(results)`` is summary.md: the verdict and counts (overview.totals: summary.json's
numbers), the table (classes and causes per model and backend), a fuzz run's findings by cause,
then the root-cause write-up of each model and backend with mismatches (writeup.py: the sentence
naming the cause, symptom → implication, the most telling case's ids side by side, the
reproduction counts, the fix), then the first unexplained cases. What ``compare`` prints in the
terminal is plain text (plain.summary_lines), from the same data.

Markdown is rendered by whatever shows it (GitHub, a CI log viewer), so text from corpora and
engines is escaped: table pipes, backticks, angle brackets, newlines, CRs, control characters and
line separators cannot break out; the
id tables are fenced code blocks, whose fence is longer than any run of backticks inside.
"""

from __future__ import annotations

import re

from tokparity.report import overview
from tokparity.report.plain import comparison_lines
from tokparity.report.writeup import TIE, Writeup, plural, prompt_like, writeups
from tokparity.run.results import Results
from tokparity.textview import single_line, visible

_MD_SPECIAL = str.maketrans({"|": "\\|", "`": "\\`", "<": "&lt;", ">": "&gt;", "*": "\\*", "_": "\\_",
                             "[": "\\[", "]": "\\]", "\\": "\\\\"})


def md(text: object) -> str:
    """Text from a corpus, an engine or a file, as one Markdown line: no CR, control character
    or line separator can start a line of its own (a heading, a list), no markup is active."""
    return single_line(text).translate(_MD_SPECIAL)


def md_text(text: str) -> str:
    """Corpus text: whitespace and control characters made visible, then escaped."""
    return visible(text).translate(_MD_SPECIAL)


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


def fuzz_md(results: Results) -> list[str]:
    """A fuzz run's "Findings by cause" (overview.fuzz_section): the table of causes, each cause's
    ids side by side, the seams covered; nothing for another run."""
    section = overview.fuzz_section(results)
    if section is None:
        return []
    lines = ["", "## Findings by cause", "", md(section.run_line), ""]
    if section.findings:
        lines += table(overview.FINDING_COLUMNS, [overview.finding_row(f) for f in section.findings],
                       overview.FINDING_NUMERIC) + [""]
    style = section.style
    for f in section.findings:
        lines += [f"### {md(f.title)}", "",
                  f"{md(f.id)}: {md_text(f.text)}", ""]
        if f.case is not None:
            lines += fenced(comparison_lines(f.case, style, indent=0)) + [""]
    if section.seams_line:
        lines += [md(section.seams_line), ""]
    return lines


def writeup_md(w: Writeup, columns: int = 100) -> list[str]:
    lines = [f"### {md(w.model)} · {md(w.backend)} against {md(w.oracle)}", "", f"**{md(w.sentence)}**", ""]
    if w.cls and not w.only_ties:
        lines += [f"- **Symptom** ({code(w.cls)}, {w.share}): "
                  f"{md(w.symptom)}", f"- **→ Implication**: {md(w.implication)}", ""]
    if w.case is not None and not w.only_ties:
        c = w.case
        shape = "" if prompt_like(c.text, c.tags) else " (no short prompt-like case; the shortest)"
        lines += [f"**Most telling case** {md(c.corpus)}/{md(c.case_id)}{shape}: {md_text(c.text[:200])}", ""]
        lines += fenced(comparison_lines(c, w.style, columns, indent=0)) + [""]
    if w.cause:
        lines.append(f"**Root cause** {code(w.cause)}: {md(w.proof)}.")
        if w.narrower:
            lines.append(f"The named deviation would also change {w.narrower:,} agreeing cases: the engine deviates "
                         "on fewer texts than the variant does.")
    elif not w.only_ties:
        lines.append("**Root cause** not reproduced: no variant of the reference gives the backend's ids.")
    extra = []
    if w.case_causes:
        extra.append("case by case: " + ", ".join(f"{code(c)} {n:,}" for c, n in w.case_causes))
    if w.not_reproduced and not w.only_ties:
        extra.append(f"no cause reproduced for {plural(w.not_reproduced, 'mismatch')}")
    if extra:
        said = "; ".join(extra)
        lines += ["", said[:1].upper() + said[1:] + "."]
    if not w.only_ties:
        lines += ["", "**Fix**"]
        lines += [f"- {code(f.cause)}: {md(f.fix)}" + (f" (specified by {code(f.spec)})" if f.spec else "")
                  for f in w.fixes] or ["- none named without a cause"]
    if w.ties:
        t = w.ties[0]
        lines += ["", f"**Ties**: {plural(len(w.ties), 'tie')} of equal score ({code(TIE)}): two segmentations the "
                      f"model scores the same, reported apart, not failures; e.g. {md(t.corpus)}/{md(t.case_id)} "
                      f"{md_text(t.text[:80])}"]
    if w.known:
        lines += ["", "Known divergences (reviewed, reported, not failing): "
                  + ", ".join(f"{md(k)} {n:,}" for k, n in w.known)]
    return lines + [""]


def render(results: Results, examples: int = 5) -> str:
    """summary.md."""
    t = overview.totals(results)
    lines = [f"# tokparity {md(results.tokparity)}: {t.verdict}", "", md(overview.count_line(t)), "",
             f"Backends: {md(overview.backend_versions(results))}", ""]
    lines += table(overview.RUN_COLUMNS, overview.run_rows(results), overview.NUMERIC)
    lines += ["", *(f"- {md(line)}" for line in overview.oracle_lines(results))]
    lines += fuzz_md(results)
    ws = writeups(results)
    if ws:
        lines += ["", "## Root cause, per model and backend", ""]
        for w in ws:
            lines += writeup_md(w)
    listed = overview.examples(results, examples)
    if listed is not None:
        lines += ["", f"## {listed.heading}", ""]
        for m in listed.cases:
            tag = f" (known: {md(m.known)})" if m.known else ""
            cause = f" cause {code(m.cause)}" if m.cause else ""
            lines.append(f"- **{md(m.model)} / {md(m.backend)}** {code(m.cls)}{tag}{cause} {md(m.corpus)}/{md(m.case_id)}: "
                         f"{md_text(m.text[:80])} — {md(m.evidence[:200])}")
        lines += ["", "Classes: " + md(overview.run_classes(results))]
    if results.known.get("used"):
        lines += ["", "Known divergences (do not fail the run): "
                  + ", ".join(f"{md(k)} {n}" for k, n in results.known["used"].items())]
    for entry in results.known.get("stale", []):
        lines.append(f"- ⚠ stale known divergence {md(entry['id'])} ({md(entry['source'])}): it matched nothing; "
                     "the upstream difference may be fixed, remove or correct the entry")
    lines.append("")
    return "\n".join(lines)
