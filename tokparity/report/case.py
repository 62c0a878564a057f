"""One case, whole: what ``tokparity explain DIR CASE`` prints, each mismatch of the case as an
article (its text, class, evidence, shape, cause, tokens and fix), built from the same nodes as
the report (tokparity.report.build)."""

from __future__ import annotations

import shlex

from tokparity.diff.explain import class_info
from tokparity.records import Mismatch
from tokparity.report import overview
from tokparity.report.nodes import TEXT, Article, Block, Document, FixList, Paragraph, Part, Run, Section, runs
from tokparity.report.outputs import decoded_outputs, mismatch_comparison
from tokparity.report.pieces import PLAIN
from tokparity.report.writeup import fixes_of, no_cause
from tokparity.textview import visible

CONTENT_SHOWN = 200  # characters of each message's content in a chat case


def case_document(cases: list[Mismatch], styles: dict[str, str], diagnosed: bool = True) -> Document:
    """``explain DIR CASE``: each mismatch of the case, whole (one per backend that differs).
    ``diagnosed``: False for a run made with --no-diagnose."""
    return Document((), (Section("case", "", tuple(case_article(m, styles.get(m.model, PLAIN), diagnosed)
                                                   for m in cases)),))


def case_article(m: Mismatch, style: str, diagnosed: bool = True) -> Article:
    info = class_info(m.cls)
    said = Part("Conversation", (Paragraph(runs(overview.conversation_line(m.text, CONTENT_SHOWN))),)) \
        if m.op == "chat" else Part("Text", (Paragraph(runs(Run(visible(m.text), TEXT), f" ({len(m.text):,} characters)")),))
    blocks: list[Block] = [
        said,  # (a chat case's JSON, each space marked, read as noise: each message's role and content)
        Part("Class", (Paragraph(runs(f"{m.cls}: {info['symptom']}")), Paragraph(runs(f"→ {info['implication']}")))),
        Part("Evidence", (Paragraph(runs(m.evidence)),)),
        *((Part("What it did", (Paragraph(runs(m.shape)),)),) if m.shape else ()),
    ]
    if m.cause:
        blocks.append(Part("Cause", (Paragraph(runs(m.cause)),)
                           + ((Paragraph(runs(m.cause_evidence)),) if m.cause_evidence else ())))
    else:
        blocks.append(Part("Cause", (Paragraph(runs(no_cause(m, diagnosed))),)))
    if m.known:
        blocks.append(Part("Known", (Paragraph(runs(f"{m.known} (a reviewed divergence: reported, not failing)")),)))
    if m.op in ("decode", "stream", "pieces"):  # (the ids are the same on both sides: their texts differ)
        blocks.append(Part("Answers", (decoded_outputs(m, style),)))
    else:
        blocks.append(Part("Tokens", (mismatch_comparison(m, style),)))
    if m.cause:
        blocks.append(Part("Fix", (FixList(tuple(fixes_of(m.cause))),)))
    elif m.op == "chat":
        blocks.append(Part("Prompts", tuple(Paragraph(runs(f"{who}: {visible(output[0]) if output else '(none)'}"))
                                           for who, output in ((m.oracle, m.oracle_output),
                                                               (m.backend, m.backend_output)))))
    else:
        text = shlex.quote(m.text) if m.text.isprintable() and len(m.text) <= 200 else "TEXT"
        blocks.append(Part("Fix", (Paragraph(runs(
            "none named without a cause; see how the reference gets its ids: "
            f"tokparity encode {shlex.quote(m.model)} {text} --trace")),)))
    return Article(runs(f"{m.corpus}/{m.case_id} · {m.model} · {m.backend} against {m.oracle}"), tuple(blocks),
                   "explain-case")
