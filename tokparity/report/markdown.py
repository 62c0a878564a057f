"""summary.md: short, for CI logs and pull requests; and the summary ``compare`` prints.

``render(results, full=True)`` is summary.md: the table (classes and causes per model and
backend), then the root-cause write-up of each model and backend with mismatches (writeup.py:
the sentence naming the cause, symptom → implication, the most telling case's ids side by side,
the reproduction counts, the fix), then the first unexplained cases. ``render(results)`` is
what ``compare`` prints in the terminal: the same table, one line per root cause instead of the
write-ups.

Markdown is rendered by whatever shows it (GitHub, a CI log viewer), so text from corpora and
engines is escaped: table pipes, backticks, angle brackets, newlines, CRs, control characters and
line separators cannot break out; the
id tables are fenced code blocks, whose fence is longer than any run of backticks inside.
"""

from __future__ import annotations

import re
from collections import Counter

from tokparity.report.plain import comparison_lines
from tokparity.report.writeup import TIE, Writeup, plural, prompt_like, writeups
from tokparity.results import Mismatch, Results
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


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{md(c)} {n:,}" for c, n in sorted(counts.items(), key=lambda x: (-x[1], x[0]))) or "–"


def table(results: Results) -> list[str]:
    lines = ["| model | oracle | backend | cases | mismatches | unexplained | classes | causes |",
             "|---|---|---|---:|---:|---:|---|---|"]
    for r in results.runs:
        ties = f" ({plural(r.ties, 'tie')})" if r.ties else ""
        lines.append(f"| {md(r.model)} | {md(r.oracle)} | {md(r.backend)} | {r.cases} | {r.mismatches} | "
                     f"{r.unexplained}{ties} | {_counts(r.classes)} | {_counts(r.causes)} |")
    return lines


def one_line(w: Writeup) -> str:
    """A root cause in one line, for the terminal."""
    head = f"- **{md(w.model)} / {md(w.backend)}**: "
    if w.only_ties:
        return head + f"{plural(len(w.ties), 'tie')} of equal score ({code(TIE)}), not failures"
    if not w.cause:
        return head + f"no cause reproduced ({plural(w.summary.mismatches, 'mismatch')})"
    ties = f"; {plural(len(w.ties), 'tie')} apart" if w.ties else ""
    return head + f"{code(w.cause)} {md(w.proof)}{ties}"


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


def render(results: Results, examples: int = 5, full: bool = False) -> str:
    """summary.md with ``full``; without, the terminal's shorter form (one line per root cause)."""
    verdict = "✅ no unexplained mismatch" if results.unexplained == 0 else f"❌ {results.unexplained} unexplained mismatches"
    lines = [f"# tokparity {results.tokparity}: {verdict}", ""]
    versions = ", ".join(f"{md(n)} {md(i.get('version', '?'))}" for n, i in results.backends.items())
    lines += [f"Backends: {versions}", ""] + table(results)
    ws = writeups(results)
    if ws and full:
        lines += ["", "## Root cause, per model and backend", ""]
        for w in ws:
            lines += writeup_md(w)
    elif ws:
        lines += ["", "## Root causes", ""] + [one_line(w) for w in ws]
        lines += ["", "Each one written up (symptom → implication, the most telling case's ids, the fix): summary.md "
                      "and report.html in the report folder, or `tokparity explain DIR`."]
    if results.mismatches:
        # The unexplained ones first: they are what the reader must act on; then one example per
        # known divergence, so the list shows what each reviewed entry looks like.
        unexplained = [m for m in results.mismatches if not m.known and m.cause != TIE]
        first_of: dict[str, Mismatch] = {}
        for m in results.mismatches:
            if m.known:
                first_of.setdefault(m.known, m)
        known = list(first_of.values())
        lines += ["", "## First unexplained mismatches" if unexplained else "## Known divergences, one example each", ""]
        for m in (unexplained or known)[:examples]:
            tag = f" (known: {md(m.known)})" if m.known else ""
            cause = f" cause {code(m.cause)}" if m.cause else ""
            lines.append(f"- **{md(m.model)} / {md(m.backend)}** {code(m.cls)}{tag}{cause} {md(m.corpus)}/{md(m.case_id)}: "
                         f"{md_text(m.text[:80])} — {md(m.evidence[:200])}")
        common = Counter(m.cls for m in results.mismatches).most_common()
        lines += ["", "Classes: " + ", ".join(f"{md(c)} {n}" for c, n in common)]
    if results.known.get("used"):
        lines += ["", "Known divergences (do not fail the run): "
                  + ", ".join(f"{md(k)} {n}" for k, n in results.known["used"].items())]
    for entry in results.known.get("stale", []):
        lines.append(f"- ⚠ stale known divergence {md(entry['id'])} ({md(entry['source'])}): it matched nothing; "
                     "the upstream difference may be fixed, remove or correct the entry")
    lines.append("")
    return "\n".join(lines)
