"""The report, built once: a run's ``Results`` in, a ``nodes.Document`` out, which html.py,
markdown.py and plain.py only lay out.

    doc = build(results, PAGE)        # report.html
    doc = build(results, SUMMARY)     # summary.md
    doc = build(results, DIGEST)      # what compare and regress print
    doc = build(results, EXPLAIN, folder="reports/x")   # tokparity explain DIR

Every decision of the reports is taken on this side, once: here (what each section holds, in
which view, what each sentence says), in writeup.py (a write-up's cause, its most telling case,
its ties and fixes) and in overview.py (the run's counts, tag rates, the mismatches listed). A
view is one output: the page (report.html) shows everything, summary.md the write-ups and the
first cases, the terminal digest one line per root cause, ``explain`` the write-ups alone.

To add a section: write a function ``def name(src: Source) -> tuple[str, Blocks] | None`` giving
the section's title and blocks (None where the section has nothing to say, or in a view that does
not show it: ``src.view``), and add one entry to ``SECTIONS``, where it belongs in the order.
Every renderer shows it, with the node kinds of ``nodes.py`` (a new kind of node needs a case in
each renderer: tests/report/test_document.py renders one of each).

What the builder reads of a run that is not a plain field (a summary's ``root_cause``, a fuzz
run's findings and seams in ``results.options``, the known-divergence notes) is read by the
accessors at the top of this module, and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from tokparity.diagnose.info import is_stage_level
from tokparity.diagnose.verdict import sentence as diagnose_sentence
from tokparity.diff.explain import class_info
from tokparity.records import BREAKS_LISTED, Mismatch, RootCause
from tokparity.report import overview
from tokparity.report.files import section as files_section
from tokparity.report.nodes import (
    BAD,
    BREAK,
    CAUSES,
    CLASS,
    CODE,
    KNOWN,
    MUTED,
    OK,
    Article,
    Block,
    Details,
    Document,
    Fields,
    Filters,
    FixList,
    Inline,
    Items,
    Listed,
    Listing,
    Paragraph,
    Part,
    Quote,
    Run,
    Sample,
    Section,
    Table,
    Title,
    runs,
)
from tokparity.report.outputs import (
    CASE_SHOWN,
    alignment,
    comparison_of,
    cut,
    decoded_outputs,
    joined,
    mismatch_comparison,
    text_runs,
)
from tokparity.report.pieces import PLAIN
from tokparity.report.writeup import (
    NOT_DIAGNOSED,
    TIE,
    Writeup,
    cause_line,
    no_cause,
    op_object,
    op_subject,
    piece_styles,
    plural,
    prompt_like,
    writeup,
)
from tokparity.run.known import SHIPPED
from tokparity.run.results import NOT_OPENED, Results, RunSummary
from tokparity.textview import visible

# -- accessors: what the builder reads of a run beyond its plain fields ----------------------------


def root_cause(summary: RunSummary) -> RootCause | None:
    """The run-level verdict of a model × backend (None: no mismatch, or no variant reproduced one)."""
    return summary.root_cause


def verdict_sentence(summary: RunSummary) -> str:
    """The sentence tokparity.diagnose.verdict opens a write-up with."""
    unanswered = summary.classes.get("crash", 0) + summary.classes.get("timeout", 0)
    return diagnose_sentence(summary.model, op_subject(summary), op_object(summary), summary.root_cause,
                             summary.mismatches, summary.ties, unanswered)


def fuzz_run(results: Results) -> overview.FuzzSection | None:
    """A fuzz run's findings by cause (most cases first) and seams; None for another run."""
    fuzz = results.fuzz
    if fuzz is None:
        return None
    found = sorted(fuzz.findings, key=lambda f: (-f.count, f.found_after, f.id))
    return overview.FuzzSection(found, list(fuzz.seams), fuzz.cases, results.seconds, fuzz.by_source)


def diagnosed(results: Results) -> bool:
    """Whether the run looked for causes (False: it was made with --no-diagnose)."""
    return bool(results.options.get("diagnose", True))


def not_opened(results: Results) -> list[str]:
    """The models of the run that could not be opened, each with what went wrong."""
    return [str(note) for note in results.options.get(NOT_OPENED, ())]


def run_notes(results: Results) -> list[str]:
    """What the run noted of itself: a setting a model's template ignores, a generator missing."""
    return not_opened(results) + [str(note) for note in results.options.get("notes", ())]


