"""report.html: one self-contained page (inline CSS and JS, no network, works from file://).

Layout and style live in ``templates/``; this module turns ``Results`` into escaped HTML
fragments and fills the page. Every string that comes from a corpus, an engine or a tokenizer
file goes through ``esc`` (corpus text is untrusted: ``<script>`` must show as text).
"""

from __future__ import annotations

import html
from importlib import resources
from string import Template

from tokparity.diff.align import align
from tokparity.diff.explain import class_info
from tokparity.records import Mismatch
from tokparity.report import overview
from tokparity.report.pieces import PLAIN, readable
from tokparity.report.writeup import (
    TIE,
    Fix,
    Token,
    Writeup,
    comparison,
    piece_styles,
    plural,
    prompt_like,
    writeups,
)
from tokparity.run.results import Results
from tokparity.textview import visible

MAX_CASES = 2000  # the HTML shows this many mismatches; mismatches.csv has them all


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _template(name: str) -> str:
    return resources.files("tokparity.report").joinpath("templates", name).read_text("utf-8")


def _token(i: object, stored: str, style: str, k: int = 0) -> str:
    return (f'<span class="piece t{k % 2}" title="{esc(i)} {esc(repr(stored))}">{esc(readable(stored, style))}</span>')


def _pieces(pieces: list[str], ids: list[int], style: str, start: int = 0) -> str:
    return "".join(_token(i, p, style, start + k) for k, (i, p) in enumerate(zip(ids, pieces)))


def _ids(ids: list[int]) -> str:
    return f'<span class="ids">{esc(ids)}</span>'


def aligned_table(m: Mismatch, style: str = PLAIN) -> str:
    """Both id lists aligned as the classifier aligned them: equal runs once, differing runs
    side by side. Pieces are readable text (pieces.py); the stored spelling is the tooltip."""
    rows = [f"<tr><th>oracle: {esc(m.oracle)}</th><th>backend: {esc(m.backend)}</th></tr>"]
    ops = align(m.oracle_ids, m.backend_ids).opcodes
    for tag, i1, i2, j1, j2 in ops:
        a_ids, b_ids = m.oracle_ids[i1:i2], m.backend_ids[j1:j2]
        a_p, b_p = m.oracle_pieces[i1:i2], m.backend_pieces[j1:j2]
        if tag == "equal" and len(a_ids) > 6:  # keep context short: first and last two
            cell = (f"{_pieces(a_p[:2], a_ids[:2], style, i1)} <span class='muted'>… {len(a_ids) - 4} equal …</span> "
                    f"{_pieces(a_p[-2:], a_ids[-2:], style, i2 - 2)}")
            rows.append(f'<tr class="equal"><td colspan="2">{cell}</td></tr>')
            continue
        css = "equal" if tag == "equal" else "diff"
        rows.append(f'<tr class="{css}"><td>{_ids(a_ids)}<br>{_pieces(a_p, a_ids, style, i1)}</td>'
                    f'<td>{_ids(b_ids)}<br>{_pieces(b_p, b_ids, style, j1)}</td></tr>')
    return '<table class="align">' + "".join(rows) + "</table>"


def _case(m: Mismatch, style: str = PLAIN) -> str:
    tags = " ".join(f"{k}={v}" for k, v in sorted(m.tags.items()))
    known = f' <span class="badge known">known: {esc(m.known)}</span>' if m.known else ""
    partition = ""
    if m.partition and len(m.partition) > 1:
        groups = " vs ".join("{" + ", ".join(esc(b) for b in g) + "}" for g in m.partition)
        partition = f'<p class="muted">agreement: {groups}</p>'
    cause = (f'<p class="cause">cause: <code>{esc(m.cause)}</code> <span class="muted">{esc(m.cause_evidence)}</span></p>'
             if m.cause else f'<p class="cause muted">cause: not reproduced {esc(m.cause_evidence)}</p>')
    return (
        f'<div class="case" data-model="{esc(m.model)}" data-backend="{esc(m.backend)}" data-cls="{esc(m.cls)}" '
        f'data-cause="{esc(m.cause)}" data-tags="{esc(tags)}">'
        f"<h3>{esc(m.model)} · {esc(m.backend)} vs {esc(m.oracle)} · <span class='badge cls'>{esc(m.cls)}</span>{known}"
        f" <span class='muted'>{esc(m.corpus)}/{esc(m.case_id)}, stage: {esc(m.stage)}, first diff at token "
        f"{esc(m.first_diff)}</span></h3>"
        f'<p class="evidence">{esc(m.evidence)}</p>{cause}'
        f'<div class="text">{esc(visible(m.text))}</div>{partition}{aligned_table(m, style)}</div>'
    )


