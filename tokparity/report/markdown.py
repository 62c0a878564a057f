"""summary.md: short, for CI logs and pull requests.

Markdown is rendered by whatever shows it (GitHub, a CI log viewer), so text from corpora and
engines is escaped: table pipes, backticks, angle brackets and newlines cannot break out.
"""

from __future__ import annotations

from collections import Counter

from tokparity.results import Mismatch, Results
from tokparity.textview import visible

_MD_SPECIAL = str.maketrans({"|": "\\|", "`": "\\`", "<": "&lt;", ">": "&gt;", "*": "\\*", "_": "\\_",
                             "[": "\\[", "]": "\\]", "\\": "\\\\"})


def md(text: object) -> str:
    return str(text).replace("\n", " ").translate(_MD_SPECIAL)


def md_text(text: str) -> str:
    """Corpus text: whitespace and control characters made visible, then escaped."""
    return visible(text).translate(_MD_SPECIAL)


def render(results: Results, examples: int = 5) -> str:
    verdict = "✅ no unexplained mismatch" if results.unexplained == 0 else f"❌ {results.unexplained} unexplained mismatches"
    lines = [f"# tokparity {results.tokparity}: {verdict}", ""]
    versions = ", ".join(f"{md(n)} {md(i.get('version', '?'))}" for n, i in results.backends.items())
    lines += [f"Backends: {versions}", "", "| model | oracle | backend | cases | mismatches | unexplained | classes |",
              "|---|---|---|---:|---:|---:|---|"]
    for r in results.runs:
        classes = ", ".join(f"{md(c)} {n}" for c, n in sorted(r.classes.items(), key=lambda x: -x[1])) or "–"
        lines.append(f"| {md(r.model)} | {md(r.oracle)} | {md(r.backend)} | {r.cases} | {r.mismatches} | "
                     f"{r.unexplained} | {classes} |")
    if results.mismatches:
        # The unexplained ones first: they are what the reader must act on; then one example per
        # known divergence, so the list shows what each reviewed entry looks like.
        unexplained = [m for m in results.mismatches if not m.known]
        first_of: dict[str, Mismatch] = {}
        for m in results.mismatches:
            if m.known:
                first_of.setdefault(m.known, m)
        known = list(first_of.values())
        lines += ["", "## First unexplained mismatches" if unexplained else "## Known divergences, one example each", ""]
        for m in (unexplained or known)[:examples]:
            tag = f" (known: {md(m.known)})" if m.known else ""
            lines.append(f"- **{md(m.model)} / {md(m.backend)}** `{md(m.cls)}`{tag} {md(m.corpus)}/{md(m.case_id)}: "
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