def tried_seams(results: Results) -> bool:
    """Whether any case of the run was a Unicode or regex-engine seam (the ``seams`` corpus, or
    any text tagged with a ``seam``, as ``tokparity.fuzz.seams`` tags them)."""
    return any(key.startswith("seam=") and rate.get("cases") for backends in results.tag_rates.values()
               for rates in backends.values() for key, rate in rates.items())


def known_used(results: Results) -> dict[str, int]:
    """Known divergences the run met, with their cases."""
    return dict(results.known.get("used") or {})


def stale_known(results: Results) -> list[tuple[str, str]]:
    """The user's known divergences that matched nothing: (id, source file) each. The shipped list's
    are not said here: a user cannot act on them (summary.json lists them all)."""
    return [(str(e["id"]), str(e["source"])) for e in results.known.get("stale", []) if e["source"] != SHIPPED]


# -- the write-ups ----------------------------------------------------------------------------------


def writeups(results: Results, styles: dict[str, str] | None = None) -> list[Writeup]:
    """One write-up per (model, backend) with mismatches. Those with an unexplained mismatch come
    first, then those of known divergences or ties only, each group in the order of the run's
    summaries: a reader meets the engine to fix before the oracle's own reviewed clean-ups.
    ``styles``: how each model spells its pieces (writeup.piece_styles)."""
    groups: dict[tuple[str, str, str], list[Mismatch]] = {}
    for m in results.mismatches:
        groups.setdefault((m.model, m.backend, m.op), []).append(m)
    styles = piece_styles(results.mismatches) if styles is None else styles
    return [writeup(r, groups.get((r.model, r.backend, r.op), []), styles.get(r.model, PLAIN), root_cause(r),
                    verdict_sentence(r), diagnosed(results))
            for r in sorted((r for r in results.runs if r.mismatches), key=lambda r: r.unexplained == 0)]


# -- views and the source of a document -------------------------------------------------------------

PAGE, SUMMARY, DIGEST, EXPLAIN = "page", "summary", "digest", "explain"
KNOWN_IN_HEADER = 4  # known divergences named in the header line, the most used first
VIEWS = (PAGE, SUMMARY, DIGEST, EXPLAIN)
TIE_SHOWN = 80  # of a tie's text, and of a listed mismatch's
EVIDENCE_SHOWN = 300  # of a listed mismatch's evidence
MAX_CASES = 2000  # the page lists this many mismatches; mismatches.csv has them all

Blocks = tuple[Block, ...]


@dataclass
class Source:
    """What a section is built from: the run, the view, and what several sections share."""

    results: Results
    view: str
    folder: str = ""  # the run folder (explain)
    examples: int = 5  # mismatches listed in summary.md and the digest

    @cached_property
    def writeups(self) -> list[Writeup]:
        return writeups(self.results, self.styles)

    @cached_property
    def totals(self) -> overview.Totals:
        return overview.totals(self.results, len(not_opened(self.results)))

    @cached_property
    def styles(self) -> dict[str, str]:
        return piece_styles(self.results.mismatches)

    @cached_property
    def fuzz(self) -> overview.FuzzSection | None:
        return fuzz_run(self.results)


def build(results: Results, view: str, *, folder: str = "", examples: int = 5) -> Document:
    """The document of ``view`` (PAGE, SUMMARY, DIGEST or EXPLAIN)."""
    if view not in VIEWS:
        raise ValueError(f"no report view {view!r}: one of {', '.join(VIEWS)}")
    src = Source(results, view, folder, examples)
    sections = []
    for name, make in SECTIONS.items():
        made = make(src)
        if made is not None:
            sections.append(Section(name, *made))
    return Document(header(src), tuple(sections))


# -- small pieces ------------------------------------------------------------------------------------


def sentence_case(inline: Inline) -> Inline:
    """``inline`` as a sentence: its first letter capitalized, a full stop at the end."""
    if not inline:
        return inline
    first = inline[0]
    return (Run(first.text[:1].upper() + first.text[1:], first.style, first.note), *inline[1:], Run("."))


# -- the header --------------------------------------------------------------------------------------