def summary_matrix(results: Results) -> str:
    backends = sorted({r.backend for r in results.runs})
    models = list(dict.fromkeys(r.model for r in results.runs))
    by = {(r.model, r.backend): r for r in results.runs}
    head = "<tr><th>model</th>" + "".join(f"<th>{esc(b)}</th>" for b in backends) + "</tr>"
    rows = []
    for model in models:
        first = next(r for r in results.runs if r.model == model)
        oracle = first.oracle + (f" ({first.oracle_why})" if first.oracle_why else "")
        cells = []
        for b in backends:
            r = by.get((model, b))
            if r is None:
                cells.append("<td class='muted'>–</td>")
                continue
            status = "ok" if r.unexplained == 0 else "bad"
            known = r.mismatches - r.unexplained - r.ties
            notes = (f" ({known:,} known)" if known else "") + (f" ({plural(r.ties, 'tie')})" if r.ties else "")
            detail = ""
            if r.classes:
                detail += f"<br><span class='muted'>classes: {esc(overview.counts_text(r.classes))}</span>"
            if r.causes:
                detail += f"<br><span class='causes'>cause: {esc(overview.counts_text(r.causes))}</span>"
            skipped = f"<br><span class='muted'>{r.skipped} without golden ids</span>" if r.skipped else ""
            cells.append(f"<td><span class='{status}'>{r.mismatches:,} / {r.cases:,}</span>{notes}{detail}{skipped}</td>")
        rows.append(f"<tr><th>{esc(model)}<br><span class='muted'>oracle: {esc(oracle)}</span></th>{''.join(cells)}</tr>")
    return (f"<p>Cells show mismatches / cases against the model's oracle, the classes (the symptoms) and the "
            f"causes (what reproduces the backend's ids) found.</p><table>{head}{''.join(rows)}</table>")


def tag_table(results: Results) -> str:
    """The tags with enough case runs, highest mismatch rate first (overview.tag_rates); the rest
    counted in one line."""
    rates = overview.tag_rates(results)
    folded = f"<p class='muted'>{esc(rates.folded_line)}</p>" if rates.folded else ""
    if not rates.rows:
        return f"<p class='muted'>No tag with {rates.min_cases} case runs or more.</p>{folded}"
    rows = "".join(f"<tr><td>{esc(t.tag)}</td><td class='num'>{t.cases:,}</td><td class='num'>{t.mismatches:,}</td>"
                   f"<td class='num'>{100 * t.rate:.1f} %</td></tr>" for t in rates.rows)
    return f"<table><tr><th>tag</th><th>case runs</th><th>mismatches</th><th>rate</th></tr>{rows}</table>{folded}"


def _plain_table(columns: tuple[str, ...], rows: list[tuple[str, ...]], numeric: frozenset[str]) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td class='num'>{esc(v)}</td>" if c in numeric else f"<td>{esc(v)}</td>"
                                    for c, v in zip(columns, row)) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def fuzz_findings(results: Results) -> str:
    """A fuzz run's "Findings by cause" section (overview.fuzz_section): the table of causes, each
    cause's shrunk text and ids side by side, the seams covered; "" for another run."""
    section = overview.fuzz_section(results)
    if section is None:
        return ""
    parts = ['<section id="findings"><h2>Findings by cause</h2>', f"<p>{esc(section.run_line)}</p>"]
    if section.findings:
        parts.append(_plain_table(overview.FINDING_COLUMNS, [overview.finding_row(f) for f in section.findings],
                                  overview.FINDING_NUMERIC))
    style = section.style
    for f in section.findings:
        known = f' <span class="badge known">known: {esc(f.known)}</span>' if f.known else ""
        parts.append(f'<article class="finding"><h3>{esc(f.title)}{known} <span class="muted">{esc(f.id)}</span></h3>'
                     f'<div class="text">{esc(visible(f.text))}</div>'
                     + (token_comparison(f.case, style) if f.case is not None else "") + "</article>")
    if section.seams:
        seams = ", ".join(f'<span title="{esc(s.about)}">{esc(s.shown)}</span>' for s in section.seams)
        parts.append(f"<p>Seams covered: {seams}</p>")
    return "".join(parts) + "</section>"


