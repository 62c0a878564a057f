"""The reports' section on what each model's files hold (``compare --check``; tokparity/checks).

The page, summary.md and ``explain`` show a row per model and property, then each finding with the
file and key that say so and its smallest example. The terminal shows a line per broken property.
"""

from __future__ import annotations

from collections.abc import Sequence

from tokparity.checks import BROKEN, HELD, MARKED, NOT_CHECKED, PROPERTIES, ModelCheck, PropertyCheck
from tokparity.report.nodes import BAD, CODE, MUTED, OK, Block, Inline, Items, Paragraph, Run, Table, runs

TITLE = "What the files hold"
TONES = {HELD: OK, BROKEN: BAD, NOT_CHECKED: MUTED}


def section(checks: Sequence[ModelCheck], terminal: bool) -> tuple[str, tuple[Block, ...]] | None:
    """The section, or None for a run without ``--check``. ``terminal``: a line per broken property."""
    if not checks:
        return None
    if terminal:
        lines = [runs(f"{c.model} / {p.name}: ", Run("✗ ", BAD), _first_said(p)) for c in checks
                 for p in c.properties if p.status == BROKEN]
        if lines:
            return TITLE, (Items(tuple(lines)),)
        if not any(c.checked for c in checks):  # (nothing checked is no green)
            why = next((p.why for c in checks for p in c.properties if p.why), "")
            return TITLE, (Paragraph(runs(Run(f"nothing could be checked: {why}", BAD))),)
        return TITLE, (Paragraph(runs(Run("every property checked holds on every model", OK))),)
    shown = [p for p in PROPERTIES if any(q.name == p for c in checks for q in c.properties)]
    table = Table(("model", *shown), tuple(_row(c, shown) for c in checks), row_headers=True)
    blocks: list[Block] = [Paragraph(runs("Each property of the model's files, checked with no engine under test, "
                                          "as ", Run("tokparity check", CODE), " does.")), table]
    for c in checks:
        for p in c.properties:
            said = _said(p)
            if said:
                blocks.append(Paragraph(runs(Run(f"{c.model} / {p.name}", CODE), f": {_status_word(p)}")))
                blocks.append(Items(tuple(said)))
    return TITLE, tuple(blocks)


def _row(check: ModelCheck, shown: list[str]) -> tuple[Inline, ...]:
    by_name = {p.name: p for p in check.properties}
    return (runs(check.model), *(runs(Run(MARKED[by_name[n].status], TONES[by_name[n].status])) if n in by_name
                                 else runs(Run("–", MUTED)) for n in shown))


def _status_word(p: PropertyCheck) -> str:
    """The status as it is spelt ("held", "broken", "not checked"), and why where it says why."""
    return p.status + (f" ({p.why})" if p.why else "")


def _said(p: PropertyCheck) -> list[Inline]:
    """Each finding: what it breaks, where the files say so, its example. A finding that breaks
    nothing is said too, muted."""
    lines = []
    for f in p.findings:
        where = f" Where: {f.where}." if f.where else ""
        example = f" Example: {f.example}." if f.example else ""
        lines.append(runs(Run("✗ " if f.broken else "· ", BAD if f.broken else MUTED), f.said + where + example))
    return lines


def _first_said(p: PropertyCheck) -> str:
    broken = [f for f in p.findings if f.broken]
    more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
    return (broken[0].said + more) if broken else "broken"