def header(src: Source) -> Blocks:
    """The verdict, the counts (summary.json's), the backends, the known-divergence notes; for
    ``explain``, one line naming the folder."""
    results, t = src.results, src.totals
    if src.view == EXPLAIN:
        return (Paragraph(runs(f"{src.folder}: tokparity {results.tokparity}, {len(results.runs)} model × backend "
                               f"runs, {overview.count_line(t)}")),)
    blocks: list[Block] = [
        Title(results.tokparity, t.verdict, t.green),
        Paragraph(runs(overview.count_line(t))),
        Paragraph(runs(f"Backends: {overview.backend_versions(results)} · {results.seconds:.1f} s")),
    ]
    for entry, source in stale_known(results):
        blocks.append(Paragraph(runs(f"⚠ stale known divergence {entry} ({source}): it matched nothing in this run; "
                                     "the upstream difference may be fixed — remove or correct the entry."), BAD))
    # (seams are where splits go wrong: encode's; a run stopped early may not have reached them yet)
    if results.fuzz is None and results.runs and not results.interrupted and not tried_seams(results) and \
            any(r.op == "encode" for r in results.runs):
        blocks.append(Paragraph(runs(
            "⚠ This run tried no Unicode or regex-engine seam: an engine that runs its split regex with "
            "JavaScript's \\s (no U+0085) or another Unicode version's tables can agree on every case here and "
            "still be wrong. Add -c seams (one of the default corpora) or run tokparity fuzz."), BAD))
    used = known_used(results)
    if used:  # (the most used few: the header is one line a terminal shows whole; the reports list them all)
        shown = sorted(used.items(), key=lambda kn: -kn[1])[:KNOWN_IN_HEADER]
        more = f", and {len(used) - len(shown)} more (each write-up lists its own)" if len(used) > len(shown) else ""
        blocks.append(Paragraph(runs("Known divergences (reported, not failing): "
                                     + ", ".join(f"{k} {n:,}" for k, n in shown) + more), MUTED))
    return tuple(blocks)


# -- the sections, in order ---------------------------------------------------------------------------


def summary(src: Source) -> tuple[str, Blocks] | None:
    """Model × backend: on the page a matrix (a row per model, a column per backend), elsewhere
    a row per run, with why each model's oracle judges it."""
    if src.view == EXPLAIN:
        return None
    results = src.results
    if src.view != PAGE:
        table = Table(overview.RUN_COLUMNS, tuple(tuple(runs(c) for c in row) for row in overview.run_rows(results)),
                      overview.NUMERIC)
        oracles = (overview.oracle_lines(results, why=src.view != DIGEST) + overview.not_applicable_lines(results)
                   + run_notes(results))
        return "", (table, Items(tuple(runs(line) for line in oracles))) if oracles else (table,)
    backends = sorted({r.label for r in results.runs})
    models = list(dict.fromkeys(r.model for r in results.runs))
    by = {(r.model, r.label): r for r in results.runs}
    rows = []
    for model in models:
        first = next(r for r in results.runs if r.model == model)
        oracle = first.oracle + (f" ({first.oracle_why})" if first.oracle_why else "")
        cells = [runs(model, Run("", BREAK), Run(f"oracle: {oracle}", MUTED))]
        for b in backends:
            r = by.get((model, b))
            cells.append(matrix_cell(r) if r is not None else runs(Run("–", MUTED)))
        rows.append(tuple(cells))
    intro = Paragraph(runs("Cells show mismatches / cases against the model's oracle, the classes (the symptoms) and "
                           "the causes (what reproduces the backend's ids, or its crash, or the stage that differs where nothing does) found."))
    notes = run_notes(results)
    return "Summary: model × backend", (intro, Table(("model", *backends), tuple(rows), row_headers=True)) + \
        ((Items(tuple(runs(line) for line in notes)),) if notes else ())


def matrix_cell(r: RunSummary) -> Inline:
    known = r.mismatches - r.unexplained - r.ties
    judged = Run(f"{r.mismatches:,} / {r.cases:,}", OK if r.unexplained == 0 else BAD) if r.cases else \
        Run("judged on no case", MUTED)
    cell = [judged,
            Run((f" ({known:,} known)" if known else "") + (f" ({plural(r.ties, 'tie')})" if r.ties else ""))]
    if r.classes:
        cell += [Run("", BREAK), Run(f"classes: {overview.counts_text(r.classes)}", MUTED)]
    if r.causes:
        cell += [Run("", BREAK), Run(f"cause: {overview.counts_text(r.causes)}", CAUSES)]
    if r.skipped:
        cell += [Run("", BREAK), Run(overview.skipped_text(r), MUTED)]
    if r.not_applicable:
        cell += [Run("", BREAK), Run(f"{r.not_applicable} not applicable (declared)", MUTED)]
    return tuple(c for c in cell if c.text or c.style == BREAK)