# -- the write-up (writeup.py), one article per model and backend with mismatches ----------------


def _tok(t: Token) -> str:
    return (f'<span class="tok" title="{esc(t.id)} {esc(repr(t.stored))}"><span class="tid">{esc(t.id)}</span>'
            f'<span class="tpc">{esc(t.piece)}</span></span>')


def token_comparison(m: Mismatch, style: str) -> str:
    """The two id lists in aligned columns, the first difference in the same column on both sides."""
    blocks = comparison(m, style)
    top, bottom = [], []
    for b in blocks:
        if b.kind == "gap":
            top.append(f'<td class="gap" rowspan="2">… {b.skipped} same …</td>')
            continue
        css = "diff" if b.kind == "diff" else "same"
        top.append(f'<td class="{css}">{"".join(_tok(t) for t in b.oracle) or "<i>none</i>"}</td>')
        bottom.append(f'<td class="{css}">{"".join(_tok(t) for t in b.backend) or "<i>none</i>"}</td>')
    first = next((b.start for b in blocks if b.kind == "diff"), None)
    caption = f"first difference at token {first}" if first is not None else "the ids are equal"
    return (f'<table class="tokens"><caption>{caption}</caption>'
            f'<tr><th>{esc(m.oracle)} (oracle)</th>{"".join(top)}</tr>'
            f'<tr><th>{esc(m.backend)}</th>{"".join(bottom)}</tr></table>')


def _fixes(fixes: list[Fix]) -> str:
    if not fixes:
        return "<p class='muted'>No fix named without a cause.</p>"
    items = "".join(f"<li><code>{esc(f.cause)}</code>: {esc(f.fix)}"
                    + (f" <span class='muted'>(specified by <code>{esc(f.spec)}</code>)</span>" if f.spec else "")
                    + "</li>" for f in fixes)
    return f'<ul class="fix">{items}</ul>'


def _classes(w: Writeup) -> str:
    counts = sorted(w.summary.classes.items(), key=lambda x: (-x[1], x[0]))
    rows = "".join(f"<tr><td><span class='badge cls'>{esc(c)}</span></td><td class='num'>{n:,}</td>"
                   f"<td>{esc(class_info(c)['symptom'])}</td><td>{esc(class_info(c)['implication'])}</td></tr>"
                   for c, n in counts)
    return (f"<details><summary>every class of this run ({len(counts)})</summary>"
            f"<table><tr><th>class</th><th>cases</th><th>symptom</th><th>→ implication</th></tr>{rows}</table></details>")