def findings(src: Source) -> tuple[str, Blocks] | None:
    """A fuzz run's findings by cause: the table of causes, each cause's shrunk text and ids side
    by side, the seams its texts crossed."""
    section = src.fuzz
    if section is None or src.view == EXPLAIN:
        return None
    blocks: list[Block] = [Paragraph(runs(section.run_line))]
    if section.findings:
        blocks.append(Table(overview.FINDING_COLUMNS,
                            tuple(tuple(runs(c) for c in overview.finding_row(f)) for f in section.findings),
                            overview.FINDING_NUMERIC))
    style = section.style
    for f in section.findings:
        title = runs(overview.finding_title(f), *((" ", Run(f"known: {f.known}", KNOWN)) if f.known else ()), " ", Run(f.id, MUTED))
        shown, more = cut(f.text)
        body: list[Block] = [Quote(shown, more)]
        if f.has_ids:
            body.append(comparison_of(f, style, f.oracle, f.backend))
        blocks.append(Article(title, tuple(body), "finding"))
    if section.seams:
        blocks.append(Paragraph(runs("Seams covered: ", *joined([runs(Run(overview.seam_shown(s), note=s.about))
                                                                   for s in section.seams]))))
    return "Findings by cause", tuple(blocks)


def root_causes(src: Source) -> tuple[str, Blocks] | None:
    """One write-up per model and backend with mismatches; the digest says each in one line."""
    ws = src.writeups
    if src.view == DIGEST:
        if not ws:
            return None
        lines = Items(tuple(runs(f"{w.model} / {w.backend}: {cause_line(w)}") for w in ws))
        return "Root causes", (lines, Paragraph(runs(
            "Each one written up (symptom → implication, the most telling case's ids, the fix): summary.md and "
            "report.html in the report folder, or tokparity explain DIR")))
    blocks: list[Block] = []
    if src.view == EXPLAIN:
        several = len({r.op for r in src.results.runs}) > 1  # (then each name says its op: "mine" is not every op)
        agreeing = [f"{r.model}/{r.backend} · {r.op}" if several else f"{r.model}/{r.label}"
                    for r in src.results.runs if not r.mismatches and r.cases]
        if agreeing:
            blocks.append(Paragraph(runs("agree on every case: " + ", ".join(agreeing))))
        unjudged = [f"{r.model}/{r.label} ({overview.skipped_text(r)})" for r in src.results.runs if not r.cases]
        if unjudged:
            blocks.append(Paragraph(runs("judged on no case: " + ", ".join(unjudged))))
    every = "Every backend judged" if any(not r.cases for r in src.results.runs) else "Every backend"
    if src.results.nothing_compared:  # (no backend named judged a case: nothing may be said to agree)
        blocks.append(Paragraph(runs(f"Nothing compared{src.results.nothing_compared}. No verdict."), BAD))
    blocks += [writeup_article(w, src.view) for w in ws] or (
        [] if src.results.nothing_compared else [Paragraph(runs(f"{every} agrees with its oracle on every case."), OK)])
    return ("" if src.view == EXPLAIN else "Root cause, per model and backend"), tuple(blocks)


def writeup_article(w: Writeup, view: str) -> Article:
    """The sentence naming the cause; symptom → implication; the most telling case's ids side by
    side; the root cause with its counts; the fix; the ties apart; the known divergences."""
    blocks: list[Block] = [Paragraph(runs(w.sentence), "lead")]
    if w.cls and not w.only_ties:
        blocks.append(Fields((("Symptom", runs(Run(w.cls, CLASS), f" ({w.share}): {w.symptom}")),
                              ("→ Implication", runs(w.implication)))))
    if w.case is not None and not w.only_ties and w.case.op != "encode":
        blocks.append(Part("Most telling case", (decoded_outputs(w.case, w.style),)))
    elif w.case is not None and not w.only_ties:
        c = w.case
        shown, more = cut(c.text, CASE_SHOWN)
        note = "" if prompt_like(c.text, c.tags) else "(no short prompt-like case; the shortest)"
        blocks.append(Sample("Most telling case", "Case", f"{c.corpus}/{c.case_id}", note, shown, more,
                             mismatch_comparison(c, w.style)))
    cause: list[Block] = []
    if w.cause:
        cause.append(Paragraph(runs(Run(w.cause, CODE), f": {w.proof}.")))
        if w.narrower:
            breaks = w.verdict.breaks if w.verdict else ()
            listed = (" (" + ", ".join(visible(b)[:60] for b in breaks)
                      + (", …" if len(breaks) == BREAKS_LISTED and w.narrower > len(breaks) else "") + ")") \
                if breaks else ""
            cause.append(Paragraph(runs(f"The named deviation would also change {plural(w.narrower, 'agreeing case')}"
                                        f"{listed}: the engine deviates on fewer texts than the variant does."), MUTED))
    elif not w.diagnosed:
        cause.append(Paragraph(runs(f"Not diagnosed: {NOT_DIAGNOSED}."), MUTED))
    elif not w.only_ties:
        what = "ids" if w.summary.op == "encode" else "answer"
        cause.append(Paragraph(runs(f"Not reproduced: no variant of the reference gives the backend's {what}."), BAD))
    extra: list[Inline] = []
    if w.how:
        extra.append(runs(f"what it does: {w.how}"))
    if w.case_causes:
        extra.append(runs("case by case: ", *joined([runs(Run(c, CODE), f" {n:,}") for c, n in w.case_causes])))
    if w.not_reproduced and not w.only_ties and w.diagnosed:
        crashes = f" ({w.unanswered:,} of them crashes or timeouts)" if w.unanswered else ""
        extra.append(runs(f"no cause reproduced for {plural(w.not_reproduced, 'mismatch')}{crashes}"))
    if extra:
        cause.append(Paragraph(sentence_case(joined(extra, "; ")), MUTED))
    if cause:
        blocks.append(Part("Root cause", tuple(cause)))
    if not w.only_ties:
        blocks.append(Part("Fix", (FixList(tuple(w.fixes)),) if w.fixes else (
            Paragraph(runs("No fix named without a cause."), MUTED),)))
    if w.ties:
        t = w.ties[0]
        blocks.append(Part("Ties", (
            Paragraph(runs(f"{plural(len(w.ties), 'tie')} of equal score (", Run(TIE, CODE),
                           "): two segmentations the model scores the same; reported apart, not failures. E.g. "
                           f"{t.corpus}/{t.case_id} ", *text_runs(t.text, TIE_SHOWN), ":")),
            mismatch_comparison(t, w.style))))
    if w.known:
        blocks.append(Paragraph(runs("Known divergences (reviewed, reported, not failing): "
                                     + ", ".join(f"{k} {n:,}" for k, n in w.known)), MUTED))
    if view == PAGE:
        blocks.append(every_class(w))
    return Article(runs(f"{w.model} · {w.backend} against {w.oracle}"), tuple(blocks), "writeup")


def every_class(w: Writeup) -> Details:
    """Every class of the run with its symptom and implication, folded (the page only: the write-up
    above names the main one)."""
    counts = sorted(w.summary.classes.items(), key=lambda x: (-x[1], x[0]))
    rows = tuple((runs(Run(c, CLASS)), runs(f"{n:,}"), runs(class_info(c)["symptom"]),
                  runs(class_info(c)["implication"])) for c, n in counts)
    return Details(f"every class of this run ({len(counts)})",
                   (Table(("class", "cases", "symptom", "→ implication"), rows, frozenset({"cases"})),))


def tags(src: Source) -> tuple[str, Blocks] | None:
    """The page's mismatch rate per model, backend and tag: the rows with enough case runs, highest
    rate first; the rest counted in one line."""
    if src.view != PAGE:
        return None
    rates = overview.tag_rates(src.results)
    blocks: list[Block] = []
    if rates.rows:
        blocks.append(Table(("model · backend", "tag", "case runs", "mismatches", "rate"),
                            tuple((runs(f"{t.model} · {t.backend}"), runs(t.tag), runs(f"{t.cases:,}"), runs(f"{t.mismatches:,}"),
                                   runs(f"{100 * t.rate:.1f} %")) for t in rates.rows),
                            frozenset({"case runs", "mismatches", "rate"})))
    else:
        blocks.append(Paragraph(runs(f"No tag with {rates.min_cases} case runs or more."), MUTED))
    if rates.folded:
        blocks.append(Paragraph(runs(rates.folded_line), MUTED))
    return "Mismatch rate per model, backend and tag", tuple(blocks)