def writeup_html(w: Writeup) -> str:
    parts = [f'<article class="writeup"><h3>{esc(w.model)} · {esc(w.backend)} against {esc(w.oracle)}</h3>',
             f'<p class="sentence">{esc(w.sentence)}</p>']
    if w.cls and not w.only_ties:
        parts.append(f"<table class='symptom'><tr><th>Symptom</th><td><span class='badge cls'>{esc(w.cls)}</span> "
                     f"({w.share}): {esc(w.symptom)}</td></tr>"
                     f"<tr><th>→ Implication</th><td>{esc(w.implication)}</td></tr></table>")
    if w.case is not None and not w.only_ties:
        c = w.case
        shape = "" if prompt_like(c.text, c.tags) else " <span class='muted'>(no short prompt-like case; the shortest)</span>"
        parts.append(f"<h4>Most telling case: {esc(c.corpus)}/{esc(c.case_id)}{shape}</h4>"
                     f'<div class="text">{esc(visible(c.text))}</div>{token_comparison(c, w.style)}')
    if not w.only_ties:
        parts.append("<h4>Root cause</h4>")
    if w.cause:
        parts.append(f"<p><code>{esc(w.cause)}</code>: {esc(w.proof)}.</p>")
        if w.narrower:
            parts.append(f"<p class='muted'>The named deviation would also change {w.narrower:,} agreeing cases: "
                         "the engine deviates on fewer texts than the variant does.</p>")
    elif not w.only_ties:
        parts.append("<p class='bad'>Not reproduced: no variant of the reference gives the backend's ids.</p>")
    extra = []
    if w.case_causes:
        extra.append("case by case: " + ", ".join(f"<code>{esc(c)}</code> {n:,}" for c, n in w.case_causes))
    if w.not_reproduced and not w.only_ties:
        extra.append(f"no cause reproduced for {plural(w.not_reproduced, 'mismatch')}")
    if extra:
        parts.append(f"<p class='muted'>{'; '.join(extra)}</p>")
    if not w.only_ties:
        parts.append(f"<h4>Fix</h4>{_fixes(w.fixes)}")
    if w.ties:
        t = w.ties[0]
        parts.append(f"<h4>Ties</h4><p>{plural(len(w.ties), 'tie')} of equal score (<code>{TIE}</code>): two "
                     "segmentations the model scores the same; reported apart, not failures. "
                     f"E.g. {esc(t.corpus)}/{esc(t.case_id)} <span class='text'>{esc(visible(t.text))}</span>:</p>"
                     f"{token_comparison(t, w.style)}")
    if w.known:
        parts.append("<p class='muted'>Known divergences (reviewed, reported, not failing): " + ", ".join(
            f"{esc(k)} {n:,}" for k, n in w.known) + "</p>")
    parts.append(_classes(w) + "</article>")
    return "".join(parts)


def root_cause(results: Results) -> str:
    ws = writeups(results)
    if not ws:
        return "<p class='ok'>Every backend agrees with its oracle on every case.</p>"
    return "".join(writeup_html(w) for w in ws)


def _filters(results: Results) -> str:
    def select(name: str, label: str, values) -> str:
        options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in sorted(set(values)))
        return f'<label>{label} <select name="{name}"><option value="">all</option>{options}</select></label>'
    ms = results.mismatches
    tags = {f"{k}={v}" for m in ms for k, v in m.tags.items()}
    return (select("model", "model", (m.model for m in ms)) + select("backend", "backend", (m.backend for m in ms))
            + select("cls", "class", (m.cls for m in ms)) + select("cause", "cause", (m.cause for m in ms if m.cause))
            + select("tag", "tag", tags))


def render(results: Results) -> str:
    shown = results.mismatches[:MAX_CASES]
    more = len(results.mismatches) - len(shown)
    styles = piece_styles(results.mismatches)
    cases = "".join(_case(m, styles.get(m.model, PLAIN)) for m in shown) or "<p class='ok'>No mismatches.</p>"
    if more:
        cases += f"<p class='muted'>{more} more mismatches are in mismatches.csv.</p>"
    t = overview.totals(results)
    header = (f"<p class='verdict {'ok' if t.unexplained == 0 else 'bad'}'>{esc(t.verdict)}</p>"
              f"<p>{esc(overview.count_line(t))}</p>"
              f"<p>tokparity {esc(results.tokparity)} · backends: {esc(overview.backend_versions(results))} · "
              f"{results.seconds:.1f} s</p>")
    for entry in results.known.get("stale", []):
        header += (f"<p class='bad'>⚠ stale known divergence {esc(entry['id'])} ({esc(entry['source'])}): it matched "
                   "nothing in this run; the upstream difference may be fixed — remove or correct the entry.</p>")
    if results.known.get("used"):
        header += "<p class='muted'>Known divergences (reported, not failing): " + ", ".join(
            f"{esc(k)} {n}" for k, n in results.known["used"].items()) + "</p>"
    page = Template(_template("report.html"))
    return page.substitute(
        title="tokparity report",
        css=_template("report.css"),
        js=_template("report.js"),
        header=header,
        summary=summary_matrix(results),
        findings=fuzz_findings(results),
        rootcause=root_cause(results),
        tags=tag_table(results),
        filters=_filters(results),
        cases=cases,
    )