def examples(src: Source) -> tuple[str, Blocks] | None:
    """summary.md's and the digest's first mismatches to review (or one per known divergence),
    and every class of the run."""
    if src.view not in (SUMMARY, DIGEST):
        return None
    listed = overview.examples(src.results, src.examples)
    if listed is None:
        return None
    entries = []
    for m in listed.cases:
        notes = [runs(Run(m.cls, CLASS))] + ([runs(f"known: {m.known}")] if m.known else []) + (
            [runs(m.given_too)] if m.known and m.given_too else []) + (
            [runs("cause ", Run(m.cause, CODE))] if m.cause else [])
        shown = text_runs(m.text, TIE_SHOWN) if m.op != "chat" else runs(overview.conversation_line(m.text))
        entries.append(Listed(f"{m.model} / {m.backend}", f"{m.corpus}/{m.case_id}", tuple(notes),
                              shown, m.evidence[:EVIDENCE_SHOWN],
                              "" if m.cause and not is_stage_level(m.cause) else m.shape[:EVIDENCE_SHOWN]))
    return listed.heading, (Listing(tuple(entries)), Paragraph(runs(f"Classes, summed over every row of the table: {overview.run_classes(src.results)}")))


def mismatches(src: Source) -> tuple[str, Blocks] | None:
    """The page's list of every mismatch (the first ``MAX_CASES``), with filters."""
    if src.view != PAGE:
        return None
    ms = src.results.mismatches
    shown = ms[:MAX_CASES]
    tags_of = {f"{k}={v}" for m in ms for k, v in m.tags.items()}
    blocks: list[Block] = [Filters((
        ("model", "model", _values(m.model for m in ms)), ("backend", "backend", _values(m.backend for m in ms)),
        ("cls", "class", _values(m.cls for m in ms)), ("cause", "cause", _values(m.cause for m in ms if m.cause)),
        ("tag", "tag", _values(tags_of))))]
    blocks += [case_card(m, src.styles.get(m.model, PLAIN), diagnosed(src.results)) for m in shown]
    if not shown:
        blocks.append(Paragraph(runs("No mismatches."), OK))
    if len(ms) > len(shown):
        blocks.append(Paragraph(runs(f"{len(ms) - len(shown)} more mismatches are in mismatches.csv."), MUTED))
    return "Mismatches", tuple(blocks)


def _values(values) -> tuple[str, ...]:
    return tuple(sorted(set(values)))


def case_card(m: Mismatch, style: str, diagnosed: bool = True) -> Article:
    """One mismatch of the page's list: who, the class, the case; the evidence; the cause; the
    text; the agreement partition; the ids aligned. ``diagnosed``: False in a --no-diagnose run."""
    tags_text = " ".join(f"{k}={v}" for k, v in sorted(m.tags.items()))
    title = runs(f"{m.model} · {m.backend} vs {m.oracle} · ", Run(m.cls, CLASS),
                 *((" ", Run(f"known: {m.known}", KNOWN)) if m.known else ()), " ",
                 Run(f"{m.corpus}/{m.case_id}, stage: {m.stage}, first diff at token {m.first_diff}", MUTED))
    cause = (Paragraph(runs("cause: ", Run(m.cause, CODE), " ", Run(m.cause_evidence, MUTED)), "cause") if m.cause
             else Paragraph(runs(f"cause: {no_cause(m, diagnosed)}"), "cause muted"))
    blocks: list[Block] = [Paragraph(runs(m.evidence), "evidence"), cause, Quote(visible(m.text))]
    if m.shape:
        blocks.insert(1, Paragraph(runs(f"what it did: {m.shape}"), "shape"))
    if m.partition and len(m.partition) > 1:
        blocks.append(Paragraph(runs("agreement: " + " vs ".join("{" + ", ".join(g) + "}" for g in m.partition)),
                                MUTED))
    blocks.append(alignment(m, style))
    data = (("model", m.model), ("backend", m.backend), ("cls", m.cls), ("cause", m.cause), ("tags", tags_text))
    return Article(title, tuple(blocks), "case", data)


def files(src: Source) -> tuple[str, Blocks] | None:
    """``compare --check``: what each model's files hold (report/files.py)."""
    return files_section(src.results.checks, terminal=src.view == DIGEST)


# Name → builder of the sections, in the order every document shows them. A builder gives the
# section's title ("" for none) and blocks, or None where the section has nothing to show.
SECTIONS: dict[str, Callable[[Source], tuple[str, Blocks] | None]] = {
    "summary": summary, "findings": findings, "root-cause": root_causes, "files": files, "tags": tags,
    "examples": examples, "mismatches": mismatches}
